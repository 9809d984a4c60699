/**
 * Validation of the timing model on a kernel it was never fitted on: the lean pipelines of
 * `hw/probes/lean.cu` (`hw/results/lean.json`, 352 H200 configurations of 9 kinds). The model's
 * parameters (src/sim/timing.ts) come from other probes and are not touched here.
 *
 * What is calibrated, and on which rows (fixed before any error was computed, {@link isLeanCalibration}):
 * the probe kernel's own code per iteration, which no timing parameter can know (address and
 * stage arithmetic, loop control: a dependent chain of tens of single-thread instructions, about
 * 620 cycles an iteration for the bulk producer on the H200 — `producer_only` rows — against 284
 * for the leaner producer of hw/probes/armwait.cu that issues the same three operations):
 * - `producerBulk`, `producerTensor`: on the `producer_only` rows (a producer alone, waiting on its
 *   own copy S iterations back: a micro-probe of the producer's loop);
 * - `consumer`: on the one-warp `consumers` rows with busy work W > 0 (consumer-bound loops).
 * Every other row is held out: pipelines with consumers of one warp, one and two warpgroups,
 * woken and retried waits, 1-132 CTAs streaming from L2 and HBM, TMA and TMA → wgmma mainloops,
 * multicast clusters, persistent tile loops with an epilogue store.
 */
import { readFileSync } from 'node:fs';
import { type Timing } from '../sim/timing.js';
import { GPIPE_GLUE, followingWarps, kindOf, runGpipe, runtimeDivisions, type GpipeConfig, type GpipePrediction, type HeldRow, gpipeName } from './heldout.js';

/** One lean.cu configuration (fields as the probe writes them; see {@link GpipeConfig}). */
export interface LeanConfig extends GpipeConfig {
  /** Busy cycles the producer spins after each iteration's copies (0: none). */
  producer_work_cycles: number;
  /** `cluster`: launched with a cluster attribute (every row of lean.json); `plain`: without (lean_plain.json). */
  launch: 'cluster' | 'plain';
  producer_per_iter: number;
}

/** The lean kernel's own code per iteration, in cycles (calibrated, see the module comment). */
export interface LeanCode {
  producerBulk: number;
  producerTensor: number;
  consumer: number;
}

/**
 * Shared-memory store bandwidth of one SM for lean.cu's conflict-free epilogue (st.shared.v4,
 * consecutive threads on consecutive 16-byte words): 32 banks of 4 bytes a cycle.
 */
export const SMEM_BYTES_PER_CYCLE = 128;

/**
 * Bytes per cycle at which lean.cu's consumer warps write the epilogue tile (every consumer warp
 * stores its share): `stSharedBytesPerCycleWarp` a warp (hw/results/plan2_h100.json epi), at most
 * the SM's {@link SMEM_BYTES_PER_CYCLE}.
 */
export function leanEpilogueBytesPerCycle(c: LeanConfig, timing: Timing): number {
  return Math.min(SMEM_BYTES_PER_CYCLE, timing.stSharedBytesPerCycleWarp.value * Math.max(1, c.consumer_warps));
}

const ITERS = 400;

/** Loads lean.json's configurations (timed-out runs left out). */
export function loadLean(path = 'hw/results/lean.json'): LeanConfig[] {
  const j = JSON.parse(readFileSync(path, 'utf8')) as { configs: (Omit<LeanConfig, 'mean_cycles_per_iter'> & { cycles_per_iter: number })[] };
  return j.configs.filter((c) => c.timeouts === 0 && Number.isFinite(c.cycles_per_iter)).map((c) => ({ ...c, mean_cycles_per_iter: c.cycles_per_iter, timeouts: 0 }));
}

/** The calibration rows: producers alone, and one-warp consumer-bound loops (busy work W > 0). */
export function isLeanCalibration(c: LeanConfig): boolean {
  return c.family === 'producer_only' || (c.family === 'consumers' && c.work_cycles > 0 && c.consumer_warps === 1);
}

/** The kind of a lean configuration for the report ({@link kindOf}, plus `waits` and `producer_only`). */
export function leanKind(c: LeanConfig): string {
  return kindOf(c);
}

/** Predicted cycles per iteration of `c` with the kernel's own code `code`. */
export function predictLean(c: LeanConfig, timing: Timing, code: LeanCode, iters = ITERS): GpipePrediction {
  const div = runtimeDivisions(c);
  const pg = (c.copy === 'tensor_ab' ? code.producerTensor : code.producerBulk) + c.producer_work_cycles + div.producer * timing.intDivMod.value + (c.source === 'l2_shared' ? 0 : timing.issueCopyDistinct.value) + (c.cluster > 1 ? GPIPE_GLUE.producerMulticast : 0) + followingWarps(c, timing);
  return runGpipe(c, timing, { PG: Math.round(pg), CG: code.consumer + div.consumer * timing.intDivMod.value, ITERS: iters }, { epilogueBytesPerCycle: leanEpilogueBytesPerCycle(c, timing), producerReadsShared: false });
}

/**
 * Calibrates {@link LeanCode} on the calibration rows only: each field by bisection so that the
 * median error of its rows is zero (producerBulk on the bulk producer_only rows, producerTensor on
 * the tensor ones, consumer on the consumer-bound rows with the producer's code already set).
 */
export function calibrateLean(configs: LeanConfig[], timing: Timing): LeanCode {
  const cal = configs.filter(isLeanCalibration);
  const code: LeanCode = { producerBulk: 0, producerTensor: 0, consumer: 0 };
  const fit = (field: keyof LeanCode, rows: LeanConfig[]) => {
    let lo = 0;
    let hi = 4096;
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1;
      const errs = rows.map((c) => predictLean(c, timing, { ...code, [field]: mid }, 200).cycles / c.mean_cycles_per_iter - 1).sort((a, b) => a - b);
      if (errs[Math.floor(errs.length / 2)]! < 0) lo = mid;
      else hi = mid;
    }
    code[field] = hi;
  };
  fit('producerBulk', cal.filter((c) => c.family === 'producer_only' && c.copy === 'bulk'));
  fit('producerTensor', cal.filter((c) => c.family === 'producer_only' && c.copy === 'tensor_ab'));
  fit('consumer', cal.filter((c) => c.family === 'consumers'));
  return code;
}

/** Every lean configuration predicted; `heldOut` is false for the calibration rows. */
export function leanRows(configs: LeanConfig[], timing: Timing, code: LeanCode): HeldRow[] {
  return configs.map((c) => {
    const p = predictLean(c, timing, code);
    const name = gpipeName(c) + (c.producer_work_cycles ? ` PG=${c.producer_work_cycles}` : '');
    return { config: name, kind: leanKind(c), heldOut: !isLeanCalibration(c), measured: c.mean_cycles_per_iter, predicted: Math.round(p.cycles * 10) / 10, error: p.cycles / c.mean_cycles_per_iter - 1, bound: p.bound };
  });
}
