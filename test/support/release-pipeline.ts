/**
 * The generated 2-CTA release pipelines of the counting-barrier and remote-twin tests
 * (test/check-counting-arrive.test.ts, test/check-remote-twins.test.ts): a producer fills `S`
 * stages for `K` rounds, and `W` consumer warps per CTA release every stage on both CTAs
 * (`mbarrier.arrive.release.cluster empty[s]@d`, DeepGEMM's release), so that several remote
 * arrives of one instruction are in flight to one barrier and a consumer a stage ahead arrives
 * again from the same instruction; and the loop that compares each with the unreduced search.
 */
import { expect } from 'vitest';
import { compare } from './differential.js';
import { parseSketch } from '../../src/lang/index.js';

/** One pipeline's sizes: stages, rounds, consumer warps per CTA, the empty barriers' arrival count, a multicast producer on rank 0. */
export interface ReleaseShape { S: number; K: number; W: number; count: number; multicast: boolean }

/** What a test adds to the pipeline. */
export interface ReleaseExtras {
  /** The kernel's name. */
  name: string;
  /** The producer waits for the empty stage before refilling it (default); false: `work 1` instead (a missing wait). */
  producerWait?: boolean;
  /** One statement of the consumer loop after the releases (none when absent). */
  afterRelease?: string;
  /** Text after the consumer's loop: lines of the consumer role (indented 4) or further roles. */
  tail?: string;
}

/** The sketch of one pipeline (see the module comment). */
export function releasePipeline(g: ReleaseShape, x: ReleaseExtras): string {
  const copy = g.multicast
    ? `        if cta == 0:
            cp.async.bulk.tensor A[s], 256, full[s] multicast=3
        cp.async.bulk.tensor B[s], 256, full[s]
        mbarrier.arrive.expect_tx full[s], 512`
    : `        cp.async.bulk.tensor A[s], 256, full[s]
        mbarrier.arrive.expect_tx full[s], 256`;
  return `kernel "${x.name}" arch=sm_90a cluster=2
param S = ${g.S}
param K = ${g.K}
barrier full[S] count=1
barrier empty[S] count=${g.count}
smem A[S] bytes=256
smem B[S] bytes=256
role producer warps=1 per=one:
    for i in range(0, K):
        s = i % S
        ${x.producerWait === false ? 'work 1' : 'mbarrier.try_wait.parity empty[s], ((i / S) & 1) ^ 1'}
${copy}
    for i in range(K, K + S):
        s = i % S
        mbarrier.try_wait.parity empty[s], ((i / S) & 1) ^ 1
role consumer warps=${g.W} per=warp:
    for k in range(0, K):
        s = k % S
        mbarrier.try_wait.parity full[s], (k / S) & 1
        ld.shared A[s]
        for d in range(0, 2):
            mbarrier.arrive.release.cluster empty[s]@d
${x.afterRelease !== undefined ? `        ${x.afterRelease}\n` : ''}${x.tail ?? ''}`;
}

/** A small deterministic generator (xorshift from `seed`): each call gives an integer in [0, k). */
export function xorshift(seed: number): (k: number) => number {
  let x = seed >>> 0 || 1;
  return (k) => {
    x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0;
    return x % k;
  };
}

/**
 * Checks each case's sketch (`text(g)`, parsed as `file`) with every reduction and without
 * (test/support/differential.ts `compare`, up to `maxStates` unreduced) and expects no divergence
 * (the case is named in a failure). Returns how many were compared: a case whose unreduced search
 * passes the bound is skipped.
 */
export function compareCases<G>(cases: readonly G[], text: (g: G) => string, file: string, maxStates: number): number {
  let compared = 0;
  for (const g of cases) {
    const parsed = parseSketch(text(g), file);
    expect(parsed.diagnostics).toEqual([]);
    const r = compare(parsed.kernel!, maxStates);
    if (!r) continue;
    compared++;
    expect({ g, divergences: r.divergences }).toEqual({ g, divergences: [] });
  }
  return compared;
}
