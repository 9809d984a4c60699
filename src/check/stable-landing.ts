/**
 * Stable phase-completing landings, for the partial-order reduction: a TMA landing that completes
 * the current phase of its barrier (every arrival of the phase is in, and its bytes are the last
 * the tx-count misses), or a remote arrive (`mbarrier.arrive` on another CTA's barrier) bringing
 * the phase's last arrivals with the other remote arrives in flight to that barrier (arrivals on
 * one phase commute; only the last one completes it), taken alone when nothing the rest of the
 * kernel can do before it lands depends on it (docs/CHECK.md, "Stable landings"). A remote arrive
 * writes no bytes; the landing of the issuer's last remote signal enables its
 * `barrier.cluster.arrive`, which nothing else enables either.
 *
 * The question is the one of stable.ts, asked about an operation in flight instead of an agent:
 * every agent of the barrier's cluster is run forward from its position while the landing stays in
 * flight (every other operation in flight signals as usual; the barrier cannot complete without
 * the landing). The landing is stable when, at the fixpoint:
 * - nothing reaches the barrier first: no arrival, no tx-count change, no init or inval, no wait
 *   on it that passes before the completion (a wait on an older phase: its phase-alias checks see
 *   whether the phase completed), and no other operation in flight signals it;
 * - nothing accesses the bytes the landing writes, nor those of the copies that landed earlier on
 *   this phase (their ghosts, see detect-access.ts, end with the completion): no generic access,
 *   no operation that issues an access to them or reads them through the async proxy, and no other
 *   operation in flight on them;
 * - the barrier's CTA cannot finish first: some agent of that CTA still running blocks before its
 *   end (an exit with the copy in flight is `inflight-at-exit`).
 * Then the landing commutes with every step the others can take before it: the one thing it
 * changes that a step can observe, the completion, enables the waits of the phase (which nothing
 * else enables) and disables nothing. Taking it alone keeps every reachable hazard, deadlock and
 * final state.
 */
import { nextCredit, type AsyncOp, type MachineState } from '../machine/machine.js';
import type { Instr, OpInstr, Program } from '../machine/program.js';
import { accessesOf, pointAccess } from '../machine/ops/index.js';
import { inflightFixpoint, type Frozen } from './stable.js';
import { namesBytes } from './stable-access.js';
import { alike, clusterReachOf, sameLoc, twinable } from './landing-order.js';

/**
 * True when the landing `o` in `s` (a TMA copy's, or a remote arrive's) completes its barrier's
 * phase (a remote arrive: together with the other remote arrives in flight to it) and is stable
 * (see the module comment). `codes[x]`: agent x's role code; `ctaAgents[c]`: the agents of CTA c;
 * `landed`: the buffer keys of the copies that landed on this phase before (the barrier's TMA
 * ghosts).
 */
export function stableLanding(p: Program, codes: readonly Instr[][], s: MachineState, o: AsyncOp, ctaAgents: readonly (readonly number[])[], landed: readonly number[]): boolean {
  const key = o.bar;
  const b = s.bars[key];
  if (!b || b.status !== 'valid' || key < 0) return false;
  if (o.kind === 'tma') {
    if (b.pending !== 0 || o.buf < 0) return false;
    const chunk = nextCredit(o);
    if (chunk !== o.left || b.tx !== chunk) return false; // not its last bytes, or not the phase's last
  } else if (o.kind === 'remote' && o.remote === 'arrive') {
    // The remote arrives in flight to the barrier bring the phase's last arrivals together, with
    // no bytes missing: each of them (arrivals commute) is asked about with all of them in flight.
    let sum = 0;
    for (const y of s.inflight) if (y.bar === key && y.kind === 'remote' && y.remote === 'arrive') sum += y.count;
    if (b.tx !== 0 || b.pending !== sum) return b.pending > o.count && partialRemoteArrive(p, codes, s, o, ctaAgents);
  } else return false;
  const bufs = o.kind === 'tma' ? [o.buf, ...landed] : [];
  const conflicts = (k: number) => bufs.some((x) => p.buffersOverlap(x, k));
  const asked = (y: AsyncOp) => y.id === o.id || (o.kind === 'remote' && y.kind === 'remote' && y.remote === 'arrive' && y.bar === key);
  for (const y of s.inflight) {
    if (asked(y)) continue;
    if (y.bar === key || (y.targets?.includes(key) ?? false)) return false;
    for (const acc of accessesOf(y)) if (conflicts(acc.buf)) return false;
  }
  const cta = p.barrierOf(key).cta;
  const touch = (_x: number, op: OpInstr, f: number[]): boolean => {
    if (!op.buf && !op.reads) return false;
    if (pointAccess(op.opc) !== undefined && op.buf) {
      const k = op.buf(f);
      return k < 0 || conflicts(k);
    }
    return namesBytes(p, op, f, bufs);
  };
  // The agents of the CTA whose run reaches its end (a run resumed in a later round goes on from
  // where it blocked, so one that ended stays ended).
  const ends = new Set<number>();
  const ended = (x: number) => { if (p.agents[x]!.cta === cta) ends.add(x); };
  // A CTA without agents (a role of `where cta == 0` signalling its peer) cannot block the exit.
  if (!ctaAgents[cta]!.length) return false;
  const ok = inflightFixpoint(p, codes, s, asked, p.agents[o.agent]!.cluster, key,
    (f) => f.arrivals[key]! === 0 && !f.tx[key] && !f.reset[key] && !f.passed[key], touch, null, ended);
  if (!ok) return false;
  for (const x of ctaAgents[cta]!) if (s.agents[x]!.status === 'run' && !ends.has(x)) return true;
  return false;
}

/**
 * A remote arrive that does not complete the phase now (`pending` > its count), taken alone when,
 * with it in flight, the rest of the cluster (run forward, every other operation in flight
 * signalling) brings at most `pending` − its count arrivals to the barrier, no init or inval, and
 * the barrier's CTA cannot finish first. Then the phase completes only once it has landed, with
 * no arrival spilling into the next phase in any order, so it commutes with every arrival, wait
 * and tx-count change the others make (arrivals are counts): taking it now keeps every hazard,
 * deadlock and final state (DeepGEMM's 2-CTA kernel: 16 math warps release each stage of both
 * CTAs, 8 of them through the cluster).
 *
 * The arrives alike it (landing-order.ts: the same instruction of the same CTA's agents, onto the
 * same barrier with the same count, their issuers past every cluster barrier), in flight or issued
 * by the runs, stay in flight with it and bring nothing: a schedule that lands one of them before
 * it is, step for step, a schedule that lands it there instead (the two landings are
 * interchangeable), so only the schedules that land none of them before it need to commute with
 * it (docs/CHECK.md, "Interchangeable remote arrives"). An issuer that runs a stage ahead and
 * arrives again from the same instruction therefore does not count against the room.
 */
function partialRemoteArrive(p: Program, codes: readonly Instr[][], s: MachineState, o: AsyncOp, ctaAgents: readonly (readonly number[])[]): boolean {
  const key = o.bar;
  const room = s.bars[key]!.pending - o.count;
  return remoteLandingRun(p, codes, s, o, ctaAgents, key, (f) => f.arrivals[key]! <= room && !f.reset[key]);
}

/**
 * The forward run shared by the questions about a remote arrive `o` landing on its barrier
 * (`o.bar`) without completing the phase alone ({@link partialRemoteArrive}, and
 * counting-arrive.ts `countingLanding`): the agents of `o`'s cluster run forward with `o` and the
 * arrives alike it (landing-order.ts) held in flight, every other operation in flight signalling;
 * true when `bound` holds at the fixpoint and some running agent of the barrier's CTA
 * (`ctaAgents[c]`: the agents of CTA c) blocks before its end, so the CTA cannot finish with `o`
 * in flight. `bar`: the barrier that must stay gated (not completed) at the fixpoint (stable.ts
 * `frozenFixpoint`; -1: none, `bound` alone decides).
 */
export function remoteLandingRun(p: Program, codes: readonly Instr[][], s: MachineState, o: AsyncOp, ctaAgents: readonly (readonly number[])[], bar: number, bound: (f: Frozen) => boolean): boolean {
  const key = o.bar;
  const cta = p.barrierOf(key).cta;
  // A CTA without agents (a role of `where cta == 0` signalling its peer) cannot block the exit.
  if (!ctaAgents[cta]!.length) return false;
  const ends = new Set<number>();
  const ended = (x: number) => { if (p.agents[x]!.cta === cta) ends.add(x); };
  const reach = clusterReachOf(codes);
  const twins = twinable(s, o, reach);
  const from = p.agents[o.agent]!.cta;
  const skip = twins ? (y: AsyncOp) => y.id === o.id || (twinable(s, y, reach) && alike(p, o, y)) : (y: AsyncOp) => y.id === o.id;
  const held = twins
    ? (x: number, op: OpInstr, pc: number, k: number, count: number) => k === key && count === o.count && p.agents[x]!.cta === from && sameLoc(op.loc, o.loc) && !reach[x]![pc]
    : null;
  const ok = inflightFixpoint(p, codes, s, skip, p.agents[o.agent]!.cluster, bar, bound, null, null, ended, null, held);
  if (!ok) return false;
  for (const x of ctaAgents[cta]!) if (s.agents[x]!.status === 'run' && !ends.has(x)) return true;
  return false;
}
