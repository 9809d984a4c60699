import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { check, type CheckOptions, type CheckResult } from '../src/check/check.js';
import { spinPipeline } from '../src/bench/check-spin.js';
import { EXAMPLES } from '../src/examples/index.js';
import type { Kernel } from '../src/kernel/ir.js';
import { parseSketch } from '../src/lang/index.js';
import { instantiate } from '../src/machine/program.js';

/**
 * The parallel search (`workers: 2`) against the sequential one on every bug sketch, check fixture,
 * built-in example and the SPIN pipeline: same verdict, completeness, stored states and hazards
 * (kinds and subjects); and, with symmetry reduction off (where a hash stands for one concrete
 * state), the same transitions. `check` replays every hazard's schedule, so the parallel run's
 * traces (built from its own state ids) are replayed too.
 */
const sketches = (dir: string): [string, Kernel][] =>
  readdirSync(dir).filter((f) => f.endsWith('.mbk')).sort().map((f) => {
    const parsed = parseSketch(readFileSync(join(dir, f), 'utf8'), f);
    return [f, parsed.kernel!];
  });

const cases: [string, Kernel][] = [
  ...sketches(join(__dirname, '..', 'examples', 'bugs')),
  ...sketches(join(__dirname, 'fixtures', 'check')),
  ...EXAMPLES.map((e): [string, Kernel] => [`example ${e.name}`, e.build()]),
  ...([0, 1, 2, 3] as const).map((BUG): [string, Kernel] => [`spin BUG=${BUG}`, spinPipeline({ S: 2, N: 4, C: 2, K: 2, BUG })]),
];

const summary = (r: CheckResult) => ({
  verdict: r.verdict, complete: r.complete, stoppedBy: r.stoppedBy, states: r.coverage.states, depth: r.coverage.depth,
  // Distinct (kind, subject): how many sites of one kind on one subject are listed can differ
  // between the two searches (the sites a forced chain passes first).
  hazards: [...new Set(r.hazards.map((h) => `${h.kind} ${h.subject?.name ?? ''}`))].sort(),
  warnings: [...new Set(r.warnings.map((h) => `${h.kind} ${h.subject?.name ?? ''}`))].sort(),
});

describe('parallel search = sequential search', () => {
  for (const [name, k] of cases) {
    for (const opts of [{ all: true, strict: true }, {}, { all: true, symmetry: false }] as CheckOptions[]) {
      test(`${name} ${JSON.stringify(opts)}`, () => {
        // hopper's 2 × 4 consumer warps without symmetry: a smaller ring keeps the pair of searches short.
        const p = instantiate(k, name === 'example hopper' && opts.symmetry === false ? { S: 2, K: 4 } : {});
        const o = { maxStates: 2_000_000, ...opts };
        const a = check(p, o);
        const b = check(p, { ...o, workers: 2 });
        expect(summary(b)).toEqual(summary(a));
        if (opts.symmetry === false) expect(b.coverage.transitions).toBe(a.coverage.transitions);
        // Shortest traces: the same lengths (the schedules may differ).
        expect(b.hazards[0]?.trace.length).toBe(a.hazards[0]?.trace.length);
      });
    }
  }
});
