/**
 * The symmetry groups of a {@link Program}: the agents the checker may interchange (one role, one
 * CTA, code that cannot tell them apart), for its symmetry reduction (docs/CHECK.md, "Warps").
 * Instances are interchangeable when they read `instance` at most as the index of their private
 * buffers; the warps of a split role when their code does not tell them apart (warp-signature.ts;
 * for a role run as written, PTX, warp-relative.ts). Part of the checker's static analysis
 * (analysis.ts).
 */
import { exprNames } from '../kernel/expr.js';
import type { Expr, Op } from '../kernel/ir.js';
import { roleReadsWarp, SINGLE_THREAD_OPS, type Program } from '../machine/program.js';
import { byLaneQuarter, warpSignature } from './warp-signature.js';
import { MAX_KNOWN_ENTRIES, restPositions, warpRelative, type WarpRelative } from './warp-relative.js';

/** A set of agents that are interchangeable (same role, same CTA, code independent of `instance`). */
export interface SymGroup {
  agents: number[];
  /** Buffer keys private to member i (indexed by `instance`), per member; empty when none. */
  privateBufs: number[][];
}

/**
 * The symmetry groups of `p` (only groups of two or more agents), each agent's group index (or -1),
 * the warp-relative analyses of the agents whose code warp-relative.ts analysed (null for the
 * others) and whether one of those formed a group. `tick`: the governor's tick, called per agent
 * (it throws once the governor stops); `relative` false: no warp-relative analysis at all (tests:
 * every PTX warp then falls back to dead-slots.ts).
 */
export function symmetryGroups(p: Program, tick: () => void, relative = true): { groups: SymGroup[]; groupOf: number[]; rel: (WarpRelative | null)[]; relGroups: boolean } {
  const groups: SymGroup[] = [];
  const groupOf = new Array<number>(p.agents.length).fill(-1);
  const byKey = new Map<string, number[]>();
  const instancesOf = new Map<number, number>();
  for (const a of p.agents) instancesOf.set(a.role, Math.max(instancesOf.get(a.role) ?? 0, a.instance + 1));
  const relCache = new Map<number, WarpRelative | null>();
  const relOf = (id: number): WarpRelative | null => {
    const rc = p.roles[p.agents[id]!.role]!;
    // Known-slot tables within a bound (deterministic): beyond it no warp of the role is analysed.
    const small = relative && p.agents.length * restPositions(rc) * rc.slots.length <= MAX_KNOWN_ENTRIES;
    if (!relCache.has(id)) relCache.set(id, small ? warpRelative(p, rc, p.agents[id]!) : null);
    return relCache.get(id)!;
  };
  const useCache = new Map<number, ReturnType<typeof instanceUse>>();
  const useOf = (role: number) => {
    let u = useCache.get(role);
    if (!u) useCache.set(role, (u = instanceUse(p, role, instancesOf.get(role)!)));
    return u;
  };
  for (const a of p.agents) {
    // Memory cells (values) and residency are per CTA and per index: no agents are interchangeable.
    tick();
    const k = p.values || p.resident < p.grid ? null : symKey(p, a.id, useOf(a.role).use, relOf);
    if (k === null) continue;
    let l = byKey.get(k);
    if (!l) byKey.set(k, (l = []));
    l.push(a.id);
  }
  for (const members of [...byKey.values()].flatMap((l) => byLaneQuarter(p, l))) {
    if (members.length < 2) continue;
    const role = p.agents[members[0]!]!.role;
    const u = useOf(role);
    // Members of one instance (warps) share its `instance` and its private buffers: nothing to rename.
    const oneInstance = members.every((id) => p.agents[id]!.instance === p.agents[members[0]!]!.instance);
    if (u.use === 'other' && !oneInstance) continue;
    const privateBufs: number[][] = members.map((id) => {
      const ag = p.agents[id]!;
      const keys: number[] = [];
      if (oneInstance) return keys;
      for (const name of u.arrays) {
        const info = p.buffers.find((b) => b.name === name)!;
        keys.push(ag.cta * p.buffersPerCta + info.offset + ag.instance);
      }
      return keys;
    });
    const gi = groups.length;
    groups.push({ agents: members, privateBufs });
    for (const id of members) groupOf[id] = gi;
  }
  // The agents warp-relative.ts analysed (above, for their groups), and whether it formed a group.
  const rel = p.agents.map((a) => relCache.get(a.id) ?? null);
  const relGroups = groups.some((g) => g.agents.some((id) => rel[id]));
  return { groups, groupOf, rel, relGroups };
}

/**
 * The symmetry class of agent `id`, or null when it has none: agents of one role in one CTA whose
 * code does not tell them apart. Instances are interchangeable when the code reads `instance` at
 * most as the index of instance-private buffers (`use`); the warps of a split role when the code
 * does not tell apart (where it reads `warp` / `warpgroup`: warps of one instance with equal
 * signatures, warp-signature.ts; for a role run as written, PTX, the warps whose code specialized
 * to their index agrees, warp-relative.ts), except warp 0 where the role has one-thread operations (only
 * it runs them) and, where the role issues wgmma, except each warpgroup's leader, whose warps are
 * bound to it (they wait for its groups) and so stay within their warpgroup (and, where the role
 * loads or stores Tensor Memory and two warps share a lane quarter, only warps of one quarter:
 * `byLaneQuarter`). A split role's warps
 * are interchangeable only within their instance: the warps of one instance are slice siblings
 * (`sliceSiblings`: never a race at one instruction, one consumer), those of two instances are
 * not, and a group stands for every permutation of its members (docs/CHECK.md, "Warps").
 */
function symKey(p: Program, id: number, use: 'none' | 'private' | 'other', rel: (id: number) => WarpRelative | null): string | null {
  const a = p.agents[id]!;
  const rc = p.roles[a.role]!;
  if (!rc.split) return use === 'other' ? null : `${a.role}:${a.cta}`;
  const f = roleFacts(rc);
  let k = `${a.role}:${a.cta}:${f.single && a.warp === 0 ? 'L' : 'x'}`;
  // Warps of one instance only: the warps of one instance are slice siblings (a per-thread access
  // at one instruction reaches each warp's own slice, one consumer of a phase), warps of two
  // instances are not; a permutation that mixed instances would map one relation onto the other.
  k += `:i${a.instance}`;
  // Code that reads `warp` / `warpgroup`: only warps it cannot tell apart (warp-signature.ts).
  // A role run as written (PTX): the warps whose code specialized to their index agrees (warp-relative.ts).
  if (f.readsWarp) k += `:${rc.decl.asWritten ? (rel(id)?.sig ?? `agent${a.id}`) : warpSignature(p, rc, a)}`;
  if (f.wgmma) k += `:g${a.warp >> 2}:${a.wgLeader === a.id ? 'G' : 'n'}`;
  return k;
}

const factsCache = new WeakMap<object, { readsWarp: boolean; single: boolean; wgmma: boolean }>();

/** What the symmetry of a split role's warps depends on (see {@link symKey}). */
function roleFacts(rc: Program['roles'][number]): { readsWarp: boolean; single: boolean; wgmma: boolean } {
  let f = factsCache.get(rc);
  if (f) return f;
  f = { readsWarp: false, single: false, wgmma: false };
  for (const ins of rc.code) {
    if (ins.i !== 'op') continue;
    if (ins.per === 'one' || SINGLE_THREAD_OPS.has(ins.op.op)) f.single = true;
    if (ins.op.op.startsWith('wgmma.')) f.wgmma = true;
  }
  f.readsWarp = roleReadsWarp(rc.decl);
  factsCache.set(rc, f);
  return f;
}

/** Names `e` reads; `e` may be any field of an operation (only expressions have names to read). */
function exprVars(e: Expr | undefined, out: Set<string>): void {
  const k = (e as { k?: unknown } | undefined)?.k;
  if (k === 'var' || k === 'un' || k === 'bin') exprNames(e!, out);
}

/**
 * How a role reads the builtin `instance`: 'none', 'private' (only as the whole index of buffer
 * references to arrays of exactly `instances` elements that no other role references) or 'other'.
 */
function instanceUse(p: Program, role: number, instances: number): { use: 'none' | 'private' | 'other'; arrays: Set<string> } {
  const rc = p.roles[role]!;
  const arrays = new Set<string>();
  let other = false;
  const check = (e: Expr | undefined) => {
    const v = new Set<string>();
    exprVars(e, v);
    if (v.has('instance')) other = true;
  };
  // Compiled instructions are closures; the source statements are walked instead.
  const walk = (stmts: typeof rc.decl.body) => {
    for (const st of stmts) {
      if (st.s === 'let') check(st.value);
      else if (st.s === 'for') {
        check(st.from);
        check(st.to);
        check(st.step);
        walk(st.body);
      } else if (st.s === 'if') {
        check(st.cond);
        walk(st.then);
        if (st.else) walk(st.else);
      } else if (st.s === 'elect') walk(st.body);
      else if (st.s === 'goto') check(st.cond);
      else if (st.s === 'label') continue;
      else {
        const op = st.op as Record<string, unknown>;
        for (const [k, v] of Object.entries(op)) {
          if (!v || typeof v !== 'object') continue;
          const refs: { name: string; index: Expr; cta?: Expr }[] = [];
          if (k === 'reads') refs.push(...(v as { name: string; index: Expr; cta?: Expr }[]));
          else if ('index' in (v as object) && 'name' in (v as object)) refs.push(v as { name: string; index: Expr; cta?: Expr });
          else {
            check(v as Expr);
            continue;
          }
          for (const r of refs) {
            check(r.cta);
            check((r as { offset?: Expr }).offset);
            const isBuf = k !== 'bar';
            if (r.index.k === 'var' && r.index.name === 'instance' && isBuf) {
              const info = p.buffers.find((b) => b.name === r.name);
              // A ranged allocation (views, aliases) is shared storage: not private.
              if (info && info.length === instances && !info.ranged) arrays.add(r.name);
              else other = true;
            } else check(r.index);
          }
        }
      }
    }
  };
  walk(rc.decl.body);
  if (other) return { use: 'other', arrays };
  if (arrays.size === 0) return { use: 'none', arrays };
  // The private arrays must not be referenced by any other role.
  for (let r = 0; r < p.roles.length; r++) {
    if (r === role) continue;
    for (const ins of p.roles[r]!.code) {
      if (ins.i !== 'op') continue;
      const names = refNames(ins.op);
      for (const n of names) if (arrays.has(n)) return { use: 'other', arrays };
    }
  }
  return { use: 'private', arrays };
}

/** The barrier and buffer arrays operation `op` names (`bar`, `dst`, `src`, `buf`, `acc`, `reads`). */
export function refNames(op: Op): string[] {
  const out: string[] = [];
  const o = op as Record<string, unknown>;
  for (const k of ['bar', 'dst', 'src', 'buf', 'acc']) {
    const v = o[k] as { name?: string } | undefined;
    if (v && typeof v === 'object' && typeof v.name === 'string') out.push(v.name);
  }
  if (Array.isArray(o.reads)) for (const r of o.reads as { name: string }[]) out.push(r.name);
  return out;
}
