/**
 * The value domain of warp-relative symmetry (warp-relative.ts, docs/CHECK.md "Warp-relative
 * symmetry"): value sets (a slot's possible values, at most {@link MAX_SET} of them, or any value)
 * with the machine's arithmetic, and symbolic values (expressions over a segment's free values)
 * with their *forms*, the text two warps' signatures compare: a known value, a table over the free
 * values' sets (at most {@link MAX_TABLE} rows), or the expression's text.
 */
import { applyBin, EvalFault, unary } from '../kernel/arith.js';
import { foldExpr } from '../kernel/expr.js';
import type { Expr } from '../kernel/ir.js';

/** Most values a slot's value set holds before it becomes ⊤. */
export const MAX_SET = 16;
/** Most rows of a form's table (combinations of its free values). */
export const MAX_TABLE = 256;
/** Most nodes of one symbolic value: beyond, the role is not analysed. */
export const MAX_NODES = 1 << 16;

// ---------------------------------------------------------------------------------------------
// Value sets

/** A slot's possible values: sorted, distinct, 1 to {@link MAX_SET} of them; null: any value. */
export type VSet = number[] | null;

/** One operator applied with the machine's arithmetic (`arith.ts`, as the compiled closures); null where it faults. */
function apply1(op: '-' | '!' | '~', a: number): number | null {
  try {
    return op === '-' ? (a === 0 ? 0 : -a) : unary(op, a);
  } catch (err) {
    if (err instanceof EvalFault) return null;
    throw err;
  }
}
function apply2(op: Extract<Expr, { k: 'bin' }>['op'], a: number, b: number): number | null {
  try {
    return applyBin(op, a, b);
  } catch (err) {
    if (err instanceof EvalFault) return null;
    throw err;
  }
}

const BOOL: number[] = [0, 1];
const CMP = new Set(['==', '!=', '<', '<=', '>', '>=']);

export function toSet(xs: Iterable<number>): VSet {
  const s = [...new Set(xs)].sort((a, b) => a - b);
  return s.length > MAX_SET ? null : s;
}

/** The values `x & c` can take for any x: the submasks of c ≥ 0 (null when there are too many). */
function submasks(c: number): VSet {
  if (!Number.isSafeInteger(c) || c < 0 || c > 0x7fffffff) return null;
  const bits: number[] = [];
  for (let b = 0; b < 31; b++) if ((c >>> b) & 1) bits.push(1 << b);
  if (2 ** bits.length > MAX_SET) return null;
  const out: number[] = [];
  for (let m = 0; m < 2 ** bits.length; m++) out.push(bits.reduce((acc, bit, i) => ((m >> i) & 1 ? acc | bit : acc), 0));
  return toSet(out);
}

/** The value set of `e` where slot s holds `vals[s]` (a sound over-approximation; a combination that faults stops the agent and is left out). */
export function evalSet(e: Expr, vals: readonly VSet[], slotOf: ReadonlyMap<string, number>, params: Readonly<Record<string, number>>): VSet {
  return foldExpr<VSet>(e, (x) => {
    if (x.k === 'num') return [x.v];
    const s = slotOf.get(x.name);
    if (s === undefined) return Object.hasOwn(params, x.name) ? [params[x.name]!] : null;
    return vals[s]!;
  }, (x, a, b) => {
    if (x.k === 'un') {
      if (!a) return x.op === '!' ? BOOL : null;
      const out: number[] = [];
      for (const y of a) { const r = apply1(x.op, y); if (r !== null) out.push(r); }
      return toSet(out);
    }
    const op = x.op;
    if (op === '&&' || op === '||') {
      if (a && a.every((y) => y === 0)) return op === '&&' ? [0] : b && b.every((y) => y !== 0) ? [1] : b && b.every((y) => y === 0) ? [0] : BOOL;
      if (a && a.every((y) => y !== 0)) return op === '||' ? [1] : b && b.every((y) => y !== 0) ? [1] : b && b.every((y) => y === 0) ? [0] : BOOL;
      return BOOL;
    }
    if (!a || !b) {
      if (CMP.has(op)) return BOOL;
      if (op === '&') {
        const c = a && a.length === 1 ? a[0]! : b && b.length === 1 ? b[0]! : undefined;
        return c === undefined ? null : submasks(c);
      }
      return null;
    }
    if (a.length * b.length > MAX_SET * MAX_SET) return CMP.has(op) ? BOOL : null;
    const out: number[] = [];
    for (const y of a) for (const z of b!) { const r = apply2(op, y, z); if (r !== null) out.push(r); }
    return toSet(out);
  });
}

/** The edges a `jz` on a condition with these values can take: bit 0 fall through (non-zero), bit 1 jump (zero). */
export function decide(v: VSet): number {
  if (!v) return 3;
  return (v.some((x) => x !== 0) ? 1 : 0) | (v.includes(0) ? 2 : 0);
}

// ---------------------------------------------------------------------------------------------
// Symbolic values and their forms

/** The role was found too large to analyse while walking it. */
export class GiveUp extends Error {}

/** A symbolic value: a known integer, or an expression over free values (`$j`), dead slots (`†j`), unknown names (`?n`) and faults (`!F…`). */
export type Sym = number | Expr;

const sizes = new WeakMap<object, number>();
const size = (e: Sym): number => (typeof e === 'number' || e.k === 'num' || e.k === 'var' ? 1 : sizes.get(e) ?? 1);
const node = (e: Expr & { k: 'bin' | 'un' }): Expr => {
  const n = 1 + size(e.a) + (e.k === 'bin' ? size(e.b) : 0);
  if (n > MAX_NODES) throw new GiveUp('a symbolic value too large');
  sizes.set(e, n);
  return e;
};
const asExpr = (v: Sym): Expr => (typeof v === 'number' ? { k: 'num', v } : v);

/** `e` with the slots' symbolic values substituted and closed subterms computed (a fault: a residual of its own); `&&` / `||` short-circuit as compiled. */
export function substitute(e: Expr, sym: readonly Sym[], slotOf: ReadonlyMap<string, number>, params: Readonly<Record<string, number>>): Sym {
  return foldExpr<Sym>(e, (x) => {
    if (x.k === 'num') return x.v;
    const s = slotOf.get(x.name);
    if (s === undefined) return Object.hasOwn(params, x.name) ? params[x.name]! : { k: 'var', name: `?${x.name}` };
    return sym[s]!;
  }, (x, a, b) => {
    if (x.k === 'un') {
      if (typeof a === 'number') { const r = apply1(x.op, a); return r ?? { k: 'var', name: `!F(${x.op} ${a})` }; }
      return node({ k: 'un', op: x.op, a: a });
    }
    if ((x.op === '&&' || x.op === '||') && typeof a === 'number') {
      if ((x.op === '&&') === (a === 0)) return x.op === '&&' ? 0 : 1;
      return typeof b === 'number' ? (b ? 1 : 0) : node({ k: 'bin', op: x.op, a: asExpr(a ? 1 : 0), b: b! });
    }
    if (typeof a === 'number' && typeof b === 'number') { const r = apply2(x.op, a, b); return r ?? { k: 'var', name: `!F(${x.op} ${a} ${b})` }; }
    return node({ k: 'bin', op: x.op, a: asExpr(a), b: asExpr(b!) });
  });
}

/** The names an expression reads, sorted. */
function names(e: Expr): string[] {
  const out = new Set<string>();
  foldExpr<0>(e, (x) => { if (x.k === 'var') out.add(x.name); return 0; }, () => 0);
  return [...out].sort();
}

function text(e: Expr): string {
  return foldExpr<string>(e, (x) => (x.k === 'num' ? String(x.v) : x.name), (x, a, b) => (x.k === 'un' ? `(${x.op} ${a})` : `(${x.op} ${a} ${b})`));
}

/** The value of `e` with free values `at`, or 'F' where the machine's evaluation faults (short-circuits as compiled). */
function evalAt(e: Expr, at: ReadonlyMap<string, number>): number | 'F' {
  return foldExpr<number | 'F'>(e, (x) => (x.k === 'num' ? x.v : at.get(x.name)!), (x, a, b) => {
    if (a === 'F') return 'F';
    if (x.k === 'un') return apply1(x.op, a) ?? 'F';
    if (x.op === '&&') return a === 0 ? 0 : b === 'F' ? 'F' : b ? 1 : 0;
    if (x.op === '||') return a !== 0 ? 1 : b === 'F' ? 'F' : b ? 1 : 0;
    if (b === 'F') return 'F';
    return apply2(x.op, a, b!) ?? 'F';
  });
}

/** The values of a form: a known value (`head` empty, one value), or a table over the free values' sets (`head` names them and their sets). */
export interface FormTable {
  head: string;
  /** One value per row ('F': the machine's evaluation faults). */
  vals: (number | 'F')[];
}

/** The table of symbolic value `v` over its free values' sets (`sets`), or null when it has more than {@link MAX_TABLE} rows or reads an unknown name. */
export function formTable(v: Sym, sets: ReadonlyMap<string, VSet>): FormTable | null {
  if (typeof v === 'number') return { head: '', vals: [v] };
  const ns = names(v);
  if (ns.some((n) => n.startsWith('†'))) throw new GiveUp('a dead slot is read');
  let rows = 1;
  const domain: [string, number[]][] = [];
  for (const n of ns) {
    const s = n.startsWith('$') ? sets.get(n) : null;
    if (!s) return null;
    domain.push([n, s]);
    rows *= s.length;
  }
  if (rows > MAX_TABLE) return null;
  const at = new Map<string, number>();
  const vals: (number | 'F')[] = [];
  const idx = new Array<number>(domain.length).fill(0);
  for (let r = 0; r < rows; r++) {
    domain.forEach(([n, s], i) => at.set(n, s[idx[i]!]!));
    vals.push(evalAt(v, at));
    for (let i = domain.length - 1; i >= 0; i--) { if (++idx[i]! < domain[i]![1].length) break; idx[i] = 0; }
  }
  return { head: domain.map(([n, s]) => `${n}:${s.join('.')}`).join(';'), vals };
}

/**
 * The form of symbolic value `v` (see the module comment): `#n` when known, a table over its free
 * values' sets (`sets`), else its text. `values` false: a table tells only which rows fault.
 */
export function form(v: Sym, sets: ReadonlyMap<string, VSet>, values = true): string {
  if (typeof v === 'number') return values ? `#${v}` : 'K';
  const t = formTable(v, sets);
  if (!t) return text(v);
  if (!values && !t.vals.includes('F')) return `t`;
  return `T[${t.head}]=${t.vals.map((x) => (values ? String(x) : x === 'F' ? 'F' : '.')).join(',')}`;
}
