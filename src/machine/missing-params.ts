/**
 * The traps that stand for PTX kernel parameters the launch gives no value: the PTX front end
 * translates a read of such a parameter into a `trap` whose `missingParams` names them (ptxi), and
 * a driver that meets the trap reports the missing input rather than a finding about the kernel.
 * One lookup over the compiled roles for every driver (the CLI's exit 2, the explorer's banner).
 */
import type { SrcLoc } from '../kernel/ir.js';
import type { OpInstr, Program } from './program-types.js';

/** The trap instructions of `program` that carry `missingParams` (typed walk over the compiled roles, in role order). */
export function missingParamTraps(program: Program): OpInstr[] {
  const out: OpInstr[] = [];
  for (const rc of program.roles) for (const ins of rc.code) if (ins.i === 'op' && ins.op.op === 'trap' && ins.op.missingParams?.length) out.push(ins);
  return out;
}

const sameLoc = (a: SrcLoc | undefined, b: SrcLoc): boolean => !!a && a.line === b.line && a.col === b.col && (a.file ?? '') === (b.file ?? '');

/**
 * The parameter names (`param_2`, or `param_0+20` for the field at byte 20 of a struct parameter)
 * of the missing-parameter trap that stopped an agent at `loc` with diagnostic `message`, or null
 * when that stop is no such trap.
 */
export function missingParamsAt(program: Program, loc: SrcLoc | undefined, message: string): string[] | null {
  for (const ins of missingParamTraps(program)) {
    const op = ins.op as Extract<OpInstr['op'], { op: 'trap' }>;
    if (op.message === message && sameLoc(loc, ins.loc)) return op.missingParams!;
  }
  return null;
}
