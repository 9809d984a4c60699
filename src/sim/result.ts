/**
 * What a simulation takes and gives: its options, the spans of a timeline, the verdict, the
 * result and the utilization figures (cycles), and the event kinds a ledger needs.
 */
import type { EventKind, MachineEvent } from '../machine/events.js';
import type { HangReport } from '../machine/hang.js';
import type { MachineState } from '../machine/machine.js';
import type { Program } from '../machine/program.js';
import type { Bound, DEFAULT_MAX_MEMORY } from '../machine/governor.js';
import type { Diagnostic } from '../model/diagnostics.js';
import type { SrcLoc } from '../kernel/ir.js';
import type { Timing } from './timing.js';

/** Options of `simulate` (./simulate.ts). */
export interface SimOptions {
  timing?: Timing;
  /** Seed for latency jitter; absent: no jitter. */
  seed?: number;
  /** Keep the machine's events (needed for ledgers and traces). Default true. */
  recordEvents?: boolean;
  /**
   * Keep only events of these kinds (all are still counted in `eventCount`); default all. A ledger
   * needs only the kinds of `LEDGER_EVENT_KINDS` (arrive, expect_tx, complete_tx, phase, wait,
   * async, diag), a third of the events of a typical run.
   */
  eventKinds?: ReadonlySet<EventKind>;
  /** Keep per-lane spans (needed for timelines and traces). Default true. */
  recordSpans?: boolean;
  /**
   * Stop after this many steps (a spinning kernel never ends). Default 50,000,000. Wake-ups that
   * apply no step (an asynchronous completion not yet enabled, re-queued a cycle later) are
   * bounded by `IDLE_PER_STEP` (64) times as many, so a run without progress stops too.
   */
  maxSteps?: number;
  /**
   * Stop (verdict `incomplete`) before the process's memory passes this many bytes (its resident
   * set, src/machine/governor.ts; in a browser an estimate of the recorded events and spans).
   * Default 2 GiB (`DEFAULT_MAX_MEMORY` of src/machine/governor.ts, as `check` and the CLI); Infinity: no bound.
   */
  maxMemory?: number;
  /** Stop (verdict `incomplete`) after this many wall-clock milliseconds. Default: no bound. */
  timeoutMs?: number;
  /**
   * SMs copying at the same time, for the shared L2/HBM bandwidth model (default: the CTAs of
   * this launch, at most the GPU's SMs). Set it to simulate one CTA of a full-GPU launch.
   */
  activeSms?: number;
  /** Called after every step with the state (read-only by contract) and the step's events. */
  onStep?: (state: MachineState, events: readonly MachineEvent[]) => void;
}

/** A busy or stalled interval on a lane. `lane` is an agent index, or a unit lane name. */
export interface Span {
  lane: string;
  t0: number;
  t1: number;
  kind: 'op' | 'stall' | 'tma' | 'mma' | 'store' | 'signal';
  label: string;
  loc?: SrcLoc;
  /** Asynchronous operation id, for async spans. */
  id?: number;
}

/**
 * How a run ended. `trap`: the H200 would trap; `error`: undefined behaviour reported without a
 * trap; `incomplete`: the step limit stopped it first.
 */
export type SimVerdict = 'ok' | 'hang' | 'trap' | 'error' | 'incomplete';

/** Everything a simulation produced. */
export interface SimResult {
  program: Program;
  timing: Timing;
  verdict: SimVerdict;
  /** Cycle of the last step. */
  cycles: number;
  steps: number;
  eventCount: number;
  events: MachineEvent[] | null;
  spans: Span[] | null;
  diagnostics: { diag: Diagnostic; agent: number; async: number; bar: number; loc?: SrcLoc; t: number }[];
  hang: HangReport | null;
  /** Why the run stopped early, if it did: a sentence naming the bound and what to raise or shrink. */
  stopped: string | null;
  /** The bound that stopped the run early, or null. */
  stoppedBy: Bound | null;
  stats: SimStats;
  final: MachineState;
}

/** Utilization and stall figures (cycles). */
export interface SimStats {
  /** Per agent: cycles spent issuing operations. */
  busy: number[];
  /** Per agent: stalled cycles by cause (e.g. `wait empty`, `bar.sync`). */
  stalls: Record<string, number>[];
  /** Per CTA: cycles the TMA engine was transferring. */
  tmaBusy: number[];
  /** Per CTA: cycles the tensor core was busy. */
  tcBusy: number[];
  /** Per agent: cycles at which it finished (or -1). */
  finishedAt: number[];
}

/** The event kinds a ledger (src/report/ledger.ts) and its actor names read. */
export const LEDGER_EVENT_KINDS: ReadonlySet<EventKind> = new Set<EventKind>(['arrive', 'expect_tx', 'complete_tx', 'phase', 'wait', 'async', 'diag']);

/** Wake-ups without a step allowed per step of `maxSteps` (a completion waiting its turn is re-queued every cycle). */
export const IDLE_PER_STEP = 64;
