/**
 * The timed simulator: a deterministic discrete-event driver of the machine. It picks the next
 * choice by time — each agent pays an issue cost per operation, blocked waiters wake a fixed
 * latency after the phase completes, TMA copies move through a per-SM engine at the configured
 * bandwidth, MMAs run back to back on the CTA's tensor core — and records spans for timelines.
 * All semantics come from the machine's step function.
 *
 * Ties are broken by insertion order, so a run is a pure function of (kernel, parameters, timing,
 * seed). With a seed, asynchronous latencies get ±`jitter` from a seeded PRNG (mulberry32).
 */
import { Machine, newStepOut, type StepOut } from '../machine/machine.js';
import type { MachineEvent } from '../machine/events.js';
import { explainHang, type HangReport } from '../machine/hang.js';
import { perThreads, type OpInstr, type Program } from '../machine/program.js';
import type { SrcLoc } from '../kernel/ir.js';
import { boundOption, DEFAULT_MAX_MEMORY, Governor, type Bound } from '../machine/governor.js';
import { H200, validateTiming } from './timing.js';
import { ISSUE_COST, multicastExtra, type IssueArgs } from './issue-cost.js';
import { OPS } from '../machine/ops/index.js';
import { asyncScheduler } from './async-schedule.js';
import { stepText } from '../machine/step-text.js';
import { mulberry32, Queue } from './queue.js';
import { IDLE_PER_STEP, type SimOptions, type SimResult, type SimStats, type SimVerdict, type Span } from './result.js';
import { argError, objectArg, positiveBound, programArg } from '../model/api-args.js';
export { IDLE_PER_STEP, LEDGER_EVENT_KINDS, type SimOptions, type SimResult, type SimStats, type SimVerdict, type Span } from './result.js';

// Payload encoding: agents are 2·a (even), async op completions 2·id + 1 (odd).

/** Every key of {@link SimOptions}: `simulate` refuses any other (a misspelt bound would be no bound). */
const SIM_OPTION_KEYS = ['timing', 'seed', 'recordEvents', 'eventKinds', 'recordSpans', 'maxSteps', 'maxMemory', 'timeoutMs', 'activeSms', 'onStep'] as const satisfies readonly (keyof SimOptions)[];
// Every option is listed (a new one not added above fails to compile here).
const SIM_KEYS_COMPLETE: Exclude<keyof SimOptions, (typeof SIM_OPTION_KEYS)[number]> extends never ? true : never = true;
void SIM_KEYS_COMPLETE;

/** Simulates `program` and returns its timeline, events, verdict and statistics. */
export function simulate(program: Program, opts: SimOptions = {}): SimResult {
  programArg('simulate', program);
  objectArg('simulate', 'options', opts, true, SIM_OPTION_KEYS);
  if (opts.eventKinds !== undefined && !(opts.eventKinds instanceof Set)) argError('simulate', 'eventKinds', 'a Set of event kinds', opts.eventKinds);
  const T = opts.timing ?? H200;
  validateTiming(T);
  const v = (p: { value: number }) => p.value;
  const recordEvents = opts.recordEvents ?? true;
  const recordSpans = opts.recordSpans ?? true;
  for (const k of ['maxSteps', 'maxMemory', 'timeoutMs', 'activeSms', 'seed'] as const) boundOption('simulate', k, opts[k]);
  positiveBound('simulate', 'maxSteps', opts.maxSteps, 'a positive whole number of steps', true);
  positiveBound('simulate', 'maxMemory', opts.maxMemory, 'a positive number of bytes');
  positiveBound('simulate', 'timeoutMs', opts.timeoutMs, 'a positive number of milliseconds');
  const maxSteps = opts.maxSteps ?? 50_000_000;
  const rand = opts.seed !== undefined ? mulberry32(opts.seed) : null;
  const jit = (x: number) => (rand ? Math.round(x * (1 + (rand() * 2 - 1) * v(T.jitter))) : x);

  const m = new Machine(program);
  const initOut = newStepOut(recordEvents);
  const s = m.initial(initOut);
  const out: StepOut = newStepOut(recordEvents || !!opts.onStep);
  const events: MachineEvent[] | null = recordEvents ? [] : null;
  const spans: Span[] | null = recordSpans ? [] : null;
  const kinds = opts.eventKinds ?? null;
  const keep = (e: MachineEvent) => {
    if (!kinds || kinds.has(e.e)) events!.push(e);
  };
  const nA = program.agents.length;
  const queue = new Queue();
  const parkedAt = new Float64Array(nA).fill(-1);
  const parkCause: string[] = new Array(nA).fill('');
  const parkedOn = new Int32Array(nA).fill(-2); // barrier key, -1 other, -2 not parked
  // Agents parked on each barrier key, in the order they parked (all wake together).
  const parkedByBar: (number[] | undefined)[] = new Array(program.ctas * program.barriersPerCta);
  // Stall cause of a wait on each barrier key (built once per key).
  const waitCause: (string | undefined)[] = new Array(program.ctas * program.barriersPerCta);
  // Agents just woken from a blocked mbarrier wait: their wait returns as part of the wake latency.
  const woken = new Uint8Array(nA);
  // Each agent's last executed op code (-1: none yet): a copy issued right after another copy of
  // the same thread costs issueCopyFollowing instead of a first copy's issue (src/sim/timing.ts).
  const lastOpc = new Int16Array(nA).fill(-1);
  // Agents parked on anything else (bar.sync, cluster wait, wait_group), in the order they parked.
  const parkedOther: number[] = [];
  const stats: SimStats = {
    busy: new Array(nA).fill(0),
    stalls: Array.from({ length: nA }, () => ({})),
    tmaBusy: new Array(program.ctas).fill(0),
    tcBusy: new Array(program.ctas).fill(0),
    finishedAt: new Array(nA).fill(-1),
  };
  const diagnostics: SimResult['diagnostics'] = [...initOut.diags];
  if (events && initOut.events) initOut.events.forEach(keep);
  const scheduleAsync = asyncScheduler(program, T, opts.activeSms, queue, spans, stats, jit);
  // One lane name string per agent (not one per span).
  const laneNames = program.agents.map((_, i) => String(i));
  const laneOf = (a: number) => laneNames[a]!;

  // Each running agent has at most one entry in the queue, or is parked.
  const pushAgent = (a: number, t: number) => queue.push(t, a * 2);

  // The caller removes `a` from its parked list (parkedByBar or parkedOther).
  const unpark = (a: number, t: number) => {
    if (parkedOn[a] === -2) return;
    const since = parkedAt[a]!;
    const st = stats.stalls[a]!;
    const cause = parkCause[a]!;
    st[cause] = (st[cause] ?? 0) + (t - since);
    if (spans && t > since) spans.push({ lane: laneOf(a), t0: since, t1: t, kind: 'stall', label: cause });
    if (parkedOn[a]! >= 0) woken[a] = 1;
    parkedOn[a] = -2;
    pushAgent(a, t);
  };


  const onStep = opts.onStep;
  const handleOut = (t: number, agentCta: number) => {
    // Most steps produce nothing to schedule.
    const issued = out.issued;
    const phases = out.phases;
    if (!onStep && !events && issued.length === 0 && phases.length === 0 && out.diags.length === 0 && !(out.other && parkedOther.length)) return;
    if (onStep) onStep(s, out.events ?? []);
    if (events && out.events) for (const e of out.events) keep(e);
    for (const d of out.diags) diagnostics.push(d);
    // Asynchronous operations issued in this step.
    if (issued.length) {
      // A multicast copy: one instruction whose copies land in several CTAs (they share one read);
      // mc = its number of destinations (0: not multicast).
      let mc = 0;
      let tmaOps = 0;
      for (let i = 0; i < issued.length; i++) {
        const o = issued[i]!;
        if (o.kind !== 'tma') continue;
        tmaOps++;
        if (o.cta !== agentCta) mc = 1;
      }
      if (mc) mc = tmaOps;
      let shareLoc: SrcLoc | null = null; // source of the last TMA copy (its read is shareStart/shareXfer)
      for (let i = 0; i < issued.length; i++) {
        const o = issued[i]!;
        const isTma = o.kind === 'tma';
        scheduleAsync(o, t, agentCta, mc > 0 && isTma && shareLoc !== null && shareLoc === o.loc, mc);
        if (isTma) shareLoc = o.loc;
      }
    }
    // Wake waiters of completed phases (in the order they parked).
    for (let i = 0; i < phases.length; i++) {
      const list = parkedByBar[phases[i]!];
      if (!list || list.length === 0) continue;
      for (let j = 0; j < list.length; j++) {
        const a = list[j]!;
        const ins = m.nextOp(s, a);
        // A try_wait polled by one thread of its warp (a producer lane) wakes sooner than one
        // polled by every lane (wakeTryWaitLane, wakeTryWait: hw/results/pipeline.json traces).
        const testWait = ins && ins.opc === 5 /* mbarrier.wait */ && (ins.op as { form: string }).form === 'test_wait';
        const lane = ins && perThreads(ins.per, program.agents[a]!) === 1;
        const wake = testWait ? v(T.wakeTestWait) : lane ? v(T.wakeTryWaitLane) : v(T.wakeTryWait);
        unpark(a, t + jit(wake));
      }
      list.length = 0;
    }
    if (out.other && parkedOther.length) {
      for (let j = 0; j < parkedOther.length; j++) {
        const a = parkedOther[j]!;
        const ins = m.nextOp(s, a);
        const op = ins?.op.op;
        const wake = op === 'barrier.cluster.wait' ? v(T.clusterWake) : op === 'bar.sync' ? v(T.barWake) : v(T.issueWgmmaGroupOp);
        unpark(a, t + wake);
      }
      parkedOther.length = 0;
    }
  };

  // Each op code's cost function, looked up once by its module's timing key.
  const costFns = OPS.map((d) => {
    const fn = ISSUE_COST[d.timing];
    if (!fn) throw new Error(`timing: no issue cost for timing key '${d.timing}' (${d.op})`);
    return fn;
  });
  const costArgs: IssueArgs = { T, ins: null as unknown as OpInstr, mult: 0, frame: [] };
  /** Issue cost of `ins` for agent `a`: its module's timing key in {@link ISSUE_COST}. */
  const cost = (ins: OpInstr, a: number): number => {
    const info = program.agents[a]!;
    const mult = perThreads(ins.per, info);
    const fn = costFns[ins.opc]!;
    // One arguments record, reused (`work` is costed on every step).
    costArgs.ins = ins;
    costArgs.mult = mult;
    costArgs.frame = s.agents[a]!.frame;
    return fn(costArgs);
  };

  const park = (a: number, t: number, ins: OpInstr) => {
    parkedAt[a] = t;
    const op = ins.op;
    if (ins.opc === 5 /* mbarrier.wait */) {
      const key = ins.bar!(s.agents[a]!.frame);
      parkedOn[a] = key;
      parkCause[a] = waitCause[key] ??= `waiting on ${program.barrierOf(key).info.name}`;
      let list = parkedByBar[key];
      if (!list) parkedByBar[key] = list = [];
      list.push(a);
    } else {
      parkedOn[a] = -1;
      parkCause[a] = op.op === 'bar.sync' ? 'bar.sync' : op.op === 'barrier.cluster.wait' ? 'barrier.cluster.wait' : op.op;
      parkedOther.push(a);
    }
  };

  for (let a = 0; a < nA; a++) {
    if (s.agents[a]!.status === 'run') pushAgent(a, 0);
    else stats.finishedAt[a] = 0;
  }

  // Reused choice objects (the machine reads them, never keeps them).
  const agentChoice = { kind: 'agent' as const, agent: 0 };
  const asyncChoice = { kind: 'async' as const, id: 0 };
  // Issue cost of each instruction (by OpInstr.uid), computed once (`work` reads its operand at run
  // time); NaN: not yet computed.
  let nOps = 0;
  for (const r of program.roles) for (const ins of r.code) if (ins.i === 'op' && ins.uid >= nOps) nOps = ins.uid + 1;
  const costCache = new Float64Array(nOps).fill(NaN);
  const loopOverhead = v(T.loopOverhead);
  let steps = 0;
  let stopped: string | null = null;
  let stoppedBy: Bound | null = null;
  let now = 0;
  let end = 0; // latest end of any issued operation
  // Pops that applied no step (bounded by maxSteps too, so a run without progress ends).
  let idle = 0;
  // Asynchronous operations whose entry in the queue is a re-test of one that was not enabled, and
  // those of them tested since the last step: once the queue holds nothing else and each was tested
  // with the state unchanged, nothing can ever progress (enabledness depends on the state alone).
  const polls = new Set<number>();
  const pollsSeen = new Set<number>();
  const gov = new Governor({ maxMemory: opts.maxMemory ?? DEFAULT_MAX_MEMORY, ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}) }, { every: 1024 });
  gov.check(); // a bound already passed stops the run before its first step
  while (queue.size > 0) {
    if (steps >= maxSteps || idle >= IDLE_PER_STEP * maxSteps) {
      stoppedBy = 'max-steps';
      stopped = steps >= maxSteps
        ? `stopped after ${maxSteps.toLocaleString('en-US')} step${maxSteps === 1 ? '' : 's'} (a very long kernel, or a polling loop that never ends; raise the limit with --max-steps, or shrink the kernel's parameters with --set)`
        : `stopped after ${(IDLE_PER_STEP * maxSteps).toLocaleString('en-US')} wake-ups that made no progress (at cycle ${now}, after ${steps.toLocaleString('en-US')} steps): an asynchronous operation that never becomes enabled; raise --max-steps only if it does later`;
      break;
    }
    if (gov.tick() !== null) {
      stoppedBy = gov.stoppedBy;
      stopped = boundText(gov, steps, events, spans);
      break;
    }
    const payload = queue.pop();
    const t = queue.lastTime;
    if (!(t <= MAX_TIME)) throw new SimTimeError(`simulated time reached ${t} cycles (beyond 2^53, or not a number) after ${steps.toLocaleString('en-US')} steps: the timing parameters make the run too long to time exactly; use smaller latencies, or fewer iterations (--set)`);
    if (s.trapped) break;
    if ((payload & 1) === 0) {
      const a = payload >> 1;
      const ag = s.agents[a]!;
      if (ag.status !== 'run' || parkedOn[a] !== -2) {
        idle++;
        continue;
      }
      const ins = m.nextOp(s, a);
      if (!ins) {
        idle++;
        continue;
      }
      if (!m.agentEnabled(s, a)) {
        idle++;
        park(a, t, ins);
        continue;
      }
      // A wait that was blocked returns with the wake (its latency covers the passing test);
      // one that finds its phase already complete pays the full test.
      let c: number;
      const opc = ins.opc;
      if (woken[a] && opc === 5 /* mbarrier.wait */) c = loopOverhead;
      else if (opc === 27 /* work */) c = cost(ins, a);
      else if (opc === 7 /* cp.async.bulk */ && lastOpc[a] === 7) c = (v(T.issueCopyFollowing) + multicastExtra(T, ins)) * Math.min(perThreads(ins.per, program.agents[a]!), 32) + loopOverhead;
      else {
        c = costCache[ins.uid]!;
        if (c !== c) costCache[ins.uid] = c = cost(ins, a); // NaN: first time
      }
      woken[a] = 0;
      lastOpc[a] = opc;
      now = t;
      agentChoice.agent = a;
      // The label is the operation with its operands as they are before it runs (a kernel of registers: their values).
      const label = spans ? stepText(program, s, a, ins) : '';
      m.apply(s, agentChoice, out, t, true);
      steps++;
      stats.busy[a]! += c;
      if (t + c > end) end = t + c;
      if (spans && (c > 0 || opc !== 28 /* exit */)) spans.push({ lane: laneOf(a), t0: t, t1: t + c, kind: 'op', label, loc: ins.loc });
      handleOut(t, program.agents[a]!.cta);
      if (ag.status === 'run') pushAgent(a, t + c);
      else stats.finishedAt[a] = t + c;
    } else {
      const id = payload >> 1;
      polls.delete(id);
      const o = m.findAsync(s, id);
      if (!o) {
        idle++;
        continue;
      }
      if (!m.asyncEnabled(s, o)) {
        idle++;
        queue.push(t + 1, payload);
        polls.add(id);
        pollsSeen.add(id);
        if (queue.size === polls.size && pollsSeen.size >= polls.size && [...polls].every((x) => pollsSeen.has(x)) && s.agents.some((x) => x.status === 'run')) {
          break; // a hang: the agents still running wait for what cannot happen
        }
        continue;
      }
      now = t;
      asyncChoice.id = id;
      m.apply(s, asyncChoice, out, t, true);
      steps++;
      handleOut(t, o.cta);
    }
    if (pollsSeen.size) pollsSeen.clear();
  }

  // The last operation's end is never popped: past 2^53 its time is not exact either.
  const cycles = Math.max(now, end);
  // Agents still parked at the end (a hang, or a stop) stalled from their park to the end.
  for (let a = 0; a < nA; a++) {
    if (parkedOn[a] === -2 || !(cycles > parkedAt[a]!)) continue;
    const st = stats.stalls[a]!;
    const cause = parkCause[a]!;
    st[cause] = (st[cause] ?? 0) + (cycles - parkedAt[a]!);
    if (spans) spans.push({ lane: laneOf(a), t0: parkedAt[a]!, t1: cycles, kind: 'stall', label: cause });
  }
  if (!(cycles <= MAX_TIME)) throw new SimTimeError(`simulated time reached ${cycles} cycles (beyond 2^53, or not a number) after ${steps.toLocaleString('en-US')} steps: the timing parameters make the run too long to time exactly; use smaller latencies, or fewer iterations (--set)`);
  let verdict: SimVerdict = 'ok';
  let hang: HangReport | null = null;
  if (stopped) verdict = 'incomplete';
  else if (s.trapped) verdict = s.trapped.trap ? 'trap' : 'error';
  else if (s.agents.some((a) => a.status === 'run')) {
    verdict = 'hang';
    // Within the run's bounds, looked at before each waiter (each costs a pass over the agents):
    // past one, the waiters left are counted, not explained.
    hang = explainHang(m, s, undefined, undefined, () => gov.check() !== null);
    if (hang.unexplained) {
      stoppedBy = gov.stoppedBy;
      stopped = `the explanation of the hang was cut: ${(stoppedBy === 'max-memory' ? `--max-memory (the process holds ${(gov.peak / 1048576).toFixed(0)} MB)` : `--timeout (${(gov.elapsed() / 1000).toFixed(1)} s)`)} stopped it with ${hang.unexplained.toLocaleString('en-US')} of ${(hang.unexplained + hang.waiters.length).toLocaleString('en-US')} blocked agents left unexplained; raise the bound, or shrink the kernel's parameters with --set`;
    }
  } else if (diagnostics.some((d) => d.diag.severity === 'error')) verdict = 'error';
  return {
    program, timing: T, verdict, cycles, steps, eventCount: s.events, events, spans, diagnostics, hang, stopped, stoppedBy, stats, final: s,
  };
}

/** Latest simulated time the simulator accepts (cycles): beyond it an increment of one cycle is lost. */
const MAX_TIME = Number.MAX_SAFE_INTEGER;

/** Thrown when simulated time leaves the exactly representable range (timing parameters too large for the run). */
export class SimTimeError extends Error {}

/** The `stopped` sentence of a run the governor stopped (memory or time). */
function boundText(gov: Governor, steps: number, events: readonly unknown[] | null, spans: readonly unknown[] | null): string {
  const held = `${(events?.length ?? 0).toLocaleString('en-US')} events and ${(spans?.length ?? 0).toLocaleString('en-US')} spans recorded`;
  const at = `after ${steps.toLocaleString('en-US')} steps`;
  if (gov.stoppedBy === 'max-memory') {
    return `stopped by --max-memory ${at}: the process holds ${(gov.peak / 1048576).toFixed(0)} MB (${held}); raise --max-memory MB, lower --max-steps, or shrink the kernel's parameters with --set`;
  }
  return `stopped by --timeout ${at} (${(gov.elapsed() / 1000).toFixed(1)} s; ${held}); raise --timeout SECONDS, lower --max-steps, or shrink the kernel's parameters with --set`;
}
