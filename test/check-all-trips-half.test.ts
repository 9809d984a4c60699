/**
 * The half-period shift of the all-trip-counts check (check/trips-half.ts, docs/CHECK.md "Half a
 * period"): states whose loop counters lie half a period apart, with every stage barrier's phase one
 * apart, are identified. Where the plan applies and where it is refused, and the verdict for every
 * trip count against the direct checks of K = 1 .. 2S + 3 on rings that use it: one consumer, two
 * consumers that alternate through named barriers (the second skips the phases the first observed),
 * loops from 0 and from 1, and the planted hand-over before the wait.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { check } from '../src/check/check.js';
import { checkAllTrips } from '../src/check/trips.js';
import { halfPlan } from '../src/check/trips-half.js';
import { learnRates, shiftPlan, type ShiftPlan } from '../src/check/trips-shift.js';
import { tripLoopsOf } from '../src/check/trips-loops.js';
import { evalExpr } from '../src/kernel/expr.js';
import { parseSketch } from '../src/lang/index.js';
import { instantiate } from '../src/machine/program.js';
import type { Kernel } from '../src/kernel/ir.js';

const sketch = (text: string, file = 's.mbk'): Kernel => {
  const k = parseSketch(text, file).kernel;
  if (!k) throw new Error(text);
  return k;
};

/** The half plan of `k` with `set` and the trip parameter huge, as trips.ts computes it: flipped barrier names and the full plan. */
function planOf(k: Kernel, set: Record<string, number>, param: string) {
  const pH = instantiate(k, { ...set, [param]: 2 ** 40 });
  const loops = pH.roles.map((rc) => tripLoopsOf(rc.code, param, (e) => {
    try {
      return evalExpr(e, (n) => pH.params[n]);
    } catch {
      return null;
    }
  }));
  const rates = learnRates(pH, loops)!;
  const full = shiftPlan(pH, param, loops, rates) as ShiftPlan;
  const half = halfPlan(pH, param, loops, rates, full);
  return { full, half, names: half ? [...new Set([...half.flip].map((b) => pH.barrierOf(b).info.name))].sort() : null };
}

/**
 * A ring of S stages. `two`: two consumer instances that alternate through named barriers 1 and 2,
 * the second never waiting on `full` inside the loop (it skips the phases the first observed) and
 * waiting once after the loop on the last block's stage; `early`: the first hands the turn over
 * before its wait (a race). `from`: the loops' start. `afterMove`: the after-loop wait's block
 * (`K - 1`, or `2 * K - 1`, whose parity does not flip with half a period).
 */
function ring(S: number, opts: { two: boolean; early?: boolean; from?: number; after?: string }): string {
  const from = opts.from ?? 0;
  const after = opts.after ?? 'K - 1';
  const wait = 'mbarrier.try_wait.parity full[k % S], (k / S) & 1';
  const head = `kernel ring arch=sm_90a
param S = ${S}
param K = 4
barrier full[S] count=1
barrier empty[S] count=${opts.two ? 2 : 1}
smem A[S] bytes=1024
role producer warps=1 per=one:
    for k in range(0, K):
        mbarrier.try_wait.parity empty[k % S], ((k / S) & 1) ^ 1
        mbarrier.arrive.expect_tx full[k % S], 1024
        cp.async.bulk.tensor A[k % S], 1024, full[k % S]
`;
  const before = from === 1 ? '    mbarrier.try_wait.parity full[0], 0\n    ld.shared A[0]\n    mbarrier.arrive empty[0]\n' : '';
  if (!opts.two) return `${head}role c warps=1 per=one:\n${before}    for k in range(${from}, K):\n        ${wait}\n        ld.shared A[k % S]\n        mbarrier.arrive empty[k % S]\n`;
  const first = opts.early ? `                bar.arrive 1, 64\n                ${wait}\n` : `                ${wait}\n                bar.arrive 1, 64\n`;
  return `${head}role c warps=1 per=one instances=2:\n    g = instance\n${before}    for k in range(${from}, K):\n`
    + `        if g == 0:\n${first.replaceAll('                ', '            ')}        else:\n            bar.sync 1, 64\n`
    + '        ld.shared A[k % S]\n        if g == 0:\n            bar.sync 2, 64\n        else:\n            bar.arrive 2, 64\n        mbarrier.arrive empty[k % S]\n'
    + `    if g == 1:\n        mbarrier.try_wait.parity full[(${after}) % S], ((${after}) / S) & 1\n`;
}

describe('every trip count, half a period', () => {
  test('FlashAttention-3 (TILES=1): the four stage barrier arrays flip, the Q and O barriers do not; the half moves are half the period\'s', () => {
    const k = sketch(readFileSync('examples/fa3-forward.mbk', 'utf8'), 'examples/fa3-forward.mbk');
    for (const S of [2, 3]) {
      const { full, half, names } = planOf(k, { S }, 'NB');
      expect(full.L).toBe(2 * S);
      expect(names).toEqual(['empty_k', 'empty_v', 'full_k', 'full_v']);
      half!.delta.forEach((m, r) => {
        expect([...m.keys()].sort()).toEqual([...full.delta[r]!.keys()].sort());
        for (const [slot, d] of m) expect(d * 2).toBe(full.delta[r]!.get(slot));
        for (const d of m.values()) expect(d).toBe(S);
      });
    }
  });

  test('refused: FA3 with two tiles (the second tile\'s blocks move a whole period when NB moves half of one), a stage wait with a parity that does not flip', () => {
    const k = sketch(readFileSync('examples/fa3-forward.mbk', 'utf8'), 'examples/fa3-forward.mbk');
    expect(planOf(k, { S: 2, TILES: 2 }, 'NB').half).toBeNull();
    expect(planOf(sketch(ring(2, { two: true, after: '2 * K - 1' })), {}, 'K').half).toBeNull();
    const fixed = ring(2, { two: false }).replace('        ld.shared A[k % S]\n', '        mbarrier.try_wait.parity full[0], 0\n        ld.shared A[k % S]\n');
    expect(planOf(sketch(fixed), {}, 'K').half).toBeNull();
    expect(planOf(sketch(ring(2, { two: false })), {}, 'K').names).toEqual(['empty', 'full']);
  });

  const cases: [string, number, Parameters<typeof ring>[1]][] = [];
  for (const S of [1, 2, 3]) {
    cases.push([`one consumer, S=${S}`, S, { two: false }]);
    cases.push([`two alternating consumers, S=${S}`, S, { two: true }]);
  }
  cases.push(['two alternating consumers from block 1, S=2', 2, { two: true, from: 1 }]);
  cases.push(['planted: the turn handed over before the wait, S=2', 2, { two: true, early: true }]);
  cases.push(['planted: the turn handed over before the wait, S=3, from block 1', 3, { two: true, early: true, from: 1 }]);
  for (const [name, S, opts] of cases) {
    test(`${name}: the verdict for every K agrees with the direct checks of K = 1 .. 2S + 3`, () => {
      const k = sketch(ring(S, opts));
      const all = checkAllTrips(k, {}, { param: 'K', timeout: 120_000 });
      expect(all.trips.halfPeriod).toBe(true);
      const direct: string[] = [];
      for (let K = 1; K <= 2 * S + 3; K++) direct.push(check(instantiate(k, { K }), { timeout: 60_000, randomRuns: false }).verdict);
      if (all.verdict === 'ok') {
        expect(all.trips.complete).toBe(true);
        expect(direct.every((v) => v === 'ok')).toBe(true);
      } else {
        const n = all.hazards[0]!.tripCount!;
        expect(direct[n - 1]).toBe(all.verdict);
        expect(direct.findIndex((v) => v !== 'ok') + 1).toBeLessThanOrEqual(n);
      }
      if (opts.early) expect(all.verdict).toBe('race');
      else expect(all.verdict).toBe('ok');
    }, 300_000);
  }
});
