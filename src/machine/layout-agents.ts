/**
 * The agents of a launch laid out: the instances of each role in each CTA (`instances=` and the
 * where-condition), the threads of every CTA bounded before anything is allocated per thread, and
 * one agent per role instance, or per warp of a split role (roles.ts), in cluster, CTA, role and
 * instance order, with their names (`role[i].w2@c1`). Called by `instantiate` (program.ts);
 * errors are {@link KernelError}s at the role.
 */
import { EvalFault } from '../kernel/arith.js';
import { evalExpr } from '../kernel/expr.js';
import type { Kernel, RoleDecl } from '../kernel/ir.js';
import type { AgentInfo, RoleCode } from './program-types.js';
import { countText, evalStatic, KernelError, MAX_AGENTS, MAX_CTAS, MAX_THREADS_PER_CTA } from './launch-limits.js';

/**
 * The agents of the launch (ids in order): for each cluster, CTA and role, its instances in that
 * CTA, each one agent or, for a split role, one agent per warp (32 threads, the last warp the
 * rest), a warp's warpgroup leader the first warp of its four. Throws {@link KernelError} past
 * {@link MAX_AGENTS} or when no role runs anywhere.
 */
export function layoutAgents(kernel: Kernel, roles: readonly RoleCode[], params: Record<string, number>, clusterSize: number, grid: number): AgentInfo[] {
  const ctas = clusterSize * grid;
  const agents: AgentInfo[] = [];
  for (let cl = 0; cl < grid; cl++) {
    for (let rank = 0; rank < clusterSize; rank++) {
      const cta = cl * clusterSize + rank;
      roles.forEach((rc, ri) => {
        const r = rc.decl;
        const inst = instancesIn(r, params, clusterSize, cl, rank);
        const adding = inst * (rc.split ? Math.ceil(rc.threads / 32) : 1);
        if (agents.length + adding > MAX_AGENTS) {
          throw new KernelError(`the launch has more than ${MAX_AGENTS.toLocaleString('en-US')} agents (warps, or roles that run as one agent) over its ${ctas} CTAs; mbsim simulates at most ${MAX_AGENTS.toLocaleString('en-US')} (32 per CTA of ${MAX_CTAS} CTAs); role ${r.name} alone has ${adding.toLocaleString('en-US')} in CTA ${cta}`, r.instancesLoc ?? r.loc ?? kernel.loc, 'size');
        }
        for (let i = 0; i < inst; i++) {
          const ctaTag = clusterSize > 1 || grid > 1 ? `@c${grid > 1 ? cta : rank}` : '';
          const instTag = inst > 1 ? `[${i}]` : '';
          const base = `${r.name}${instTag}`;
          if (!rc.split) {
            agents.push({
              id: agents.length, role: ri, roleName: r.name, cta, rank, cluster: cl, instance: i,
              threads: rc.threads, warps: rc.warps, warp: 0, wgLeader: agents.length, name: `${base}${ctaTag}`,
            });
            continue;
          }
          const first = agents.length;
          for (let w = 0; w * 32 < rc.threads; w++) {
            agents.push({
              id: agents.length, role: ri, roleName: r.name, cta, rank, cluster: cl, instance: i,
              threads: Math.min(32, rc.threads - 32 * w), warps: 1, warp: w, wgLeader: first + (w & ~3),
              name: `${base}.w${w}${ctaTag}`,
            });
          }
        }
      });
    }
  }
  if (agents.length === 0) throw new KernelError('the kernel has no roles to run (no role, or every role\'s where-condition is false)', kernel.roles[0]?.loc ?? kernel.loc, 'no-roles');
  return agents;
}

/**
 * Instances of role `r` in CTA `rank` of cluster `cl`: its `instances` (default 1), or 0 where its
 * where-condition is false. Throws {@link KernelError} for a fault in either or a negative count.
 */
function instancesIn(r: RoleDecl, params: Record<string, number>, clusterSize: number, cl: number, rank: number): number {
  if (r.where) {
    const env = (n: string) => (n === 'cta' ? rank : n === 'ncta' ? clusterSize : n === 'clusterid' ? cl : Object.hasOwn(params, n) ? params[n] : undefined);
    let ok: number;
    try {
      ok = evalExpr(r.where, env);
    } catch (err) {
      throw new KernelError(`role ${r.name}: where-condition: ${(err as Error).message}`, r.loc, err instanceof EvalFault ? 'arith' : 'static-expr');
    }
    if (!ok) return 0;
  }
  if (!r.instances) return 1;
  const at = r.instancesLoc ?? r.loc;
  const inst = evalStatic(r.instances, params, `instances of role ${r.name}`, at);
  if (inst < 0) throw new KernelError(`role ${r.name} has instances=${inst}; the number of instances cannot be negative`, at, 'size');
  return inst;
}

/**
 * Refuses a launch whose CTA has more than {@link MAX_THREADS_PER_CTA} threads (CUDA C++
 * Programming Guide, compute capability 9.0 / 10.0), from the roles' declarations alone: instances
 * × threads of every role in every CTA, before one agent is laid out (a role of 10^8 instances must
 * be a message, not 10^8 agents). Names the role contributing most, at its `instances=`.
 */
export function checkThreadsPerCta(kernel: Kernel, params: Record<string, number>, clusterSize: number, grid: number): void {
  for (let cl = 0; cl < grid; cl++) {
    for (let rank = 0; rank < clusterSize; rank++) {
      let threads = 0;
      let big: { r: RoleDecl; inst: number; t: number } | undefined;
      for (const r of kernel.roles) {
        const inst = instancesIn(r, params, clusterSize, cl, rank);
        const t = inst * (r.threads ?? r.warps * 32);
        threads += t;
        if (!big || t > big.t) big = { r, inst, t };
      }
      if (threads > MAX_THREADS_PER_CTA && big) {
        const cta = cl * clusterSize + rank;
        const per = big.r.threads ?? big.r.warps * 32;
        const what = big.inst === 1 ? '' : ` (${big.inst.toLocaleString('en-US')} instances × ${per} threads)`;
        throw new KernelError(
          `CTA ${cta} has ${countText(threads)} threads; a CTA can have at most ${MAX_THREADS_PER_CTA} (32 warps); role ${big.r.name} has ${countText(big.t)}${what}`,
          big.inst === 1 ? big.r.loc ?? kernel.loc : big.r.instancesLoc ?? big.r.loc ?? kernel.loc, 'threads');
      }
    }
  }
}
