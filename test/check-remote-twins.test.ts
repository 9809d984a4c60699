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
import { compareCases, releasePipeline, xorshift, type ReleaseShape } from './support/release-pipeline.js';
import { parseSketch } from '../src/lang/index.js';
import { instantiate } from '../src/machine/program.js';
import { check } from '../src/check/check.js';

/** One generated pipeline's choices: a read after the release, no wait before the refill, a cluster barrier after the releases. */
interface Shape extends ReleaseShape { late: boolean; nowait: boolean; tail?: boolean }

/** The sketch of a 2-CTA pipeline with consumer warps releasing every stage on both CTAs (see the module comment). */
function sketch(g: Shape): string {
  return releasePipeline(g, {
    name: 'twins', producerWait: !g.nowait, afterRelease: g.late ? 'ld.shared A[s]' : 'work 1',
    tail: g.tail ? '    barrier.cluster.arrive\n    barrier.cluster.wait\n' : '',
  });
}

/** The generated shapes, the same on every run. */
function shapes(n: number, seed: number): Shape[] {
  const r = xorshift(seed);
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
    // A case whose unreduced search passes the bound (a count one short completes phases early) is not compared.
    const compared = compareCases(cases, sketch, 'twins.mbk', 60_000);
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
