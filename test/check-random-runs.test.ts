/**
 * Random runs beside the search (ExploreOptions.randomRuns, docs/CHECK.md "Random runs"): what they
 * find is checked against the unreduced exhaustive search on generated kernels (every hazard a
 * run reports must be one the full search reaches), they leave the search's own coverage as it is,
 * and they find the planted 2-CTA bug that a bounded search does not reach.
 */
import { describe, expect, test } from 'vitest';
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { check } from '../src/check/check.js';
import { renderCheck } from '../src/check/report.js';
import { instantiate, KernelError, type Program } from '../src/machine/program.js';
import { parseSketch } from '../src/lang/index.js';
import { kernelArb } from './support/gen-kernel.js';
import { pipelineArb } from './support/gen-pipeline.js';
import { ctaPerms, outcome, subjectUpToCtas } from './support/differential.js';
import type { Kernel } from '../src/kernel/ir.js';

const sketch = (file: string, set: Record<string, number> = {}): Program => instantiate(parseSketch(readFileSync(file, 'utf8'), file).kernel!, set);

describe('random runs', () => {
  test('the planted 2-CTA empty count without the multicast factor: found by a random run where the bounded search stops', () => {
    const p = sketch('examples/planted/cooperative-empty-short.mbk', { C: 2, S: 2, K: 4, TILES: 1, EPI: 1 });
    const without = check(p, { maxStates: 3000, randomRuns: false });
    expect(without.verdict).toBe('incomplete');
    expect(without.stoppedBy).toBe('max-states');
    expect(without.coverage.randomRuns).toEqual({ runs: 0, steps: 0 });
    const r = check(p, { maxStates: 3000, randomRuns: { from: 500 } });
    expect(r.hazards.length).toBeGreaterThan(0);
    expect(r.stoppedBy).toBe('hazard');
    const first = r.hazards.find((h) => h.randomRun)!;
    expect(first).toBeDefined();
    // The stage refilled too early: a full barrier gets its arrive or bytes a phase early, or the kernel hangs.
    expect(['over-arrival', 'tx-mismatch', 'hang', 'cycle', 'race', 'phase-alias']).toContain(first.kind);
    expect(first.trace.length).toBe(first.schedule.length);
    expect(first.trace.length).toBeGreaterThan(without.coverage.depth);
    expect(r.coverage.randomRuns.runs).toBeGreaterThan(0);
    expect(r.coverage.randomRuns.steps).toBeGreaterThan(0);
    const text = renderCheck(r);
    expect(text).toContain('trace of a random run (');
    expect(text).toContain('a shorter one may exist');
    expect(text).toMatch(/stopped when (a random run|one of [\d,]+ random runs) beside the search found an error/);
    // The same seed draws the same runs.
    const again = check(p, { maxStates: 3000, randomRuns: { from: 500 } });
    expect(again.hazards.map((h) => h.schedule.join(','))).toEqual(r.hazards.map((h) => h.schedule.join(',')));
  });

  test('a clean kernel: the runs find nothing and the search covers the same states', () => {
    for (const [file, set] of [['examples/cutlass-cooperative.mbk', { C: 2, S: 2, K: 4, TILES: 1, EPI: 1 }], ['examples/pipeline.mbk', { K: 4 }], ['examples/cutlass-pingpong.mbk', { K: 4, TILES: 2, EPI: 1 }]] as const) {
      const p = sketch(file, set);
      const off = check(p, { randomRuns: false });
      const on = check(p, { randomRuns: { from: 0, share: 1 } });
      expect(off.verdict, file).toBe('ok');
      expect(on.verdict, file).toBe('ok');
      expect(on.coverage.randomRuns.runs, file).toBeGreaterThan(0);
      expect(on.coverage.states, file).toBe(off.coverage.states);
      expect(on.coverage.transitions, file).toBe(off.coverage.transitions);
      expect(on.coverage.terminalStates, file).toBe(off.coverage.terminalStates);
      expect(on.warnings.map((w) => w.kind), file).toEqual(off.warnings.map((w) => w.kind));
    }
  });

  test('off with --all (every reachable kind in breadth-first order) and with `randomRuns: false`', () => {
    const p = sketch('examples/planted/cooperative-empty-short.mbk', { C: 2, S: 2, K: 4, TILES: 1, EPI: 1 });
    expect(check(p, { maxStates: 600, all: true, randomRuns: { from: 0 } }).coverage.randomRuns.runs).toBe(0);
    expect(check(p, { maxStates: 600, randomRuns: false }).coverage.randomRuns.runs).toBe(0);
  });

  /** Every hazard a random run reports is one the unreduced exhaustive search reaches (kind and subject). */
  const sound = (k: Kernel): 'skip' | 'none' | 'found' => {
    let p: Program;
    try {
      p = instantiate(k);
    } catch (e) {
      if (e instanceof KernelError) return 'skip';
      throw e;
    }
    const full = outcome(p, { por: false, symmetry: false, maxStates: 20_000, timeout: 20_000 });
    if (!full.complete) return 'skip';
    const perms = ctaPerms(p);
    // The search is cut short (few states) so that the runs, which start at once, do the finding.
    const r = check(p, { maxStates: 40, randomRuns: { from: 0, share: 4 }, timeout: 20_000 });
    const found = [...r.hazards, ...r.warnings].filter((h) => h.randomRun);
    for (const h of found) {
      const key = h.kind === 'hang' || h.kind === 'cycle' ? h.kind : `${h.kind}|${subjectUpToCtas(p, h.subject?.name ?? '', perms)}`;
      expect(full.hazards, `${key} from a random run of\n${JSON.stringify(k)}`).toContain(key);
      expect(h.trace.length).toBe(h.schedule.length);
    }
    return found.length ? 'found' : 'none';
  };

  test('generated kernels (seed 20261206): every hazard a random run finds, the unreduced search finds', () => {
    const tally = { skip: 0, none: 0, found: 0 };
    fc.assert(fc.property(kernelArb, (k) => {
      tally[sound(k)]++;
    }), { numRuns: 120, seed: 20261206 });
    fc.assert(fc.property(pipelineArb, ({ kernel }) => {
      tally[sound(kernel)]++;
    }), { numRuns: 60, seed: 20261206 });
    // The property means something only where runs found hazards.
    expect(tally.found).toBeGreaterThanOrEqual(20);
  }, 300_000);
});
