/**
 * Held-out validation of the timing model against the H200 runs of `hw/probes/model.cu` (gpipe
 * section of `hw/results/model.json`): the probe's kernel written with the builder, its predicted
 * cycles per iteration, and the error on configurations the model was NOT fitted on.
 *
 * The split (fixed in code before any error was computed, {@link isHeldOut}):
 * - the timing defaults of `src/sim/timing.ts` are fitted to `hw/results/pipeline.json`
 *   (`npm run calibrate`), except the distinct-address L2 sharing (`tmaL2DistinctBytesPerCycle`,
 *   `tmaL2DistinctBytesPerCycleSm`, `tmaL2DistinctSharedBytesPerCycle`, `tmaQueueLatencyL2Distinct`) and the HBM rate of strided tensor rows (`tmaHbmStridedRowsPct`), fitted
 *   on the train rows of model.json;
 * - the gpipe kernel's own per-iteration code (its producer glue by source and consumer glue, a
 *   property of the kernel like PROBE_GLUE in calibrate.ts: hw/results/armwait.json times the same
 *   pipeline without that code at 294 cycles an iteration against 674) is fitted on the "train"
 *   rows of model.json: within each family, configurations in file order, every third one
 *   (index % 3 == 2) is held out;
 * - the report gives, per family, median and max |error| over the held-out rows, and the rows with
 *   the largest errors with the model's bounding side (which agent or unit set the loop's time).
 */
import { readFileSync } from 'node:fs';
import { kernel } from '../kernel/builder.js';
import type { Kernel } from '../kernel/ir.js';
import { instantiate } from '../machine/program.js';
import { simulate } from '../sim/simulate.js';
import { mergeTiming, type Timing } from '../sim/timing.js';

/** One measured gpipe configuration (fields as `hw/probes/model.cu` writes them). */
export interface GpipeConfig {
  family: string;
  ctas: number;
  stages: number;
  tile_bytes: number;
  cluster: number;
  consumer_warps: number;
  copy: 'bulk' | 'bulk_multicast' | 'tensor_ab';
  source: 'l2_shared' | 'l2_distinct' | 'hbm';
  src_tiles: number;
  work_cycles: number;
  read: number;
  /**
   * wgmma m64n128k16 per stage over all consumer warpgroups (0: none): the probe writes 8 for one
   * warpgroup (ACC 128) and 4 × warpgroups for ACC 64, where each warpgroup runs 4.
   */
  wgmma_per_stage: number;
  /** Epilogue every this many iterations (0: none). */
  tile_k_steps: number;
  epilogue_bytes: number;
  timeouts: number;
  cycles_per_iter: number;
  mean_cycles_per_iter: number;
  sm_clock_mhz: number;
}

/** The gpipe kernel's own per-iteration code, in cycles (fitted on the train rows). */
export interface GpipeGlue {
  /** Producer: stage/phase arithmetic, source address, clock64 store, abort-flag check (its run-time `%` apart: {@link runtimeDivisions}). */
  producer: number;
  /** Signed change of the producer's code on the two-box tensor path (box coordinates), beyond its divisions. */
  producerTensor: number;
  /** Consumer: clock64 store, epilogue check, the arrive loop over the cluster's CTAs. */
  consumer: number;
  /**
   * Signed change of the producer's loop per copy when its copies read HBM, and when they read
   * distinct L2 addresses, rather than L2 tiles shared by every CTA, beyond the source index's
   * run-time `%` (which only the L2 sources execute: {@link runtimeDivisions}, `intDivMod`).
   */
  producerHbm: number;
  producerL2Distinct: number;
  /**
   * Change of the producer's loop on the multicast path (a 1/C slice of the tile: the slice's
   * shared-memory and global addresses `rank * (TILE / C)` and the CTA mask computed at run time),
   * beyond `issueMulticastExtra`.
   */
  producerMulticast: number;
}

/**
 * Run-time integer divisions per iteration in the loops of model.cu's gpipe and lean.cu's lpipe
 * (the same source-index code; SASS in hw/results/sass/): the producer's source index `it % nt`
 * for L2 sources (HBM sources index with `group * ITERS + it`), computed a second time for the
 * tensor box coordinate `kx` (not shared with the first: a separate I2F.RP sequence before the
 * UTMALDG); the consumers' epilogue test `(it + 1) % KT` in persistent loops; and once a tile, by
 * the thread that issues the epilogue's bulk store, its address `ITERS / KT` (the I2F.RP / MUFU.RCP
 * sequence before the UBLKCP.G.S; hw/results/plan2_h100.json epi: that thread's code from the second
 * bar.sync to after the commit takes 332 cycles with the store and 84 without). Each costs
 * `intDivMod` (src/sim/timing.ts).
 */
export function runtimeDivisions(c: GpipeConfig): { producer: number; consumer: number; epilogue: number } {
  const producer = c.source === 'hbm' ? 0 : c.copy === 'tensor_ab' ? 2 : 1;
  return { producer, consumer: c.tile_k_steps > 0 ? 1 : 0, epilogue: c.tile_k_steps > 0 ? 1 : 0 };
}

/**
 * Cycles the producer's loop grows by for the consumer warps that follow its stages
 * (`producerPerFollowingWarp` per warp, hw/results/plan.json sched), and more for those that run
 * wgmma (`producerPerWgmmaWarp`, or `producerPerWgmmaWarpDivision` for each run-time division the
 * producer's loop runs, {@link runtimeDivisions}; hw/results/plan3_busy_h100.json measures one
 * division, the two-box L2 loops of model.cu and lean.cu run two): charged as producer work.
 */
export function followingWarps(c: GpipeConfig, timing: Timing): number {
  const div = runtimeDivisions(c).producer;
  const wgmma = c.wgmma_per_stage > 0 ? (div > 0 ? div * timing.producerPerWgmmaWarpDivision.value : timing.producerPerWgmmaWarp.value) : 0;
  return c.consumer_warps * (timing.producerPerFollowingWarp.value + wgmma);
}

/**
 * Fitted on the train rows only (`npm run heldout -- --fit`, `fitGlue` of src/bench/heldout-fit.ts) under the current
 * timing (`issueCopyFollowing`, `issueMulticastExtra`, the per-division wgmma charge
 * ({@link followingWarps}), `tmaHbmStridedRowsPct` and the producer's hold for the epilogue's stores
 * ({@link gpipeKernel})): docs/HARDWARE.md "Held-out validation".
 */
export const GPIPE_GLUE: GpipeGlue = { producer: 290, producerTensor: 12, consumer: 486, producerHbm: -128, producerL2Distinct: 28, producerMulticast: 32 };

const ITERS = 320;
/** The probe's bank-conflicted epilogue writes (hw/results/ops.json: 32 KiB in 2048 cycles + one bar.sync). */
export const STS_CONFLICT_BYTES_PER_CYCLE = 16;
const WARMUP = 64;

/** Loads the gpipe configurations (timed-out runs left out). */
export function loadGpipe(path = 'hw/results/model.json'): GpipeConfig[] {
  const j = JSON.parse(readFileSync(path, 'utf8')) as { gpipe: { configs: GpipeConfig[] } };
  return j.gpipe.configs.filter((c) => c.timeouts === 0 && Number.isFinite(c.mean_cycles_per_iter));
}

/** The fixed split: within each family, in file order, every third configuration is held out. */
export function isHeldOut(configs: GpipeConfig[]): boolean[] {
  const seen = new Map<string, number>();
  return configs.map((c) => {
    const i = seen.get(c.family) ?? 0;
    seen.set(c.family, i + 1);
    return i % 3 === 2;
  });
}

/** Kind of kernel for the report (the probe's family, wgmma variants merged). */
export function kindOf(c: GpipeConfig): string {
  if (c.family.startsWith('mainloop_wgmma')) return 'mainloop_wgmma';
  if (c.family.startsWith('persistent')) return 'persistent';
  if (c.family === 'stream') return `stream_${c.source === 'hbm' ? 'hbm' : 'l2'}`;
  return c.family;
}

/**
 * The probe's gpipe kernel: a producer lane (wait empty[s] from the second round, arrive.expect_tx
 * full[s], one bulk copy / a 1/C multicast slice / two tensor boxes), consumer agents (one per warp,
 * or one per warpgroup with wgmma) that wait on full[s], optionally read, run wgmma, spin W, arrive
 * on empty[s] of every CTA of the cluster, and every KT iterations store an epilogue tile.
 */
export function gpipeKernel(c: GpipeConfig, shape: GpipeShape = {}): Kernel {
  const C = c.cluster;
  const ebw = shape.epilogueBytesPerCycle ?? STS_CONFLICT_BYTES_PER_CYCLE;
  // With no consumer warps the producer waits on its own copy of S iterations back (lean.cu producer_only).
  const alone = c.consumer_warps === 0;
  const wg = c.wgmma_per_stage > 0;
  const insts = wg ? Math.max(1, c.consumer_warps / 4) : c.consumer_warps;
  const k = kernel('hw-gpipe', {
    arch: 'sm_90a',
    cluster: C,
    params: { S: c.stages, TILE: c.tile_bytes, W: c.work_cycles, ITERS, PG: 0, CG: 0, KT: c.tile_k_steps || ITERS + 1, E: c.epilogue_bytes || 16, NCT: c.consumer_warps * 32, EW: Math.round((c.epilogue_bytes || 0) / ebw), EC: 0, PH: Math.round((c.epilogue_bytes || 0) / ebw) },
  });
  k.barriers('full', 'S', { count: 1 });
  k.barriers('empty', 'S', { count: Math.max(1, c.consumer_warps * C) });
  k.smem('stage', 'S', 'TILE');
  k.smem('ebuf', 1, 'E');
  k.role('producer', { warps: 1, per: 'one' }, (r) =>
    r.for('it', 0, 'ITERS', (r) => {
      r.let('s', 'it % S');
      r.if('it >= S', (r) => r.wait(alone ? 'full[s]' : 'empty[s]', '((it / S) & 1) ^ 1', { form: 'try_wait' }));
      r.arriveExpectTx('full[s]', 'TILE');
      if (c.copy === 'tensor_ab') {
        r.tma('stage[s]', 'TILE / 2', 'full[s]', { tensor: true });
        r.tma('stage[s]', 'TILE / 2', 'full[s]', { tensor: true });
      } else if (C > 1) r.tma('stage[s]', `TILE / ${C}`, 'full[s]', { tensor: false, multicast: (1 << C) - 1 });
      else r.tma('stage[s]', 'TILE', 'full[s]', { tensor: false });
      r.work('PG');
      // model.cu's producer reads the shared abort flag every iteration (glue.json: 79 cycles of its
      // dependent chain); that load waits behind the epilogue's bank-conflicted stores, so once a
      // tile the producer is held for their duration (PH; the model places it at the producer's own
      // tile boundary, which runs at most S stages ahead of the consumers').
      if (c.tile_k_steps && (shape.producerReadsShared ?? true)) r.if('(it + 1) % KT == 0', (r) => r.work('PH'));
    }));
  if (alone) return k.build();
  k.role('consumer', { warps: wg ? 4 : 1, per: 'thread', instances: insts }, (r) =>
    r.for('it', 0, 'ITERS', (r) => {
      r.let('s', 'it % S');
      r.wait('full[s]', '(it / S) & 1', { form: 'try_wait' });
      r.work('CG');
      if (c.read) r.read('stage[s]');
      if (wg) {
        // each warpgroup runs its share of the stage's wgmma (model.cu: 8 for one warpgroup, 4 each for two)
        for (let i = 0; i < c.wgmma_per_stage / insts; i++) r.wgmma(['stage[s]'], { m: 64, n: 128, k: 16 });
        r.wgmmaCommit();
        r.wgmmaWait(0);
      }
      r.work('W');
      if (wg) {
        r.arrive('empty[s]', { per: 'warp' });
        for (let q = 0; q < C; q++) r.if(`cta != ${q}`, (r) => r.arrive(`empty[s]@(${q})`, { per: 'warp' }));
      } else
        r.elect((r) => {
          r.arrive('empty[s]');
          for (let q = 0; q < C; q++) r.if(`cta != ${q}`, (r) => r.arrive(`empty[s]@(${q})`));
        });
      if (c.tile_k_steps) {
        r.if('(it + 1) % KT == 0', (r) => {
          r.if('instance == 0', (r) => r.elect((r) => r.bulkWait(0, true)));
          r.barSync(1, 'NCT');
          r.write('ebuf[0]');
          // the probe's st.shared.v4 pattern (threads 256 B apart: 32-way bank conflicts) moves
          // 16 B/cycle for the whole SM: hw/results/ops.json epilogue, 2068 cycles for 32 KiB
          r.work('EW');
          r.fenceProxyAsync();
          r.barSync(1, 'NCT');
          r.if('instance == 0', (r) =>
            r.elect((r) => {
              r.work('EC'); // the store address's run-time division (runtimeDivisions: epilogue)
              r.bulkStore('ebuf[0]', 'E');
              r.bulkCommit();
            }));
        });
      }
    }));
  return k.build();
}

/** How a probe's kernel differs from model.cu's gpipe. */
export interface GpipeShape {
  /**
   * Bytes per cycle the SM's consumer threads write the epilogue tile to shared memory at (default
   * {@link STS_CONFLICT_BYTES_PER_CYCLE}, gpipe's 32-way bank-conflicted pattern; lean.cu writes
   * conflict-free).
   */
  epilogueBytesPerCycle?: number;
  /**
   * Whether the producer lane loads from shared memory every iteration (default true: model.cu's
   * abort-flag check; lean.cu's producer does not), so that it is held once a tile while the
   * epilogue's stores run.
   */
  producerReadsShared?: boolean;
}

/** Whether a configuration reads HBM: the probe flushes L2 before every launch of an `hbm` stream. */
function fromHbm(c: GpipeConfig): boolean {
  return c.source === 'hbm';
}

/**
 * The timing of a configuration's source and destination. HBM streams read HBM (in the tensor
 * mainloops only the A box does: B is one tile shared by every CTA, L2-resident, so HBM carries
 * half the bytes and its capacity is scaled by 1 / that fraction; the A box reads HBM at
 * `tmaHbmStridedRowsPct` of the rate of contiguous tiles, its rows being 128 B, 40 KiB apart) and
 * share the distinct-address L2 share with all their bytes. Distinct L2 tiles use that share; in
 * the tensor mainloops only for the A box: the B box is L2-hot, half of each stage's bytes
 * (`tmaSharedTilePct` 50). The epilogue's bulk stores write a fresh tile each (model.cu, lean.cu:
 * `dst + (blockIdx.x * tiles + t) * E`), which reach HBM (`bulkStoreHbm`).
 */
export function sourceTiming(c: GpipeConfig, timing: Timing): Timing {
  const store = { bulkStoreHbm: 1 };
  if (fromHbm(c)) {
    const hbmFraction = c.copy === 'tensor_ab' ? 0.5 : 1;
    const strided = c.copy === 'tensor_ab' ? timing.tmaHbmStridedRowsPct.value / 100 : 1;
    return mergeTiming(timing, { tmaSourceHbm: 1, hbmBytesPerCycle: (timing.hbmBytesPerCycle.value * strided) / hbmFraction, tmaSourceL2Distinct: 1, ...store });
  }
  if (c.source === 'l2_distinct') return mergeTiming(timing, { tmaSourceL2Distinct: 1, tmaSharedTilePct: c.copy === 'tensor_ab' ? 50 : 0, ...store });
  return mergeTiming(timing, store);
}

/** Result of simulating one configuration: cycles per iteration and the model's bounding side. */
export interface GpipePrediction {
  cycles: number;
  bound: string;
}

/** Predicted steady-state cycles per iteration (mean spacing of the first consumer's passing full waits). */
export function predictGpipe(c: GpipeConfig, timing: Timing, glue: GpipeGlue = GPIPE_GLUE, iters = ITERS): GpipePrediction {
  const div = runtimeDivisions(c);
  const pg = glue.producer + (c.copy === 'tensor_ab' ? glue.producerTensor : 0) + (fromHbm(c) ? glue.producerHbm : c.source === 'l2_distinct' ? glue.producerL2Distinct : 0) + (c.cluster > 1 ? glue.producerMulticast : 0) + div.producer * timing.intDivMod.value + followingWarps(c, timing);
  return runGpipe(c, timing, { PG: Math.max(0, Math.round(pg)), CG: glue.consumer + div.consumer * timing.intDivMod.value, ITERS: iters });
}

/**
 * Simulates the probe kernel of `c` ({@link gpipeKernel} with `shape`) with parameter values
 * `params` (PG, CG: the producer's and consumers' own code per iteration, in cycles; ITERS) and
 * returns the steady-state cycles per iteration: the mean spacing of the first consumer's passing
 * full waits after {@link WARMUP}, or of the producer's own waits when there is no consumer.
 */
export function runGpipe(c: GpipeConfig, timing: Timing, params: { PG: number; CG: number; ITERS: number }, shape: GpipeShape = {}): GpipePrediction {
  const k = gpipeKernel(c, shape);
  const p = instantiate(k, { ...params, EC: runtimeDivisions(c).epilogue * timing.intDivMod.value });
  const t = sourceTiming(c, timing);
  const r = simulate(p, { timing: t, recordSpans: false, activeSms: c.ctas });
  const producer = p.agents.find((a) => a.roleName === 'producer')!.id;
  const consumer = p.agents.find((a) => a.roleName === 'consumer')?.id ?? producer;
  const passes: number[] = [];
  for (const e of r.events!) if (e.e === 'wait' && e.pass && e.agent === consumer) passes.push(e.t);
  const n = passes.length - 1 - WARMUP;
  const cycles = n > 0 ? (passes[passes.length - 1]! - passes[WARMUP]!) / n : NaN;
  // Bounding side: the producer stalls on empty when consumers bound the loop; consumers stall on
  // full when the producer or the copies do (the copies when the producer also waits long).
  const st = r.stats.stalls;
  const sum = (o: Record<string, number>, pre: string) => Object.entries(o).filter(([k2]) => k2.includes(pre)).reduce((a, [, v]) => a + v, 0);
  const pEmpty = consumer === producer ? 0 : sum(st[producer]!, 'empty');
  const cFull = sum(st[consumer]!, 'full');
  const tma = r.stats.tmaBusy[0]! / Math.max(1, r.cycles);
  const tc = r.stats.tcBusy[0]! / Math.max(1, r.cycles);
  let bound = pEmpty > cFull ? 'consumer' : 'producer issue';
  if (tc > 0.8) bound = 'tensor core';
  else if (tma > 0.8) bound = 'TMA bandwidth';
  else if (bound === 'producer issue' && (consumer === producer ? cFull : pEmpty) > 0.3 * r.cycles) bound = 'TMA latency';
  return { cycles, bound };
}

/** One row of the held-out report. */
export interface HeldRow {
  config: string;
  kind: string;
  heldOut: boolean;
  measured: number;
  predicted: number;
  error: number;
  bound: string;
}

/** A short name of a configuration. */
export function gpipeName(c: GpipeConfig): string {
  const parts = [c.family, `${c.ctas}cta`, `S=${c.stages}`, `${c.tile_bytes / 1024}KiB`];
  if (c.cluster > 1) parts.push(`C=${c.cluster}`);
  parts.push(`cw=${c.consumer_warps}`, c.source);
  if (c.work_cycles) parts.push(`W=${c.work_cycles}`);
  if (c.read) parts.push('read');
  if (c.tile_k_steps) parts.push(`KT=${c.tile_k_steps}`);
  return parts.join(' ');
}

/** Every configuration predicted, with its split label. */
export function gpipeRows(configs: GpipeConfig[], timing: Timing, glue: GpipeGlue = GPIPE_GLUE): HeldRow[] {
  const held = isHeldOut(configs);
  return configs.map((c, i) => {
    const p = predictGpipe(c, timing, glue);
    const measured = c.mean_cycles_per_iter;
    return { config: gpipeName(c), kind: kindOf(c), heldOut: held[i]!, measured, predicted: Math.round(p.cycles * 10) / 10, error: p.cycles / measured - 1, bound: p.bound };
  });
}

/** Median and max |error| per kind (and `all`) over the given rows. */
export function summarize(rows: HeldRow[]): { kind: string; n: number; median: number; max: number }[] {
  const kinds = [...new Set(rows.map((r) => r.kind)), 'all'];
  return kinds.map((kind) => {
    const abs = rows.filter((r) => kind === 'all' || r.kind === kind).map((r) => Math.abs(r.error)).sort((a, b) => a - b);
    return { kind, n: abs.length, median: abs[Math.floor(abs.length / 2)] ?? 0, max: abs[abs.length - 1] ?? 0 };
  });
}
