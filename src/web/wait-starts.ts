/**
 * Waits as events where they begin. The simulator reports a wait that blocks only as a stall span
 * (from the block to the wake-up) and emits its `wait` event when it passes; a hang's waiter never
 * emits one. For the explorer the start of a wait matters as much (the consumer parks on the full
 * barrier; later the phase completes and the wait passes), so each blocked mbarrier wait gets a
 * `wait` event with `pass: false` at its start: for a stall, the barrier and parity of the wait
 * that ends it; for a hang's waiter, those of the hang report. Inserting events shifts the indices
 * after them; `remap` gives each old index its new one.
 */
import type { MachineEvent } from '../machine/events.js';
import type { SimSummary, ViewSpan } from './model.js';

/** A barrier's phase at a time (the state history the model records). */
export type PhaseAt = (bar: number, t: number) => number;

/**
 * `events` with a `wait` (pass: false) event at the start of every blocked mbarrier wait, and the
 * index map old → new (length events.length). Pure; the input arrays are not changed.
 */
export function withWaitStarts(events: readonly MachineEvent[], spans: readonly ViewSpan[], hang: SimSummary['hang'], phaseAt: PhaseAt):
  { events: MachineEvent[]; remap: Int32Array } {
  const byAgent = new Map<number, number[]>();
  events.forEach((e, i) => {
    const a = (e as { agent?: number }).agent;
    if (a === undefined || a < 0) return;
    let l = byAgent.get(a);
    if (!l) byAgent.set(a, (l = []));
    l.push(i);
  });
  const starts: MachineEvent[] = [];
  const add = (t: number, agent: number, bar: number, parity: number, token: boolean, loc: Extract<MachineEvent, { e: 'wait' }>['loc']) => {
    starts.push({ e: 'wait', t, agent, bar, parity, phase: phaseAt(bar, t), pass: false, token, loc });
  };
  for (const sp of spans) {
    if (sp.kind !== 'stall' || !/^\d+$/.test(sp.lane)) continue;
    const a = Number(sp.lane);
    const own = byAgent.get(a) ?? [];
    // The agent's first event at or after the wake-up: the wait that ends the stall.
    let lo = 0, hi = own.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (events[own[mid]!]!.t < sp.t1) lo = mid + 1;
      else hi = mid;
    }
    const w = lo < own.length ? events[own[lo]!]! : undefined;
    if (w?.e === 'wait' && w.pass) add(sp.t0, a, w.bar, w.parity, w.token, w.loc);
  }
  for (const w of hang?.waiters ?? []) {
    if (w.bar === undefined || w.kind !== 'mbarrier') continue;
    const own = byAgent.get(w.agent) ?? [];
    const since = own.length ? events[own[own.length - 1]!]!.t : 0;
    add(since, w.agent, w.bar, w.parity ?? 0, false, w.loc);
  }
  const remap = new Int32Array(events.length);
  if (starts.length === 0) {
    for (let i = 0; i < remap.length; i++) remap[i] = i;
    return { events: events.slice(), remap };
  }
  starts.sort((x, y) => x.t - y.t);
  // Each start goes after every event of its time (the step that left the agent blocked).
  const out: MachineEvent[] = [];
  let j = 0;
  for (let i = 0; i < events.length; i++) {
    const e = events[i]!;
    while (j < starts.length && starts[j]!.t < e.t) out.push(starts[j++]!);
    remap[i] = out.length;
    out.push(e);
  }
  while (j < starts.length) out.push(starts[j++]!);
  return { events: out, remap };
}
