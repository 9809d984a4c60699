// A hang whose waiter's parity skips a completed phase that no waiter observed names that wait as
// its cause (`skipped-phase`); a phase another consumer observed is no such cause; a barrier no
// arrive ever names points at the arrive site of its array that skips it.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { check } from '../src/check/index.js';
import { parseSketch } from '../src/lang/index.js';
import { instantiate } from '../src/machine/program.js';

/** A 4-stage ring in a persistent tile loop; `parity` is the consumer's wait parity, `release` its release (one line each). */
const ring = (parity: string, release = 'mbarrier.arrive empty[s] per=one') => `kernel ring4 arch=sm_90a
param S = 4
param K = 4
param TILES = 2
barrier full[S] count=1
barrier empty[S] count=2
smem A[S] bytes=1024
role producer warps=1 per=one:
    for t in range(0, TILES):
        for k in range(0, K):
            i = t * K + k
            s = i % S
            mbarrier.try_wait.parity empty[s], ((i / S) & 1) ^ 1
            mbarrier.arrive.expect_tx full[s], 1024
            cp.async.bulk.tensor A[s], 1024, full[s]
role consumer warps=1 instances=2:
    for t in range(0, TILES):
        for k in range(0, K):
            i = t * K + k
            s = i % S
            mbarrier.try_wait.parity full[s], ${parity}
            ld.shared A[s]
            ${release}
`;

function run(src: string, set: Record<string, number> = {}) {
  const { kernel, diagnostics } = parseSketch(src, 'ring4.mbk');
  if (!kernel) throw new Error(diagnostics.map((d) => d.message).join('\n'));
  return check(instantiate(kernel, set), { randomRuns: false, timeout: 600_000 });
}

describe('skipped-phase: the parity of a wait that did not advance', () => {
  it('the right parity checks OK', () => {
    expect(run(ring('(i / S) & 1')).verdict).toBe('ok');
  });
  it('a parity from the per-tile counter is a hang whose cause is that wait, with the phase it skipped', () => {
    const r = run(ring('(k / S) & 1'));
    expect(r.verdict).toBe('hang');
    const h = r.hazards[0]!;
    expect(h.cause?.kind).toBe('skipped-phase');
    expect(h.cause?.locations.map((l) => l.line)).toEqual([21]);
    expect(h.cause?.message).toMatch(/wait on full\[\d\] passed for phase 0, then waits with parity 0, which names phase 2: phase 1 completed and no wait observed it/);
    expect(h.cause?.message).toMatch(/parity 1 would have waited for phase 1$/);
    expect(h.details.join('\n')).toMatch(/its waits last observed phase 0 of full\[\d\]; phase 1 then completed and no wait observed it/);
  });
  it('a pingpong warpgroup that waits every other phase, the other taking the phase between, is not said to skip one', () => {
    // The producer fills one k-block short: math[0] last observed phase 0 of full[1] and waits for
    // phase 2; phase 1 was math[1]'s.
    const src = readFileSync('examples/cutlass-pingpong.mbk', 'utf8').replace('for i in range(0, TILES * K):', 'for i in range(0, TILES * K - 1):');
    expect(src).toContain('TILES * K - 1');
    const { kernel } = parseSketch(src, 'pingpong-short.mbk');
    const r = check(instantiate(kernel!, { S: 2, K: 2, TILES: 3 }), { randomRuns: false, timeout: 600_000 });
    expect(r.verdict).toBe('hang');
    const all = r.hazards.flatMap((h) => h.details).join('\n');
    expect(all).toMatch(/math\[0\]\.w0–w3 \(4 agents\) blocked in mbarrier\.try_wait\.parity full\[s\], \(i \/ S\) & 1 \(line 66\): waits for phase 2 of full\[1\] \(parity 0\)/);
    expect(all).not.toMatch(/no wait observed it/);
    expect(r.hazards.some((h) => h.cause?.kind === 'skipped-phase')).toBe(false);
  });
  it('a hang where another consumer observed the phase in between has no skipped-phase cause', () => {
    // Pingpong's math warpgroups take every other phase: the planted half release hangs on empty.
    const src = readFileSync('examples/planted/pingpong-release-half.mbk', 'utf8');
    const { kernel } = parseSketch(src, 'pingpong-release-half.mbk');
    const r = check(instantiate(kernel!, { S: 2, K: 4, TILES: 2 }), { randomRuns: false, timeout: 600_000 });
    expect(r.verdict).not.toBe('ok');
    expect(r.hazards.some((h) => h.cause?.kind === 'skipped-phase')).toBe(false);
  });
});

describe('a barrier that no arrive names', () => {
  it('points at the arrive of its array that runs and skips it', () => {
    const r = run(ring('(i / S) & 1', 'if k < K - 1:\n                mbarrier.arrive empty[s] per=one'));
    expect(r.verdict).toBe('hang');
    const w = r.warnings.find((x) => x.kind === 'count-mismatch' && x.subject?.name === 'empty[3]')!;
    expect(w.message).toMatch(/no operation ever arrives on it, so a wait for its phase 0 can never pass; the arrive on empty at line 24 runs but never names empty\[3\]/);
    expect(w.locations.map((l) => l.line)).toContain(24);
    expect(r.hazards[0]!.cause?.kind).toBe('count-mismatch');
  });
});
