/**
 * The bounds of what `mbsim run` writes after its simulation (the `--json` document, the
 * `--trace` file, the `--events` log): the same `--max-memory` (the process's resident set) and
 * `--timeout` as the simulation, with {@link OUTPUT_GRACE_MS} more time, so that a run stopped by
 * its timeout still reports what it recorded. Past a bound the output is cut short at an array
 * element, stays valid JSON, and says so (`outputStopped`); the CLI exits 3 (incomplete).
 */
import { FIFO_WAIT_MS, type WriteOptions } from './output.js';
import { JsonStream } from './json-stream.js';

/** Time (ms) the output may take past `--timeout`. */
export const OUTPUT_GRACE_MS = 1000;
/** Array elements written between two looks at the clock and the resident set. */
const LOOK_EVERY = 1024;

/** See the module comment. */
export interface OutputBudget {
  /** A chunked JSON writer that stops at the bounds. */
  stream(): JsonStream;
  /** The member a cut document ends with, or null when nothing was cut. */
  trailer(cut: number): Record<string, unknown> | null;
  /** The flag of the bound that stopped the output (`--timeout`, `--max-memory`), or null. */
  stoppedBy(): string | null;
  /** Whether `bytes` more fit under `--max-memory` now. */
  room(bytes: number): boolean;
}

/** The budget of `maxMemory` bytes and the `deadline` (ms since the epoch; Infinity: none). */
export function outputBudget(maxMemory: number, deadline: number, rss: () => number = () => process.memoryUsage.rss()): OutputBudget {
  const until = deadline + OUTPUT_GRACE_MS;
  let by: string | null = null;
  let n = 0;
  const stop = () => {
    if (by) return true;
    if (++n % LOOK_EVERY) return false;
    if (Date.now() >= until) by = '--timeout';
    else if (rss() > maxMemory) by = '--max-memory';
    return by !== null;
  };
  return {
    stream: () => new JsonStream(stop),
    trailer: (cut) => (cut ? { outputStopped: { by, omitted: cut } } : null),
    stoppedBy: () => by,
    room: (bytes) => rss() + bytes <= maxMemory,
  };
}

/** How long a FIFO output waits for its reader: at most the time `--timeout` leaves (at least 1 s). */
export function fifoWait(timeoutS: number | undefined, started: number): WriteOptions {
  if (timeoutS === undefined) return {};
  return { fifoWaitMs: Math.min(FIFO_WAIT_MS, Math.max(1000, started + timeoutS * 1000 - Date.now())) };
}
