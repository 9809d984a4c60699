/**
 * The machine: the state of a whole launch (agents' positions and variables, barriers, named and
 * cluster barriers, in-flight asynchronous operations, clock) and the one step function that every
 * driver uses. A {@link Choice} says which enabled agent or asynchronous completion goes next; the
 * simulator picks by time, the checker tries all, a person picks in the explorer.
 *
 * `apply(state, choice, out)` performs one step in place (the caller owns `state`); `step` is its
 * pure form (it copies first). Semantics of mbarrier operations come only from `model/`; this file
 * sequences them: multiplicity of per-thread operations, remote and asynchronous signals, FIFO
 * order of tcgen05 / wgmma / bulk groups (PTX ISA §9.7.9.25.1.1, §9.7.15.7, §9.7.16.6),
 * named barriers (`bar.sync` generations, PTX ISA §9.7.13.1) and cluster barriers (§9.7.13.3).
 */
import {
  arriveEach, cloneBarrier, completeTx, cpAsyncArriveIssue, diagnostic, expectTx, init, inval, newBarrier,
  pendingCount, testParity, testToken, TRAP, type MBarrier, type Token,
} from '../model/mbarrier.js';
import { DIAG, type Diagnostic } from '../model/diagnostics.js';
import type { Op, SrcLoc } from '../kernel/ir.js';
import { EvalFault } from '../kernel/expr.js';
import type { AsyncKind, MachineEvent } from './events.js';
import { WARP_SLOT, WARPGROUP_SLOT, type AgentInfo, type Instr, type OpInstr, type Program } from './program.js';

/**
 * `AgentState.sub` of an agent resting at a blocking mbarrier wait on a never-initialized barrier
 * after the wait was diagnosed (`uninitialized-wait`) and did not pass: it stays blocked until the
 * barrier is initialized and its phase completes.
 */
export const UNINIT_WAIT_BLOCKED = -2;

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
  /** `barrier.cluster.arrive` rounds this agent has arrived in. */
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
  /** wgmma / bulk group number (agent-relative), or -1. */
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

/** Copy of a state (for the checker and the pure {@link Machine.step}). */
export function cloneState(s: MachineState): MachineState {
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
  };
}

const NAMED_PER_CTA = 16;
/** Async ops with ids below this get one shared choice object each (see {@link Machine.enabled}). */
const ASYNC_CHOICES = 4096;

/** The IR operation with mnemonic `K` (the machine switches on `OpInstr.opc`, which TypeScript cannot narrow on). */
type OpK<K extends Op['op']> = Extract<Op, { op: K }>;

/**
 * Bytes the next partial credit of an in-flight TMA copy carries: the rest when it is the last
 * credit, else an equal share rounded down to 16 bytes (the H200 credits a copy's bytes in 16-byte
 * units, FINDINGS-tensor.md TT5). The one definition the machine and the checker use.
 */
export function nextCredit(o: Pick<AsyncOp, 'left' | 'chunks'>): number {
  return o.chunks <= 1 ? o.left : Math.max(16, Math.floor(o.left / o.chunks / 16) * 16);
}

/** Options of a plain arrive (shared: the model never keeps or changes them). */
const PLAIN_ARRIVE = Object.freeze({ drop: false, noComplete: false });

/**
 * The machine for one {@link Program}. Stateless apart from the program: every method takes the
 * state it works on.
 */
export class Machine {
  /** Threads per CTA (sum over the agents in it), the default count of `bar.sync`. */
  private readonly ctaThreads: number[];
  /** Reused by {@link signal} for the model's diagnostics. */
  private readonly scratchDiags: Diagnostic[] = [];
  /** Reused by `execAgent` for the buffer keys an MMA reads (copied once complete). */
  private readonly scratchKeys: number[] = [];
  /** Agents of each cluster. */
  private readonly clusterAgents: number[][];
  /** Agents of each CTA. */
  private readonly ctaAgents: number[][];
  /** The (frozen, shared) choice of each agent that {@link enabled} returns. */
  private readonly agentChoice: Choice[];
  /** The (frozen, shared) choices of async ops with small ids that {@link enabled} returned. */
  private readonly asyncChoice: Choice[] = [];
  /** Each agent's role code (a shortcut for `program.roles[program.agents[a].role].code`). */
  private readonly agentCode: Instr[][];
  /**
   * Operands of the parity wait that {@link agentEnabled} evaluated last: barrier key and parity of
   * agent `waitA` in state `waitS`. They depend on the agent's frame only; any {@link apply} clears
   * them, so `execAgent` may reuse them when the same agent steps next in the same state.
   */
  private waitS: MachineState | null = null;
  private waitA = -1;
  private waitKey = 0;
  private waitPar = 0;

  constructor(readonly program: Program) {
    this.agentChoice = program.agents.map((_, i) => Object.freeze({ kind: 'agent' as const, agent: i }));
    this.ctaThreads = new Array(program.ctas).fill(0);
    this.clusterAgents = Array.from({ length: program.grid }, () => []);
    this.ctaAgents = Array.from({ length: program.ctas }, () => []);
    for (const a of program.agents) {
      this.ctaThreads[a.cta]! += a.threads;
      this.clusterAgents[a.cluster]!.push(a.id);
      this.ctaAgents[a.cta]!.push(a.id);
    }
    this.agentCode = program.agents.map((a) => program.roles[a.role]!.code);
    this.wgPeers = program.agents.map(() => null);
    for (const a of program.agents) {
      if (a.wgLeader === a.id) continue;
      (this.wgPeers[a.wgLeader] ??= []).push(a.id);
    }
  }

  /**
   * Per wgmma leader: the other warps of its warpgroup (null when it has none). A wgmma is one
   * warpgroup-collective operation (`.sync.aligned`, PTX ISA §9.7.15.5.2): it completes only after
   * every warp of the warpgroup has issued it.
   */
  private readonly wgPeers: (number[] | null)[];

  /** The initial state: barriers declared `init: 'auto'` are initialized and published. */
  /**
   * The initial state. Each agent runs its local instructions up to its first operation; an
   * expression that cannot be evaluated there stops it (`out`, if given, receives the diagnostic).
   */
  initial(out: StepOut = newStepOut(false)): MachineState {
    const p = this.program;
    const bars: MBarrier[] = [];
    for (let cta = 0; cta < p.ctas; cta++) {
      for (const info of p.barriers) {
        for (let i = 0; i < info.length; i++) {
          const b = newBarrier();
          if (info.init === 'auto' && (info.ctaOnly < 0 || info.ctaOnly === cta % p.clusterSize)) init(b, info.count);
          bars.push(b);
        }
      }
    }
    const agents: AgentState[] = p.agents.map((a) => {
      const rc = p.roles[a.role]!;
      const frame = new Array<number>(rc.slots.length).fill(0);
      frame[0] = a.rank;
      frame[1] = a.instance;
      frame[2] = p.clusterSize;
      frame[3] = a.cluster;
      frame[4] = rc.threads;
      frame[5] = rc.warps;
      frame[WARP_SLOT] = a.warp;
      frame[WARPGROUP_SLOT] = a.warp >> 2;
      return { pc: 0, frame, status: 'run', sub: -1, tokens: null, wgGroup: 0, bulkGroup: 0, clusterRound: 0, tcIssued: 0, tcDone: 0, wgIssued: 0, wgDone: 0, lastArrive: -1 };
    });
    const s: MachineState = {
      now: 0, agents, bars,
      named: Array.from({ length: p.ctas * NAMED_PER_CTA }, () => ({ arrived: 0, gen: 0, count: 0 })),
      clusterDone: new Array(p.grid).fill(0),
      inflight: [], nextId: 0, trapped: null, events: 0,
    };
    for (let i = 0; i < agents.length; i++) this.guarded(s, i, out, () => this.advance(s, i, out));
    return s;
  }

  /** The operation agent `a` will execute next, or null when it has finished. */
  nextOp(s: MachineState, a: number): OpInstr | null {
    const ag = s.agents[a]!;
    if (ag.status !== 'run') return null;
    const ins = this.agentCode[a]![ag.pc]!;
    return ins.i === 'op' ? ins : null;
  }

  /** True when agent `a` can take a step now (it is running and not blocked). */
  agentEnabled(s: MachineState, a: number): boolean {
    try {
      return this.enabledUnguarded(s, a);
    } catch (err) {
      if (err instanceof EvalFault) return true; // the step will report it
      throw err;
    }
  }

  /**
   * Runs `body` (an agent's step); an expression that cannot be evaluated (division by zero, loop
   * step 0) stops the agent with an `arith` diagnostic at the operation it is on.
   */
  private guarded(s: MachineState, a: number, out: StepOut, body: () => void): void {
    try {
      body();
    } catch (err) {
      this.evalFault(s, a, out, err);
    }
  }

  /** Reports an {@link EvalFault} thrown during agent `a`'s step (rethrows anything else). */
  private evalFault(s: MachineState, a: number, out: StepOut, err: unknown): void {
    {
      if (!(err instanceof EvalFault)) throw err;
      const ag = s.agents[a]!;
      const ins = this.program.roles[this.program.agents[a]!.role]!.code[ag.pc];
      const loc = ins && 'loc' in ins ? ins.loc : undefined;
      this.fault(s, a, out, diagnostic(DIAG.arith, `${err.message} in an expression of ${this.program.agents[a]!.name}`), loc, -1);
    }
  }

  private enabledUnguarded(s: MachineState, a: number): boolean {
    if (s.trapped) return false;
    const ag = s.agents[a]!;
    if (ag.status !== 'run') return false;
    const ins = this.agentCode[a]![ag.pc]!;
    if (ins.i !== 'op') return false;
    switch (ins.opc) {
      case 5: { // mbarrier.wait
        const op = ins.op as Extract<OpInstr['op'], { op: 'mbarrier.wait' }>;
        if (op.dest !== undefined) return true;
        const key = ins.bar!(ag.frame);
        if (key < 0) return true; // faults when executed
        if (Math.floor(key / this.program.barriersPerCta) !== this.program.agents[a]!.cta) return true;
        const b = s.bars[key]!;
        if (b.status === 'uninit') {
          // Diagnosed when executed (once); then it passes or blocks as the H200's zero word does.
          if (ag.sub !== UNINIT_WAIT_BLOCKED) return true;
          const t = op.token !== undefined ? ag.tokens?.[ins.token!] : undefined;
          return uninitWaitPasses(op.token !== undefined ? (t ? t.phase : 0) : ins.ints.parity!(ag.frame));
        }
        if (b.status !== 'valid') return true; // diagnosed when executed
        if (op.token !== undefined) {
          const t = ag.tokens?.[ins.token!];
          return t ? (b.phase & 1) !== (t.phase & 1) : true;
        }
        const par = ins.ints.parity!(ag.frame);
        this.waitS = s;
        this.waitA = a;
        this.waitKey = key;
        this.waitPar = par;
        return testParity(b, par);
      }
      case 19: // bar.sync
        return ag.sub < 0 || s.named[this.namedKey(a, ins, ag)]!.gen > ag.sub;
      case 24: // barrier.cluster.wait
        return s.clusterDone[this.program.agents[a]!.cluster]! >= ag.clusterRound;
      case 23: // barrier.cluster.arrive
        // The arrive releases the agent's earlier memory operations at cluster scope, remote
        // mbarrier signals included (PTX ISA §9.7.13.3, §8.9.4): they land before it takes effect.
        for (const o of s.inflight) if (o.agent === a && o.kind === 'remote') return false;
        return true;
      case 16: // wgmma.wait_group
        return pendingAsyncGroups(s, a, 'wgmma', this.program.agents[a]!.wgLeader) <= ins.ints.n!(ag.frame);
      case 10: // cp.async.bulk.wait_group
        return pendingAsyncGroups(s, a, 'bulk.store') <= ins.ints.n!(ag.frame);
      default:
        return true;
    }
  }

  /** True when in-flight operation `o` may progress now (in-order tcgen05 / wgmma streams, cp.async arrives after their copies). */
  asyncEnabled(s: MachineState, o: AsyncOp): boolean {
    if (s.trapped) return false;
    switch (o.kind) {
      case 'tc.mma':
      case 'tc.commit':
        return o.seq === s.agents[o.agent]!.tcDone;
      case 'wgmma': {
        if (o.seq !== s.agents[o.agent]!.wgDone) return false;
        const peers = this.wgPeers[o.agent];
        if (peers) for (const w of peers) if (s.agents[w]!.wgIssued <= o.seq) return false;
        return true;
      }
      case 'cpa.arrive':
        for (const x of s.inflight) {
          if (x.id >= o.id) break;
          if (x.agent === o.agent && x.kind === 'cp.async') return false;
        }
        return true;
      default:
        return true;
    }
  }

  /** The in-flight operation with this id, or undefined (binary search: ids increase along the list). */
  findAsync(s: MachineState, id: number): AsyncOp | undefined {
    const i = this.asyncIndex(s, id);
    return i >= 0 ? s.inflight[i] : undefined;
  }

  private asyncIndex(s: MachineState, id: number): number {
    const a = s.inflight;
    let lo = 0;
    let hi = a.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const x = a[mid]!.id;
      if (x === id) return mid;
      if (x < id) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }

  /**
   * The barrier `apply(s, choice)` may mutate (for a driver that copies barriers on write): its key,
   * -1 when the step mutates no barrier, or -2 when it may mutate several (a multicast commit).
   * Agent steps mutate at most the barrier their operation names (init, inval, local arrive,
   * expect_tx, complete_tx, cp.async.mbarrier.arrive); asynchronous steps the barrier they signal.
   * The key is a superset answer: the step may also leave that barrier unchanged.
   */
  barTouched(s: MachineState, choice: Choice): number {
    if (choice.kind === 'agent') {
      const ag = s.agents[choice.agent]!;
      if (ag.status !== 'run') return -1;
      const ins = this.agentCode[choice.agent]![ag.pc]!;
      if (ins.i !== 'op') return -1;
      const opc = ins.opc;
      if (opc > 4 && opc !== 18) return -1;
      try {
        return ins.bar!(ag.frame); // negative: the step faults before touching a barrier
      } catch {
        return -1; // the step faults evaluating the same expression
      }
    }
    const o = this.findAsync(s, choice.id);
    if (!o) return -1;
    switch (o.kind) {
      case 'tma':
      case 'remote':
      case 'cpa.arrive':
        return o.bar;
      case 'tc.commit':
        return o.targets ? -2 : o.bar;
      default:
        return -1;
    }
  }

  /**
   * Every enabled choice, agents first (in index order), then asynchronous operations (in issue
   * order). Agent choices, and those of async ops with ids below 4096, are shared frozen objects.
   * `into`, when given, is emptied, filled and returned (no allocation).
   */
  enabled(s: MachineState, into?: Choice[]): Choice[] {
    const out: Choice[] = into ?? [];
    while (out.length) out.pop();
    for (let a = 0; a < s.agents.length; a++) if (this.agentEnabled(s, a)) out.push(this.agentChoice[a]!);
    for (const o of s.inflight) {
      if (!this.asyncEnabled(s, o)) continue;
      const id = o.id;
      if (id >= ASYNC_CHOICES) out.push({ kind: 'async', id });
      else out.push(this.asyncChoice[id] ??= Object.freeze({ kind: 'async' as const, id }));
    }
    return out;
  }

  /** True when every agent has finished (or the kernel trapped). */
  finished(s: MachineState): boolean {
    return s.trapped !== null || s.agents.every((a) => a.status !== 'run');
  }

  /** Pure step: a copy of `s` after `choice`, with the events it emitted. */
  step(s: MachineState, choice: Choice, at?: number): { state: MachineState; events: MachineEvent[] } {
    const next = cloneState(s);
    const out = newStepOut(true);
    this.apply(next, choice, out, at);
    return { state: next, events: out.events! };
  }

  /**
   * Performs `choice` on `s` in place at time `at` (cycles; default: unchanged). Resets and fills
   * `out`. Choosing a disabled agent or async operation throws (a driver bug, not a kernel bug);
   * `enabledChecked` skips that check for a driver that has just made it.
   */
  apply(s: MachineState, choice: Choice, out: StepOut, at?: number, enabledChecked = false): void {
    if (at !== undefined) s.now = at;
    const events = out.events;
    if (events) while (events.length) events.pop();
    // Short arrays: popping is cheaper than a `length` store (a runtime call).
    const phases = out.phases;
    while (phases.length) phases.pop();
    const issued = out.issued;
    while (issued.length) issued.pop();
    out.other = false;
    if (out.diags.length) out.diags.length = 0;
    if (choice.kind === 'agent') {
      if (!enabledChecked && !this.agentEnabled(s, choice.agent)) throw new Error(`machine: agent ${choice.agent} is not enabled`);
      // The wait operands agentEnabled evaluated for this agent in this state, if it was the last call.
      const cached = this.waitS === s && this.waitA === choice.agent;
      this.waitS = null;
      try {
        this.execAgent(s, choice.agent, out, cached);
      } catch (err) {
        this.evalFault(s, choice.agent, out, err);
      }
    } else {
      const idx = this.asyncIndex(s, choice.id);
      const o = idx >= 0 ? s.inflight[idx] : undefined;
      this.waitS = null;
      if (!o || (!enabledChecked && !this.asyncEnabled(s, o))) throw new Error(`machine: async operation ${choice.id} is not enabled`);
      this.execAsync(s, idx, o, out);
    }
  }

  // ---------------------------------------------------------------------------------------------

  /** Counts an event (events are counted even when not recorded). */
  private emitted(s: MachineState): void {
    s.events++;
  }

  private namedKey(a: number, ins: OpInstr, ag: AgentState): number {
    const id = ins.ints.id!(ag.frame);
    return this.program.agents[a]!.cta * NAMED_PER_CTA + (id & (NAMED_PER_CTA - 1));
  }

  private mult(ins: OpInstr, info: AgentInfo): number {
    return ins.per === 'thread' ? info.threads : ins.per === 'warp' ? info.warps : 1;
  }

  /**
   * An arrive executed per thread is one arrive instruction per warp whose count is the sum over
   * its lanes (H200 conformance vector arrive_threads_spill_3_lanes_on_pending_2); per warp or
   * by one thread, one instruction each. {@link arriveInstrs}: the instructions;
   * {@link arriveLanes}: the lanes per instruction.
   */
  private arriveInstrs(ins: OpInstr, info: AgentInfo): number {
    if (ins.per === 'thread') return info.threads % info.warps === 0 ? info.warps : info.threads;
    return ins.per === 'warp' ? info.warps : 1;
  }

  private arriveLanes(ins: OpInstr, info: AgentInfo): number {
    return ins.per === 'thread' && info.threads % info.warps === 0 ? info.threads / info.warps : 1;
  }

  /** Runs local instructions (assignments, jumps) until the agent rests on an operation or finishes. */
  private advance(s: MachineState, a: number, out: StepOut): void {
    const ag = s.agents[a]!;
    const code = this.agentCode[a]!;
    let guard = 0;
    for (;;) {
      const ins = code[ag.pc]!;
      switch (ins.i) {
        case 'set':
          ag.frame[ins.slot] = ins.e(ag.frame);
          ag.pc++;
          break;
        case 'jmp':
          ag.pc = ins.to;
          break;
        case 'jz':
          ag.pc = ins.e(ag.frame) ? ag.pc + 1 : ins.to;
          break;
        case 'end':
          this.finish(s, a, out, undefined);
          return;
        case 'op':
          return;
      }
      if (++guard > 10_000_000) {
        this.fault(s, a, out, diagnostic(DIAG.indexRange, 'a loop ran 10,000,000 steps without a synchronization operation'), undefined, -1);
        return;
      }
    }
  }

  private finish(s: MachineState, a: number, out: StepOut, loc: SrcLoc | undefined): void {
    const ag = s.agents[a]!;
    ag.status = 'done';
    { this.emitted(s); if (out.events && !out.sparse) out.events.push(loc ? { e: 'exit', t: s.now, agent: a, loc } : { e: 'exit', t: s.now, agent: a }); }
    this.checkCluster(s, this.program.agents[a]!.cluster, out);
  }

  /** Lanes of one warp aggregated into the arrive being signalled (over-arrival messages say so), or 0. */
  private laneNote = 0;

  private diag(s: MachineState, out: StepOut, d: Diagnostic, agent: number, asyncId: number, bar: number, loc?: SrcLoc, buf = -1): void {
    if (this.laneNote && agent >= 0 && d.code === DIAG.overArrival) {
      d = { ...d, message: d.message.replace(/^(mbarrier\.\S+) with count (\d+)/, `$1 by the ${this.laneNote} threads of one warp of ${this.program.agents[agent]!.name} (the H200 makes a warp's lanes one arrive with their summed count, $2)`) };
    }
    out.diags.push(loc ? { diag: d, agent, async: asyncId, bar, loc, t: s.now } : { diag: d, agent, async: asyncId, bar, t: s.now });
    if (out.events) {
      this.emitted(s);
      const ev: MachineEvent = loc ? { e: 'diag', t: s.now, diag: d, agent, async: asyncId, bar, loc } : { e: 'diag', t: s.now, diag: d, agent, async: asyncId, bar };
      if (buf >= 0) ev.buf = buf;
      out.events.push(ev);
    } else this.emitted(s);
  }

  private fault(s: MachineState, a: number, out: StepOut, d: Diagnostic, loc: SrcLoc | undefined, bar: number, buf = -1): void {
    this.diag(s, out, d, a, -1, bar, loc, buf);
    if (a >= 0) s.agents[a]!.status = 'trap';
    s.trapped = d;
  }

  /** Reports model diagnostics; returns true if one trapped (the kernel stops). */
  private flush(s: MachineState, out: StepOut, diags: Diagnostic[], agent: number, asyncId: number, bar: number, loc?: SrcLoc): boolean {
    let trapped = false;
    for (const d of diags) {
      this.diag(s, out, d, agent, asyncId, bar, loc);
      if (d.trap) {
        trapped = true;
        if (!s.trapped) s.trapped = d;
      }
    }
    if (trapped && agent >= 0) s.agents[agent]!.status = 'trap';
    return trapped;
  }

  private phaseDone(s: MachineState, out: StepOut, bar: number, n: number, agent: number, asyncId: number): void {
    const b = s.bars[bar]!;
    for (let i = n; i >= 1; i--) {
      out.phases.push(bar);
      const completed = b.phase - i;
      { this.emitted(s); if (out.events) out.events.push({ e: 'phase', t: s.now, bar, completed, agent, async: asyncId }); }
    }
  }

  private keyFault(s: MachineState, a: number, out: StepOut, ins: OpInstr, what: string): void {
    const f = s.agents[a]!.frame;
    // The first of the instruction's references of this kind that is out of range, explained.
    const fns = what === 'barrier' ? [ins.bar] : [ins.buf, ...(ins.reads ?? [])];
    const bad = fns.find((fn) => fn && fn(f) < 0);
    const why = bad?.describe ? bad.describe(f) : `the ${what} index or CTA rank is outside its declared array`;
    this.fault(s, a, out, diagnostic(DIAG.indexRange, `${ins.text}: ${why}`), ins.loc, -1);
  }

  private barCta(key: number): number {
    return Math.floor(key / this.program.barriersPerCta);
  }

  private bufCta(key: number): number {
    return Math.floor(key / this.program.buffersPerCta);
  }

  /** Issues an asynchronous operation (fields in {@link AsyncOp} order; one object shape for all). */
  private newAsync(
    s: MachineState, out: StepOut, kind: AsyncKind, agent: number, cta: number, bar: number, buf: number, reads: number[] | null,
    bytes: number, left: number, chunks: number, group: number, count: number, remote: AsyncOp['remote'], targets: number[] | null, loc: SrcLoc,
  ): AsyncOp {
    const ag = s.agents[agent]!;
    const seq = kind === 'tc.mma' || kind === 'tc.commit' ? ag.tcIssued++ : kind === 'wgmma' ? ag.wgIssued++ : -1;
    const op: AsyncOp = { kind, agent, cta, bar, buf, reads, bytes, left, chunks, group, count, remote, targets, loc, id: s.nextId++, issued: s.now, seq };
    s.inflight.push(op);
    out.issued.push(op);
    { this.emitted(s); if (out.events && !out.sparse) out.events.push({ e: 'async', t: s.now, id: op.id, kind: op.kind, agent: op.agent, cta: op.cta, bytes: op.bytes, bar: op.bar, buf: op.buf, loc: op.loc }); }
    if (op.buf >= 0 && (op.kind === 'tma' || op.kind === 'cp.async' || op.kind === 'bulk.store' || op.kind === 'tc.mma')) {
      const rw = op.kind === 'bulk.store' ? 'r' : 'w';
      { this.emitted(s); if (out.events) out.events.push({ e: 'access', t: s.now, buf: op.buf, rw, proxy: op.kind === 'cp.async' ? 'generic' : 'async', edge: 'begin', agent: -1, async: op.id, loc: op.loc }); }
    }
    if (op.reads) for (const r of op.reads) { this.emitted(s); if (out.events) out.events.push({ e: 'access', t: s.now, buf: r, rw: 'r', proxy: 'async', edge: 'begin', agent: -1, async: op.id, loc: op.loc }); }
    return op;
  }

  /** Applies a local arrive-family signal to barrier `bar`; returns false if the kernel trapped. */
  private signal(
    s: MachineState, out: StepOut, bar: number, kind: NonNullable<AsyncOp['remote']>, n: number, count: number, bytes: number,
    agent: number, asyncId: number, loc: SrcLoc | undefined, token: Token | undefined, noComplete = false,
  ): boolean {
    const b = s.bars[bar]!;
    // A scratch array: the model pushes only when something is undefined (rare).
    const diags = this.scratchDiags;
    if (diags.length) diags.length = 0;
    let r: number;
    const phase = b.phase;
    if (kind === 'expect_tx' || kind === 'complete_tx') {
      r = 0;
      for (let j = 0; j < n && r !== TRAP; j++) {
        const x = kind === 'expect_tx' ? expectTx(b, bytes, diags) : completeTx(b, bytes, diags);
        r = x === TRAP ? TRAP : r + x;
      }
      const total = bytes * n;
      { this.emitted(s); if (out.events && !out.sparse) out.events.push(loc ? { e: kind, t: s.now, bar, bytes: total, phase, tx: b.tx, agent, async: asyncId, loc } : { e: kind, t: s.now, bar, bytes: total, phase, tx: b.tx, agent, async: asyncId }); }
    } else {
      if (token) {
        token.barrier = bar;
        token.phase = b.phase;
        token.pendingBefore = b.pending;
        token.txBefore = b.tx;
        token.noComplete = noComplete;
      }
      const opts = kind === 'arrive' && !noComplete ? PLAIN_ARRIVE
        : kind === 'arrive.expect_tx' ? { drop: false, noComplete, expectTx: bytes } : { drop: kind === 'arrive_drop', noComplete };
      r = arriveEach(b, n, count, opts, diags);
      const et = kind === 'arrive.expect_tx' ? bytes * n : 0;
      { this.emitted(s); if (out.events && !out.sparse) out.events.push(loc
          ? { e: 'arrive', t: s.now, bar, count: n * count, expectTx: et, drop: opts.drop, phase, pending: b.pending, tx: b.tx, agent, async: asyncId, loc }
          : { e: 'arrive', t: s.now, bar, count: n * count, expectTx: et, drop: opts.drop, phase, pending: b.pending, tx: b.tx, agent, async: asyncId }); }
    }
    if (diags.length && this.flush(s, out, diags.splice(0), agent, asyncId, bar, loc)) return false;
    if (r > 0) this.phaseDone(s, out, bar, r, agent, asyncId);
    return true;
  }

  /**
   * Executes agent `a`'s operation. `cached`: the barrier key and parity of its parity wait are
   * the ones {@link agentEnabled} just evaluated (`waitKey`, `waitPar`).
   */
  private execAgent(s: MachineState, a: number, out: StepOut, cached: boolean): void {
    const p = this.program;
    const info = p.agents[a]!;
    const ag = s.agents[a]!;
    const ins = this.agentCode[a]![ag.pc] as OpInstr;
    const op = ins.op;
    const opc = ins.opc;
    const f = ag.frame;
    const loc = ins.loc;
    let advance = true;
    if (opc !== 5 /* mbarrier.wait */ && !(opc === 19 /* bar.sync */ && ag.sub >= 0)) {
      this.emitted(s);
      if (out.events && !out.sparse) {
        if ((op.op === 'wgmma.wait_group' || op.op === 'cp.async.bulk.wait_group') && ins.ints.n) out.events.push({ e: 'op', t: s.now, op: op.op, text: ins.text, loc, agent: a, async: -1, n: ins.ints.n(f) });
        else out.events.push({ e: 'op', t: s.now, op: op.op, text: ins.text, loc, agent: a, async: -1 });
      }
    }
    const m = this.mult(ins, info);
    switch (opc) {
      case 0: // mbarrier.init
      case 1: { // mbarrier.inval
        const key = ins.bar!(f);
        if (key < 0) return this.keyFault(s, a, out, ins, 'barrier');
        if (this.barCta(key) !== info.cta) {
          return this.fault(s, a, out, diagnostic(DIAG.remoteWait, `${op.op} on ${p.barrierName(key)}, a barrier of another CTA`, s.bars[key]), loc, key);
        }
        const b = s.bars[key]!;
        const diags: Diagnostic[] = [];
        if (op.op === 'mbarrier.init') {
          const count = ins.ints.count ? ins.ints.count(f) : p.barrierOf(key).info.count;
          for (let j = 0; j < Math.min(m, 2); j++) init(b, count, diags);
        } else {
          for (let j = 0; j < Math.min(m, 2); j++) if (inval(b, diags) === TRAP) break;
        }
        if (diags.length && this.flush(s, out, diags, a, -1, key, loc)) return;
        break;
      }
      case 2: // mbarrier.arrive
      case 3: // mbarrier.expect_tx
      case 4: { // mbarrier.complete_tx
        const key = ins.bar!(f);
        if (key < 0) return this.keyFault(s, a, out, ins, 'barrier');
        const ao = op as OpK<'mbarrier.arrive'>;
        const kind: NonNullable<AsyncOp['remote']> = opc === 3 ? 'expect_tx' : opc === 4 ? 'complete_tx'
          : ao.drop ? 'arrive_drop' : ao.expectTx ? 'arrive.expect_tx' : 'arrive';
        const count = ins.ints.count ? ins.ints.count(f) : 1;
        const bytes = ins.ints.bytes ? ins.ints.bytes(f) : ins.ints.expectTx ? ins.ints.expectTx(f) : 0;
        const cta = this.barCta(key);
        if (cta !== info.cta) {
          // shared::cluster signal into another CTA: in flight until it lands (PTX ISA §9.7.13.15.8).
          this.newAsync(s, out, 'remote', a, cta, key, -1, null, bytes, 0, 0, -1, m * count, kind, null, loc);
          break;
        }
        let token: Token | undefined;
        if (opc === 2 && ins.token !== undefined) {
          token = { barrier: key, phase: 0, pendingBefore: 0, txBefore: 0, noComplete: false };
        }
        const noComplete = opc === 2 && !!ao.noComplete;
        const isArrive = kind === 'arrive' || kind === 'arrive_drop' || kind === 'arrive.expect_tx';
        const n = isArrive ? this.arriveInstrs(ins, info) : m;
        const lanes = isArrive ? this.arriveLanes(ins, info) : 1;
        this.laneNote = lanes > 1 ? lanes : 0;
        const ok = this.signal(s, out, key, kind, n, count * lanes, bytes * (kind === 'arrive.expect_tx' ? lanes : 1), a, -1, loc, token, noComplete);
        this.laneNote = 0;
        if (!ok) return;
        if (token && ins.token !== undefined) {
          ag.tokens = { ...(ag.tokens ?? {}), [ins.token]: token };
          f[ins.token] = token.phase;
        }
        break;
      }
      case 5: { // mbarrier.wait
        const op = ins.op as OpK<'mbarrier.wait'>;
        const key = cached ? this.waitKey : ins.bar!(f);
        if (key < 0) return this.keyFault(s, a, out, ins, 'barrier');
        if (this.barCta(key) !== info.cta) {
          return this.fault(s, a, out, diagnostic(DIAG.remoteWait, `mbarrier.${op.form} on ${p.barrierName(key)}, a barrier of another CTA`, s.bars[key]), loc, key);
        }
        const b = s.bars[key]!;
        if (b.status === 'uninit') {
          // The H200 does not trap on a wait on a zero word: it reads as phase 0 (docs/HARDWARE.md).
          const t = op.token !== undefined ? ag.tokens?.[ins.token!] : undefined;
          const par = (op.token !== undefined ? (t ? t.phase : 0) : ins.ints.parity!(f)) & 1;
          const pass = uninitWaitPasses(par);
          if (ag.sub !== UNINIT_WAIT_BLOCKED) {
            const res = op.dest !== undefined ? `returns ${pass ? 1 : 0}` : pass ? 'passes' : 'blocks';
            const d = diagnostic(DIAG.uninitializedWait, `mbarrier.${op.form} on ${p.barrierName(key)}, which was never initialized: on a zero word it ${res} (parity ${par}, as on phase 0)`, b);
            this.flush(s, out, [d], a, -1, key, loc);
          }
          { this.emitted(s); if (out.events) out.events.push({ e: 'wait', t: s.now, agent: a, bar: key, parity: par, phase: 0, pass, token: op.token !== undefined, loc }); }
          if (op.dest !== undefined) f[ins.dest!] = pass ? 1 : 0;
          else if (!pass) {
            ag.sub = UNINIT_WAIT_BLOCKED;
            advance = false;
          }
          if (advance) ag.sub = -1;
          break;
        }
        if (b.status !== 'valid') {
          const d = diagnostic(DIAG.invalidated, `mbarrier.${op.form} on ${p.barrierName(key)}, which is invalidated`, b);
          return this.fault(s, a, out, d, loc, key);
        }
        ag.sub = -1;
        let pass: boolean;
        let par: number;
        let diags: Diagnostic[] | null = null;
        if (op.token !== undefined) {
          const t = ag.tokens?.[ins.token!];
          if (!t) return this.fault(s, a, out, diagnostic(DIAG.foreignToken, `${op.token} holds no token from an arrive`), loc, key);
          diags = [];
          pass = testToken(b, key, t, diags);
          par = t.phase & 1;
        } else {
          par = cached ? this.waitPar : ins.ints.parity!(f);
          if (par !== 0 && par !== 1) diags = [diagnostic(DIAG.parityOperand, `phase parity operand ${par} is neither 0 nor 1`, b)];
          pass = testParity(b, par);
        }
        if (diags && diags.length && this.flush(s, out, diags, a, -1, key, loc)) return;
        const isToken = op.token !== undefined;
        const phase = b.phase;
        { this.emitted(s); if (out.events) out.events.push({ e: 'wait', t: s.now, agent: a, bar: key, parity: par & 1, phase, pass, token: isToken, loc }); }
        if (op.dest !== undefined) f[ins.dest!] = pass ? 1 : 0;
        break;
      }
      case 6: { // mbarrier.pending_count
        const t = ag.tokens?.[ins.token!];
        if (!t) return this.fault(s, a, out, diagnostic(DIAG.pendingCountToken, `${(op as OpK<'mbarrier.pending_count'>).token} holds no token from an arrive`), loc, -1);
        const diags: Diagnostic[] = [];
        f[ins.dest!] = pendingCount(t, diags);
        if (diags.length) this.flush(s, out, diags, a, -1, t.barrier, loc);
        break;
      }
      case 7: { // cp.async.bulk
        const key = ins.bar!(f);
        if (key < 0) return this.keyFault(s, a, out, ins, 'barrier');
        const buf = ins.buf!(f);
        if (buf < 0) return this.keyFault(s, a, out, ins, 'buffer');
        const bytes = ins.ints.bytes!(f);
        if (bytes <= 0 || bytes % 16 !== 0) {
          return this.fault(s, a, out, diagnostic(DIAG.bulkSize, `${ins.text}: ${bytes} bytes is not a positive multiple of 16`), loc, key);
        }
        const chunks = Math.max(1, Math.min(ins.ints.chunks ? ins.ints.chunks(f) : 1, bytes / 16));
        const mask = ins.ints.multicast ? ins.ints.multicast(f) : -1;
        const clusterBase = info.cluster * p.clusterSize;
        const barRank = this.barCta(key) - clusterBase;
        const bufRank = this.bufCta(buf) - clusterBase;
        if (mask < 0 && barRank !== bufRank) {
          // Without multicast the mbarrier must be in the destination's CTA (PTX ISA §9.7.9.25.4.1,
          // §9.7.9.27.1.2 with .cta_group::1): where the bytes would be credited is undefined.
          return this.fault(s, a, out, diagnostic(DIAG.tmaBarrierCta,
            `${ins.text}: its mbarrier ${p.barrierName(key)} is in CTA ${barRank} but its destination ${p.bufferName(buf)} is in CTA ${bufRank}; without multicast the mbarrier must be in the destination's CTA`, s.bars[key]), loc, key);
        }
        // Destination ranks: the buffer's, or (multicast) every rank in the mask, in ascending order.
        const r0 = mask < 0 ? bufRank : 0;
        const r1 = mask < 0 ? bufRank + 1 : p.clusterSize;
        for (let j = 0; j < m; j++) {
          for (let r = r0; r < r1; r++) {
            if (mask >= 0 && !(mask & (1 << r))) continue;
            // Multicast: data and complete_tx land at the same CTA-relative offsets in each destination (PTX ISA §9.7.9.25.4.1).
            const dBar = key + (r - barRank) * p.barriersPerCta;
            const dBuf = buf + (r - bufRank) * p.buffersPerCta;
            this.newAsync(s, out, 'tma', a, clusterBase + r, dBar, dBuf, null, bytes, bytes, chunks, -1, 0, null, null, loc);
          }
        }
        break;
      }
      case 8: { // cp.async.bulk.store
        const buf = ins.buf!(f);
        if (buf < 0) return this.keyFault(s, a, out, ins, 'buffer');
        const bytes = ins.ints.bytes!(f);
        for (let j = 0; j < m; j++) this.newAsync(s, out, 'bulk.store', a, info.cta, -1, buf, null, bytes, bytes, 1, ag.bulkGroup, 0, null, null, loc);
        break;
      }
      case 9: // cp.async.bulk.commit_group
        ag.bulkGroup++;
        break;
      case 15: // wgmma.commit_group
        ag.wgGroup++;
        break;
      case 10: // cp.async.bulk.wait_group
      case 16: // wgmma.wait_group
        break;
      case 11: // tcgen05.mma
      case 14: { // wgmma.mma_async
        // wgmma is warpgroup-collective: the warpgroup's leader warp starts the MMA (see AgentInfo.wgLeader).
        if (opc === 14 && info.wgLeader !== a) {
          ag.wgIssued++;
          break;
        }
        const rf = ins.reads!;
        const keys = this.scratchKeys; // may hold more from an earlier MMA: only the first rf.length count
        for (let j = 0; j < rf.length; j++) {
          const k = rf[j]!(f);
          if (k < 0) return this.keyFault(s, a, out, ins, 'buffer');
          keys[j] = k;
        }
        const reads = keys.slice(0, rf.length);
        const acc = op.op === 'tcgen05.mma' ? ins.buf!(f) : -1;
        if (op.op === 'tcgen05.mma' && acc < 0) return this.keyFault(s, a, out, ins, 'buffer');
        const { m: mm, n, k } = (op as OpK<'tcgen05.mma'>).shape;
        this.newAsync(s, out, opc === 11 ? 'tc.mma' : 'wgmma', a, info.cta, -1, acc, reads, 2 * mm * n * k, 0, 1, opc === 14 ? ag.wgGroup : -1, 0, null, null, loc);
        break;
      }
      case 12: { // tcgen05.commit
        const key = ins.bar!(f);
        if (key < 0) return this.keyFault(s, a, out, ins, 'barrier');
        let targets: number[] | null = null;
        if (ins.ints.multicast) {
          const mask = ins.ints.multicast(f);
          const base = info.cluster * p.clusterSize;
          const rank = this.barCta(key) - base;
          targets = [];
          for (let r = 0; r < p.clusterSize; r++) if (mask & (1 << r)) targets.push(key + (r - rank) * p.barriersPerCta);
        }
        this.newAsync(s, out, 'tc.commit', a, info.cta, targets ? -1 : key, -1, null, 0, 0, 1, -1, 1, null, targets, loc);
        break;
      }
      case 13: // tcgen05.ld
      case 25: // ld.shared
      case 26: { // st.shared
        const buf = ins.buf!(f);
        if (buf < 0) return this.keyFault(s, a, out, ins, 'buffer');
        const rw = op.op === 'st.shared' ? 'w' : 'r';
        const bc = this.bufCta(buf);
        if (bc !== info.cta && this.ctaAgents[bc]!.every((o) => s.agents[o]!.status === 'done')) {
          // Distributed shared memory of a CTA that has exited is gone (PTX ISA §9.7.9.25.2). The
          // access is still recorded, so what it races with is reported too.
          this.diag(s, out, diagnostic(DIAG.exitedCta,
            `${ins.text}: ${rw === 'w' ? 'writes' : 'reads'} ${p.bufferName(buf)}, shared memory of CTA ${bc - info.cluster * p.clusterSize}, after every thread of that CTA has exited`), a, -1, -1, loc, buf);
        }
        { this.emitted(s); if (out.events) out.events.push({ e: 'access', t: s.now, buf, rw, proxy: 'generic', edge: 'point', agent: a, async: -1, loc }); }
        break;
      }
      case 17: { // cp.async
        const buf = ins.buf!(f);
        if (buf < 0) return this.keyFault(s, a, out, ins, 'buffer');
        const bytes = ins.ints.bytes!(f);
        this.newAsync(s, out, 'cp.async', a, info.cta, -1, buf, null, bytes, bytes, 1, -1, 0, null, null, loc);
        break;
      }
      case 18: { // cp.async.mbarrier.arrive
        const key = ins.bar!(f);
        if (key < 0) return this.keyFault(s, a, out, ins, 'barrier');
        if (this.barCta(key) !== info.cta) {
          return this.fault(s, a, out, diagnostic(DIAG.remoteWait, `cp.async.mbarrier.arrive on ${p.barrierName(key)}, a barrier of another CTA`, s.bars[key]), loc, key);
        }
        const diags: Diagnostic[] = [];
        for (let j = 0; j < m; j++) if (cpAsyncArriveIssue(s.bars[key]!, (op as OpK<'cp.async.mbarrier.arrive'>).noinc, diags) === TRAP) break;
        if (diags.length && this.flush(s, out, diags, a, -1, key, loc)) return;
        this.newAsync(s, out, 'cpa.arrive', a, info.cta, key, -1, null, 0, 0, 1, -1, m, null, null, loc);
        break;
      }
      case 19: // bar.sync
      case 20: { // bar.arrive
        if (ag.sub < 0) {
          // PTX ISA §9.7.13.1: ids 0..15; the thread count a positive multiple of the warp size.
          const id = ins.ints.id!(f);
          const n = ins.ints.threads ? ins.ints.threads(f) : 32;
          if (id < 0 || id > 15 || n < 32 || n % 32 !== 0) {
            const what = id < 0 || id > 15 ? `id ${id} is outside 0..15` : `thread count ${n} is not a positive multiple of 32`;
            return this.fault(s, a, out, diagnostic(DIAG.namedBarrier, `${ins.text}: the named barrier ${what}`), loc, -1);
          }
        }
        const nk = this.namedKey(a, ins, ag);
        const nb = s.named[nk]!;
        if (op.op === 'bar.sync' && ag.sub >= 0) {
          // Second half of bar.sync: the generation this agent arrived in has completed.
          ag.sub = -1;
          { this.emitted(s); if (out.events && !out.sparse) out.events.push({ e: 'sync', t: s.now, agent: a, kind: 'bar.sync.done', id: nk % NAMED_PER_CTA, loc }); }
          break;
        }
        const count = ins.ints.threads ? ins.ints.threads(f) : this.ctaThreads[info.cta]!;
        nb.count = count;
        const warps = ins.per === 'one' ? 1 : info.warps;
        let gen = nb.gen;
        if (opc === 20) {
          // A non-blocking arrive that lands in the generation this agent's previous arrive landed in:
          // its threads count twice toward one generation (bug pattern B03).
          const idn = nk % NAMED_PER_CTA;
          if (ag.lastArrive === nb.gen * NAMED_PER_CTA + idn) {
            const d = diagnostic(DIAG.lapping, `${info.name} arrives on named barrier ${idn} again while the generation its previous bar.arrive joined (${nb.arrived} of ${count} threads) has not completed: its threads count twice toward one generation`);
            this.diag(s, out, d, a, -1, -1, loc);
          }
        }
        // Barriers count whole warps (PTX ISA §9.7.13.1): each warp adds 32 threads.
        for (let w = 0; w < warps; w++) {
          gen = nb.gen;
          nb.arrived += 32;
          if (nb.arrived >= count) {
            nb.arrived -= count;
            nb.gen++;
            out.other = true;
            const id = nk % NAMED_PER_CTA;
            { this.emitted(s); if (out.events && !out.sparse) out.events.push({ e: 'sync', t: s.now, agent: a, kind: 'named.done', id, loc }); }
          }
        }
        const id = nk % NAMED_PER_CTA;
        if (opc === 20) ag.lastArrive = gen * NAMED_PER_CTA + id;
        { this.emitted(s); if (out.events && !out.sparse) out.events.push({ e: 'sync', t: s.now, agent: a, kind: (op as OpK<'bar.sync' | 'bar.arrive'>).op, id, loc }); }
        if (op.op === 'bar.sync') {
          ag.sub = gen;
          advance = false; // completes in a second step once generation `gen` is done
          if (nb.gen > gen) {
            // our own arrival completed it: still take the second step (keeps steps uniform)
          }
        }
        break;
      }
      case 23: { // barrier.cluster.arrive
        ag.clusterRound++;
        { this.emitted(s); if (out.events && !out.sparse) out.events.push({ e: 'sync', t: s.now, agent: a, kind: 'cluster.arrive', id: 0, loc }); }
        this.checkCluster(s, info.cluster, out);
        break;
      }
      case 24: // barrier.cluster.wait
        { this.emitted(s); if (out.events && !out.sparse) out.events.push({ e: 'sync', t: s.now, agent: a, kind: 'cluster.wait', id: 0, loc }); }
        break;
      case 21: // fence.proxy.async
      case 22: // fence.mbarrier_init
      case 27: // work
        break;
      case 28: // exit
        ag.pc++;
        this.finish(s, a, out, loc);
        return;
    }
    if (advance && ag.status === 'run') {
      ag.pc++;
      this.advance(s, a, out);
    }
  }

  private checkCluster(s: MachineState, cl: number, out: StepOut): void {
    const members = this.clusterAgents[cl]!;
    for (;;) {
      const next = s.clusterDone[cl]! + 1;
      let all = true;
      let any = false;
      for (const a of members) {
        const ag = s.agents[a]!;
        if (ag.status !== 'run') continue;
        if (ag.clusterRound < next) {
          all = false;
          break;
        }
        any = true;
      }
      if (!all || !any) return;
      s.clusterDone[cl] = next;
      out.other = true;
      { this.emitted(s); if (out.events && !out.sparse) out.events.push({ e: 'sync', t: s.now, agent: -1, kind: 'cluster.done', id: next, cluster: cl }); }
    }
  }

  private execAsync(s: MachineState, idx: number, o: AsyncOp, out: StepOut): void {
    let done = true;
    switch (o.kind) {
      case 'tma': {
        // One partial credit; the H200 credits a copy's bytes in 16-byte units, grouped differently on each run (FINDINGS-tensor.md TT5).
        const chunk = nextCredit(o);
        o.left -= chunk;
        o.chunks--;
        done = o.left <= 0;
        if (done) { this.emitted(s); if (out.events && !out.sparse) out.events.push({ e: 'access', t: s.now, buf: o.buf, rw: 'w', proxy: 'async', edge: 'end', agent: -1, async: o.id, loc: o.loc }); }
        if (!this.signal(s, out, o.bar, 'complete_tx', 1, 1, chunk, -1, o.id, o.loc, undefined)) return;
        break;
      }
      case 'remote':
        if (!this.signal(s, out, o.bar, o.remote!, 1, o.remote === 'expect_tx' || o.remote === 'complete_tx' ? 1 : o.count, o.bytes, -1, o.id, o.loc, undefined)) return;
        out.other = true; // a barrier.cluster.arrive may wait for it
        break;
      case 'tc.commit':
        if (!o.targets) {
          if (!this.signal(s, out, o.bar, 'arrive', 1, 1, 0, -1, o.id, o.loc, undefined)) return;
        } else for (const bar of o.targets) if (!this.signal(s, out, bar, 'arrive', 1, 1, 0, -1, o.id, o.loc, undefined)) return;
        break;
      case 'cpa.arrive':
        if (!this.signal(s, out, o.bar, 'arrive', o.count, 1, 0, -1, o.id, o.loc, undefined)) return;
        break;
      case 'bulk.store':
      case 'cp.async':
      case 'tc.mma':
      case 'wgmma':
        if (o.buf >= 0) {
          const rw = o.kind === 'bulk.store' ? 'r' : 'w';
          { this.emitted(s); if (out.events && !out.sparse) out.events.push({ e: 'access', t: s.now, buf: o.buf, rw, proxy: o.kind === 'cp.async' ? 'generic' : 'async', edge: 'end', agent: -1, async: o.id, loc: o.loc }); }
        }
        if (o.reads) for (const r of o.reads) { this.emitted(s); if (out.events && !out.sparse) out.events.push({ e: 'access', t: s.now, buf: r, rw: 'r', proxy: 'async', edge: 'end', agent: -1, async: o.id, loc: o.loc }); }
        if (o.kind === 'bulk.store' || o.kind === 'wgmma') out.other = true;
        break;
    }
    if (done) {
      const i = s.inflight[idx] === o ? idx : s.inflight.indexOf(o);
      if (i === 0) s.inflight.shift();
      else if (s.inflight.length - i > 16) s.inflight.splice(i, 1);
      else {
        // Near the end: in place (splice would allocate the array of removed elements).
        const l = s.inflight;
        for (let j = i + 1; j < l.length; j++) l[j - 1] = l[j]!;
        l.pop();
      }
      if (o.kind === 'tc.mma' || o.kind === 'tc.commit') s.agents[o.agent]!.tcDone++;
      else if (o.kind === 'wgmma') s.agents[o.agent]!.wgDone++;
      { this.emitted(s); if (out.events && !out.sparse) out.events.push({ e: 'async.done', t: s.now, id: o.id, kind: o.kind, cta: o.cta }); }
    }
  }
}

/**
 * Committed groups of asynchronous operations of `kind` that agent `a` still has pending in `s`:
 * the count `wgmma.wait_group N` / `cp.async.bulk.wait_group N` compares with N: from the oldest
 * group with an operation in flight to the last committed one; the open, uncommitted group does not
 * count (PTX ISA §9.7.15.7.2, §9.7.9.25.4.3). {@link Machine.agentEnabled} decides wait_group with
 * it; reports (the checker's trace notes) use it too.
 */
export function pendingAsyncGroups(s: MachineState, a: number, kind: 'wgmma' | 'bulk.store', leader = a): number {
  const ag = s.agents[a]!;
  const committed = kind === 'wgmma' ? ag.wgGroup : ag.bulkGroup;
  // A warp of a warpgroup whose leader has not committed as many groups yet waits for them too.
  let oldest = leader === a ? committed : Math.min(committed, s.agents[leader]!.wgGroup);
  for (const o of s.inflight) if (o.agent === leader && o.kind === kind && o.group < oldest) oldest = o.group;
  return committed - oldest;
}
