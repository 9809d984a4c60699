/**
 * The resource governor: one object every long operation (simulation, sequential and parallel
 * search) consults to stay inside its bounds.
 *
 * - Memory: the process's resident set (`process.memoryUsage.rss()`, which in a worker thread is
 *   still the whole process's), sampled at most every {@link SAMPLE_MS} ms; where the platform
 *   cannot measure it (a browser), the caller's own estimate ({@link Governor.estimate}). Before an
 *   allocation that would pass the bound, {@link Governor.allow} says no and the operation stops
 *   instead of allocating.
 * - Time: a deadline in ms since the epoch (`Date.now()`), shared as a number between threads.
 * - Steps: a count the caller adds to with {@link Governor.step}.
 * - Interrupt: the caller's request to stop (`Limits.interrupt`, e.g. a flag a signal handler on
 *   another thread sets in a SharedArrayBuffer), polled with the clock.
 *
 * {@link Governor.tick} is cheap (an increment and a compare) and meant for hot loops; every
 * `every` ticks it reads the clock, and it adapts `every` (halving or doubling it, up to the value
 * given) so that the clock is read about every {@link CHECK_MS} ms whatever a tick costs. Once a bound is hit the governor stays stopped; `stoppedBy`
 * names the bound. An optional `linked` function lets several governors (the threads of one search)
 * share one stop: each polls it and reports its own stop through `onStop`.
 */

/**
 * A bound that stopped an operation, named as its CLI flag without the dashes; `interrupt`: the
 * caller asked it to stop (`Limits.interrupt`; the CLI on SIGINT or SIGTERM).
 */
export type Bound = 'max-memory' | 'timeout' | 'max-steps' | 'interrupt';

/** The bounds of one operation; an absent one does not apply. */
export interface Limits {
  /** Bytes of process memory (resident set). */
  maxMemory?: number;
  /** Wall-clock milliseconds from the governor's creation. */
  timeoutMs?: number;
  /** A deadline in ms since the epoch (wins over `timeoutMs`; threads of one operation share it). */
  deadline?: number;
  /** Steps (whatever the caller counts with {@link Governor.step}). */
  maxSteps?: number;
  /**
   * The caller's stop request, polled with the clock (every {@link CHECK_MS} ms or so, and by
   * every {@link Governor.check}): once it returns true the operation stops with `interrupt`.
   * It must be cheap and must not throw (e.g. `() => Atomics.load(flag, 0) !== 0`).
   */
  interrupt?: () => boolean;
}

/** Hooks of a governor (tests, threads). */
export interface GovernorHooks {
  /** Milliseconds since the epoch (default `Date.now`). */
  now?: () => number;
  /** The process's resident bytes, or null where unmeasurable (default: `process.memoryUsage.rss`). */
  rss?: () => number | null;
  /** Another thread's stop, polled with the clock (e.g. a flag in a SharedArrayBuffer). */
  linked?: () => Bound | null;
  /** Called once when this governor stops (e.g. to set that flag). */
  onStop?: (b: Bound) => void;
  /** Ticks between clock reads at most (default 64; fewer when ticks are slow). */
  every?: number;
  /** A full garbage collection (default: the one {@link setCollector} gave; null: none). */
  collect?: (() => void) | null;
}

/** Share of the memory bound from which a reading first collects garbage (when it can). */
export const COLLECT_AT = 0.8;
/** Growth of the resident set (share of the bound) between two collections. */
export const COLLECT_STEP = 0.04;

let defaultCollect: (() => void) | null = null;

/**
 * Milliseconds a full collection is taken to cost per MB of resident set until one has been
 * timed (a forced collection of a 100 MB heap took 190–300 ms on a loaded machine).
 */
export const COLLECT_MS_PER_MB = 2;

/**
 * A full collection `collect` that keeps clear of a deadline: it times each collection (per MB of
 * the resident set it started from) and skips one that, at twice the slowest rate seen (at first
 * {@link COLLECT_MS_PER_MB}), would still be running at `deadline` (ms since the epoch; Infinity:
 * none). A collection of a large heap takes seconds: run just before the deadline, it made
 * `run --timeout` end well past it (issue 11). Returns whether it collected.
 */
export function deadlineCollector(collect: () => void, now: () => number = Date.now): (rss: number, deadline: number) => boolean {
  let msPerMb = COLLECT_MS_PER_MB / 2;
  return (rss, deadline) => {
    if (deadline === Infinity) {
      collect();
      return true;
    }
    const mb = Math.max(1, rss / 1048576);
    const t0 = now();
    if (t0 + 2 * msPerMb * mb >= deadline) return false;
    collect();
    msPerMb = Math.max(msPerMb, (now() - t0) / mb);
    return true;
  };
}

/**
 * Sets the full garbage collection that governors run before they read a resident set past
 * {@link COLLECT_AT} of their bound (the CLI's, from V8; none by default). V8 collects a large
 * heap only once it has grown well past what is live, so garbage alone (the copies of a successor
 * state, the clones of an analysis) would otherwise take the resident set past the bound.
 */
export function setCollector(collect: (() => void) | null): void {
  defaultCollect = collect;
}

/**
 * At most this often (ms) the resident set is read again. A read costs from a few µs to about a
 * millisecond on a loaded machine (it reads /proc), which made it a fifth of a small check's time
 * when it was read every 5 ms and before every table growth.
 */
export const SAMPLE_MS = 20;
/**
 * {@link Governor.allow} decides on the last reading while the memory in use plus the request stays
 * below this share of the bound, and reads the resident set afresh above it.
 */
export const FRESH_SHARE = 0.75;
/** The interval (ms) {@link Governor.tick} aims at between clock reads. */
export const CHECK_MS = 10;

/** The platform's resident-set reader, or null (a browser). */
function defaultRss(): (() => number | null) {
  const p = (globalThis as { process?: { memoryUsage?: { rss?: () => number } } }).process;
  const rss = p?.memoryUsage?.rss;
  return typeof rss === 'function' ? () => rss.call(p!.memoryUsage) : () => null;
}

/**
 * The memory bound (bytes of the resident set) of `simulate` and `check` when their caller gives
 * none: 2 GiB, as the CLI's `--max-memory`. Without it a long library run recorded events until
 * V8 aborted the process (out of heap after 95 s, uncatchable).
 */
export const DEFAULT_MAX_MEMORY = 2 * 1024 ** 3;

/** See the file comment. */
export class Governor {
  readonly maxMemory: number;
  readonly deadline: number;
  readonly maxSteps: number;
  readonly t0: number;
  /** The caller's stop request ({@link Limits.interrupt}), or null. */
  readonly interrupt: (() => boolean) | null;
  /** The bound that stopped the operation, or null while it may go on. */
  stoppedBy: Bound | null = null;
  steps = 0;
  /** The caller's estimate of the bytes it holds (used where the resident set is unmeasurable). */
  estimate = 0;
  /** The largest memory figure seen (bytes). */
  peak = 0;
  private readonly now: () => number;
  private readonly rss: () => number | null;
  private readonly linked: (() => Bound | null) | null;
  private readonly onStop: ((b: Bound) => void) | null;
  private readonly maxEvery: number;
  private every: number;
  private lastCheck: number;
  private ticks = 0;
  private lastSample = -Infinity;
  /** The last resident-set reading (null: unmeasurable here). */
  private lastRss: number | null = null;
  private readonly collect: ((rss: number, deadline: number) => boolean) | null;
  /** The resident set at the last collection. */
  private collectedAt = 0;

  constructor(limits: Limits = {}, hooks: GovernorHooks = {}) {
    this.now = hooks.now ?? Date.now;
    this.rss = hooks.rss ?? defaultRss();
    this.linked = hooks.linked ?? null;
    this.onStop = hooks.onStop ?? null;
    const collect = hooks.collect === undefined ? defaultCollect : hooks.collect;
    this.collect = collect ? deadlineCollector(collect, this.now) : null;
    this.maxEvery = this.every = Math.max(1, Math.floor(hooks.every ?? 64));
    this.t0 = this.lastCheck = this.now();
    this.maxMemory = limits.maxMemory ?? Infinity;
    this.deadline = limits.deadline ?? (limits.timeoutMs !== undefined ? this.t0 + limits.timeoutMs : Infinity);
    this.maxSteps = limits.maxSteps ?? Infinity;
    this.interrupt = limits.interrupt ?? null;
  }

  /** Milliseconds since the governor was created. */
  elapsed(): number {
    return this.now() - this.t0;
  }

  /**
   * Bytes in use now: the resident set when measurable (re-read at most every {@link SAMPLE_MS} ms
   * unless `fresh`), else the estimate. `t`: the clock just read by the caller (one read per check).
   */
  memory(fresh = false, t = this.now()): number {
    if (fresh || t - this.lastSample >= SAMPLE_MS) {
      this.lastSample = t;
      this.lastRss = this.rss();
      const r = this.lastRss;
      // Past COLLECT_AT of the bound, once per COLLECT_STEP of growth: what is held, not garbage
      // (unless the collection would outlast the deadline: then the reading stands).
      if (r !== null && this.collect && this.maxMemory !== Infinity && r >= this.maxMemory * COLLECT_AT && r >= this.collectedAt + this.maxMemory * COLLECT_STEP && this.collect(r, this.deadline)) {
        this.collectedAt = r;
        this.lastRss = this.rss();
      }
    }
    const m = Math.max(this.lastRss ?? this.estimate, 0);
    if (m > this.peak) this.peak = m;
    return m;
  }

  /** Stops with bound `b` (the first stop wins); returns it. */
  stop(b: Bound): Bound {
    if (this.stoppedBy === null) {
      this.stoppedBy = b;
      this.onStop?.(b);
    }
    return this.stoppedBy;
  }

  /** Cheap check for hot loops: every `every` calls, {@link check}. Returns the bound once stopped. */
  tick(): Bound | null {
    if (this.stoppedBy !== null) return this.stoppedBy;
    if (++this.ticks < this.every) return null;
    this.ticks = 0;
    const t = this.now();
    const dt = t - this.lastCheck;
    this.lastCheck = t;
    if (dt > 2 * CHECK_MS && this.every > 1) this.every >>= 1;
    else if (dt < CHECK_MS / 4 && this.every < this.maxEvery) this.every = Math.min(this.maxEvery, this.every * 2);
    return this.check();
  }

  /** Checks every bound now (the clock; memory if due; the linked stop; the interrupt). Returns the bound once stopped. */
  check(): Bound | null {
    if (this.stoppedBy !== null) return this.stoppedBy;
    if (this.steps >= this.maxSteps) return this.stop('max-steps');
    if (this.interrupt?.()) return this.stop('interrupt');
    if (this.linked) {
      const l = this.linked();
      if (l !== null) {
        this.stoppedBy = l;
        return l;
      }
    }
    const t = this.now();
    if (t >= this.deadline) return this.stop('timeout');
    if (this.maxMemory !== Infinity && this.memory(false, t) > this.maxMemory) return this.stop('max-memory');
    return null;
  }

  /** Counts `n` steps; true while the step bound allows going on. */
  step(n = 1): boolean {
    this.steps += n;
    if (this.steps >= this.maxSteps) this.stop('max-steps');
    return this.stoppedBy === null;
  }

  /**
   * Whether `bytes` more may be allocated: false (and stopped by `max-memory`) when the memory in
   * use now plus `bytes` would pass the bound. Call it before growing a large table. `fresh`:
   * always read the resident set afresh (for allocations that come faster than
   * {@link SAMPLE_MS} apart and each a large share of the bound).
   */
  allow(bytes: number, fresh = false): boolean {
    if (this.stoppedBy !== null) return false;
    if (this.maxMemory === Infinity) return true;
    if (!fresh && this.memory() + bytes <= this.maxMemory * FRESH_SHARE) return true;
    if (this.memory(true) + bytes > this.maxMemory) {
      this.stop('max-memory');
      return false;
    }
    return true;
  }
}

/**
 * A bound given to a library call (`simulate`'s `maxSteps`, `check`'s `timeout`, …): undefined
 * (the default applies) or a number that is not NaN (Infinity: no bound; 0 or less: stop at
 * once). Anything else is a RangeError naming the option: a NaN bound compares false with every
 * count and would silently mean no bound at all.
 */
export function boundOption(where: string, name: string, v: unknown): number | undefined {
  if (v === undefined) return undefined;
  if (typeof v === 'number' && !Number.isNaN(v)) return v;
  const got = typeof v === 'number' ? 'NaN' : typeof v === 'string' ? `the string ${JSON.stringify(v.slice(0, 40))}` : v === null ? 'null' : typeof v;
  throw new RangeError(`${where}: ${name} must be a number (Infinity for no bound), got ${got}`);
}

/** Thrown by an allocation the governor refused (caught by the operation, which stops with `bound`). */
export class BoundReached extends Error {
  constructor(readonly bound: Bound) {
    super(`stopped by ${bound}`);
  }
}
