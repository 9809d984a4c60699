/**
 * Values known once the launch is: a register whose every definition computes, from immediates and
 * the launch's integer parameters (`ld.param` of a scalar parameter or a struct field given with
 * `--param`), one integer. DeepGEMM sizes a region of its dynamic shared memory from `shape_k`, so
 * its mbarriers sit at a byte offset computed at run time from a parameter; with the launch's
 * values that offset is a number before the kernel runs (mixed.ts).
 *
 * The forms followed: `ld.param`, PTX ISA §9.7.1 integer arithmetic (`add`, `sub`, `mul.lo` /
 * `.wide` / `.hi`, `mad.lo`, `div`, `rem`, `min`, `max`, `neg`, `abs`), §9.7.4 logic and shift
 * (`and`, `or`, `xor`, `not`, `shl`, `shr`) and §9.7.9 `mov` and `cvt` between integer types. Their
 * semantics are not restated here: a definition's value is the value of the IR expression alu.ts
 * makes of the instruction (what the translated kernel computes at run time), evaluated by the
 * machine's arithmetic (kernel/expr.ts `evalExpr`) with the values of its sources. So a value is the
 * exact integer the run computes (`sub.u32` of 0 and 8 is −8, an offset before the array), and an
 * evaluation the machine would refuse (beyond ±(2^53 − 1), a shift count outside 0..63) has none.
 */
import { EvalFault, evalExpr } from '../kernel/expr.js';
import type { Expr } from '../kernel/ir.js';
import type { Operand } from '../ptx/ast.js';
import { aluExpr } from './alu.js';
import { destsOf, type Facts } from './analysis.js';
import { defsOf, paramAddress } from './defs.js';
import { NotModelled, num } from './emit.js';
import type { FlatIns } from './flat.js';

/** The launch's integer parameters. */
export interface LaunchParams {
  /** Whether `name` is a parameter symbol of the kernel. */
  isParam(name: string): boolean;
  /** The value of parameter `param` (its PTX name) at byte `offset` (0: the whole parameter, else a struct field), when the launch gives one. */
  value(param: string, offset: number): number | undefined;
}

/** Limits of one evaluation: definition chains longer than this are not followed. */
const MAX_DEPTH = 48;

/** A source that has no launch value: the evaluation stops with undefined. */
class NotConst extends Error {}

/** What one evaluation reads: values known so far by register (null: none, or being computed). */
interface Walk { facts: Facts; param: LaunchParams; memo: Map<string, number | null> }

/**
 * The value operand `o` of instruction `it` holds whenever `it` runs, as a number, when every
 * definition that can reach it computes one value from immediates and launch parameters
 * (`param`); undefined otherwise (a thread index, a loaded value, a guarded or conflicting
 * definition, a form not listed above, arithmetic the machine would refuse: an {@link EvalFault}).
 * Each definition's value is its PTX ISA semantics (§9.7.1, §9.7.4, §9.7.9) as alu.ts `aluExpr` states them.
 */
export function launchConst(facts: Facts, it: FlatIns, o: Operand | undefined, param: LaunchParams): number | undefined {
  return operandValue({ facts, param, memo: new Map() }, it, o, 0);
}

/** The operand's value, or undefined. */
function operandValue(w: Walk, it: FlatIns, o: Operand | undefined, depth: number): number | undefined {
  if (!o) return undefined;
  if (o.kind === 'int') return exact(o.value);
  if (o.kind !== 'name' || depth > MAX_DEPTH) return undefined;
  const reg = it.name(o.name);
  if (w.memo.has(reg)) return w.memo.get(reg) ?? undefined;
  w.memo.set(reg, null); // a definition that depends on itself (a loop) has no launch value
  const defs = defsOf(w.facts, reg);
  let out: number | undefined;
  for (const d of defs) {
    const v = d.ins.guard ? undefined : defValue(w, d, reg, depth + 1);
    if (v === undefined || (out !== undefined && out !== v)) {
      out = undefined;
      break;
    }
    out = v;
  }
  if (!defs.length) out = undefined;
  w.memo.set(reg, out ?? null);
  return out;
}

const exact = (v: bigint): number | undefined => (Number.isSafeInteger(Number(v)) ? Number(v) : undefined);

/**
 * The value definition `d` gives its destination `reg`: an `ld.param` the parameter's value (what
 * the translation's parameter variable holds), an ALU form listed above the value of alu.ts's
 * expression for it.
 */
function defValue(w: Walk, d: FlatIns, reg: string, depth: number): number | undefined {
  const ins = d.ins;
  if (destsOf(d).length !== 1 || destsOf(d)[0] !== reg || !ins.mods.some((m) => /^[usb](8|16|32|64)$/.test(m))) return undefined;
  if (ins.base === 'ld') return ins.mods.includes('param') ? paramLoad(w, d, ins.operands[1]) : undefined;
  if (!followed(ins.base, ins.mods, ins.operands.length - 1)) return undefined;
  // alu.ts's expression over the sources, each source a variable of its register (or its immediate).
  const vars = new Map<string, number>();
  const read = (at: FlatIns, o: Operand): Expr => {
    if (o.kind === 'int') return num(exact(o.value) ?? notConst());
    if (o.kind !== 'name') return notConst();
    const r = at.name(o.name);
    const v = operandValue(w, at, o, depth) ?? notConst();
    vars.set(r, v);
    return { k: 'var', name: r };
  };
  try {
    return evalExpr(aluExpr(d, read)('lead'), (n) => vars.get(n));
  } catch (err) {
    if (err instanceof NotConst || err instanceof EvalFault || err instanceof NotModelled) return undefined;
    throw err;
  }
}

const notConst = (): never => {
  throw new NotConst();
};

/**
 * The forms followed (module comment): `cvt` between integer types without saturation or
 * rounding, `add` / `sub` without `.sat` / `.cc`, `mul.lo` / `.wide` / `.hi`, `mad.lo` without `.cc`,
 * the one-source `mov`, `neg`, `abs`, `not`, and the other listed operations.
 */
function followed(op: string, mods: readonly string[], sources: number): boolean {
  switch (op) {
    case 'cvt': return !mods.some((m) => m.startsWith('r') || m === 'sat') && mods.filter((m) => /^[usb](8|16|32|64)$/.test(m)).length === 2;
    case 'add': case 'sub': return !mods.includes('sat') && !mods.includes('cc');
    case 'mul': return mods.includes('lo') || mods.includes('wide') || mods.includes('hi');
    case 'mad': return mods.includes('lo') && !mods.includes('cc');
    case 'mov': case 'neg': case 'abs': case 'not': return sources === 1;
    case 'div': case 'rem': case 'min': case 'max': case 'and': case 'or': case 'xor': case 'shl': case 'shr': return true;
    default: return false;
  }
}

/** An `ld.param` of a whole scalar parameter or a struct field the launch gives (`--param`). */
function paramLoad(w: Walk, d: FlatIns, a: Operand | undefined): number | undefined {
  if (a?.kind !== 'address' || !a.base || a.rest?.length) return undefined;
  const at = paramAddress(w.facts, d, a.base, Number(a.offset), (n) => w.param.isParam(n));
  return at ? w.param.value(at.param, at.offset) : undefined;
}
