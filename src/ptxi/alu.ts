/**
 * Integer and predicate ALU instructions of PTX (PTX ISA §9.7.1 integer arithmetic, §9.7.3
 * comparison and selection, §9.7.4 logic and shift, §9.7.5 data movement and conversion) as IR
 * expressions per lane. Values are exact integers, congruent to the register's bits modulo 2^w;
 * where a result depends on more than those bits (`shr`, `div`, `rem`, `min`, `max`, `abs`,
 * `mul.hi` / `.wide`, comparisons, `cvt` widening) an operand of a type of at most 32 bits is read
 * as the type reads its bits (modulo 2^w unsigned, two's complement signed). Shift counts clamp.
 */
import type { Expr, SrcLoc, Stmt } from '../kernel/ir.js';
import type { Operand } from '../ptx/ast.js';
import type { FlatIns } from './flat.js';
import { destsOf, sourcesOf } from './analysis.js';
import { assign, bin, num, NotModelled, regVar, select, value, type Lane, type ValueEnv } from './emit.js';
import { high32, wideHighOf } from './widemul.js';
import { defsOf } from './defs.js';
import { splitOf, splitWord } from './split.js';

/** Operand type of an instruction: its last modifier that names an integer type (`u32`, `s64`, `b32`, `pred`). */
function typeOf(mods: string[]): string {
  for (let i = mods.length - 1; i >= 0; i--) if (/^(u|s|b)(8|16|32|64)$|^pred$/.test(mods[i]!)) return mods[i]!;
  return 'b32';
}

const unsigned = (t: string) => t.startsWith('u') || t.startsWith('b');
const width = (t: string) => (t === 'pred' ? 1 : Number(t.slice(1)));
/** `e` modulo 2^w when `t` is an unsigned type of w ≤ 32 bits. */
function asUnsigned(e: Expr, t: string): Expr {
  return unsigned(t) && width(t) <= 32 ? bin('&', e, num(2 ** width(t) - 1)) : e;
}

/**
 * The low `w` bits of `e` read in two's complement (−2^(w−1) … 2^(w−1) − 1):
 * e − ⌊(e + 2^(w−1)) / 2^w⌋ · 2^w, with the machine's fast operators (no `&` past 32 bits).
 */
function asSigned(e: Expr, w: number): Expr {
  return bin('-', e, bin('*', bin('>>', bin('+', e, num(2 ** (w - 1))), num(w)), num(2 ** w)));
}

/**
 * `e` read as a value of type `t` where a result depends on more than its bits modulo 2^w (PTX ISA
 * §5.2.1 fundamental types): a register's value is exact, congruent to its bits modulo 2^w, so an
 * unsigned type of w ≤ 32 bits reads it modulo 2^w and a signed one in two's complement (an
 * immediate already in range as it is); a 64-bit value as it is.
 */
function asType(e: Expr, t: string): Expr {
  if (unsigned(t) || t === 'pred' || width(t) > 32) return asUnsigned(e, t);
  const w = width(t);
  if (e.k === 'num' && e.v >= -(2 ** (w - 1)) && e.v < 2 ** (w - 1)) return e;
  return asSigned(e, w);
}

/**
 * A shift count (PTX ISA §9.7.4 `shl`, `shr`: a `.u32` operand; "shift amounts greater
 * than the register width N are clamped to N"), clamped to min(N, 63): the largest count the
 * machine's shifts take, which gives the same result as N for every value it represents exactly.
 */
function shiftCount(c: Expr, t: string): Expr {
  const max = Math.min(width(t), 63);
  if (c.k === 'num') return c.v >= 0 && c.v <= max ? c : num(max);
  const n = bin('-', c, bin('*', bin('>>', c, num(32)), num(2 ** 32))); // c modulo 2^32, with fast operators
  return select(bin('>', n, num(max)), num(max), n);
}

const CMP: Record<string, Extract<Expr, { k: 'bin' }>['op']> = { eq: '==', ne: '!=', lt: '<', lo: '<', le: '<=', ls: '<=', gt: '>', hi: '>', ge: '>=', hs: '>=' };
const ALU = new Set(['mov', 'add', 'sub', 'mul', 'mad', 'div', 'rem', 'shl', 'shr', 'and', 'or', 'xor', 'not', 'neg', 'abs', 'min', 'max', 'setp', 'selp', 'cvt', 'cvta']);

/** Whether `it` is an ALU instruction this module translates. */
export function isAlu(it: FlatIns): boolean {
  return ALU.has(it.ins.base);
}

/**
 * The statements of ALU instruction `it` (guard mask `guard` when guarded by a predicate).
 * Throws `Opaque` when a source value is not modelled and the destination is, `NotModelled` for a
 * form outside the slice.
 */
export function aluStmts(env: ValueEnv, it: FlatIns, loc: SrcLoc, divergent: boolean, guard?: Expr): Stmt[] {
  const ins = it.ins;
  const dests = destsOf(it);
  const srcs = sourcesOf(it);
  if (!dests.length || dests.every((d) => env.facts.opaque(d))) return [];
  const t = typeOf(ins.mods);
  if (ins.base === 'mov' && (srcs[0]?.kind === 'vector' || ins.operands[0]?.kind === 'vector')) return packStmts(env, it, dests, t, loc, divergent, guard);
  if (ins.base === 'setp') return setp(env, it, dests, t, (i, l) => operand(it, srcs, i, l, (at, o, lane) => value(env, at, o, lane)), loc, divergent, guard);
  const f = aluExpr(it, (at, o, lane) => value(env, at, o, lane));
  return dests.flatMap((d) => assign(env, d, f, loc, divergent, guard));
}

/** Reads source operand `o` of instruction `at` in `lane` as an IR expression (emit.ts `value` when translating). */
export type OperandReader = (at: FlatIns, o: Operand, lane: Lane) => Expr;

/** Source operand `i` of `it` through `read`; `NotModelled` when the instruction lacks it. */
function operand(it: FlatIns, srcs: Operand[], i: number, lane: Lane, read: OperandReader): Expr {
  const o = srcs[i];
  if (!o) throw new NotModelled(`${it.ins.opcode}: missing operand ${i + 1}`);
  return read(it, o, lane);
}

/**
 * The value per lane that ALU instruction `it` assigns its destination, as an IR expression over
 * the source operands `read` gives: PTX ISA §9.7.1 integer arithmetic (`add`, `sub`, `mul`, `mad`,
 * `div`, `rem`, `abs`, `neg`, `min`, `max`), §9.7.3 `selp`, §9.7.4 logic and shift (`and`, `or`,
 * `xor`, `not`, `shl`, `shr`), §9.7.9 `mov`, `cvt` and `cvta`. The one statement of these rules:
 * the translation assigns it (aluStmts), launch-const.ts evaluates it with a launch's values.
 * `setp` and a vector `mov` have statements of their own; they and any other form throw `NotModelled`.
 */
export function aluExpr(it: FlatIns, read: OperandReader): (lane: Lane) => Expr {
  const ins = it.ins;
  const srcs = sourcesOf(it);
  const t = typeOf(ins.mods);
  const val = (i: number, lane: Lane): Expr => operand(it, srcs, i, lane, read);
  const u = (i: number, lane: Lane) => asType(val(i, lane), t);
  const op = ins.base;
  if (op === 'mov' && (srcs[0]?.kind === 'vector' || ins.operands[0]?.kind === 'vector')) throw new NotModelled(`${ins.opcode} of a vector`);
  switch (op) {
    case 'mov': case 'cvta': return (l) => val(0, l);
    case 'add': return (l) => bin('+', val(0, l), val(1, l));
    case 'sub': return (l) => bin('-', val(0, l), val(1, l));
    case 'mul': case 'mad': {
      // `.lo` keeps the product's low bits (any representative will do); `.hi` and `.wide` read the operands with their type.
      const hi = ins.mods.includes('hi');
      const x = ins.mods.includes('wide') || hi ? u : val;
      const p = hi ? (l: Lane) => mulHi(u(0, l), u(1, l), t) : (l: Lane) => bin('*', x(0, l), x(1, l));
      return op === 'mul' ? p : (l) => bin('+', p(l), val(2, l));
    }
    case 'div': return (l) => bin('/', u(0, l), u(1, l));
    case 'rem': return (l) => bin('%', u(0, l), u(1, l));
    case 'shl': return (l) => bin('<<', val(0, l), shiftCount(val(1, l), t));
    case 'shr': {
      const w = wideHighOf(it);
      // `shr.u64 q, d, s` of `mul.wide.u32 d, a, b` (s ≥ 32): the product's high half, exactly (widemul.ts).
      return w ? (l) => bin('>>', high32(asUnsigned(read(w.mul, w.a, l), 'u32'), asUnsigned(read(w.mul, w.b, l), 'u32')), num(w.extra)) : (l) => bin('>>', u(0, l), shiftCount(val(1, l), t));
    }
    case 'and': return (l) => bin('&', val(0, l), val(1, l));
    case 'or': return (l) => bin('|', val(0, l), val(1, l));
    case 'xor': return (l) => bin('^', val(0, l), val(1, l));
    case 'not': return t === 'pred' ? (l) => bin('==', val(0, l), num(0)) : (l) => ({ k: 'un', op: '~', a: val(0, l) });
    case 'neg': return (l) => ({ k: 'un', op: '-', a: val(0, l) });
    case 'abs': return (l) => select(bin('<', u(0, l), num(0)), { k: 'un', op: '-', a: u(0, l) }, u(0, l));
    case 'min': return (l) => select(bin('<', u(0, l), u(1, l)), u(0, l), u(1, l));
    case 'max': return (l) => select(bin('>', u(0, l), u(1, l)), u(0, l), u(1, l));
    case 'selp': return (l) => select(bin('!=', val(2, l), num(0)), val(0, l), val(1, l));
    case 'cvt': return cvt(ins.mods, val);
    default: throw new NotModelled(ins.opcode);
  }
}

/**
 * `mov.bW d, {a, b, …}` packs its elements into `d`, the first the low bits; `mov.bW {a, b, …}, s`
 * unpacks (PTX ISA §9.7.9.10 mov, "pack / unpack"): `mov.b32 %r, {%rs2, %rs3}` of 16-bit halves,
 * `mov.b64 %rd, {%r1, %r2}` of 32-bit words. Each element is read modulo 2^(W / n); the packed value
 * is exact while it stays within 2^53 (a larger one is an overflow fault where it is computed).
 */
function packStmts(env: ValueEnv, it: FlatIns, dests: string[], t: string, loc: SrcLoc, divergent: boolean, guard?: Expr): Stmt[] {
  const [dst, src] = it.ins.operands;
  const vec = src?.kind === 'vector' ? src : dst?.kind === 'vector' ? dst : undefined;
  const n = vec?.kind === 'vector' ? vec.items.length : 0;
  if (!n || !src || width(t) % n) throw new NotModelled(`${it.ins.opcode}: a vector of ${n} elements`);
  const w = width(t) / n;
  const mask = num(2 ** w - 1);
  if (src.kind === 'vector') {
    const f = (l: Lane): Expr => src.items.map((x, k) => bin('*', bin('&', value(env, it, x, l), mask), num(2 ** (w * k)))).reduce((a, b) => bin('+', a, b));
    return assign(env, dests[0]!, f, loc, divergent, guard);
  }
  const items = dst!.kind === 'vector' ? dst!.items : [];
  // An opaque 64-bit source that is an exact value combined with a constant: its words from the value's (split.ts).
  const sp = src.kind === 'name' && env.facts.opaque(it.name(src.name)) ? splitOf(it, (r) => defsOf(env.facts, r)) : undefined;
  return items.flatMap((x, k) => {
    if (x.kind !== 'name' || env.facts.opaque(it.name(x.name))) return [];
    const word = sp && n === 2 ? (l: Lane) => splitWord(sp, regVar(env, sp.x, l), k as 0 | 1) : (l: Lane) => bin('&', bin('>>', asUnsigned(value(env, it, src, l), t), num(w * k)), mask);
    return assign(env, it.name(x.name), word, loc, divergent, guard);
  });
}

/**
 * The high half of the product (`mul.hi`, `mad.hi` of a 16- or 32-bit type; PTX ISA §9.7.1.3):
 * ⌊a · b / 2^w⌋ of the operands read with the type's signedness. nvcc divides by a constant this
 * way (`x / 3`: `mul.hi.s32 q, x, 1431655766`, a stage index of a 3-stage ring). The 64-bit forms
 * stay opaque (analysis.ts `opaqueDef`): their products leave the exact range. The 32-bit form is
 * computed from 16-bit halves (widemul.ts), so that no partial product passes 2^53.
 */
function mulHi(a: Expr, b: Expr, t: string): Expr {
  return width(t) === 32 ? high32(a, b) : bin('>>', bin('*', a, b), num(width(t)));
}

/** `cvt.D.S a`: narrowing keeps the low bits (signed: sign-extended), widening an unsigned source reads it modulo 2^32. */
function cvt(mods: string[], val: (i: number, l: Lane) => Expr): (l: Lane) => Expr {
  const types = mods.filter((m) => /^(u|s|b)(8|16|32|64)$/.test(m));
  const [d, s] = [types[0] ?? 'b32', types[1] ?? 'b32'];
  return (l) => {
    const a = val(0, l);
    if (width(d) < width(s) || (width(d) === width(s) && width(d) < 64)) {
      const w = width(d);
      const low = bin('&', a, num(2 ** w - 1));
      return d.startsWith('s') ? bin('-', bin('&', bin('+', low, num(2 ** (w - 1))), num(2 ** w - 1)), num(2 ** (w - 1))) : low;
    }
    return asType(a, s);
  };
}

function setp(env: ValueEnv, it: FlatIns, dests: string[], t: string, val: (i: number, l: Lane) => Expr, loc: SrcLoc, divergent: boolean, guard?: Expr): Stmt[] {
  const mods = it.ins.mods;
  const rel = CMP[mods[0] ?? ''];
  if (!rel) throw new NotModelled(`${it.ins.opcode} (comparison ${mods[0]})`);
  const boolOp = mods[1] === 'and' || mods[1] === 'or' || mods[1] === 'xor' ? mods[1] : undefined;
  const cmp = (l: Lane): Expr => {
    const c = bin(rel, asType(val(0, l), t), asType(val(1, l), t));
    if (!boolOp) return c;
    const q = val(2, l);
    return boolOp === 'and' ? bin('&&', c, q) : boolOp === 'or' ? bin('||', c, q) : bin('!=', c, bin('!=', q, num(0)));
  };
  const out = assign(env, dests[0]!, cmp, loc, divergent, guard);
  if (dests[1]) out.push(...assign(env, dests[1], (l) => bin('==', cmp(l), num(0)), loc, divergent, guard));
  return out;
}
