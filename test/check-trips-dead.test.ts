/**
 * The waits an agent may still reach under every trip count (check/trips-dead.ts), and the first
 * search's key that forgets a waiter's last observed phase on a barrier it never waits on again
 * (check/trips-normal.ts `forgetDead`): FlashAttention-3's second warpgroup waits on the K stages
 * at a tile's first block only.
 */
import { lastObserved, setPass } from '../src/check/wait-hist.js';
import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { checkAllTrips, HUGE_TRIPS } from '../src/check/trips.js';
import { WaitReach } from '../src/check/trips-dead.js';
import { tripLoopsOf } from '../src/check/trips-loops.js';
import { learnRates, shiftPlan, type ShiftPlan } from '../src/check/trips-shift.js';
import { shifted } from '../src/check/trips-normal.js';
import { analyse } from '../src/check/analysis.js';
import { initialExtra } from '../src/check/search.js';
import { evalExpr } from '../src/kernel/expr.js';
import { parseSketch } from '../src/lang/index.js';
import { Machine, type MachineState } from '../src/machine/machine.js';
import { instantiate, type Program } from '../src/machine/program.js';

const fa3 = parseSketch(readFileSync('examples/fa3-forward.mbk', 'utf8'), 'examples/fa3-forward.mbk').kernel!;

/** FA3 with NB huge, its wait reach, and a state where every math warp is inside its block loop. */
function setup(set: Record<string, number>) {
  const pH = instantiate(fa3, { ...set, NB: HUGE_TRIPS });
  const loops = pH.roles.map((rc) => tripLoopsOf(rc.code, 'NB', (e) => evalExpr(e, (n) => pH.params[n])));
  const plan = shiftPlan(pH, 'NB', loops, learnRates(pH, loops)!) as ShiftPlan;
  const reach = new WaitReach(pH, 'NB', loops, plan);
  const m = new Machine(pH);
  let s: MachineState = m.initial();
  const math = pH.roles.findIndex((rc) => rc.name === 'math');
  const inLoop = (st: MachineState) => st.agents.every((ag, a) => pH.agents[a]!.role !== math || loops[math]!.some((l) => ag.pc > l.head && ag.pc < l.end && ag.frame[l.slot]! >= 3));
  for (let n = 0; n < 5000 && !inLoop(s); n++) s = m.step(s, m.enabled(s)[0]!).state;
  return { pH, reach, s, math, inLoop: inLoop(s), m, loops, plan };
}
const keysOf = (pH: Program, name: string) => {
  const b = pH.barriers.find((x) => x.name === name)!;
  return Array.from({ length: b.length }, (_, i) => b.offset + i);
};

describe('waits an agent may still reach, under every trip count', () => {
  test('FA3 (TILES=1): the second warpgroup never waits on full_k again inside its block loop, but still on full_v; the first on both', () => {
    const { pH, reach, s, math, inLoop } = setup({ S: 3 });
    expect(inLoop).toBe(true);
    const wg = (g: number) => pH.agents.filter((a) => a.role === math && a.instance === g).map((a) => a.id);
    expect(wg(1)).toHaveLength(4);
    for (const a of wg(1)) {
      expect(keysOf(pH, 'full_k').map((k) => reach.neverWaits(s, a, k))).toEqual([true, true, true]);
      expect(keysOf(pH, 'full_v').map((k) => reach.neverWaits(s, a, k))).toEqual([false, false, false]);
      expect(reach.neverWaits(s, a, keysOf(pH, 'bq')[0]!)).toBe(true);
    }
    for (const a of wg(0)) expect([...keysOf(pH, 'full_k'), ...keysOf(pH, 'full_v')].some((k) => reach.neverWaits(s, a, k))).toBe(false);
  });

  test('FA3 with two tiles: the second warpgroup waits on full_k again at the next tile, and bq too', () => {
    const { pH, reach, s, math, inLoop } = setup({ S: 3, TILES: 2 });
    expect(inLoop).toBe(true);
    const a = pH.agents.find((x) => x.role === math && x.instance === 1)!.id;
    expect(keysOf(pH, 'full_k').map((k) => reach.neverWaits(s, a, k))).toEqual([false, false, false]);
    expect(reach.neverWaits(s, a, keysOf(pH, 'bq')[0]!)).toBe(false);
  });

  test('the key forgets the second warpgroup\'s entry on full_k[0] only where no skip of the first can lean on it', () => {
    const { pH, reach, s, math, m, loops, plan, inLoop } = setup({ S: 1 });
    expect(inLoop).toBe(true);
    const an = analyse(pH);
    const key = keysOf(pH, 'full_k')[0]!;
    const P = s.bars[key]!.phase;
    expect(P).toBeGreaterThanOrEqual(3);
    const wg = (g: number) => pH.agents.filter((a) => a.role === math && a.instance === g).map((a) => a.id);
    const slotOf = (a: number) => an.waitSlots[a]!.get(key)!;
    /** The second warpgroup's first warp's last observed phase after the key, with g = 1 at `o1`, g = 0 at `o0` (null: never passed). */
    const after = (o1: number, o0: number | null) => {
      const x = initialExtra(pH, an);
      const hist = x.hist.slice();
      for (const a of wg(1)) setPass(hist, slotOf(a), o1, 1, false);
      for (const a of wg(0)) if (o0 !== null) setPass(hist, slotOf(a), o0, 1, false);
      return lastObserved(shifted(plan, m, pH, an, loops, s, { ...x, hist }, reach).x.hist, slotOf(wg(1)[0]!));
    };
    // Inert: at most one past what the first warpgroup observed.
    expect(after(P - 2, P - 2)).toBe(null);
    expect(after(P - 3, P - 2)).toBe(null);
    // A first warpgroup that never passed (due to observe phase 0) could skip to P - 1 and lean on an entry at P - 2.
    expect(after(P - 2, null)).not.toBe(null);
    // Far behind (o <= P - 4): forgotten whatever the others observed.
    if (P >= 4) expect(after(P - 4, null)).toBe(null);
    // Without the reach, nothing is forgotten.
    const x = initialExtra(pH, an);
    const hist = x.hist.slice();
    for (const a of wg(1)) setPass(hist, slotOf(a), P - 2, 1, false);
    for (const a of wg(0)) setPass(hist, slotOf(a), P - 2, 1, false);
    expect(lastObserved(shifted(plan, m, pH, an, loops, s, { ...x, hist }).x.hist, slotOf(wg(1)[0]!))).not.toBe(null);
  });

  test('FA3 (S=1) for every NB: fewer states before the last trip than the 336 of the clamp alone, same verdict', () => {
    const all = checkAllTrips(fa3, { S: 1 }, { param: 'NB', timeout: 120_000 });
    expect([all.verdict, all.trips.complete, all.trips.period]).toEqual(['ok', true, 2]);
    expect(all.trips.statesBefore).toBeLessThan(336);
    expect(all.trips.statesBefore).toBeGreaterThan(0);
  }, 300_000);
});
