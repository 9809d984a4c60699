/**
 * Timing calibration against the H200: the kernel of `hw/probes/pipeline.cu` written with the
 * builder, its predicted cycles per iteration under a timing model, the error against the measured
 * configurations in `hw/results/pipeline.json`, and the fit that produced the H200 defaults of
 * `src/sim/timing.ts` (coordinate descent on the mean squared relative error).
 *
 * Run the report with `npm run bench`; refit with `npm run calibrate` (prints the fitted values).
 */
import { readFileSync } from 'node:fs';
import { kernel } from '../kernel/builder.js';
import type { Kernel } from '../kernel/ir.js';
import { instantiate } from '../machine/program.js';
import { simulate } from '../sim/simulate.js';
import { mergeTiming, type Timing } from '../sim/timing.js';

/** One measured configuration of the pipeline probe. */
export interface PipelineConfig {
  stages: number;
  tile_bytes: number;
  work_cycles: number;
  ctas: number;
  source: 'l2_hot' | 'hbm_stream';
  consumer_wait: string;
  trace: boolean;
  /** Median of the successive consumer full-wait spacings (the probe's first statistic). */
  cycles_per_iter: number;
  /** Mean spacing after warm-up: total cycles over iterations, the statistic the fit uses. */
  mean_cycles_per_iter: number;
  /** Pipeline variant (absent in older files: `bulk`). */
  kind?: 'bulk' | 'tensor' | 'multicast_cluster2' | 'wgmma';
  /** wgmma variant: m64n128k16 operations per stage. */
  wgmma_per_stage?: number;
}

/**
 * The probe's kernel (hw/probes/pipeline.cu): a producer lane that waits on `empty[s]` (from the
 * second round on), arms `full[s]` with `arrive.expect_tx(TILE)` and issues one bulk copy; a
 * consumer warp whose lanes all wait on `full[s]`, read the stage, spin W cycles, and whose lane 0
 * arrives on `empty[s]`.
 */
export function calibrationKernel(form: 'try_wait' | 'test_wait' = 'try_wait', kind: PipelineConfig['kind'] = 'bulk'): Kernel {
  const mc = kind === 'multicast_cluster2';
  const wg = kind === 'wgmma';
  const k = kernel('hw-pipeline', { arch: 'sm_90a', cluster: mc ? 2 : 1, params: { S: 4, TILE: 16384, W: 0, ITERS: 160, GLUE: 0, PGLUE: 0, CTAIL: 0, KS: 4 } });
  k.barriers('full', 'S', { count: 1 });
  k.barriers('empty', 'S', { count: mc ? 2 : wg ? 4 : 1 });
  k.smem('stage', mc ? '2 * S' : 'S', mc ? 'TILE / 2' : 'TILE');
  k.role('producer', { warps: 1, per: 'one' }, (r) =>
    r.for('it', 0, 'ITERS', (r) => {
      r.let('s', 'it % S');
      r.if('it >= S', (r) => r.wait('empty[s]', '((it / S) & 1) ^ 1', { form: 'try_wait' }));
      r.arriveExpectTx('full[s]', 'TILE');
      // multicast: each CTA's producer sends its half of the tile to both CTAs of the cluster
      if (mc) r.tma('stage[2 * s + cta]', 'TILE / 2', 'full[s]', { tensor: false, multicast: 3 });
      else r.tma('stage[s]', 'TILE', 'full[s]', { tensor: kind === 'tensor' });
      r.work('PGLUE'); // the probe producer's own loop code (abort-flag check, source address)
    }));
  k.role('consumer', { warps: wg ? 4 : 1, per: 'thread' }, (r) =>
    r.for('it', 0, 'ITERS', (r) => {
      r.let('s', 'it % S');
      r.wait('full[s]', '(it / S) & 1', { form });
      r.work('GLUE'); // the probe's own per-iteration code: __all_sync, clock64, a global store
      if (wg) {
        // KS wgmma.m64n128k16 reading the stage, one commit group, wait for it
        r.for('kk', 0, 'KS', (r) => r.wgmma(['stage[s]'], { m: 64, n: 128, k: 16 }));
        r.wgmmaCommit();
        r.wgmmaWait(0);
      } else if (mc) {
        r.read('stage[2 * s]');
        r.read('stage[2 * s + 1]');
      } else r.read('stage[s]');
      r.work('W');
      if (wg) r.arrive('empty[s]', { per: 'warp' });
      else
        r.elect((r) => {
          r.arrive('empty[s]');
          if (mc) r.arrive('empty[s]@(1 - cta)');
        });
      r.work('CTAIL'); // the rest of the probe consumer's iteration after its arrive
    }));
  return k.build();
}

/** Measured configurations this model covers (lane-0 polling variants and traced runs are left out). */
export function loadConfigs(path = 'hw/results/pipeline.json'): PipelineConfig[] {
  const j = JSON.parse(readFileSync(path, 'utf8')) as { configs: PipelineConfig[] };
  return j.configs.filter((c) => !c.trace && (c.consumer_wait === 'try_wait_all_lanes' || c.consumer_wait === 'test_wait_all_lanes'));
}

/** What the fit compares: the mean cycles per iteration (throughput), else the median spacing. */
export function measuredOf(c: PipelineConfig): number {
  return c.mean_cycles_per_iter ?? c.cycles_per_iter;
}

const WARMUP = 32;

/**
 * Cycles of the probe consumer's own per-iteration code (`__all_sync`, `clock64`, a global store),
 * a property of that kernel rather than of the barrier; fitted with the timing parameters (212
 * while the producer lane was woken at `wakeTryWait`, 182 before the rates were measured and the
 * queue was measured against the GPU-wide capacity).
 */
export let PROBE_GLUE = 228;

/**
 * Cycles of the probe producer's own per-iteration code (the abort-flag check, the source address,
 * the loop), after its copy issue, fitted to pipeline.json (`npm run calibrate`: 197 with
 * `issueBulkCopy` 156, here + 15 for the loopOverhead of 21 the same fit chose, which lowered
 * `issueBulkCopy` to 141): the part of the copy-issue and arrive costs fitted before (308 and 77)
 * that the per-operation probe (hw/results/ops.json) does not have. A property of pipeline.cu's kernel, not of the
 * barrier: the same loop without that code runs at 247 cycles (ops.json) or 284 (armwait.json).
 * The pipeline's consumer warps following the stages add `producerPerFollowingWarp` each (2.7:
 * 212 = 209 + 3 for the one consumer warp, with which this was fitted).
 */
export let PROBE_PRODUCER_GLUE = 209;

/** The probe kernel's own code: consumer (after its wait) and producer (after its copy issue), in cycles. */
export interface ProbeGlue {
  consumer: number;
  producer: number;
}

/** The fitted probe glue. */
export const probeGlue = (): ProbeGlue => ({ consumer: PROBE_GLUE, producer: PROBE_PRODUCER_GLUE });

/** The probe consumer's code after its arrive (71 = the fitted arrive cost 77 minus the measured 6; fitted). */
export const PROBE_CONSUMER_TAIL = 71;

/** L2 of the H200 (50 MiB): a streamed source smaller than this is L2-resident after the warm-up launch. */
export const L2_BYTES = 50 * 1024 * 1024;

/**
 * Whether a configuration really reads HBM: `hbm_stream` reads a fresh tile per iteration, but the
 * probe's warm-up launch reads the same tiles, so a footprint (CTAs, or clusters for multicast,
 * × 320 iterations × tile) that fits in L2 is served from L2 (hw/results/load.json shows it: 33 SMs
 * × 256 × 4 KiB "from HBM" have L2 latency).
 */
export function fromHbm(c: PipelineConfig): boolean {
  const streams = c.kind === 'multicast_cluster2' ? c.ctas / 2 : c.ctas;
  return c.source === 'hbm_stream' && streams * 320 * c.tile_bytes > L2_BYTES;
}

/** Predicted steady-state cycles per iteration: median spacing of the consumer's passing full waits after warm-up. */
export function predict(c: PipelineConfig, timing: Timing, glue: ProbeGlue = probeGlue()): number {
  const form = c.consumer_wait.startsWith('test_wait') ? 'test_wait' : 'try_wait';
  const k = calibrationKernel(form, c.kind ?? 'bulk');
  // the consumer warps following the producer's stages slow its loop (producerPerFollowingWarp),
  // those of a wgmma warpgroup more (producerPerWgmmaWarp)
  const follow = Math.round(c.kind === 'wgmma' ? 4 * (timing.producerPerFollowingWarp.value + timing.producerPerWgmmaWarp.value) : timing.producerPerFollowingWarp.value);
  const p = instantiate(k, { S: c.stages, TILE: c.tile_bytes, W: c.work_cycles, ITERS: 160, GLUE: glue.consumer, PGLUE: glue.producer + follow, CTAIL: PROBE_CONSUMER_TAIL, KS: c.wgmma_per_stage ?? 4 });
  const t = fromHbm(c) ? mergeTiming(timing, { tmaSourceHbm: 1 }) : timing;
  const r = simulate(p, { timing: t, recordSpans: false, activeSms: c.ctas });
  const passes: number[] = [];
  const consumer = p.agents.find((a) => a.roleName === 'consumer')!.id;
  for (const e of r.events!) if (e.e === 'wait' && e.pass && e.agent === consumer) passes.push(e.t);
  // mean spacing after warm-up (the measured statistic is the probe's mean as well)
  const n = passes.length - 1 - WARMUP;
  return n > 0 ? (passes[passes.length - 1]! - passes[WARMUP]!) / n : NaN;
}

/** One row of the report. */
export interface Row {
  config: string;
  measured: number;
  predicted: number;
  /** Relative error, predicted / measured − 1. */
  error: number;
}

/** Predicted vs measured for every configuration, with the median and max absolute error. */
export function errorReport(configs: PipelineConfig[], timing: Timing, glue: ProbeGlue = probeGlue()): { rows: Row[]; median: number; max: number } {
  const rows = configs.map((c) => {
    const predicted = predict(c, timing, glue);
    const kind = c.kind === 'multicast_cluster2' ? 'mcast2 ' : c.kind === 'tensor' ? 'tensor ' : c.kind === 'wgmma' ? `wgmma×${c.wgmma_per_stage} ` : '';
    const name = `${kind}S=${c.stages} tile=${c.tile_bytes / 1024}KiB W=${c.work_cycles} ctas=${c.ctas} ${c.source === 'hbm_stream' ? 'hbm' : 'l2'} ${c.consumer_wait.startsWith('test') ? 'test_wait' : 'try_wait'}`;
    const measured = measuredOf(c);
    return { config: name, measured, predicted: Math.round(predicted * 10) / 10, error: predicted / measured - 1 };
  });
  const abs = rows.map((r) => Math.abs(r.error)).sort((a, b) => a - b);
  return { rows, median: abs[Math.floor(abs.length / 2)] ?? 0, max: abs[abs.length - 1] ?? 0 };
}

/**
 * Parameters the fit may move, with bounds (cycles or bytes per cycle). The per-SM copy rates
 * (`tmaBytesPerCycleSm`, `tmaHbmBytesPerCycleSm`) are measured (hw/results/plan.json, pipeline.json's
 * one-CTA streams: src/sim/timing.ts) and no longer fitted.
 */
export const FIT_PARAMS: Record<string, [number, number]> = {
  tmaQueueLatency: [0, 1000],
  tmaQueueLatencyHbm: [0, 2000],
  tmaQueueMaxLoadPct: [10, 99],
  tmaMcastBytesPerCycleAllSms: [20, 150],
  hbmBytesPerCycle: [1500, 3500],
  mmaStartLatency: [0, 400],
  issueMma: [0, 200],
  waitPassTestWait: [10, 600],
  wakeTestWait: [10, 600],
  tmaLatency: [50, 800],
  tmaBytesPerCycleAllSms: [20, 150],
  tmaHbmExtra: [0, 2000],
  loopOverhead: [0, 80],
  probeGlue: [0, 400],
  probeProducerGlue: [0, 600],
};

/** The fit's names of the probe glue (not timing parameters). */
const GLUE_KEYS: Record<string, keyof ProbeGlue> = { probeGlue: 'consumer', probeProducerGlue: 'producer' };

/** `t` with parameter `name` set to `value` (negative values allowed: `tmaTensorExtra` is signed). */
export function withParam(t: Timing, name: string, value: number): Timing {
  if (!(name in t)) throw new Error(`unknown timing parameter '${name}'`);
  return { ...t, [name]: { value, source: 'fit' } };
}

/**
 * Coordinate descent from `base` on the mean squared relative error over `configs` (plus the
 * squared max error, so no configuration is sacrificed). Deterministic.
 */
export function fit(configs: PipelineConfig[], base: Timing, rounds = 6, log: (s: string) => void = () => {}): { timing: Timing; glue: ProbeGlue } {
  const score = (t: Timing, g: ProbeGlue) => {
    const r = errorReport(configs, t, g);
    return r.rows.reduce((x, y) => x + y.error * y.error, 0) / r.rows.length + r.max * r.max * 0.5;
  };
  let cur = base;
  let glue = probeGlue();
  let best = score(cur, glue);
  let step = 0.5;
  for (let round = 0; round < rounds; round++) {
    for (const [name, [lo, hi]] of Object.entries(FIT_PARAMS)) {
      const gk = GLUE_KEYS[name];
      const v0 = gk ? glue[gk] : (cur as unknown as Record<string, { value: number }>)[name]!.value;
      for (const f of [1 - step, 1 + step, 1 - step / 3, 1 + step / 3]) {
        const v = Math.round(Math.min(hi, Math.max(lo, v0 === 0 ? (f - 1) * 20 : v0 * f)));
        if (v === v0) continue;
        const cand = gk ? cur : withParam(cur, name, v);
        const g = gk ? { ...glue, [gk]: v } : glue;
        const sc = score(cand, g);
        if (sc < best) {
          best = sc;
          cur = cand;
          glue = g;
        }
      }
    }
    log(`round ${round + 1}: score ${best.toFixed(5)}`);
    step *= 0.6;
  }
  return { timing: cur, glue };
}
