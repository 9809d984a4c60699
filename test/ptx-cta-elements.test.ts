// CTA symmetry with a permutation of buffer elements (src/check/cta-elements.ts): on generated
// 2-CTA PTX kernels whose CTAs copy into, and read, tile elements derived from their rank, the
// hazards of the search with CTA symmetry, closed under its permutations (subjects renamed through
// the barrier and buffer key maps), are those of the search without it and of the unreduced search;
// a permutation is found only where the elements follow the CTA swap.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { analyse } from '../src/check/analysis.js';
import { check, type CheckOptions } from '../src/check/index.js';
import type { CtaPerm } from '../src/check/cta-symmetry.js';
import { instantiate, type Program } from '../src/machine/program.js';
import { parsePtx } from '../src/ptx/index.js';
import { translatePtx } from '../src/ptxi/index.js';
import { boxBytes, clusterPtx, type ClusterGen } from './support/ptx-cluster-gen.js';

function program(g: ClusterGen): Program {
  const r = parsePtx(clusterPtx(g), 'gen.ptx');
  if (!r.ok) throw new Error(r.diagnostic.message);
  return instantiate(translatePtx(r.module, { block: 64, cluster: 2, tensorMaps: { param_0: boxBytes(g) } }).kernel);
}

/**
 * Every hazard and warning of a search (`--all --strict`) as `kind|subject` with the subject's full
 * name (hangs and cycles by kind), closed under `perms`: a subject's image is the name of the image
 * of its barrier or buffer key. With the permutations valid, the closure of the reduced search's
 * hazards is the unreduced search's set, which is closed already.
 */
function hazards(p: Program, opts: CheckOptions, perms: readonly CtaPerm[]): { complete: boolean; states: number; hazards: string[] } {
  const r = check(p, { all: true, strict: true, ...opts });
  const bars = new Map<string, number>();
  const bufs = new Map<string, number>();
  for (let k = 0; k < p.ctas * p.barriersPerCta; k++) bars.set(p.barrierName(k), k);
  for (let k = 0; k < p.ctas * p.buffersPerCta; k++) bufs.set(p.bufferName(k), k);
  const image = (s: { type: string; name: string }, q: CtaPerm) => {
    const k = (s.type === 'barrier' ? bars : bufs).get(s.name);
    return k === undefined ? s.name : s.type === 'barrier' ? p.barrierName(q.bar[k]!) : p.bufferName(q.buf[k]!);
  };
  const out = new Set<string>();
  for (const h of [...r.hazards, ...r.warnings]) {
    if (h.kind === 'hang' || h.kind === 'cycle' || !h.subject) { out.add(h.kind); continue; }
    out.add(`${h.kind}|${h.subject.name}`);
    for (const q of perms) out.add(`${h.kind}|${image(h.subject, q)}`);
  }
  return { complete: r.complete, states: r.coverage.states, hazards: [...out].sort() };
}

const BASE: ClusterGen = { dstC: 0, dstK: 1, mask: 3, expect: 2048, reads: [{ c: 0, k: 1 }], wait: true, exitSync: true, rank1Only: false };

/** Any choice (most break the swap somewhere: the rank-relative elements, the mask, rank 1 alone). */
const anyArb: fc.Arbitrary<ClusterGen> = fc.record({
  dstC: fc.constantFrom(0, 1, 2),
  dstK: fc.constantFrom(1, -1, 0, 2),
  mask: fc.constantFrom<ClusterGen['mask']>(3, 1, 2, 'own', 'peer'),
  expect: fc.constantFrom(2048, 1024, 3072),
  reads: fc.array(fc.record({ c: fc.constantFrom(0, 1, 2), k: fc.constantFrom(1, 0, -1) }), { minLength: 1, maxLength: 2 }),
  wait: fc.boolean(),
  exitSync: fc.boolean(),
  rank1Only: fc.constantFrom(false, false, true),
  wide: fc.boolean(),
  off: fc.constantFrom<ClusterGen['off']>(undefined, 'pad', 'padPlus', 'rank'),
});

/** Choices that follow the swap: the copy into element c0 + rank, reads of the own, the peer's or the untouched element. */
const symArb: fc.Arbitrary<ClusterGen> = fc.record({
  c0: fc.constantFrom(0, 1),
  mask: fc.constantFrom<ClusterGen['mask']>(3, 'own', 'peer'),
  expect: fc.constantFrom(2048, 1024, 3072),
  reads: fc.array(fc.constantFrom('own', 'peer', 'untouched'), { minLength: 1, maxLength: 2 }),
  wait: fc.boolean(),
  exitSync: fc.boolean(),
  // 2 KiB elements with the copy at the alignment pad's run-time offset (0): still the swap.
  off: fc.constantFrom<ClusterGen['off']>(undefined, 'pad', 'pad'),
}).map(({ c0, reads, off, ...rest }) => ({
  ...rest,
  ...(off ? { wide: true, off } : {}),
  dstC: c0,
  dstK: 1,
  reads: reads.map((r) => (r === 'own' ? { c: c0, k: 1 } : r === 'peer' ? { c: c0 + 1, k: -1 } : { c: (c0 + 2) % 3, k: 0 })),
  rank1Only: false,
}));

const genArb = fc.oneof({ arbitrary: symArb, weight: 2 }, { arbitrary: anyArb, weight: 1 });

/** 2 KiB elements, the copy at a run-time offset inside its element (each of the three), the rest as in the symmetric choices. */
const offArb: fc.Arbitrary<ClusterGen> = fc.tuple(symArb, fc.constantFrom<NonNullable<ClusterGen['off']>>('pad', 'padPlus', 'rank')).map(([g, off]) => ({ ...g, wide: true, off }));

/** The oracle on one kernel: hazards with CTA symmetry on, off and unreduced agree; whether a permutation was found, and the hazards. */
function oracle(g: ClusterGen): { perms: number; hazards: number; fewer: boolean } {
  const p = program(g);
  const perms = analyse(p).cta.perms;
  const on = hazards(p, { maxStates: 20_000, timeout: 30_000 }, perms);
  const off = hazards(p, { ctaSymmetry: false, maxStates: 20_000, timeout: 30_000 }, []);
  const none = hazards(p, { por: false, symmetry: false, maxStates: 40_000, timeout: 30_000 }, []);
  expect(on.complete && off.complete && none.complete, JSON.stringify(g)).toBe(true);
  expect(on.hazards, JSON.stringify(g)).toEqual(off.hazards);
  expect(on.hazards, JSON.stringify(g)).toEqual(none.hazards);
  return { perms: perms.length, hazards: on.hazards.length, fewer: on.states < off.states };
}

describe('CTA symmetry with rank-indexed buffer elements (cta-elements.ts)', () => {
  it('each CTA copies into and reads its own element: the swap with σ = (0 1), fewer states, the same hazards', () => {
    const p = program(BASE);
    const an = analyse(p);
    expect(an.cta.perms.map((q) => q.rank)).toEqual([[1, 0]]);
    const q = an.cta.perms[0]!;
    // tile[0] of CTA 0 is tile[1] of CTA 1: the keys move across the CTAs and between the elements.
    expect([0, 1, 2].map((j) => q.buf[j]! - p.buffersPerCta)).toEqual([1, 0, 2]);
    const on = hazards(p, {}, an.cta.perms);
    const off = hazards(p, { ctaSymmetry: false }, []);
    expect(on.complete && off.complete).toBe(true);
    expect(on.hazards).toEqual(off.hazards);
    expect(on.states).toBeLessThan(off.states);
  }, 60_000);

  it('a copy at a run-time offset inside its element: the views it can name are bounded by the offset\'s known values', () => {
    const W: ClusterGen = { ...BASE, wide: true };
    // The alignment pad: the front end knows the offset only as a multiple of 1,024, so views 1 KiB
    // into each element exist (running into the next one); the warp analysis knows it is 0.
    const p = program({ ...W, off: 'pad' });
    expect(p.bufferSpace.views.filter((v) => v.off === 1024 && v.len === 2048).map((v) => v.index)).toEqual([0, 1]);
    const an = analyse(p);
    expect(an.cta.perms.map((q) => q.rank)).toEqual([[1, 0]]);
    expect([0, 1, 2].map((j) => an.cta.perms[0]!.buf[j]! - p.buffersPerCta)).toEqual([1, 0, 2]);
    const on = hazards(p, {}, an.cta.perms);
    const off = hazards(p, { ctaSymmetry: false }, []);
    const none = hazards(p, { por: false, symmetry: false }, []);
    expect(on.complete && off.complete && none.complete).toBe(true);
    expect(on.hazards).toEqual(off.hazards);
    expect(on.hazards).toEqual(none.hazards);
    expect(on.states).toBeLessThan(off.states);
    const cases: [string, ClusterGen, RegExp][] = [
      // 1 KiB past the pad: CTA 0's box covers the second half of tile[0] and the first of tile[1],
      // whose image under the swap is two pieces (no key).
      ['the pad plus 1,024', { ...W, off: 'padPlus' }, /tile\[0\]\[1024:3072\]@c0 has no counterpart once the CTAs' elements of tile are exchanged/],
      // An offset that depends on the rank: the CTAs' copies land at different places in their elements.
      ['the pad plus 1,024 · rank', { ...W, off: 'rank' }, /a byte offset inside a buffer element differs/],
    ];
    for (const [name, g, reason] of cases) {
      const q = analyse(program(g));
      expect(q.cta.perms, name).toEqual([]);
      expect(q.cta.reason ?? '', name).toMatch(reason);
    }
  }, 120_000);

  it('elements that do not follow the swap: no permutation, with the reason', () => {
    const cases: [string, ClusterGen, RegExp][] = [
      // Both CTAs read element 0: CTA 0 reads its own copy, CTA 1 its peer's.
      ['a fixed element read', { ...BASE, reads: [{ c: 0, k: 0 }] }, /does not name the elements/],
      // Only rank 1 moves its copy (to element 2): the pairs 0 -> 2 and 2 -> 0 and a read of 0 that stays.
      ['a change in rank 1 only', { ...BASE, rank1Only: true }, /would move to two elements/],
      // The expected bytes depend on the rank: no element permutation makes up for it.
      ['the copy into the peer element only', { ...BASE, mask: 'peer', reads: [{ c: 0, k: 0 }] }, /./],
    ];
    for (const [name, g, reason] of cases) {
      const an = analyse(program(g));
      expect(an.cta.perms, name).toEqual([]);
      expect(an.cta.reason ?? '', name).toMatch(reason);
    }
  }, 60_000);

  it('generated kernels: the hazards of the searches with and without CTA symmetry, and of the unreduced search, agree', () => {
    let permuted = 0;
    let found = 0;
    fc.assert(
      fc.property(genArb, (g) => {
        const o = oracle(g);
        if (o.perms) {
          permuted++;
          expect(o.fewer, JSON.stringify(g)).toBe(true);
          if (o.hazards) found++;
        }
      }),
      { numRuns: 30, seed: 20261207 },
    );
    // The generator reaches the reduction, with and without hazards.
    expect(permuted).toBeGreaterThanOrEqual(5);
    expect(found).toBeGreaterThanOrEqual(1);
  }, 600_000);

  it('generated kernels with copies at run-time offsets inside 2 KiB elements: the same agreement', () => {
    const seen = { permuted: 0, refused: 0, found: 0 };
    fc.assert(
      fc.property(offArb, (g) => {
        const o = oracle(g);
        if (o.perms) {
          seen.permuted++;
          expect(o.fewer, JSON.stringify(g)).toBe(true);
          if (o.hazards) seen.found++;
        } else seen.refused++;
        // The pad (0 at run time) keeps the swap wherever the elements follow it.
        if (g.off === 'rank') expect(o.perms, JSON.stringify(g)).toBe(0);
      }),
      { numRuns: 12, seed: 20261208 },
    );
    expect(seen.permuted).toBeGreaterThanOrEqual(2);
    expect(seen.refused).toBeGreaterThanOrEqual(2);
    expect(seen.found).toBeGreaterThanOrEqual(1);
  }, 600_000);
});
