/**
 * Generated pipeline kernels for the differential oracle (test/check-differential.test.ts): the
 * shapes of real kernels, a TMA producer filling stages on full barriers and consumers releasing
 * them on empty barriers, in 1- or 2-CTA clusters (multicast halves, remote releases, a producer
 * tail), with wgmma or generic reads, an optional bulk-store epilogue, consumers of several warps
 * or instances, and one or two planted mutations of the kinds real bugs take (a wait left out, a
 * parity off by one, a count or a byte total off, a release before the read, a store not waited
 * for). The kernels of gen-kernel.ts are random statement lists, which rarely take the forced steps
 * that need a pipeline's structure (stable waits, arrives and phase-completing landings); these
 * take them at almost every step.
 */
import fc from 'fast-check';
import { parseSketch } from '../../src/lang/index.js';
import type { Kernel } from '../../src/kernel/ir.js';

/** The mutations a generated pipeline may carry (none: a correct kernel). */
export const MUTATIONS = ['none', 'no-empty-wait', 'empty-parity', 'no-full-wait', 'full-parity', 'expect-bytes', 'empty-count', 'full-count',
  'release-early', 'no-store-wait', 'no-tail', 'no-fence', 'extra-read'] as const;
export type Mutation = (typeof MUTATIONS)[number];

/** The parameters of one generated pipeline. */
export interface PipelineShape {
  ctas: 1 | 2;
  stages: number;
  iters: number;
  /** Consumer roles (each releasing every stage). */
  consumers: number;
  /** Warps of each consumer role (each warp its own agent). */
  warps: number;
  /** Instances of each consumer role. */
  instances: number;
  read: 'ld' | 'wgmma';
  epilogue: boolean;
  mutations: Mutation[];
}

const mutationArb = fc.constantFrom(...MUTATIONS);

/** Shapes small enough for the unreduced search, most of them within its bound. */
export const pipelineShapeArb: fc.Arbitrary<PipelineShape> = fc.record({
  ctas: fc.constantFrom<1 | 2>(1, 1, 2),
  stages: fc.integer({ min: 1, max: 3 }),
  iters: fc.integer({ min: 1, max: 4 }),
  consumers: fc.integer({ min: 1, max: 2 }),
  warps: fc.constantFrom(1, 1, 2),
  instances: fc.constantFrom(1, 1, 2),
  read: fc.constantFrom<'ld' | 'wgmma'>('ld', 'wgmma'),
  epilogue: fc.boolean(),
  mutations: fc.array(mutationArb, { minLength: 0, maxLength: 2 }),
});

/** The sketch text of pipeline `g` (see the module comment). */
export function pipelineSketch(g: PipelineShape): string {
  const has = (m: Mutation) => g.mutations.includes(m);
  const C = g.ctas;
  const bytes = 1024;
  // Every warp of every consumer instance of every CTA releases each stage to each CTA's producer.
  const releases = g.consumers * g.warps * g.instances * C;
  const emptyCount = releases + (has('empty-count') ? 1 : 0);
  const fullCount = 1 + (has('full-count') ? 1 : 0);
  const expect = bytes + C * bytes + (has('expect-bytes') ? 16 : 0);
  const L: string[] = [];
  L.push(`kernel gp arch=sm_90a${C > 1 ? ` cluster=${C}` : ''}`);
  L.push(`barrier full[${g.stages}] count=${fullCount}`, `barrier empty[${g.stages}] count=${emptyCount}`);
  L.push(`smem A[${g.stages}] bytes=${bytes}`, `smem B[${g.stages}] bytes=${C * bytes}`);
  if (g.epilogue) L.push('smem D[1] bytes=1024');
  L.push('role producer warps=1 per=one:', `    for i in range(${g.iters}):`, `        s = i % ${g.stages}`);
  if (!has('no-empty-wait')) L.push(`        mbarrier.try_wait.parity empty[s], ((i / ${g.stages}) & 1)${has('empty-parity') ? '' : ' ^ 1'}`);
  L.push(`        mbarrier.arrive.expect_tx full[s], ${expect}`);
  L.push(`        cp.async.bulk.tensor A[s], ${bytes - (C > 1 ? bytes / 2 : 0)}, full[s]`);
  if (C > 1) L.push(`        cp.async.bulk.tensor A[s] + ${bytes / 2}, ${bytes / 2}, full[s]`);
  L.push(`        cp.async.bulk.tensor B[s] + cta * ${bytes}, ${bytes}, full[s]${C > 1 ? ` multicast=${(1 << C) - 1}` : ''}`);
  if (!has('no-tail')) {
    L.push(`    for i in range(${g.iters}, ${g.iters + g.stages}):`, `        s = i % ${g.stages}`);
    L.push(`        mbarrier.try_wait.parity empty[s], ((i / ${g.stages}) & 1) ^ 1`);
  }
  for (let r = 0; r < g.consumers; r++) {
    L.push(`role consumer${r} warps=${g.warps}${g.instances > 1 ? ` instances=${g.instances}` : ''}:`);
    L.push(`    for i in range(${g.iters}):`, `        s = i % ${g.stages}`);
    const release = C > 1 ? ['        mbarrier.arrive.release.cluster empty[s]@0 per=warp', '        mbarrier.arrive.release.cluster empty[s]@1 per=warp'] : ['        mbarrier.arrive empty[s] per=warp'];
    const early = has('release-early') && r === 0;
    if (!(has('no-full-wait') && r === 0)) L.push(`        mbarrier.try_wait.parity full[s], ((i / ${g.stages}) & 1)${has('full-parity') && r === 0 ? ' ^ 1' : ''}`);
    if (early) L.push(...release);
    if (g.read === 'wgmma') L.push('        wgmma.mma_async A[s], B[s] shape=64x128x16', '        wgmma.commit_group', '        wgmma.wait_group 0');
    else {
      L.push('        ld.shared A[s]', '        ld.shared B[s]');
      // Generic reads before the async proxy overwrites the stage: fenced (cross-proxy WAR).
      if (!has('no-fence')) L.push('        fence.proxy.async');
    }
    if (!early) L.push(...release);
    if (has('extra-read') && r === 0) L.push('        ld.shared A[s]');
    if (g.epilogue && r === 0) {
      L.push('    st.shared D[0]');
      if (!has('no-fence')) L.push('    fence.proxy.async');
      L.push('    elect:', '        cp.async.bulk.store D[0], 1024', '        cp.async.bulk.commit_group');
      if (!has('no-store-wait')) L.push('        cp.async.bulk.wait_group.read 0');
    }
  }
  return L.join('\n') + '\n';
}

/** Generated pipeline kernels (IR), with their sketch text for a failing case's message. */
export const pipelineArb: fc.Arbitrary<{ text: string; kernel: Kernel }> = pipelineShapeArb.map((g) => {
  const text = pipelineSketch(g);
  const r = parseSketch(text, 'gen-pipeline.mbk');
  if (!r.kernel) throw new Error(`gen-pipeline: a generated sketch does not parse: ${JSON.stringify(r.diagnostics)}\n${text}`);
  return { text, kernel: r.kernel };
});
