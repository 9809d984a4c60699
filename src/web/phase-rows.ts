/**
 * The phase-tracking rows the explorer shows: src/report/phases.ts `phaseTable`, whose rows carry
 * the barrier's phase when each wait passed, so a wait that passed at once on a fresh barrier
 * (no phase completed) can be told from one released by a completion.
 */
import { passedAtOnce, phaseTable, type PhaseRow } from '../report/phases.js';

/** A row of the table (see {@link PhaseRow}; `phase` 0: the wait passed at once). */
export type PhaseRowX = PhaseRow;

export { passedAtOnce };

/** `phaseTable(program, role, barrier, phaseVar)`. Throws if the role, array or variable does not exist. */
export const phaseRows = phaseTable;
