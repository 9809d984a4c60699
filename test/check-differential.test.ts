/**
 * Every reduction of the checker against the unreduced search, on generated kernels (fast-check
 * arbitraries over the Kernel IR, test/support/gen-kernel.ts) and on the shrunk kernels of every
 * divergence found so far (test/fixtures/differential/: sketches, or IR as JSON). Seeded and deterministic.
 *
 * `npm run fuzz` runs the same property on FUZZ_KERNELS kernels (default 100,000) with a random
 * seed and prints kernels/s and the divergences found.
 */
import { describe, expect, test } from 'vitest';
import fc from 'fast-check';
import { readdirSync, readFileSync } from 'node:fs';
import { kernelArb } from './support/gen-kernel.js';
import { compare } from './support/differential.js';
import { parseSketch } from '../src/lang/index.js';
import type { Kernel } from '../src/kernel/ir.js';

const FUZZ = Number(process.env.FUZZ_KERNELS ?? 0);
const RUNS = FUZZ > 0 ? FUZZ : 2000;
const SEED = FUZZ > 0 ? Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31) : 20261201;
const FIXTURES = 'test/fixtures/differential';

describe('reductions against the unreduced search', () => {
  test('regression kernels: every reduction finds what the full search finds', () => {
    const files = readdirSync(FIXTURES).filter((f) => f.endsWith('.json') || f.endsWith('.mbk'));
    expect(files.length).toBeGreaterThanOrEqual(5);
    for (const f of files) {
      const text = readFileSync(`${FIXTURES}/${f}`, 'utf8');
      const k = f.endsWith('.json') ? (JSON.parse(text) as Kernel) : parseSketch(text, f).kernel!;
      expect(k, f).toBeDefined();
      const r = compare(k, 200_000);
      expect(r, f).not.toBeNull();
      expect(r!.divergences, f).toEqual([]);
    }
  });

  test('a copy issued before its arrive.expect_tx, then a read with no wait: RACE with every reduction', async () => {
    const { check } = await import('../src/check/check.js');
    const { instantiate } = await import('../src/machine/program.js');
    const k = parseSketch(readFileSync(`${FIXTURES}/copy-before-expect-read.mbk`, 'utf8'), 'copy-before-expect-read.mbk').kernel!;
    for (const opts of [{}, { por: false }, { symmetry: false }, { por: false, symmetry: false }]) {
      const r = check(instantiate(k), opts);
      expect(r.verdict, JSON.stringify(opts)).toBe('race');
      expect(r.hazards[0]!.subject?.name).toBe('R[0]');
    }
  });

  test(`${RUNS} generated kernels (seed ${SEED}): same hazards and final states with every reduction`, () => {
    let compared = 0;
    let skipped = 0;
    let withHazards = 0;
    const t0 = Date.now();
    fc.assert(
      fc.property(kernelArb, (k) => {
        const r = compare(k);
        if (!r) {
          skipped++;
          return true;
        }
        compared++;
        if (r.full.hazards.length) withHazards++;
        if (r.divergences.length) throw new Error(`divergence: ${JSON.stringify(r.divergences)}\nkernel: ${JSON.stringify(k)}`);
        return true;
      }),
      { numRuns: RUNS, seed: SEED, endOnFailure: FUZZ > 0 },
    );
    const s = (Date.now() - t0) / 1000;
    console.log(`differential: ${compared} kernels compared, ${skipped} skipped (rejected or full search over the bound), ${withHazards} with hazards, ${(compared / s).toFixed(1)} kernels/s`);
    // The generator must produce comparable kernels, most of them with something to find.
    expect(compared).toBeGreaterThan(RUNS * 0.6);
    expect(withHazards).toBeGreaterThan(compared * 0.3);
  }, 3_600_000);
});
