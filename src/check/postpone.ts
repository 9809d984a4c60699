/**
 * Postponed landings (docs/CHECK.md, "Postponed landings"): a TMA landing on a barrier whose
 * phase still misses arrivals (pending > 0) is explored only after the other enabled steps, and
 * only if one of them completes that barrier's phase (or re-initializes it, or is a wait on it,
 * or brings its pending count to 0), or if nothing else is enabled. While pending > 0 no landing
 * completes the phase, so a landing moved later changes nothing a step observes except that its
 * bytes stay in flight longer (more overlap, never less): unless that step is the one that brings
 * pending to 0, which completes the phase in one order and not in the other, which is why both
 * orders are explored then. A landing that could underflow the tx range is never postponed, nor
 * one on a barrier that cp.async.mbarrier.arrive signals (conservative). A remote arrive is
 * postponed while it cannot complete the phase by itself, even with every other remote arrive in
 * flight to that barrier (pending > the sum of their counts).
 *
 * The step that brings pending to 0 is not a conflict for a TMA landing when it is a plain local
 * arrive (no drop, `.noComplete` or token) after which the tx-count still covers every byte in
 * flight to the barrier, all of them TMA credits ({@link creditsCovered}): the landings then
 * complete the phase at the last of them in either order (docs/CHECK.md, "Postponed landings").
 */
import { nextCredit, type AsyncOp, type Choice, type MachineState } from '../machine/machine.js';
import { accessesOf, OPC, OPS } from '../machine/ops/index.js';
import type { OpInstr } from '../machine/program.js';
import { TX_MAX_SPEC } from '../model/mbarrier.js';
import { TX_FLOOR } from './por.js';
import type { SearchCtx } from './search-ctx.js';
import { groupNeeded } from './stable-group.js';

const OPC_CLUSTER_ARRIVE = OPC['barrier.cluster.arrive'];
/** `Postponed.bar` of a postponed group completion (a wgmma or bulk store: it is on no barrier). */
const GROUP_OP = 0x7fffffff;

/** The postponed landings among the enabled choices of the state being expanded. */
export class Postponed {
  /** Per enabled choice of the state being expanded: the barrier its landing is postponed on, or -1. */
  bar = new Int32Array(16);
  /** Per enabled choice: the pending count of `bar`'s barrier at or below which a step conflicts. */
  private th = new Int32Array(16);
  /** Per enabled choice: 1 when a step of the state being expanded conflicts with its postponed landing. */
  hit = new Uint8Array(16);
  /** Per enabled choice: 1 when its postponed landing is a TMA copy's. */
  private tma = new Uint8Array(16);
  /** Per enabled choice: its postponed group operation (wgmma or bulk store), or null. */
  private groupOp: (AsyncOp | null)[] = [];

  /** `groups`: group completions (wgmma, bulk stores) are postponed too (docs/CHECK.md, "Postponed group completions"). */
  constructor(private readonly ctx: SearchCtx, private groups = true) {
    // As for the stable steps: not in kernels with memory values or tracked relaxed arrives.
    if (ctx.p.values || ctx.an.trackRelaxed) this.groups = false;
  }

  /**
   * Marks the postponed landings among the choices `ch` enabled in `s`; returns how many there are
   * (0 when every choice is one: nothing else is enabled, so every landing is explored).
   */
  mark(s: MachineState, ch: readonly Choice[]): number {
    if (this.bar.length < ch.length) {
      this.bar = new Int32Array(ch.length * 2);
      this.th = new Int32Array(ch.length * 2);
      this.hit = new Uint8Array(ch.length * 2);
      this.tma = new Uint8Array(ch.length * 2);
    }
    this.tma.fill(0, 0, ch.length);
    let nPost = 0;
    for (let i = 0; i < ch.length; i++) if ((this.bar[i] = this.postponedBar(s, ch[i]!, i)) >= 0) nPost++;
    if (nPost === ch.length) nPost = 0; // nothing else is enabled: every landing is explored
    this.hit.fill(0, 0, ch.length);
    return nPost;
  }

  /** Notes the postponed landings among `n` choices that step `c` from `s` to `t` conflicts with. */
  note(s: MachineState, t: MachineState, c: Choice, n: number): void {
    for (let i = 0; i < n; i++) {
      const k = this.bar[i]!;
      if (k < 0 || this.hit[i]) continue;
      if (k === GROUP_OP ? this.touchesReads(s, t, c, this.groupOp[i]!) : this.conflictsWith(s, t, c, k, this.th[i]!, this.tma[i] === 1)) this.hit[i] = 1;
    }
  }

  /**
   * The barrier key the landing of choice `c` (index `i`) is postponed on, or -1; `th[i]` gets the
   * pending count at or below which another step orders against it (0 for a TMA landing, the sum
   * of the remote arrives in flight to the barrier for a remote arrive).
   */
  private postponedBar(s: MachineState, c: Choice, i: number): number {
    if (c.kind !== 'async') return -1;
    const o = this.ctx.m.findAsync(s, c.id);
    if (o && this.groups && (o.kind === 'wgmma' || o.kind === 'bulk.store')) {
      this.groupOp[i] = o;
      return this.groupPostponable(s, o) ? GROUP_OP : -1;
    }
    if (!o || o.bar < 0 || this.ctx.f.cpaKey[o.bar]) return -1;
    const b = s.bars[o.bar];
    if (b === undefined || b.status !== 'valid') return -1;
    if (o.kind === 'tma') {
      this.th[i] = 0;
      this.tma[i] = 1;
      return b.pending > 0 && b.tx - nextCredit(o) > TX_FLOOR ? o.bar : -1;
    }
    if (o.kind === 'remote' && o.remote === 'arrive') {
      // Its issuer waiting at barrier.cluster.arrive (enabled once the issuer's remote signals have
      // landed): the landing enables that step, so it is not independent of the others: explored
      // in every order.
      const ag = s.agents[o.agent]!;
      if (ag.status === 'run') {
        const ins = this.ctx.f.agentCode[o.agent]![ag.pc]!;
        if (ins.i === 'op' && ins.opc === OPC_CLUSTER_ARRIVE) return -1;
      }
      // Every remote arrive in flight to the barrier together: while they cannot complete the
      // phase (or over-arrive) even all landing at once, none of them can.
      let sum = 0;
      for (const y of s.inflight) if (y.kind === 'remote' && y.remote === 'arrive' && y.bar === o.bar) sum += y.count;
      this.th[i] = sum;
      return b.pending > sum ? o.bar : -1;
    }
    return -1;
  }

  /**
   * Whether the completion of `o` (a wgmma or bulk store, enabled in `s`) is postponed: no
   * wait_group waits for it (stable-group.ts `groupNeeded`), and the issuer is an agent of one
   * warp. Such a completion ends its reads of shared memory and enables only the wait_groups that
   * need it (and a wgmma issuer's next completion: issue order); while nothing waits for it,
   * completing it later changes nothing a step observes except that its reads stay in flight
   * longer (more overlap with later writes, each in a schedule the completion can really be
   * delayed past; an exit with it in flight too).
   */
  private groupPostponable(s: MachineState, o: AsyncOp): boolean {
    const { multiWarp, agentCode } = this.ctx.f;
    return !multiWarp[o.agent] && !groupNeeded(s, o, agentCode, this.ctx.m.wgPeers[o.agent] ?? null);
  }

  /**
   * True when step `c` from `s` to `t` orders against a postponed group operation `o`: it traps, or it is an
   * agent's step whose operation accesses bytes `o` reads (a write there races with the read in
   * one order and not in the other; conservative: any access).
   */
  private touchesReads(s: MachineState, t: MachineState, c: Choice, o: AsyncOp): boolean {
    if (t.trapped) return true;
    if (c.kind !== 'agent') {
      const y = this.ctx.m.findAsync(s, c.id);
      if (!y) return false;
      for (const a of accessesOf(y)) for (const b of accessesOf(o)) if (this.ctx.p.buffersOverlap(a.buf, b.buf)) return true;
      return false;
    }
    const ag = s.agents[c.agent]!;
    const ins = this.ctx.f.agentCode[c.agent]![ag.pc]!;
    if (ins.i !== 'op') return false;
    try {
      const keys: number[] = [];
      if (ins.buf) keys.push(ins.buf(ag.frame));
      if (ins.reads) for (const r of ins.reads) keys.push(r(ag.frame));
      for (const k of keys) {
        if (k < 0) return true;
        for (const b of accessesOf(o)) if (this.ctx.p.buffersOverlap(k, b.buf)) return true;
      }
    } catch {
      return true;
    }
    return false;
  }

  /**
   * True when step `c` from `s` to `t` orders against a postponed landing on barrier `k` whose
   * conflict threshold is `th`: it changes the phase or the status, leaves at most `th` arrivals
   * pending (in one order the landing completes the phase or over-arrives, in the other the step
   * does), or is a wait on `k` that passes now. For a TMA landing (`tma`), the arrive that brings
   * pending to 0 while the tx-count still covers every byte in flight is no conflict ({@link creditsCovered}).
   */
  private conflictsWith(s: MachineState, t: MachineState, c: Choice, k: number, th: number, tma: boolean): boolean {
    // A step that traps ends every schedule: a landing postponed past it would never be seen.
    if (t.trapped) return true;
    const a = s.bars[k]!;
    const b = t.bars[k]!;
    // The step that brings pending to the threshold completes the phase in one order of it and the
    // landing and not in the other (and its diagnostics, e.g. a .noComplete arrive that completes, differ).
    if (a.phase !== b.phase || a.status !== b.status) return true;
    if (b.pending <= th && !(tma && a.pending > 0 && creditsCovered(this.ctx, s, t, c, k))) return true;
    if (c.kind !== 'agent') return false;
    // A wait passing now (on an older phase) observes whether the current phase has begun (phase-alias).
    const ag = s.agents[c.agent]!;
    const ins = this.ctx.f.agentCode[c.agent]![ag.pc]!;
    if (ins.i !== 'op' || OPS[ins.opc]!.sync !== 'acquire') return false;
    try {
      return ins.bar!(ag.frame) === k;
    } catch {
      return false; // the wait faults evaluating its operand (the step reports it)
    }
  }
}

/**
 * Whether agent step `c` from `s` to `t` is a plain arrive on barrier `k` (no drop, `.noComplete`
 * or token; `.expect_tx` or not) that leaves the phase open with pending 0 and a tx-count (bytes)
 * within the PTX range that is at least the bytes every operation in flight to `k` can still
 * credit, each of them a TMA copy, and those credits cannot take the tx-count below its range
 * before it. Then any set of those landings and the arrive reach the same barrier in every order
 * (credits and registrations add up; the phase completes at the last of them, since the credits
 * that came after the arrive never bring the tx-count to 0 before the last), the arrive's checks
 * read no tx-count (no token, no range diagnostic in either order), and a landing moved past it
 * only keeps its bytes in flight longer: so it is no conflict for a postponed TMA landing on `k`
 * (docs/CHECK.md, "Postponed landings": DeepGEMM's producer issues its copies before its
 * `arrive.expect_tx`).
 */
export function creditsCovered(ctx: SearchCtx, s: MachineState, t: MachineState, c: Choice, k: number): boolean {
  if (c.kind !== 'agent' || t.trapped) return false;
  const ag = s.agents[c.agent]!;
  const ins = ctx.f.agentCode[c.agent]![ag.pc]!;
  if (ins.i !== 'op' || ins.op.op !== 'mbarrier.arrive') return false;
  const op = ins.op as Extract<OpInstr['op'], { op: 'mbarrier.arrive' }>;
  if (op.drop || op.noComplete || op.token !== undefined) return false;
  try {
    if (ins.bar!(ag.frame) !== k) return false;
  } catch {
    return false;
  }
  const after = t.bars[k]!;
  if (after.pending !== 0 || after.tx > TX_MAX_SPEC) return false;
  let sum = 0;
  for (const y of s.inflight) {
    if (y.bar !== k && !(y.targets && y.targets.includes(k))) continue;
    if (y.kind !== 'tma' || y.targets) return false;
    sum += y.left;
  }
  return sum > 0 && sum <= after.tx && s.bars[k]!.tx - sum > TX_FLOOR;
}
