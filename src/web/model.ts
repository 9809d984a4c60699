/**
 * The explorer's data model of one run: the simulator's spans and events rearranged for drawing and
 * lookups (per-lane sorted typed arrays, binary search) and each barrier's state history, captured
 * from the machine's own state after every step. Pure; no DOM. This module holds the shapes and
 * their assembly; a simulation becomes a model in `sim-model.ts`, a counterexample in
 * `trace-model.ts`; the lookups on a model are `model-query.ts` (re-exported here).
 */
import type { Kernel } from '../kernel/ir.js';
import type { MachineEvent } from '../machine/events.js';
import { instantiate, KernelError, type Program } from '../machine/program.js';
import type { MBarrier } from '../model/mbarrier.js';
import type { SimResult, Span } from '../sim/simulate.js';
export * from './model-query.js';

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

/** One barrier's state history as it is recorded: after each event `ev` (−1: the initial state) at time `t`. */
export class Grow {
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
export function recordStep(events: readonly MachineEvent[], base: number, bars: readonly MBarrier[], grows: Grow[], mark: Uint8Array, touched: number[], at: number[]): void {
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

/** Arranges events, spans and barrier histories into a {@link RunModel}. */
export function assemble(program: Program, sim: SimSummary, events: MachineEvent[], spans: ViewSpan[], grows: Grow[], initBars: readonly MBarrier[], simMs: number, endAt?: number): RunModel {
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

/** The model without its program (which holds closures), for posting. */
export function packModel(m: RunModel): PackedModel {
  const { program: _p, ...rest } = m;
  return rest;
}

/** A packed model with its program reattached and its lane index rebuilt. */
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
