/**
 * The all-trip-counts check on consumers that stop waiting (check/trips-normal.ts, docs/CHECK.md
 * "Every trip count"): a waiter whose last observed phase falls behind for good (FlashAttention-3's
 * second warpgroup, ordered after the first by named barriers, waits on K and V only at a tile's
 * first and last block) must not keep its barrier's relative phase growing. The verdict for every
 * trip count against direct checks of the counts 1 .. 2S + 3, on FA3, its planted twin and small
 * rings whose loops start at 1 with one consumer that skips the waits.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { check } from '../src/check/check.js';
import { checkAllTrips } from '../src/check/trips.js';
import { renderCheck } from '../src/check/report.js';
import { parseSketch } from '../src/lang/index.js';
import { instantiate } from '../src/machine/program.js';
import type { Kernel } from '../src/kernel/ir.js';

const kernelOf = (file: string): Kernel => parseSketch(readFileSync(file, 'utf8'), file).kernel!;
const sketch = (text: string): Kernel => {
  const k = parseSketch(text, 's.mbk').kernel;
  if (!k) throw new Error(text);
  return k;
};

/** The verdict for every `param` and the direct verdicts of `param` = 1 .. top. */
function both(k: Kernel, set: Record<string, number>, param: string, top: number) {
  const all = checkAllTrips(k, set, { param, timeout: 120_000 });
  const direct: string[] = [];
  for (let n = 1; n <= top; n++) direct.push(check(instantiate(k, { ...set, [param]: n }), { timeout: 60_000, randomRuns: false }).verdict);
  return { all, direct };
}

/**
 * A ring of S stages read by two consumers from block 1 on: the first waits on `full` and hands
 * the turn to the second through named barrier 1 (`early`: before its wait, the planted bug); the
 * second never waits on `full` inside the loop. Both wait on stage 0 before the loop, and the
 * second waits once more after it on the last block's stage. `roles`: the consumers as two
 * instances of one role (the second skips phases the first observed) or as two roles (its last
 * wait skips phases no consumer of its role observed: a phase alias from K = 2S + 2 on).
 */
function skipRing(early: boolean, roles: boolean): string {
  const wait = '        mbarrier.try_wait.parity full[k % S], (k / S) & 1\n';
  const turn = '        bar.arrive 1, 64\n';
  const first = early ? turn + wait : wait + turn;
  const head = `kernel skip arch=sm_90a
param S = 2
param K = 4
barrier full[S] count=1
barrier empty[S] count=2
smem A[S] bytes=1024
role producer warps=1 per=one:
    for k in range(0, K):
        mbarrier.try_wait.parity empty[k % S], ((k / S) & 1) ^ 1
        mbarrier.arrive.expect_tx full[k % S], 1024
        cp.async.bulk.tensor A[k % S], 1024, full[k % S]
`;
  const before = '    mbarrier.try_wait.parity full[0], 0\n    ld.shared A[0]\n    mbarrier.arrive empty[0]\n    for k in range(1, K):\n';
  const after = '    mbarrier.try_wait.parity full[(K - 1) % S], ((K - 1) / S) & 1\n';
  if (roles) {
    return `${head}role c0 warps=1 per=one:\n${before}${first}        ld.shared A[k % S]\n        bar.sync 2, 64\n        mbarrier.arrive empty[k % S]\n`
      + `role c1 warps=1 per=one:\n${before}        bar.sync 1, 64\n        ld.shared A[k % S]\n        bar.arrive 2, 64\n        mbarrier.arrive empty[k % S]\n${after}`;
  }
  const indent = (s: string) => s.replace(/^(?=.)/gm, '    ');
  return `${head}role c warps=1 per=one instances=2:\n    g = instance\n${before}        if g == 0:\n${indent(first)}        else:\n            bar.sync 1, 64\n`
    + '        ld.shared A[k % S]\n        if g == 0:\n            bar.sync 2, 64\n        else:\n            bar.arrive 2, 64\n        mbarrier.arrive empty[k % S]\n' + after;
}

describe('every trip count, a consumer that stops waiting', () => {
  test('FlashAttention-3 forward (S=1): OK for every NB, as the direct checks of NB = 1 .. 5', () => {
    const { all, direct } = both(kernelOf('examples/fa3-forward.mbk'), { S: 1 }, 'NB', 5);
    expect(direct).toEqual(['ok', 'ok', 'ok', 'ok', 'ok']);
    expect([all.verdict, all.trips.complete, all.trips.period]).toEqual(['ok', true, 2]);
    expect(all.trips.tripCounts[0]).toBe(1);
    expect(renderCheck(all)).toContain('trip counts: the verdict holds for every NB ≥ 1');
  }, 600_000);

  test('planted: FA3 with the scheduler turn handed over before the V wait is a race on V from NB = 2, found with a count whose direct check finds it', () => {
    const { all, direct } = both(kernelOf('examples/planted/fa3-turn-early.mbk'), { S: 1 }, 'NB', 5);
    expect(direct).toEqual(['ok', 'race', 'race', 'race', 'race']);
    expect(all.verdict).toBe('race');
    expect(all.hazards[0]!.subject?.name).toMatch(/^V\[\d\]$/);
    expect(direct[all.hazards[0]!.tripCount! - 1]).toBe('race');
  }, 600_000);

  test('a skipping consumer of one role: OK for every K, as the direct checks of K = 1 .. 7; its early hand-over a race from K = 2', () => {
    const ok = both(sketch(skipRing(false, false)), {}, 'K', 7);
    expect(ok.direct.every((v) => v === 'ok')).toBe(true);
    expect([ok.all.verdict, ok.all.trips.complete, ok.all.trips.period]).toEqual(['ok', true, 4]);
    const bad = both(sketch(skipRing(true, false)), {}, 'K', 7);
    expect(bad.direct).toEqual(['ok', 'race', 'race', 'race', 'race', 'race', 'race']);
    expect(bad.all.verdict).toBe('race');
    const n = bad.all.hazards[0]!.tripCount!;
    expect(n).toBeGreaterThanOrEqual(2);
    expect(bad.direct[n - 1]).toBe('race');
  }, 600_000);

  test('the skipping consumer as a role of its own: its last wait aliases from K = 6, and the check for every K finds K = 6', () => {
    const { all, direct } = both(sketch(skipRing(false, true)), {}, 'K', 7);
    expect(direct).toEqual(['ok', 'ok', 'ok', 'ok', 'ok', 'phase-alias', 'phase-alias']);
    expect([all.verdict, all.hazards[0]!.tripCount]).toEqual(['phase-alias', 6]);
  }, 600_000);
});
