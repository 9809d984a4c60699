/**
 * The visited-set key of the all-trip-counts check's first search (trips.ts): a state with its
 * loop counters moved back by whole periods (the plan of trips-shift.ts) and the monotone counters
 * of the machine and the checker (phases, tokens and observed phases, group numbers, in-order
 * streams, named-barrier generations) kept only relative to each other. Every rule that reads
 * them compares two of them or reads a parity, but for phase 0 and a first pass due to observe
 * phase 0, which the key keeps (trips-never.ts), so two states with one key behave alike.
 */
import type { Program } from '../machine/program.js';
import type { Machine, MachineState } from '../machine/machine.js';
import { NAMED_PER_CTA } from '../machine/state.js';
import type { Extra } from './state-buf.js';
import type { Analysis } from './analysis.js';
import type { TripLoop } from './trips-loops.js';
import type { ShiftPlan } from './trips-shift.js';
import type { HalfPlan } from './trips-half.js';
import { forgetPass, lastObserved, lastStale, moveObserved } from './wait-hist.js';
import type { WaitReach } from './trips-dead.js';
import { baseOf, flipKeeps, NEAR_MARK, nearNever } from './trips-never.js';

/**
 * The state `s` with every shifted slot moved back by whole periods as far as the threshold allows
 * (all agents of roles with trip loops inside one, but those that have not reached their first
 * trip loop yet and are left as they are; every shifted value still at or above T), and
 * the monotone counters of the machine and the checker made relative: each barrier's phase, the
 * tokens and observed phases of that barrier, moved back by the same even amount (trips-never.ts
 * `baseOf`: the least referred phase down to 0 or 1, the barrier's own phase kept at 1 or more once
 * it completed one, and kept absolute while a waiter that never passed is near (`nearNever`), that
 * waiter's slot then marked); each agent's group numbers, named-barrier generations and
 * cluster rounds relative to their least. With `reach`, a waiter's last observed phase on a barrier
 * it never waits on again, and that no other waiter's skip can lean on, is forgotten first
 * ({@link forgetDead}). With `half` (trips-half.ts), the slots move back by half periods instead,
 * and an odd number of them moves every flipped barrier one phase back too ({@link halfFlip}: its
 * waits' parities flip with the counters), taken only where that keeps every absolute reading of a
 * phase (trips-never.ts `flipKeeps`) and no agent waits before its first trip loop.
 * Two states with one key have the same futures for every trip count (docs/CHECK.md, "Half a
 * period"). A copy: `s` and `x` are not changed.
 */
export function shifted(plan: ShiftPlan, m: Machine, pH: Program, an: Analysis, loops: readonly (readonly TripLoop[])[], s: MachineState, x: Extra, reach?: WaitReach, half?: HalfPlan | null): { s: MachineState; x: Extra } {
  const agents = s.agents.map((ag) => ({ ...ag, frame: ag.frame.slice(), tokens: ag.tokens ? { ...ag.tokens } : null }));
  // Half periods back (whole periods without a half plan): the largest k with every shifted slot
  // of every agent still ≥ T after k of them.
  const step = half ? half.delta : plan.delta;
  let k = Infinity;
  // An agent that has not reached its role's first trip loop yet (pingpong's second warpgroup,
  // waiting for the first one's mainloop) holds no counter value: it is left as it is.
  const before = (a: number) => agents[a]!.pc < firstHead(loops[pH.agents[a]!.role]!);
  let anyBefore = false;
  for (let a = 0; a < agents.length && k > 0; a++) {
    const ag = agents[a]!;
    const r = pH.agents[a]!.role;
    if (!loops[r]!.length || ag.status !== 'run') continue;
    if (before(a)) {
      anyBefore = true;
      continue;
    }
    if (!loops[r]!.some((l) => ag.pc > l.head && ag.pc < l.end)) {
      k = 0;
      break;
    }
    for (const [slot, d] of step[r]!) k = Math.min(k, Math.floor((ag.frame[slot]! - plan.T) / d));
  }
  if (!Number.isFinite(k)) k = 0;
  const bars = s.bars.map((b) => ({ ...b }));
  const hist = x.hist.slice();
  const mono = monotonePhases(pH);
  if (mono) {
    if (reach) forgetDead(reach, an, s, hist);
    clampStale(an, bars, hist);
  }
  // Waiters that never passed and whose first pass reads the barrier's phase absolutely (trips-never.ts).
  const near = (back: (bar: number) => number) => (mono ? nearNever(pH, an, s, bars, hist, back, reach) : []);
  // Each barrier: the least phase anything still refers to (a near waiter refers to phase −1).
  const leastOf = (nearSlots: readonly { bar: number }[]) => {
    const least = bars.map((b) => b.phase);
    agents.forEach((ag) => {
      if (ag.tokens) for (const t of Object.values(ag.tokens)) least[t.barrier] = Math.min(least[t.barrier]!, t.phase);
    });
    // A history slot (wait-hist.ts): the observed phase, or never passed.
    an.waitSlots.forEach((m) => m.forEach((slot, bar) => {
      const o = lastObserved(hist, slot);
      if (o !== null) least[bar] = Math.min(least[bar]!, o);
    }));
    for (const { bar } of nearSlots) least[bar] = Math.min(least[bar]!, -1);
    return least;
  };
  let nearNow = near(() => 0);
  let least = leastOf(nearNow);
  // An odd number of half periods moves each flipped barrier's phase back by one (halfFlip), which
  // must leave the rules that read phases absolutely answering alike (flipKeeps); and no agent may
  // wait before its first trip loop (its waits' parities were not proved to flip).
  if (half && k % 2 === 1 && (anyBefore || !flipKeeps(half.flip, mono, bars, least, near))) k--;
  if (k > 0) {
    for (let a = 0; a < agents.length; a++) {
      const ag = agents[a]!;
      const r = pH.agents[a]!.role;
      if (!loops[r]!.length || ag.status !== 'run' || before(a)) continue;
      for (const [slot, d] of step[r]!) ag.frame[slot] = ag.frame[slot]! - k * d;
    }
  }
  if (half && k % 2 === 1) {
    halfFlip(half.flip, an, bars, agents, hist);
    nearNow = near(() => 0);
    least = leastOf(nearNow);
  }
  movePhases(an, least.map((v, i) => baseOf(mono, v, bars[i]!.phase)), bars, agents, hist);
  // A near waiter is told apart from one that never passed and is not near (its barrier's phase is
  // absolute: base 0, baseOf).
  for (const { slot } of nearNow) hist[slot] = NEAR_MARK;
  const inflight = relativeGroups(pH, s, agents);
  return { s: { ...s, agents, bars, inflight, named: relativeNamed(m, pH, s, agents) }, x: { ...x, hist } };
}

/**
 * Moves each barrier's phase back by `base` (per barrier key), with the tokens (and their frame
 * slots) and the observed phases of `hist` that refer to it. `bars`, `agents` and `hist` are changed
 * in place.
 */
function movePhases(an: Analysis, base: readonly number[], bars: MachineState['bars'][number][], agents: MachineState['agents'], hist: number[]): void {
  bars.forEach((b, i) => (b.phase -= base[i]!));
  agents.forEach((ag) => {
    if (!ag.tokens) return;
    for (const [slot, t] of Object.entries(ag.tokens)) {
      const nt = { ...t, phase: t.phase - base[t.barrier]! };
      ag.tokens[Number(slot)] = nt;
      ag.frame[Number(slot)] = nt.phase;
    }
  });
  an.waitSlots.forEach((m) => m.forEach((slot, bar) => {
    const o = lastObserved(hist, slot);
    if (o !== null) moveObserved(hist, slot, o - base[bar]!);
  }));
}

/**
 * The in-flight operations of `s` with the group numbers made relative (`agents`' counters are
 * changed in place): each relative to the least one still referred to, wgmma groups per
 * warpgroup (a warp's wait_group compares its count with its leader's), bulk and cp.async groups
 * per agent; in-order stream positions relative to the next one to complete.
 */
function relativeGroups(pH: Program, s: MachineState, agents: MachineState['agents']): MachineState['inflight'] {
  const inflight = s.inflight.map((o) => ({ ...o }));
  const wgBase = new Map<number, number>();
  agents.forEach((ag, a) => {
    const l = pH.agents[a]!.wgLeader;
    wgBase.set(l, Math.min(wgBase.get(l) ?? Infinity, ag.wgGroup));
  });
  for (const o of inflight) if (o.kind === 'wgmma' && o.group >= 0) {
    const l = pH.agents[o.agent]!.wgLeader;
    wgBase.set(l, Math.min(wgBase.get(l) ?? Infinity, o.group));
  }
  agents.forEach((ag, a) => {
    const own = inflight.filter((o) => o.agent === a);
    const rel = (cur: number, kind: string) => Math.min(cur, ...own.filter((o) => o.kind === kind && o.group >= 0).map((o) => o.group));
    const bulk = rel(ag.bulkGroup, 'bulk.store');
    const cp = rel(ag.cpGroup, 'cp.async');
    const wg = wgBase.get(pH.agents[a]!.wgLeader)!;
    for (const o of own) {
      if (o.group < 0) continue;
      o.group -= o.kind === 'wgmma' ? wgBase.get(pH.agents[o.agent]!.wgLeader)! : o.kind === 'bulk.store' ? bulk : o.kind === 'cp.async' ? cp : 0;
    }
    ag.wgGroup -= wg;
    ag.bulkGroup -= bulk;
    ag.cpGroup -= cp;
    // In-order streams: tcgen05 positions relative to the agent's next one to complete; wgmma
    // positions relative to its warpgroup leader's (a wgmma starts once every warp issued it).
    const tc = ag.tcDone;
    ag.tcIssued -= tc;
    ag.tcDone = 0;
    const wd = s.agents[pH.agents[a]!.wgLeader]!.wgDone;
    ag.wgIssued -= wd;
    if (pH.agents[a]!.wgLeader === a) ag.wgDone = 0;
    for (const o of own) if (o.seq >= 0) o.seq -= o.kind === 'wgmma' ? wd : tc;
  });
  return inflight;
}

/**
 * Moves every barrier of `flip` one phase back, with the tokens and observed phases that refer to
 * it (trips-half.ts: the half of a period that goes with it flips every parity these barriers are
 * waited on with). `bars`, `agents` (tokens and their frame slots) and `hist` are changed in place.
 */
function halfFlip(flip: ReadonlySet<number>, an: Analysis, bars: MachineState['bars'][number][], agents: MachineState['agents'], hist: number[]): void {
  for (const b of flip) bars[b]!.phase -= 1;
  agents.forEach((ag) => {
    if (!ag.tokens) return;
    for (const [slot, t] of Object.entries(ag.tokens)) {
      if (!flip.has(t.barrier)) continue;
      ag.tokens[Number(slot)] = { ...t, phase: t.phase - 1 };
      ag.frame[Number(slot)] = t.phase - 1;
    }
  });
  an.waitSlots.forEach((m) => m.forEach((slot, bar) => {
    const o = lastObserved(hist, slot);
    if (o !== null && flip.has(bar)) moveObserved(hist, slot, o - 1);
  }));
}

/**
 * How far behind its barrier's phase a waiter's last observed phase may fall before every rule
 * that reads it gives the same answer (detect-waits.ts; machine/hang.ts reads it for a message only).
 * A later wait on that barrier observes O ≥ phase − 2 (its parity names one of the last two
 * phases, and phases only grow), so with an entry o ≤ phase − STALE_BEHIND: the waiter's own next
 * pass is two or more phases past its intent o + 1, never a re-observation (O ≠ o); another
 * consumer's skip test (o ≥ O − 1) fails; and the stale-at-end test (phase > o + 1) holds.
 */
export const STALE_BEHIND = 5;

/**
 * Moves every history entry (wait-hist.ts: the observed phase, the wait's pc and stale bit) that lies
 * STALE_BEHIND or more phases behind its valid barrier's phase up to exactly that far behind: a
 * waiter that stopped waiting on a barrier (FlashAttention-3's second warpgroup, ordered by named
 * barriers, waits on the K / V barriers only at a tile's first and last block) would otherwise hold
 * the barrier's relative phase (below) at the phase it last observed, and the phase would grow
 * with every period. The pc and stale bits stay; `hist` is changed in place.
 */
function clampStale(an: Analysis, bars: readonly MachineState['bars'][number][], hist: number[]): void {
  an.waitSlots.forEach((m) => m.forEach((slot, bar) => {
    const o = lastObserved(hist, slot);
    const b = bars[bar]!;
    if (o === null || b.status !== 'valid') return;
    const floor = b.phase - STALE_BEHIND;
    if (o < floor) moveObserved(hist, slot, floor);
  }));
}

/**
 * Sets to never passed every history entry (wait-hist.ts) that no rule can read any more:
 * its agent never waits on the barrier again (`reach`, trips-dead.ts), so its own passes never
 * compare with it; it has no stale bit, so the stale-at-end test skips it; and no other waiter's
 * skip can be excused by it. A skip of waiter c observes O ≥ last(c) + 3 (last −1 for a waiter that
 * never passed) and O ≥ P − 2 (P: the barrier's phase now; with phases only growing, a parity names
 * one of the last two), and every later pass of c sets last(c) ≥ P − 2; so an entry o with
 * o ≤ P − 4, or with o ≤ min(last(c), P − 2) + 1 for every other waiter c of the barrier, never
 * meets the excuse's o ≥ O − 1. Such an entry would hold its barrier's relative phase (below) at the
 * phase it observed until it fell {@link STALE_BEHIND} behind: FlashAttention-3's second warpgroup
 * at S stages, for 5·S blocks. Decided on the entries of `hist` as given, then changed in place.
 */
function forgetDead(reach: WaitReach, an: Analysis, s: MachineState, hist: number[]): void {
  const byBar = waitersOf(an);
  const drop: number[] = [];
  an.waitSlots.forEach((m, a) => m.forEach((slot, bar) => {
    const o = lastObserved(hist, slot);
    const b = s.bars[bar]!;
    if (o === null || lastStale(hist, slot) || b.status !== 'valid') return;
    if (o > b.phase - 4) {
      for (const [c, sc] of byBar.get(bar)!) {
        if (c === a) continue;
        if (o > Math.min(lastObserved(hist, sc) ?? -1, b.phase - 2) + 1) return;
      }
    }
    if (reach.neverWaits(s, a, bar)) drop.push(slot);
  }));
  for (const slot of drop) forgetPass(hist, slot);
}

const waiters = new WeakMap<Analysis, Map<number, [number, number][]>>();

/** Per barrier key: every (agent, history slot) that may wait on it. */
function waitersOf(an: Analysis): Map<number, [number, number][]> {
  let w = waiters.get(an);
  if (!w) {
    w = new Map();
    an.waitSlots.forEach((m, a) => m.forEach((slot, bar) => {
      let l = w!.get(bar);
      if (!l) w!.set(bar, (l = []));
      l.push([a, slot]);
    }));
    waiters.set(an, w);
  }
  return w;
}

const monotone = new WeakMap<Program, boolean>();

/** Whether no operation of `p` initializes or invalidates an mbarrier (so every barrier's phase only grows). */
function monotonePhases(p: Program): boolean {
  let v = monotone.get(p);
  if (v === undefined) {
    v = !p.roles.some((rc) => rc.code.some((ins) => ins.i === 'op' && (ins.op.op === 'mbarrier.init' || ins.op.op === 'mbarrier.inval')));
    monotone.set(p, v);
  }
  return v;
}

/** The head of the first trip loop of a role's code (Infinity without one). */
function firstHead(loops: readonly TripLoop[]): number {
  let h = Infinity;
  for (const l of loops) h = Math.min(h, l.head);
  return h;
}

/**
 * Named-barrier generations relative to the least one still referred to, per barrier: its count
 * of completed generations, the generation each agent in its `bar.sync` waits for, and the one
 * each agent's last `bar.arrive` landed in (gen × 16 + id, machine/ops/barriers.ts).
 */
function relativeNamed(m: Machine, pH: Program, s: MachineState, agents: MachineState['agents']): MachineState['named'] {
  if (!s.named.some((n) => n.gen > 0)) return s.named;
  const base = s.named.map((n) => n.gen);
  const waitKey = (a: number): number => {
    const ag = agents[a]!;
    const ins = pH.roles[pH.agents[a]!.role]!.code[ag.pc];
    return ag.sub >= 0 && ins?.i === 'op' && ins.op.op === 'bar.sync' ? m.namedKey(a, ins, ag) : -1;
  };
  agents.forEach((ag, a) => {
    const k = waitKey(a);
    if (k >= 0) base[k] = Math.min(base[k]!, ag.sub);
    if (ag.lastArrive >= 0) {
      const key = pH.agents[a]!.cta * NAMED_PER_CTA + (ag.lastArrive % NAMED_PER_CTA);
      base[key] = Math.min(base[key]!, Math.floor(ag.lastArrive / NAMED_PER_CTA));
    }
  });
  agents.forEach((ag, a) => {
    const k = waitKey(a);
    if (k >= 0) ag.sub -= base[k]!;
    if (ag.lastArrive >= 0) {
      const id = ag.lastArrive % NAMED_PER_CTA;
      ag.lastArrive -= base[pH.agents[a]!.cta * NAMED_PER_CTA + id]! * NAMED_PER_CTA;
    }
  });
  return s.named.map((n, k) => (base[k] ? { ...n, gen: n.gen - base[k]! } : n));
}
