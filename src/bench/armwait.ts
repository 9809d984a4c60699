/**
 * The producer loops of `hw/probes/ops.cu` and `hw/probes/armwait.cu` written with the builder, and
 * their predicted cycles per iteration: a check of the per-operation costs of `src/sim/timing.ts`
 * (set from `hw/results/ops.json`) on loops that carry no kernel glue.
 *
 * The loop (one producer lane, S = 4 stages): from the fifth iteration a passing try_wait on a
 * barrier of 4 stages back (its own copy's `full[s]`, or with a consumer warp `empty[s]`),
 * `arrive.expect_tx(full[s], B)`, one bulk copy of B bytes. The consumer (mode `consume`, 32 lanes)
 * waits on `full[s]` and its lane 0 arrives on `empty[s]`; it slows the producer's loop by
 * `producerPerFollowingWarp`.
 */
import { readFileSync } from 'node:fs';
import { kernel } from '../kernel/builder.js';
import type { Kernel } from '../kernel/ir.js';
import { instantiate } from '../machine/program.js';
import { simulate } from '../sim/simulate.js';
import { mergeTiming, type Timing } from '../sim/timing.js';

/** One row of `hw/results/armwait.json`. */
export interface ArmwaitRow {
  source: 'l2' | 'hbm';
  tile_bytes: number;
  /** What warp 1 does: `none`, `follow`, `other`, `consume`, `arrive_elsewhere`. */
  waiter: string;
  cycles_per_iter: number;
  timeouts: number;
}

/** Loads `hw/results/armwait.json`. */
export function loadArmwait(path = 'hw/results/armwait.json'): ArmwaitRow[] {
  return (JSON.parse(readFileSync(path, 'utf8')) as { rows: ArmwaitRow[] }).rows;
}

const ITERS = 272;
const WARMUP = 16;

/**
 * The producer loop, alone (`consume` false: it waits on its own copies) or with the minimal
 * consumer warp (`consume` true: it waits on the consumer's `empty[s]`).
 */
export function producerLoopKernel(consume: boolean): Kernel {
  const k = kernel('hw-armwait', { arch: 'sm_90a', params: { S: 4, TILE: 4096, ITERS, FW: 0 } });
  k.barriers('full', 'S', { count: 1 });
  k.barriers('empty', 'S', { count: 1 });
  k.smem('stage', 'S', 'TILE');
  k.role('producer', { warps: 1, per: 'one' }, (r) =>
    r.for('it', 0, 'ITERS', (r) => {
      r.let('s', 'it % S');
      r.if('it >= S', (r) => r.wait(consume ? 'empty[s]' : 'full[s]', '((it / S) & 1) ^ 1', { form: 'try_wait' }));
      r.arriveExpectTx('full[s]', 'TILE');
      r.tma('stage[s]', 'TILE', 'full[s]', { tensor: false });
      r.work('FW'); // the consumer warp following the stages (producerPerFollowingWarp)
    }));
  if (consume) {
    k.role('consumer', { warps: 1, per: 'thread' }, (r) =>
      r.for('it', 0, 'ITERS', (r) => {
        r.let('s', 'it % S');
        r.wait('full[s]', '(it / S) & 1', { form: 'try_wait' });
        r.elect((r) => r.arrive('empty[s]'));
      }));
  }
  return k.build();
}

/**
 * Predicted cycles per iteration of the producer (mean spacing of its `arrive.expect_tx` after 16
 * warm-up iterations), for a tile of `tileBytes` from L2 or HBM on one SM.
 */
export function predictProducerLoop(consume: boolean, tileBytes: number, hbm: boolean, timing: Timing): number {
  const p = instantiate(producerLoopKernel(consume), { TILE: tileBytes, FW: consume ? Math.round(timing.producerPerFollowingWarp.value) : 0 });
  const t = hbm ? mergeTiming(timing, { tmaSourceHbm: 1 }) : timing;
  const r = simulate(p, { timing: t, recordSpans: false, activeSms: 1 });
  const prod = p.agents.find((a) => a.roleName === 'producer')!.id;
  const ts: number[] = [];
  for (const e of r.events!) if (e.e === 'arrive' && e.agent === prod) ts.push(e.t);
  return (ts[ts.length - 1]! - ts[WARMUP]!) / (ts.length - 1 - WARMUP);
}
