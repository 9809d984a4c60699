/**
 * What tells the warps of a split role apart, for the symmetry reduction: the values of the
 * role's expressions that read the builtins `warp` / `warpgroup`, evaluated for one warp.
 *
 * Every expression of a role is a function of the agent's frame (its variables), the parameters
 * and the builtins. Within a symmetry group the agents share role, CTA and (where the code reads
 * it) instance, so only `warp` and `warpgroup` can differ. Walking the role's statements, each
 * maximal subexpression that reads them and otherwise names only parameters and builtins is
 * evaluated for the warp; an `if` whose whole condition is such a subexpression is decided for
 * the warp and only the branch taken is walked (the other is never executed by that warp, so what
 * it reads cannot tell the warps apart). Two warps with equal signatures take the same branches
 * and compute the same value from equal frames at every step: renaming one into the other maps
 * every transition to a transition, which is what the reduction needs (docs/CHECK.md, "Symmetry").
 */
import { evalExpr, exprNames } from '../kernel/expr.js';
import type { Expr, Stmt } from '../kernel/ir.js';
import { BUILTINS, type AgentInfo, type Program } from '../machine/program.js';
import { laneQuarter } from '../machine/roles.js';

type Role = Program['roles'][number];

/** Names a role assigns (`let` and loop variables): never static, whatever they are called. */
function assignedNames(body: readonly Stmt[], out: Set<string> = new Set()): Set<string> {
  for (const st of body) {
    if (st.s === 'let') out.add(st.name);
    else if (st.s === 'for') { out.add(st.var); assignedNames(st.body, out); }
    else if (st.s === 'if') { assignedNames(st.then, out); if (st.else) assignedNames(st.else, out); }
    else if (st.s === 'elect') assignedNames(st.body, out);
  }
  return out;
}

const isExpr = (e: unknown): e is Expr => {
  const k = (e as { k?: unknown } | null | undefined)?.k;
  return k === 'num' || k === 'var' || k === 'bin' || k === 'un';
};

/**
 * The signature of warp `a` of split role `rc` (see the module comment): equal strings for two
 * warps of one role instance mean their code cannot tell them apart. An agent whose role assigns a
 * builtin gets a signature of its own.
 */
export function warpSignature(p: Program, rc: Role, a: AgentInfo): string {
  const assigned = assignedNames(rc.decl.body);
  if (assigned.has('warp') || assigned.has('warpgroup')) return `agent${a.id}`;
  const builtin: Record<(typeof BUILTINS)[number], number> = {
    cta: a.rank, instance: a.instance, ncta: p.clusterSize, clusterid: a.cluster, nthreads: rc.threads, nwarps: rc.warps, warp: a.warp, warpgroup: a.warp >> 2,
  };
  const env = (n: string): number | undefined => {
    if (assigned.has(n)) return undefined;
    if (Object.hasOwn(builtin, n)) return builtin[n as keyof typeof builtin];
    return Object.hasOwn(p.params, n) ? p.params[n] : undefined;
  };
  const out: string[] = [];
  const readsWarp = (names: Set<string>) => names.has('warp') || names.has('warpgroup');
  const isStatic = (names: Set<string>) => [...names].every((n) => env(n) !== undefined);
  const value = (e: Expr): string => {
    try {
      return String(evalExpr(e, env));
    } catch {
      return 'fault';
    }
  };
  /** Adds the maximal static subexpressions of `e` that read a warp builtin. */
  const sig = (e: Expr): void => {
    const names = exprNames(e);
    if (!readsWarp(names)) return;
    if (isStatic(names)) out.push(value(e));
    else if (e.k === 'bin') { sig(e.a); sig(e.b); }
    else if (e.k === 'un') sig(e.a);
  };
  const scan = (v: unknown): void => {
    if (!v || typeof v !== 'object') return;
    if (Array.isArray(v)) { v.forEach(scan); return; }
    if (isExpr(v)) { sig(v); return; }
    for (const x of Object.values(v as object)) scan(x);
  };
  const walk = (body: readonly Stmt[]): void => {
    for (const st of body) {
      if (st.s === 'let') sig(st.value);
      else if (st.s === 'for') { sig(st.from); sig(st.to); if (st.step) sig(st.step); walk(st.body); }
      else if (st.s === 'elect') walk(st.body);
      else if (st.s === 'if') {
        const names = exprNames(st.cond);
        if (readsWarp(names) && isStatic(names)) {
          const v = value(st.cond);
          out.push(`if${v}`);
          if (v === 'fault') continue;
          walk(Number(v) !== 0 ? st.then : (st.else ?? []));
        } else {
          sig(st.cond);
          out.push('(');
          walk(st.then);
          out.push('|');
          if (st.else) walk(st.else);
          out.push(')');
        }
      } else if (st.s === 'goto') { if (st.cond) sig(st.cond); out.push(`goto:${st.label}`); }
      else if (st.s === 'label') out.push(`label:${st.name}`);
      else scan(st.op);
    }
  };
  walk(rc.decl.body);
  return out.join(',');
}

/** The operations that reach a warp's own TMEM lane quarter. */
const LANE_OPS: ReadonlySet<string> = new Set(['tcgen05.ld', 'tcgen05.ld.async', 'tcgen05.st']);

/**
 * A would-be group of warps split by TMEM lane quarter when two of them share one: warp `w`
 * reaches the lanes of `w % 4` with tcgen05.ld / st (`laneSiblings`), so in a group holding warps 0
 * and 4 a permutation would map a pair that shares lanes (and can race) onto one that does not.
 * Warps of pairwise different quarters (the epilogue warps 2-5 of a 6-warp kernel) stay one group.
 */
export function byLaneQuarter(p: Program, members: number[]): number[][] {
  const rc = p.roles[p.agents[members[0]!]!.role]!;
  if (members.length < 2 || !rc.code.some((i) => i.i === 'op' && LANE_OPS.has(i.op.op))) return [members];
  const q = members.map((id) => laneQuarter(p, id));
  if (new Set(q).size === q.length) return [members];
  return [0, 1, 2, 3].map((k) => members.filter((_, i) => q[i] === k)).filter((l) => l.length > 0);
}
