/**
 * `mbsim run`: simulates a kernel with the H200 timing model (src/sim/simulate.ts) and prints the
 * timeline, ledger and summary (src/cli/run-report.ts), or the `--json` document, and writes the
 * `--trace` file. Exit codes: 0 ok, 1 hang / trap / undefined behaviour, 2 bad input, 3 incomplete.
 */
import { findExample } from '../examples/index.js';
import type { Program } from '../machine/program.js';
import { buildLedger } from '../report/ledger.js';
import { loopSummary } from '../report/loop.js';
import { phaseRecorder, type PhaseRecorder, type PhaseRow } from '../report/phases.js';
import { buildTrace } from '../report/trace.js';
import { LEDGER_EVENT_KINDS, simulate, SimTimeError, type SimOptions, type SimResult } from '../sim/simulate.js';
import { TimingError, type Timing } from '../sim/timing.js';
import { echo, refuseMemoryBelowFootprint } from './args.js';
import { DEFAULT_MAX_MEMORY_MB } from './parse-budget.js';
import { fifoWait, outputBudget, reportReserveMs } from './budget.js';
import { loadTiming } from './timing-file.js';
import { timeLeft, type IO } from './io.js';
import { runMissingParams, staticMissingParams } from './missing-param.js';
import { instantiateOrExplain, loadKernel, UsageError } from './load.js';
import { isPtx, type PtxFlags } from './ptx-flags.js';
import { inputFiles, refuseInput, refuseStdout, writeOutput } from './output.js';
import { printRunText, writeRunJson, type RunReport } from './run-report.js';

/** Share of `run --max-memory` the simulation's records may fill (the report built from them needs the rest). */
const RUN_MEMORY_SHARE = 0.5;
/** The share when a `--trace` or the `--events` log is built too (each about as large again as the records). */
const RUN_MEMORY_SHARE_TRACED = 0.3;

/**
 * The most CTAs `run --grid` takes for a sketch or an example: CUDA's limit of a launch's
 * `gridDim.x`, 2^31 − 1 (CUDA C++ Programming Guide, "Compute Capabilities", maximum x-dimension
 * of a grid). The bandwidth model shares L2/HBM among at most the GPU's SMs, so a larger grid would
 * change nothing but the number echoed back.
 */
export const MAX_GRID_CTAS = 2 ** 31 - 1;

/** The options of `mbsim run` as commander parses them. */
export interface RunOpts extends PtxFlags {
  set: Record<string, number>;
  maxSteps: number;
  /** Seconds. */
  timeout?: number;
  /** MB. */
  maxMemory: number;
  trace?: string;
  json?: boolean;
  timing?: string;
  seed?: number;
  width: number;
  events?: boolean;
  phaseTable?: string;
  grid?: number;
  activeSms?: number;
  omit?: string;
}

/** JSON fields `--omit` may leave out. */
const OMITTABLE = ['events', 'spans', 'ledger'] as const;

function parseOmit(v: string | undefined): Set<string> {
  const out = new Set<string>();
  if (v === undefined) return out;
  for (const f of v.split(',').map((x) => x.trim()).filter(Boolean)) {
    if (!(OMITTABLE as readonly string[]).includes(f)) throw new UsageError(`--omit: unknown field '${echo(f)}' (one of ${OMITTABLE.join(', ')})`);
    out.add(f);
  }
  return out;
}

/** The program and the settings of one run, checked. */
interface RunPlan {
  program: Program;
  timing: Timing;
  omit: Set<string>;
  activeSms: number | undefined;
  gridScale: number;
}

async function planRun(target: string, o: RunOpts, io: IO, started: number): Promise<RunPlan> {
  if (o.trace !== undefined && o.trace.trim() === '') throw new UsageError('--trace needs a file name');
  // The report always goes to stdout (run has no --quiet): the trace may go to the standard error.
  if (o.trace !== undefined) refuseStdout('--trace', o.trace, true, '/dev/stderr');
  const loaded = await loadKernel(target, o, false, io.err, { maxMemoryMb: o.maxMemory, timeoutS: o.timeout, started });
  if (o.trace !== undefined) refuseInput(o.trace, inputFiles(loaded.kernel.file, o.timing, 'run'));
  refuseMemoryBelowFootprint(o.maxMemory, process.memoryUsage.rss(), o.trace || o.events ? RUN_MEMORY_SHARE_TRACED : RUN_MEMORY_SHARE, 'the simulation', DEFAULT_MAX_MEMORY_MB);
  // For a PTX file --grid is the launch (every cluster simulated), not the bandwidth model's CTAs.
  const grid = isPtx(target) ? undefined : o.grid;
  const program = instantiateOrExplain(loaded.kernel, o.set, loaded.origin);
  const atStart = staticMissingParams(program);
  if (atStart) throw atStart;
  const timing = loadTiming(o.timing);
  const omit = parseOmit(o.omit);
  if (omit.size && !o.json) throw new UsageError('--omit applies to --json output');
  if (o.width < 20 || o.width > 1000) throw new UsageError(`--width ${o.width} is outside 20..1000`);
  if (grid !== undefined && o.activeSms !== undefined) throw new UsageError('give --grid or --active-sms, not both');
  if (grid !== undefined && grid > MAX_GRID_CTAS) throw new UsageError(`--grid ${grid} is more than ${MAX_GRID_CTAS.toLocaleString('en-US')} CTAs, the largest grid CUDA launches along x (gridDim.x ≤ 2^31 − 1); the bandwidth model uses only the CTAs on the GPU at once (--grid ${timing.sms.value} fills its SMs)`);
  if (grid !== undefined && grid < program.ctas) throw new UsageError(`--grid ${grid} is smaller than the ${program.ctas} CTA(s) the kernel simulates`);
  if (o.activeSms !== undefined && o.activeSms > timing.sms.value) throw new UsageError(`--active-sms ${o.activeSms} is more than the GPU's ${timing.sms.value} SMs`);
  // --grid N: the launch has N CTAs like the simulated ones; those on the GPU at once share L2/HBM
  const activeSms = o.activeSms ?? (grid !== undefined ? Math.min(grid, timing.sms.value) : undefined);
  // TFLOP/s of the CTAs on the GPU at once (a grid past the SMs runs in waves of them, each as long as the simulated loop)
  const gridScale = activeSms !== undefined ? activeSms / program.ctas : 1;
  return { program, timing, omit, activeSms, gridScale };
}

/**
 * The simulation of a plan. The text report without --events needs only the ledger's events (a
 * short run shows its event log: it is simulated again with every event, the same run). The
 * simulation stops at its share of --max-memory and {@link reportReserveMs} before --timeout: the
 * ledger and timeline built from its records need the rest. `recorder` (a new one per
 * simulation) records the phase table as the run goes.
 */
function simulateRun(p: RunPlan, o: RunOpts, started: number, recorder: () => PhaseRecorder | null): { r: SimResult; share: number; rows: PhaseRow[] | null } {
  const { omit } = p;
  // events feed the ledger, the event log and the loop summary; spans the timeline and trace
  const needEvents = !o.json || !omit.has('events') || !omit.has('ledger') || !!o.trace || !!o.phaseTable;
  const needSpans = !o.json || !omit.has('spans') || !!o.trace;
  const allEvents = !!((o.json && !omit.has('events')) || o.trace || o.events || o.phaseTable);
  const share = o.trace || o.events ? RUN_MEMORY_SHARE_TRACED : RUN_MEMORY_SHARE;
  let rows: PhaseRow[] | null = null;
  const sim = (opts: Partial<SimOptions>) => {
    const rec = recorder();
    rows = rec?.rows ?? null;
    try {
      return simulate(p.program, {
        timing: p.timing, maxSteps: o.maxSteps, maxMemory: o.maxMemory * 1048576 * share, recordEvents: needEvents, recordSpans: needSpans, ...opts,
        ...(p.activeSms !== undefined ? { activeSms: p.activeSms } : {}),
        ...(o.timeout !== undefined ? { timeoutMs: Math.max(1, timeLeft(o.timeout, started) - reportReserveMs(o.timeout * 1000)) } : {}), ...(o.seed !== undefined ? { seed: o.seed } : {}),
        ...(rec ? { onStep: rec.onStep } : {}),
      });
    } catch (err) {
      if (err instanceof SimTimeError || err instanceof TimingError) throw new UsageError(err.message);
      throw err;
    }
  };
  let r = sim(allEvents ? {} : { eventKinds: LEDGER_EVENT_KINDS });
  if (!allEvents && !o.json && r.steps <= 40) r = sim({});
  return { r, share, rows };
}

/**
 * The recorder of the phase-tracking table `--phase-table` (or the example's own) asks for, with
 * its variable's name: `make` gives a new one for each simulation (null: no table).
 */
function phaseTableFor(target: string, program: Program, spec: string | undefined): { make: () => PhaseRecorder | null; variable: string; warps: string[]; empty: string } {
  const ex = findExample(target);
  const ptSpec = spec ?? (ex?.phaseTable ? `${ex.phaseTable.role}:${ex.phaseTable.barrier}:${ex.phaseTable.variable}` : undefined);
  if (ptSpec === undefined) return { make: () => null, variable: 'phase_tma', warps: [], empty: '' };
  const parts = ptSpec.split(':');
  const [role, barrier, variable] = parts;
  if (parts.length !== 3 || !role || !barrier || !variable) throw new UsageError(`--phase-table expects ROLE:BARRIER:VARIABLE, got '${echo(ptSpec)}'`);
  const make = () => {
    try {
      return phaseRecorder(program, role, barrier, variable);
    } catch (err) {
      // The library's message names itself (`phaseTable: …`); the flag is named instead. Its lists of names may be long: not cut.
      throw new UsageError(`--phase-table: ${(err as Error).message.replace(/^phaseTable: /, '')}`);
    }
  };
  const { warps } = make(); // the role, barrier and variable checked before the simulation
  return { make, variable, warps, empty: `--phase-table: role '${echo(role)}' never passed a parity wait on barrier array '${echo(barrier)}'` };
}

/** One `mbsim run` of `target`; returns the exit code. */
export async function runVerb(target: string, o: RunOpts, io: IO, started: number): Promise<number> {
  const plan = await planRun(target, o, io, started);
  const { program, timing } = plan;
  const pt = phaseTableFor(target, program, o.phaseTable);
  const { r, share, rows } = simulateRun(plan, o, started, pt.make);
  // A run that stopped at a parameter without a value is the input's error (exit 2, one line), not a trap to report.
  const missing = runMissingParams(program, r);
  if (missing) throw missing;
  const events = r.events ?? [];
  if (rows && rows.length === 0 && r.verdict !== 'incomplete') throw new UsageError(pt.empty);
  // The report is built from the records within the time the simulation left (src/cli/budget.ts).
  const budget = outputBudget(o.maxMemory * 1048576, o.timeout !== undefined ? started + o.timeout * 1000 : Infinity);
  const ledgerCut = { stop: budget.builder(), omitted: 0 };
  const ledger = buildLedger(program, events, ledgerCut);
  const loopCut = { stop: budget.builder(), omitted: 0 };
  const loop = loopSummary(r, plan.gridScale, loopCut);
  const cut = ledgerCut.omitted || loopCut.omitted ? { by: budget.stoppedBy() ?? '--timeout', ledgerEvents: ledgerCut.omitted, loopEvents: loopCut.omitted } : null;
  let traceCut = 0;
  if (o.trace) {
    // Built within the budget too: past BUILD_AT of --max-memory the rest of the records is left out.
    const built = { stop: budget.builder(), omitted: 0 };
    const trace = buildTrace(program, r.spans!, events, timing.clockMHz.value, built);
    const js = budget.stream();
    await writeOutput(o.trace, js.chunks(trace, () => budget.trailer(js.cut + built.omitted)), io, fifoWait(o.timeout, started));
    traceCut = js.cut + built.omitted;
  }
  // A report cut by a bound (the trace, the hang's explanation, the text) is incomplete: exit 3.
  const code = traceCut || cut || r.hang?.unexplained ? 3 : r.verdict === 'ok' ? 0 : r.verdict === 'incomplete' ? 3 : 1;
  const report: RunReport = { target, o, program, timing, r, events, ledger, loop, table: rows, ptVar: pt.variable, ptWarps: pt.warps, cut, activeSms: plan.activeSms, omit: plan.omit, budget, share, traceCut };
  if (o.json) return (await writeRunJson(report, io)) ? 3 : code;
  return printRunText(report, io) ? 3 : code;
}
