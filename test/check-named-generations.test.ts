/**
 * The stable-step forward runs count a named barrier's generations (src/check/stable.ts
 * `namedCompletions`, src/check/forward-run.ts; docs/CHECK.md "Stable waits"): a run's j-th
 * `bar.sync` on one named barrier passes only when the threads the others can bring complete j
 * generations. Checked against the unreduced search (test/support/differential.ts) on generated
 * pipelines in FlashAttention-3's order: two consumer groups, the first waits on the stage's full
 * barrier and hands the turn to the second with `bar.arrive`, the second waits only at
 * `bar.sync` (it reads the stage without an mbarrier wait of its own), then each releases the
 * stage; variants hand the turn over before the first group's wait (a race), let the second group
 * wait on the full barrier too, use one or two warps per group, and hand the turn back to the
 * first group with a second named barrier or not.
 */
import { describe, expect, test } from 'vitest';
import { compareGenerated, expectSameAsUnreduced } from './support/sketch-compare.js';
import { parseSketch } from '../src/lang/index.js';
import { instantiate } from '../src/machine/program.js';
import { check } from '../src/check/check.js';

/** One generated pipeline's choices. */
interface Shape {
  S: number;
  K: number;
  /** Warps per consumer group. */
  W: 1 | 2;
  /** The first group hands the turn over before its wait on the full barrier (a race on A). */
  early: boolean;
  /** The second group waits on the full barrier too. */
  secondWaits: boolean;
  /** The second group hands the turn back with named barrier 2 (the first syncs on it). */
  turnBack: boolean;
}

/** The sketch of a pipeline in FA3's order (see the module comment). */
function pipeline(g: Shape): string {
  const threads = 64 * g.W;
  const first = g.early
    ? `        bar.arrive 1, ${threads}
        mbarrier.try_wait.parity full[s], (k / S) & 1`
    : `        mbarrier.try_wait.parity full[s], (k / S) & 1
        bar.arrive 1, ${threads}`;
  const back0 = g.turnBack ? `        if k > 0:
            bar.sync 2, ${threads}
` : '';
  const back1 = g.turnBack ? `        if k < K - 1:
            bar.arrive 2, ${threads}
` : '';
  const wait1 = g.secondWaits ? `        mbarrier.try_wait.parity full[s], (k / S) & 1
` : '';
  return `kernel "turns" arch=sm_90a
param S = ${g.S}
param K = ${g.K}
barrier full[S] count=1
barrier empty[S] count=${2 * g.W}
smem A[S] bytes=256
role producer warps=1 per=one:
    for i in range(0, K):
        s = i % S
        mbarrier.try_wait.parity empty[s], ((i / S) & 1) ^ 1
        mbarrier.arrive.expect_tx full[s], 256
        cp.async.bulk.tensor A[s], 256, full[s]
role first warps=${g.W} per=warp:
    for k in range(0, K):
        s = k % S
${back0}${first}
        ld.shared A[s]
        mbarrier.arrive empty[s]
role second warps=${g.W} per=warp:
    for k in range(0, K):
        s = k % S
        bar.sync 1, ${threads}
${wait1}        ld.shared A[s]
${back1}        mbarrier.arrive empty[s]
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
    const S = 1 + r(2);
    out.push({ S, K: S + 1 + r(2), W: (1 + (S === 1 ? r(2) : 0)) as 1 | 2, early: r(4) === 0, secondWaits: r(4) === 0, turnBack: r(2) === 1 });
  }
  return out;
}

/** Hand-picked shapes: the FA3 order at one and two stages, the early hand-over, the turn handed back. */
const PICKED: Shape[] = [
  { S: 1, K: 3, W: 1, early: false, secondWaits: false, turnBack: false },
  { S: 2, K: 4, W: 1, early: false, secondWaits: false, turnBack: false },
  { S: 2, K: 3, W: 1, early: true, secondWaits: false, turnBack: false },
  { S: 2, K: 3, W: 1, early: false, secondWaits: false, turnBack: true },
  { S: 1, K: 3, W: 2, early: false, secondWaits: false, turnBack: true },
  { S: 2, K: 3, W: 1, early: false, secondWaits: true, turnBack: false },
];

describe('named-barrier generations in the forward runs, against the unreduced search', () => {
  test.each(PICKED.map((g) => [JSON.stringify(g), g] as const))('picked %s', (_name, g) => {
    expectSameAsUnreduced(pipeline(g), 'turns.mbk');
  }, 120_000);

  test('generated pipelines: every reduction finds what the full search finds', () => {
    expect(compareGenerated(shapes(10, 20261208), pipeline, 'turns.mbk')).toBeGreaterThanOrEqual(5);
  }, 900_000);

  test('the early hand-over is a race on A', () => {
    const p = instantiate(parseSketch(pipeline(PICKED[2]!), 'turns.mbk').kernel!);
    const r = check(p, { maxStates: 200_000, timeout: 120_000, randomRuns: false });
    expect(r.verdict).toBe('race');
    expect(r.hazards.map((h) => h.kind)).toContain('race');
  }, 240_000);
});
