/**
 * The phase-tracking rows the explorer shows: src/report/phases.ts `phaseTable`, whose rows carry
 * the barrier's phase when each wait passed, so a wait that passed at once on a fresh barrier
 * (no phase completed) can be told from one released by a completion. A role of several warps
 * (a PTX role) has rows of every warp, merged by `mergePhaseRows`: one row marked `all` where the
 * warps agree, one per warp where they differ.
 */
import { mergePhaseRows, passedAtOnce, phaseTable, type PhaseLine } from '../report/phases.js';
import type { Program } from '../machine/program.js';

/** A row of the table (see {@link PhaseLine}; `phase` 0: the wait passed at once; `warp` 'all': every warp's row). */
export type PhaseRowX = PhaseLine;

export { passedAtOnce };

/**
 * The lines of `phaseTable(program, role, barrier, phaseVar)` over every warp of the role, in
 * iteration order. Throws a RangeError if the role, array or variable does not exist.
 */
export function phaseRows(program: Program, role: string, barrier: string, phaseVar: string): PhaseRowX[] {
  const warps = program.agents.filter((a) => a.roleName === role).map((a) => a.name);
  return mergePhaseRows(phaseTable(program, role, barrier, phaseVar), warps).lines;
}
