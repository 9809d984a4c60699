// Root causes and fixes of planted bugs a new user found misleading: an inverted consumer parity
// with one consumer (the wait's parity, not the trip counts), a release before the read from PTX
// (the early arrive's PTX and CUDA lines), and a count that two arrivers per round never reach
// (a per-round count mismatch whatever the trip count).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { check } from '../src/check/index.js';
import { parseSketch } from '../src/lang/index.js';
import { instantiate } from '../src/machine/program.js';
import { parsePtx } from '../src/ptx/index.js';
import { translatePtx } from '../src/ptxi/index.js';

/** A 3-stage TMA ring: one producer, `CONSUMERS` consumers; `WAIT` is the consumer's wait, `BODY` what follows it. */
function ring(consumers: number, emptyCount: number, wait: string, body: string): string {
  return `# 3-stage TMA ring
kernel pipe3 arch=sm_90a
param S = 3
param N = 6
param TILE = 16384
barrier full[S] count=1
barrier empty[S] count=${emptyCount}
smem tile[S] bytes=TILE

role producer warps=1 per=one:
    for i in range(N):
        s = i % S
        mbarrier.try_wait.parity empty[s], ((i / S) & 1) ^ 1
        mbarrier.arrive.expect_tx full[s], TILE
        cp.async.bulk.tensor tile[s], TILE, full[s]

role consumer warps=1 per=one instances=${consumers}:
    for i in range(N):
        s = i % S
        mbarrier.try_wait.parity full[s], ${wait}
${body}`;
}
const READ_THEN_RELEASE = '        ld.shared tile[s]\n        mbarrier.arrive empty[s]\n';

function sketch(src: string, params: Record<string, number> = {}) {
  const parsed = parseSketch(src, 'ring.mbk');
  expect(parsed.diagnostics).toEqual([]);
  return check(instantiate(parsed.kernel!, params));
}

function ptx(file: string) {
  const r = parsePtx(readFileSync(`test/fixtures/ptx/${file}`, 'utf8'), file);
  if (!r.ok) throw new Error(r.diagnostic.message);
  return check(instantiate(translatePtx(r.module, { block: [64, 1, 1], params: { param_2: 4 } }).kernel));
}

describe('an inverted consumer parity: the cause is the wait\'s parity, with one consumer or two', () => {
  for (const consumers of [1, 2]) {
    it(`${consumers} consumer(s): the race's fix is the wait's parity at line 20, and no trip-mismatch leads it`, () => {
      const r = sketch(ring(consumers, consumers, '((i / S) & 1) ^ 1', READ_THEN_RELEASE));
      expect(r.verdict).toBe('race');
      const h = r.hazards[0]!;
      expect(h.race!.fix).toMatch(/^the wait's parity: consumer(\[0\])?'s wait on full\[0\] \(line 20\) passed on the fresh barrier \(parity 1 in phase 0\)/);
      expect(h.race!.fix).toContain('(parity 0 for the first)');
      expect(h.details.some((d) => d.startsWith('root cause (static trip-mismatch)'))).toBe(false);
      if (consumers === 1) {
        // The static trip-mismatch is still reported (one wait too few observes phases), but the
        // race's cause is the vacuous wait at the wait's line.
        expect(r.warnings.some((w) => w.kind === 'trip-mismatch' && w.subject?.name === 'full[0]')).toBe(true);
        expect(h.cause?.kind).toBe('vacuous-wait');
        expect(h.cause?.locations.map((l) => l.line)).toEqual([20]);
      }
    });
  }
  it('from PTX (ring2.cu:59, -DBUG=1): the fix is the wait\'s parity at the wait\'s PTX line', () => {
    const r = ptx('planted/ring2.bug1.ptx');
    expect(r.verdict).toBe('race');
    const h = r.hazards[0]!;
    expect(h.race!.fix).toMatch(/^the wait's parity: ring2\.w1's wait on full\[0\] \(line 118, from ring2\.cu:27, inlined at ring2\.cu:59\) passed on the fresh barrier/);
    expect(h.cause?.kind).toBe('vacuous-wait');
    expect(h.cause?.locations.map((l) => l.origin)).toEqual(['ring2.cu:27, inlined at ring2.cu:59']);
  });
});

describe('a release before the read: the fix moves the early arrive, from a sketch or from PTX', () => {
  it('one consumer whose arrive precedes its read: the fix names the arrive (line 21) and the read (line 22)', () => {
    const r = sketch(ring(1, 1, '(i / S) & 1', '        mbarrier.arrive empty[s]\n        ld.shared tile[s]\n'));
    const h = r.hazards.find((x) => x.kind === 'race')!;
    expect(h.race!.fix).toMatch(/^move the release after the access: consumer arrives on empty\[0\] \(line 21\) before its read of tile\[0\] \(line 22\)/);
    expect(h.sites?.fix?.line).toBe(21);
  });
  it('from PTX (lane 0 arrives before the warp reads, ring2.cu:64, -DBUG=4): the fix names the arrive\'s PTX line and its CUDA line', () => {
    const r = ptx('planted/ring2.bug4.ptx');
    expect(r.verdict).toBe('race');
    const h = r.hazards.find((x) => x.kind === 'race')!;
    expect(h.race!.fix).toMatch(/^move the release after the access: ring2\.w1 arrives on empty\[0\] \(line 135, from ring2\.cu:18, inlined at ring2\.cu:64\) before its read of tile\[0\] \(line 145, from ring2\.cu:66\)/);
    expect(h.race!.fix).not.toContain('stale');
    expect(h.sites?.fix?.line).toBe(135);
    expect(h.locations.map((l) => l.line)).toContain(135);
  });
});

describe('a count that the arrivals of a round never reach: a per-round cause whatever the trip count', () => {
  for (const n of [6, 9, 12]) {
    it(`count=3, two consumers arriving once a round, N=${n}: count-mismatch at the declaration (line 7), each round brings 2`, () => {
      const r = sketch(ring(2, 3, '(i / S) & 1', READ_THEN_RELEASE), { N: n });
      expect(r.verdict).toBe('hang');
      const h = r.hazards[0]!;
      expect(h.cause?.kind).toBe('count-mismatch');
      expect(h.cause?.message).toMatch(/^each round brings 2 arrival\(s\) on empty\[0\]; the count is 3: consumer\[0\], consumer\[1\] arrive \d+ time\(s\), once per round/);
      expect(h.cause?.message).toContain('make the count 2, or the arrivals per round 3');
      expect(h.cause?.locations.map((l) => l.line)).toEqual([7, 22]);
    });
  }
  it('the same ring with count=2: no count-mismatch', () => {
    const r = sketch(ring(2, 2, '(i / S) & 1', READ_THEN_RELEASE), { N: 9 });
    expect(r.verdict).toBe('ok');
    expect(r.warnings.filter((w) => w.kind === 'count-mismatch')).toEqual([]);
  });
  it('a producer that skips its first round\'s wait (waits fewer times than the consumers arrive): no per-round finding', () => {
    const src = ring(1, 1, '(i / S) & 1', READ_THEN_RELEASE).replace('        mbarrier.try_wait.parity empty[s], ((i / S) & 1) ^ 1\n', '        if i >= S:\n            mbarrier.try_wait.parity empty[s], ((i / S) & 1) ^ 1\n');
    const r = sketch(src, { N: 9 });
    expect(r.warnings.filter((w) => w.kind === 'count-mismatch')).toEqual([]);
  });
});
