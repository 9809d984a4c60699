/**
 * Values known once the launch is: a register whose every definition computes, from immediates and
 * the launch's integer parameters (`ld.param` of a scalar parameter or a struct field given with
 * `--param`), one integer. DeepGEMM sizes a region of its dynamic shared memory from `shape_k`, so
 * its mbarriers sit at a byte offset computed at run time from a parameter; with the launch's
 * values that offset is a number before the kernel runs (mixed.ts).
 *
 * Arithmetic follows PTX ISA §9.7.1 (integer arithmetic: `add`, `sub`, `mul.lo` / `.wide` / `.hi`,
 * `mad.lo`, `div`, `rem`, `min`, `max`, `neg`, `abs`), §9.7.4 (`and`, `or`, `xor`, `not`, `shl`,
 * `shr`: arithmetic for signed types, logical otherwise; shift amounts past the width clamp) and
 * §9.7.9.21 (`cvt` between integer types: truncation, zero or sign extension). Values are the bits
 * of the instruction's type, as a register holds them; a signed type reads them in two's complement.
 */
import type { Operand } from '../ptx/ast.js';
import { destsOf, type Facts } from './analysis.js';
import { defsOf, paramAddress } from './defs.js';
import type { FlatIns } from './flat.js';

/** The launch's integer parameters. */
export interface LaunchParams {
  /** Whether `name` is a parameter symbol of the kernel. */
  isParam(name: string): boolean;
  /** The value of parameter `param` (its PTX name) at byte `offset` (0: the whole parameter, else a struct field), when the launch gives one. */
  value(param: string, offset: number): number | undefined;
}

/** The integer type a modifier names (`u32`, `s64`, `b16`), or undefined. */
function intType(m: string): { signed: boolean; bits: number } | undefined {
  const t = /^([usb])(8|16|32|64)$/.exec(m);
  return t ? { signed: t[1] === 's', bits: Number(t[2]) } : undefined;
}

/** The instruction's types in modifier order (`cvt.u64.u32`: destination, then source). */
function typesOf(mods: readonly string[]): Array<{ signed: boolean; bits: number }> {
  return mods.flatMap((m) => intType(m) ?? []);
}

const mask = (bits: number) => (1n << BigInt(bits)) - 1n;
/** `v` as the `bits`-bit register holds it (bits, unsigned). */
const wrap = (v: bigint, bits: number) => v & mask(bits);
/** The register bits `v` read as a `bits`-bit value of the given signedness. */
const read = (v: bigint, bits: number, signed: boolean) => {
  const u = wrap(v, bits);
  return signed && u >> BigInt(bits - 1) ? u - (1n << BigInt(bits)) : u;
};

/** Limits of one evaluation: definition chains longer than this are not followed. */
const MAX_DEPTH = 48;

/**
 * The value operand `o` of instruction `it` holds whenever `it` runs, as a number, when every
 * definition that can reach it computes one value from immediates and launch parameters
 * (`param`); undefined otherwise (a thread index, a loaded value, a guarded or conflicting
 * definition, a form not listed above). A value outside ±(2^53 − 1) is undefined.
 */
export function launchConst(facts: Facts, it: FlatIns, o: Operand | undefined, param: LaunchParams): number | undefined {
  const v = operandValue(facts, it, o, param, new Map(), 0);
  if (v === undefined) return undefined;
  const n = Number(v);
  return Number.isSafeInteger(n) ? n : undefined;
}

/** The operand's value as bits of at most 64 (an immediate exactly as written), or undefined. */
function operandValue(facts: Facts, it: FlatIns, o: Operand | undefined, param: LaunchParams, memo: Map<string, bigint | null>, depth: number): bigint | undefined {
  if (!o) return undefined;
  if (o.kind === 'int') return o.value;
  if (o.kind !== 'name' || depth > MAX_DEPTH) return undefined;
  const reg = it.name(o.name);
  if (memo.has(reg)) return memo.get(reg) ?? undefined;
  memo.set(reg, null); // a definition that depends on itself (a loop) has no launch value
  const defs = defsOf(facts, reg);
  let out: bigint | undefined;
  for (const d of defs) {
    const v = d.ins.guard ? undefined : defValue(facts, d, reg, param, memo, depth + 1);
    if (v === undefined || (out !== undefined && out !== v)) {
      out = undefined;
      break;
    }
    out = v;
  }
  if (!defs.length) out = undefined;
  memo.set(reg, out ?? null);
  return out;
}

/** The value definition `d` gives its destination `reg`. */
function defValue(facts: Facts, d: FlatIns, reg: string, param: LaunchParams, memo: Map<string, bigint | null>, depth: number): bigint | undefined {
  const ins = d.ins;
  if (destsOf(d).length !== 1 || destsOf(d)[0] !== reg) return undefined;
  const types = typesOf(ins.mods);
  const t = types[0];
  if (!t) return undefined;
  const srcs = ins.operands.slice(1);
  const val = (i: number) => operandValue(facts, d, srcs[i], param, memo, depth);
  if (ins.base === 'ld') return ins.mods.includes('param') ? paramLoad(facts, d, srcs[0], t, param) : undefined;
  if (ins.base === 'cvt') {
    const from = types[1];
    const a = val(0);
    if (!from || a === undefined || ins.mods.some((m) => m.startsWith('r') || m === 'sat')) return undefined;
    return wrap(read(a, from.bits, from.signed), t.bits);
  }
  const args: bigint[] = [];
  for (let i = 0; i < srcs.length; i++) {
    const a = val(i);
    if (a === undefined) return undefined;
    args.push(a);
  }
  const wide = ins.mods.includes('wide');
  const r = alu(ins.base, ins.mods, args.map((a) => read(a, t.bits, t.signed)), t, wide);
  return r === undefined ? undefined : wrap(r, wide ? 2 * t.bits : t.bits);
}

/** An `ld.param` of a whole scalar parameter or a struct field the launch gives (`--param`). */
function paramLoad(facts: Facts, d: FlatIns, a: Operand | undefined, t: { signed: boolean; bits: number }, param: LaunchParams): bigint | undefined {
  if (a?.kind !== 'address' || !a.base || a.rest?.length) return undefined;
  const at = paramAddress(facts, d, a.base, Number(a.offset), (n) => param.isParam(n));
  const v = at ? param.value(at.param, at.offset) : undefined;
  return v === undefined ? undefined : wrap(BigInt(v), t.bits);
}

/** One ALU operation on operands read with the instruction's type; undefined for a form not computed. */
function alu(op: string, mods: readonly string[], a: bigint[], t: { signed: boolean; bits: number }, wide: boolean): bigint | undefined {
  const [x, y, z] = a;
  const shift = (n: bigint | undefined) => (n === undefined ? undefined : n < 0n || n > BigInt(t.bits) ? BigInt(t.bits) : n);
  switch (op) {
    case 'mov': return a.length === 1 ? x : undefined;
    case 'add': return x !== undefined && y !== undefined && !mods.includes('sat') && !mods.includes('cc') ? x + y : undefined;
    case 'sub': return x !== undefined && y !== undefined && !mods.includes('sat') && !mods.includes('cc') ? x - y : undefined;
    case 'mul':
      if (x === undefined || y === undefined) return undefined;
      if (mods.includes('hi')) return (x * y) >> BigInt(t.bits);
      return mods.includes('lo') || wide ? x * y : undefined;
    case 'mad':
      return x !== undefined && y !== undefined && z !== undefined && mods.includes('lo') && !mods.includes('cc') ? x * y + z : undefined;
    case 'div': return x !== undefined && y ? x / y : undefined; // BigInt division truncates toward zero, as PTX's
    case 'rem': return x !== undefined && y ? x % y : undefined;
    case 'min': return x !== undefined && y !== undefined ? (x < y ? x : y) : undefined;
    case 'max': return x !== undefined && y !== undefined ? (x > y ? x : y) : undefined;
    case 'neg': return x !== undefined && a.length === 1 ? -x : undefined;
    case 'abs': return x !== undefined && a.length === 1 ? (x < 0n ? -x : x) : undefined;
    case 'and': return x !== undefined && y !== undefined ? x & y : undefined;
    case 'or': return x !== undefined && y !== undefined ? x | y : undefined;
    case 'xor': return x !== undefined && y !== undefined ? x ^ y : undefined;
    case 'not': return x !== undefined && a.length === 1 ? ~x : undefined;
    case 'shl': { const s = shift(y); return x !== undefined && s !== undefined ? x << s : undefined; }
    case 'shr': {
      const s = shift(y);
      if (x === undefined || s === undefined) return undefined;
      return x >> s; // x was read signed for .s types (arithmetic shift), unsigned otherwise (logical)
    }
    default: return undefined;
  }
}
