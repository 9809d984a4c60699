/**
 * The phase-tracking table with one more fact per row: how many phases of the waited barrier had
 * completed when the wait passed. src/report/phases.ts `phaseTable` gives the chapter's columns;
 * the explorer also needs to tell a wait that passed because its phase completed from one that
 * passed at once on a fresh barrier (parity 1 while the barrier is still in phase 0: the
 * "previous phase" the wait asks about never ran), which the table's parity columns cannot show.
 */
import type { MachineState } from '../machine/machine.js';
import type { Program } from '../machine/program.js';
import type { PhaseRow } from '../report/phases.js';
import { simulate } from '../sim/simulate.js';

/** A row of the table; `phase`: the barrier's phase when the wait passed (0: no phase has completed). */
export interface PhaseRowX extends PhaseRow {
  phase: number;
}

/** True when the wait passed without any phase of its barrier completing (it passed at once). */
export const passedAtOnce = (r: PhaseRowX): boolean => r.phase === 0;

/**
 * src/report/phases.ts `phaseTable(program, role, barrier, phaseVar)` (the same rows, from the same
 * simulation) with each row's barrier phase. Throws if the role, array or variable does not exist.
 */
export function phaseRows(program: Program, role: string, barrier: string, phaseVar: string): PhaseRowX[] {
  const agent = program.agents.find((a) => a.roleName === role);
  if (!agent) throw new Error(`no role '${role}' (roles: ${[...new Set(program.agents.map((a) => a.roleName))].join(', ')})`);
  if (!program.barriers.some((b) => b.name === barrier)) throw new Error(`no barrier array '${barrier}' (barriers: ${program.barriers.map((b) => b.name).join(', ')})`);
  const slot = program.roles[agent.role]!.slots.indexOf(phaseVar);
  if (slot < 0) throw new Error(`role '${role}' has no variable '${phaseVar}'`);
  const rows: PhaseRowX[] = [];
  simulate(program, {
    recordSpans: false,
    onStep: (s: MachineState, events) => {
      for (const e of events) {
        if (e.e !== 'wait' || e.agent !== agent.id || !e.pass) continue;
        const info = program.barrierOf(e.bar);
        if (info.info.name !== barrier) continue;
        const phase = s.bars[e.bar]!.phase;
        rows.push({ iteration: rows.length, stage: info.index, parityWaited: e.parity, parityAfter: phase & 1, phaseVar: s.agents[agent.id]!.frame[slot]!, phase });
      }
    },
  });
  return rows;
}
