/**
 * The IR building blocks of the PTX translation: operand values per lane, the active mask and its
 * derived variables, per-lane assignments, and the multiplicity rule of an operation executed
 * under the mask (docs/PTX.md "Lanes").
 *
 * Variables of a warp's frame: a uniform register `R` is one variable `R`; a lane-varying one is
 * 32 variables `R@0` … `R@31`; `%mask` holds the active lanes (bit l: lane l), `%lead` the lowest
 * active lane, `%cnt` the number of active lanes.
 */
import type { Expr, Op, Per, SrcLoc, Stmt } from '../kernel/ir.js';
import type { Operand } from '../ptx/ast.js';
import type { Facts } from './analysis.js';
import type { FlatIns } from './flat.js';

export const LANES = 32;
export const FULL = 0xffffffff;
export const num = (v: number): Expr => ({ k: 'num', v });
export const v = (name: string): Expr => ({ k: 'var', name });
export const bin = (op: Extract<Expr, { k: 'bin' }>['op'], a: Expr, b: Expr): Expr => ({ k: 'bin', op, a, b });
const sum = (xs: Expr[]): Expr => xs.reduce((acc, x) => bin('+', acc, x));
/** Bit `l` of `e` (0 or 1). */
export const bit = (e: Expr, l: number): Expr => bin('&', bin('>>', e, num(l)), num(1));
/** `c ? a : b` for c in {0, 1}: b + c·(a − b). */
export const select = (c: Expr, a: Expr, b: Expr): Expr => bin('+', b, bin('*', c, bin('-', a, b)));

/** A value the translation does not compute reached a place that needs it. */
export class Opaque extends Error {
  /** `cause`: where the value comes from ({@link Facts.opaqueCause}), when known. */
  constructor(readonly reg: string, cause?: string) {
    super(`the value of ${reg} is not modelled (${cause ? `it comes from ${cause}` : 'floating point, tensor or global-memory data, a clock, or an integer beyond ±2^53'})`);
  }
}

/** An instruction or form the translation does not model (a trap when executed). */
export class NotModelled extends Error {}

/**
 * A kernel parameter (or a field of a struct parameter) the instruction reads and the launch gives
 * no value (`--param`): a trap when executed, carrying `names` (`param_2`, or `param_0+20` for the
 * field at byte 20), every parameter or field of its kind the kernel reads without one, so that
 * one run names them all.
 */
export class MissingParam extends NotModelled {
  constructor(message: string, readonly names: string[]) {
    super(message);
  }
}

/** `lane`: a lane number, or 'lead' for the value the active lanes share (the lowest active lane's). */
export type Lane = number | 'lead';

/** What operand evaluation needs from the translation. */
export interface ValueEnv {
  facts: Facts;
  /** Address of a symbol (`.shared` array, parameter, global), or undefined. */
  symbol(name: string): number | undefined;
  /** The value of a special register such as `%ntid.x` for `lane`, or undefined when unknown. */
  special(name: string, lane: Lane): Expr | undefined;
  /**
   * Statements to run before the instruction being translated: the lead lane's value of a
   * lane-varying register read where one value is needed, kept in a variable of the register's
   * own name (so an operation's text reads `full[(%r54 - 2048) / 8]`).
   */
  pre: Stmt[];
}

/** The variable of register `reg` in `lane`. */
export function regVar(env: ValueEnv, reg: string, lane: Lane): Expr {
  if (env.facts.opaque(reg)) throw new Opaque(reg, env.facts.opaqueCause?.(reg));
  if (env.facts.kind(reg) === 'U') return v(reg);
  if (lane !== 'lead') return v(`${reg}@${lane}`);
  if (!env.pre.some((s) => s.s === 'let' && s.name === reg)) {
    env.pre.push({ s: 'let', name: reg, value: sum(Array.from({ length: LANES }, (_, l) => bin('*', bin('==', v('%lead'), num(l)), v(`${reg}@${l}`)))), loc: { line: 0, col: 0 } });
  }
  return v(reg);
}

/** The integer value of source operand `o` of `it` in `lane`. */
export function value(env: ValueEnv, it: FlatIns, o: Operand, lane: Lane): Expr {
  switch (o.kind) {
    case 'int': {
      const n = Number(o.value);
      if (!Number.isSafeInteger(n)) throw new Opaque(o.text);
      return num(n);
    }
    case 'name': {
      if (o.name.startsWith('%') && /^%[a-z_]+(\.[xyz])?$/.test(o.name) && it.name(o.name) === o.name && env.special(o.name, lane) !== undefined) return env.special(o.name, lane)!;
      const s = env.symbol(o.name);
      if (s !== undefined) return num(s);
      return regVar(env, it.name(o.name), lane);
    }
    case 'expr': return num(constExpr(env, o.expr));
    case 'float': throw new Opaque(o.text);
    default: throw new NotModelled(`operand form ${o.kind}`);
  }
}

function constExpr(env: ValueEnv, e: Extract<Operand, { kind: 'expr' }>['expr']): number {
  switch (e.kind) {
    case 'int': return Number(e.value);
    case 'sym': { const s = env.symbol(e.name); if (s === undefined) throw new NotModelled(`symbol ${e.name}`); return s; }
    case 'unary': { const a = constExpr(env, e.arg); return e.op === '-' ? -a : e.op === '~' ? ~a : a ? 0 : 1; }
    case 'binary': {
      const a = constExpr(env, e.left); const b = constExpr(env, e.right);
      if (e.op === '+') return a + b; if (e.op === '-') return a - b; if (e.op === '*') return a * b;
      throw new NotModelled(`constant expression operator ${e.op}`);
    }
    default: throw new NotModelled(`constant expression ${e.kind}`);
  }
}

/** The address an `[base+off]` operand names in `lane` (a register's value plus the offset, or a symbol's). */
export function address(env: ValueEnv, it: FlatIns, o: Operand, lane: Lane): Expr {
  if (o.kind !== 'address') throw new NotModelled(`expected an address operand, got ${o.kind}`);
  const off = Number(o.offset);
  if (!o.base) return num(off);
  const s = env.symbol(o.base);
  const b = s !== undefined ? num(s) : regVar(env, it.name(o.base), lane);
  return off ? bin('+', b, num(off)) : b;
}

/** Statements that set the active mask to `e` and its derived `%lead` and `%cnt`. */
export function setMask(e: Expr, loc: SrcLoc): Stmt[] {
  const m = v('%mask');
  const lead = sum(Array.from({ length: LANES }, (_, l) => bin('*', num(l), bin('*', bit(m, l), bin('==', bin('&', m, num(2 ** l - 1)), num(0))))));
  const cnt = sum(Array.from({ length: LANES }, (_, l) => bit(m, l)));
  return [{ s: 'let', name: '%mask', value: e, loc }, { s: 'let', name: '%lead', value: lead, loc }, { s: 'let', name: '%cnt', value: cnt, loc }];
}

/** The lanes of `pred` as a mask (bit l set where lane l's predicate is true; `neg`: where false). */
export function predMask(env: ValueEnv, pred: string, neg: boolean): Expr {
  if (env.facts.opaque(pred)) throw new Opaque(pred, env.facts.opaqueCause?.(pred));
  if (env.facts.kind(pred) === 'U') {
    const p = v(pred);
    return bin('*', neg ? bin('==', p, num(0)) : bin('!=', p, num(0)), num(FULL));
  }
  const bits = Array.from({ length: LANES }, (_, l) => {
    const p = v(`${pred}@${l}`);
    return bin('*', neg ? bin('==', p, num(0)) : bin('!=', p, num(0)), num(2 ** l));
  });
  return sum(bits);
}

/**
 * Assigns `dest` from `f(lane)`: a uniform register once (the lead lane's value), a lane-varying
 * one in every lane — in every lane at once outside divergent code, else only in the active lanes
 * (and only where `guard`, a mask expression, has the lane's bit).
 */
export function assign(env: ValueEnv, dest: string, f: (lane: Lane) => Expr, loc: SrcLoc, divergent: boolean, guard?: Expr): Stmt[] {
  if (env.facts.opaque(dest)) return [];
  if (env.facts.kind(dest) === 'U') {
    const st: Stmt = { s: 'let', name: dest, value: f('lead'), loc };
    return guard ? [{ s: 'if', cond: bin('!=', bin('&', guard, v('%mask')), num(0)), then: [st], loc }] : [st];
  }
  const out: Stmt[] = [];
  const m = guard ? bin('&', v('%mask'), guard) : v('%mask');
  for (let l = 0; l < LANES; l++) {
    const st: Stmt = { s: 'let', name: `${dest}@${l}`, value: f(l), loc };
    out.push(divergent || guard ? { s: 'if', cond: bit(m, l), then: [st], loc } : st);
  }
  return out;
}

/**
 * An operation whose multiplicity is its active lanes (arrives, expect_tx, copies). Outside
 * divergent code all 32 lanes run it: `per: 'thread'`. In divergent code (or under a lane-varying
 * guard), when the operation has a form for n lanes (`scaled`: an arrive whose operands all lanes
 * share, one instruction whose count is the sum over its lanes, as the machine counts a warp's
 * per-thread arrive), that form with n = `%lanes`, the active lanes (none: no operation).
 * Otherwise exactly one active lane → `per: 'warp'` (one thread of this one-warp agent), none →
 * no operation, any other count → the `not-modelled` trap naming the instruction (never a wrong
 * count). One IR operation per instruction: no alternative that never runs for the static checks
 * to see.
 */
export function counted(mk: (per: Per) => Op, what: string, loc: SrcLoc, divergent: boolean, guard?: Expr, scaled?: (n: Expr) => Op): Stmt[] {
  const op = (per: Per): Stmt => ({ s: 'op', op: mk(per), loc });
  if (!divergent && !guard) return [op('thread')];
  const m = guard ? bin('&', v('%mask'), guard) : v('%mask');
  const cnt = guard ? sum(Array.from({ length: LANES }, (_, l) => bit(m, l))) : v('%cnt');
  // `%lanes` is back to 0 once the operation ran, so that it never tells two states apart.
  if (scaled) return [{ s: 'let', name: '%lanes', value: cnt, loc }, { s: 'if', cond: bin('!=', v('%lanes'), num(0)), then: [{ s: 'op', op: scaled(v('%lanes')), loc }], loc }, { s: 'let', name: '%lanes', value: num(0), loc }];
  const trap: Stmt = { s: 'op', op: { op: 'trap', message: `${what} executed by several lanes of a warp in divergent code: not modelled yet (mbsim models it for all 32 lanes of uniform code, for exactly one lane, and an arrive or expect_tx by 2 to 31 lanes whose operands do not differ between them)` }, loc };
  return [{ s: 'if', cond: bin('==', cnt, num(1)), then: [op('warp')], else: [{ s: 'if', cond: bin('!=', cnt, num(0)), then: [trap], loc }], loc }];
}

/** An operation executed once by the warp when any lane is active (fences, waits, wgmma, bar.sync). */
export function once(op: Op, loc: SrcLoc, divergent: boolean, guard?: Expr): Stmt[] {
  const st: Stmt = { s: 'op', op, loc };
  if (!divergent && !guard) return [st];
  const m = guard ? bin('&', v('%mask'), guard) : v('%mask');
  return [{ s: 'if', cond: bin('!=', m, num(0)), then: [st], loc }];
}
