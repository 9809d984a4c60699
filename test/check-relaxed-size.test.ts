// The memory-model detector's records are int32 words (check/relaxed.ts, relaxed-data.ts
// `relaxedSize`): one more than the largest entry is (slots + 1) × 2 × (agents + 1) × codes × 64.
// At the bound the detector still finds a relaxed flag's race through entries just under 2^31;
// one step past it the check refuses, at the relaxed operation's line, to judge the memory model
// (a `not-modelled` error), never an OK that it could not have checked.
import { describe, expect, it } from 'vitest';
import { check } from '../src/check/check.js';
import { renderCheck } from '../src/check/report.js';
import { relaxedSize, relaxedUse, RELAXED_WORD_LIMIT } from '../src/check/relaxed-data.js';
import { parseSketch } from '../src/lang/index.js';
import { instantiate, type Program } from '../src/machine/program.js';

/**
 * A hand-off through the last cell of a global array of `N` cells (the highest flag slot, so the
 * publication entries are the largest the launch has): the producer's store of `buf` is released
 * by `COUNT` (a relaxed red releases nothing: a race; a release red orders it).
 */
const SRC = `kernel relaxed_size arch=sm_90a
param N = 1
smem buf bytes=256
gmem G[N] init=0

role producer warps=1 per=one:
    st.shared buf
    COUNT G[N - 1], 1

role consumer warps=1 per=one:
    spin.acquire.gpu.eq G[N - 1], 1
    ld.shared buf
`;

function program(count: string, n: number): Program {
  const parsed = parseSketch(SRC.replace('COUNT', count), 'size.mbk');
  expect(parsed.diagnostics).toEqual([]);
  return instantiate(parsed.kernel!, { N: n });
}

const RELAXED = 'red.relaxed.gpu.global.add';
const RELEASE = 'red.release.gpu.global.add';

describe('the relaxed records at the int32 bound', () => {
  it('N = 1668 is the largest that fits: 1,673 slot indices × 2 × 3 × 3,339 codes × 64 = 2,145,080,448 ≤ 2^31', () => {
    const z = relaxedSize(program(RELAXED, 1668));
    expect(z).toEqual({ slots: 1672, agents: 2, codes: 3339, words: 2_145_080_448, fits: true });
    expect(z.words).toBeLessThanOrEqual(RELAXED_WORD_LIMIT);
    expect(relaxedUse(program(RELAXED, 1668))).toMatchObject({ track: true, needRel: true, refused: false });
  });
  it('N = 1669 does not: 2,147,648,256 > 2^31 (by 164,608), so nothing is tracked and the kernel is refused', () => {
    const z = relaxedSize(program(RELAXED, 1669));
    expect(z).toEqual({ slots: 1673, agents: 2, codes: 3341, words: 2_147_648_256, fits: false });
    expect(z.words - RELAXED_WORD_LIMIT).toBe(164_608);
    expect(relaxedUse(program(RELAXED, 1669))).toEqual({ track: false, needRel: false, refused: true, site: expect.objectContaining({ file: 'size.mbk', line: 8, col: 5 }) });
  });
  it('a kernel without relaxed operations is never refused, whatever its size', () => {
    const p = program(RELEASE, 1669);
    expect(relaxedSize(p).fits).toBe(false);
    expect(relaxedUse(p)).toEqual({ track: false, needRel: false, refused: false, site: null });
    expect(check(p).verdict).toBe('ok');
  });
  it('at the bound the detector works: the relaxed red races, the release red is OK', () => {
    const bad = check(program(RELAXED, 1668));
    expect(bad.verdict).toBe('race');
    expect(bad.hazards[0]!.subject?.name).toBe('buf');
    expect(bad.hazards.some((h) => h.kind === 'not-modelled')).toBe(false);
    expect(check(program(RELEASE, 1668)).verdict).toBe('ok');
  });
  it('past the bound: a located not-modelled error instead of a verdict the detector could not give', () => {
    const r = check(program(RELAXED, 1669));
    expect(r.verdict).toBe('not-modelled');
    const h = r.hazards[0]!;
    expect(h.static).toBe(true);
    expect(h.locations).toEqual([expect.objectContaining({ file: 'size.mbk', line: 8, col: 5 })]);
    expect(h.message).toBe('the memory-model detector cannot track this launch: its records need 1,674 publication slots × 2 stages × 3 publishers × 3,341 access codes × 64 tags (2,147,648,256 values) in 32-bit words that hold at most 2^31, so the relaxed and .cta-scoped operations of this kernel are not checked and the check gives no verdict on them');
    // The race that only the memory model shows is not reported (it was not looked for).
    expect(r.hazards.filter((x) => x.kind === 'race')).toEqual([]);
    const text = renderCheck(r);
    expect(text).toContain('verdict: NOT-MODELLED\n');
    expect(text).toContain('   at size.mbk:8:5\n   (static check of the launch\'s sizes: no schedule)\n');
  });
});
