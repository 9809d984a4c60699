/**
 * The relative phase key of the all-trip-counts check down to phases 0 and 1 (check/trips-never.ts,
 * check/trips-normal.ts; docs/CHECK.md "Phases 0 and 1"): states match once every barrier has
 * completed a phase, unless a waiter that never passed could still make its first pass on phase 0
 * or 1 unexcused. The verdict for every K against the direct checks of K = 1 .. 2S + 3 on rings
 * whose second consumer waits on `full` only after the loop (its history refers to phase 0 for the
 * whole loop): as another instance of the first consumer's role (its skip is excused) or as a role
 * of its own (its first pass aliases from K = 2S + 1), releasing the stages itself or not (empty
 * counts 2 and 1), loops from block 0 or 1 and counted from block 0 or 2S (every counter past the
 * steady state's threshold from the first block on), and the planted hand-over before the first consumer's
 * wait (a race from its first block).
 */
import { describe, expect, test } from 'vitest';
import { check } from '../src/check/check.js';
import { checkAllTrips } from '../src/check/trips.js';
import { parseSketch } from '../src/lang/index.js';
import { instantiate } from '../src/machine/program.js';
import type { Kernel } from '../src/kernel/ir.js';

/** A ring of the module comment. */
export interface FloorRing {
  S: number;
  /** The late consumer: another instance of the first consumer's role, or a role of its own. */
  late: 'instance' | 'role';
  /** Whether the late consumer releases the stages too (empty count 2) or only the first (count 1). */
  releases: boolean;
  /** The loops' first block (1: both consumers wait on stage 0 before the loop). */
  from: 0 | 1;
  /** The first consumer hands the turn over before its wait (a race from its first block). */
  early: boolean;
  /**
   * The block index the loops count from (0 or 2S: the same stages and parities, and every counter
   * past the threshold of the steady state from the first block on, so states match from there).
   */
  origin: number;
  /**
   * The late consumer waits after the loop on `tick` instead of `full`: a barrier the producer
   * arrives on once a block with count 2 (a phase every two blocks), waited on nowhere else. Its
   * pass observes phase K / 2 − 1, an alias from K = 6 whatever S, and no other consumer excuses it.
   */
  tick: boolean;
}

/** The sketch text of ring `g`. */
export function floorRing(g: FloorRing): string {
  const wait = 'mbarrier.try_wait.parity full[k % S], (k / S) & 1';
  const o = g.origin;
  const loop = `for k in range(${o + g.from}, K + ${o}):`;
  const block = (lines: string[], ind: string) => lines.map((l) => `${ind}${l}\n`).join('');
  const head = `kernel floor arch=sm_90a
param S = ${g.S}
param K = 4
barrier full[S] count=1
barrier empty[S] count=${g.releases ? 2 : 1}
${g.tick ? 'barrier tick[1] count=2\n' : ''}smem A[S] bytes=1024
role producer warps=1 per=one:
    for k in range(${o}, K + ${o}):
        mbarrier.try_wait.parity empty[k % S], ((k / S) & 1) ^ 1
        mbarrier.arrive.expect_tx full[k % S], 1024
${g.tick ? '        mbarrier.arrive tick[0]\n' : ''}        cp.async.bulk.tensor A[k % S], 1024, full[k % S]
`;
  // Before a loop from block 1: both wait on stage 0 and read it; the first releases it once both have read.
  const before = (releases: boolean, ind: string) => (g.from === 1 ? block(['mbarrier.try_wait.parity full[0], 0', 'ld.shared A[0]', 'bar.sync 3, 64', ...(releases ? ['mbarrier.arrive empty[0]'] : [])], ind) : '');
  const turn = 'bar.arrive 1, 64';
  const c0 = [...(g.early ? [turn, wait] : [wait, turn]), 'ld.shared A[k % S]', 'bar.sync 2, 64', 'mbarrier.arrive empty[k % S]'];
  const c1 = ['bar.sync 1, 64', 'ld.shared A[k % S]', 'bar.arrive 2, 64', ...(g.releases ? ['mbarrier.arrive empty[k % S]'] : [])];
  const last = o ? `K + ${o - 1}` : 'K - 1';
  const after = g.tick ? 'mbarrier.try_wait.parity tick[0], ((K / 2) + 1) & 1' : `mbarrier.try_wait.parity full[(${last}) % S], ((${last}) / S) & 1\nld.shared A[(${last}) % S]`;
  if (g.late === 'role') {
    return `${head}role c0 warps=1 per=one:\n${before(true, '    ')}    ${loop}\n${block(c0, '        ')}`
      + `role c1 warps=1 per=one:\n${before(g.releases, '    ')}    ${loop}\n${block(c1, '        ')}${block(after.split('\n'), '    ')}`;
  }
  const releaseFirst = g.from === 1 && !g.releases ? '    if g == 0:\n        mbarrier.arrive empty[0]\n' : '';
  return `${head}role c warps=1 per=one instances=2:\n    g = instance\n${before(g.releases, '    ')}${releaseFirst}`
    + `    ${loop}\n        if g == 0:\n${block(c0, '            ')}        else:\n${block(c1, '            ')}`
    + `    if g == 1:\n${block(after.split('\n'), '        ')}`;
}

/**
 * The least K at which the late waiter of its own role aliases: its pass after the loop observes
 * phase (K − 1) / S of stage (K − 1) % S, due for phase 0, or phase 1 on stage 0 when it waited
 * there before a loop from block 1; two or more past that is a skip no consumer of its role excuses.
 */
function firstAlias(g: FloorRing): number {
  if (g.tick) return 6;
  for (let K = 1; ; K++) {
    const intent = g.from === 1 && (K - 1) % g.S === 0 ? 1 : 0;
    if (Math.floor((K - 1) / g.S) - intent >= 2) return K;
  }
}

const sketch = (text: string): Kernel => {
  const k = parseSketch(text, 'floor.mbk').kernel;
  if (!k) throw new Error(text);
  return k;
};

/** Every ring of the module comment at S stages. */
function rings(S: number): FloorRing[] {
  const out: FloorRing[] = [];
  for (const late of ['instance', 'role'] as const) {
    for (const releases of [true, false]) {
      for (const from of [0, 1] as const) out.push({ S, late, releases, from, early: false, origin: 0, tick: false });
      out.push({ S, late, releases, from: 0, early: false, origin: 2 * S, tick: false });
    }
    out.push({ S, late, releases: true, from: 0, early: true, origin: 0, tick: false });
    for (const origin of [0, 2 * S]) out.push({ S, late, releases: true, from: 0, early: false, origin, tick: true });
  }
  return out;
}

describe('every trip count, phases 0 and 1 keyed relative', () => {
  for (const S of [1, 2]) {
    for (const g of rings(S)) {
      const name = `${g.late === 'role' ? 'late waiter of its own role' : 'late waiter instance'}, ${g.releases ? 'both release' : 'one releases'}, from block ${g.from}${g.origin ? ` counted from ${g.origin}` : ''}${g.early ? ', hand-over before the wait' : ''}${g.tick ? ', late wait on tick' : ''}, S=${S}`;
      test(`${name}: the verdict for every K agrees with the direct checks of K = 1 .. max(2S + 3, 7)`, () => {
        const k = sketch(floorRing(g));
        const all = checkAllTrips(k, {}, { param: 'K', timeout: 120_000 });
        const direct: string[] = [];
        for (let K = 1; K <= Math.max(2 * S + 3, 7); K++) direct.push(check(instantiate(k, { K }), { timeout: 60_000, randomRuns: false }).verdict);
        const firstBad = direct.findIndex((v) => v !== 'ok') + 1;
        if (all.verdict === 'ok') {
          expect(all.trips.complete).toBe(true);
          expect(direct, floorRing(g)).toEqual(direct.map(() => 'ok'));
        } else {
          const n = all.hazards[0]!.tripCount!;
          expect(direct[n - 1], floorRing(g)).toBe(all.verdict);
          expect(firstBad).toBeGreaterThan(0);
          expect(firstBad).toBeLessThanOrEqual(n);
        }
        // What each ring is: the early hand-over races from its first block on; the late waiter of its
        // own role aliases (firstAlias); the excused one is OK.
        if (g.early) expect([all.verdict, firstBad]).toEqual(['race', 1]);
        else if (g.late === 'role' || g.tick) expect([all.verdict, firstBad]).toEqual(['phase-alias', firstAlias(g)]);
        else expect(all.verdict).toBe('ok');
      }, 300_000);
    }
  }
});
