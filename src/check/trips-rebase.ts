/**
 * The trip-parameter offsets (trips-offset.ts) applied to states of the all-trip-counts search
 * (trips.ts): whether a state holds a value that moves with K, a state of the kernel with one K
 * turned into the kernel with another ({@link rebase}), and the check that the K-multiplying
 * counter is not negative.
 */
import type { Program } from '../machine/program.js';
import type { MachineState } from '../machine/machine.js';
import type { OffsetPlan } from './trips-offset.js';

/**
 * Whether an agent of `s` may have computed a value that moves with K (at a pc `RoleOffset.touched`
 * of ./trips-offset.ts, with t ≠ 0 unless K moves it directly); with `next`, or computes one in its
 * next step (at a pc of `RoleOffset.moving`).
 */
export function touchedIn(plan: OffsetPlan, p: Program, s: MachineState, next = false): boolean {
  for (let a = 0; a < s.agents.length; a++) {
    const ro = plan.roles[p.agents[a]!.role]!;
    const ag = s.agents[a]!;
    // t * K does not move where t is 0 (pingpong's first warpgroup).
    const at = ag.pc >= ro.touched.length || ro.touched[ag.pc] === 1 || (next && ro.moving.has(ag.pc));
    if (at && (ro.direct || !ro.t || ag.frame[ro.t.slot] !== 0)) return true;
  }
  return false;
}

/**
 * State `s` of the kernel with K = `from` (the first search's) as the kernel with K = `to` has
 * it: every assigned moving slot of every agent moved by (a·t0 + b)·(to − from) / den. A copy
 * where something moves; `s` itself otherwise. `to − from` must be a multiple of the plan's P.
 */
export function rebase(plan: OffsetPlan, p: Program, s: MachineState, from: number, to: number): MachineState {
  if (from === to || !plan.roles.some((ro) => ro.forms.size)) return s;
  const delta = to - from;
  let agents: MachineState['agents'] | null = null;
  s.agents.forEach((ag, a) => {
    const ro = plan.roles[p.agents[a]!.role]!;
    if (!ro.forms.size) return;
    const have = ro.assigned[Math.min(ag.pc, ro.assigned.length - 1)];
    if (!have || !have.size) return;
    const t0 = ro.t ? ag.frame[ro.t.slot]! : 0;
    const frame = ag.frame.slice();
    for (const slot of have) {
      const f = ro.forms.get(slot)!;
      frame[slot] = frame[slot]! + ((f.a * t0 + f.b) * delta) / f.den;
    }
    agents ??= s.agents.slice();
    agents[a] = { ...ag, frame };
  });
  return agents ? { ...s, agents } : s;
}

/** The first agent of `s` whose K-multiplying counter is negative inside its loop (the plan needs t ≥ 0), or -1. */
export function negativeT(plan: OffsetPlan, p: Program, s: MachineState): number {
  for (let a = 0; a < s.agents.length; a++) {
    const ag = s.agents[a]!;
    const t = plan.roles[p.agents[a]!.role]!.t;
    if (t && ag.pc > t.head && ag.pc < t.end && ag.frame[t.slot]! < 0) return a;
  }
  return -1;
}
