/**
 * The partial-order reduction's forced steps (docs/CHECK.md; the independence facts in por.ts):
 * the single step, if any, that the search takes from a state without branching. Candidates, in
 * the state's canonical agent order:
 *
 * - an agent's `local` or `issue` step that does not end the agent; a sync step only when it
 *   commutes with everything: a stable wait, arrive or named-barrier arrival (stable.ts), an
 *   enabled wait_group, the second step of a completed bar.sync, an arrive on another CTA's
 *   barrier (it only starts a remote signal), an enabled `barrier.cluster.arrive` or
 *   `barrier.cluster.wait`, a settled read of a PTX warp (settled.ts);
 * - in-flight operations by issuer, in issue order: a tcgen05.mma completion, a TMA landing that
 *   cannot complete its phase, a commit that cannot complete its commit-only phase (the last two
 *   stay visible as ghosts), a stable landing that completes its phase (stable-landing.ts).
 */
import { nextCredit, type AsyncOp, type Choice, type MachineState } from '../machine/machine.js';
import { NAMED_PER_CTA } from '../machine/state.js';
import { perThreads, type OpInstr } from '../machine/program.js';
import { OPC } from '../machine/ops/index.js';
import { sortByRecord, type Extra } from './codec.js';
import { publishes } from './detect-fences.js';
import { keyOf, type SearchHooks } from './engine.js';
import { landingsCommute } from './por.js';
import { resetQuestionBudget, stableArrive, stableExpectArrive, stableNamedArrive, stableWait } from './stable.js';
import { stableAccess, stableProxyFence } from './stable-access.js';
import { stableLanding } from './stable-landing.js';
import { stableGroupOp } from './stable-group.js';
import { settledReads } from './settled.js';
import { clusterReachOf } from './landing-order.js';
import { countingArrive, countingLanding, countingUnits } from './counting-arrive.js';
import type { SearchCtx } from './search-ctx.js';
import type { Successors } from './successor.js';
import type { TransitionCheck } from './transition.js';

const OPC_ARRIVE = OPC['mbarrier.arrive'];
const OPC_WAIT = OPC['mbarrier.wait'];
const OPC_BAR_SYNC = OPC['bar.sync'];
const OPC_BAR_ARRIVE = OPC['bar.arrive'];
const OPC_WG_WAIT = OPC['wgmma.wait_group'];
const OPC_BULK_WAIT = OPC['cp.async.bulk.wait_group'];
const OPC_CP_WAIT = OPC['cp.async.wait_group'];
const OPC_LD_SHARED = OPC['ld.shared'];
const OPC_ST_SHARED = OPC['st.shared'];
const OPC_FENCE_PROXY = OPC['fence.proxy.async'];
const OPC_CLUSTER_ARRIVE = OPC['barrier.cluster.arrive'];
const OPC_CLUSTER_WAIT = OPC['barrier.cluster.wait'];

/** A forced step taken: the state after it, its checker data, the choice and its actor. */
export interface Forced { t: MachineState; nx: Extra; c: Choice; who: number }

/**
 * The forced step from `s` (checker data `x`, reached from stored state `id` by `prefix`; `rh`:
 * its record hashes, for the canonical order of symmetric agents), or null.
 */
export type ForcedStep = (s: MachineState, x: Extra, id: number, prefix: Choice[], rh?: Int32Array | null) => Forced | null;

/**
 * The forced steps of search `ctx` (`stableOn`: stable waits and arrives are forced too;
 * `landingsOn`: with them, stable phase-completing landings; `countingOn`: with them, arrivals on
 * counting barriers across a phase boundary, counting-arrive.ts).
 */
export function forcedStep(ctx: SearchCtx, sx: Successors, check: TransitionCheck, stableOn: boolean, landingsOn = true, head?: SearchHooks['forcedHead'], countingOn = true): ForcedStep {
  const { p, m, an, out } = ctx;
  const { agentCode, agentPor } = ctx.f;
  const agentOrder = canonicalOrder(ctx);
  const syncForced = stableSync(ctx, stableOn, countingOn);
  const quietExit = stableOn ? exitCommutes(ctx) : () => false;
  const asyncForced = forcedLanding(ctx, stableOn && landingsOn && !p.values && !an.trackRelaxed, countingOn);
  /** Shared choice objects of the forced steps: agent a; async op id (small ids). */
  const agentChoice: Choice[] = p.agents.map((_, a) => Object.freeze({ kind: 'agent' as const, agent: a }));
  const asyncChoice: Choice[] = [];
  const asyncChoiceOf = (id: number): Choice => (id < 4096 ? (asyncChoice[id] ??= Object.freeze({ kind: 'async' as const, id })) : { kind: 'async', id });

  /**
   * The first forced agent step, in `order` (null: by index): first among the steps forced without
   * a stable-step question (stable.ts runs the other agents forward, the costly part), then among
   * those that need one. Either pass depends on the state alone, so the step chosen does too.
   */
  const agentStep = (s: MachineState, x: Extra, id: number, prefix: Choice[], order: Int32Array | null): Forced | null => {
    const ags = s.agents;
    for (let pass = 0; pass < 2; pass++) {
      const cheap = pass === 0;
      for (let k = 0; k < ags.length; k++) {
        const a = order ? order[k]! : k;
        const ag = ags[a]!;
        if (ag.status !== 'run') continue;
        const pc = ag.pc;
        const ins = agentCode[a]![pc]!;
        if (ins.i !== 'op') continue;
        const sync = agentPor[a]![pc] === 'sync';
        if (!cheap && !sync) continue; // tried in the first pass
        if (m.gated && !m.agentEnabled(s, a)) continue; // a cluster not resident yet (machine/values.ts)
        const headed = head !== undefined && head.at(s, a);
        if (headed && !head.seed) continue; // a step the caller explores (ExploreOptions.hooks.forcedHead)
        if (sync && !syncForced(s, a, ins, x, cheap)) continue;
        const c = agentChoice[a]!;
        const t = sx.succ(s, c, a);
        if (t.agents[a]!.status !== 'run' && !quietExit(s, t, a)) continue; // exits are visible
        // A step the caller hears of before it is taken (ExploreOptions.hooks.forcedHead).
        if (headed) head.seed!(s, x, id, prefix);
        const nx = check(s, t, c, out.events!, x, id, prefix);
        return { t, nx, c, who: a };
      }
    }
    return null;
  };

  return (s, x, id, prefix, rh = null) => {
    if (s.trapped) return null;
    resetQuestionBudget();
    const ags = s.agents;
    const order = an.groups.length ? agentOrder(rh) : null;
    const f = agentStep(s, x, id, prefix, order);
    if (f) return f;
    // In-flight ops by issuer, each issuer's in issue order: the canonical order of the state
    // encoding. (The list's order across issuers depends on the path that reached the state, and
    // the forced step taken must not: else the states stored would depend on the search order.)
    const fl = s.inflight;
    const nA = fl.length ? ags.length : 0;
    for (let k = 0; k < nA; k++) for (let i = 0; i < fl.length; i++) {
      const a = order ? order[k]! : k;
      const o = fl[i]!;
      if (o.agent !== a) continue;
      if (!asyncForced(s, o, x)) continue;
      const c = asyncChoiceOf(o.id);
      const t = sx.succ(s, c, o.agent, i);
      const nx = check(s, t, c, out.events!, x, id, prefix);
      ctx.tmaGhost = -1;
      ctx.commitGhost = -1;
      return { t, nx, c, who: o.agent };
    }
    return null;
  };
}

/**
 * Whether the step of agent `a` from `s` to `t`, after which `a` has finished, may be forced like
 * any other step of `a`: it ends normally (no trap), and no running agent of `a`'s cluster can
 * still reach a cluster barrier (an exit no longer counts in a round, so it could complete one).
 * An exit taken as early as it can be changes only when its CTA has finished: earlier, never
 * later. Every exit hazard is then found: the operations in flight into the CTA when it finishes
 * later were already in flight, or are issued into the finished CTA (detect-exit.ts reports both),
 * and a peer's access after the exit (`exited-cta`) can only come sooner. The rule depends only on
 * where the cluster's agents are, and stays true as they move on, so the forced steps a state
 * takes do not depend on their order. Not with managed TMEM (a pair allocation and the leak check
 * read whether a warp still runs) nor for an agent of several warps in lockstep (its ghosts retire
 * at its waits).
 */
function exitCommutes(ctx: SearchCtx): (s: MachineState, t: MachineState, a: number) => boolean {
  const { p, an } = ctx;
  const { multiWarp, agentCode } = ctx.f;
  if (an.tmemManaged) return () => false;
  const reach = clusterReachOf(agentCode);
  const { m } = ctx;
  return (s, t, a) => {
    if (t.trapped || t.agents[a]!.status !== 'done' || multiWarp[a]) return false;
    for (const b of m.clusterAgents[p.agents[a]!.cluster]!) {
      const g = s.agents[b]!;
      if (b !== a && g.status === 'run' && reach[b]![g.pc]) return false;
    }
    return true;
  };
}

/**
 * The agents in the state's canonical order: agents outside symmetry groups by index, then each
 * group's members by record hash (`rh`). A state and its permutations by symmetry hash alike; the
 * forced step must be chosen alike in them too, or the states stored would depend on which
 * representative the search met first.
 */
function canonicalOrder(ctx: SearchCtx): (rh: Int32Array | null) => Int32Array {
  const { p, an } = ctx;
  const canonOrder = new Int32Array(p.agents.length);
  const plainAgents = p.agents.map((a) => a.id).filter((a) => an.groupOf[a]! < 0);
  return (rh) => {
    let k = 0;
    for (const a of plainAgents) canonOrder[k++] = a;
    for (const g of an.groups) {
      if (rh) sortByRecord(g.agents, rh, canonOrder, k);
      else canonOrder.set(g.agents, k);
      k += g.agents.length;
    }
    return canonOrder;
  };
}

/**
 * Whether the sync step `ins` of agent `a` in `s` is forced: a sync step, except an arrive on
 * another CTA's barrier (it only starts a remote signal) and a stable wait (stable.ts: it passes,
 * and nothing reaches its barrier before it moves), is explored in every order. `countingOn`: a
 * local arrive on a counting barrier may be taken alone across a phase boundary (counting-arrive.ts).
 */
function stableSync(ctx: SearchCtx, stableOn: boolean, countingOn: boolean): (s: MachineState, a: number, ins: OpInstr, x: Extra, cheap: boolean) => boolean {
  const { p, m } = ctx;
  const { multiWarp, barCta } = ctx.f;
  const stable = stableChecks(ctx);
  const settled = stableOn ? settledReads(ctx) : null;
  // Stable generic accesses (stable.ts): not in kernels with memory values (a write can steer a
  // reader) or with relaxed arrives tracked (relaxed.ts orders accesses by its own records).
  const accessOn = stableOn && !p.values && !ctx.an.trackRelaxed;
  const counting = countingUnitsOf(ctx, stableOn && countingOn);
  return (s, a, ins, x, cheap) => {
    const ag = s.agents[a]!;
    // A release of an agent holding unfenced generic accesses publishes them (detect-fences.ts:
    // `esc`), and any agent's fence.proxy.async clears what is published: the release and another
    // agent's fence do not commute (in one order a later async-proxy read is `missing-fence`, in
    // the other not), so such a release is explored in every order, whatever the rules below.
    if (x.dirty[a]?.length && publishes(ins.op.op, ag.sub)) return false;
    if (ins.opc === OPC_FENCE_PROXY) return !cheap && accessOn && !multiWarp[a] && stable.fence(s, a, x);
    if (ins.opc === OPC_LD_SHARED || ins.opc === OPC_ST_SHARED) {
      // A read of a buffer nothing but reads can reach any more (settled.ts; warps of PTX roles).
      if (ins.opc === OPC_LD_SHARED && settled !== null && settled(s, a, ins)) return true;
      return !cheap && accessOn && !multiWarp[a] && stable.access(s, a, ins, ag.frame);
    }
    if (ins.opc === OPC_WAIT) return !cheap && stableOn && !multiWarp[a] && stable.wait(s, a, ins, ag.frame);
    if (ins.opc === OPC_WG_WAIT || ins.opc === OPC_BULK_WAIT || ins.opc === OPC_CP_WAIT) {
      // Once its groups are complete they stay complete: an enabled wait_group cannot be
      // disabled and only reads, so it commutes with every other step. (Not for an agent of
      // several warps in lockstep: its wait_group retires elected-thread ghosts, see EG.)
      return stableOn && !multiWarp[a] && m.agentEnabled(s, a);
    }
    if (ins.opc === OPC_BAR_SYNC || ins.opc === OPC_BAR_ARRIVE) {
      // The second step of a bar.sync once its generation completed (it stays enabled and only
      // moves its agent), or a stable arrival (stable.ts).
      if (!stableOn || multiWarp[a]) return false;
      if (ins.opc === OPC_BAR_SYNC && ag.sub >= 0) return m.agentEnabled(s, a);
      return !cheap && stable.named(s, a, ins, ag.frame);
    }
    if (ins.opc === OPC_CLUSTER_ARRIVE || ins.opc === OPC_CLUSTER_WAIT) {
      // A cluster-barrier arrive (PTX ISA §9.7.13.3) commutes with every other agent's step: only
      // the agent's own remote signals in flight disable it, no other step reads its arrival before
      // the round completes, and the round cannot complete without it (exits and the others'
      // arrives only add up to the same completion). An enabled wait stays enabled (a completed
      // round stays complete) and moves only its agent. (Not for an agent of several warps in
      // lockstep: its ghosts retire at its waits, see EG; nor where relaxed.ts orders accesses by
      // its own release and acquire records.)
      return stableOn && !multiWarp[a] && !ctx.an.trackRelaxed && m.agentEnabled(s, a);
    }
    if (ins.opc !== OPC_ARRIVE) return false;
    const key = keyOf(ins.bar!, ag.frame);
    if (key < 0) return false;
    // A local arrive is forced when it is stable (stable.ts: the phase still needs it after
    // everything the others can bring first).
    if (barCta(key) !== p.agents[a]!.cta) return true;
    if (cheap || !stableOn || multiWarp[a]) return false;
    if (stable.arrive(s, a, ins, key, ag.frame)) return true;
    // On a counting barrier, across a phase boundary too (counting-arrive.ts); the arrive publishes
    // no unfenced access (checked above, as for every release).
    const u = counting ? counting[key]! : 0;
    return u > 0 && stable.counting(s, a, ins, key, ag.frame, u);
  };
}

/** The stable-step questions of stable.ts for an instruction's operands (false when an operand faults). */
function stableChecks(ctx: SearchCtx) {
  const { p, m } = ctx;
  const { agentCode, barCta } = ctx.f;
  const wait = (s: MachineState, a: number, ins: OpInstr, f: number[]): boolean => {
    const w = ins.op as Extract<OpInstr['op'], { op: 'mbarrier.wait' }>;
    if (w.dest !== undefined || w.token !== undefined || !ins.ints.parity) return false;
    const key = keyOf(ins.bar!, f);
    if (key < 0 || barCta(key) !== p.agents[a]!.cta) return false;
    let par: number;
    try {
      par = ins.ints.parity(f);
    } catch {
      return false;
    }
    return stableWait(p, agentCode, s, a, key, par);
  };
  const arrive = (s: MachineState, a: number, ins: OpInstr, key: number, f: number[]): boolean => {
    const op = ins.op as Extract<OpInstr['op'], { op: 'mbarrier.arrive' }>;
    if (op.drop || op.noComplete || op.token !== undefined) return false;
    let count: number;
    let raise = 0;
    try {
      const lanes = perThreads(ins.per, p.agents[a]!);
      count = (ins.ints.count ? ins.ints.count(f) : 1) * lanes;
      if (ins.ints.expectTx) raise = ins.ints.expectTx(f) * lanes;
    } catch {
      return false;
    }
    return op.expectTx ? stableExpectArrive(p, agentCode, s, a, key, count, raise) : stableArrive(p, agentCode, s, a, key, count);
  };
  const named = (s: MachineState, a: number, ins: OpInstr, f: number[]): boolean => {
    const info = p.agents[a]!;
    let key: number;
    let count: number;
    try {
      const id = ins.ints.id!(f);
      if (id < 0 || id > 15) return false;
      key = info.cta * NAMED_PER_CTA + id;
      count = ins.ints.threads ? ins.ints.threads(f) : m.ctaThreads[info.cta]!;
    } catch {
      return false;
    }
    if (!(count >= 32) || count % 32 !== 0) return false;
    return stableNamedArrive(p, agentCode, s, a, key, 32 * (ins.per === 'one' ? 1 : info.warps), count);
  };
  const access = (s: MachineState, a: number, ins: OpInstr, f: number[]): boolean => {
    if (!ins.buf || ins.dest !== undefined) return false;
    const key = keyOf(ins.buf, f);
    if (key < 0 || p.bufferOf(key).cta !== p.agents[a]!.cta || p.bufferOf(key).info.space !== 'smem') return false;
    return stableAccess(p, agentCode, s, a, ins, key, ins.opc === OPC_LD_SHARED ? 'r' : 'w');
  };
  const counting = (s: MachineState, a: number, ins: OpInstr, key: number, f: number[], u: number): boolean => {
    const op = ins.op as Extract<OpInstr['op'], { op: 'mbarrier.arrive' }>;
    if (op.drop || op.noComplete || op.token !== undefined || op.expectTx) return false;
    let count: number;
    try {
      count = (ins.ints.count ? ins.ints.count(f) : 1) * m.arriveLanes(ins, p.agents[a]!);
    } catch {
      return false;
    }
    return m.arriveInstrs(ins, p.agents[a]!) === 1 && countingArrive(p, agentCode, s, a, key, count, u);
  };
  const { proxyKey } = ctx.an;
  const fence = (s: MachineState, a: number, x: Extra): boolean =>
    stableProxyFence(p, agentCode, s, a, x.esc !== null && x.esc.length > 0, (b) => x.dirty[b] !== null && x.dirty[b]!.length > 0, (k) => proxyKey[k] === 1, ctx.strict);
  return { wait, arrive, named, access, fence, counting };
}

/**
 * Whether the completion of in-flight operation `o` in `s` (checker data `x`) is a forced step; a
 * TMA landing that cannot complete its phase or a commit taken so is noted in the context
 * (`tmaGhost`, `commitGhost`): it becomes a ghost. `landingsOn`: a landing that completes its
 * phase is forced when it is stable (stable-landing.ts); `countingOn`: with it, a remote arrive's
 * landing on a counting barrier across a phase boundary (counting-arrive.ts).
 */
function forcedLanding(ctx: SearchCtx, landingsOn: boolean, countingOn: boolean): (s: MachineState, o: AsyncOp, x: Extra) => boolean {
  const { p, an } = ctx;
  const { directTxKey, commitOnlyKey, agentCode, ctaAgents, multiWarp } = ctx.f;
  /** The buffers of the copies that landed early on barrier `key` (its TMA ghosts in `x`). */
  const landedOn = (x: Extra, key: number): number[] => {
    const l: number[] = [];
    const tg = x.tghosts;
    if (tg) for (let i = 0; i < tg.length; i += 2) if (tg[i] === key) l.push(tg[i + 1]!);
    return l;
  };
  const counting = countingUnitsOf(ctx, landingsOn && countingOn);
  return (s, o, x) => {
    const fl = s.inflight;
    const ags = s.agents;
    if (o.kind === 'tma') {
      // A landing that cannot complete its phase (all arrivals in, bytes still missing after it, and
      // only copies can change the tx-count) commutes with everything; its write stays visible as a ghost.
      const b = s.bars[o.bar];
      if (!b || b.status !== 'valid') return false;
      // Arrivals still missing: the landing is postponed instead (see postponable), never forced.
      if (b.pending > 0) return false;
      if (directTxKey[o.bar]) return false;
      const chunk = nextCredit(o);
      if (b.tx - chunk <= 0) return landingsOn && b.tx === chunk && stableLanding(p, agentCode, s, o, ctaAgents, landedOn(x, o.bar));
      let remote = false;
      for (const y of fl) if (y.kind === 'remote' && y.bar === o.bar) remote = true;
      if (remote) return false;
      // The order of the landings on this barrier matters only if some of them, landing first,
      // can bring tx to exactly 0 (an early completion): then every order must be explored.
      if (!landingsCommute(s, o.bar, b.tx)) return false;
      ctx.tmaGhost = o.id;
      return true;
    }
    if (o.kind === 'remote') {
      if (!landingsOn || o.remote !== 'arrive') return false;
      if (stableLanding(p, agentCode, s, o, ctaAgents, [])) return true;
      const u = counting && o.bar >= 0 ? counting[o.bar]! : 0;
      return u > 0 && countingLanding(p, agentCode, s, o, ctaAgents, u);
    }
    if (o.kind === 'tc.commit') {
      // A commit arriving on a commit-only barrier without completing its phase (see docs/CHECK.md).
      if (o.seq !== ags[o.agent]!.tcDone) return false; // not enabled: tcgen05 ops complete in issue order
      if (!an.commitOnly || o.targets || o.bar < 0) return false;
      const b = s.bars[o.bar]!;
      if (b.status !== 'valid' || b.pending < 2 || !commitOnlyKey[o.bar]) return false;
      ctx.commitGhost = o.id;
      return true;
    }
    if (o.kind === 'wgmma' || o.kind === 'bulk.store') return landingsOn && !multiWarp[o.agent] && stableGroupOp(p, agentCode, s, o, ctx.m.wgPeers[o.agent] ?? null);
    if (o.kind === 'tc.mma') {
      if (o.seq !== ags[o.agent]!.tcDone) return false; // not enabled
      // With managed TMEM a dealloc may race the MMA: its completion is explored in every order.
      return !an.tmemManaged;
    }
    return false;
  };
}

/**
 * The counting barriers' units of search `ctx` (counting-arrive.ts), or null where the rule is off
 * (`on` false, kernels with memory values or relaxed arrives tracked).
 */
function countingUnitsOf(ctx: SearchCtx, on: boolean): Int32Array | null {
  if (!on || ctx.p.values || ctx.an.trackRelaxed) return null;
  const u = countingUnits(ctx.p, ctx.m);
  return u.some((v) => v > 0) ? u : null;
}
