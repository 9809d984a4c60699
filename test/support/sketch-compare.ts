/**
 * Sketch kernels compared with the unreduced search (support/differential.ts `compare`): one
 * hand-picked sketch, or a generated series, each parsed without diagnostics and with no divergence
 * between every reduction and the full search.
 */
import { expect } from 'vitest';
import { compare } from './differential.js';
import { parseSketch } from '../../src/lang/index.js';

/** Parses `source` (named `file`) and expects the reductions to find what the full search finds within `maxStates` states of the full search. */
export function expectSameAsUnreduced(source: string, file: string, maxStates = 60_000): void {
  const parsed = parseSketch(source, file);
  expect(parsed.diagnostics).toEqual([]);
  const r = compare(parsed.kernel!, maxStates);
  expect(r).not.toBeNull();
  expect(r!.divergences).toEqual([]);
}

/**
 * Compares the sketch of every shape of `shapes` (`source(g)`, named `file`); a shape whose
 * unreduced search passes the bound is skipped. Returns how many were compared.
 */
export function compareGenerated<G>(shapes: Iterable<G>, source: (g: G) => string, file: string, maxStates = 60_000): number {
  let compared = 0;
  for (const g of shapes) {
    const parsed = parseSketch(source(g), file);
    expect(parsed.diagnostics).toEqual([]);
    const r = compare(parsed.kernel!, maxStates);
    if (!r) continue;
    compared++;
    expect({ g, divergences: r.divergences }).toEqual({ g, divergences: [] });
  }
  return compared;
}
