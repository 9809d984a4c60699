/**
 * The explorer's data model of one run: the simulator's spans and events rearranged for drawing and
 * lookups (per-lane sorted typed arrays, binary search) and each barrier's state history, captured
 * from the machine's own state after every step (`simulate`'s `onStep`). Pure; no DOM.
 */
import type { Kernel } from '../kernel/ir.js';
import type { MachineEvent } from '../machine/events.js';
import { Machine, type MachineState } from '../machine/machine.js';
import { instantiate, KernelError, type Program } from '../machine/program.js';
import type { MBarrier } from '../model/mbarrier.js';
import { simulate, type SimResult, type Span } from '../sim/simulate.js';
import { decodeChoice } from '../check/explore.js';
import { explainHang } from '../machine/hang.js';
import { withWaitStarts } from './wait-starts.js';

/** Span kinds, by code (index into this array). */
export const SPAN_KINDS = ['op', 'stall', 'tma', 'mma', 'store', 'signal', 'blocked'] as const;

/**
 * A span as the explorer draws it: the simulator's kinds, plus `blocked` for a wait that never
 * ends (a hang's waiter, from its block to the end of the run).
 */
export type ViewSpan = Omit<Span, 'kind'> & { kind: Span['kind'] | 'blocked' };

/** A lane of spans (an agent, a TMA engine, a tensor core, a cluster network), sorted by start. */
export interface SpanLane {
  id: string;
  label: string;
  group: 'agent' | 'unit';
  n: number;
  t0: Float64Array;
  t1: Float64Array;
  /** Running maximum of t1 (for binary search with overlapping spans). */
  maxEnd: Float64Array;
  kind: Uint8Array;
  /** Sub-row of each span (overlapping asynchronous operations are stacked). */
  sub: Uint8Array;
  subRows: number;
  /** Index of each span in {@link RunModel.spans}. */
  src: Int32Array;
  /** Agent index for agent lanes, else −1. */
  agent: number;
}

/** A barrier's state after each step that touched it (entry 0: the initial state). */
export interface BarrierLane {
  key: number;
  label: string;
  n: number;
  /** Index of the last event of the step after which this state holds (−1: initial). */
  ev: Int32Array;
  t: Float64Array;
  phase: Int32Array;
  pending: Int32Array;
  expected: Int32Array;
  tx: Int32Array;
  valid: Uint8Array;
}

/** One barrier's state at a point of the run. */
export interface BarState {
  phase: number;
  pending: number;
  expected: number;
  tx: number;
  valid: boolean;
}

/** What the views need of a simulation's result (plain data: it crosses from the worker). */
export type SimSummary = Pick<SimResult, 'verdict' | 'cycles' | 'diagnostics' | 'hang' | 'stopped'>;

/** For a counterexample replay: the time axis counts steps (step n spans [n − 1, n]). */
export interface TraceInfo {
  steps: number;
  /** Last event index of each step (−1 when a step emitted nothing and nothing came before). */
  stepEnd: Int32Array;
  /** Step (1-based) of each event. */
  stepOf: Int32Array;
}

/** A computed run. */
export interface RunModel {
  program: Program;
  sim: SimSummary;
  /** Present when the run is a replayed counterexample (time = steps). */
  trace?: TraceInfo;
  events: MachineEvent[];
  spans: ViewSpan[];
  /** Event times, sorted (the simulator emits events in time order). */
  evT: Float64Array;
  spanLanes: SpanLane[];
  barLanes: BarrierLane[];
  /** Barrier lane by barrier key. */
  barLaneByKey: Map<number, BarrierLane>;
  end: number;
  /** Milliseconds the simulation took. */
  simMs: number;
}

/** Largest number of steps the explorer simulates (a spinning kernel would never end). */
export const MAX_STEPS = 1_500_000;

/** Instantiates and simulates `kernel`; returns the model or an error message (never throws for bad kernels). */
export function runKernel(kernel: Kernel, overrides: Record<string, number>): { model?: RunModel; error?: string } {
  const inst = instantiateKernel(kernel, overrides);
  if (!inst.program) return { error: inst.error ?? 'error' };
  const program = inst.program;
  try {
    return { model: buildModel(program) };
  } catch (err) {
    return { error: `simulation failed: ${String((err as Error)?.message ?? err)}` };
  }
}

class Grow {
  ev: number[] = [];
  t: number[] = [];
  phase: number[] = [];
  pending: number[] = [];
  expected: number[] = [];
  tx: number[] = [];
  valid: number[] = [];
  push(ev: number, t: number, b: MBarrier): void {
    this.ev.push(ev);
    this.t.push(t);
    this.phase.push(b.phase);
    this.pending.push(b.pending);
    this.expected.push(b.expected);
    this.tx.push(b.tx);
    this.valid.push(b.status === 'valid' ? 1 : 0);
  }
}

/** Events that change a barrier's state. */
const BAR_CHANGE = new Set<MachineEvent['e']>(['arrive', 'expect_tx', 'complete_tx', 'phase', 'diag']);

/**
 * Records the state of every barrier a step touched (`events`, the first at index `base`). The
 * state after the step is filed under the step's first event that changed the barrier (an arrive,
 * expect_tx, complete_tx or phase completion), so a cursor on that event, or on any later event of
 * the step, shows it: a complete_tx that completes a phase shows the new phase at once. A barrier
 * only mentioned (a wait, a copy's issue) is filed under the step's last event mentioning it.
 */
function recordStep(events: readonly MachineEvent[], base: number, bars: readonly MBarrier[], grows: Grow[], mark: Uint8Array, touched: number[], at: number[]): void {
  for (let i = 0; i < events.length; i++) {
    const e = events[i]!;
    const bar = (e as { bar?: number }).bar;
    if (bar === undefined || bar < 0 || bar >= mark.length) continue;
    const change = BAR_CHANGE.has(e.e);
    if (!mark[bar]) {
      mark[bar] = change ? 2 : 1;
      touched.push(bar);
      at.push(base + i);
    } else if (mark[bar] === 1) {
      // So far only mentioned: a change files the state here; another mention moves it later.
      const j = touched.indexOf(bar);
      at[j] = base + i;
      if (change) mark[bar] = 2;
    }
  }
  const t = events[events.length - 1]!.t;
  for (let j = 0; j < touched.length; j++) {
    const b = touched[j]!;
    grows[b]!.push(at[j]!, t, bars[b]!);
    mark[b] = 0;
  }
  touched.length = 0;
  at.length = 0;
}

/** How far a simulation has come (for the page's progress line). */
export interface SimProgress {
  /** Events so far. */
  events: number;
  /** Simulated time so far, in cycles. */
  cycles: number;
  elapsedMs: number;
}

/**
 * Simulates `program` and builds the model. `onProgress` (optional) is called about every 0.2 s
 * of a long simulation.
 */
export function buildModel(program: Program, onProgress?: (p: SimProgress) => void): RunModel {
  const init = new Machine(program).initial();
  const grows: Grow[] = [];
  for (let k = 0; k < init.bars.length; k++) {
    const g = new Grow();
    g.push(-1, 0, init.bars[k]!);
    grows.push(g);
  }
  let evCount = 0;
  const touched: number[] = [];
  const at: number[] = [];
  const mark = new Uint8Array(init.bars.length);
  const t0 = performance.now();
  let steps = 0, lastReport = t0;
  const sim = simulate(program, {
    maxSteps: MAX_STEPS,
    onStep: (s: MachineState, events: readonly MachineEvent[]) => {
      if (onProgress && (++steps & 2047) === 0) {
        const now = performance.now();
        if (now - lastReport >= 200) {
          lastReport = now;
          onProgress({ events: evCount, cycles: events.length ? events[events.length - 1]!.t : 0, elapsedMs: now - t0 });
        }
      }
      if (events.length === 0) return;
      recordStep(events, evCount, s.bars, grows, mark, touched, at);
      evCount += events.length;
    },
  });
  const simMs = performance.now() - t0;
  const summary: SimSummary = { verdict: sim.verdict, cycles: sim.cycles, diagnostics: sim.diagnostics, hang: sim.hang, stopped: sim.stopped };
  const events = sim.events ?? [];
  const spans: ViewSpan[] = sim.spans ?? [];
  let endAt: number | undefined;
  if (sim.hang && sim.hang.waiters.length) {
    // The simulator closes a stall only when the agent resumes; a hang's waiters never do. Draw each
    // as blocked from its last event (the wait that blocked) to the end, which leaves room to see it.
    const last = Math.max(1, sim.cycles, events.length ? events[events.length - 1]!.t : 0);
    endAt = last + Math.max(8, last * 0.06);
    for (const w of sim.hang.waiters) {
      let since = 0;
      for (let i = events.length - 1; i >= 0; i--) {
        if ((events[i] as { agent?: number }).agent === w.agent) {
          since = events[i]!.t;
          break;
        }
      }
      spans.push({ lane: String(w.agent), t0: since, t1: endAt, kind: 'blocked', label: `blocked forever: ${w.op}`, ...(w.loc?.line ? { loc: w.loc } : {}) });
    }
  }
  // Each blocked wait also becomes an event where it begins (src/web/wait-starts.ts).
  const phaseAt = (bar: number, t: number) => {
    const g = grows[bar];
    if (!g) return 0;
    const j = lastLE(g.t, t);
    return j >= 0 ? g.phase[j]! : 0;
  };
  const ws = withWaitStarts(events, spans, sim.hang, phaseAt);
  for (const g of grows) for (let k = 0; k < g.ev.length; k++) if (g.ev[k]! >= 0) g.ev[k] = ws.remap[g.ev[k]!]!;
  return assemble(program, summary, ws.events, spans, grows, init.bars, simMs, endAt);
}

const ASYNC_SPAN: Record<string, { unit: 'TMA' | 'TC' | 'net'; kind: Span['kind']; label: string }> = {
  tma: { unit: 'TMA', kind: 'tma', label: 'TMA copy' }, 'bulk.store': { unit: 'TMA', kind: 'store', label: 'bulk store' },
  'cp.async': { unit: 'TMA', kind: 'tma', label: 'cp.async' }, 'cpa.arrive': { unit: 'net', kind: 'signal', label: 'cp.async.mbarrier.arrive' },
  'tc.mma': { unit: 'TC', kind: 'mma', label: 'tcgen05.mma' }, 'tc.commit': { unit: 'TC', kind: 'signal', label: 'tcgen05.commit' },
  wgmma: { unit: 'TC', kind: 'mma', label: 'wgmma' }, remote: { unit: 'net', kind: 'signal', label: 'remote signal' },
  'tc.ld': { unit: 'TC', kind: 'mma', label: 'tcgen05.ld' }, 'tc.st': { unit: 'TC', kind: 'mma', label: 'tcgen05.st' },
  'tc.cp': { unit: 'TC', kind: 'mma', label: 'tcgen05.cp' }, 'tc.shift': { unit: 'TC', kind: 'mma', label: 'tcgen05.shift' },
  'st.async': { unit: 'net', kind: 'signal', label: 'st.async' }, dsmem: { unit: 'TMA', kind: 'tma', label: 'DSMEM bulk copy' },
  pick: { unit: 'net', kind: 'signal', label: 'choice' }, clc: { unit: 'net', kind: 'signal', label: 'try_cancel response' },
};

/** What a trace step is, for its span label (from the checker's numbered trace). */
export interface StepLabel {
  actor: string;
  kind: 'agent' | 'async';
  op: string;
}

/**
 * A counterexample as a run: replays `schedule` (choice codes: agent index ≥ 0, async op id as
 * −(id + 1)) through the machine's pure `step`, one step per unit of time, recording every
 * barrier's state after each step, the agents' steps and stalls and the asynchronous operations
 * in flight. Every view can then show it like a simulation. Throws if the schedule does not
 * replay (a choice not enabled).
 */
export function traceModel(program: Program, schedule: readonly number[], labels: readonly StepLabel[] = []): RunModel {
  const m = new Machine(program);
  let s = m.initial();
  const grows: Grow[] = [];
  for (let k = 0; k < s.bars.length; k++) {
    const g = new Grow();
    g.push(-1, 0, s.bars[k]!);
    grows.push(g);
  }
  const initBars = s.bars;
  const mark = new Uint8Array(s.bars.length);
  const touched: number[] = [];
  const at: number[] = [];
  const events: MachineEvent[] = [];
  const spans: ViewSpan[] = [];
  const nAg = program.agents.length;
  // Per agent: the step since which it has been blocked (−1: not blocked).
  const blockedSince = new Array<number>(nAg).fill(-1);
  const blockedOn = new Array<string>(nAg).fill('');
  const asyncOpen = new Map<number, { t0: number; kind: string; cta: number; agent: number; bytes: number; loc?: Span['loc'] }>();
  const stepEnd = new Int32Array(schedule.length + 1).fill(-1);
  const stepOf: number[] = [];
  const diagnostics: SimSummary['diagnostics'] = [];
  const markBlocked = (t: number) => {
    for (let a = 0; a < nAg; a++) {
      const ag = s.agents[a]!;
      const blocked = ag.status === 'run' && !m.agentEnabled(s, a);
      if (blocked && blockedSince[a]! < 0) {
        blockedSince[a] = t;
        const ins = m.nextOp(s, a);
        blockedOn[a] = ins ? `blocked: ${ins.text}` : 'blocked';
      } else if (!blocked && blockedSince[a]! >= 0) {
        spans.push({ lane: String(a), t0: blockedSince[a]!, t1: t, kind: 'stall', label: blockedOn[a]! });
        blockedSince[a] = -1;
      }
    }
  };
  markBlocked(0);
  schedule.forEach((code, i) => {
    const n = i + 1;
    const c = decodeChoice(code);
    const before = s;
    const ins = c.kind === 'agent' ? m.nextOp(before, c.agent) : null;
    const landing = c.kind === 'async' ? asyncOpen.get(c.id) : undefined;
    const r = m.step(before, c, n - 0.5);
    s = r.state;
    const base = events.length;
    for (const e of r.events) {
      events.push(e);
      stepOf.push(n);
      if (e.e === 'async') {
        asyncOpen.set(e.id, { t0: n - 0.5, kind: e.kind, cta: e.cta, agent: e.agent, bytes: e.bytes, loc: e.loc });
      } else if (e.e === 'async.done') {
        const o = asyncOpen.get(e.id);
        if (o) {
          asyncOpen.delete(e.id);
          spans.push(asyncSpan(program, e.id, o, n));
        }
      } else if (e.e === 'diag') {
        diagnostics.push({ diag: e.diag, agent: (e as { agent?: number }).agent ?? -1, async: (e as { async?: number }).async ?? -1, bar: e.bar, ...(e.loc ? { loc: e.loc } : {}), t: n });
      }
    }
    stepEnd[n] = events.length - 1;
    if (r.events.length) recordStep(r.events, base, s.bars, grows, mark, touched, at);
    const lab = labels[i];
    if (c.kind === 'agent') {
      spans.push({ lane: String(c.agent), t0: n - 1, t1: n, kind: 'op', label: `${n}. ${ins ? ins.text : lab?.op ?? 'exit'}`, ...(ins?.loc ? { loc: ins.loc } : {}) });
    } else {
      const o = landing;
      if (o) {
        // A partial landing: a short mark on the unit lane inside the op's span.
        const info = ASYNC_SPAN[o.kind]!;
        spans.push({ lane: `${info.unit} c${o.cta}`, t0: n - 1, t1: n, kind: info.kind, label: `${n}. ${lab?.op ?? 'lands'}`, ...(o.loc ? { loc: o.loc } : {}), id: c.id });
      }
    }
    markBlocked(n);
  });
  const N = schedule.length;
  const end = N + 1;
  const finished = m.finished(s);
  const stuck = !finished && m.enabled(s).length === 0;
  for (let a = 0; a < nAg; a++) {
    if (blockedSince[a]! >= 0) spans.push({ lane: String(a), t0: blockedSince[a]!, t1: end, kind: stuck ? 'blocked' : 'stall', label: stuck ? blockedOn[a]!.replace(/^blocked: /, 'blocked forever: ') : blockedOn[a]! });
  }
  for (const [id, o] of asyncOpen) spans.push(asyncSpan(program, id, o, end, true));
  const hang = stuck ? explainHang(m, s) : null;
  const summary: SimSummary = {
    verdict: s.trapped ? 'trap' : stuck ? 'hang' : diagnostics.some((d) => d.diag.severity === 'error') ? 'error' : 'ok',
    cycles: N, diagnostics, hang, stopped: finished || stuck ? null : `the counterexample ends after step ${N}`,
  };
  const model = assemble(program, summary, events, spans, grows, initBars, 0, end);
  model.trace = { steps: N, stepEnd, stepOf: Int32Array.from(stepOf) };
  return model;
}

function asyncSpan(program: Program, id: number, o: { t0: number; kind: string; cta: number; agent: number; bytes: number; loc?: Span['loc'] }, t1: number, open = false): Span {
  const info = ASYNC_SPAN[o.kind] ?? { unit: 'TMA' as const, kind: 'tma' as const, label: o.kind };
  const from = program.agents[o.agent]?.name ?? '?';
  const label = `${info.label}${o.bytes ? ` ${o.bytes} B` : ''} (from ${from})${open ? ' — still in flight' : ''}`;
  return { lane: `${info.unit} c${o.cta}`, t0: o.t0, t1, kind: info.kind, label, ...(o.loc ? { loc: o.loc } : {}), id };
}

/** Arranges events, spans and barrier histories into a {@link RunModel}. */
function assemble(program: Program, sim: SimSummary, events: MachineEvent[], spans: ViewSpan[], grows: Grow[], initBars: readonly MBarrier[], simMs: number, endAt?: number): RunModel {
  const init = { bars: initBars };
  const evT = new Float64Array(events.length);
  for (let i = 0; i < events.length; i++) evT[i] = events[i]!.t;

  // Span lanes: agents in order, then each CTA's units.
  const byLane = new Map<string, number[]>();
  spans.forEach((sp, i) => {
    let l = byLane.get(sp.lane);
    if (!l) byLane.set(sp.lane, (l = []));
    l.push(i);
  });
  const spanLanes: SpanLane[] = [];
  const mkLane = (id: string, label: string, group: 'agent' | 'unit', agent: number) => {
    const idx = (byLane.get(id) ?? []).slice().sort((a, b) => spans[a]!.t0 - spans[b]!.t0 || a - b);
    const n = idx.length;
    const lane: SpanLane = {
      id, label, group, n, agent,
      t0: new Float64Array(n), t1: new Float64Array(n), maxEnd: new Float64Array(n), kind: new Uint8Array(n), sub: new Uint8Array(n), subRows: 1, src: new Int32Array(idx),
    };
    const rowEnd: number[] = [];
    let mx = -Infinity;
    for (let j = 0; j < n; j++) {
      const sp = spans[idx[j]!]!;
      lane.t0[j] = sp.t0;
      lane.t1[j] = sp.t1;
      mx = Math.max(mx, sp.t1);
      lane.maxEnd[j] = mx;
      lane.kind[j] = Math.max(0, SPAN_KINDS.indexOf(sp.kind));
      if (group === 'unit') {
        let r = rowEnd.findIndex((e) => e <= sp.t0);
        if (r < 0) {
          if (rowEnd.length < 4) r = rowEnd.push(0) - 1;
          else r = rowEnd.indexOf(Math.min(...rowEnd));
        }
        rowEnd[r] = sp.t1;
        lane.sub[j] = r;
      }
    }
    lane.subRows = Math.max(1, rowEnd.length);
    spanLanes.push(lane);
  };
  for (const a of program.agents) mkLane(String(a.id), a.name, 'agent', a.id);
  const units = [...byLane.keys()].filter((l) => !/^\d+$/.test(l));
  const unitOrder = (l: string) => {
    const m = /c(\d+)$/.exec(l);
    const kind = l.startsWith('TMA') ? 0 : l.startsWith('TC') ? 1 : 2;
    return (m ? Number(m[1]) : 0) * 4 + kind;
  };
  units.sort((a, b) => unitOrder(a) - unitOrder(b));
  for (const u of units) mkLane(u, u.replace(/^TMA /, 'TMA engine ').replace(/^TC /, 'tensor core ').replace(/^net /, 'cluster net '), 'unit', -1);

  const barLanes: BarrierLane[] = [];
  const barLaneByKey = new Map<number, BarrierLane>();
  for (let k = 0; k < grows.length; k++) {
    const g = grows[k]!;
    // Skip barriers that never exist in this CTA (arrays held by another CTA only) and are never touched.
    if (init.bars[k]!.status !== 'valid' && g.ev.length <= 1) continue;
    const lane: BarrierLane = {
      key: k, label: program.barrierName(k), n: g.ev.length,
      ev: Int32Array.from(g.ev), t: Float64Array.from(g.t), phase: Int32Array.from(g.phase), pending: Int32Array.from(g.pending),
      expected: Int32Array.from(g.expected), tx: Int32Array.from(g.tx), valid: Uint8Array.from(g.valid),
    };
    barLanes.push(lane);
    barLaneByKey.set(k, lane);
  }
  const end = endAt ?? Math.max(1, sim.cycles, events.length ? events[events.length - 1]!.t : 0);
  return { program, sim, events, spans, evT, spanLanes, barLanes, barLaneByKey, end, simMs };
}

/** A run model as plain data (no closures), for posting from the worker; {@link unpackModel} reattaches the program. */
export type PackedModel = Omit<RunModel, 'program'>;

export function packModel(m: RunModel): PackedModel {
  const { program: _p, ...rest } = m;
  return rest;
}

export function unpackModel(p: PackedModel, program: Program): RunModel {
  const barLaneByKey = new Map<number, BarrierLane>();
  for (const l of p.barLanes) barLaneByKey.set(l.key, l);
  return { ...p, program, barLaneByKey };
}

/** Instantiates a kernel with the overrides it declares (never throws: an error message instead). */
export function instantiateKernel(kernel: Kernel, overrides: Record<string, number>): { program?: Program; error?: string } {
  try {
    const known = new Set(kernel.params.map((p) => p.name));
    const ov: Record<string, number> = {};
    for (const [k, v] of Object.entries(overrides)) if (known.has(k)) ov[k] = v;
    return { program: instantiate(kernel, ov) };
  } catch (err) {
    if (err instanceof KernelError) return { error: `${err.message}${err.loc ? ` (line ${err.loc.line})` : ''}` };
    return { error: String((err as Error)?.message ?? err) };
  }
}

/** Index of the last element ≤ x in sorted `a` (−1 if none). */
export function lastLE(a: ArrayLike<number>, x: number, n = a.length): number {
  let lo = 0, hi = n - 1, r = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (a[mid]! <= x) {
      r = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return r;
}

/** Index of the first element ≥ x in sorted `a` (n if none). */
export function firstGE(a: ArrayLike<number>, x: number, n = a.length): number {
  let lo = 0, hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (a[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Index of the last event at or before time `t` (−1: before the first). */
export function eventAtTime(m: RunModel, t: number): number {
  return lastLE(m.evT, t);
}

/** Index into a barrier lane of the state after event `ev`. */
export function barIndexAt(l: BarrierLane, ev: number): number {
  return Math.max(0, lastLE(l.ev, ev, l.n));
}

/** A barrier's state after event `ev`. */
export function barStateAt(l: BarrierLane, ev: number): BarState {
  const i = barIndexAt(l, ev);
  return { phase: l.phase[i]!, pending: l.pending[i]!, expected: l.expected[i]!, tx: l.tx[i]!, valid: l.valid[i] === 1 };
}

/** The span of `lane` under time `t` (within `slack` cycles), or −1. */
export function spanAt(lane: SpanLane, t: number, slack: number, sub = -1): number {
  let i = firstGE(lane.maxEnd, t - slack, lane.n);
  let best = -1, bestD = Infinity;
  for (; i < lane.n && lane.t0[i]! <= t + slack; i++) {
    if (sub >= 0 && lane.sub[i] !== sub) continue;
    const d = t < lane.t0[i]! ? lane.t0[i]! - t : t > lane.t1[i]! ? t - lane.t1[i]! : 0;
    if (d <= slack && d < bestD) {
      best = i;
      bestD = d;
    }
  }
  return best;
}

/** The events caused by agent `agent` at exactly time `t` (indices). */
export function agentEventsAt(m: RunModel, agent: number, t: number): number[] {
  const out: number[] = [];
  for (let i = firstGE(m.evT, t); i < m.events.length && m.evT[i] === t; i++) {
    const e = m.events[i]! as { agent?: number };
    if (e.agent === agent) out.push(i);
  }
  return out;
}

/** The barrier key an event concerns, or −1. */
export function eventBar(e: MachineEvent): number {
  const b = (e as { bar?: number }).bar;
  return b === undefined ? -1 : b;
}

/** Kinds of barrier events: what changes a barrier (arrive, expect_tx, complete_tx, a phase completion) and waits on one. */
const BARRIER_EVENT = new Set<MachineEvent['e']>(['arrive', 'expect_tx', 'complete_tx', 'phase', 'wait']);

/** Indices (sorted) of the run's barrier events: arrivals, expect_tx, complete_tx, phase completions and waits (starts and passes). */
export function barrierEvents(m: RunModel): Int32Array {
  const out: number[] = [];
  m.events.forEach((e, i) => {
    if (BARRIER_EVENT.has(e.e)) out.push(i);
  });
  return Int32Array.from(out);
}

/** Who caused an event, as a name. */
export function actor(m: RunModel, e: MachineEvent, asyncNames: Map<number, string>): string {
  const a = (e as { agent?: number }).agent;
  if (a !== undefined && a >= 0) return m.program.agents[a]?.name ?? `agent ${a}`;
  const id = (e as { async?: number; id?: number }).async ?? (e as { id?: number }).id;
  if (id !== undefined && id >= 0) return asyncNames.get(id) ?? `async #${id}`;
  return '';
}

/** Names of asynchronous operations (`TMA #3 (from producer@c0)`), from the async events. */
export function asyncNames(m: RunModel): Map<number, string> {
  const label: Record<string, string> = {
    tma: 'TMA', 'bulk.store': 'bulk store', 'tc.mma': 'tcgen05.mma', 'tc.commit': 'tcgen05.commit', wgmma: 'wgmma',
    'cp.async': 'cp.async', 'cpa.arrive': 'cp.async.mbarrier.arrive', remote: 'remote signal',
    'tc.ld': 'tcgen05.ld', 'tc.st': 'tcgen05.st', 'tc.cp': 'tcgen05.cp', 'tc.shift': 'tcgen05.shift',
    'st.async': 'st.async', dsmem: 'DSMEM bulk copy', pick: 'choice', clc: 'try_cancel response',
  };
  const out = new Map<number, string>();
  for (const e of m.events) if (e.e === 'async') out.set(e.id, `${label[e.kind] ?? e.kind} #${e.id} (from ${m.program.agents[e.agent]?.name ?? '?'})`);
  return out;
}

/** One line describing an event, in the field's words. */
export function describeEvent(m: RunModel, e: MachineEvent, names: Map<number, string>): string {
  const who = actor(m, e, names);
  const bn = (k: number) => (k >= 0 ? m.program.barrierName(k) : '?');
  switch (e.e) {
    case 'op': return `${who}: ${e.text}`;
    case 'arrive': return `${who}: arrive${e.count !== 1 ? ` ×${e.count}` : ''}${e.expectTx ? `.expect_tx(${e.expectTx} B)` : ''}${e.drop ? ' (drop)' : ''} on ${bn(e.bar)}: pending ${e.pending}, tx ${e.tx}`;
    case 'expect_tx': return `${who}: expect_tx(${e.bytes} B) on ${bn(e.bar)}: tx ${e.tx}`;
    case 'complete_tx': return `${who}: complete_tx(${e.bytes} B) on ${bn(e.bar)}: tx ${e.tx}`;
    case 'phase': return `${bn(e.bar)}: phase ${e.completed} completed → parity ${(e.completed + 1) & 1}`;
    case 'wait': return e.pass ? `${who}: wait ${bn(e.bar)} parity ${e.parity}: passes` : `${who}: begins waiting on ${bn(e.bar)} for parity ${e.parity} (the barrier is in phase ${e.phase}, parity ${e.phase & 1}): blocks`;
    case 'async': return `${who}: issues ${names.get(e.id) ?? e.kind}${e.bytes ? ` (${e.bytes} B)` : ''}`;
    case 'async.done': return `${names.get(e.id) ?? `async #${e.id}`} done`;
    case 'access': return `${who}: ${e.rw === 'r' ? 'reads' : 'writes'} ${m.program.bufferName(e.buf)} (${e.proxy}, ${e.edge})`;
    case 'sync': return `${who}: ${e.kind} ${e.id}`;
    case 'diag': return `${who}: ${e.diag.severity} [${e.diag.code}] ${e.diag.message}`;
    case 'exit': return `${who}: exit`;
  }
}

/** The source location of an event, if it has one. */
export function eventLoc(e: MachineEvent): { line: number; col: number; file?: string } | undefined {
  return (e as { loc?: { line: number; col: number; file?: string } }).loc;
}
