/**
 * The fits of the held-out validation (`npm run heldout -- --fit`, `--fit-l2`): the gpipe kernel's
 * glue and the distinct-address L2 share, each on the train rows of `hw/results/model.json` only
 * (the split of {@link isHeldOut} in heldout.ts), by coordinate descent on one score: the mean
 * squared relative error plus a tenth of the squared max.
 */
import { mergeTiming, type Timing } from '../sim/timing.js';
import { GPIPE_GLUE, isHeldOut, predictGpipe, type GpipeConfig, type GpipeGlue } from './heldout.js';

/**
 * Fits the gpipe glue (every field of {@link GpipeGlue}) on the train rows only, by coordinate
 * descent on the mean squared relative error plus a tenth of the squared max (200 iterations a
 * run, enough for the steady state after the 64 warm-up passes).
 */
export function fitGlue(configs: GpipeConfig[], timing: Timing, log: (s: string) => void = () => {}): GpipeGlue {
  const held = isHeldOut(configs);
  const train = configs.filter((_, i) => !held[i]);
  const score = (g: GpipeGlue) => {
    const e = train.map((c) => predictGpipe(c, timing, g, 200).cycles / c.mean_cycles_per_iter - 1);
    const max = Math.max(...e.map(Math.abs));
    return e.reduce((a, x) => a + x * x, 0) / e.length + 0.1 * max * max;
  };
  let best = GPIPE_GLUE;
  let bs = score(best);
  const keys = Object.keys(best) as (keyof GpipeGlue)[];
  for (const step of [32, 8]) {
    let moved = true;
    while (moved) {
      moved = false;
      for (const k of keys) {
        for (const d of [step, -step]) {
          const g = { ...best, [k]: best[k] + d };
          if ((k === 'producer' || k === 'consumer') && g[k] < 0) continue;
          const sc = score(g);
          if (sc < bs) {
            bs = sc;
            best = g;
            moved = true;
            log(`glue ${JSON.stringify(g)} score ${sc.toFixed(5)}`);
            break;
          }
        }
      }
    }
  }
  return best;
}

/** The distinct-address L2 share's three parameters (src/sim/timing.ts, bytes per cycle). */
export interface L2DistinctFit {
  /** `tmaL2DistinctBytesPerCycleSm` (A): the part of an SM's rate it keeps however many SMs read. */
  perSm: number;
  /** `tmaL2DistinctSharedBytesPerCycle` (B): the part the n reading SMs share (each gets A + B / n). */
  shared: number;
  /** `tmaL2DistinctBytesPerCycle`: the GPU-wide cap of all SMs' distinct-address reads. */
  cap: number;
  /** `tmaQueueLatencyL2Distinct` (cycles): the q of the load-dependent latency q·ρ/(1−ρ) of distinct L2 reads. */
  queue: number;
}

/** `timing` with the distinct-address L2 share of `f`. */
export function withL2Distinct(timing: Timing, f: L2DistinctFit): Timing {
  return mergeTiming(timing, { tmaL2DistinctBytesPerCycleSm: f.perSm, tmaL2DistinctSharedBytesPerCycle: f.shared, tmaL2DistinctBytesPerCycle: f.cap, tmaQueueLatencyL2Distinct: f.queue });
}

/**
 * Fits the distinct-address L2 share (min(A + B / n, cap / n) bytes per cycle per SM of n reading
 * SMs: {@link L2DistinctFit}) on the train rows whose copies read distinct addresses (`l2_distinct`,
 * and `hbm`, which the kernel descriptions read through the same share: heldout.ts `sourceTiming`),
 * by coordinate descent from `timing`'s values (steps of 4, then 1 B/cycle for A, 32 then 8 for B,
 * 100 then 25 for the cap, 32 then 8 cycles for the queue's q) on the score of {@link fitGlue}; A + B (one SM alone) stays at least
 * `tmaBytesPerCycleSm`.
 */
export function fitL2Distinct(configs: GpipeConfig[], timing: Timing, glue: GpipeGlue = GPIPE_GLUE, log: (s: string) => void = () => {}): L2DistinctFit {
  const held = isHeldOut(configs);
  const train = configs.filter((c, i) => !held[i] && c.source !== 'l2_shared');
  const score = (f: L2DistinctFit) => {
    const t = withL2Distinct(timing, f);
    const e = train.map((c) => predictGpipe(c, t, glue, 200).cycles / c.mean_cycles_per_iter - 1);
    const max = Math.max(...e.map(Math.abs));
    return e.reduce((a, x) => a + x * x, 0) / e.length + 0.1 * max * max;
  };
  // A lone SM reads distinct addresses at its own limit (hw/results/plan.json load: 95.5 B/cycle
  // at 1-16 CTAs; lean.json: 98 at 8): the share of one SM, A + B, may not fall below it.
  const sm = timing.tmaBytesPerCycleSm.value;
  const ok = (f: L2DistinctFit) => f.perSm > 0 && f.shared > 0 && f.cap > 0 && f.queue >= 0 && f.perSm + f.shared >= sm;
  let best: L2DistinctFit = { perSm: timing.tmaL2DistinctBytesPerCycleSm.value, shared: timing.tmaL2DistinctSharedBytesPerCycle.value, cap: timing.tmaL2DistinctBytesPerCycle.value, queue: timing.tmaQueueLatencyL2Distinct.value };
  let bs = score(best);
  for (const k of [4, 1]) {
    const steps: Partial<L2DistinctFit>[] = [{ perSm: k }, { shared: 8 * k }, { cap: 25 * k }, { queue: 8 * k }];
    for (let moved = true; moved; ) {
      moved = false;
      for (const st of steps)
        for (const sign of [1, -1]) {
          const f = { ...best };
          for (const key of Object.keys(st) as (keyof L2DistinctFit)[]) f[key] += sign * st[key]!;
          if (!ok(f)) continue;
          const sc = score(f);
          if (sc < bs) {
            [best, bs, moved] = [f, sc, true];
            log(`l2 distinct ${JSON.stringify(f)} score ${sc.toFixed(5)}`);
          }
        }
    }
  }
  return best;
}
