/**
 * The search engine's shared vocabulary, used by the sequential search (`search.ts`), the parallel
 * search (`parallel.ts`) and their callers: options and bounds, the visited-set interface, the
 * hooks a parallel worker plugs in, progress, raw hazards and results, and the choice encoding.
 */
import type { Choice, Machine, MachineState } from '../machine/machine.js';
import type { Analysis } from './analysis.js';
import { EvalFault } from '../kernel/expr.js';
import type { Severity } from '../model/diagnostics.js';
import type { SrcLoc } from '../kernel/ir.js';
import { BoundReached, DEFAULT_MAX_MEMORY, Governor, type Bound } from '../machine/governor.js';
import type { Codec, Extra, StateBuf } from './codec.js';

/**
 * A barrier or buffer key the checker reads ahead of a step, or -1 when its index expression faults
 * (division by zero, overflow): the step itself then runs and the machine reports the `arith` fault.
 */
export function keyOf(f: (frame: number[]) => number, frame: number[]): number {
  try {
    return f(frame);
  } catch (err) {
    if (err instanceof EvalFault) return -1;
    throw err;
  }
}

/**
 * Most hazards one search keeps (distinct kind, subject and site). `--all` lists every reachable
 * (kind, subject) below it; the cap only keeps a kernel with thousands of racy sites bounded.
 */
export const MAX_HAZARDS = 256;

/** The search's bounds when the options leave them out: stored states, estimated bytes, wall milliseconds. */
export const DEFAULT_BOUNDS: Readonly<{ maxStates: number; maxMemory: number; timeoutMs: number }> = Object.freeze({
  maxStates: 5_000_000, maxMemory: DEFAULT_MAX_MEMORY, timeoutMs: 60_000,
});

/** Options of the exhaustive search. */
export interface ExploreOptions {
  maxStates?: number;
  /**
   * Bytes of process memory (the resident set, src/machine/governor.ts; in a browser the search's
   * own estimate): the search stops (incomplete) before passing it, also before a table growth
   * that would pass it.
   */
  maxMemory?: number;
  timeoutMs?: number;
  /**
   * The caller's governor (`check`'s, which also governed the static checks): the sequential
   * search uses it instead of one of its own from `maxMemory` and `timeoutMs`, so a bound the
   * caller hit already stops the search at once.
   */
  governor?: Governor;
  /** Explore everything even after an error hazard (default: stop at the end of the depth where the first error was found). */
  all?: boolean;
  /** Partial-order reduction (default true). */
  por?: boolean;
  /** Stable waits and enabled wait_groups as forced steps of the partial-order reduction (default true; only with `por`). */
  stableWaits?: boolean;
  /** Stable phase-completing TMA landings as forced steps (default true; only with `stableWaits`). */
  stableLandings?: boolean;
  /** Arrivals on counting barriers as forced steps (check-types.ts `CheckOptions.countingArrivals`). */
  countingArrivals?: boolean;
  /** Symmetry reduction (default true). */
  symmetry?: boolean;
  /** Symmetry between the CTAs of a cluster (default true; only with `symmetry`; check/cta-symmetry.ts). */
  ctaSymmetry?: boolean;
  /** Dead frame slots of PTX warps that warp-relative symmetry did not analyse left out of their records (default true; check/dead-slots.ts). */
  deadSlots?: boolean;
  /** Internal (tests): false skips the warp-relative analysis of PTX warps (check/warp-relative.ts), leaving each to check/dead-slots.ts. */
  warpRelative?: boolean;
  /** Strict warnings: cross-proxy WAR (generic accesses, then an async-proxy overwrite without fence.proxy.async). */
  strict?: boolean;
  /** Internal (tests): check every incremental state hash against a full recomputation, and freeze the state parts successors share (a step that mutates one throws). */
  verifyHash?: boolean;
  /** Called every ~0.25 s with progress figures. */
  onProgress?: (p: Progress) => void;
  /**
   * Called with every terminal state (no step enabled: every agent exited, or a hang) as it is
   * expanded. The differential tests compare the sets of final states of reduced and unreduced
   * searches through it. Sequential search only.
   */
  onTerminal?: (s: MachineState) => void;
  /**
   * Worker threads exploring each breadth-first level together (default 1: this thread alone).
   * The result is the same as with one: same verdict, hazards, stored states and transitions of a
   * complete search (state ids, and so traces, may differ). See parallel.ts.
   */
  workers?: number;
  /**
   * Random runs (default on): once the breadth-first search has stored `from` states (default
   * {@link RANDOM_RUNS.from}) or a fifth of its time bound has passed (`afterMs`), it also follows random schedules from the states it expands, one
   * choice drawn at each step among the enabled ones, to the end of the kernel or up to
   * {@link RANDOM_RUNS.maxSteps} steps, for up to `share` (default {@link RANDOM_RUNS.share}) as
   * many steps as the search's own transitions. They run through the same transition and state
   * checks, so what they find is a real hazard of a real schedule, found where the search alone
   * would stop at a bound first; its trace is not necessarily the shortest (Hazard.randomRun). The
   * states they pass through are not claimed in the visited set: the search's coverage is the same
   * with or without them. Sequential search only, and not with `all`. `seed` fixes the draws
   * (default 1: the same check finds the same schedule).
   */
  randomRuns?: boolean | { from?: number; share?: number; seed?: number; afterMs?: number };
  /**
   * Internal (the all-trip-counts check, check/trips.ts; sequential search only): a different
   * visited-set key for a state (called with a state and its checker data; writes the two hash
   * words to `out`), a hook called with every state the search expands, the forced steps to
   * report (`forcedHead`: before a forced step of an agent for which `at` holds, `seed` hears of
   * the state it starts from, with the stored state and the forced choices that reached it;
   * without `seed`, such a step is explored, never forced), and
   * the states the search starts from instead of the kernel's initial state (each with the
   * schedule that reached it).
   */
  hooks?: SearchHooks;
}

/** See {@link ExploreOptions.hooks}. */
export interface SearchHooks {
  key?: (s: MachineState, x: Extra, out: Uint32Array) => void;
  onExpand?: (s: MachineState, x: Extra, id: number) => void;
  forcedHead?: { at: (s: MachineState, agent: number) => boolean; seed?: (s: MachineState, x: Extra, id: number, prefix: readonly Choice[]) => void };
  roots?: { s: MachineState; x: Extra; schedule: number[] }[];
}

/** The defaults of {@link ExploreOptions.randomRuns}. */
export const RANDOM_RUNS = { from: 20_000, share: 0.2, maxSteps: 20_000, seed: 1 } as const;

/** A set of 64-bit state hashes (h2 ≠ 0): the visited set. */
export interface HashSet {
  /** Inserts (h1, h2); false when it was already present. */
  add(h1: number, h2: number): boolean;
  readonly bytes: number;
  /** Bytes once `n` more entries are added. */
  bytesAfter(n: number): number;
}

/** What a worker of the parallel search plugs into the search (parallel.ts). */
export interface ParHooks {
  /** The visited set shared by all workers. */
  visited: HashSet;
  /** Records a new stored state (reached from `parentId` by `chain`); returns its local index. */
  store(parentId: number, chain: readonly Choice[]): number;
  /** The worker's governor (memory, deadline, linked to the other workers' stop). */
  governor: Governor;
}

/** The search's name of a governor's bound. */
export function stopOf(b: Bound): NonNullable<ExploreResult['stoppedBy']> {
  return b === 'max-steps' ? 'max-states' : b;
}

/** A guard for a table's growth: throws {@link BoundReached} when `gov` refuses the bytes. */
export function growthGuard(gov: Governor): (bytes: number) => void {
  return (bytes) => {
    if (!gov.allow(bytes)) throw new BoundReached('max-memory');
  };
}

/** The search's internals, for a worker of the parallel search (parallel.ts). */
export interface SearchApi {
  machine: Machine;
  analysis: Analysis;
  codec: Codec;
  /** The initial state's hash, and a buffer holding it encoded (id 0). */
  hash0: [number, number];
  initial: StateBuf;
  /** Hazards of the initial state (a division by zero before the first operation), and whether one is an error. */
  initHazards: RawHazard[];
  initError: boolean;
  /** Expands the state at index `i` of `buf` (its id is `buf.ids[i]`) into `next`. */
  expandAt(buf: StateBuf, i: number, next: StateBuf): void;
  /** Hazards reported since the last call (first per key, in the order found), and whether an error was found since the last call. */
  takeHazards(): RawHazard[];
  takeError(): boolean;
  counters(): { transitions: number; terminalOk: number; intermediates: number };
  abortBy(): ExploreResult['stoppedBy'];
  /** Learnt barrier keys per buffer key (TMA copies issued so far); `addFedBy` merges other workers' knowledge. */
  fedBy(): [number, number[]][];
  addFedBy(l: [number, number[]][]): void;
}

/** Progress and coverage figures. */
export interface Progress {
  states: number;
  transitions: number;
  depth: number;
  frontier: number;
  memory: number;
  elapsedMs: number;
}

/** A hazard as found by the explorer: where its trace ends, before the trace is rebuilt. */
export interface RawHazard {
  kind: string;
  severity: Severity;
  key: string;
  message: string;
  subject: string | null;
  /** State id the trace reaches; then `extra` choices are applied. */
  state: number;
  extra: Choice[];
  details: string[];
  locs: SrcLoc[];
  /** Found by a random run (ExploreOptions.randomRuns): its trace is a counterexample, not necessarily the shortest. */
  random?: boolean;
  /**
   * A hang whose waiter in the wait-for cycle waits with parity 0 for the first completion of a
   * fresh barrier (machine/hang.ts, `BlockedWaiter.startParity`): the first such waiter (agent
   * name), the barrier it waits on (hazard subject form, `empty[0]@c1`) and where it waits. Plain
   * data: it travels with the hazard from a parallel search's workers.
   */
  startParity?: { waiter: string; barrier: string; loc: SrcLoc };
  /**
   * A hang whose mbarrier waiter skips a completed phase no waiter observed (machine/hang.ts
   * `BlockedWaiter.skipped`): the first such waiter, its barrier (subject form), where it waits,
   * the phase its waits last observed and the phase it waits for. Plain data, as {@link startParity}.
   */
  skippedPhase?: { waiter: string; barrier: string; loc: SrcLoc; observed: number; phase: number; parity: number };
  /**
   * A hang: the barriers its mbarrier waiters wait on (hazard subject form), in the order of its
   * waiters (machine/hang.ts: root causes first), for the static finding that explains it
   * (cause-static.ts `staticCauseOf`).
   */
  waitBarriers?: string[];
  /**
   * A race whose fix its detector names (the memory-model races of check/relaxed.ts: relaxed
   * arrives and waits, `.cta`-scoped acquires, relaxed global flags), also its `fix: ` detail: the
   * race's report takes it over the fix the trace's schedule suggests (race-report.ts).
   */
  fix?: string;
  /**
   * With `fix`: why the two accesses are unordered though one happened after the other (the
   * relaxed arrive, the `.cta`-scoped wait, the relaxed flag), the end of `message`; the race's
   * happens-before explanation quotes it.
   */
  reason?: string;
  /**
   * A static `unreachable-arrive` whose site a branch on kernel parameters alone leaves out (a
   * specialization, check/param-branches.ts): reported only where it is the cause of a hang.
   */
  specialized?: boolean;
}

/** What the search produced. */
export interface ExploreResult {
  /** Null when a bound stopped the search while it was being set up (no state explored). */
  machine: Machine | null;
  analysis: Analysis | null;
  hazards: RawHazard[];
  complete: boolean;
  stoppedBy: 'max-states' | 'max-memory' | 'timeout' | 'interrupt' | 'hazard' | null;
  states: number;
  transitions: number;
  depth: number;
  peakFrontier: number;
  memory: number;
  elapsedMs: number;
  /** Parent id per state id, and the choices leading from the parent (chainData[chainOff[id]] = length, then codes). */
  parent: Int32Array;
  chainOff: Int32Array;
  chainData: Int32Array;
  terminalOk: number;
  /** States passed through by forced (reduced) steps: hashed, never stored or expanded. */
  intermediates: number;
  /** The schedules that reached the roots of a search started from given states (state id → schedule; ExploreOptions.hooks.roots). */
  rootSchedules?: number[][];
  /** Random runs followed ({@link ExploreOptions.randomRuns}) and their steps; their states are not in `states`. */
  randomRuns?: { runs: number; steps: number };
}

/** Choice ↔ integer code: agent a → a; async op id → −(id + 1). */
export function encodeChoice(c: Choice): number {
  return c.kind === 'agent' ? c.agent : -(c.id + 1);
}
export function decodeChoice(x: number): Choice {
  return x >= 0 ? { kind: 'agent', agent: x } : { kind: 'async', id: -x - 1 };
}

/** `a`, or a copy at least `n` long (doubling), with `a`'s contents. */
export function grow(a: Int32Array<ArrayBuffer>, n: number): Int32Array<ArrayBuffer> {
  if (n <= a.length) return a;
  let size = a.length * 2;
  while (size < n) size *= 2;
  const b = new Int32Array(size);
  b.set(a);
  return b;
}
