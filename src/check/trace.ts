/**
 * A counterexample as a Perfetto trace (Chrome trace-event JSON, the format of `mbsim run
 * --trace`): the hazard's schedule is replayed through the machine, step n at n µs; each agent step
 * is a slice on its agent's lane, each asynchronous operation an async slice from its issue to its
 * completion on the unit's lane (TMA, tensor core, network), and the barrier counters and flows
 * come from the replay's events through the report layer's `buildTrace`.
 */
import type { Program } from '../machine/program.js';
import type { Span } from '../sim/simulate.js';
import { buildTrace, type TraceEvent } from '../report/trace.js';
import { replay, type Hazard } from './check.js';

const LABEL: Record<string, string> = {
  tma: 'TMA copy', 'bulk.store': 'bulk store', 'tc.mma': 'tcgen05.mma', 'tc.commit': 'tcgen05.commit', wgmma: 'wgmma',
  'cp.async': 'cp.async', 'cpa.arrive': 'cp.async.mbarrier.arrive', remote: 'remote signal',
  'tc.ld': 'tcgen05.ld', 'tc.st': 'tcgen05.st', 'tc.cp': 'tcgen05.cp', 'tc.shift': 'tcgen05.shift',
  'st.async': 'st.async', dsmem: 'DSMEM bulk copy', pick: 'choice', clc: 'try_cancel response',
};

/** The Perfetto trace of a hazard's counterexample (one step per µs). */
export function hazardTrace(program: Program, h: Hazard): { traceEvents: TraceEvent[]; displayTimeUnit: string; otherData: Record<string, unknown> } {
  const rp = replay(program, h.schedule);
  const spans: Span[] = [];
  for (const st of rp.steps) {
    if (st.kind !== 'agent') continue;
    const a = program.agents.findIndex((x) => x.name === st.actor);
    if (a < 0) continue;
    const sp: Span = { lane: String(a), t0: st.n, t1: st.n + 0.8, kind: 'op', label: `${st.n}. ${st.op}` };
    if (st.loc) sp.loc = st.loc;
    spans.push(sp);
  }
  const open = new Map<number, { t: number; kind: string; agent: number; cta: number; bar: number; buf: number; loc: Span['loc'] }>();
  const lane = (kind: string, agent: number, cta: number) => {
    const issuerCta = program.agents[agent]!.cta;
    return kind === 'tma' || kind === 'bulk.store' ? `TMA c${issuerCta}` : kind === 'tc.commit' || kind === 'tc.mma' || kind === 'wgmma' ? `TC c${cta}` : kind === 'remote' ? `net c${cta}` : String(agent);
  };
  const close = (id: number, t1: number, open2: boolean) => {
    const o = open.get(id);
    if (!o) return;
    open.delete(id);
    const what = o.bar >= 0 ? program.barrierName(o.bar) : o.buf >= 0 ? program.bufferName(o.buf) : '';
    const kind: Span['kind'] = o.kind === 'tma' ? 'tma' : o.kind === 'bulk.store' ? 'store' : o.kind === 'tc.mma' || o.kind === 'wgmma' ? 'mma' : 'signal';
    const sp: Span = { lane: lane(o.kind, o.agent, o.cta), t0: o.t, t1, kind, label: `${LABEL[o.kind] ?? o.kind}${what ? ` → ${what}` : ''} (from ${program.agents[o.agent]!.name})${open2 ? ' — still in flight' : ''}`, id };
    if (o.loc) sp.loc = o.loc;
    spans.push(sp);
  };
  let last = 0;
  for (const e of rp.events) {
    last = Math.max(last, e.t);
    if (e.e === 'async') open.set(e.id, { t: e.t, kind: e.kind, agent: e.agent, cta: e.cta, bar: e.bar, buf: e.buf, loc: e.loc });
    else if (e.e === 'async.done') close(e.id, e.t + 0.8, false);
  }
  for (const id of [...open.keys()]) close(id, last + 1, true);
  const tr = buildTrace(program, spans, rp.events, 1);
  tr.otherData = { ...tr.otherData, hazard: h.kind, message: h.message, steps: h.trace.length, timeUnit: 'one schedule step per microsecond' };
  return tr;
}
