/**
 * The parameter ranges of `mbsim check --sweep NAME=A..B`: their parsing and the combinations the
 * sweep checks (the sweep itself, its deadline and its table: `runCheckSweepCli` in index.ts).
 */
import { parseInteger } from '../kernel/arith.js';

/** One parameter range of `--sweep NAME=A..B`. */
export interface SweepRange {
  name: string;
  from: number;
  to: number;
}

/** The most values one `--sweep` range (and all ranges together) may take. */
export const MAX_SWEEP_POINTS = 10_000;

/**
 * Parses `NAME=A..B` (or `NAME=A`): integers as `--set` takes them (decimal, `0x…`, `0b…`, `_`
 * separators) with A ≤ B, both within ±(2^53 − 1) (the
 * integers a parameter holds exactly, as for `--set`), and at most {@link MAX_SWEEP_POINTS}
 * values. Throws an Error with a usage message.
 */
export function parseSweep(spec: string): SweepRange {
  // A spec echoed in a message is cut short (a 100 KB argument must not flood the terminal).
  const shown = spec.length > 64 ? `${spec.slice(0, 64)}… (${spec.length.toLocaleString('en-US')} characters)` : spec;
  // The integer forms of `--set` and of the sketch language: decimal, 0x…, 0b…, with `_` separators.
  const INT = '-?(?:0x_*[0-9a-fA-F][0-9a-fA-F_]*|0b_*[01][01_]*|_*[0-9][0-9_]*)';
  const m = new RegExp(`^([A-Za-z_][A-Za-z0-9_]*)=(${INT})(?:\\.\\.(${INT}))?$`).exec(spec.trim());
  if (!m) throw new Error(`--sweep expects NAME=A..B with integers A <= B, got '${shown}'`);
  const vals: number[] = [];
  for (const text of [m[2]!, m[3]]) {
    if (text === undefined) continue;
    const n = parseInteger(text);
    if ('error' in n) throw new Error(`--sweep ${m[1]}: ${n.error}`);
    vals.push(n.value);
  }
  const from = vals[0]!;
  const to = vals.length > 1 ? vals[1]! : from;
  if (to < from) throw new Error(`--sweep ${shown}: the range is empty (${from} > ${to})`);
  if (to - from + 1 > MAX_SWEEP_POINTS) {
    throw new Error(`--sweep ${m[1]}: ${(to - from + 1).toLocaleString('en-US')} values; at most ${MAX_SWEEP_POINTS.toLocaleString('en-US')}`);
  }
  return { name: m[1]!, from, to };
}

/** Every combination of the ranges (the last range varies fastest). */
export function sweepCombinations(ranges: SweepRange[]): Record<string, number>[] {
  let out: Record<string, number>[] = [{}];
  for (const r of ranges) {
    const next: Record<string, number>[] = [];
    for (const base of out) for (let v = r.from; v <= r.to; v++) next.push({ ...base, [r.name]: v });
    out = next;
  }
  return out;
}
