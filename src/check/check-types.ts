/**
 * The shapes `check` returns and takes: {@link CheckOptions}, {@link CheckResult}, its
 * {@link Hazard}s with their {@link TraceStep}s, {@link BarrierSnapshot}s and {@link GroupNote}s.
 * The checker's entry point is check.ts.
 */
import type { MachineState } from '../machine/machine.js';
import type { Program } from '../machine/program.js';
import type { Severity } from '../model/diagnostics.js';
import type { SrcLoc } from '../kernel/ir.js';
import type { Ledger } from '../report/ledger.js';
import type { ExploreOptions, Progress } from './explore.js';

/** Options of {@link check}. */
export interface CheckOptions {
  /** Stop (verdict `incomplete`) after this many distinct states. Default 5,000,000. */
  maxStates?: number;
  /**
   * Stop before the process's memory (its resident set, src/machine/governor.ts; in a browser the
   * search's estimate) passes this many bytes, also before a table growth would pass it. Default 2 GiB.
   */
  maxMemory?: number;
  /** Stop after this many milliseconds of the whole check (static checks included). Default 60,000. */
  timeout?: number;
  /** Keep exploring after the first error hazard (default: finish that depth, then stop). */
  all?: boolean;
  /** Partial-order reduction (default true). */
  por?: boolean;
  /** Symmetry reduction (default true). */
  symmetry?: boolean;
  /** Symmetry between the CTAs of a cluster (default true; only with `symmetry`; docs/CHECK.md). */
  ctaSymmetry?: boolean;
  /** Dead registers of PTX warps that warp-relative symmetry did not analyse left out of the state (default true; docs/CHECK.md, "Dead registers"). */
  deadSlots?: boolean;
  /** Stable waits and enabled wait_groups as forced steps of the partial-order reduction (default true; docs/CHECK.md). */
  stableWaits?: boolean;
  /**
   * Stable phase-completing TMA landings and stable group completions as forced steps, postponed
   * group completions (default true; only with `stableWaits`; docs/CHECK.md, "Stable landings",
   * "Stable group completions", "Postponed group completions"). Off only to compare the search
   * with and without them.
   */
  stableLandings?: boolean;
  /**
   * Arrivals on counting barriers taken alone across a phase boundary (default true; only with
   * `stableWaits`; docs/CHECK.md, "Arrivals across a phase boundary"). Off only to compare.
   */
  countingArrivals?: boolean;
  /** Strict warnings (cross-proxy WAR without fence.proxy.async). */
  strict?: boolean;
  /**
   * Internal (tests): check every incremental state hash against a full recomputation, and freeze
   * the state parts successors share (a step that mutates one throws). Slow.
   */
  verifyHash?: boolean;
  /** Worker threads exploring each level together (default 1; see docs/CHECK.md, "Parallel search"). */
  workers?: number;
  /**
   * Random runs beside a large sequential search (default on; docs/CHECK.md, "Random runs"; see
   * {@link ExploreOptions.randomRuns}): a hazard one finds is real, its trace not necessarily the shortest.
   */
  randomRuns?: ExploreOptions['randomRuns'];
  onProgress?: (p: Progress) => void;
  /**
   * A request to stop the running check: the search stops at its next bound check (about every
   * 10 ms) with verdict `incomplete` and `stoppedBy: 'interrupt'`, as a timeout stops it (what was
   * explored so far, the traces of the findings so far). An `AbortSignal` (its `aborted`, e.g. set
   * from `onProgress`), or an `Int32Array` whose element 0 another thread sets to non-zero with
   * `Atomics.store` (over a SharedArrayBuffer: `check` is synchronous, so only another thread, or a
   * callback such as `onProgress`, can raise it while it runs). Checked again by each parallel worker.
   */
  stop?: StopRequest;
  /** Called with every terminal state the search expands (see {@link ExploreOptions.onTerminal}). */
  onTerminal?: (s: MachineState) => void;
}

/**
 * How a caller asks a running {@link check} to stop ({@link CheckOptions.stop}): an object with an
 * `aborted` flag (an `AbortSignal`), or an `Int32Array` (shared between threads) whose element 0
 * is non-zero once the stop is asked for.
 */
export type StopRequest = { readonly aborted: boolean } | Int32Array;

/** Whether `s` asks for the stop now (false without one). */
export function stopRequested(s: StopRequest | undefined): boolean {
  if (s === undefined) return false;
  return s instanceof Int32Array ? Atomics.load(s, 0) !== 0 : s.aborted === true;
}

/** The state of one barrier after a trace step. */
export interface BarrierSnapshot {
  name: string;
  phase: number;
  pending: number;
  expected: number;
  tx: number;
}

/**
 * The asynchronous groups of one agent that a trace step concerns: a `wgmma.wait_group N` /
 * `cp.async.bulk.wait_group[.read] N` step, or the completion of a wgmma or bulk store that
 * changes how many committed groups its issuer has pending.
 */
export interface GroupNote {
  /** The agent whose groups these are. */
  agent: string;
  /** `bulk.store` (cp.async.bulk groups), `wgmma` or `cp.async` (cp.async-groups). */
  kind: 'bulk.store' | 'wgmma' | 'cp.async';
  /** Committed groups of that agent and kind still pending before and after the step. */
  before: number;
  after: number;
  /** N of the agent's wait_group: the one this step executes, or the one it is parked at after the step; null if none (or the kernel trapped). */
  waitN: number | null;
  /**
   * `passes`: this step is the wait_group (it only runs once at most N groups are pending);
   * `wakes`: this completion lets the wait_group the agent is parked at pass;
   * `waits`: that wait_group still cannot pass; null: the agent is not parked at one, or it could already pass.
   */
  wait: 'passes' | 'wakes' | 'waits' | null;
}

/** One numbered step of a counterexample. */
export interface TraceStep {
  n: number;
  /** Agent name, or the async unit with its issuer (`TMA copy (from producer)`). */
  actor: string;
  kind: 'agent' | 'async';
  /** Operation text. */
  op: string;
  loc?: SrcLoc;
  /** Barriers this step touched, as they are after it. */
  barriers: BarrierSnapshot[];
  /** Notable effects: phases completed, waits passed, diagnostics. */
  notes: string[];
  /** wait_group steps, and completions that retire a wgmma / bulk-store group: the pending groups. */
  groups?: GroupNote;
}

/** A hazard with its shortest trace. */
export interface Hazard {
  kind: string;
  severity: Severity;
  message: string;
  subject: { type: 'barrier' | 'buffer'; name: string } | null;
  details: string[];
  locations: SrcLoc[];
  /** The schedule: choice codes (agent index ≥ 0, async op id as −(id + 1)). */
  schedule: number[];
  trace: TraceStep[];
  ledger: Ledger;
  /** Races: the two accesses happens-before leaves unordered, from the trace's vector clocks. */
  /**
   * Races: the two accesses, the happens-before explanation, the release that let the later side
   * go (the arrive / commit that completed the phase its wait observed, with lines; null when it
   * did not wait) and the fix that applies (`cause.ts`).
   */
  race?: { first: string; second: string; explanation: string; release: string | null; fix: string };
  /**
   * The root cause when a static finding already explains this hazard (a hang on a barrier whose
   * arrive is never executed, whose roles disagree about the trip count, or whose arrivals do not
   * add up to its count): that finding's kind, message and locations, reported first. Also
   * `start-parity` (not static): a hang whose waiter in the wait-for cycle waits with parity 0 on a
   * fresh barrier that only the cycle's other agents complete (the producer-start parity), and
   * `vacuous-wait` (not static): a race whose later side's wait passed on the fresh barrier with
   * parity 1 where a static trip-mismatch counts one wait too few observing phases (that finding's
   * message and locations: the wait's start parity, not the trip counts).
   */
  cause?: { kind: string; message: string; locations: SrcLoc[] };
  /**
   * Races: where the release that let the later side go was issued (the arrive or commit), the
   * wait that observed it, and where the fix goes (the `wait_group` whose depth leaves the group in
   * flight, the release a `fence.proxy.async` must precede), when the trace has them (editors show
   * them as related locations; each is also one of `locations`).
   */
  sites?: { release?: SrcLoc; wait?: SrcLoc; fix?: SrcLoc };
  /** True for the static checks (count-mismatch, trip-mismatch, unused-barrier, unreachable-arrive): no schedule, no trace. */
  static?: boolean;
  /**
   * Other sites of the same (kind, subject, detector variant): findings that other schedules reach,
   * merged into this one (the shortest) so that a report lists each once ({@link variantOf}). `locations` are theirs
   * that this one's do not already name, in source order; `count` how many findings were merged.
   */
  also?: { count: number; locations: SrcLoc[] };
  /**
   * True when a bound of the check kept this finding's trace from being built: `schedule` holds
   * its counterexample, `trace` is empty and `ledger` has no phases. The time bound: the first
   * finding is always traced, the others not once `timeout` has passed when the search ends. The
   * memory bound: a trace (a replay holds a whole state of the launch) is built only while it fits
   * under `maxMemory`.
   */
  untraced?: boolean;
  /** The bound that kept the trace from being built (with {@link untraced}). */
  untracedBy?: 'timeout' | 'max-memory' | 'interrupt';
  /**
   * True when a random run beside the search found this hazard (CheckOptions.randomRuns): the
   * trace is a real schedule that reaches it, not necessarily the shortest one.
   */
  randomRun?: boolean;
}

/** Verdict kinds: `ok`, `incomplete`, or the kind of the first (shortest) error hazard. */
export type Verdict = string;

/** Everything `check` found. */
export interface CheckResult {
  program: Program;
  verdict: Verdict;
  complete: boolean;
  /** Why the search stopped short of every schedule; `interrupt`: {@link CheckOptions.stop}. */
  stoppedBy: 'max-states' | 'max-memory' | 'timeout' | 'interrupt' | 'hazard' | null;
  hazards: Hazard[];
  warnings: Hazard[];
  coverage: {
    states: number;
    transitions: number;
    depth: number;
    peakFrontier: number;
    memoryBytes: number;
    /** Wall milliseconds of the whole check: static checks, the search, and the traces rebuilt after it. */
    elapsedMs: number;
    terminalStates: number;
    por: boolean;
    /** False when symmetry reduction was switched off (then `symmetry` is empty). */
    symmetryOn: boolean;
    symmetry: { role: string; cta: number; agents: number }[];
    /**
     * Symmetry between the CTAs of a cluster (check/cta-symmetry.ts): each CTA rank permutation
     * states were identified under (π as the image of ranks 0 .. C − 1), or why there is none
     * (`off` when switched off; null reason with no permutations: a cluster of one CTA).
     */
    ctaSymmetry: { permutations: number[][]; reason: string | null };
    /** Random schedules followed beside the search (CheckOptions.randomRuns) and their steps (0, 0 when none ran). */
    randomRuns: { runs: number; steps: number };
  };
}
