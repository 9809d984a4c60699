/**
 * Static facts about a {@link Program} that the checker needs: a table of source locations (so
 * in-flight operations can be encoded as integers), the layout of the checker's own per-state
 * history (last phase each waiter observed), which barrier arrays carry transaction bytes, the
 * partial-order class of every instruction, and the groups of interchangeable agents for symmetry
 * reduction. Nothing here runs the machine. The symmetry groups are
 * sym-groups.ts's.
 */
import { relaxedUse } from './relaxed.js';
import type { Op, SrcLoc } from '../kernel/ir.js';
import type { Instr, Program } from '../machine/program.js';
import { asyncProxyOp, opDef } from '../machine/ops/index.js';
import { ctaSymmetry, type CtaSymmetry } from './cta-symmetry.js';
import { ptxCtaSymmetry } from './cta-relative.js';
import { BoundReached, type Governor } from '../machine/governor.js';
import { HIST_WORDS } from './wait-hist.js';
import { deadSlotFacts, type SlotFacts } from './dead-slots.js';
import { refNames, symmetryGroups, type SymGroup } from './sym-groups.js';
export type { SymGroup } from './sym-groups.js';

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
   * these analyses, cta-relative.ts, keeps them). An agent of such a role that warp-relative.ts
   * left unanalysed gets the plain liveness's facts instead (dead-slots.ts: the live slots kept, the
   * dead ones restored as 0), unless {@link AnalyseOptions.deadSlots} is false.
   */
  rel: (SlotFacts | null)[];
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
  /**
   * Leave dead frame slots out of the records of PTX warps that warp-relative.ts did not analyse
   * (default true; dead-slots.ts).
   */
  deadSlots?: boolean;
  /** Internal (tests): false leaves every warp without its warp-relative analysis (warp-relative.ts), so dead-slots.ts serves them all. */
  warpRelative?: boolean;
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
  const { waitSlots, histBase, histCount, histLen } = historySlots(p, waitArrays, tick);
  const { groups, groupOf, rel, relGroups } = symmetryGroups(p, tick, opts.warpRelative !== false);
  const frameLen = p.agents.map((a) => p.roles[a.role]!.slots.length);
  const { proxyKey, trackProxy } = proxyKeys(p, por);
  const tmemManaged = p.tmemCols.length > 0;
  if (tmemManaged) p.roles.forEach((rc, r) => rc.code.forEach((ins, pc) => {
    if (ins.i === 'op' && ins.op.op.startsWith('tcgen05.') && por[r]![pc] === 'issue') por[r]![pc] = 'sync';
  }));
  const { manualSlot, manualCount } = manualSlots(p);
  const commitOnly = commitOnlyBarriers(p);
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
  // Dead slots of the PTX warps left unanalysed (dead-slots.ts); not with the sketch check's CTA
  // symmetry, whose images carry whole frames (and never with the PTX one, which needs every warp analysed).
  if (opts.deadSlots !== false && !an.cta.perms.length) {
    an.rel = an.rel.map((r, a) => {
      const rc = p.roles[p.agents[a]!.role]!;
      if (r || !rc.decl.asWritten) return r;
      tick();
      return deadSlotFacts(p, rc, p.agents[a]!);
    });
  }
  return an;
}

/**
 * The layout of the checker's per-state history (the last phase each waiter observed): one slot
 * of {@link HIST_WORDS} words (wait-hist.ts) per (agent, barrier key of its CTA it may wait on), an
 * agent's slots contiguous. `waitArrays`:
 * per role, the barrier arrays it waits on; `tick`: the governor's tick.
 */
function historySlots(p: Program, waitArrays: readonly Set<string>[], tick: () => void): { waitSlots: Map<number, number>[]; histBase: number[]; histCount: number[]; histLen: number } {
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
  return { waitSlots, histBase, histCount, histLen };
}

/**
 * The buffer keys whose accesses cross proxies (shared memory that ld/st.shared and an
 * async-proxy operation both access, by allocation), and whether there are any; under proxy
 * tracking, marks `sync` in `por` every proxy fence and every issue of an operation on such
 * buffers (their order with a generic access decides the missing-fence findings).
 */
function proxyKeys(p: Program, por: PorClass[][]): { proxyKey: Uint8Array; trackProxy: boolean } {
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
  return { proxyKey, trackProxy };
}

/** The publication slot of every barrier key of a `manual` barrier array (-1 for the others), and their number. */
function manualSlots(p: Program): { manualSlot: Int32Array; manualCount: number } {
  const manualSlot = new Int32Array(p.ctas * p.barriersPerCta).fill(-1);
  let manualCount = 0;
  for (const info of p.barriers) {
    if (info.init !== 'manual') continue;
    for (let cta = 0; cta < p.ctas; cta++) for (let i = 0; i < info.length; i++) manualSlot[cta * p.barriersPerCta + info.offset + i] = manualCount++;
  }
  return { manualSlot, manualCount };
}

/** The `auto` barrier arrays that only tcgen05.commit signals (waits aside), or null when there are none. */
function commitOnlyBarriers(p: Program): Set<string> | null {
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
  return commitOnly;
}
