/**
 * Static facts about a {@link Program} that the checker needs: a table of source locations (so
 * in-flight operations can be encoded as integers), the layout of the checker's own per-state
 * history (last phase each waiter observed), which barrier arrays carry transaction bytes, the
 * partial-order class of every instruction, and the groups of interchangeable agents for symmetry
 * reduction. Nothing here runs the machine.
 */
import { relaxedUse } from './relaxed.js';
import { exprNames } from '../kernel/expr.js';
import type { Expr, Op, SrcLoc } from '../kernel/ir.js';
import { roleReadsWarp, SINGLE_THREAD_OPS, type Instr, type Program } from '../machine/program.js';
import { byLaneQuarter, warpSignature } from './warp-signature.js';
import { MAX_KNOWN_ENTRIES, restPositions, warpRelative, type WarpRelative } from './warp-relative.js';
import { asyncProxyOp, opDef } from '../machine/ops/index.js';
import { ctaSymmetry, type CtaSymmetry } from './cta-symmetry.js';
import { ptxCtaSymmetry } from './cta-relative.js';
import { BoundReached, type Governor } from '../machine/governor.js';
import { HIST_WORDS } from './wait-hist.js';

/**
 * Partial-order class of an instruction:
 * - `local`: touches only the executing agent's own state (work, fences, commit_group);
 * - `issue`: only starts asynchronous operations (TMA, bulk store, MMA, commit, cp.async) —
 *   no barrier, named-barrier or cluster state changes at issue;
 * - `sync`: everything else (barrier operations, waits, generic accesses, exit).
 * Remote arrives (`mbarrier.arrive` on another CTA's barrier) are `issue` at run time; the
 * explorer decides that per step.
 */
export type PorClass = 'local' | 'issue' | 'sync';

/** A set of agents that are interchangeable (same role, same CTA, code independent of `instance`). */
export interface SymGroup {
  agents: number[];
  /** Buffer keys private to member i (indexed by `instance`), per member; empty when none. */
  privateBufs: number[][];
}

/** Static analysis of a program for the checker. */
export interface Analysis {
  /** Every operation's source location, by index (in-flight operations store the index). */
  locs: SrcLoc[];
  locIndex: Map<SrcLoc, number>;
  /** Per agent: barrier keys it may wait on, and the slot of each in the history array (its first word, wait-hist.ts). */
  waitSlots: Map<number, number>[];
  /** Total history length in words (sum over agents). */
  histLen: number;
  /** First history word of each agent (its slots are contiguous). */
  histBase: number[];
  /** History words of each agent ({@link HIST_WORDS} per slot). */
  histCount: number[];
  /** Barrier array names that receive transaction bytes (targets of TMA, expect_tx, complete_tx). */
  dataBarriers: Set<string>;
  /** Barrier array names some role credits or expects on directly (standalone expect_tx / complete_tx). */
  directTx: Set<string>;
  /** PorClass per role per instruction index. */
  por: PorClass[][];
  /** Symmetry groups (only groups of two or more agents). */
  groups: SymGroup[];
  /** For each agent: its group index, or -1. */
  groupOf: number[];
  /**
   * Per agent of a role run as written (PTX) whose code warp-relative.ts analysed: per pc where it
   * rests, the frame slots its record hash and stored encoding read (`live`) and the values of the
   * others there (`known`: they follow from its position and warp); per `jz`, the edges its warp
   * can take (`taken`, for settled.ts); null for every other agent, and for all of them under CTA
   * symmetry found by the sketch check (the whole frame is hashed and stored; CTA symmetry found on
   * these analyses, cta-relative.ts, keeps them).
   */
  rel: (Pick<WarpRelative, 'live' | 'known' | 'taken'> | null)[];
  /** True when any role uses named barriers (the encoding includes them only then). */
  usesNamed: boolean;
  /** Number of frame slots per agent. */
  frameLen: number[];
  /** Per buffer key: 1 when it is shared memory that both generic (ld/st.shared) and async-proxy operations access. */
  proxyKey: Uint8Array;
  /** True when any buffer key is in {@link proxyKey} (the checker then tracks proxy fences). */
  trackProxy: boolean;
  /**
   * True when the kernel manages Tensor Memory (a TMEM buffer with `cols=`): then the issue of every
   * tcgen05 operation on TMEM and every tcgen05.mma completion are explored in every order with
   * the other agents' steps (`sync`), since an alloc or dealloc of another agent decides whether the
   * access is to allocated memory.
   */
  tmemManaged: boolean;
  /** True when the memory-model detector tracks relaxed arrives / waits and scoped acquires (check/relaxed.ts). */
  trackRelaxed: boolean;
  /** Per barrier key: its slot in the publication array when the barrier is declared `manual`, else -1. */
  manualSlot: Int32Array;
  manualCount: number;
  /**
   * Barrier array names that only tcgen05.commit signals (no arrive, expect_tx, complete_tx, copy,
   * cp.async arrive, init or inval names them; only commits and waits), declared `auto`; null when
   * there are none. Every signal on such a barrier is one arrival with no bytes.
   */
  commitOnly: Set<string> | null;
  /**
   * The CTA permutations states are identified under (cta-symmetry.ts), or why there are none;
   * `reason` is 'off' when the caller switched CTA symmetry off.
   */
  cta: CtaSymmetry;
}

/** Options of {@link analyse}. */
export interface AnalyseOptions {
  /** Look for CTA symmetry (default true; the warp groups are found either way). */
  ctaSymmetry?: boolean;
  /**
   * The operation's governor: ticked in the loops over agents and barrier keys (the analysis of
   * the largest launch takes seconds and hundreds of MB); once it stops, {@link analyse} throws
   * {@link BoundReached}.
   */
  governor?: Governor;
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

function refNames(op: Op): string[] {
  const out: string[] = [];
  const o = op as Record<string, unknown>;
  for (const k of ['bar', 'dst', 'src', 'buf', 'acc']) {
    const v = o[k] as { name?: string } | undefined;
    if (v && typeof v === 'object' && typeof v.name === 'string') out.push(v.name);
  }
  if (Array.isArray(o.reads)) for (const r of o.reads as { name: string }[]) out.push(r.name);
  return out;
}

/** Analyses `p` for the checker. */
export function analyse(p: Program, opts: AnalyseOptions = {}): Analysis {
  const gov = opts.governor;
  const tick = gov ? () => {
    if (gov.tick() !== null) throw new BoundReached(gov.stoppedBy!);
  } : () => {};
  const locs: SrcLoc[] = [];
  const locIndex = new Map<SrcLoc, number>();
  const dataBarriers = new Set<string>();
  const directTx = new Set<string>();
  let usesNamed = false;
  const por: PorClass[][] = [];
  const waitArrays: Set<string>[] = [];
  for (const rc of p.roles) {
    const cls: PorClass[] = [];
    const waits = new Set<string>();
    rc.code.forEach((ins: Instr) => {
      if (ins.i !== 'op') {
        cls.push('local');
        return;
      }
      if (!locIndex.has(ins.loc)) {
        locIndex.set(ins.loc, locs.length);
        locs.push(ins.loc);
      }
      const op = ins.op;
      const storeTx = op.op === 'st.async' || op.op === 'cp.async.bulk.shared::cluster';
      if (op.op === 'cp.async.bulk' || storeTx || op.op === 'mbarrier.expect_tx' || op.op === 'mbarrier.complete_tx' || (op.op === 'mbarrier.arrive' && op.expectTx)) dataBarriers.add(op.bar.name);
      if (op.op === 'bar.sync' || op.op === 'bar.arrive') usesNamed = true;
      // Stores and DSMEM copies credit bytes too: TMA landings on such a barrier are never forced.
      if (op.op === 'mbarrier.expect_tx' || op.op === 'mbarrier.complete_tx' || storeTx) directTx.add(op.bar.name);
      if (op.op === 'mbarrier.wait') waits.add(op.bar.name);
      cls.push(opDef(op.op).por);
    });
    por.push(cls);
    waitArrays.push(waits);
  }
  // History slots: one per (agent, barrier key of its CTA it may wait on), HIST_WORDS words each (wait-hist.ts).
  const waitSlots: Map<number, number>[] = [];
  const histBase: number[] = [];
  const histCount: number[] = [];
  let histLen = 0;
  for (const a of p.agents) {
    const m = new Map<number, number>();
    histBase.push(histLen);
    for (const info of p.barriers) {
      if (!waitArrays[a.role]!.has(info.name)) continue;
      for (let i = 0; i < info.length; i++, histLen += HIST_WORDS) m.set(a.cta * p.barriersPerCta + info.offset + i, histLen);
      tick();
    }
    histCount.push(HIST_WORDS * m.size);
    waitSlots.push(m);
  }
  // Symmetry groups.
  const groups: SymGroup[] = [];
  const groupOf = new Array<number>(p.agents.length).fill(-1);
  const byKey = new Map<string, number[]>();
  const instancesOf = new Map<number, number>();
  for (const a of p.agents) instancesOf.set(a.role, Math.max(instancesOf.get(a.role) ?? 0, a.instance + 1));
  const relCache = new Map<number, WarpRelative | null>();
  const relOf = (id: number): WarpRelative | null => {
    const rc = p.roles[p.agents[id]!.role]!;
    // Known-slot tables within a bound (deterministic): beyond it no warp of the role is analysed.
    const small = p.agents.length * restPositions(rc) * rc.slots.length <= MAX_KNOWN_ENTRIES;
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
  const frameLen = p.agents.map((a) => p.roles[a.role]!.slots.length);
  // Buffers crossing proxies: shared memory accessed by ld/st.shared and by an async-proxy operation.
  const genericArr = new Set<string>();
  const asyncArr = new Set<string>();
  for (const rc of p.roles) for (const ins of rc.code) {
    if (ins.i !== 'op') continue;
    const op = ins.op as Record<string, unknown> & { op: Op['op'] };
    const name = (k: string) => (op[k] as { name?: string } | undefined)?.name;
    if (op.op === 'ld.shared' || op.op === 'st.shared') {
      for (const k of ['buf', 'dst', 'src']) if (name(k)) genericArr.add(name(k)!);
    } else if (asyncProxyOp(ins.opc)) {
      for (const n of refNames(ins.op)) asyncArr.add(n);
    }
  }
  const proxyKey = new Uint8Array(p.ctas * p.buffersPerCta);
  let trackProxy = false;
  // By allocation: an alias's generic accesses and its target's async ones cross proxies too.
  const genericAlloc = new Set(p.buffers.filter((b) => genericArr.has(b.name)).map((b) => b.alloc));
  const asyncAlloc = new Set(p.buffers.filter((b) => asyncArr.has(b.name)).map((b) => b.alloc));
  const space = p.bufferSpace;
  for (let k = 0; k < p.buffersPerCta; k++) {
    const al = space.alloc[k]!;
    if (p.buffers[al]!.space !== 'smem' || !genericAlloc.has(al) || !asyncAlloc.has(al)) continue;
    for (let cta = 0; cta < p.ctas; cta++) proxyKey[cta * p.buffersPerCta + k] = 1;
    trackProxy = true;
  }
  // Under proxy tracking the order of a generic access and the issue of an async-proxy operation
  // on the same buffers (or a proxy fence) decides the missing-fence findings: such issues and the
  // fences are explored in every order (sync), not taken alone (docs/CHECK.md, "Partial-order reduction").
  // By allocation, as above: an alias's generic read and a copy into its target are such a pair.
  const crossAlloc = new Set([...genericAlloc].filter((al) => asyncAlloc.has(al)));
  const allocOf = new Map(p.buffers.map((b) => [b.name, b.alloc]));
  if (trackProxy) p.roles.forEach((rc, r) => rc.code.forEach((ins, pc) => {
    if (ins.i !== 'op' || por[r]![pc] === 'sync') return;
    if (ins.op.op === 'fence.proxy.async' || refNames(ins.op).some((n) => crossAlloc.has(allocOf.get(n) ?? -1))) por[r]![pc] = 'sync';
  }));
  const tmemManaged = p.tmemCols.length > 0;
  if (tmemManaged) p.roles.forEach((rc, r) => rc.code.forEach((ins, pc) => {
    if (ins.i === 'op' && ins.op.op.startsWith('tcgen05.') && por[r]![pc] === 'issue') por[r]![pc] = 'sync';
  }));
  const manualSlot = new Int32Array(p.ctas * p.barriersPerCta).fill(-1);
  let manualCount = 0;
  for (const info of p.barriers) {
    if (info.init !== 'manual') continue;
    for (let cta = 0; cta < p.ctas; cta++) for (let i = 0; i < info.length; i++) manualSlot[cta * p.barriersPerCta + info.offset + i] = manualCount++;
  }
  const committed = new Set<string>();
  const other = new Set<string>();
  for (const rc of p.roles) for (const ins of rc.code) {
    if (ins.i !== 'op') continue;
    const o = ins.op as { op: string; bar?: { name: string } };
    if (!o.bar) continue;
    if (o.op === 'tcgen05.commit') committed.add(o.bar.name);
    else if (o.op !== 'mbarrier.wait') other.add(o.bar.name);
  }
  let commitOnly: Set<string> | null = new Set<string>();
  for (const info of p.barriers) if (info.init === 'auto' && committed.has(info.name) && !other.has(info.name)) commitOnly.add(info.name);
  if (!commitOnly.size) commitOnly = null;
  const an: Analysis = {
    locs, locIndex, waitSlots, histLen, histBase, histCount, dataBarriers, directTx, por, groups, groupOf, rel, usesNamed, frameLen,
    proxyKey, trackProxy, tmemManaged, manualSlot, manualCount, commitOnly, trackRelaxed: relaxedUse(p).track, cta: { perms: [], reason: 'off' },
  };
  // CTA symmetry: for PTX, on the warps' analyses (cta-relative.ts), composed with their groups and
  // kept slots (an image record keeps its slots and takes its image agent's known ones); else, or
  // where that finds none and no warp group formed, the sketch check (the whole frame is hashed then).
  if (opts.ctaSymmetry !== false) {
    const bound = () => {
      if (gov && gov.check() !== null) throw new BoundReached(gov.stoppedBy!);
    };
    const ptx = ptxCtaSymmetry(p, an, rel, bound);
    if (ptx && ptx.perms.length) an.cta = ptx;
    else if (relGroups) an.cta = ptx ?? { perms: [], reason: 'warp-relative symmetry (PTX) is on' };
    else {
      const sketch = ctaSymmetry(p, an, bound);
      an.cta = sketch.perms.length || !ptx ? sketch : ptx;
      if (an.cta.perms.length) an.rel = rel.map(() => null);
    }
  }
  return an;
}
