/**
 * `mbsim check`: exhaustive exploration of every schedule of a kernel's agents and asynchronous
 * completions, with hazards (hang, race, phase-alias, tx-mismatch, inflight-at-exit and every
 * diagnostic code of the model) and their shortest traces. See docs/CHECK.md.
 */
import type { Program } from '../machine/program.js';
import { check, type CheckOptions, type CheckResult } from './check.js';
import { DEFAULT_BOUNDS as EXPLORE_BOUNDS, type Progress } from './explore.js';
import { checkJson, checkSarif, renderCheck, NO_PAINT, type CheckPaint, type SarifOptions } from './report.js';
import { renderShort } from './short.js';
import { hazardTrace } from './trace.js';
import { sweepCombinations, type SweepRange } from './sweep.js';

export { check, replay, type CheckOptions, type CheckResult, type Hazard, type TraceStep, type BarrierSnapshot } from './check.js';
export { checkJson, checkSarif, renderCheck, ledgerLines, type CheckPaint, type SarifOptions } from './report.js';
export { renderShort, shortLine } from './short.js';
export { happensBefore, type HbAccess, type HbRace } from './hb.js';
export { explore, type ExploreOptions, type Progress } from './explore.js';
export { hazardTrace } from './trace.js';
export { checkAllTrips, TripsScopeError, HUGE_TRIPS, type TripsOptions, type TripsInfo, type TripsResult } from './trips.js';
export type { CheckProgressBar } from './progress-bar.js';
import type { CheckProgressBar } from './progress-bar.js';
export { staticChecks } from './static.js';
export { HAZARD_TEXT, HAZARD_FIX } from './kinds.js';
export { MAX_SWEEP_POINTS, parseSweep, sweepCombinations, type SweepRange } from './sweep.js';

/** Options the CLI passes to {@link runCheckCli}. */
export interface CheckCliOptions {
  json?: boolean;
  /** Write a SARIF 2.1.0 log to this file. */
  sarif?: string;
  maxStates?: number;
  timeoutMs?: number;
  maxMemoryMb?: number;
  /** Keep exploring after the first error (all hazards, not only the shortest). */
  all?: boolean;
  /** Strict warnings (cross-proxy WAR without fence.proxy.async). */
  strict?: boolean;
  /** Worker threads of the search (default 1). */
  workers?: number;
  /** Which reductions the search uses (default `all`; `none` confirms a surprising verdict with the plain search). */
  reduce?: Reduce;
  /** False: no symmetry between the CTAs of a cluster (`--no-cta-symmetry`). */
  ctaSymmetry?: boolean;
  /** False: no random runs beside a large search (`--no-random-runs`; ExploreOptions.randomRuns). */
  randomRuns?: boolean;
  /** Write the first hazard's counterexample as a Perfetto trace to this file. */
  trace?: string;
  /** `text` (default: the report with traces) or `short` (one line per finding, src/check/short.ts). */
  format?: 'text' | 'short';
  /** Text report: print the traces of this many findings (default 3); the others without. */
  maxTraces?: number;
  /** Print no report and no progress bar: the exit code (and any --sarif / --trace file) carries the result. */
  quiet?: boolean;
  /** What the SARIF log says about the tool (version, repository address). */
  sarifInfo?: SarifOptions;
}

/** The reductions `--reduce` chooses: partial-order reduction, symmetry, both (default) or none. */
export type Reduce = 'none' | 'por' | 'symmetry' | 'all';
/** Traces the text report prints by default (`--max-traces`). */
export const DEFAULT_MAX_TRACES = 3;

/** What the progress bar needs of its stream (a Node `tty.WriteStream` such as `process.stderr` has it). */
export interface ProgressStream {
  write(s: string): boolean;
  /** True on a terminal: the bar is drawn only then. */
  isTTY?: boolean;
  /** Width in columns (80 when unknown). */
  columns?: number;
}

/** Where the CLI writes. */
export interface CheckIO {
  out(s: string): void;
  err(s: string): void;
  /** Colors in the report. */
  color: boolean;
  /**
   * Where the progress bar is drawn (the CLI passes `process.stderr`). There is no bar unless
   * its `isTTY` is true, nor with `--json`; the bar is cleared before the report is written.
   */
  progress?: ProgressStream;
  /**
   * Writes an output file (`sarif`, `trace`); the CLI passes its safe writer (src/cli/output.ts:
   * no clobbered links or FIFOs, no temporary file left, a one-line error for a bad path). Needed
   * only when `sarif` or `trace` is asked for.
   */
  writeFile?(path: string, data: string): Promise<void>;
  /** The colors of the report (default: picocolors when `color` is on). */
  paint?: CheckPaint;
  /**
   * Writes a `--json` document (default: `out(JSON.stringify(value))`); the CLI writes it in chunks,
   * so a document larger than a string may hold (a sweep's rows, hundreds of traces) still goes out,
   * and waits for its output to drain between chunks (a promise, awaited).
   */
  outJson?(value: unknown): void | Promise<void>;
}

async function writeJson(io: CheckIO, value: unknown): Promise<void> {
  if (io.outJson) await io.outJson(value);
  else io.out(JSON.stringify(value));
}

async function colors(on: boolean, given?: CheckPaint): Promise<CheckPaint> {
  if (!on) return NO_PAINT;
  if (given) return given;
  const pc = (await import('picocolors')).default;
  return { bold: pc.bold, dim: pc.dim, red: pc.red, green: pc.green, yellow: pc.yellow, cyan: pc.cyan };
}

/** Exit code of a result: 0 ok (warnings allowed), 1 an error hazard, 3 incomplete. */
export function exitCode(r: CheckResult): number {
  if (r.hazards.length) return 1;
  return r.verdict === 'incomplete' ? 3 : 0;
}

/** The checker options a CLI option set asks for (bounds in the CLI's units: ms, MB). */
function checkOptions(opts: CheckCliOptions): CheckOptions {
  const co: CheckOptions = {};
  if (opts.maxStates !== undefined) co.maxStates = opts.maxStates;
  // No time left (loading took it all) is the smallest bound check() takes, 1 ms: stopped at once.
  if (opts.timeoutMs !== undefined) co.timeout = Math.max(1, opts.timeoutMs);
  if (opts.maxMemoryMb !== undefined) co.maxMemory = opts.maxMemoryMb * 1024 * 1024;
  if (opts.all) co.all = true;
  if (opts.strict) co.strict = true;
  if (opts.workers !== undefined && opts.workers > 1) co.workers = opts.workers;
  const reduce = opts.reduce ?? 'all';
  if (reduce === 'none' || reduce === 'symmetry') co.por = false;
  if (reduce === 'none' || reduce === 'por') co.symmetry = false;
  if (opts.ctaSymmetry === false) co.ctaSymmetry = false;
  if (opts.randomRuns === false) co.randomRuns = false;
  return co;
}

/** The bounds a search runs under; the progress bar shows how close it is to the nearest. */
export interface SearchBounds {
  maxStates: number;
  timeoutMs: number;
  /** Bytes. */
  maxMemory: number;
}

/** The defaults of {@link CheckOptions} (`maxStates`, `timeout`, `maxMemory`; applied in src/check/explore.ts). */
const DEFAULT_BOUNDS: SearchBounds = EXPLORE_BOUNDS;

/** The bounds a CLI option set runs the search under (the defaults where a flag is absent). */
export function searchBounds(opts: CheckCliOptions): SearchBounds {
  return {
    maxStates: opts.maxStates ?? DEFAULT_BOUNDS.maxStates,
    timeoutMs: opts.timeoutMs ?? DEFAULT_BOUNDS.timeoutMs,
    maxMemory: opts.maxMemoryMb !== undefined ? opts.maxMemoryMb * 1024 * 1024 : DEFAULT_BOUNDS.maxMemory,
  };
}

/**
 * How far the search is toward its nearest bound: the largest of states / `--max-states`,
 * elapsed / `--timeout` and memory / `--max-memory` (0..1, clamped), and that bound's flag.
 * At 1 the search stops with verdict `incomplete`.
 */
export function boundFraction(p: Progress, b: SearchBounds): { fraction: number; bound: '--max-states' | '--timeout' | '--max-memory' } {
  const cands = [
    { fraction: p.states / b.maxStates, bound: '--max-states' as const },
    { fraction: p.elapsedMs / b.timeoutMs, bound: '--timeout' as const },
    { fraction: p.memory / b.maxMemory, bound: '--max-memory' as const },
  ];
  const best = cands.reduce((x, y) => (y.fraction > x.fraction ? y : x));
  return { fraction: Math.min(1, Math.max(0, Number.isFinite(best.fraction) ? best.fraction : 1)), bound: best.bound };
}

const num = (n: number) => Math.round(n).toLocaleString('en-US');

function elapsedText(ms: number): string {
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.floor(ms / 1000);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

/** Columns the figures after the bar may take before the bar narrows below 30 cells. */
const FIGURES_ROOM = 80;

/**
 * One line of the progress bar, at most `width - 1` columns: an optional label (the sweep's
 * combination), the bar and percentage toward the nearest bound, then states, states/s, frontier,
 * memory (MiB) and elapsed time. The bar's width (10 to 30 cells) depends on `width` only, so it
 * does not jump as the figures grow; when the line is too narrow, whole figures go first
 * (frontier, memory, elapsed, states/s; never the one whose bound the bar measures), then the bar,
 * and only then is the text cut.
 */
export function formatProgress(p: Progress, bounds: SearchBounds, width: number, label = ''): string {
  const { fraction, bound } = boundFraction(p, bounds);
  const rate = p.elapsedMs > 0 ? (p.states / p.elapsedMs) * 1000 : 0;
  const pct = `${String(Math.floor(fraction * 100)).padStart(3)}% of ${bound}`;
  const fields: [key: string, text: string][] = [
    ['states', `${num(p.states)} states`],
    ['rate', `${num(rate)} states/s`],
    ['frontier', `frontier ${num(p.frontier)}`],
    ['memory', `${(p.memory / 1048576).toLocaleString('en-US', { minimumFractionDigits: 1, maximumFractionDigits: 1 })} MiB`],
    ['elapsed', elapsedText(p.elapsedMs)],
  ];
  const binding = bound === '--timeout' ? 'elapsed' : bound === '--max-memory' ? 'memory' : 'states';
  const dropOrder = ['frontier', 'memory', 'elapsed', 'rate'].filter((k) => k !== binding);
  const max = width - 1;
  const head = label ? `${label}  ` : '';
  const cells = Math.max(10, Math.min(30, max - head.length - 3 - FIGURES_ROOM));
  const full = Math.round(fraction * cells);
  const gauge = `[${'\u2588'.repeat(full)}${'\u2591'.repeat(cells - full)}] `;
  let shown = fields;
  for (;;) {
    const text = `${pct}  ${shown.map(([, t]) => t).join('  ')}`;
    if (head.length + gauge.length + text.length <= max) return `${head}${gauge}${text}`;
    const drop = dropOrder.find((k) => shown.some(([key]) => key === k));
    if (drop === undefined) return `${head}${text}`.slice(0, Math.max(0, max));
    shown = shown.filter(([key]) => key !== drop);
  }
}

/** The progress bar a run gets (src/check/progress-bar.ts): one on a TTY `io.progress` unless `--json`, else null. */
async function progressBar(opts: CheckCliOptions, io: CheckIO): Promise<CheckProgressBar | null> {
  if (opts.json || opts.quiet || !io.progress || io.progress.isTTY !== true) return null;
  // Loaded only for a bar on a terminal: cli-progress and its text-width tables cost start time.
  const { CheckProgressBar: Bar } = await import('./progress-bar.js');
  return new Bar(io.progress, searchBounds(opts));
}

/**
 * Runs the checker for the CLI: text report (or `--json`) to `io.out`, optional SARIF file, and
 * a progress bar on `io.progress` while the search runs when that is a terminal and not `--json`
 * (cleared before the report). Returns the exit code: 0 ok, 1 hazard, 3 incomplete. `run`: the
 * check itself (default {@link check} of `program`; the all-trip-counts check passes its own, whose
 * result's program is the kernel with the trip count of its first finding).
 */
export async function runCheckCli(program: Program, opts: CheckCliOptions, io: CheckIO, run: (co: CheckOptions) => CheckResult = (co) => check(program, co)): Promise<number> {
  const co = checkOptions(opts);
  const bar = await progressBar(opts, io);
  let r: CheckResult;
  if (bar) {
    co.onProgress = bar.update;
    bar.start();
    try {
      r = run(co);
      bar.finish(r);
    } finally {
      bar.stop();
    }
  } else r = run(co);
  program = r.program;
  if (opts.sarif) await writeFile(io, opts.sarif, `${JSON.stringify(checkSarif(r, opts.sarifInfo), null, 2)}\n`);
  let traced: string | null = null;
  if (opts.trace) {
    const h = r.hazards[0] ?? r.warnings.find((w) => !w.static);
    if (h) {
      await writeFile(io, opts.trace, JSON.stringify(hazardTrace(program, h)));
      traced = `trace of ${h.severity === 'error' ? h.kind.toUpperCase() : `warning ${h.kind}`} (${h.trace.length} steps) written to ${opts.trace} (open it in https://ui.perfetto.dev)`;
    } else traced = `no counterexample: ${opts.trace} not written`;
  }
  if (opts.quiet) return exitCode(r);
  if (opts.json) await writeJson(io, checkJson(r));
  else if (opts.format === 'short') io.out(renderShort(r));
  else {
    io.out(renderCheck(r, await colors(io.color, io.paint), opts.maxTraces ?? DEFAULT_MAX_TRACES));
    if (traced) io.out(traced);
  }
  return exitCode(r);
}

function writeFile(io: CheckIO, path: string, data: string): Promise<void> {
  if (!io.writeFile) throw new Error('runCheckCli: io.writeFile is needed to write --sarif or --trace');
  return io.writeFile(path, data);
}

/**
 * When a sweep started at `now` (ms since the epoch) must end: `--timeout` bounds the whole sweep
 * as it bounds one check (`opts.timeoutMs`, the time the command has left), and without it the
 * default timeout (60 s) does, so `--timeout 60` and no flag mean the same.
 */
export function sweepDeadline(opts: Pick<CheckCliOptions, 'timeoutMs'>, now: number): number {
  return now + (opts.timeoutMs ?? DEFAULT_BOUNDS.timeoutMs);
}

/** Bad input a sweep row reports: its message and, when it has one, its place (file as given, line and column 1-based). */
export interface BadInput { message: string; loc?: { file: string; line: number; col: number } }

/**
 * `--sweep`: checks every combination of the ranges and prints a table of verdicts (or, with
 * `json`, one `mbsim.check-sweep/1` document). `build` instantiates the kernel with one
 * combination, or throws (bad input for that combination: the row says why, exit code 2).
 * While it runs, a progress bar labelled with the combination is drawn on `io.progress` when that
 * is a terminal and not `json`; it is cleared before the table.
 * `badInput`, when given, says of a combination's check result whether it shows bad input rather
 * than a finding (a PTX kernel parameter without a value that a schedule reached: src/cli/missing-param.ts):
 * its message (the row shows the first line) and place, and the row is `bad-input` (exit code 2)
 * with it; null: a finding as usual. A bad-input row's place (`loc`, from `badInput` or the error
 * `build` throws) is its `file`, `line`, `col` fields in JSON.
 * `interrupted`, when given, is asked before each combination after the first whether the sweep
 * was interrupted (the CLI's Ctrl-C); once it says so, that row and the rest are `incomplete`,
 * `not checked: interrupted`, and the table of what was finished is printed.
 * Exit code: the worst row, hazard (1) before bad input (2) before incomplete (3) before ok (0).
 */
export async function runCheckSweepCli(
  kernelName: string, ranges: SweepRange[], build: (params: Record<string, number>) => Program, opts: CheckCliOptions, io: CheckIO,
  badInput?: (r: CheckResult) => BadInput | null, interrupted?: () => Promise<boolean>,
): Promise<number> {
  const combos = sweepCombinations(ranges);
  const co = checkOptions(opts);
  const paint = await colors(io.color, io.paint);
  const rows: { params: Record<string, number>; verdict: string; code: number; states: number; ms: number; what: string; result?: CheckResult; loc?: BadInput['loc'] }[] = [];
  const bar = await progressBar(opts, io);
  if (bar) co.onProgress = bar.update;
  // --timeout bounds the whole sweep: each combination gets what is left; none left, it is not checked.
  const deadline = sweepDeadline(opts, Date.now());
  let stopped = false;
  try {
    for (const [i, params] of combos.entries()) {
      if (stopped || (i > 0 && interrupted && (await interrupted()))) {
        stopped = true;
        rows.push({ params, verdict: 'incomplete', code: 3, states: 0, ms: 0, what: 'not checked: interrupted' });
        continue;
      }
      const left = deadline - Date.now();
      if (left <= 0) {
        rows.push({ params, verdict: 'incomplete', code: 3, states: 0, ms: 0, what: 'not checked: --timeout ran out' });
        continue;
      }
      co.timeout = left;
      let prog: Program;
      try {
        prog = build(params);
      } catch (err) {
        const msg = ((err as Error).message ?? String(err)).replace(/^mbsim: error: /, '').split('\n')[0]!;
        const loc = (err as { loc?: BadInput['loc'] }).loc;
        rows.push({ params, verdict: 'bad-input', code: 2, states: 0, ms: 0, what: msg, ...(loc ? { loc } : {}) });
        continue;
      }
      bar?.start(`${ranges.map((x) => `${x.name}=${params[x.name]}`).join(' ')} (${i + 1}/${combos.length})`);
      const r = check(prog, co);
      bar?.finish(r);
      const bad = badInput?.(r);
      if (bad) {
        rows.push({ params, verdict: 'bad-input', code: 2, states: r.coverage.states, ms: r.coverage.elapsedMs, what: bad.message.split('\n')[0]!, ...(bad.loc ? { loc: bad.loc } : {}) });
        continue;
      }
      const h = r.hazards[0];
      const what = h ? `${h.subject ? `${h.subject.name}: ` : ''}${h.message}` : r.verdict === 'incomplete' ? `stopped by ${r.stoppedBy}` : r.warnings.length ? `${r.warnings.length} warning(s): ${[...new Set(r.warnings.map((w) => w.kind))].join(', ')}` : '';
      rows.push({ params, verdict: r.verdict, code: exitCode(r), states: r.coverage.states, ms: r.coverage.elapsedMs, what, result: r });
    }
  } finally {
    bar?.stop();
  }
  const rank = (c: number) => (c === 1 ? 3 : c === 2 ? 2 : c === 3 ? 1 : 0);
  const worst = rows.reduce((w, r) => (rank(r.code) > rank(w) ? r.code : w), 0);
  if (opts.json) {
    await writeJson(io, {
      schema: 'mbsim.check-sweep/1', kernel: kernelName, ranges, exit: worst,
      rows: rows.map((r) => (r.result ? { params: r.params, verdict: r.verdict, exit: r.code, result: checkJson(r.result) } : { params: r.params, verdict: r.verdict, exit: r.code, error: r.what, ...r.loc })),
    });
    return worst;
  }
  const names = ranges.map((r) => r.name);
  const head = [...names, 'verdict', 'states', 'first hazard'];
  const cells = rows.map((r) => [...names.map((n) => String(r.params[n])), r.verdict, r.states.toLocaleString('en-US'), r.what]);
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: string[], pv?: (x: string) => string) =>
    c.map((x, i) => (i === c.length - 1 ? x : i === names.length && pv ? pv(x) + ' '.repeat(widths[i]! - x.length) : x.padEnd(widths[i]!))).join('  ').trimEnd();
  const out: string[] = [];
  out.push(`${paint.bold('mbsim check')} ${kernelName}  sweep ${ranges.map((r) => `${r.name}=${r.from}..${r.to}`).join(' × ')} (${combos.length} combination${combos.length === 1 ? '' : 's'})`);
  out.push(paint.bold(line(head)));
  for (let i = 0; i < rows.length; i++) {
    const v = rows[i]!.verdict;
    out.push(line(cells[i]!, v === 'ok' ? paint.green : v === 'incomplete' ? paint.yellow : paint.red));
  }
  const counts = new Map<string, number>();
  for (const r of rows) counts.set(r.verdict, (counts.get(r.verdict) ?? 0) + 1);
  const ms = rows.reduce((n, r) => n + r.ms, 0);
  // An interrupted sweep's exit code is the signal's (the CLI's 130 / 143), not its rows'.
  out.push(`${[...counts].map(([v, n]) => `${n} ${v}`).join(', ')}; ${stopped ? 'interrupted' : `exit ${worst}`}`);
  out.push(paint.dim(`${rows.reduce((n, r) => n + r.states, 0).toLocaleString('en-US')} states in ${(ms / 1000).toFixed(2)} s`));
  io.out(`${out.join('\n')}\n`);
  return worst;
}
