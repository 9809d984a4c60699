/**
 * `mbsim check`: explores every schedule (src/check/), one kernel, a `--sweep` of parameter
 * ranges, or the same file again on every save (`--watch`, src/cli/watch.ts). Exit codes: 0 ok,
 * 1 hazard, 2 bad input, 3 incomplete.
 */
import { echo, refuseMemoryBelowFootprint, workerCount } from './args.js';
import { DEFAULT_MAX_MEMORY_MB } from './parse-budget.js';
import { fifoWait, fullCollection } from './budget.js';
import { setCollector } from '../machine/governor.js';
import { inputProblem } from './input.js';
import { paintFor, timeLeft, usageText, type IO } from './io.js';
import { JsonStream } from './json-stream.js';
import { examplesDir, explainKernelErrors, instantiateOrExplain, loadKernel, noSuchFile, UsageError } from './load.js';
import { findExample } from '../examples/index.js';
import { join } from 'node:path';
import { inputFiles, interruptOutputs, outputMode, refuseInput, refuseStdout, sameFile, WriteInterrupted, writeOutput } from './output.js';
import { sarifOptions } from './package-info.js';
import type { PtxFlags } from './ptx-flags.js';
import type { CheckResult } from '../check/check.js';
import { checkMissingParams, staticMissingParams } from './missing-param.js';
import type { Interrupt } from './check-thread.js';

/** The most `--sweep` ranges one check takes (a kernel has fewer parameters than this). */
const MAX_SWEEP_RANGES = 64;

/** The options of `mbsim check` as commander parses them. */
interface CheckOpts0 {
  set: Record<string, number>; sweep: string[]; json?: boolean; sarif?: string; trace?: string; maxStates?: number; timeout?: number; maxMemory?: number;
  all?: boolean; strict?: boolean; workers?: number; format: 'text' | 'short' | 'json'; maxTraces?: number; quiet?: boolean; watch?: boolean;
  reduce: 'all' | 'por' | 'symmetry' | 'none';
  /** commander's negation of `--no-cta-symmetry`: false when given. */
  ctaSymmetry?: boolean;
  /** commander's negation of `--no-random-runs`: false when given. */
  randomRuns?: boolean;
  /** `--all-trips NAME`: the trip parameter whose every value the verdict covers. */
  allTrips?: string;
}
/** `mbsim check`'s options with the PTX launch flags. */
export type CheckOpts = CheckOpts0 & PtxFlags;

/** The `--sarif` and `--trace` paths, checked before the search: named, writable, not the kernel file, not one file twice. */
function checkOutputs(o: CheckOpts, kernelFile: string | undefined): void {
  // Two reports into one regular file: the second would silently replace the first.
  if (o.sarif !== undefined && o.trace !== undefined && o.sarif.trim() !== '' && o.trace.trim() !== '' && outputMode(o.sarif) === 'replace' && sameFile(o.sarif, o.trace)) {
    throw new UsageError(`--sarif and --trace both name ${echo(o.trace)}: give each its own file`);
  }
  for (const [flag, file] of [['--sarif', o.sarif], ['--trace', o.trace]] as const) {
    if (file === undefined) continue;
    if (file.trim() === '') throw new UsageError(`${flag} needs a file name`);
    outputMode(file);
    refuseInput(file, inputFiles(kernelFile));
    refuseStdout(flag, file, !o.quiet);
  }
  if (o.sarif !== undefined && o.trace !== undefined && outputMode(o.sarif) === 'stdout' && outputMode(o.trace) === 'stdout') {
    throw new UsageError(`--sarif and --trace both name the standard output: give each its own file`);
  }
}

/** The checker's options for the CLI's flags. */
function checkOptions(o: CheckOpts, io: IO, started: number) {
  const json = o.json || o.format === 'json';
  let workers = o.workers;
  if (workers !== undefined) {
    const w = workerCount(workers);
    if (w.note && !o.quiet) io.err(w.note);
    workers = w.workers;
  }
  return {
    ...(json ? { json: true } : {}),
    ...(o.format === 'short' ? { format: 'short' as const } : {}),
    ...(o.maxTraces !== undefined ? { maxTraces: o.maxTraces } : {}),
    ...(o.quiet ? { quiet: true } : {}),
    sarifInfo: sarifOptions(),
    ...(o.sarif ? { sarif: o.sarif } : {}),
    ...(o.trace ? { trace: o.trace } : {}),
    ...(o.maxStates !== undefined ? { maxStates: o.maxStates } : {}),
    // The timeout counts from the command's start, for one check and for a whole sweep alike.
    ...(o.timeout !== undefined ? { timeoutMs: timeLeft(o.timeout, started) } : {}),
    ...(o.maxMemory !== undefined ? { maxMemoryMb: o.maxMemory } : {}),
    ...(o.all ? { all: true } : {}),
    ...(o.strict ? { strict: true } : {}),
    ...(workers !== undefined && workers > 1 ? { workers } : {}),
    ...(o.reduce !== 'all' ? { reduce: o.reduce } : {}),
    ...(o.ctaSymmetry === false ? { ctaSymmetry: false } : {}),
    ...(o.randomRuns === false ? { randomRuns: false } : {}),
  };
}

/**
 * One `mbsim check` (or `--sweep`) of `target`; returns the exit code. With the process's IO
 * (`io.signals`), SIGINT and SIGTERM stop one check's search with its partial result, exit code
 * 130 / 143 (src/cli/check-thread.ts); a sweep sees them between its rows (the row in progress
 * ends first, the rest are not checked, the table is printed); `--all-trips` leaves them alone.
 */
export async function checkVerb(target: string, o: CheckOpts, io: IO, started = Date.now()): Promise<number> {
  try {
    if (!io.signals || o.allTrips !== undefined) return await checkOne(target, o, io, started, null);
    const { withInterrupt } = await import('./check-thread.js');
    return await withInterrupt(io.err, (it) => checkOne(target, o, io, started, it));
  } catch (err) {
    throw briefFor(o, err);
  }
}

/** `err` as `--format short` prints it: a {@link UsageError}'s one line per problem (`brief`), its code and place kept. */
function briefFor(o: CheckOpts, err: unknown): unknown {
  if (o.format !== 'short' || !(err instanceof UsageError) || err.brief === undefined) return err;
  const short = new UsageError(err.brief);
  if (err.code !== undefined) short.withCode(err.code);
  return err.loc ? short.withLoc(err.loc) : short;
}

/** {@link checkVerb}; `it`: the interrupt that stops its search, or null. */
async function checkOne(target: string, o: CheckOpts, io: IO, started: number, it: Interrupt | null): Promise<number> {
  if (o.quiet && (o.json || o.format !== 'text')) throw new UsageError('--quiet prints nothing; it cannot be combined with --json or --format');
  if (o.json && o.format === 'short') throw new UsageError('--json and --format short ask for two formats of the report: give one (--format json is --json)');
  // The check's governor collects garbage before it reads memory near --max-memory (the analysis
  // and the successors of a large launch leave much of it). Not `run`'s: its records are all held.
  setCollector(() => fullCollection()?.());
  // --format short: a sketch's errors one line each, as its findings would be (checkVerb).
  const loaded = await loadKernel(target, o, true, o.quiet ? undefined : io.err, { maxMemoryMb: o.maxMemory, timeoutS: o.timeout ?? 60, started });
  checkOutputs(o, loaded.kernel.file);
  refuseMemoryBelowFootprint(o.maxMemory, process.memoryUsage.rss(), 1, 'the check', DEFAULT_MAX_MEMORY_MB);
  const { runCheckCli, runCheckSweepCli, parseSweep } = await import('../check/index.js');
  const opts = checkOptions(o, io, started);
  const cio = {
    out: io.out, err: io.err, color: io.color, paint: paintFor(io),
    writeFile: (path: string, data: string) => writeOutput(path, data, io, fifoWait(o.timeout, started)),
    outJson: async (value: unknown) => {
      for (const chunk of new JsonStream().chunks(value)) {
        io.out(chunk);
        if (io.drain) await io.drain();
      }
    },
    ...(io.progress ? { progress: io.progress } : {}),
  };
  if (o.allTrips !== undefined) {
    if (o.sweep.length) throw new UsageError('--all-trips cannot be combined with --sweep: the trip parameter takes every value already (sweep the others with --set, one at a time)');
    if (o.workers !== undefined && o.workers > 1) throw new UsageError('--all-trips runs one worker: drop --workers');
    if (Object.hasOwn(o.set, o.allTrips)) throw new UsageError(`--all-trips ${echo(o.allTrips)} and --set ${echo(o.allTrips)}: the trip parameter takes every value; set the others only`);
  }
  if (o.sweep.length) {
    if (o.sarif || o.trace) throw new UsageError('--sweep cannot be combined with --sarif or --trace (check one combination with --set)');
    if (o.sweep.length > MAX_SWEEP_RANGES) throw new UsageError(`--sweep is given ${o.sweep.length.toLocaleString('en-US')} times; at most ${MAX_SWEEP_RANGES} ranges (one per parameter)`);
    const ranges = o.sweep.map((spec) => {
      try {
        return parseSweep(spec);
      } catch (err) {
        throw new UsageError((err as Error).message);
      }
    });
    const names = ranges.map((r) => r.name);
    const dup = names.find((n, i) => names.indexOf(n) !== i);
    if (dup) throw new UsageError(`--sweep ${echo(dup)} is given twice`);
    const both = names.find((n) => Object.hasOwn(o.set, n));
    if (both !== undefined) throw new UsageError(`--sweep ${echo(both)} and --set ${echo(both)} both give ${echo(both)}: sweep it or set it, not both`);
    const combos = ranges.reduce((n, r) => n * (r.to - r.from + 1), 1);
    if (combos > 10_000) throw new UsageError(`--sweep: ${combos > Number.MAX_SAFE_INTEGER ? `more than ${Number.MAX_SAFE_INTEGER.toLocaleString('en-US')}` : combos.toLocaleString('en-US')} combinations (${ranges.map((r) => (r.to - r.from + 1).toLocaleString('en-US')).join(' × ')}); at most 10,000`);
    // An unknown name is bad input for every combination: report it once.
    const unknown = names.find((n) => !loaded.kernel.params.some((d) => d.name === n));
    if (unknown !== undefined) instantiateOrExplain(loaded.kernel, { ...o.set, [unknown]: 0 }, loaded.origin);
    // A combination whose check reaches a parameter without a value is bad input: its row says which (exit 2).
    const badInput = (r: CheckResult) => {
      const err = checkMissingParams(r);
      return err ? { message: err.message, ...(err.loc ? { loc: err.loc } : {}) } : null;
    };
    const build = (params: Record<string, number>) => {
      const p = instantiateOrExplain(loaded.kernel, { ...o.set, ...params }, loaded.origin);
      const atStart = staticMissingParams(p);
      if (atStart) throw atStart;
      return p;
    };
    // Ctrl-C: seen between rows (a row's search runs on this thread); the rows finished are printed (exit 130).
    const { turnLoop } = await import('./check-thread.js');
    const interrupted = it ? async () => (await turnLoop(), it.signal !== null) : undefined;
    return runCheckSweepCli(loaded.kernel.name, ranges, build, opts, cio, badInput, interrupted);
  }
  const prog = instantiateOrExplain(loaded.kernel, o.set, loaded.origin);
  const atStart = staticMissingParams(prog);
  if (atStart) throw atStart;
  // A check that reaches a parameter without a value is the input's error (exit 2, one line), decided from its own result.
  const refuse = (r: CheckResult): CheckResult => {
    const err = checkMissingParams(r);
    if (err) throw err;
    return r;
  };
  if (o.allTrips !== undefined) {
    const param = o.allTrips;
    const { checkAllTrips } = await import('../check/index.js');
    return runCheckCli(prog, opts, cio, (co) => refuse(explainKernelErrors(loaded.kernel, loaded.origin, () => checkAllTrips(loaded.kernel, o.set, { ...co, param }))));
  }
  const { check, searchBounds } = await import('../check/index.js');
  const run = (co: Parameters<typeof check>[1]) => refuse(check(prog, co));
  if (!it) return runCheckCli(prog, opts, cio, run);
  // Ctrl-C stops the search with what it explored (the check moves to a thread when it runs long).
  const { checkInterruptible } = await import('./check-thread.js');
  return checkInterruptible(prog, opts, cio, run, runCheckCli, searchBounds(opts).timeoutMs, it);
}

/**
 * `check --watch`: the first check, then one after every save. Bad input in a check is printed
 * and the watch goes on; a check whose output file was being written when Ctrl-C came ends
 * without a report of its own (the file is left as it was) and the watch stops with the code of
 * the last check that completed. `check` is {@link checkVerb} (another function in tests).
 */
export async function watchVerb(target: string, o: CheckOpts, io: IO, check: typeof checkVerb = checkVerb): Promise<number> {
  const why = inputProblem(target);
  if (why === 'no such file') {
    // A built-in example is no file to watch: name its sketch, which a copy can start from. (No
    // dynamic import of a node: module here: the bundle runs from a code cache without them.)
    const ex = findExample(target);
    if (ex) {
      throw new UsageError(`--watch needs a sketch file: '${echo(target)}' is a built-in example; copy its sketch (${join(examplesDir(), `${ex.name}.mbk`)}) and watch the copy`);
    }
    throw new UsageError(noSuchFile(target));
  }
  if (why) throw new UsageError(`--watch needs a sketch file: ${echo(target)}: ${why}`);
  if (o.sweep.length) throw new UsageError('--watch cannot be combined with --sweep');
  const { watchFile } = await import('./watch.js');
  return watchFile(target, {
    out: io.out,
    // A PTX kernel's launch file beside it is an input too (its creation and removal as well).
    inputs: inputFiles(target).flatMap(([f]) => (f !== undefined && f !== target ? [f] : [])),
    // Ctrl-C: the output file being written (or about to be) is left as it was.
    onStop: interruptOutputs,
    // The watch handles the signals itself (above): each check leaves them alone.
    check: () => check(target, o, { ...io, signals: false }).catch((err: unknown) => {
      if (err instanceof WriteInterrupted) return null;
      if (!(err instanceof UsageError)) throw err;
      io.err(usageText(err));
      return 2;
    }),
  });
}
