/**
 * Chrome trace-event JSON (opens in Perfetto, https://ui.perfetto.dev, and chrome://tracing):
 * one process per CTA, one thread per agent, TMA engine, tensor core and barrier; complete slices
 * for operations and stalls, async slices for overlapping copies, counters for each barrier's
 * pending count and tx-count, and flow arrows arrive → phase completion → released wait. A slice's
 * `args.line` is its source line (`k.ptx:147`) and, for PTX with `.loc` lines, `args.cuda` the CUDA
 * line it was compiled from (`k.cu:37`, with the call sites it was inlined at).
 * Timestamps are microseconds at the timing model's clock.
 */
import type { MachineEvent } from '../machine/events.js';
import type { Program } from '../machine/program.js';
import type { Span } from '../sim/simulate.js';
import { argError, isRecord, programArg } from '../model/api-args.js';
import { eventsArg, type ReportCut } from './ledger.js';

/** One trace event (Chrome trace-event format). */
export interface TraceEvent {
  name: string;
  ph: string;
  ts: number;
  pid: number;
  tid: number;
  dur?: number;
  cat?: string;
  id?: number | string;
  bp?: string;
  s?: string;
  args?: Record<string, unknown>;
}

/**
 * A bound on building a trace: `stop()` is asked once per span and event; when it says so, the
 * trace is built from what came before, and `omitted` counts the spans and events left out.
 */
export type TraceCut = ReportCut;

/**
 * Builds the trace of a run from its spans and events. `clockMHz` converts cycles to µs; `cut`
 * (optional) bounds the building (the CLI's output budget).
 */
export function buildTrace(program: Program, spans: Span[], events: MachineEvent[], clockMHz: number, cut?: TraceCut): { traceEvents: TraceEvent[]; displayTimeUnit: string; otherData: Record<string, unknown> } {
  programArg('buildTrace', program);
  if (!Array.isArray(spans) || !spans.every((x) => isRecord(x) && typeof x.lane === 'string')) argError('buildTrace', 'spans', 'an array of Spans (a SimResult\'s spans)', spans);
  eventsArg('buildTrace', events);
  if (typeof clockMHz !== 'number' || !(clockMHz > 0) || clockMHz === Infinity) argError('buildTrace', 'clockMHz', 'a positive finite number', clockMHz);
  const us = (cycles: number) => cycles / clockMHz;
  const out: TraceEvent[] = [];
  const tids = new Map<string, { pid: number; tid: number }>();
  let nextTid = 1;
  const laneId = (lane: string, cta: number, label: string) => {
    let x = tids.get(lane);
    if (!x) {
      x = { pid: cta, tid: nextTid++ };
      tids.set(lane, x);
      out.push({ name: 'thread_name', ph: 'M', ts: 0, pid: x.pid, tid: x.tid, args: { name: label } });
      out.push({ name: 'thread_sort_index', ph: 'M', ts: 0, pid: x.pid, tid: x.tid, args: { sort_index: x.tid } });
    }
    return x;
  };
  for (let c = 0; c < program.ctas; c++) out.push({ name: 'process_name', ph: 'M', ts: 0, pid: c, tid: 0, args: { name: `CTA c${c}` } });
  for (const a of program.agents) laneId(String(a.id), a.cta, a.name);
  const unitCta = (lane: string) => Number(/c(\d+)/.exec(lane)?.[1] ?? 0);
  let nSpans = spans.length;
  let nEvents = events.length;
  for (let i = 0; i < spans.length; i++) {
    if (cut?.stop()) {
      nSpans = i;
      nEvents = 0;
      break;
    }
    const sp = spans[i]!;
    const agent = program.agents[Number(sp.lane)];
    const lid = agent ? laneId(sp.lane, agent.cta, agent.name) : laneId(sp.lane, unitCta(sp.lane), sp.lane);
    const args: Record<string, unknown> = {};
    if (sp.loc) args.line = `${sp.loc.file ? `${sp.loc.file}:` : ''}${sp.loc.line}`;
    if (sp.loc?.origin) args.cuda = sp.loc.origin; // a PTX line's CUDA line, as the text report prints it
    if (sp.kind === 'tma' || sp.kind === 'store' || sp.kind === 'signal') {
      out.push({ name: sp.label, ph: 'b', cat: sp.kind, id: sp.id ?? 0, ts: us(sp.t0), pid: lid.pid, tid: lid.tid, args });
      out.push({ name: sp.label, ph: 'e', cat: sp.kind, id: sp.id ?? 0, ts: us(sp.t1), pid: lid.pid, tid: lid.tid });
    } else {
      out.push({ name: sp.kind === 'stall' ? `stalled: ${sp.label}` : sp.label, ph: 'X', cat: sp.kind, ts: us(sp.t0), dur: Math.max(us(sp.t1 - sp.t0), 0.0005), pid: lid.pid, tid: lid.tid, args });
    }
  }
  // Barriers: counters and phase-completion slices; flows arrive → completion → released waits.
  const barLane = (bar: number) => laneId(`bar:${bar}`, Math.floor(bar / program.barriersPerCta), program.barrierName(bar));
  let flow = 1;
  const lastSignal = new Map<number, { lane: { pid: number; tid: number }; t: number }>();
  const openRelease = new Map<number, number>(); // bar -> flow id of its latest completion
  const agentLane = (a: number) => laneId(String(a), program.agents[a]!.cta, program.agents[a]!.name);
  // Lane of an asynchronous unit, as the simulator names them.
  const asyncLane = new Map<number, { pid: number; tid: number }>();
  if (cut) cut.omitted += spans.length - nSpans;
  for (let i = 0; i < nEvents; i++) {
    const e = events[i]!;
    if (e.e !== 'async') continue;
    const issuerCta = program.agents[e.agent]!.cta;
    const lane = e.kind === 'tma' || e.kind === 'bulk.store' || e.kind === 'dsmem' ? `TMA c${issuerCta}` : e.kind === 'tc.commit' || e.kind === 'tc.mma' || e.kind === 'wgmma' ? `TC c${e.cta}` : e.kind === 'remote' || e.kind === 'st.async' ? `net c${e.cta}` : null;
    asyncLane.set(e.id, lane ? laneId(lane, unitCta(lane), lane) : agentLane(e.agent));
  }
  for (let i = 0; i < nEvents; i++) {
    if (cut?.stop()) {
      cut.omitted += nEvents - i;
      break;
    }
    const e = events[i]!;
    if (e.e === 'arrive' || e.e === 'complete_tx' || e.e === 'expect_tx') {
      const bl = barLane(e.bar);
      out.push({ name: program.barrierName(e.bar), ph: 'C', ts: us(e.t), pid: bl.pid, tid: bl.tid, args: { pending: e.e === 'arrive' ? e.pending : undefined, tx: e.tx } });
      if (e.agent >= 0) lastSignal.set(e.bar, { lane: agentLane(e.agent), t: e.t });
      else {
        const lane = asyncLane.get(e.async);
        if (lane) {
          const what = e.e === 'complete_tx' ? `complete_tx ${e.bytes} B` : e.e === 'arrive' ? 'arrive' : `expect_tx ${e.bytes} B`;
          out.push({ name: `${what} → ${program.barrierName(e.bar)}`, ph: 'X', cat: 'signal', ts: us(e.t), dur: 0.001, pid: lane.pid, tid: lane.tid });
          lastSignal.set(e.bar, { lane, t: e.t });
        }
      }
    } else if (e.e === 'phase') {
      const bl = barLane(e.bar);
      out.push({ name: `phase ${e.completed} complete`, ph: 'X', cat: 'phase', ts: us(e.t), dur: 0.001, pid: bl.pid, tid: bl.tid, args: { phase: e.completed, parityAfter: (e.completed + 1) & 1 } });
      const src = lastSignal.get(e.bar);
      if (src) {
        const id = flow++;
        out.push({ name: 'arrive → phase', ph: 's', cat: 'sync', id, ts: us(src.t), pid: src.lane.pid, tid: src.lane.tid });
        out.push({ name: 'arrive → phase', ph: 'f', bp: 'e', cat: 'sync', id, ts: us(e.t), pid: bl.pid, tid: bl.tid });
      }
      openRelease.set(e.bar, e.t);
    } else if (e.e === 'wait' && e.pass) {
      const t0 = openRelease.get(e.bar);
      if (t0 !== undefined) {
        const bl = barLane(e.bar);
        const al = agentLane(e.agent);
        const id = flow++;
        out.push({ name: 'phase → wait', ph: 's', cat: 'sync', id, ts: us(t0), pid: bl.pid, tid: bl.tid });
        out.push({ name: 'phase → wait', ph: 'f', bp: 'e', cat: 'sync', id, ts: us(e.t), pid: al.pid, tid: al.tid });
      }
    }
  }
  if (cut && nEvents < events.length) cut.omitted += events.length - nEvents;
  return { traceEvents: out, displayTimeUnit: 'ns', otherData: { kernel: program.kernel.name, params: program.params, clockMHz } };
}
