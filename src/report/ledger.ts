/**
 * The per-barrier ledger: for each phase of each barrier, who arrived and when, the tx bytes
 * expected and completed, when the phase completed, and who waited on it with which parity.
 * Built from the machine's events only, so the simulator, the checker and the explorer share it.
 */
import type { SrcLoc } from '../kernel/ir.js';
import type { MachineEvent } from '../machine/events.js';
import type { Program } from '../machine/program.js';
import { argError, isRecord, programArg } from '../model/api-args.js';

/** One arrival (or arrive-family signal) in a phase. */
export interface LedgerArrival {
  who: string;
  t: number;
  count: number;
  /** Bytes this arrive added with `.expect_tx`. */
  expectTx: number;
  loc?: SrcLoc;
}

/** A wait that returned true for this phase. */
export interface LedgerWait {
  who: string;
  t: number;
  parity: number;
  loc?: SrcLoc;
}

/** One phase of one barrier. */
export interface LedgerPhase {
  bar: number;
  barrier: string;
  phase: number;
  arrivals: LedgerArrival[];
  /** Arrivals counted (sum of counts). */
  arrived: number;
  /** Bytes registered by expect_tx (standalone and `.expect_tx`). */
  txExpected: number;
  /** Bytes credited by complete_tx (TMA landings and explicit complete_tx). */
  txCompleted: number;
  /** Credits in order: time, bytes, by whom. */
  credits: { t: number; bytes: number; who: string }[];
  completedAt: number | null;
  waiters: LedgerWait[];
}

/** A wait that passed without any phase completing for it (parity 1 on a fresh barrier, or an alias). */
export interface VacuousWait {
  bar: number;
  barrier: string;
  who: string;
  t: number;
  parity: number;
  loc?: SrcLoc;
}

/** The ledger of a run. */
export interface Ledger {
  phases: LedgerPhase[];
  vacuous: VacuousWait[];
  /**
   * Events the ledger was not built from: a cut-off (the CLI's `--timeout` for the report) stopped
   * the building there, and the phases are those of the run's first events. Absent: built whole.
   */
  omittedEvents?: number;
}

/**
 * A bound on building a report from a run's records (the ledger, the trace, the loop summary):
 * `stop()` is asked as the building goes (once per record); once it says so, the report is built
 * from what came before, and `omitted` counts the records left out.
 */
export interface ReportCut {
  stop(): boolean;
  omitted: number;
}

/** `events` is an array of machine events (objects with a kind `e`), else a TypeError naming `fn`. */
export function eventsArg(fn: string, events: unknown): void {
  if (!Array.isArray(events) || !events.every((e) => isRecord(e) && typeof e.e === 'string')) argError(fn, 'events', 'an array of MachineEvents (a SimResult\'s events)', events);
}

/** Names the actor of an event: an agent, or an asynchronous operation with its issuer. */
export function actorNamer(program: Program, events: MachineEvent[]): (agent: number, asyncId: number) => string {
  const asyncInfo = new Map<number, { kind: string; agent: number }>();
  for (const e of events) if (e.e === 'async') asyncInfo.set(e.id, { kind: e.kind, agent: e.agent });
  const label: Record<string, string> = {
    tma: 'TMA', 'bulk.store': 'bulk store', 'tc.mma': 'tcgen05.mma', 'tc.commit': 'tcgen05.commit', wgmma: 'wgmma',
    'cp.async': 'cp.async', 'cpa.arrive': 'cp.async.mbarrier.arrive', remote: 'remote',
    'tc.ld': 'tcgen05.ld', 'tc.st': 'tcgen05.st', 'tc.cp': 'tcgen05.cp', 'tc.shift': 'tcgen05.shift',
    'st.async': 'st.async', dsmem: 'DSMEM bulk copy', pick: 'choice', clc: 'try_cancel response',
  };
  return (agent, asyncId) => {
    if (agent >= 0) return program.agents[agent]!.name;
    const a = asyncInfo.get(asyncId);
    if (!a) return `async#${asyncId}`;
    return `${label[a.kind] ?? a.kind} (from ${program.agents[a.agent]!.name})`;
  };
}

/**
 * Builds the ledger of `events` (which must start at the beginning of a run). `cut` (optional)
 * bounds the building: once its `stop()` says so, the rest of the events is left out, counted in
 * `cut.omitted` and in the ledger's `omittedEvents`.
 */
export function buildLedger(program: Program, events: MachineEvent[], cut?: ReportCut): Ledger {
  programArg('buildLedger', program);
  eventsArg('buildLedger', events);
  if (cut !== undefined && (!isRecord(cut) || typeof cut.stop !== 'function')) argError('buildLedger', 'cut', 'a ReportCut ({ stop(): boolean, omitted: number })', cut);
  const who = actorNamer(program, events);
  // By barrier key, then phase: numeric keys (a string key per event was a third of the time).
  const byBar = new Map<number, Map<number, LedgerPhase>>();
  const phases: LedgerPhase[] = [];
  const vacuous: VacuousWait[] = [];
  const find = (bar: number, phase: number): LedgerPhase | undefined => byBar.get(bar)?.get(phase);
  const get = (bar: number, phase: number): LedgerPhase => {
    let m = byBar.get(bar);
    if (!m) byBar.set(bar, (m = new Map()));
    let p = m.get(phase);
    if (!p) {
      p = { bar, barrier: program.barrierName(bar), phase, arrivals: [], arrived: 0, txExpected: 0, txCompleted: 0, credits: [], completedAt: null, waiters: [] };
      m.set(phase, p);
      phases.push(p);
    }
    return p;
  };
  let omitted = 0;
  for (let i = 0; i < events.length; i++) {
    if (cut?.stop()) {
      omitted = events.length - i;
      break;
    }
    const e = events[i]!;
    switch (e.e) {
      case 'arrive': {
        const p = get(e.bar, e.phase);
        const a: LedgerArrival = { who: who(e.agent, e.async), t: e.t, count: e.count, expectTx: e.expectTx };
        if (e.loc) a.loc = e.loc;
        p.arrivals.push(a);
        p.arrived += e.count;
        p.txExpected += e.expectTx;
        break;
      }
      case 'expect_tx':
        get(e.bar, e.phase).txExpected += e.bytes;
        break;
      case 'complete_tx': {
        const p = get(e.bar, e.phase);
        p.txCompleted += e.bytes;
        p.credits.push({ t: e.t, bytes: e.bytes, who: who(e.agent, e.async) });
        break;
      }
      case 'phase':
        get(e.bar, e.completed).completedAt = e.t;
        break;
      case 'wait': {
        if (!e.pass) break;
        // The phase a passing parity wait observed: the latest phase with that parity before the current one.
        const observed = e.phase - 1 - ((e.phase - 1 - e.parity) & 1);
        const p = observed >= 0 ? find(e.bar, observed) : undefined;
        if (observed < 0 || !p || p.completedAt === null) {
          vacuous.push({ bar: e.bar, barrier: program.barrierName(e.bar), who: who(e.agent, -1), t: e.t, parity: e.parity, loc: e.loc });
        } else p.waiters.push({ who: who(e.agent, -1), t: e.t, parity: e.parity, loc: e.loc });
        break;
      }
      default:
        break;
    }
  }
  phases.sort((a, b) => a.bar - b.bar || a.phase - b.phase);
  if (!omitted) return { phases, vacuous };
  if (cut) cut.omitted += omitted;
  return { phases, vacuous, omittedEvents: omitted };
}
