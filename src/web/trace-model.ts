/**
 * A counterexample as a run model: the checker's schedule replayed through the machine's pure
 * `step`, one step per unit of time, so every view can show it like a simulation.
 */
import type { MachineEvent } from '../machine/events.js';
import { Machine } from '../machine/machine.js';
import { explainHang } from '../machine/hang.js';
import { stepText } from '../machine/step-text.js';
import type { Program } from '../machine/program.js';
import type { Span } from '../sim/simulate.js';
import { decodeChoice } from '../check/explore.js';
import { Grow, assemble, recordStep, type RunModel, type SimSummary, type ViewSpan } from './model.js';

/** The unit lane, span kind and label of each asynchronous operation kind. */
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
        blockedOn[a] = ins ? `blocked: ${stepText(program, s, a, ins)}` : 'blocked';
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
    const text = ins && c.kind === 'agent' ? stepText(program, before, c.agent, ins) : undefined;
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
      spans.push({ lane: String(c.agent), t0: n - 1, t1: n, kind: 'op', label: `${n}. ${text ?? lab?.op ?? 'exit'}`, ...(ins?.loc ? { loc: ins.loc } : {}) });
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

/** The span of an asynchronous operation from its issue to `t1` (`open`: still in flight at the end). */
function asyncSpan(program: Program, id: number, o: { t0: number; kind: string; cta: number; agent: number; bytes: number; loc?: Span['loc'] }, t1: number, open = false): Span {
  const info = ASYNC_SPAN[o.kind] ?? { unit: 'TMA' as const, kind: 'tma' as const, label: o.kind };
  const from = program.agents[o.agent]?.name ?? '?';
  const label = `${info.label}${o.bytes ? ` ${o.bytes} B` : ''} (from ${from})${open ? ' — still in flight' : ''}`;
  return { lane: `${info.unit} c${o.cta}`, t0: o.t0, t1, kind: info.kind, label, ...(o.loc ? { loc: o.loc } : {}), id };
}
