/**
 * The steady state of a simulated kernel's main loop: cycles per iteration, bytes per cycle per SM
 * moved by TMA copies, TFLOP/s of the MMAs, and the resource that bounds the loop with its share.
 *
 * The main loop is found from the run's events: the agent with the most passing mbarrier waits,
 * and on it the barrier array it passes most often (one pass per iteration). The steady state is
 * the second half of those passes (the first half holds the pipeline's fill).
 */
import type { SimResult } from '../sim/simulate.js';
import type { ReportCut } from './ledger.js';

/** What {@link loopSummary} reports. */
export interface LoopSummary {
  /** The agent and barrier array that define an iteration. */
  agent: string;
  barrier: string;
  iterations: number;
  /** Mean cycles per iteration over the steady state. */
  cyclesPerIteration: number;
  /** TMA bytes (loads) issued per cycle per CTA over the steady state. */
  bytesPerCyclePerSm: number;
  /** Dense FLOP of MMAs per second over all simulated CTAs × `gridScale` (null without MMAs). */
  tflops: number | null;
  /** The bounding resource and its share of the steady-state cycles (0..1). */
  bound: { resource: string; share: number };
  /** Every resource's share, largest first. */
  shares: { resource: string; share: number }[];
}

/**
 * Summarizes the main loop of `r` (needs its events; null without events or with fewer than 4
 * iterations). `gridScale`: CTAs on the GPU at once per simulated CTA (for TFLOP/s of a full GPU).
 * `cut` (optional) bounds the work: once its `stop()` says so the summary is null, and the events
 * not looked at are counted in `cut.omitted`.
 */
export function loopSummary(r: SimResult, gridScale = 1, cut?: ReportCut): LoopSummary | null {
  const events = r.events;
  if (!events) return null;
  const p = r.program;
  const passes = new Map<number, Map<string, number[]>>();
  for (let i = 0; i < events.length; i++) {
    if (cut?.stop()) {
      cut.omitted += events.length - i;
      return null;
    }
    const e = events[i]!;
    if (e.e !== 'wait' || !e.pass) continue;
    const name = p.barrierOf(e.bar).info.name;
    let m = passes.get(e.agent);
    if (!m) passes.set(e.agent, (m = new Map()));
    let l = m.get(name);
    if (!l) m.set(name, (l = []));
    l.push(e.t);
  }
  let best: { agent: number; bar: string; times: number[] } | null = null;
  for (const [agent, m] of passes) for (const [bar, times] of m) if (!best || times.length > best.times.length) best = { agent, bar, times };
  if (!best || best.times.length < 4) return null;
  const n = best.times.length;
  const i0 = Math.floor(n / 2);
  const t0 = best.times[i0]!;
  const t1 = best.times[n - 1]!;
  const span = Math.max(1, t1 - t0);
  const cyclesPerIteration = span / (n - 1 - i0);
  let tmaBytes = 0;
  let flop = 0;
  for (let i = 0; i < events.length; i++) {
    if (cut?.stop()) {
      cut.omitted += events.length - i;
      return null;
    }
    const e = events[i]!;
    if (e.e !== 'async' || e.t < t0 || e.t > t1) continue;
    if (e.kind === 'tma') tmaBytes += e.bytes;
    else if (e.kind === 'wgmma' || e.kind === 'tc.mma') flop += e.bytes;
  }
  const bytesPerCyclePerSm = tmaBytes / span / p.ctas;
  const tflops = flop > 0 ? (flop * gridScale * r.timing.clockMHz.value * 1e6) / span / 1e12 : null;
  const shares = resourceShares(r, t0, t1);
  return { agent: p.agents[best.agent]!.name, barrier: best.bar, iterations: n, cyclesPerIteration, bytesPerCyclePerSm, tflops, bound: shares[0]!, shares };
}

/**
 * Shares of busy time: the TMA engine moving bytes and the tensor core of CTA 0 (whole run), and
 * each agent of CTA 0 issuing, not stalled, within the window [t0, t1] (from its stall spans; whole
 * run without spans). The largest is the bound; when none reaches 60% the loop waits on latencies
 * (copies in flight, MMA completion, wake-ups) and the bound says so.
 */
function resourceShares(r: SimResult, t0: number, t1: number): { resource: string; share: number }[] {
  const span = Math.max(1, t1 - t0);
  const T = Math.max(1, r.cycles);
  const out: { resource: string; share: number }[] = [];
  if (r.stats.tmaBusy[0]) out.push({ resource: 'TMA engine moving bytes', share: Math.min(1, r.stats.tmaBusy[0]! / T) });
  if (r.stats.tcBusy[0]) out.push({ resource: 'tensor core', share: Math.min(1, r.stats.tcBusy[0]! / T) });
  const clip = (a: number, b: number) => Math.max(0, Math.min(b, t1) - Math.max(a, t0));
  const stalled = new Map<string, number>();
  if (r.spans) for (const s of r.spans) if (s.kind === 'stall') stalled.set(s.lane, (stalled.get(s.lane) ?? 0) + clip(s.t0, s.t1));
  for (const a of r.program.agents) {
    if (a.cta !== 0) continue;
    const share = r.spans ? 1 - (stalled.get(String(a.id)) ?? 0) / span : r.stats.busy[a.id]! / T;
    out.push({ resource: `${a.name} issuing`, share: Math.max(0, Math.min(1, share)) });
  }
  out.sort((a, b) => b.share - a.share);
  if ((out[0]?.share ?? 0) < 0.6) out.unshift({ resource: 'latency (no unit or agent busy 60% of the loop)', share: 1 - (out[0]?.share ?? 0) });
  return out;
}

/** Text lines for the summary: the loop's cycles per iteration, bytes/cycle per SM, TFLOP/s and bound. */
export function renderLoopSummary(l: LoopSummary, activeSms?: number): string {
  const pct = (x: number) => `${(100 * x).toFixed(0)}%`;
  const lines = [
    `main loop (${l.agent}'s passes on ${l.barrier}, ${l.iterations} iterations, steady state = second half): ${l.cyclesPerIteration.toFixed(1)} cycles/iteration, ${l.bytesPerCyclePerSm.toFixed(1)} B/cycle per SM loaded by TMA${l.tflops !== null ? `, ${l.tflops.toFixed(1)} TFLOP/s` : ''}${activeSms !== undefined ? ` (shared bandwidth of ${activeSms} active SMs)` : ''}`,
    `  bound: ${l.bound.resource} ${pct(l.bound.share)} of the loop's cycles (then ${l.shares.slice(1, 4).map((s) => `${s.resource} ${pct(s.share)}`).join(', ') || 'nothing else'})`,
  ];
  return lines.join('\n');
}
