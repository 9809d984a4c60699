/**
 * The bounds of what `mbsim run` writes after its simulation (the `--json` document, the
 * `--trace` file, the `--events` log): the same `--max-memory` (the process's resident set) and
 * `--timeout` as the simulation. The simulation stops {@link reportReserveMs} before `--timeout`;
 * building the report from its records (the ledger, the loop summary, a trace) gets that time and
 * stops at `--timeout`, cut where it is; rendering and writing get {@link OUTPUT_GRACE_MS} more,
 * less the time the process will take to end ({@link EXIT_MS_PER_MB}), so that a run stopped by
 * its timeout still reports what it recorded, and ends about {@link OUTPUT_GRACE_MS} after
 * `--timeout` whatever it simulated. Past a bound the output is cut short at an array
 * element, stays valid JSON, and says so (`outputStopped`); the CLI exits 3 (incomplete).
 *
 * Writing a large document leaves garbage behind (the text of each chunk); V8 collects it only
 * when its heap has grown well past what is live, which on its own takes the resident set to the
 * bound and cuts the output although most of that memory is free. So from
 * {@link COLLECT_AT} of the bound on, the budget asks V8 for a full collection (at most once per
 * {@link COLLECT_STEP} of the bound the resident set grows) before it decides: the freed heap is
 * reused and the resident set stays under the bound, and only memory that is really held stops
 * the output. Building the trace from the records stops earlier, at {@link BUILD_AT} of the bound,
 * so that what was built can still be written within it. A collection that would still be running
 * at the end of the grace (timed per MB of the resident set: `deadlineCollector`) is skipped: on a
 * large heap it takes seconds, and run near the deadline it made the run end that much late.
 */
import { lazyBuiltin } from './builtins.js';
import { FIFO_WAIT_MS, type WriteOptions } from './output.js';
import { JsonStream } from './json-stream.js';
import { COLLECT_AT, COLLECT_STEP, deadlineCollector } from '../machine/governor.js';

/**
 * Time (ms) rendering and writing the output may take past `--timeout`: under a second, so that
 * with the process's exit the run ends within about a second of it.
 */
export const OUTPUT_GRACE_MS = 750;
/**
 * Time (ms) per MB of the resident set that the process takes to end after its output (the
 * kernel freeing its memory: about 200 ms for 450 MB on a loaded machine), taken from the grace
 * (at most half of it), so that a run that holds much memory still ends about
 * {@link OUTPUT_GRACE_MS} after `--timeout`.
 */
export const EXIT_MS_PER_MB = 0.5;
/**
 * Share of `run --timeout` kept for building the report (the ledger, the loop summary, a trace):
 * the simulation stops that much earlier. Building them from a long run's records took longer
 * than the simulation itself (1 s of ledger and 2.4 s of garbage collection after a 3 s run).
 */
export const REPORT_SHARE = 0.2;
/** The most time (ms) kept for building the report, however long `--timeout` is. */
export const REPORT_RESERVE_MAX_MS = 10_000;

/** Milliseconds of `--timeout` (given in ms) the simulation leaves for building the report. */
export function reportReserveMs(timeoutMs: number): number {
  return Math.min(REPORT_RESERVE_MAX_MS, timeoutMs * REPORT_SHARE);
}
/** Array elements written (records built) between two looks at the resident set. */
const LOOK_EVERY = 1024;
/**
 * Array elements written (records built) between two looks at the clock: a look at the clock
 * costs far less than one at the resident set, and 1024 records can take a good part of a
 * second on a loaded machine.
 */
const CLOCK_EVERY = 32;

/** See the module comment. */
export interface OutputBudget {
  /** A chunked JSON writer that stops at the bounds. */
  stream(): JsonStream;
  /**
   * Whether building a document (the ledger, the loop summary or a trace from the records) is to
   * stop now: past `--timeout` itself (the simulation stopped {@link reportReserveMs} earlier, which
   * is the building's time), or past {@link BUILD_AT} of `--max-memory`, leaving the rest of the
   * bound for writing what was built. The clock is looked at once every {@link CLOCK_EVERY} calls,
   * the resident set once every {@link LOOK_EVERY}, like the stream's bounds.
   */
  build(): boolean;
  /**
   * A {@link build} of its own for one document (the ledger, the loop summary, the trace): each
   * looks at the bounds after its own first {@link LOOK_EVERY} records, so one stopped by the
   * bound still holds that many (the trace of a run whose ledger was cut is not empty).
   */
  builder(): () => boolean;
  /**
   * Whether rendering the text report (the timeline, the event log, the hang) is to stop now: past
   * `--timeout` and its {@link OUTPUT_GRACE_MS} (the clock is read at every call), or past
   * {@link BUILD_AT} of `--max-memory` (read once every {@link LOOK_EVERY} calls).
   */
  render(): boolean;
  /** The member a cut document ends with, or null when nothing was cut. */
  trailer(cut: number): Record<string, unknown> | null;
  /** The flag of the bound that stopped the output (`--timeout`, `--max-memory`), or null. */
  stoppedBy(): string | null;
  /** Whether `bytes` more fit under `--max-memory` now. */
  room(bytes: number): boolean;
}

// The shares of the bound at which garbage is collected: the governor's (src/machine/governor.ts).
export { COLLECT_AT, COLLECT_STEP };
/** Share of the bound past which building a document stops (the rest is for writing it in chunks). */
export const BUILD_AT = 0.9;

let collector: (() => void) | null | undefined;
const v8 = lazyBuiltin<typeof import('node:v8')>('node:v8');
const vm = lazyBuiltin<typeof import('node:vm')>('node:vm');

/**
 * V8's full garbage collection, or null where it cannot be had. Node exposes it only to code
 * started with `--expose-gc`; set later, the flag gives `gc` to contexts created after it.
 */
export function fullCollection(): (() => void) | null {
  if (collector === undefined) {
    try {
      v8().setFlagsFromString('--expose-gc');
      const gc: unknown = vm().runInNewContext('gc');
      collector = typeof gc === 'function' ? () => (gc as () => void)() : null;
    } catch {
      collector = null;
    }
  }
  return collector;
}

/**
 * The budget of `maxMemory` bytes and the `deadline` (ms since the epoch; Infinity: none). `rss`
 * reads the resident set, `collect` runs a full garbage collection (null: none).
 */
export function outputBudget(maxMemory: number, deadline: number, rss: () => number = () => process.memoryUsage.rss(), collect: (() => void) | null = fullCollection()): OutputBudget {
  const until = deadline + OUTPUT_GRACE_MS - Math.min(OUTPUT_GRACE_MS / 2, (rss() / 1048576) * EXIT_MS_PER_MB);
  let by: string | null = null;
  // The bound that stopped building a document before it was written (the writing goes on).
  let builtBy: string | null = null;
  let n = 0;
  let collectedAt = 0;
  // A collection that would still run at the end of the grace is skipped (governor.ts).
  const collectBefore = collect ? deadlineCollector(collect) : null;
  const memory = () => {
    const m = rss();
    if (!collectBefore || m < maxMemory * COLLECT_AT || m < collectedAt + maxMemory * COLLECT_STEP || !collectBefore(m, until)) return m;
    collectedAt = m;
    return rss();
  };
  const stop = () => {
    if (by) return true;
    if (++n % CLOCK_EVERY) return false;
    if (Date.now() >= until) by = '--timeout';
    else if (n % LOOK_EVERY === 0 && memory() > maxMemory) by = '--max-memory';
    return by !== null;
  };
  // Building stops at the deadline itself, rendering the text at its grace; both before the bound.
  // The clock is read at every `clock`-th call, the resident set at every LOOK_EVERY-th.
  const look = (at: number, calls: number, clock: number): string | null =>
    calls % clock ? null : Date.now() >= at ? '--timeout' : calls % LOOK_EVERY === 0 && memory() > maxMemory * BUILD_AT ? '--max-memory' : null;
  let renderedBy: string | null = null;
  let r = 0;
  const builder = () => {
    let b = 0;
    let stopped = false;
    return () => {
      if (stopped) return true;
      // Each document holds at least its first LOOK_EVERY records.
      if (++b < LOOK_EVERY) return false;
      const why = look(deadline, b, CLOCK_EVERY);
      if (why) builtBy ??= why;
      return (stopped = why !== null);
    };
  };
  const build = builder();
  // Rendering asks seldom (the timeline once per lane or per 4096 spans): the clock at every call.
  const render = () => {
    if (renderedBy) return true;
    return (renderedBy = look(until, ++r, 1)) !== null;
  };
  return {
    stream: () => new JsonStream(stop),
    build,
    builder,
    render,
    trailer: (cut) => (cut ? { outputStopped: { by: by ?? builtBy ?? renderedBy, omitted: cut } } : null),
    stoppedBy: () => by ?? builtBy ?? renderedBy,
    room: (bytes) => rss() + bytes <= maxMemory,
  };
}

/** How long a FIFO output waits for its reader: at most the time `--timeout` leaves (at least 1 s). */
export function fifoWait(timeoutS: number | undefined, started: number): WriteOptions {
  if (timeoutS === undefined) return {};
  return { fifoWaitMs: Math.min(FIFO_WAIT_MS, Math.max(1000, started + timeoutS * 1000 - Date.now())) };
}
