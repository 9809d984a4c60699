/**
 * What the {@link Machine} lends an operation module ({@link OpCtx}, `ops/`): the launch's agent
 * tables per CTA and per cluster, the scratch arrays and wait operands one step shares, and the
 * services every module's step calls: events counted, diagnostics and faults (a trapping diagnostic
 * stops the kernel), phase completions, the issue of an asynchronous operation, an agent's exit,
 * an operation's thread multiplicity and arrive aggregation (H200 conformance vector
 * arrive_threads_spill_3_lanes_on_pending_2), and the CTA of a flat barrier or buffer key. The
 * machine's step function (machine.ts) extends it.
 */
import { diagnostic } from '../model/mbarrier.js';
import { DIAG, type Diagnostic } from '../model/diagnostics.js';
import type { SrcLoc } from '../kernel/ir.js';
import type { AsyncKind, MachineEvent } from './events.js';
import { perThreads, type AgentInfo, type OpInstr, type Program } from './program.js';
import { asyncDef, checkCluster, tmemAtExit, type OpCtx } from './ops/index.js';
import { NAMED_PER_CTA, type AgentState, type AsyncOp, type MachineState, type StepOut } from './state.js';
import { programArg } from '../model/api-args.js';

/**
 * The tables and services of {@link OpCtx} for one {@link Program}. Stateless apart from the
 * program: every method takes the state it works on.
 */
export class MachineCtx implements OpCtx {
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
  /**
   * Operands of the parity wait that the Machine's `agentEnabled` evaluated last: barrier key and parity of
   * agent `waitA` in state `waitS`. They depend on the agent's frame only; any `apply` clears
   * them, so `execAgent` may reuse them when the same agent steps next in the same state.
   */
  waitS: MachineState | null = null;
  waitA = -1;
  waitKey = 0;
  waitPar = 0;

  constructor(readonly program: Program) {
    programArg('Machine', program);
    this.ctaThreads = new Array(program.ctas).fill(0);
    this.clusterAgents = Array.from({ length: program.grid }, () => []);
    this.ctaAgents = Array.from({ length: program.ctas }, () => []);
    for (const a of program.agents) {
      this.ctaThreads[a.cta]! += a.threads;
      this.clusterAgents[a.cluster]!.push(a.id);
      this.ctaAgents[a.cta]!.push(a.id);
    }
    const peers: (number[] | null)[] = program.agents.map(() => null);
    for (const a of program.agents) if (a.wgLeader !== a.id) (peers[a.wgLeader] ??= []).push(a.id);
    this.wgPeers = peers;
    this.gated = program.resident < program.grid;
  }

  /** Per wgmma leader: the other warps of its warpgroup (null when it has none). */
  readonly wgPeers: readonly (readonly number[] | null)[];
  /** Whether some clusters wait to become resident (`resident=` below the grid: machine/values.ts). */
  readonly gated: boolean = false;

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
}
