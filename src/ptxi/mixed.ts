/**
 * Shared-memory arrays that hold mbarriers and data (CUTLASS's `SharedStorage` in the dynamic
 * `extern .shared` array: stage tiles, then the pipeline's full / empty barriers at constant byte
 * offsets). The byte offsets that mbarrier operations name with a constant offset from the array's
 * base (registers derived from the symbol by `mov`, `cvta`, `cvt`, `add` / `sub` of a constant,
 * `mapa`) are its mbarriers: one IR barrier array over the span from the first to the last of
 * them (`smem+32768[k]`: the mbarrier at byte 32768 + 8k); the rest of the array stays a buffer
 * cut as any other (layout.ts). At run time an mbarrier address outside that span (or not 8-byte
 * aligned) is a `not-modelled` trap at its line, and a data access whose bytes overlap an mbarrier
 * is reported there too (a TMA box written over the barriers): the front end never maps one byte
 * onto both a barrier and a buffer element.
 */
import type { BarRef, BufRef, Expr, Op, Stmt } from '../kernel/ir.js';
import type { Operand } from '../ptx/ast.js';
import type { Facts } from './analysis.js';
import { defsOf, staticInt } from './defs.js';
import { bin, num, NotModelled } from './emit.js';
import type { FlatIns } from './flat.js';

/** The mbarriers of a mixed array: byte offsets from its base. */
export interface MixedBars {
  /** IR name of the barrier array (`smem+32768`). */
  ir: string;
  /** Byte offset of barrier 0; barrier k is at `start + 8k`. */
  start: number;
  count: number;
  /** Runs of consecutive mbarriers `[from, to)` (bytes): what a data access must not overlap. */
  runs: Array<[number, number]>;
}

/** The mbarriers of a mixed array whose mbarrier operations name the byte offsets `offsets`; undefined when none. */
export function mixedBars(ir: string, offsets: Iterable<number>): MixedBars | undefined {
  const slots = [...new Set([...offsets].filter((o) => o % 8 === 0 && o >= 0))].sort((a, b) => a - b);
  if (!slots.length) return undefined;
  const runs: Array<[number, number]> = [];
  for (const s of slots) {
    const last = runs[runs.length - 1];
    if (last && last[1] === s) last[1] = s + 8;
    else runs.push([s, s + 8]);
  }
  const start = slots[0]!;
  return { ir: `${ir}+${start}`, start, count: (slots[slots.length - 1]! - start) / 8 + 1, runs };
}

/** The value of an integer operand before the kernel runs, or undefined (defs.ts `staticInt`, launch-const.ts `launchConst`). */
export type ConstOf = (it: FlatIns, o: Operand | undefined) => number | undefined;

/**
 * The `.shared` symbol and constant byte offset an address operand names, when every definition of
 * its register leads back to one symbol through `mov`, `cvta`, `cvt`, `mapa` (the CTA-local offset)
 * and `add` / `sub` of a constant; undefined otherwise (an offset computed at run time). `constOf`
 * says which operands are constants: by default immediates and registers moved from one; with the
 * launch's parameters (launch-const.ts), values computed from them too (DeepGEMM's mbarriers after
 * a region sized by `shape_k`).
 */
export function staticOffset(facts: Facts, it: FlatIns, o: Operand, isShared: (n: string) => boolean, constOf: ConstOf = (at, x) => staticInt(facts, at, x)): { sym: string; offset: number } | undefined {
  if (o.kind !== 'address' || !o.base || o.rest?.length) return undefined;
  const off = Number(o.offset);
  if (isShared(o.base)) return { sym: o.base, offset: off };
  const r = regOffset({ facts, isShared, constOf }, it, o.base, new Set(), 0);
  return r && { sym: r.sym, offset: r.offset + off };
}

/** What the walk of {@link staticOffset} reads. */
interface OffsetCtx { facts: Facts; isShared: (n: string) => boolean; constOf: ConstOf }

function regOffset(c: OffsetCtx, it: FlatIns, name: string, seen: Set<string>, depth: number): { sym: string; offset: number } | undefined {
  const { facts, isShared } = c;
  if (isShared(name)) return { sym: name, offset: 0 };
  const reg = it.name(name);
  if (depth > 24 || seen.has(reg)) return undefined;
  seen.add(reg);
  const defs = defsOf(facts, reg);
  if (!defs.length) return undefined;
  let out: { sym: string; offset: number } | undefined;
  for (const d of defs) {
    const r = defOffset(c, d, seen, depth);
    if (!r || (out && (out.sym !== r.sym || out.offset !== r.offset))) return undefined;
    out = r;
  }
  seen.delete(reg);
  return out;
}

/** The symbol and offset one definition computes (see {@link staticOffset}). */
function defOffset(c: OffsetCtx, d: FlatIns, seen: Set<string>, depth: number): { sym: string; offset: number } | undefined {
  const ins = d.ins;
  if (ins.guard) return undefined;
  const [a, b] = ins.operands.slice(1);
  const from = (o: Operand | undefined) => (o?.kind === 'name' ? regOffset(c, d, o.name, seen, depth + 1) : undefined);
  if (ins.base === 'mov' || ins.base === 'cvta' || ins.base === 'cvt' || ins.base === 'mapa') return from(a);
  if (ins.base !== 'add' && ins.base !== 'sub') return undefined;
  const cb = c.constOf(d, b);
  if (cb !== undefined) {
    const r = from(a);
    return r && { sym: r.sym, offset: r.offset + (ins.base === 'add' ? cb : -cb) };
  }
  const ca = ins.base === 'add' ? c.constOf(d, a) : undefined;
  const r = ca !== undefined ? from(b) : undefined;
  return r && ca !== undefined ? { sym: r.sym, offset: r.offset + ca } : undefined;
}

/** Whether byte offset `off` (an expression) is one of the barrier span's 8-byte slots. */
function inSpan(bars: MixedBars, off: Expr): Expr {
  const end = bars.start + 8 * bars.count;
  return bin('&&', bin('&&', bin('>=', off, num(bars.start)), bin('<', off, num(end))), bin('==', bin('%', bin('-', off, num(bars.start)), num(8)), num(0)));
}

/** Whether bytes `[off, off + bytes)` overlap one of the mbarriers. */
function overlaps(bars: MixedBars, off: Expr, bytes: Expr): Expr {
  return bars.runs.map(([a, b]) => bin('&&', bin('<', off, num(b)), bin('<', num(a), bin('+', off, bytes)))).reduce((x, y) => bin('||', x, y));
}

const span = (bars: MixedBars) => bars.runs.map(([a, b]) => `${a}-${b - 1}`).join(', ');

/** A run-time condition on a barrier or buffer reference of a mixed array, checked where its operation runs. */
interface Check { bad: (op: Op) => Expr; message: string; code?: 'barrier-as-data' }

/**
 * The barrier and buffer references of mixed arrays made for one kernel, with the condition under
 * which each one's operation must not run (an mbarrier address off the known mbarriers, data bytes
 * over an mbarrier); {@link MixedChecks.guard} puts the check around the operations.
 */
export class MixedChecks {
  private readonly checks = new Map<object, Check>();

  /** The barrier of a mixed array at byte offset `off` (an expression) from the array's base, in `cta` when given. */
  bar(bars: MixedBars, array: string, off: Expr, cta: Expr | undefined, what: string): BarRef {
    const index = bin('/', bin('-', off, num(bars.start)), num(8));
    const ref: BarRef = { name: bars.ir, index, ...(cta ? { cta } : {}) };
    if (off.k === 'num') {
      if (!(off.v >= bars.start && off.v < bars.start + 8 * bars.count && (off.v - bars.start) % 8 === 0)) throw new NotModelled(`${what} addresses byte ${off.v} of ${array}, which holds data and mbarriers: no mbarrier operation names that offset as a constant (its mbarriers: bytes ${span(bars)})`);
      return { ...ref, index: num((off.v - bars.start) / 8) };
    }
    this.checks.set(ref, { bad: () => bin('==', inSpan(bars, off), num(0)), message: `${what}: the mbarrier's offset in ${array}, which holds data and mbarriers, is computed at run time and lands off the mbarriers that mbarrier operations name with constant offsets (bytes ${span(bars)}): not modelled yet` });
    return ref;
  }

  /**
   * Records buffer reference `ref` of a mixed array at byte offset `off` from the array's base:
   * `bytes` the access's size when its operation has none of its own (a copy's `bytes`).
   */
  data(ref: BufRef, bars: MixedBars, array: string, off: Expr, bytes: number, what: string): BufRef {
    const size = (op: Op): Expr => ('bytes' in op && op.bytes && (('dst' in op && op.dst === ref) || ('src' in op && op.src === ref)) ? op.bytes : num(bytes));
    this.checks.set(ref, { bad: (op) => overlaps(bars, off, size(op)), message: `${what} accesses bytes of ${array} that overlap its mbarriers (bytes ${span(bars)}): data written over or read from an mbarrier`, code: 'barrier-as-data' });
    return ref;
  }

  /** `stmts` with each operation that uses a checked reference put under its check (a trap where it fails). */
  guard(stmts: Stmt[]): Stmt[] {
    if (!this.checks.size) return stmts;
    return stmts.map((s) => {
      if (s.s === 'if') return { ...s, then: this.guard(s.then), ...(s.else ? { else: this.guard(s.else) } : {}) };
      if (s.s !== 'op') return s;
      const found = refsOf(s.op).flatMap((r) => this.checks.get(r) ?? []);
      if (!found.length) return s;
      return found.reduce<Stmt>((inner, c) => {
        const bad = c.bad(s.op);
        const trap: Stmt = { s: 'op', op: { op: 'trap', message: c.message, ...(c.code ? { code: c.code } : {}) }, loc: s.loc };
        if (bad.k === 'num') return bad.v ? trap : inner;
        return { s: 'if', cond: bad, then: [trap], else: [inner], loc: s.loc };
      }, s);
    });
  }
}

/** The objects among an operation's fields (its barrier and buffer references, also inside arrays). */
function refsOf(op: Op): object[] {
  const out: object[] = [];
  for (const x of Object.values(op)) {
    if (Array.isArray(x)) out.push(...x.filter((y): y is object => typeof y === 'object' && y !== null));
    else if (typeof x === 'object' && x !== null) out.push(x);
  }
  return out;
}
