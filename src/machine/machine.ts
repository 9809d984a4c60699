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
import { diagnostic, init, newBarrier, type MBarrier } from '../model/mbarrier.js';
import { DIAG, type Diagnostic } from '../model/diagnostics.js';
import type { SrcLoc } from '../kernel/ir.js';
import { EvalFault } from '../kernel/expr.js';
import type { AsyncKind, MachineEvent } from './events.js';
import { perThreads, WARP_SLOT, WARPGROUP_SLOT, type AgentInfo, type Instr, type OpInstr, type Program } from './program.js';
import { asyncDef, checkCluster, OPS, tmemAtExit, type OpCtx } from './ops/index.js';
import { clusterResident } from './values.js';
import { choiceArg, cloneState, NAMED_PER_CTA, newStepOut, stateArg, type AgentState, type AsyncOp, type Choice, type MachineState, type StepOut } from './state.js';
import { programArg } from '../model/api-args.js';

export {
  UNINIT_WAIT_BLOCKED, PICKING, PICKED, uninitWaitPasses, newStepOut, cloneState, nextCredit, pendingAsyncGroups, clusterArrivals, NAMED_PER_CTA,
  type Choice, type AgentStatus, type AgentState, type AsyncOp, type NamedBarrier, type MachineState, type StepOut,
} from './state.js';

/** Async ops with ids below this get one shared choice object each (see {@link Machine.enabled}). */
const ASYNC_CHOICES = 4096;


/**
 * The machine for one {@link Program}. Stateless apart from the program: every method takes the
 * state it works on.
 */
export class Machine implements OpCtx {
  /** Threads per CTA (sum over the agents in it), the default count of `bar.sync`. */
  readonly ctaThreads: number[];
  /** Reused by {@link signal} for the model's diagnostics. */
  readonly scratchDiags: Diagnostic[] = [];
  /** Reused by `execAgent` for the buffer keys an MMA reads (copied once complete). */
  readonly scratchKeys: number[] = [];
  /** Agents of each cluster. */
  readonly clusterAgents: number[][];
  /** Agents of each CTA. */
  readonly ctaAgents: number[][];
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
  waitS: MachineState | null = null;
  waitA = -1;
  waitKey = 0;
  waitPar = 0;

  constructor(readonly program: Program) {
    programArg('Machine', program);
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
    const peers: (number[] | null)[] = program.agents.map(() => null);
    for (const a of program.agents) if (a.wgLeader !== a.id) (peers[a.wgLeader] ??= []).push(a.id);
    this.wgPeers = peers;
    this.gated = program.resident < program.grid;
  }

  readonly wgPeers: readonly (readonly number[] | null)[];
  /** Whether some clusters wait to become resident (`resident=` below the grid: machine/values.ts). */
  readonly gated: boolean = false;

  /**
   * About the bytes of one state of this program (what {@link initial} allocates): a record per
   * barrier, agent (with its frame) and named barrier, and the memory cells. Callers ask their
   * governor for it before building a state of the largest launches (tens of MB each).
   */
  stateBytes(): number {
    const p = this.program;
    let frames = 0;
    for (const a of p.agents) frames += p.roles[a.role]!.slots.length;
    return p.ctas * p.barriersPerCta * 64 + p.agents.length * 320 + frames * 8 + p.ctas * NAMED_PER_CTA * 56 + (p.values ? p.values.init.length * 8 : 0);
  }

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
      return { pc: 0, frame, status: 'run', sub: -1, tokens: null, wgGroup: 0, bulkGroup: 0, cpGroup: 0, clusterRound: 0, tcIssued: 0, tcDone: 0, wgIssued: 0, wgDone: 0, lastArrive: -1, tmemHeld: 0, tmemFreed: 0, tmemRelinquished: 0, tcLdUnwaited: 0 };
    });
    const s: MachineState = {
      now: 0, agents, bars,
      named: Array.from({ length: p.ctas * NAMED_PER_CTA }, () => ({ arrived: 0, gen: 0, count: 0, site: 0, asite: 0 })),
      clusterDone: new Array(p.grid).fill(0),
      inflight: [], nextId: 0, trapped: null, events: 0, mem: p.values ? p.values.init.slice() : [],
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
    if (this.gated && !clusterResident(s, this.program.agents[a]!.cluster, this.program.resident, this.clusterAgents)) return false;
    const d = OPS[ins.opc]!;
    const en = d.enabled;
    return en === undefined || en(this, s, a, ins, ag);
  }

  /** True when in-flight operation `o` may progress now (in-order tcgen05 / wgmma streams, cp.async arrives after their copies). */
  asyncEnabled(s: MachineState, o: AsyncOp): boolean {
    if (s.trapped) return false;
    const d = asyncDef(o.kind);
    return d.enabled === undefined || d.enabled(s, o, this);
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
      if (!OPS[ins.opc]!.touchesBar) return -1;
      try {
        return ins.bar!(ag.frame); // negative: the step faults before touching a barrier
      } catch {
        return -1; // the step faults evaluating the same expression
      }
    }
    const o = this.findAsync(s, choice.id);
    return o ? asyncDef(o.kind).touched(o) : -1;
  }


  /**
   * Every enabled choice, agents first (in index order), then asynchronous operations (in issue
   * order). Agent choices, and those of async ops with ids below 4096, are shared frozen objects.
   * `into`, when given, is emptied, filled and returned (no allocation).
   */
  enabled(s: MachineState, into?: Choice[]): Choice[] {
    // Cheap enough for the search's loop: garbage is a TypeError here, not from inside.
    if (!Array.isArray(s?.agents) || !Array.isArray(s.inflight)) stateArg('Machine.enabled', s);
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
    if (!Array.isArray(s?.agents)) stateArg('Machine.finished', s);
    return s.trapped !== null || s.agents.every((a) => a.status !== 'run');
  }

  /** Pure step: a copy of `s` after `choice`, with the events it emitted. */
  step(s: MachineState, choice: Choice, at?: number): { state: MachineState; events: MachineEvent[] } {
    stateArg('Machine.step', s);
    choiceArg('Machine.step', choice, s.agents.length);
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
  emitted(s: MachineState): void {
    s.events++;
  }

  namedKey(a: number, ins: OpInstr, ag: AgentState): number {
    const id = ins.ints.id!(ag.frame);
    return this.program.agents[a]!.cta * NAMED_PER_CTA + (id & (NAMED_PER_CTA - 1));
  }

  mult(ins: OpInstr, info: AgentInfo): number {
    return perThreads(ins.per, info);
  }

  /**
   * An arrive executed per thread is one arrive instruction per warp whose count is the sum over
   * its lanes (H200 conformance vector arrive_threads_spill_3_lanes_on_pending_2); per warp or
   * by one thread, one instruction each. {@link arriveInstrs}: the instructions;
   * {@link arriveLanes}: the lanes per instruction.
   */
  arriveInstrs(ins: OpInstr, info: AgentInfo): number {
    if (ins.per === 'thread') return info.threads % info.warps === 0 ? info.warps : info.threads;
    return ins.per === 'warp' ? info.warps : 1;
  }

  arriveLanes(ins: OpInstr, info: AgentInfo): number {
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

  finish(s: MachineState, a: number, out: StepOut, loc: SrcLoc | undefined): void {
    const ag = s.agents[a]!;
    ag.status = 'done';
    { this.emitted(s); if (out.events && !out.sparse) out.events.push(loc ? { e: 'exit', t: s.now, agent: a, loc } : { e: 'exit', t: s.now, agent: a }); }
    checkCluster(this, s, this.program.agents[a]!.cluster, out);
    tmemAtExit(this, s, a, out);
    if (this.gated) out.other = true; // a later cluster may become resident
  }

  /** Lanes of one warp aggregated into the arrive being signalled (over-arrival messages say so), or 0. */
  laneNote = 0;

  diag(s: MachineState, out: StepOut, d: Diagnostic, agent: number, asyncId: number, bar: number, loc?: SrcLoc, buf = -1): void {
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

  fault(s: MachineState, a: number, out: StepOut, d: Diagnostic, loc: SrcLoc | undefined, bar: number, buf = -1): void {
    this.diag(s, out, d, a, -1, bar, loc, buf);
    if (a >= 0) s.agents[a]!.status = 'trap';
    s.trapped = d;
  }

  /** Reports model diagnostics; returns true if one trapped (the kernel stops). */
  flush(s: MachineState, out: StepOut, diags: Diagnostic[], agent: number, asyncId: number, bar: number, loc?: SrcLoc): boolean {
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

  phaseDone(s: MachineState, out: StepOut, bar: number, n: number, agent: number, asyncId: number): void {
    const b = s.bars[bar]!;
    for (let i = n; i >= 1; i--) {
      out.phases.push(bar);
      const completed = b.phase - i;
      { this.emitted(s); if (out.events) out.events.push({ e: 'phase', t: s.now, bar, completed, agent, async: asyncId }); }
    }
  }

  keyFault(s: MachineState, a: number, out: StepOut, ins: OpInstr, what: string): void {
    const f = s.agents[a]!.frame;
    // The first of the instruction's references of this kind that is out of range, explained.
    const fns = what === 'barrier' ? [ins.bar] : [ins.buf, ...(ins.reads ?? [])];
    const bad = fns.find((fn) => fn && fn(f) < 0);
    const why = bad?.describe ? bad.describe(f) : `the ${what} index or CTA rank is outside its declared array`;
    this.fault(s, a, out, diagnostic(DIAG.indexRange, `${ins.text}: ${why}`), ins.loc, -1);
  }

  barCta(key: number): number {
    return Math.floor(key / this.program.barriersPerCta);
  }

  bufCta(key: number): number {
    return Math.floor(key / this.program.buffersPerCta);
  }

  /** Issues an asynchronous operation (fields in {@link AsyncOp} order; one object shape for all). */
  newAsync(
    s: MachineState, out: StepOut, kind: AsyncKind, agent: number, cta: number, bar: number, buf: number, reads: number[] | null,
    bytes: number, left: number, chunks: number, group: number, count: number, remote: AsyncOp['remote'], targets: number[] | null, loc: SrcLoc,
  ): AsyncOp {
    const ag = s.agents[agent]!;
    const d = asyncDef(kind);
    const seq = d.stream === 'tc' ? ag.tcIssued++ : d.stream === 'wg' ? ag.wgIssued++ : -1;
    const op: AsyncOp = { kind, agent, cta, bar, buf, reads, bytes, left, chunks, group, count, remote, targets, loc, id: s.nextId++, issued: s.now, seq };
    s.inflight.push(op);
    out.issued.push(op);
    { this.emitted(s); if (out.events && !out.sparse) out.events.push({ e: 'async', t: s.now, id: op.id, kind: op.kind, agent: op.agent, cta: op.cta, bytes: op.bytes, bar: op.bar, buf: op.buf, loc: op.loc }); }
    const acc = d.bufAccess;
    if (op.buf >= 0 && acc) {
      { this.emitted(s); if (out.events) out.events.push({ e: 'access', t: s.now, buf: op.buf, rw: acc.rw, proxy: acc.proxy, edge: 'begin', agent: -1, async: op.id, loc: op.loc }); }
    }
    if (op.reads) for (const r of op.reads) { this.emitted(s); if (out.events) out.events.push({ e: 'access', t: s.now, buf: r, rw: 'r', proxy: 'async', edge: 'begin', agent: -1, async: op.id, loc: op.loc }); }
    return op;
  }

  /**
   * Executes agent `a`'s operation through its module ({@link OPS}). `cached`: the barrier key and
   * parity of its parity wait are the ones {@link agentEnabled} just evaluated (`waitKey`, `waitPar`).
   */
  private execAgent(s: MachineState, a: number, out: StepOut, cached: boolean): void {
    const ag = s.agents[a]!;
    const ins = this.agentCode[a]![ag.pc] as OpInstr;
    const d = OPS[ins.opc]!;
    const oe = d.opEvent;
    if (oe === 'always' || (oe === 'first' && ag.sub < 0)) {
      this.emitted(s);
      if (out.events && !out.sparse) {
        if (d.opEventN && ins.ints.n) out.events.push({ e: 'op', t: s.now, op: ins.op.op, text: ins.text, loc: ins.loc, agent: a, async: -1, n: ins.ints.n(ag.frame) });
        else out.events.push({ e: 'op', t: s.now, op: ins.op.op, text: ins.text, loc: ins.loc, agent: a, async: -1 });
      }
    }
    const n = this.mult(ins, this.program.agents[a]!);
    if (d.exec(this, s, a, ins, out, n, cached) && ag.status === 'run') {
      ag.pc++;
      this.advance(s, a, out);
    }
  }

  /** One step of in-flight operation `o` (at index `idx` of `s.inflight`) through its kind's module; removes it once done. */
  private execAsync(s: MachineState, idx: number, o: AsyncOp, out: StepOut): void {
    const d = asyncDef(o.kind);
    if (d.progress(this, s, o, out) !== 'done') return;
    const i = s.inflight[idx] === o ? idx : s.inflight.indexOf(o);
    if (i === 0) s.inflight.shift();
    else if (s.inflight.length - i > 16) s.inflight.splice(i, 1);
    else {
      // Near the end: in place (splice would allocate the array of removed elements).
      const l = s.inflight;
      for (let j = i + 1; j < l.length; j++) l[j - 1] = l[j]!;
      l.pop();
    }
    if (d.stream === 'tc') s.agents[o.agent]!.tcDone++;
    else if (d.stream === 'wg') s.agents[o.agent]!.wgDone++;
    { this.emitted(s); if (out.events && !out.sparse) out.events.push({ e: 'async.done', t: s.now, id: o.id, kind: o.kind, cta: o.cta }); }
  }
}
