/**
 * Arrivals on counting barriers across a phase boundary (src/check/counting-arrive.ts, docs/CHECK.md
 * "Arrivals across a phase boundary") against the unreduced search (test/support/differential.ts):
 * generated 2-CTA release pipelines in DeepGEMM's order (each consumer warp releases the stage on
 * CTA 0, then on CTA 1, so CTA 1's warps release the peer's stage before their own and the peer's
 * next-round releases can land in the current phase), with the empty count right, one short or
 * one long, one or two stages, a multicast producer or not, and an observer that waits on the
 * empty barrier's current phase; and small kernels where the order of two arrivals is visible: a
 * second completion between them (a wait passes only in one order), a wait that passes on the
 * current phase (disabled by the completion), mixed arrival counts (an over-arrival in one order).
 * The hazards and final states of every reduced configuration must equal the unreduced search's.
 */
import { describe, expect, test } from 'vitest';
import { compare } from './support/differential.js';
import { compareCases, releasePipeline, xorshift, type ReleaseShape } from './support/release-pipeline.js';
import { parseSketch } from '../src/lang/index.js';
import { instantiate } from '../src/machine/program.js';
import { check } from '../src/check/check.js';
import { countingUnits } from '../src/check/counting-arrive.js';
import { Machine } from '../src/machine/machine.js';

/** One generated pipeline's choices. */
interface Shape extends ReleaseShape { observer: boolean }

/** The sketch of a 2-CTA pipeline whose consumer warps release every stage on both CTAs (see the module comment). */
function pipeline(g: Shape): string {
  // An observer of CTA 1 that waits on empty[0]'s fresh phase with the parity of the phase before
  // (it passes at once, and no more once phase 0 completed, until phase 1 does), then writes B[0].
  const observer = g.observer ? `role observer warps=1 per=one where=cta == 1:
    mbarrier.try_wait.parity empty[0], 1
    work 1
` : '';
  return releasePipeline(g, { name: 'counting', tail: observer });
}

/** The generated shapes, the same on every run. */
function shapes(n: number, seed: number): Shape[] {
  const r = xorshift(seed);
  const out: Shape[] = [];
  for (let i = 0; i < n; i++) {
    const S = 1 + r(2);
    // Two warps a CTA only at one stage: the unreduced search of two stages passes the bound.
    const W = S === 1 ? 1 + r(2) : 1;
    const bug = r(3);
    out.push({ S, K: S + 1, W, count: 2 * W + (bug === 1 ? -1 : bug === 2 ? 1 : 0), multicast: r(2) === 1, observer: r(3) === 0 });
  }
  return out;
}

/** Small kernels where the order of two arrivals on one barrier is visible (see the module comment). */
const VISIBLE: Record<string, string> = {
  // Two arrivals complete two phases of a count-1 barrier: the waiter, let go by y's second
  // arrive (on c), passes its wait for phase 0 only when y's arrival on b came first. (Each
  // arriver does some work first, so that both arrives are enabled in a state the search closes
  // with forced steps, not only in the initial state, which it expands in every order.)
  'second completion': `kernel "two" arch=sm_90a
barrier b[1] count=1
barrier c[1] count=1
role x warps=1 per=one:
    work 1
    mbarrier.arrive b[0]
role y warps=1 per=one:
    work 1
    mbarrier.arrive b[0]
    mbarrier.arrive c[0]
role waiter warps=1 per=one:
    mbarrier.try_wait.parity c[0], 0
    mbarrier.try_wait.parity b[0], 0
`,
  // A wait with the parity of the phase before passes on phase 0 only until the two arrivals complete it.
  'wait on the current phase': `kernel "now" arch=sm_90a
barrier b[1] count=2
role x warps=1 per=one:
    work 1
    mbarrier.arrive b[0]
role y warps=1 per=one:
    work 1
    mbarrier.arrive b[0]
role obs warps=1 per=one:
    work 1
    mbarrier.try_wait.parity b[0], 1
`,
  // Arrivals of 1 and 2 on a count-2 barrier: the 1 first makes the 2 over-arrive (a trap), the 2 first completes the phase.
  'mixed counts': `kernel "mixed" arch=sm_90a
barrier b[1] count=2
role one warps=1 per=one:
    work 1
    mbarrier.arrive b[0]
role two warps=1 per=one:
    work 1
    mbarrier.arrive b[0], 2
role waiter warps=1 per=one:
    mbarrier.try_wait.parity b[0], 0
`,
  // Arrivals of 2 on a count-3 barrier: no unit divides it, so the second over-arrives after the first, in either order.
  'count not a multiple': `kernel "odd" arch=sm_90a
barrier b[1] count=3
role x warps=1 per=one:
    work 1
    mbarrier.arrive b[0], 2
role y warps=1 per=one:
    work 1
    mbarrier.arrive b[0], 2
role waiter warps=1 per=one:
    mbarrier.try_wait.parity b[0], 0
`,
  // Three arrivals on a count-2 barrier: the third begins phase 1; the waiter's second wait on the same parity passes stale, seeing phase 1 begun or not.
  'spill into the next phase': `kernel "spill" arch=sm_90a
barrier b[1] count=2
role arr warps=3 per=warp:
    work 1
    mbarrier.arrive b[0]
role waiter warps=1 per=one:
    mbarrier.try_wait.parity b[0], 0
    mbarrier.try_wait.parity b[0], 0
`,
};

describe('arrivals on counting barriers against the unreduced search', () => {
  test('which barrier arrays count arrivals', () => {
    const p = instantiate(parseSketch(pipeline({ S: 2, K: 3, W: 2, count: 4, multicast: true, observer: false }), 'c.mbk').kernel!);
    const u = countingUnits(p, new Machine(p));
    // empty[0..1] of each CTA count single arrivals; full (copies, expect_tx) does not.
    const names = Array.from(u, (v, k) => `${p.barrierName(k)}=${v}`);
    expect(names).toEqual(['full[0]@c0=0', 'full[1]@c0=0', 'empty[0]@c0=1', 'empty[1]@c0=1', 'full[0]@c1=0', 'full[1]@c1=0', 'empty[0]@c1=1', 'empty[1]@c1=1']);
    const mixed = instantiate(parseSketch(VISIBLE['mixed counts']!, 'm.mbk').kernel!);
    expect(Array.from(countingUnits(mixed, new Machine(mixed)))).toEqual([0]);
    // Counting, with a unit of 2 that does not divide the count 3: the rule refuses its arrivals at run time.
    const odd = instantiate(parseSketch(VISIBLE['count not a multiple']!, 'o.mbk').kernel!);
    expect(Array.from(countingUnits(odd, new Machine(odd)))).toEqual([2]);
  });

  test.each(Object.entries(VISIBLE))('a visible order: %s', (_name, text) => {
    const parsed = parseSketch(text, 'visible.mbk');
    expect(parsed.diagnostics).toEqual([]);
    const r = compare(parsed.kernel!, 20_000);
    expect(r).not.toBeNull();
    expect(r!.divergences).toEqual([]);
  }, 60_000);

  test('generated 2-CTA release pipelines: every reduction finds what the full search finds', () => {
    const compared = compareCases(shapes(10, 20261208), pipeline, 'counting.mbk', 60_000);
    // Five of the ten compare within the bounds (the unreduced searches of the others pass them).
    expect(compared).toBeGreaterThanOrEqual(4);
  }, 600_000);

  test('the rule acts: the releases of two rounds on one barrier no longer interleave', () => {
    const g: Shape = { S: 1, K: 3, W: 2, count: 4, multicast: true, observer: false };
    const p = instantiate(parseSketch(pipeline(g), 'counting.mbk').kernel!);
    const on = check(p, { maxStates: 200_000, timeout: 120_000 });
    const off = check(p, { maxStates: 200_000, timeout: 120_000, countingArrivals: false });
    expect([on.complete, off.complete, on.verdict]).toEqual([true, true, off.verdict]);
    expect(on.coverage.states).toBeLessThan(off.coverage.states);
  }, 240_000);
});
