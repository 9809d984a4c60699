/**
 * Lookups on a run model ({@link RunModel}): binary searches over its sorted arrays, the barrier
 * state at an event, the span under a point, an event's barrier, actor, description and location.
 */
import type { MachineEvent } from '../machine/events.js';
import type { BarState, BarrierLane, RunModel, SpanLane } from './model.js';

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
