/**
 * What a role's code says about how it runs: how many threads perform an operation of a given
 * multiplicity, whether a role runs as one agent per warp, whether its code reads `warp`, and
 * which agents are warps of one instance (each accessing its own slice of a buffer).
 */
import { exprNames } from '../kernel/expr.js';
import type { Expr, Per, RoleDecl, Stmt } from '../kernel/ir.js';
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
