/**
 * The all-trip-counts check with the trip parameter in `t * K`, `t` an enclosing loop's counter
 * from a value other than 0 (check/trips-offset.ts; docs/CHECK.md "Every trip count"): the verdict
 * for every K against direct checks of K = 1 .. 6 on the CUTLASS pingpong, its planted bug, and
 * hand-written rings whose index is offset by a multiple of K (one correct, two buggy at some
 * residues of K only), and the refusals with their places.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { check } from '../src/check/check.js';
import { checkAllTrips, TripsScopeError } from '../src/check/trips.js';
import { renderCheck } from '../src/check/report.js';
import { parseSketch } from '../src/lang/index.js';
import { instantiate } from '../src/machine/program.js';
import type { Kernel } from '../src/kernel/ir.js';

const kernelOf = (file: string): Kernel => parseSketch(readFileSync(file, 'utf8'), file).kernel!;
const sketch = (text: string): Kernel => {
  const k = parseSketch(text, 'o.mbk').kernel;
  if (!k) throw new Error(text);
  return k;
};

/**
 * The verdict for every K agrees with the direct checks of K = 1 .. top: an OK only where every
 * direct check is OK, a finding with a count whose direct check finds an error. Returns the direct verdicts.
 */
function agrees(k: Kernel, set: Record<string, number>, top: number): { all: ReturnType<typeof checkAllTrips>; direct: string[] } {
  const all = checkAllTrips(k, set, { param: 'K', timeout: 120_000 });
  const direct: string[] = [];
  for (let K = 1; K <= top; K++) direct.push(check(instantiate(k, { ...set, K }), { timeout: 60_000, randomRuns: false }).verdict);
  expect(direct).not.toContain('incomplete');
  if (all.verdict === 'ok') {
    expect(all.trips.complete).toBe(true);
    expect(direct.every((v) => v === 'ok'), `every K is ok, but not directly: ${direct.join(' ')}`).toBe(true);
  } else {
    expect(all.verdict).not.toBe('incomplete');
    const n = all.hazards[0]!.tripCount!;
    const at = n <= top ? direct[n - 1]! : check(instantiate(k, { ...set, K: n }), { timeout: 60_000, randomRuns: false }).verdict;
    expect(at, `finding with K = ${n}: ${direct.join(' ')}`).not.toBe('ok');
    expect(direct.some((v) => v !== 'ok')).toBe(true);
  }
  return { all, direct };
}

/** A producer and a consumer on a ring of S stages whose iteration index is `M * t * K + k`, t from 1. */
const offsetRing = (m: string) => `kernel "offset" arch=sm_90a
param S = 2
param K = 3
param TILES = 1
barrier full[S] count=1
barrier empty[S] count=1
smem A[S] bytes=1024
role producer warps=1 per=one:
    for t in range(1, TILES + 1):
        for k in range(0, K):
            i = ${m} * t * K + k
            s = i % S
            mbarrier.try_wait.parity empty[s], ((i / S) & 1) ^ 1
            mbarrier.arrive.expect_tx full[s], 1024
            cp.async.bulk.tensor A[s], 1024, full[s]
role consumer warps=1 per=one:
    for t in range(1, TILES + 1):
        for k in range(0, K):
            i = ${m} * t * K + k
            s = i % S
            mbarrier.try_wait.parity full[s], (i / S) & 1
            ld.shared A[s]
            mbarrier.arrive empty[s]
`;

describe('every trip count, t * K with t from a value other than 0', () => {
  test('CUTLASS pingpong (S=2, EPI=1): OK for every K, as the direct checks of K = 1 .. 6', () => {
    const { all } = agrees(kernelOf('examples/cutlass-pingpong.mbk'), { S: 2, EPI: 1 }, 6);
    expect(all.verdict).toBe('ok');
    expect(renderCheck(all)).toContain('trip counts: the verdict holds for every K ≥ 1');
  }, 600_000);

  test('planted: the pingpong ordered barrier\'s start phase off by one is found, with a count whose direct check finds it', () => {
    const { all, direct } = agrees(kernelOf('examples/planted/pingpong-order-start.mbk'), { S: 2, EPI: 1 }, 4);
    expect(all.verdict).toBe('race');
    expect(direct.every((v) => v !== 'ok')).toBe(true);
  }, 600_000);

  test('a ring offset by 2S·K per tile: OK for every K, one first search per residue', () => {
    const { all } = agrees(sketch(offsetRing('2 * S')), {}, 6);
    expect(all.verdict).toBe('ok');
    expect(all.trips.modulus).toBeGreaterThan(1);
  }, 300_000);

  test('a ring offset by S·K: the fresh barriers\' phases disagree at odd K only, and that is found', () => {
    const { all, direct } = agrees(sketch(offsetRing('S')), {}, 6);
    expect(direct.map((v) => v === 'ok')).toEqual([false, true, false, true, false, true]);
    expect(all.hazards[0]!.tripCount! % 2).toBe(1);
  }, 300_000);

  test('a ring offset by K: OK at K = 1 and 4, an error at every other K, and that is found', () => {
    const { all, direct } = agrees(sketch(offsetRing('1')), {}, 6);
    expect(direct.map((v) => v === 'ok')).toEqual([true, false, false, true, false, false]);
    expect(all.verdict).not.toBe('ok');
  }, 300_000);

  test('a ring offset by K at S = 3 (K matters modulo 6): found at a count whose direct check finds it', () => {
    const { all } = agrees(sketch(offsetRing('1').replace('param S = 2', 'param S = 3')), {}, 7);
    expect(all.verdict).not.toBe('ok');
  }, 300_000);

  test('a moving value compared with a constant: the counts below the least are searched directly (a race at K ≤ 2 only)', () => {
    // The consumer writes the stage before its data has landed, for the pipeline iterations below 12 only.
    const text = offsetRing('2 * S').replace('            mbarrier.try_wait.parity full[s], (i / S) & 1\n', '            if i < 12:\n                st.shared A[s]\n            mbarrier.try_wait.parity full[s], (i / S) & 1\n');
    expect(text).toContain('if i < 12');
    const { all, direct } = agrees(sketch(text), {}, 4);
    expect(direct.map((v) => v === 'ok')).toEqual([false, false, true, true]);
    expect(all.trips.direct).toBe(12); // K = 1 .. 12: i = 4K + k < 12 is decided alike from K = 13 on
    expect(all.hazards[0]!.tripCount).toBeLessThanOrEqual(2);
    const ok = checkAllTrips(sketch(text.replace('if i < 12', 'if i < 1')), {}, { param: 'K', timeout: 60_000 });
    expect(ok.verdict).toBe('ok');
    expect(renderCheck(ok)).toContain('K < 2 searched directly');
  }, 300_000);

  test('refusals: K moving under a comparison with a counter, decreasing, outside t\'s loop, a negative t', () => {
    const refused = (body: string, why: string, line?: number) => {
      const k = sketch(`kernel r arch=sm_90a\nparam K = 4\nparam TILES = 2\nparam S = 2\nbarrier b[S] count=1\nsmem X[1] bytes=64\nrole p warps=1 per=one:\n${body}role q warps=1 per=one:\n    ld.shared X[0]\n`);
      let err: unknown = null;
      try {
        checkAllTrips(k, {}, { param: 'K', timeout: 20_000 });
      } catch (e) {
        err = e;
      }
      expect(err, body).toBeInstanceOf(TripsScopeError);
      expect((err as Error).message, body).toContain(why);
      if (line !== undefined) expect((err as TripsScopeError).loc?.line, body).toBe(line);
    };
    // `k < t * K` holds under the huge count but not on the last trip of a real one.
    refused('    for t in range(1, TILES):\n        for k in range(0, K):\n            if k < t * K - 1:\n                mbarrier.arrive b[0]\n', 'K is used here before its loops end', 10);
    refused('    for t in range(1, TILES):\n        for k in range(0, K):\n            i = K - t * K + k\n            mbarrier.arrive b[i % S]\n', 'decreases with K', 11);
    refused('    t = 1\n    i = t * K\n    for t in range(1, TILES):\n        for k in range(0, K):\n            mbarrier.arrive b[(i + k) % S]\n', 'K is used here before its loops end');
    // A negative counter is found on the first search's states.
    refused('    for t in range(0 - 1, TILES):\n        for k in range(0, K):\n            i = t * K + k\n            mbarrier.arrive b[i % S]\n', 'negative');
    refused('    for t in range(1, TILES):\n        for k in range(0, K):\n            mbarrier.arrive b[t * K]\n', 'an operand of mbarrier.arrive moves with K', 10);
    // A role without trip loops runs whole in the first search: its uses are placed too (they were not).
    const loopless = sketch('kernel r arch=sm_90a\nparam K = 4\nbarrier b[2] count=1\nsmem X[1] bytes=64\nrole p warps=1 per=one:\n    for k in range(0, K):\n        st.shared X[0]\nrole q warps=1 per=one:\n    mbarrier.arrive b[K]\n');
    expect(() => checkAllTrips(loopless, {}, { param: 'K', timeout: 20_000 })).toThrow(/role q: K is used here before its loops end \(an operand of mbarrier.arrive moves with K\)/);
  }, 120_000);
});

describe('the offset rebase (trips-rebase.ts) against the kernel with the real count', () => {
  test('random schedules: the state with K = 2^40 + r moved to K = n is the state with K = n, step by step until a trip loop ends', async () => {
    const { offsetPlan } = await import('../src/check/trips-offset.js');
    const { rebase } = await import('../src/check/trips-rebase.js');
    const { tripLoopsOf } = await import('../src/check/trips-loops.js');
    const { usesInScope } = await import('../src/check/trips-scope.js');
    const { Machine } = await import('../src/machine/machine.js');
    const { mulberry32 } = await import('../src/model/random.js');
    const { HUGE_TRIPS } = await import('../src/check/trips.js');
    const view = (s: import('../src/machine/machine.js').MachineState) => JSON.stringify({ a: s.agents.map((g) => [g.pc, g.status, [...g.frame]]), b: s.bars.map((b) => b.phase) });
    let compared = 0;
    let moved = 0;
    for (const [k, set] of [[sketch(offsetRing('1')), {}], [sketch(offsetRing('S').replace('param S = 2', 'param S = 3')), {}], [kernelOf('examples/planted/pingpong-order-start.mbk'), { S: 2, EPI: 1 }]] as const) {
      const pH0 = instantiate(k, { ...set, K: HUGE_TRIPS });
      const loops = pH0.roles.map((rc) => tripLoopsOf(rc.code, 'K', () => 1));
      const ends = pH0.roles.map((_, r) => {
        if (!loops[r]!.length) return Infinity;
        const sc = usesInScope(pH0, r, 'K', loops[r]!);
        if ('why' in sc) throw new Error(sc.why);
        return sc.end;
      });
      const plan = offsetPlan(pH0, 'K', loops, ends);
      if ('why' in plan) throw new Error(plan.why);
      expect(plan.P).toBeGreaterThan(1);
      const rand = mulberry32(11);
      for (let n = Math.max(1, plan.min); n <= 6; n++) {
        const H = HUGE_TRIPS + ((((n - HUGE_TRIPS) % plan.P) + plan.P) % plan.P);
        const pN = instantiate(k, { ...set, K: n });
        const pH = instantiate(k, { ...set, K: H });
        const mN = new Machine(pN);
        const mH = new Machine(pH);
        const inTrip = (s: import('../src/machine/machine.js').MachineState, a: number) => loops[pN.agents[a]!.role]!.some((l) => s.agents[a]!.pc > l.head && s.agents[a]!.pc < l.end);
        for (let run = 0; run < 20; run++) {
          let sN = mN.initial();
          let sH = mH.initial();
          for (let step = 0; step < 300; step++) {
            const ch = mN.enabled(sN);
            if (!ch.length) break;
            const c = ch[Math.floor(rand() * ch.length)]!;
            const nN = mN.step(sN, c).state;
            const nH = mH.step(sH, c).state;
            // A trip loop ended (or was skipped) under n: the kernels part here.
            const a = c.kind === 'agent' ? c.agent : -1;
            if (a >= 0 && inTrip(sH, a) && nN.agents[a]!.pc !== nH.agents[a]!.pc) break;
            sN = nN;
            sH = nH;
            expect(view(rebase(plan, pN, sH, H, n)), `K = ${n}, step ${step}`).toBe(view(sN));
            compared++;
            if (view(sH) !== view(sN)) moved++;
          }
        }
      }
    }
    expect(compared).toBeGreaterThan(1000);
    // The rebase is not trivial: most compared states differ before it.
    expect(moved).toBeGreaterThan(compared / 4);
  }, 300_000);
});
