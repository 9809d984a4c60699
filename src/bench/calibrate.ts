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
  cycles_per_iter: number;
}

/**
 * The probe's kernel (hw/probes/pipeline.cu): a producer lane that waits on `empty[s]` (from the
 * second round on), arms `full[s]` with `arrive.expect_tx(TILE)` and issues one bulk copy; a
 * consumer warp whose lanes all wait on `full[s]`, read the stage, spin W cycles, and whose lane 0
 * arrives on `empty[s]`.
 */
export function calibrationKernel(form: 'try_wait' | 'test_wait' = 'try_wait'): Kernel {
  const k = kernel('hw-pipeline', { arch: 'sm_90a', params: { S: 4, TILE: 16384, W: 0, ITERS: 160, GLUE: 0 } });
  k.barriers('full', 'S', { count: 1 });
  k.barriers('empty', 'S', { count: 1 });
  k.smem('stage', 'S', 'TILE');
  k.role('producer', { warps: 1, per: 'one' }, (r) =>
    r.for('it', 0, 'ITERS', (r) => {
      r.let('s', 'it % S');
      r.if('it >= S', (r) => r.wait('empty[s]', '((it / S) & 1) ^ 1', { form: 'try_wait' }));
      r.arriveExpectTx('full[s]', 'TILE');
      r.tma('stage[s]', 'TILE', 'full[s]', { tensor: false });
    }));
  k.role('consumer', { warps: 1, per: 'thread' }, (r) =>
    r.for('it', 0, 'ITERS', (r) => {
      r.let('s', 'it % S');
      r.wait('full[s]', '(it / S) & 1', { form });
      r.read('stage[s]');
      r.work('GLUE'); // the probe's own per-iteration code: __all_sync, clock64, a global store
      r.work('W');
      r.elect((r) => r.arrive('empty[s]'));
    }));
  return k.build();
}

/** Measured configurations this model covers (lane-0 polling variants and traced runs are left out). */
export function loadConfigs(path = 'hw/results/pipeline.json'): PipelineConfig[] {
  const j = JSON.parse(readFileSync(path, 'utf8')) as { configs: PipelineConfig[] };
  return j.configs.filter((c) => !c.trace && (c.consumer_wait === 'try_wait_all_lanes' || c.consumer_wait === 'test_wait_all_lanes'));
}

const WARMUP = 32;

/**
 * Cycles of the probe consumer's own per-iteration code (`__all_sync`, `clock64`, a global store),
 * a property of that kernel rather than of the barrier; fitted with the timing parameters.
 */
export let PROBE_GLUE = 110;

/** Predicted steady-state cycles per iteration: median spacing of the consumer's passing full waits after warm-up. */
export function predict(c: PipelineConfig, timing: Timing, glue = PROBE_GLUE): number {
  const form = c.consumer_wait.startsWith('test_wait') ? 'test_wait' : 'try_wait';
  const k = calibrationKernel(form);
  const p = instantiate(k, { S: c.stages, TILE: c.tile_bytes, W: c.work_cycles, ITERS: 160, GLUE: glue });
  const t = c.source === 'hbm_stream' ? mergeTiming(timing, { tmaSourceHbm: 1 }) : timing;
  const r = simulate(p, { timing: t, recordSpans: false, activeSms: c.ctas });
  const passes: number[] = [];
  const consumer = p.agents.find((a) => a.roleName === 'consumer')!.id;
  for (const e of r.events!) if (e.e === 'wait' && e.pass && e.agent === consumer) passes.push(e.t);
  const d: number[] = [];
  for (let i = WARMUP + 1; i < passes.length; i++) d.push(passes[i]! - passes[i - 1]!);
  d.sort((a, b) => a - b);
  return d.length ? d[Math.floor(d.length / 2)]! : NaN;
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
export function errorReport(configs: PipelineConfig[], timing: Timing, glue = PROBE_GLUE): { rows: Row[]; median: number; max: number } {
  const rows = configs.map((c) => {
    const predicted = predict(c, timing, glue);
    const name = `S=${c.stages} tile=${c.tile_bytes / 1024}KiB W=${c.work_cycles} ctas=${c.ctas} ${c.source === 'hbm_stream' ? 'hbm' : 'l2'} ${c.consumer_wait.startsWith('test') ? 'test_wait' : 'try_wait'}`;
    return { config: name, measured: c.cycles_per_iter, predicted, error: predicted / c.cycles_per_iter - 1 };
  });
  const abs = rows.map((r) => Math.abs(r.error)).sort((a, b) => a - b);
  return { rows, median: abs[Math.floor(abs.length / 2)] ?? 0, max: abs[abs.length - 1] ?? 0 };
}

/** Parameters the fit may move, with bounds (cycles or bytes per cycle). */
export const FIT_PARAMS: Record<string, [number, number]> = {
  waitPassTryWait: [10, 600],
  waitPassTestWait: [10, 600],
  wakeTryWait: [10, 600],
  wakeTestWait: [10, 600],
  tmaLatency: [50, 800],
  tmaBytesPerCycleSm: [30, 250],
  tmaBytesPerCycleAllSms: [20, 150],
  issueBulkCopy: [10, 400],
  issueArrive: [2, 200],
  tmaHbmExtra: [0, 2000],
  loopOverhead: [0, 80],
  probeGlue: [0, 400],
};

/**
 * Coordinate descent from `base` on the mean squared relative error over `configs` (plus the
 * squared max error, so no configuration is sacrificed). Deterministic.
 */
export function fit(configs: PipelineConfig[], base: Timing, rounds = 6, log: (s: string) => void = () => {}): { timing: Timing; glue: number } {
  const score = (t: Timing, g: number) => {
    const r = errorReport(configs, t, g);
    return r.rows.reduce((x, y) => x + y.error * y.error, 0) / r.rows.length + r.max * r.max * 0.5;
  };
  let cur = base;
  let glue = PROBE_GLUE;
  let best = score(cur, glue);
  let step = 0.5;
  for (let round = 0; round < rounds; round++) {
    for (const [name, [lo, hi]] of Object.entries(FIT_PARAMS)) {
      const v0 = name === 'probeGlue' ? glue : (cur as unknown as Record<string, { value: number }>)[name]!.value;
      for (const f of [1 - step, 1 + step, 1 - step / 3, 1 + step / 3]) {
        const v = Math.round(Math.min(hi, Math.max(lo, v0 === 0 ? f * 10 : v0 * f)));
        if (v === v0) continue;
        const cand = name === 'probeGlue' ? cur : mergeTiming(cur, { [name]: v });
        const g = name === 'probeGlue' ? v : glue;
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
