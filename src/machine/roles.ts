/**
 * What a role's code says about how it runs: how many threads perform an operation of a given
 * multiplicity, whether a role runs as one agent per warp, whether its code reads `warp`, and
 * which agents are warps of one instance (each accessing its own slice of a buffer).
 */
import { exprNames } from '../kernel/expr.js';
import type { Expr, Op, Per, RoleDecl, SrcLoc, Stmt } from '../kernel/ir.js';
import { SINGLE_THREAD_OPS, type AgentInfo, type Program } from './program.js';

/**
 * Threads of agent `info` that perform an operation executed with `per` (the arrival multiplicity
 * of an arrive): every thread of the agent, one per warp, or one. The one rule the machine, the
 * simulator and the checker's analyses share.
 */
export function perThreads(per: Per, info: Pick<AgentInfo, 'threads' | 'warps'>): number {
  return per === 'thread' ? info.threads : per === 'warp' ? info.warps : 1;
}

/**
 * True when agents `a` and `b` are two warps of one instance of a split role. One instruction
 * that several such warps execute on a shared-memory buffer accesses each warp's own slice of it
 * (every thread its own elements, as a role's `ld.shared` / `st.shared` means): those accesses do
 * not conflict with each other. Accesses by different instructions still do.
 */
export function sliceSiblings(p: Program, a: number, b: number): boolean {
  if (a === b || a < 0 || b < 0) return false;
  const x = p.agents[a]!;
  const y = p.agents[b]!;
  return x.role === y.role && x.cta === y.cta && x.instance === y.instance && p.roles[x.role]!.split;
}

/**
 * True when agents `a` and `b` are two warps of one role instance that reach different Tensor
 * Memory lanes: warp `w` of a warpgroup (`%warpid % 4`) accesses only lanes 32·(w % 4) …
 * 32·(w % 4) + 31 with `tcgen05.ld` / `tcgen05.st` (PTX ISA §9.7.16.2.3), so two warps whose
 * indices differ by a multiple of 4 (warps 0 and 4 of a two-warpgroup epilogue) share their lanes.
 */
export function laneSiblings(p: Program, a: number, b: number): boolean {
  return sliceSiblings(p, a, b) && laneQuarter(p, a) !== laneQuarter(p, b);
}

/** The Tensor Memory lane quarter agent `a`'s warp reaches with tcgen05.ld / st: `warp % 4` (PTX ISA §9.7.16.2.3). */
export function laneQuarter(p: Program, a: number): number {
  return p.agents[a]!.warp & 3;
}

/**
 * Whether a role runs as one agent per warp: it has more than one warp, and its code reads the
 * builtin `warp` or `warpgroup` or has an operation that is not a single thread's (not `per=one`,
 * not inside `elect:`, not one of {@link SINGLE_THREAD_OPS}). A role whose every operation is one
 * thread's runs as one agent: its other warps have nothing to do.
 */
export function roleSplits(r: RoleDecl): boolean {
  if (r.warps <= 1) return false;
  if (roleReadsWarp(r)) return true;
  let split = false;
  const walk = (stmts: Stmt[], inElect: boolean) => {
    for (const st of stmts) {
      if (st.s === 'for') walk(st.body, inElect);
      else if (st.s === 'if') { walk(st.then, inElect); if (st.else) walk(st.else, inElect); }
      else if (st.s === 'elect') walk(st.body, true);
      else if (st.s === 'op') {
        const per = inElect ? 'one' : ('per' in st.op && st.op.per) || r.per;
        if (per !== 'one' && !SINGLE_THREAD_OPS.has(st.op.op)) split = true;
      }
    }
  };
  walk(r.body, false);
  return split;
}

/** Whether any expression of role `r` (statements and operation operands) reads the builtin `warp` or `warpgroup`. */
export function roleReadsWarp(r: RoleDecl): boolean {
  let found = false;
  const reads = (e: unknown) => {
    const k = (e as { k?: unknown } | undefined)?.k;
    if (k !== 'var' && k !== 'un' && k !== 'bin') return;
    for (const n of exprNames(e as Expr)) if (n === 'warp' || n === 'warpgroup') found = true;
  };
  const scan = (v: unknown): void => {
    if (!v || typeof v !== 'object') return;
    if (Array.isArray(v)) { v.forEach(scan); return; }
    if ('k' in (v as object)) { reads(v); return; }
    for (const x of Object.values(v as object)) scan(x);
  };
  const walk = (stmts: Stmt[]) => {
    for (const st of stmts) {
      if (st.s === 'let') reads(st.value);
      else if (st.s === 'for') { reads(st.from); reads(st.to); reads(st.step); walk(st.body); }
      else if (st.s === 'if') { reads(st.cond); walk(st.then); if (st.else) walk(st.else); }
      else if (st.s === 'elect') walk(st.body);
      else if (st.s === 'goto') reads(st.cond);
      else if (st.s === 'op') scan(st.op);
    }
  };
  walk(r.body);
  return found;
}

/**
 * True when agents `a` and `b` are two warps of one instance of a split role that share one
 * access of operation `op` as slices: {@link sliceSiblings}, and the operation's buffer reference
 * and byte count do not depend on the warp ({@link warpOwned}). A reference computed from
 * `warp` names the executing warp's own bytes (`A + warp * 1024, 1024` is one quarter per warp,
 * docs/LANGUAGE.md §4), so two warps whose references overlap access the same bytes: a conflict.
 */
export function sliceShared(p: Program, a: number, b: number, op: Op): boolean {
  if (!sliceSiblings(p, a, b)) return false;
  return !warpOwned(p.roles[p.agents[a]!.role]!.decl).ops.has(op);
}

/** {@link sliceShared} for an access known by its source location (one statement of the role). */
export function sliceSharedAt(p: Program, a: number, b: number, loc: SrcLoc): boolean {
  if (!sliceSiblings(p, a, b)) return false;
  return !warpOwned(p.roles[p.agents[a]!.role]!.decl).locs.has(locKey(loc));
}

/**
 * Asynchronous operations whose bytes are per thread (`cp.async DST, BYTES`: each thread copies
 * its own BYTES; `st.async` / `red.async`: each performing thread stores its own): issued at one
 * instruction by two warps of one instance, they write each warp's own slice, as an `st.shared`
 * there does. Bulk copies name one box, whoever issues them, and are not in the set.
 */
export const PER_THREAD_ASYNC: ReadonlySet<string> = new Set(['cp.async', 'st.async']);

const locKey = (l: SrcLoc): string => `${l.file ?? ''}:${l.line}:${l.col}`;
const ownedCache = new WeakMap<RoleDecl, { ops: Set<Op>; locs: Set<string> }>();

/**
 * The operations of role `r` whose buffer reference depends on `warp` / `warpgroup` (see
 * `refReads`): directly, or for the element index and CTA also through a variable that depends on
 * them (assigned from such an expression, or under a condition or loop bound that does, or after
 * a `goto` whose condition does: then every variable counts); and the stores of a value computed
 * from the warp (`st.shared slot value=warp`: one 32-bit word, different per warp, so the warps
 * store to the same address). Cached per role declaration.
 */
export function warpOwned(r: RoleDecl): { ops: Set<Op>; locs: Set<string> } {
  const cached = ownedCache.get(r);
  if (cached) return cached;
  const tainted = new Set<string>(['warp', 'warpgroup']);
  const reads = (e: Expr | undefined): boolean => !!e && [...exprNames(e)].some((n) => tainted.has(n));
  let all = false;
  let grew = true;
  const mark = (n: string | undefined) => { if (n && !tainted.has(n)) { tainted.add(n); grew = true; } };
  const walk = (stmts: Stmt[], ctl: boolean): void => {
    for (const st of stmts) {
      if (st.s === 'let') { if (ctl || all || reads(st.value)) mark(st.name); }
      else if (st.s === 'for') { const c = ctl || reads(st.from) || reads(st.to) || reads(st.step); if (c || all) mark(st.var); walk(st.body, c); }
      else if (st.s === 'if') { const c = ctl || reads(st.cond); walk(st.then, c); if (st.else) walk(st.else, c); }
      else if (st.s === 'elect') walk(st.body, ctl);
      else if (st.s === 'goto') { if (reads(st.cond) && !all) { all = true; grew = true; } }
      else if (st.s === 'op') {
        const dest = (st.op as { dest?: unknown }).dest;
        if (typeof dest === 'string' && (ctl || all || opReads(st.op, reads))) mark(dest);
      }
    }
  };
  while (grew) { grew = false; walk(r.body, false); }
  const out = { ops: new Set<Op>(), locs: new Set<string>() };
  const direct = (e: Expr | undefined): boolean => !!e && [...exprNames(e)].some((n) => n === 'warp' || n === 'warpgroup');
  const collect = (stmts: Stmt[]): void => {
    for (const st of stmts) {
      if (st.s === 'for') collect(st.body);
      else if (st.s === 'if') { collect(st.then); if (st.else) collect(st.else); }
      else if (st.s === 'elect') collect(st.body);
      else if (st.s === 'op' && (refReads(st.op, reads, direct) || (st.op.op === 'st.shared' && reads(st.op.value)))) { out.ops.add(st.op); out.locs.add(locKey(st.loc)); }
    }
  };
  collect(r.body);
  ownedCache.set(r, out);
  return out;
}

/** Whether any expression of `op` satisfies `reads`. */
function opReads(op: Op, reads: (e: Expr) => boolean): boolean {
  let found = false;
  const scan = (v: unknown): void => {
    if (found || !v || typeof v !== 'object') return;
    if (Array.isArray(v)) { v.forEach(scan); return; }
    const k = (v as { k?: unknown }).k;
    if (k === 'var' || k === 'un' || k === 'bin' || k === 'num') { if (reads(v as Expr)) found = true; return; }
    for (const x of Object.values(v as object)) scan(x);
  };
  scan(op);
  return found;
}

/**
 * Whether the buffer reference of `op` depends on the warp: its index or CTA by `reads` (a local
 * variable too: the element is computed exactly per warp), its byte offset or count by `direct`
 * only (a range that reads a local variable counts as its whole element, docs/LANGUAGE.md §4, so
 * two warps' disjoint ranges would look like one: those keep the slice rule).
 */
function refReads(op: Op, reads: (e: Expr) => boolean, direct: (e: Expr) => boolean): boolean {
  const refs = Object.values(op).filter((v): v is { index: Expr; cta?: Expr; offset?: Expr } => !!v && typeof v === 'object' && 'name' in v && 'index' in v);
  if (refs.length === 0) return false;
  const bytes = (op as { bytes?: unknown }).bytes as Expr | undefined;
  return refs.some((r) => reads(r.index) || (!!r.cta && reads(r.cta)) || (!!r.offset && direct(r.offset))) || (!!bytes && typeof bytes === 'object' && direct(bytes));
}
