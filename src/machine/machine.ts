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
import { DIAG } from '../model/diagnostics.js';
import { EvalFault } from '../kernel/expr.js';
import type { MachineEvent } from './events.js';
import { WARP_SLOT, WARPGROUP_SLOT, type Instr, type OpInstr, type Program } from './program.js';
import { asyncDef, OPS } from './ops/index.js';
import { clusterResident } from './values.js';
import { choiceArg, cloneState, NAMED_PER_CTA, newStepOut, stateArg, type AgentState, type AsyncOp, type Choice, type MachineState, type StepOut } from './state.js';
import { MachineCtx } from './machine-ctx.js';

export {
  UNINIT_WAIT_BLOCKED, PICKING, PICKED, uninitWaitPasses, newStepOut, cloneState, nextCredit, pendingAsyncGroups, clusterArrivals, NAMED_PER_CTA,
  type Choice, type AgentStatus, type AgentState, type AsyncOp, type NamedBarrier, type MachineState, type StepOut,
} from './state.js';

/** Async ops with ids below this get one shared choice object each (see {@link Machine.enabled}). */
const ASYNC_CHOICES = 4096;


/**
 * The machine for one {@link Program}. Stateless apart from the program: every method takes the
 * state it works on. Its tables and the services it lends the operation modules: machine-ctx.ts.
 */
export class Machine extends MachineCtx {
  /** The (frozen, shared) choice of each agent that {@link enabled} returns. */
  private readonly agentChoice: Choice[];
  /** The (frozen, shared) choices of async ops with small ids that {@link enabled} returned. */
  private readonly asyncChoice: Choice[] = [];
  /** Each agent's role code (a shortcut for `program.roles[program.agents[a].role].code`). */
  private readonly agentCode: Instr[][];

  constructor(program: Program) {
    super(program);
    this.agentChoice = program.agents.map((_, i) => Object.freeze({ kind: 'agent' as const, agent: i }));
    this.agentCode = program.agents.map((a) => program.roles[a.role]!.code);
  }

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
