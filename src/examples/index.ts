/**
 * Built-in example kernels, written with the TypeScript builder. Each mirrors a figure or listing
 * of the chapter on asynchronous coordination with mbarriers (README cites it) or a standard pipeline.
 */
import { kernel } from '../kernel/builder.js';
import type { Kernel } from '../kernel/ir.js';

/** A built-in example. */
export interface Example {
  name: string;
  summary: string;
  build: () => Kernel;
  /** For `mbsim run`: print the phase-tracking table of this role's waits on this barrier array. */
  phaseTable?: { role: string; barrier: string; variable: string };
}

/**
 * The seed's mechanism figure: a barrier initialized with count 1, one `arrive.expect_tx(4096)`,
 * two 2,048-byte TMA copies; the phase flips when both the arrival and all bytes are in.
 */
export function mechanism(): Kernel {
  const k = kernel('mechanism', {
    params: { BYTES: 2048 },
    description: 'init(1), arrive.expect_tx(4096), two 2,048-byte TMA copies, phase flip',
  });
  k.barriers('bar', 1, { count: 1 });
  k.smem('tile', 2, 'BYTES');
  k.role('producer', { warps: 1, per: 'one' }, (r) => {
    r.arriveExpectTx('bar[0]', '2 * BYTES');
    r.tma('tile[0]', 'BYTES', 'bar[0]');
    r.tma('tile[1]', 'BYTES', 'bar[0]');
  });
  k.role('consumer', { warps: 1, per: 'thread' }, (r) => {
    r.wait('bar[0]', 0);
    r.read('tile[0]');
    r.read('tile[1]');
  });
  return k.build();
}

/**
 * The seed's phase-tracking loop: `stage = iteration % S`, wait on `tma_bar[stage]` with
 * `phase_tma`, flip `phase_tma` after the last stage. Empty barriers make the reuse safe.
 */
export function phaseTracking(): Kernel {
  const k = kernel('phase-tracking', {
    params: { S: 2, N: 4, BYTES: 4096 },
    description: "the chapter's S-stage phase-tracking loop (table: iteration, stage, parity, phase_tma; S=2 is the chapter's)",
  });
  k.barriers('tma_bar', 'S', { count: 1 });
  k.barriers('empty', 'S', { count: 1 });
  k.smem('buf', 'S', 'BYTES');
  k.role('producer', { warps: 1, per: 'one' }, (r) => {
    r.let('phase_empty', 1);
    r.for('iteration', 0, 'N', (r) => {
      r.let('stage', 'iteration % S');
      r.wait('empty[stage]', 'phase_empty');
      r.if('stage == S - 1', (r) => r.let('phase_empty', 'phase_empty ^ 1'));
      r.arriveExpectTx('tma_bar[stage]', 'BYTES');
      r.tma('buf[stage]', 'BYTES', 'tma_bar[stage]');
    });
  });
  k.role('consumer', { warps: 1, per: 'one' }, (r) => {
    r.let('phase_tma', 0);
    r.for('iteration', 0, 'N', (r) => {
      r.let('stage', 'iteration % S');
      r.wait('tma_bar[stage]', 'phase_tma');
      r.if('stage == S - 1', (r) => r.let('phase_tma', 'phase_tma ^ 1'));
      r.read('buf[stage]');
      r.arrive('empty[stage]');
    });
  });
  return k.build();
}

/**
 * The S-stage warp-specialized full/empty pipeline on Blackwell: a TMA producer warp, an MMA
 * issuer warp committing each stage to its empty barrier and each tile to the accumulator barrier,
 * and an epilogue warpgroup. Persistent over TILES output tiles; iteration counters run across
 * tiles so phases stay in step.
 */
export function pipeline(): Kernel {
  const k = kernel('pipeline', {
    arch: 'sm_100a',
    params: { S: 4, K: 16, TILES: 2, TILE_A: 16384, TILE_B: 16384, CTAS: 1 },
    grid: 'CTAS',
    description: 'S-stage full/empty pipeline: TMA producer, tcgen05 MMA issuer, epilogue warpgroup (Blackwell)',
  });
  k.barriers('full', 'S', { count: 1 });
  k.barriers('empty', 'S', { count: 1 });
  k.barriers('acc_full', 1, { count: 1 });
  k.barriers('acc_empty', 1, { count: 128 });
  k.smem('A', 'S', 'TILE_A');
  k.smem('B', 'S', 'TILE_B');
  k.tmem('acc', 1, 65536);
  k.role('producer', { warps: 1, per: 'one' }, (r) =>
    r.for('i', 0, 'TILES * K', (r) => {
      r.let('s', 'i % S');
      r.wait('empty[s]', '((i / S) & 1) ^ 1');
      r.arriveExpectTx('full[s]', 'TILE_A + TILE_B');
      r.tma('A[s]', 'TILE_A', 'full[s]');
      r.tma('B[s]', 'TILE_B', 'full[s]');
    }));
  k.role('mma', { warps: 1, per: 'one' }, (r) =>
    r.for('t', 0, 'TILES', (r) => {
      r.wait('acc_empty[0]', '(t & 1) ^ 1');
      r.for('kk', 0, 'K', (r) => {
        r.let('i', 't * K + kk');
        r.let('s', 'i % S');
        r.wait('full[s]', '(i / S) & 1');
        r.mma(['A[s]', 'B[s]'], 'acc[0]', { m: 128, n: 128, k: 64 });
        r.commit('empty[s]');
      });
      r.commit('acc_full[0]');
    }));
  k.role('epilogue', { warps: 4, per: 'thread' }, (r) =>
    r.for('t', 0, 'TILES', (r) => {
      r.wait('acc_full[0]', 't & 1');
      r.tmemLoad('acc[0]');
      r.arrive('acc_empty[0]');
    }));
  return k.build();
}

/**
 * The same pipeline on Hopper: a TMA producer and two consumer warpgroups that run wgmma on each
 * stage, wait for it with `wgmma.wait_group 0` and then arrive on the empty barrier; the epilogue
 * writes the tile to shared memory, fences the async proxy and stores it with a bulk copy.
 */
export function hopper(): Kernel {
  const k = kernel('hopper', {
    arch: 'sm_90a',
    params: { S: 4, K: 16, CONSUMERS: 2, TILE_A: 16384, TILE_B: 16384, TILE_C: 32768 },
    description: 'the pipeline on Hopper: TMA producer, 2 consumer warpgroups with wgmma, bulk-store epilogue',
  });
  k.barriers('full', 'S', { count: 1 });
  k.barriers('empty', 'S', { count: 'CONSUMERS' });
  k.smem('A', 'S', 'TILE_A');
  k.smem('B', 'S', 'TILE_B');
  k.smem('C', 'CONSUMERS', 'TILE_C');
  k.role('producer', { warps: 1, per: 'one' }, (r) =>
    r.for('i', 0, 'K', (r) => {
      r.let('s', 'i % S');
      r.wait('empty[s]', '((i / S) & 1) ^ 1');
      r.arriveExpectTx('full[s]', 'TILE_A + TILE_B');
      r.tma('A[s]', 'TILE_A', 'full[s]');
      r.tma('B[s]', 'TILE_B', 'full[s]');
    }));
  k.role('consumer', { warps: 4, per: 'thread', instances: 'CONSUMERS' }, (r) => {
    r.for('i', 0, 'K', (r) => {
      r.let('s', 'i % S');
      r.wait('full[s]', '(i / S) & 1');
      r.wgmma(['A[s]', 'B[s]'], { m: 64, n: 256, k: 64 });
      r.wgmmaCommit();
      r.wgmmaWait(0);
      r.elect((r) => r.arrive('empty[s]'));
    });
    r.write('C[instance]');
    r.fenceProxyAsync();
    r.barSync('1 + instance', 128);
    r.elect((r) => {
      r.bulkStore('C[instance]', 'TILE_C');
      r.bulkCommit();
      r.bulkWait(0);
    });
  });
  return k.build();
}

/**
 * A 2-CTA cluster: each CTA's producer loads half of a stage and multicasts it to both CTAs; each
 * full barrier expects both halves; each consumer releases the stage to both producers (one local,
 * one remote arrive), so every empty barrier counts the consumers of the whole cluster. Producers
 * drain the ring before exiting so no CTA exits while its peer can still signal into it.
 */
export function cluster(): Kernel {
  const k = kernel('cluster', {
    arch: 'sm_90a',
    cluster: 2,
    params: { S: 2, K: 8, HALF: 8192 },
    description: '2-CTA cluster: multicast TMA halves, remote arrives on the empty barriers, producer tail',
  });
  k.barriers('full', 'S', { count: 1 });
  k.barriers('empty', 'S', { count: 'ncta' });
  k.smem('tile', '2 * S', 'HALF');
  k.role('producer', { warps: 1, per: 'one' }, (r) => {
    r.for('i', 0, 'K', (r) => {
      r.let('s', 'i % S');
      r.wait('empty[s]', '((i / S) & 1) ^ 1');
      r.arriveExpectTx('full[s]', '2 * HALF');
      r.tma('tile[2 * s + cta]', 'HALF', 'full[s]', { multicast: '(1 << ncta) - 1' });
    });
    // Producer tail: wait until both consumers released every stage of the last round.
    r.for('i', 'K', 'K + S', (r) => {
      r.let('s', 'i % S');
      r.wait('empty[s]', '((i / S) & 1) ^ 1');
    });
  });
  k.role('consumer', { warps: 1, per: 'one' }, (r) =>
    r.for('i', 0, 'K', (r) => {
      r.let('s', 'i % S');
      r.wait('full[s]', '(i / S) & 1');
      r.read('tile[2 * s]');
      r.read('tile[2 * s + 1]');
      r.arrive('empty[s]');
      r.arrive('empty[s]@(1 - cta)');
    }));
  return k.build();
}

/** Every built-in example, in the order `mbsim examples` lists them. */
export const EXAMPLES: Example[] = [
  { name: 'mechanism', summary: "the chapter's mechanism figure: init(1), arrive.expect_tx(4096), two 2,048-byte TMA copies, phase flip", build: mechanism },
  { name: 'phase-tracking', summary: "the chapter's S-stage phase-tracking loop; prints the iteration/stage/parity table (S=2 is the chapter's)", build: phaseTracking, phaseTable: { role: 'consumer', barrier: 'tma_bar', variable: 'phase_tma' } },
  { name: 'pipeline', summary: 'S-stage warp-specialized full/empty pipeline: TMA producer, tcgen05 MMA issuer, epilogue (Blackwell; default)', build: pipeline },
  { name: 'hopper', summary: 'the same pipeline on Hopper: wgmma consumer warpgroups arriving on empty, bulk-store epilogue', build: hopper },
  { name: 'cluster', summary: '2-CTA cluster: multicast TMA, remote arrives on empty barriers, producer tail', build: cluster },
];

/** The example named `name`, or undefined. */
export function findExample(name: string): Example | undefined {
  return EXAMPLES.find((e) => e.name === name);
}
