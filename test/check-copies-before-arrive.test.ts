/**
 * Postponed TMA landings past the arrive that brings the pending count to 0 (src/check/postpone.ts
 * `creditsCovered`, docs/CHECK.md "Postponed landings") against the unreduced search
 * (test/support/differential.ts): generated pipelines whose producer issues its copies before the
 * arrive that registers their bytes (DeepGEMM's order), with the registered bytes right, short
 * (a hang) or over (the phase completes early: tx-mismatch), copies in one or two chunks, the
 * bytes registered by `arrive.expect_tx` or by a standalone `expect_tx` and a plain arrive, one or
 * two CTAs (a multicast copy from rank 0), and a consumer that reads the stage before its wait (a
 * race) or releases it early. The hazards and final states of every reduced configuration must
 * equal the unreduced search's.
 */
import { describe, expect, test } from 'vitest';
import { compareGenerated, expectSameAsUnreduced } from './support/sketch-compare.js';
import { parseSketch } from '../src/lang/index.js';
import { instantiate } from '../src/machine/program.js';
import { check } from '../src/check/check.js';

/** One generated pipeline's choices. */
interface Shape {
  C: 1 | 2;
  S: number;
  K: number;
  /** Registered bytes minus the bytes the copies bring (0: right). */
  off: number;
  chunks: 1 | 2;
  /** `arrive.expect_tx` (false: `expect_tx`, then a plain arrive). */
  expectArrive: boolean;
  /** The consumer reads A before its wait (a race), or releases the stage before reading it. */
  bug: 'none' | 'read-early' | 'release-early';
}

/** The sketch of a pipeline whose producer copies A and B before registering their bytes (see the module comment). */
function pipeline(g: Shape): string {
  const bytes = 512 + g.off;
  const a = g.C === 2
    ? `        if cta == 0:
            cp.async.bulk.tensor A[s], 256, full[s] multicast=3 chunks=${g.chunks}`
    : `        cp.async.bulk.tensor A[s], 256, full[s] chunks=${g.chunks}`;
  const register = g.expectArrive
    ? `        mbarrier.arrive.expect_tx full[s], ${bytes}`
    : `        mbarrier.expect_tx full[s], ${bytes}
        mbarrier.arrive full[s]`;
  const consumer = g.bug === 'read-early'
    ? `        ld.shared A[s]
        mbarrier.try_wait.parity full[s], (k / S) & 1
        mbarrier.arrive empty[s]`
    : g.bug === 'release-early'
      ? `        mbarrier.try_wait.parity full[s], (k / S) & 1
        mbarrier.arrive empty[s]
        ld.shared A[s]`
      : `        mbarrier.try_wait.parity full[s], (k / S) & 1
        ld.shared A[s]
        ld.shared B[s]
        mbarrier.arrive empty[s]`;
  return `kernel "copies-first" arch=sm_90a cluster=${g.C}
param S = ${g.S}
param K = ${g.K}
barrier full[S] count=1
barrier empty[S] count=1
smem A[S] bytes=256
smem B[S] bytes=256
role producer warps=1 per=one:
    for i in range(0, K):
        s = i % S
        mbarrier.try_wait.parity empty[s], ((i / S) & 1) ^ 1
${a}
        cp.async.bulk.tensor B[s], 256, full[s]
${register}
role consumer warps=1 per=one:
    for k in range(0, K):
        s = k % S
${consumer}
`;
}

/** A small deterministic generator (xorshift), so the shapes are the same on every run. */
function shapes(n: number, seed: number): Shape[] {
  let x = seed >>> 0 || 1;
  const r = (k: number) => {
    x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0;
    return x % k;
  };
  const out: Shape[] = [];
  for (let i = 0; i < n; i++) {
    const C = (1 + r(2)) as 1 | 2;
    const S = 1 + r(2);
    const o = r(4);
    const b = r(4);
    out.push({
      C, S, K: S + 1, off: o === 1 ? 256 : o === 2 ? -256 : 0, chunks: (1 + r(2)) as 1 | 2, expectArrive: r(3) > 0,
      bug: b === 1 ? 'read-early' : b === 2 ? 'release-early' : 'none',
    });
  }
  return out;
}

/** Hand-picked shapes: every byte count and registration form at least once. */
const PICKED: Shape[] = [
  { C: 1, S: 1, K: 2, off: 0, chunks: 1, expectArrive: true, bug: 'none' },
  { C: 1, S: 1, K: 2, off: -256, chunks: 2, expectArrive: true, bug: 'none' },
  { C: 1, S: 1, K: 2, off: 256, chunks: 1, expectArrive: true, bug: 'none' },
  { C: 1, S: 2, K: 3, off: 0, chunks: 2, expectArrive: false, bug: 'none' },
  { C: 1, S: 1, K: 2, off: -256, chunks: 1, expectArrive: false, bug: 'none' },
  { C: 1, S: 1, K: 2, off: 0, chunks: 1, expectArrive: true, bug: 'read-early' },
  { C: 2, S: 1, K: 2, off: 0, chunks: 1, expectArrive: true, bug: 'none' },
  { C: 2, S: 1, K: 2, off: -256, chunks: 1, expectArrive: true, bug: 'none' },
];

describe('TMA landings postponed past the arrive that registers their bytes, against the unreduced search', () => {
  test.each(PICKED.map((g) => [JSON.stringify(g), g] as const))('picked %s', (_name, g) => {
    expectSameAsUnreduced(pipeline(g), 'copies.mbk');
  }, 120_000);

  test('generated pipelines: every reduction finds what the full search finds', () => {
    expect(compareGenerated(shapes(12, 20261208), pipeline, 'copies.mbk')).toBeGreaterThanOrEqual(6);
  }, 900_000);

  test('the rule acts: the landings before the producer\'s arrive no longer interleave with it', () => {
    // 26 states when every postponed landing is explored before the producer's arrive.expect_tx too.
    const g: Shape = { C: 1, S: 2, K: 4, off: 0, chunks: 1, expectArrive: true, bug: 'none' };
    const p = instantiate(parseSketch(pipeline(g), 'copies.mbk').kernel!);
    const on = check(p, { maxStates: 200_000, timeout: 120_000, randomRuns: false });
    expect([on.complete, on.verdict, on.coverage.states]).toEqual([true, 'ok', 14]);
  }, 240_000);
});
