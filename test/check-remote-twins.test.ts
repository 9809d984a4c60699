/**
 * Interchangeable remote arrives (src/check/landing-order.ts, docs/CHECK.md "Interchangeable remote
 * arrives") against the unreduced search: generated 2-CTA pipelines whose consumer warps release
 * each stage on both CTAs (`arrive.release.cluster empty[s]@d`, DeepGEMM's release), so that several
 * remote arrives of one instruction are in flight to one barrier at once and a consumer a stage
 * ahead arrives again from the same instruction. Variants: a multicast producer on rank 0, the
 * empty count short or long by one, a cluster barrier after the releases (the generator also writes a read after the release and a
 * missing wait, whose unreduced searches pass the bound: not compared here). The hazards and final
 * states of every reduced configuration must equal the unreduced search's (test/support/differential.ts).
 */
import { describe, expect, test } from 'vitest';
import { compare } from './support/differential.js';
import { parseSketch } from '../src/lang/index.js';
import { instantiate } from '../src/machine/program.js';
import { check } from '../src/check/check.js';

/** One generated pipeline's choices. */
interface Shape { S: number; K: number; W: number; count: number; multicast: boolean; late: boolean; nowait: boolean; tail?: boolean }

/** The sketch of a 2-CTA pipeline with consumer warps releasing every stage on both CTAs (see the module comment). */
function sketch(g: Shape): string {
  const copy = g.multicast
    ? `        if cta == 0:
            cp.async.bulk.tensor A[s], 256, full[s] multicast=3
        cp.async.bulk.tensor B[s], 256, full[s]
        mbarrier.arrive.expect_tx full[s], 512`
    : `        cp.async.bulk.tensor A[s], 256, full[s]
        mbarrier.arrive.expect_tx full[s], 256`;
  return `kernel "twins" arch=sm_90a cluster=2
param S = ${g.S}
param K = ${g.K}
barrier full[S] count=1
barrier empty[S] count=${g.count}
smem A[S] bytes=256
smem B[S] bytes=256
role producer warps=1 per=one:
    for i in range(0, K):
        s = i % S
        ${g.nowait ? 'work 1' : 'mbarrier.try_wait.parity empty[s], ((i / S) & 1) ^ 1'}
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
        ${g.late ? 'ld.shared A[s]' : 'work 1'}
${g.tail ? '    barrier.cluster.arrive\n    barrier.cluster.wait\n' : ''}`;
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
    const W = 2;
    const bug = r(3);
    out.push({ S: 1, K: 2, W, count: 2 * W + (bug === 1 ? -1 : bug === 2 ? 1 : 0), multicast: r(2) === 1, late: false, nowait: false });
  }
  return out;
}

describe('interchangeable remote arrives against the unreduced search', () => {
  // With a cluster barrier after the releases (their issuers' barrier.cluster.arrive waits for them: not interchanged).
  const tails: Shape[] = [{ S: 1, K: 2, W: 2, count: 4, multicast: true, late: false, nowait: false, tail: true }, { S: 1, K: 2, W: 2, count: 5, multicast: false, late: false, nowait: false, tail: true }];
  const cases = [...shapes(8, 20261207), ...tails];
  test('generated 2-CTA release pipelines: every reduction finds what the full search finds', () => {
    let compared = 0;
    for (const g of cases) {
      const text = sketch(g);
      const parsed = parseSketch(text, 'twins.mbk');
      expect(parsed.diagnostics).toEqual([]);
      // null: the unreduced search passes the bound (a count one short completes phases early).
      const r = compare(parsed.kernel!, 60_000);
      if (!r) continue;
      compared++;
      expect({ g, divergences: r.divergences }).toEqual({ g, divergences: [] });
    }
    expect(compared).toBeGreaterThanOrEqual(8);
  }, 400_000);

  test('the rule acts: remote arrives of one instruction land in one order, and fewer states are stored', () => {
    const g: Shape = { S: 1, K: 3, W: 2, count: 4, multicast: true, late: false, nowait: false };
    const p = instantiate(parseSketch(sketch(g), 'twins.mbk').kernel!);
    const reduced = check(p, { maxStates: 200_000, timeout: 120_000 });
    const plain = check(p, { maxStates: 200_000, timeout: 120_000, por: false, symmetry: false });
    expect([reduced.complete, plain.complete, reduced.verdict]).toEqual([true, true, plain.verdict]);
    expect(reduced.coverage.states).toBeLessThan(plain.coverage.states / 10);
  }, 240_000);
});
