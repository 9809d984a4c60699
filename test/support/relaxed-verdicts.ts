/**
 * What the memory-model tests (check-relaxed-locations, check-relaxed-named) ask of a sketch: its
 * program, the error kinds with subjects under several reduction settings (which must agree), and
 * the races the vector clocks of one simulated trace find.
 */
import { expect } from 'vitest';
import { check, happensBefore, type CheckOptions } from '../../src/check/index.js';
import { parseSketch } from '../../src/lang/index.js';
import { instantiate } from '../../src/machine/program.js';
import { simulate } from '../../src/sim/simulate.js';

/** The sketch's program (its parse must have no diagnostic). */
export function program(src: string) {
  const parsed = parseSketch(src, 't.mbk');
  expect(parsed.diagnostics).toEqual([]);
  return instantiate(parsed.kernel!);
}

/** Error kinds with subjects (`race A`) under each of `settings`; expects them all equal and returns them. */
export function verdictUnder(src: string, settings: CheckOptions[]): string[] {
  const p = program(src);
  const out = settings.map((o) => {
    const r = check(p, { all: true, randomRuns: false, ...o });
    return [...new Set(r.hazards.map((h) => `${h.kind} ${h.subject?.name ?? ''}`.trim()))].sort();
  });
  for (const o of out.slice(1)) expect(o).toEqual(out[0]);
  return out[0]!;
}

/** The races the vector clocks of one simulated trace find. */
export const traceRaces = (src: string) => happensBefore(program(src), simulate(program(src)).events ?? []).races.length;
