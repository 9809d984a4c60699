/**
 * The machine's state as plain data: agents' positions and variables, barriers, named and cluster
 * barriers, asynchronous operations in flight, clock; what one step produced ({@link StepOut}); and
 * the small definitions the operation modules (`ops/`), the machine and the checker share.
 */
import { cloneBarrier, type MBarrier, type Token } from '../model/mbarrier.js';
import type { Diagnostic } from '../model/diagnostics.js';
import type { SrcLoc } from '../kernel/ir.js';
import type { AsyncKind, MachineEvent } from './events.js';
import { argError, isRecord } from '../model/api-args.js';

/**
 * `AgentState.sub` of an agent resting at a blocking mbarrier wait on a never-initialized barrier
 * after the wait was diagnosed (`uninitialized-wait`) and did not pass: it stays blocked until the
 * barrier is initialized and its phase completes.
 */
export const UNINIT_WAIT_BLOCKED = -2;

/** `AgentState.sub` of an agent at `choose` (or `try_cancel`'s issuer never) waiting for its alternative to be picked. */
export const PICKING = -3;
/** `AgentState.sub` of an agent at `choose` whose value has been picked (its next step moves on). */
export const PICKED = -4;

/**
 * Whether a wait on a never-initialized barrier passes: as on the H200's zero word, which reads as
 * phase 0 (docs/HARDWARE.md, "Waits on a word that was never initialized"): parity 1 passes,
 * parity 0 does not.
 */
export function uninitWaitPasses(parity: number): boolean {
  return (parity & 1) === 1;
}

/** A step's choice: an agent executes its next operation, or an asynchronous operation progresses. */
export type Choice = { kind: 'agent'; agent: number } | { kind: 'async'; id: number };

/** Execution status of an agent. */
export type AgentStatus = 'run' | 'done' | 'trap';

/** Mutable per-agent state. */
export interface AgentState {
  /** Index into the role's code; always at an operation or at `end`. */
  pc: number;
  /** Variable slots (builtins first, then the role's variables). */
  frame: number[];
  status: AgentStatus;
  /**
   * `bar.sync` in progress: the named-barrier generation the agent waits to complete, or -1;
   * {@link UNINIT_WAIT_BLOCKED} at a blocking mbarrier wait that was diagnosed on a
   * never-initialized barrier and did not pass.
   */
  sub: number;
  /** Tokens held in variables (by slot); null when none. */
  tokens: Record<number, Token> | null;
  /** wgmma groups committed so far. */
  wgGroup: number;
  /** Bulk async-groups committed so far. */
  bulkGroup: number;
  /** cp.async-groups (non-bulk, PTX ISA §9.7.9.25.3.2) committed so far. */
  cpGroup: number;
  /**
   * `barrier.cluster` rounds: 2 × the rounds this agent has arrived in, plus 1 while its latest
   * arrival has not been waited for by a `barrier.cluster.wait`. A wait without that bit waits for
   * the agent's own next arrival, which never comes (PTX ISA §9.7.13.3: the wait needs every
   * non-exited thread's arrival). See {@link clusterArrivals}.
   */
  clusterRound: number;
  /** tcgen05 operations (mma, commit) issued / completed, in order (they complete in issue order). */
  tcIssued: number;
  tcDone: number;
  /** wgmma operations issued / completed, in order. */
  wgIssued: number;
  wgDone: number;
  /**
   * Where the agent's last `bar.arrive` landed: generation × 16 + barrier id, or -1. A second
   * arrive landing in that same generation laps the barrier (diagnostic `lapping`).
   */
  lastArrive: number;
  /**
   * Tensor Memory (PTX ISA §9.7.16.7.1): bit `i` set when this agent (warp) holds allocation slot
   * `i` of its CTA (`Program.tmemCols`), by its `tcgen05.alloc`; the columns stay its own until its
   * `tcgen05.dealloc`.
   */
  tmemHeld: number;
  /** Slots this agent deallocated since they were last allocated (messages: "after its dealloc"). */
  tmemFreed: number;
  /** 1 once this agent executed `tcgen05.relinquish_alloc_permit` (its CTA may not allocate any more). */
  tmemRelinquished: number;
  /** `tcgen05.ld` operations (asynchronous form) issued since this agent's last `tcgen05.wait::ld`. */
  tcLdUnwaited: number;
}

/** An asynchronous operation in flight. */
export interface AsyncOp {
  id: number;
  kind: AsyncKind;
  /** Issuing agent. */
  agent: number;
  /** CTA whose unit carries it (the destination CTA for TMA loads and remote signals). */
  cta: number;
  /** Barrier key it signals, or -1. */
  bar: number;
  /** Buffer key it accesses, or -1. Reads of MMAs are in `reads`. */
  buf: number;
  reads: number[] | null;
  /** Total bytes (TMA, stores, cp.async). */
  bytes: number;
  /** Bytes not yet credited (TMA). */
  left: number;
  /** Partial credits still to come (TMA). */
  chunks: number;
  /** wgmma / bulk / cp.async group number (agent-relative), or -1. */
  group: number;
  /** Arrival multiplicity (cpa.arrive, remote arrive) or expect_tx bytes (remote). */
  count: number;
  /** For `remote`: which signal it carries. For `tc.commit`: extra multicast targets. */
  remote: 'arrive' | 'arrive.expect_tx' | 'arrive_drop' | 'expect_tx' | 'complete_tx' | null;
  targets: number[] | null;
  /** Cycle it was issued at. */
  issued: number;
  /** Position in its issuer's in-order stream (tcgen05 or wgmma), or -1. */
  seq: number;
  loc: SrcLoc;
}

/** Named barrier of one CTA: threads arrived in the current generation, generations completed. */
export interface NamedBarrier {
  arrived: number;
  gen: number;
  count: number;
  /**
   * The first aligned `bar.sync` / aligned `bar.arrive` instruction that arrived in the current
   * generation (role × 4096 + pc + 1), or 0: another site of the same role meeting it is the
   * `aligned-barrier` diagnostic (PTX ISA §9.7.13.1).
   */
  site: number;
  asite: number;
}

/** The whole machine state: plain data, copied with {@link cloneState}. */
export interface MachineState {
  /** Current time in cycles (set by the driver with each step). */
  now: number;
  agents: AgentState[];
  bars: MBarrier[];
  /** Named barriers, 16 per CTA (key cta × 16 + id). */
  named: NamedBarrier[];
  /** Completed cluster-barrier rounds, per cluster. */
  clusterDone: number[];
  inflight: AsyncOp[];
  nextId: number;
  /** Set when the H200 would have trapped (or the machine stopped on an undefined operation). */
  trapped: Diagnostic | null;
  /** Number of events emitted so far (counted even when not recorded). */
  events: number;
  /** Memory cells of values (machine/values.ts: buffer keys, launch-control flags); empty when the program uses none. */
  mem: number[];
}

/** What one step produced besides the new state. Reused across steps by fast drivers. */
export interface StepOut {
  /** Recorded events, or null to only count them. */
  events: MachineEvent[] | null;
  /** Barrier keys whose phase completed during the step. */
  phases: number[];
  /** Asynchronous operations issued during the step. */
  issued: AsyncOp[];
  /** True when a named barrier, cluster barrier or async group changed (parked agents may proceed). */
  other: boolean;
  /**
   * Record only the events the checker's hazard checks read: diagnostics, phase completions, waits
   * and accesses other than their end edges (no op, async issue or completion, arrive, tx, sync
   * or exit events; they are still counted). Default false.
   */
  sparse?: boolean;
  /** Diagnostics reported during the step (always kept, also when events are not recorded). */
  diags: { diag: Diagnostic; agent: number; async: number; bar: number; loc?: SrcLoc; t: number }[];
}

/** A fresh {@link StepOut}; `record` keeps events. */
export function newStepOut(record: boolean): StepOut {
  return { events: record ? [] : null, phases: [], issued: [], other: false, diags: [], sparse: false };
}

/** Throws a TypeError `fn: s must be a MachineState …` unless `s` has a machine state's arrays. */
export function stateArg(fn: string, s: unknown, name = 's'): asserts s is MachineState {
  if (!isRecord(s) || !Array.isArray(s.agents) || !Array.isArray(s.bars) || !Array.isArray(s.named) || !Array.isArray(s.clusterDone) || !Array.isArray(s.inflight) || !Array.isArray(s.mem) || !s.agents.every((a) => isRecord(a) && Array.isArray(a.frame))) {
    argError(fn, name, 'a MachineState (from Machine.initial or Machine.step)', s);
  }
}

/**
 * Throws a TypeError `fn: choice must be …` unless `c` is a {@link Choice}: `{ kind: 'agent', agent }`
 * with an agent index below `agents`, or `{ kind: 'async', id }` with an integer id (whether it
 * is enabled is the machine's question).
 */
export function choiceArg(fn: string, c: unknown, agents: number): asserts c is Choice {
  const ok = isRecord(c) && (
    (c.kind === 'agent' && Number.isInteger(c.agent) && (c.agent as number) >= 0 && (c.agent as number) < agents)
    || (c.kind === 'async' && Number.isInteger(c.id)));
  if (!ok) argError(fn, 'choice', `a Choice from Machine.enabled ({ kind: 'agent', agent: 0..${agents - 1} } or { kind: 'async', id })`, c);
}

/** Copy of a state (for the checker and the pure {@link Machine.step}). */
export function cloneState(s: MachineState): MachineState {
  stateArg('cloneState', s);
  return {
    now: s.now,
    agents: s.agents.map((a) => ({ ...a, frame: a.frame.slice(), tokens: a.tokens ? { ...a.tokens } : null })),
    bars: s.bars.map(cloneBarrier),
    named: s.named.map((n) => ({ ...n })),
    clusterDone: s.clusterDone.slice(),
    inflight: s.inflight.map((o) => ({ ...o })),
    nextId: s.nextId,
    trapped: s.trapped,
    events: s.events,
    mem: s.mem.length ? s.mem.slice() : s.mem,
  };
}

/** Named barriers per CTA (PTX ISA §9.7.13.1: ids 0..15); a named barrier's key is cta × 16 + id. */
export const NAMED_PER_CTA = 16;

/**
 * Bytes the next partial credit of an in-flight TMA copy carries: the rest when it is the last
 * credit, else an equal share rounded down to 16 bytes (the H200 credits a copy's bytes in 16-byte
 * units, docs/HARDWARE.md, Conformance vectors). The one definition the machine and the checker use.
 */
export function nextCredit(o: Pick<AsyncOp, 'left' | 'chunks'>): number {
  return o.chunks <= 1 ? o.left : Math.max(16, Math.floor(o.left / o.chunks / 16) * 16);
}

/**
 * Whether a `wait_group N` of an agent that has committed `committed` groups waits for an
 * operation of group `group`: every group but the N most recent must be complete (PTX ISA
 * §9.7.15.7.2, §9.7.9.27.2.2, §9.7.9.25.3.3). The rule {@link pendingAsyncGroups} ≤ N decides the
 * wait with: it passes once no operation of a group this names is pending.
 */
export function waitGroupNeeds(committed: number, n: number, group: number): boolean {
  return group < committed - n;
}

/**
 * Committed groups of asynchronous operations of `kind` that agent `a` still has pending in `s`:
 * the count `wgmma.wait_group N` / `cp.async.bulk.wait_group N` compares with N: from the oldest
 * group with an operation in flight to the last committed one; the open, uncommitted group does not
 * count (PTX ISA §9.7.15.7.2, §9.7.9.27.2.2, §9.7.9.25.3.3: `cp.async.wait_group`; an empty group
 * is trivially complete, but a pending group before it still counts it). {@link Machine.agentEnabled} decides wait_group with
 * it; reports (the checker's trace notes) use it too.
 */
/** Rounds of the cluster barrier agent state `ag` has arrived in (see `AgentState.clusterRound`). */
export const clusterArrivals = (ag: { clusterRound: number }): number => ag.clusterRound >> 1;

export function pendingAsyncGroups(s: MachineState, a: number, kind: 'wgmma' | 'bulk.store' | 'cp.async', leader = a): number {
  const ag = s.agents[a]!;
  const committed = kind === 'wgmma' ? ag.wgGroup : kind === 'cp.async' ? ag.cpGroup : ag.bulkGroup;
  // A warp of a warpgroup whose leader has not committed as many groups yet waits for them too.
  let oldest = leader === a ? committed : Math.min(committed, s.agents[leader]!.wgGroup);
  for (const o of s.inflight) if (o.agent === leader && o.kind === kind && o.group < oldest) oldest = o.group;
  return committed - oldest;
}
