/**
 * The `mbsim` command line. Thin: it parses flags (commander), calls the library and renders.
 * Exit codes: 0 ok, 1 a hazard was found (hang, trap, undefined behaviour), 2 bad input.
 */
import { Command, CommanderError, Option } from 'commander';
import { EXAMPLES, findExample } from '../examples/index.js';
import { DecodeError, explainWord } from '../report/decode.js';
import { buildLedger } from '../report/ledger.js';
import { loopSummary, renderLoopSummary } from '../report/loop.js';
import { phaseTable, renderPhaseTable } from '../report/phases.js';
import { locText, renderEventLog, renderLedger, renderSummary, renderTimeline, PLAIN, type Paint } from '../report/text.js';
import { buildTrace } from '../report/trace.js';
import { LEDGER_EVENT_KINDS, simulate, SimTimeError, type SimOptions } from '../sim/simulate.js';
import { TimingError } from '../sim/timing.js';
import { instantiateOrExplain, loadKernel, parseSet, UsageError } from './load.js';
import { outputMode, refuseInput, sameFile, writeOutput } from './output.js';
import { markPaint, safeIO } from './terminal.js';
import type { ProgressStream } from '../check/index.js';
import { packageInfo } from './package-info.js';
import { ECHO_MAX, echo, parseCountArg, parseIntArg, parsePositiveArg, parseSecondsArg, workerCount } from './args.js';
import { inputProblem, loadTiming } from './input.js';
import { fifoWait, outputBudget } from './budget.js';
import { JsonStream } from './json-stream.js';

/** Where the CLI writes. */
export interface IO {
  out(s: string): void;
  err(s: string): void;
  /** Colors on? */
  color: boolean;
  /** `check`'s progress bar stream (stderr); drawn only when its `isTTY` is true. */
  progress?: ProgressStream;
}

const nodeIO = (): IO => ({
  out: (s) => process.stdout.write(s.endsWith('\n') ? s : `${s}\n`),
  // A line starting with \r redraws a status line in place (progress); others end with a newline.
  err: (s) => process.stderr.write(s.startsWith('\r') || s.endsWith('\n') ? s : `${s}\n`),
  color: !!process.stdout.isTTY && !process.env.NO_COLOR,
  // A terminal that cannot move the cursor gets no bar.
  ...(process.env.TERM === 'dumb' ? {} : { progress: process.stderr }),
});

/** The CLI's colors: markers that only its output boundary turns into SGR sequences (src/cli/terminal.ts). */
function paintFor(io: IO): Paint {
  return io.color ? markPaint : PLAIN;
}

/** The most `--sweep` ranges one check takes (a kernel has fewer parameters than this). */
const MAX_SWEEP_RANGES = 64;

/** Memory (bytes) one line of `run --events` takes while the log is built. */
const EVENT_LINE_BYTES = 600;

/** Share of `run --max-memory` the simulation's records may fill (the report built from them needs the rest). */
const RUN_MEMORY_SHARE = 0.5;
/** The share when a `--trace` or the `--events` log is built too (each about as large again as the records). */
const RUN_MEMORY_SHARE_TRACED = 0.3;

interface RunOpts {
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

/**
 * Milliseconds of `--timeout SECONDS` left for the work itself: the timeout counts from the
 * command's start (`started`, ms since the epoch; the process's start for the real CLI), so loading
 * and instantiating the kernel are in it.
 */
function timeLeft(seconds: number, started: number): number {
  return Math.max(0, seconds * 1000 - (Date.now() - started));
}

async function runVerb(target: string, o: RunOpts, io: IO, started: number): Promise<number> {
  if (o.trace !== undefined && o.trace.trim() === '') throw new UsageError('--trace needs a file name');
  if (o.trace !== undefined) outputMode(o.trace);
  const loaded = await loadKernel(target);
  if (o.trace !== undefined) refuseInput(o.trace, loaded.kernel.file);
  const program = instantiateOrExplain(loaded.kernel, o.set, loaded.origin);
  const timing = loadTiming(o.timing);
  const omit = parseOmit(o.omit);
  if (omit.size && !o.json) throw new UsageError('--omit applies to --json output');
  if (o.grid !== undefined && o.activeSms !== undefined) throw new UsageError('give --grid or --active-sms, not both');
  if (o.grid !== undefined && o.grid < program.ctas) throw new UsageError(`--grid ${o.grid} is smaller than the ${program.ctas} CTA(s) the kernel simulates`);
  if (o.activeSms !== undefined && o.activeSms > timing.sms.value) throw new UsageError(`--active-sms ${o.activeSms} is more than the GPU's ${timing.sms.value} SMs`);
  // --grid N: the launch has N CTAs like the simulated ones; those on the GPU at once share L2/HBM
  const activeSms = o.activeSms ?? (o.grid !== undefined ? Math.min(o.grid, timing.sms.value) : undefined);
  const gridScale = o.grid !== undefined ? o.grid / program.ctas : activeSms !== undefined ? activeSms / program.ctas : 1;
  // events feed the ledger, the event log and the loop summary; spans the timeline and trace
  const needEvents = !o.json || !omit.has('events') || !omit.has('ledger') || !!o.trace || !!o.phaseTable;
  const needSpans = !o.json || !omit.has('spans') || !!o.trace;
  // The text report without --events needs only the ledger's events (a short run shows its event
  // log: it is simulated again with every event, the same run). The simulation stops at
  // RUN_MEMORY_SHARE of --max-memory: the ledger and timeline built from its records need the rest.
  const allEvents = !!((o.json && !omit.has('events')) || o.trace || o.events || o.phaseTable);
  const share = o.trace || o.events ? RUN_MEMORY_SHARE_TRACED : RUN_MEMORY_SHARE;
  const sim = (opts: Partial<SimOptions>) => {
    try {
      return simulate(program, {
        timing, maxSteps: o.maxSteps, maxMemory: o.maxMemory * 1048576 * share, recordEvents: needEvents, recordSpans: needSpans, ...opts,
        ...(activeSms !== undefined ? { activeSms } : {}),
        ...(o.timeout !== undefined ? { timeoutMs: timeLeft(o.timeout, started) } : {}), ...(o.seed !== undefined ? { seed: o.seed } : {}),
      });
    } catch (err) {
      if (err instanceof SimTimeError || err instanceof TimingError) throw new UsageError(err.message);
      throw err;
    }
  };
  let r = sim(allEvents ? {} : { eventKinds: LEDGER_EVENT_KINDS });
  if (!allEvents && !o.json && r.steps <= 40) r = sim({});
  const events = r.events ?? [];
  const ledger = buildLedger(program, events);
  const loop = loopSummary(r, gridScale);
  const names = (a: number) => (a >= 0 ? program.agents[a]!.name : null);
  const ex = findExample(target);
  const ptSpec = o.phaseTable ?? (ex?.phaseTable ? `${ex.phaseTable.role}:${ex.phaseTable.barrier}:${ex.phaseTable.variable}` : undefined);
  let table: ReturnType<typeof phaseTable> | null = null;
  let ptVar = 'phase_tma';
  if (ptSpec) {
    const parts = ptSpec.split(':');
    const [role, barrier, variable] = parts;
    if (parts.length !== 3 || !role || !barrier || !variable) throw new UsageError(`--phase-table expects ROLE:BARRIER:VARIABLE, got '${echo(ptSpec)}'`);
    try {
      table = phaseTable(program, role, barrier, variable);
    } catch (err) {
      throw new UsageError(`--phase-table: ${echo((err as Error).message)}`);
    }
    if (table.length === 0) throw new UsageError(`--phase-table: role '${echo(role)}' never passed a parity wait on barrier array '${echo(barrier)}'`);
    ptVar = variable;
  }
  if (o.width < 20 || o.width > 1000) throw new UsageError(`--width ${o.width} is outside 20..1000`);
  // The report of a long run is large: written in chunks, cut short (exit 3) past the bounds.
  const budget = outputBudget(o.maxMemory * 1048576, o.timeout !== undefined ? started + o.timeout * 1000 : Infinity);
  let traceCut = 0;
  if (o.trace) {
    const js = budget.stream();
    await writeOutput(o.trace, js.chunks(buildTrace(program, r.spans!, events, timing.clockMHz.value), () => budget.trailer(js.cut)), io, fifoWait(o.timeout, started));
    traceCut = js.cut;
  }
  const code = traceCut ? 3 : r.verdict === 'ok' ? 0 : r.verdict === 'incomplete' ? 3 : 1;
  if (o.json) {
    const js = budget.stream();
    for (const chunk of js.chunks({
      schema: 'mbsim.run/1',
      kernel: program.kernel.name,
      arch: program.kernel.arch,
      params: program.params,
      seed: o.seed ?? null,
      verdict: r.verdict,
      stopped: r.stopped,
      cycles: r.cycles,
      clockMHz: timing.clockMHz.value,
      steps: r.steps,
      eventCount: r.eventCount,
      agents: program.agents.map((a) => ({ id: a.id, name: a.name, role: a.roleName, cta: a.cta, threads: a.threads })),
      stats: r.stats,
      diagnostics: r.diagnostics.map((d) => ({ ...d.diag, t: d.t, agent: names(d.agent), barrier: d.bar >= 0 ? program.barrierName(d.bar) : null, loc: d.loc ?? null })),
      hang: r.hang,
      ...(activeSms !== undefined ? { activeSms } : {}),
      ...(o.grid !== undefined ? { grid: o.grid } : {}),
      loop,
      ...(omit.has('ledger') ? {} : { ledger }),
      phaseTable: table,
      ...(omit.has('spans') ? {} : { spans: r.spans }),
      ...(omit.has('events') ? {} : { events }),
    }, () => budget.trailer(js.cut))) io.out(chunk);
    return js.cut ? 3 : code;
  }
  const paint = paintFor(io);
  const params = Object.entries(program.params).map(([k, v]) => `${k}=${v}`).join(' ');
  io.out(`${paint.bold(`mbsim run ${target}`)}  ${paint.dim(`kernel '${program.kernel.name}' (${program.kernel.arch}, ${program.ctas} CTA${program.ctas > 1 ? 's' : ''})${params ? `  ${params}` : ''}${o.seed !== undefined ? `  seed ${o.seed}` : ''}`)}`);
  if (program.kernel.description) io.out(paint.dim(program.kernel.description));
  io.out('');
  io.out(renderTimeline(r, o.width, paint));
  if (o.events || r.steps <= 40) {
    io.out(`\n${paint.bold('events')}`);
    // The whole log of a long run may not fit in --max-memory (about EVENT_LINE_BYTES per event).
    const fit = budget.room(events.length * EVENT_LINE_BYTES) ? Number.MAX_SAFE_INTEGER : Math.max(200, Math.floor(Math.max(0, o.maxMemory * 1048576 - process.memoryUsage.rss()) / EVENT_LINE_BYTES));
    io.out(renderEventLog(program, events, o.events ? fit : 200));
    if (o.events && fit < events.length) io.out(paint.yellow(`(the event log was cut at ${fit.toLocaleString('en-US')} events to stay under --max-memory ${o.maxMemory}: --json writes every event, in chunks)`));
  }
  io.out(`\n${paint.bold('ledger')}`);
  io.out(renderLedger(ledger, o.events ? Number.MAX_SAFE_INTEGER : 12, r.hang && !o.events ? [...new Set(r.hang.waiters.flatMap((w) => (w.bar !== undefined ? [w.bar] : [])))] : undefined));
  if (table) {
    io.out(`\n${paint.bold('phase tracking')}`);
    io.out(renderPhaseTable(table, ptVar));
  }
  io.out(`\n${paint.bold('summary')}`);
  io.out(renderSummary(r, paint));
  if (loop) io.out(renderLoopSummary(loop, activeSms));
  for (const d of r.diagnostics) {
    const where = d.loc ? `${locText(d.loc)}: ` : '';
    const who = names(d.agent) ?? 'async unit';
    io.out(`${d.diag.severity === 'error' ? paint.red('error') : paint.yellow('warning')}[${d.diag.code}] ${where}${who}: ${d.diag.message}\n  H200: ${d.diag.h200}`);
  }
  if (r.verdict === 'trap' && r.final.trapped) {
    io.out(`\n${paint.red(paint.bold('TRAP'))}: [${r.final.trapped.code}] ${r.final.trapped.message}; the H200 stops the kernel here (sticky unspecified launch failure)`);
  }
  if (r.hang) {
    io.out(`\n${paint.red(paint.bold('HANG'))}: nothing can make progress; ${r.hang.waiters.length} agent(s) blocked forever`);
    for (const w of r.hang.waiters) {
      io.out(`  ${w.name} blocked in ${w.op} (${locText(w.loc)})`);
      if (w.state) io.out(`    ${w.barName}: phase ${w.state.phase}, pending ${w.state.pending}/${w.state.expected}, tx ${w.state.tx}`);
      for (const reason of w.reasons) io.out(`    - ${reason}`);
    }
    if (r.hang.cycle) io.out(`  wait-for cycle: ${r.hang.cycle.join(' → ')}`);
    io.out(paint.dim(`  (this is one timed schedule; \`mbsim check ${target}\` explores every schedule and gives the shortest trace)`));
  }
  if (r.stopped) io.out(paint.yellow(r.stopped));
  if (r.stoppedBy === 'max-memory') io.out(paint.dim(`  (the simulation's records may fill ${share * 100}% of --max-memory ${o.maxMemory}; the ledger and timeline${o.trace ? ', the trace' : ''}${o.events ? ', the event log' : ''} built from them need the rest)`));
  if (o.trace) io.out(paint.dim(`\ntrace written to ${o.trace} (open it in https://ui.perfetto.dev)`));
  if (traceCut) io.out(paint.yellow(`the trace was cut short by ${budget.stoppedBy()}: ${traceCut.toLocaleString('en-US')} of its events left out (raise it, or lower --max-steps)`));
  return code;
}

interface CheckOpts {
  set: Record<string, number>; sweep: string[]; json?: boolean; sarif?: string; trace?: string; maxStates?: number; timeout?: number; maxMemory?: number;
  all?: boolean; strict?: boolean; workers?: number; format: 'text' | 'short' | 'json'; maxTraces?: number; quiet?: boolean; watch?: boolean;
  reduce: 'all' | 'por' | 'symmetry' | 'none';
}

/** One `mbsim check` (or `--sweep`) of `target`; returns the exit code. */
async function checkVerb(target: string, o: CheckOpts, io: IO, started = Date.now()): Promise<number> {
  if (o.quiet && (o.json || o.format !== 'text')) throw new UsageError('--quiet prints nothing; it cannot be combined with --json or --format');
  const json = o.json || o.format === 'json';
  const loaded = await loadKernel(target);
  // Two reports into one regular file: the second would silently replace the first.
  if (o.sarif !== undefined && o.trace !== undefined && o.sarif.trim() !== '' && o.trace.trim() !== '' && outputMode(o.sarif) === 'replace' && sameFile(o.sarif, o.trace)) {
    throw new UsageError(`--sarif and --trace both name ${echo(o.trace)}: give each its own file`);
  }
  for (const [flag, file] of [['--sarif', o.sarif], ['--trace', o.trace]] as const) {
    if (file === undefined) continue;
    if (file.trim() === '') throw new UsageError(`${flag} needs a file name`);
    outputMode(file);
    refuseInput(file, loaded.kernel.file);
  }
  const { runCheckCli, runCheckSweepCli, parseSweep } = await import('../check/index.js');
  let workers = o.workers;
  if (workers !== undefined) {
    const w = workerCount(workers);
    if (w.note && !o.quiet) io.err(w.note);
    workers = w.workers;
  }
  const opts = {
    ...(json ? { json: true } : {}),
    ...(o.format === 'short' ? { format: 'short' as const } : {}),
    ...(o.maxTraces !== undefined ? { maxTraces: o.maxTraces } : {}),
    ...(o.quiet ? { quiet: true } : {}),
    sarifInfo: packageInfo(),
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
  };
  const cio = {
    out: io.out, err: io.err, color: io.color, paint: paintFor(io),
    writeFile: (path: string, data: string) => writeOutput(path, data, io, fifoWait(o.timeout, started)),
    outJson: (value: unknown) => {
      for (const chunk of new JsonStream().chunks(value)) io.out(chunk);
    },
    ...(io.progress ? { progress: io.progress } : {}),
  };
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
    if (combos > 10_000) throw new UsageError(`--sweep: ${combos} combinations; at most 10,000`);
    // An unknown name is bad input for every combination: report it once.
    const unknown = names.find((n) => !loaded.kernel.params.some((d) => d.name === n));
    if (unknown !== undefined) instantiateOrExplain(loaded.kernel, { ...o.set, [unknown]: 0 }, loaded.origin);
    return runCheckSweepCli(loaded.kernel.name, ranges, (params) => instantiateOrExplain(loaded.kernel, { ...o.set, ...params }, loaded.origin), opts, cio);
  }
  const prog = instantiateOrExplain(loaded.kernel, o.set, loaded.origin);
  return runCheckCli(prog, opts, cio);
}

/** A usage error as printed: `mbsim: error: …`, or as is when it already names a place. */
function usageText(err: UsageError): string {
  const text = err.message.startsWith('mbsim') || /^\S+:\d+:\d+: /.test(err.message) ? err.message : `mbsim: error: ${err.message}`;
  // Whatever a message echoes (a parameter name, a path), no line of it floods the terminal.
  return text.split('\n').map((l) => (l.length > MESSAGE_LINE_MAX ? `${l.slice(0, MESSAGE_LINE_MAX)}… (${l.length.toLocaleString('en-US')} characters)` : l)).join('\n');
}

/** Longest line of an error message printed (characters). */
const MESSAGE_LINE_MAX = 1000;

/** Runs the CLI with `argv` (without node and script); returns the exit code. */
export async function main(argv: string[], given?: IO): Promise<number> {
  // Every line the CLI prints passes here: control and bidi characters become visible escapes.
  const io = safeIO(given ?? nodeIO());
  // When this is the process's CLI (no IO given), --timeout counts from the process's start.
  const started = given ? Date.now() : Math.min(Date.now(), performance.timeOrigin);
  const program = new Command();
  let code = 0;
  program
    .name('mbsim')
    .description('Simulate, check and show the mbarrier synchronization protocol of Hopper and Blackwell kernels.')
    .version(packageInfo().version)
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s), writeErr: (s) => io.err(s), outputError: (s, write) => write(`mbsim: ${s}`) })
    .showSuggestionAfterError(true);

  program
    .command('run')
    .description('simulate a kernel with the H200 timing model: timeline, ledger, summary')
    .argument('<kernel>', 'a built-in example name (see `mbsim examples`) or a sketch file')
    .option('--set <NAME=VALUE>', 'override a parameter (repeatable)', (v: string, acc: Record<string, number>) => parseSet(v, acc), {})
    .option('--trace <FILE>', 'write a Chrome trace-event JSON for Perfetto')
    .option('--json', 'print everything as JSON')
    .option('--timing <FILE>', 'JSON file overriding timing parameters')
    .option('--seed <N>', 'jitter asynchronous latencies with this seed (0..4294967295)', (v: string) => {
      const n = parseIntArg('--seed')(v);
      if (n < 0 || n > 0xffffffff) throw new UsageError(`--seed ${v} is outside 0..4294967295`);
      return n;
    })
    .addOption(new Option('--width <N>', 'timeline width in columns').default(96).argParser(parsePositiveArg('--width')))
    .option('--events', 'print every event and the whole ledger')
    .addOption(new Option('--max-steps <N>', 'stop the simulation after N machine steps (verdict incomplete, exit 3)').default(500_000).argParser(parsePositiveArg('--max-steps')))
    .addOption(new Option('--grid <N>', 'the launch has N CTAs like the simulated ones (one is simulated; up to the GPU\'s SMs share L2/HBM bandwidth)').argParser(parsePositiveArg('--grid')))
    .addOption(new Option('--active-sms <N>', 'SMs copying at the same time for the shared L2/HBM bandwidth model').argParser(parsePositiveArg('--active-sms')))
    .option('--omit <FIELDS>', 'with --json: leave out these fields (comma-separated: events, spans, ledger)')
    .option('--timeout <SECONDS>', 'stop the simulation after this many seconds (verdict incomplete, exit 3; default none)', parseSecondsArg('--timeout'))
    .addOption(new Option('--max-memory <MB>', 'stop the simulation before the process holds this much memory (verdict incomplete, exit 3)').default(2048).argParser(parsePositiveArg('--max-memory')))
    .option('--phase-table <ROLE:BARRIER:VAR>', 'print the phase-tracking table for a role\'s waits on a barrier array')
    .action(async (target: string, o: RunOpts) => {
      code = await runVerb(target, o, io, started);
    });

  program
    .command('check')
    .description('explore every schedule and completion order: hangs, races, phase bugs, with shortest counterexamples')
    .argument('<kernel>', 'a built-in example name or a sketch file')
    .option('--set <NAME=VALUE>', 'override a parameter (repeatable)', (v: string, acc: Record<string, number>) => parseSet(v, acc), {})
    .option('--sweep <NAME=A..B>', 'check every combination of parameter ranges and print a table of verdicts (repeatable)', (v: string, acc: string[]) => (acc.push(v), acc), [] as string[])
    .option('--json', 'print the result as JSON (schema mbsim.check/1, docs/CHECK.md)')
    .option('--sarif <FILE>', 'also write the hazards as SARIF 2.1.0')
    .option('--trace <FILE>', 'write the first counterexample as a Chrome trace-event JSON for Perfetto')
    .option('--max-states <N>', 'stop after this many states (verdict incomplete; default 5,000,000)', parsePositiveArg('--max-states'))
    .option('--timeout <SECONDS>', 'stop after this many seconds (verdict incomplete; default 60)', parseSecondsArg('--timeout'))
    .option('--max-memory <MB>', 'stop when the search holds about this much memory (verdict incomplete; default 2048)', parsePositiveArg('--max-memory'))
    .option('--all', 'keep exploring after the first hazard to report every kind that is reachable')
    .option('--strict', 'PTX\'s proxy rule in full: cross-proxy write-after-read (generic reads of a buffer, then a TMA overwrite ordered only by an mbarrier hand-off, no fence.proxy.async) becomes a race error, and a remote arrive without a scope a scope warning')
    .option('--workers <N>', 'explore with N worker threads (same result; default 1)', parsePositiveArg('--workers'))
    .addOption(new Option('--reduce <WHICH>', 'reductions to use: all (default), por (partial-order only), symmetry (only), none (the plain search, to confirm a surprising verdict)').choices(['all', 'por', 'symmetry', 'none']).default('all'))
    .addOption(new Option('--format <FORMAT>', 'text (the report with traces), short (one line per finding: file:line:col: error[kind]: message) or json').choices(['text', 'short', 'json']).default('text'))
    .option('--max-traces <N>', 'print the shortest traces of the first N findings, the others without (default 3)', parseCountArg('--max-traces'))
    .option('--quiet', 'print nothing (no report, no progress bar): the exit code says the verdict; --sarif and --trace files are still written')
    .option('--watch', 'check the sketch file again each time it is saved (Ctrl-C to stop)')
    .action(async (target: string, o: CheckOpts) => {
      if (!o.watch) {
        code = await checkVerb(target, o, io, started);
        return;
      }
      const why = inputProblem(target);
      if (why) throw new UsageError(`--watch needs a sketch file: ${echo(target)}: ${why}`);
      if (o.sweep.length) throw new UsageError('--watch cannot be combined with --sweep');
      const { watchFile } = await import('./watch.js');
      code = await watchFile(target, {
        out: io.out,
        check: () => checkVerb(target, o, io).catch((err: unknown) => {
          if (!(err instanceof UsageError)) throw err;
          io.err(usageText(err));
          return 2;
        }),
      });
    });

  program
    .command('examples')
    .description('list the built-in examples')
    .action(() => {
      const w = Math.max(...EXAMPLES.map((e) => e.name.length));
      for (const e of EXAMPLES) io.out(`${e.name.padEnd(w)}  ${e.summary}`);
    });

  program
    .command('decode')
    .description('explain raw mbarrier words (16 hex digits) or arrive tokens (8 hex digits)')
    .argument('<hex...>', 'words or tokens, e.g. 0x7ffff3fe001ffffa or 7fffd800')
    .action((hexes: string[]) => {
      const out: string[] = [];
      for (const h of hexes) {
        try {
          // A word has 16 hex digits (a token 8): a longer argument is echoed cut short.
          if (h.length > ECHO_MAX) throw new UsageError(`decode: '${echo(h)}' is not a 64-bit word (16 hex digits) or a 32-bit token (8 hex digits)`);
          out.push(explainWord(h).lines.join('\n'));
        } catch (err) {
          if (err instanceof DecodeError) throw new UsageError(err.message);
          throw err;
        }
      }
      io.out(out.join('\n\n'));
    });

  program
    .command('serve')
    .description('serve the interactive explorer on localhost (the engine runs in your browser)')
    .argument('[file]', 'a sketch file (.mbk) to open')
    .addOption(new Option('--port <N>', 'port to listen on').default(5177).argParser(parseIntArg('--port')))
    .action(async (file: string | undefined, o: { port: number }) => {
      const why = file === undefined ? null : inputProblem(file);
      if (why === 'no such file') throw new UsageError(`no such file: ${echo(file!)}`);
      if (why) throw new UsageError(`${echo(file!)} is not a file (give a sketch file, .mbk; ${why.replace(/, not a regular file$/, '')})`);
      if (o.port < 0 || o.port > 65535) throw new UsageError(`--port ${o.port} is outside 0..65535`);
      const { startServer } = await import('../web/server/serve.js');
      let server: Awaited<ReturnType<typeof startServer>>;
      try {
        server = await startServer({ port: o.port, ...(file !== undefined ? { file } : {}) });
      } catch (err) {
        const e = err as NodeJS.ErrnoException;
        if (e.code === 'EADDRINUSE') throw new UsageError(`port ${o.port} is in use; pick another with --port`);
        throw new UsageError(e.message.includes('no built explorer') ? 'the explorer is not built: run `npm run build:web` (npm ci does it)' : e.message);
      }
      io.out(`mbsim explorer at ${server.url}${file ? ` (opening ${file})` : ''} — Ctrl-C to stop`);
      await new Promise<void>((done) => {
        const stop = () => {
          void server.close().then(done);
        };
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
    });

  program
    .command('lsp')
    .description('run the language server for sketch files (LSP over stdio): diagnostics, hazards, hover, go to definition (docs/EDITOR.md)')
    .option('--stdio', 'talk LSP over stdin/stdout (the default and only transport; editors pass it)')
    .option('--check-timeout <SECONDS>', 'bound of each check the server runs (default 2)', parseSecondsArg('--check-timeout'))
    .option('--max-states <N>', 'states each check may explore (default 200,000)', parsePositiveArg('--max-states'))
    .option('--max-memory <MB>', 'stop a check before the server holds this much memory (default 1024)', parsePositiveArg('--max-memory'))
    .option('--no-check-on-change', 'check only on open and save, not after a pause in typing')
    .action(async (o: { checkTimeout?: number; maxStates?: number; maxMemory?: number; checkOnChange: boolean }) => {
      const { startLanguageServer, DEFAULT_HAZARD_BOUNDS } = await import('../lsp/index.js');
      await startLanguageServer({
        bounds: {
          timeoutMs: o.checkTimeout !== undefined ? Math.round(o.checkTimeout * 1000) : DEFAULT_HAZARD_BOUNDS.timeoutMs,
          maxStates: o.maxStates ?? DEFAULT_HAZARD_BOUNDS.maxStates,
          maxMemory: o.maxMemory !== undefined ? o.maxMemory * 1024 * 1024 : DEFAULT_HAZARD_BOUNDS.maxMemory,
        },
        ...(o.checkOnChange ? {} : { checkDelayMs: null }),
      });
      code = 0;
    });

  try {
    await program.parseAsync(argv, { from: 'user' });
    return code;
  } catch (err) {
    if (err instanceof CommanderError) {
      // `mbsim` with no verb prints the usage on stderr: that is bad input (exit 2), not success.
      if (err.code === 'commander.help' && argv.length === 0) return 2;
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help') return 0;
      // commander already printed its one-line message
      return 2;
    }
    // Timing parameters validated where they are used (not only at load) are still bad input.
    if (err instanceof TimingError) err = new UsageError(`--timing: ${err.message}`);
    if (err instanceof UsageError) {
      io.err(usageText(err));
      return 2;
    }
    throw err;
  }
}
