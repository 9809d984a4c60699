/**
 * One row of the real-kernel bench (src/bench/kernels.ts): check a sketch at one set of parameters
 * under a time and memory bound, and say what was found. {@link checkRow} runs in the calling
 * process; `kernel-row-main.ts` runs it in a child process so that each row's peak memory (the
 * child's maximum resident set) is its own.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { check, checkAllTrips } from '../check/index.js';
import { parseSketch } from '../lang/index.js';
import { instantiate, KernelError } from '../machine/program.js';

/** What to check: a sketch (path relative to `root`), its parameters and the row's bounds. */
export interface RowJob {
  file: string;
  set: Record<string, number>;
  timeoutMs: number;
  maxMemory: number;
  /** Check every value of this trip parameter (check/trips.ts) instead of the one in `set`. */
  allTrips?: string;
}

/** What one row found. `hazards`: distinct `kind subject` of the error hazards, in report order. */
export interface RowResult {
  verdict: string;
  complete: boolean;
  stoppedBy: string | null;
  states: number;
  seconds: number;
  hazards: string[];
  /** Peak resident set of the process that ran the check, in bytes (its whole life). */
  peakBytes: number;
  /** Set when the sketch could not be parsed or instantiated. */
  error?: string;
}

/** Parses a sketch; throws Error when it does not parse. */
function kernelOf(root: string, file: string) {
  const parsed = parseSketch(readFileSync(join(root, file), 'utf8'), file);
  if (!parsed.kernel) throw new Error(`${file}: ${parsed.diagnostics.map((d) => d.message).join('; ')}`);
  return parsed.kernel;
}

/** Parses and instantiates a sketch; throws {@link KernelError} (e.g. `smem-size`) or Error. */
export function programOf(root: string, file: string, set: Record<string, number>) {
  return instantiate(kernelOf(root, file), set);
}

/** Whether the sketch instantiates with `set` (false only for a shared-memory overflow; other errors throw). */
export function fitsSmem(root: string, file: string, set: Record<string, number>): boolean {
  try {
    programOf(root, file, set);
    return true;
  } catch (e) {
    if (e instanceof KernelError && e.code === 'smem-size') return false;
    throw e;
  }
}

/** Checks one row in this process. */
export function checkRow(root: string, job: RowJob): RowResult {
  const t0 = performance.now();
  try {
    const opts = { timeout: job.timeoutMs, maxMemory: job.maxMemory };
    const r = job.allTrips !== undefined ? checkAllTrips(kernelOf(root, job.file), job.set, { ...opts, param: job.allTrips }) : check(programOf(root, job.file, job.set), opts);
    const hazards = [...new Set(r.hazards.map((h) => `${h.kind} ${h.subject?.name ?? ''}`.trim()))];
    return {
      verdict: r.verdict, complete: r.complete, stoppedBy: r.stoppedBy, states: r.coverage.states,
      seconds: (performance.now() - t0) / 1000, hazards, peakBytes: process.resourceUsage().maxRSS * 1024,
    };
  } catch (e) {
    return {
      verdict: 'error', complete: false, stoppedBy: null, states: 0, seconds: (performance.now() - t0) / 1000,
      hazards: [], peakBytes: process.resourceUsage().maxRSS * 1024, error: e instanceof Error ? e.message : String(e),
    };
  }
}
