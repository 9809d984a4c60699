/**
 * The text of the operation that a race's root cause names as its release (cause.ts): for a kernel
 * of registers (PTX), the operands' values at the step it ran (machine/step-text.ts, as the trace
 * writes that step); else the instruction's text as written.
 */
import type { SrcLoc } from '../kernel/ir.js';
import type { OpInstr, Program } from '../machine/program.js';
import { registerOperands } from '../machine/step-text.js';
import type { TraceStep } from './check-types.js';

/** The op text of the instruction at `loc` of agent `a`'s role, if any. */
function opAt(p: Program, a: number, loc?: SrcLoc): string | null {
  if (!loc || a < 0) return null;
  const ins = p.roles[p.agents[a]!.role]!.code.find((x) => x.i === 'op' && x.loc.line === loc.line && x.loc.col === loc.col) as OpInstr | undefined;
  return ins ? ins.text : null;
}

/**
 * The text of the operation agent `a` performed at step `t` (its events' time in a replay) at `loc`:
 * for a kernel of registers (PTX), the trace step's text, its operands' values in that state
 * (machine/step-text.ts, as every trace, hang line and timeline label writes it); else, or without
 * the step, the instruction's text (`opAt`).
 */
export function opTextAt(p: Program, steps: readonly TraceStep[] | undefined, a: number, t: number, loc?: SrcLoc): string | null {
  if (steps && a >= 0 && registerOperands(p, a)) {
    const st = steps.find((x) => x.n === t && x.kind === 'agent');
    if (st && (!loc || (st.loc?.line === loc.line && st.loc.col === loc.col))) return st.op;
  }
  return opAt(p, a, loc);
}
