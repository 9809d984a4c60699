/**
 * What `mbsim run` prints after its simulation: the `--json` document (schema `mbsim.run/1`,
 * written in chunks within the output budget, src/cli/budget.ts) or the text report (header,
 * timeline, event log, ledger, phase table, summary, main loop, diagnostics, trap and hang).
 */
import type { Program } from '../machine/program.js';
import type { MachineEvent } from '../machine/events.js';
import type { Ledger } from '../report/ledger.js';
import { renderLoopSummary, type LoopSummary } from '../report/loop.js';
import { mergePhaseRows, renderPhaseTable, type PhaseRow } from '../report/phases.js';
import { locText, renderEventLog, renderLedger, renderSummary, renderTimeline, type Paint } from '../report/text.js';
import type { SimResult } from '../sim/simulate.js';
import type { Timing } from '../sim/timing.js';
import { reportReserveMs, type OutputBudget } from './budget.js';
import { paintFor, type IO } from './io.js';
import type { RunOpts } from './run-verb.js';
import { isPtx } from './ptx-flags.js';

/** Rows of the phase table the text report shows. */
const PHASE_ROWS_SHOWN = 200;
/** Memory (bytes) one line of `run --events` takes while the log is built. */
const EVENT_LINE_BYTES = 600;

/** Everything a run's report is made of. */
export interface RunReport {
  target: string;
  o: RunOpts;
  program: Program;
  timing: Timing;
  r: SimResult;
  /** The recorded events (empty when none were recorded). */
  events: MachineEvent[];
  ledger: Ledger;
  loop: LoopSummary | null;
  table: PhaseRow[] | null;
  /** The phase variable the table's column is named after. */
  ptVar: string;
  /** The agents (warps) of the table's role, by id. */
  ptWarps: string[];
  activeSms: number | undefined;
  omit: Set<string>;
  budget: OutputBudget;
  /** Share of --max-memory the simulation's records could fill. */
  share: number;
  /** Trace events the output budget left out of `--trace` (0: the trace is whole). */
  traceCut: number;
  /**
   * What the report's time (the end of `--timeout`) or memory cut from the ledger and the loop
   * summary: the bound's flag and the events each was not built from. Null: both whole.
   */
  cut: { by: string; ledgerEvents: number; loopEvents: number } | null;
}

/**
 * Writes the `--json` document through `io.out` in chunks, waiting for `io.drain` after each, so
 * no more than one chunk and the output queue are held at once. Returns the elements the budget
 * left out (0: the document is whole).
 */
export async function writeRunJson(p: RunReport, io: IO): Promise<number> {
  const { program, r, o, omit } = p;
  const names = (a: number) => (a >= 0 ? program.agents[a]!.name : null);
  const js = p.budget.stream();
  for (const chunk of js.chunks({
    schema: 'mbsim.run/1',
    kernel: program.kernel.name,
    arch: program.kernel.arch,
    params: program.params,
    seed: o.seed ?? null,
    verdict: r.verdict,
    stopped: r.stopped,
    cycles: r.cycles,
    clockMHz: p.timing.clockMHz.value,
    steps: r.steps,
    eventCount: r.eventCount,
    agents: program.agents.map((a) => ({ id: a.id, name: a.name, role: a.roleName, cta: a.cta, threads: a.threads })),
    stats: r.stats,
    diagnostics: r.diagnostics.map((d) => ({ ...d.diag, t: d.t, agent: names(d.agent), barrier: d.bar >= 0 ? program.barrierName(d.bar) : null, loc: d.loc ?? null })),
    hang: r.hang,
    ...(p.cut ? { reportStopped: { by: p.cut.by, ledgerEventsOmitted: p.cut.ledgerEvents, loopSummaryOmitted: p.cut.loopEvents > 0 } } : {}),
    ...(p.activeSms !== undefined ? { activeSms: p.activeSms } : {}),
    ...(o.grid !== undefined ? { grid: o.grid } : {}),
    loop: p.loop,
    ...(omit.has('ledger') ? {} : { ledger: p.ledger }),
    phaseTable: p.table,
    ...(omit.has('spans') ? {} : { spans: r.spans }),
    ...(omit.has('events') ? {} : { events: p.events }),
  }, () => p.budget.trailer(js.cut))) {
    io.out(chunk);
    if (io.drain) await io.drain();
  }
  return js.cut;
}

/**
 * Prints the text report of a run through `io.out`, within the output budget (`--max-memory`,
 * `--timeout` and its grace): past a bound the timeline, the ledger and the hang are cut where
 * they are, and a line says so. Returns the flag of the bound that cut it, or null.
 */
export function printRunText(p: RunReport, io: IO): string | null {
  const { program, r, o, events } = p;
  const paint = paintFor(io);
  const params = Object.entries(program.params).map(([k, v]) => `${k}=${v}`).join(' ');
  io.out(`${paint.bold(`mbsim run ${p.target}`)}  ${paint.dim(`kernel '${program.kernel.name}' (${program.kernel.arch}, ${program.ctas} CTA${program.ctas > 1 ? 's' : ''})${params ? `  ${params}` : ''}${o.seed !== undefined ? `  seed ${o.seed}` : ''}`)}`);
  if (program.kernel.description) io.out(paint.dim(program.kernel.description));
  io.out('');
  const stop = p.budget.render;
  io.out(renderTimeline(r, o.width, paint, stop));
  if (o.events || r.steps <= 40) {
    io.out(`\n${paint.bold('events')}`);
    // The whole log of a long run may not fit in --max-memory (about EVENT_LINE_BYTES per event).
    const fit = p.budget.room(events.length * EVENT_LINE_BYTES) ? Number.MAX_SAFE_INTEGER : Math.max(200, Math.floor(Math.max(0, o.maxMemory * 1048576 - process.memoryUsage.rss()) / EVENT_LINE_BYTES));
    // Within --timeout (and its grace for the output) as well: a long run's log takes seconds.
    io.out(renderEventLog(program, events, o.events ? fit : 200, p.budget.render));
    if (p.budget.stoppedBy()) io.out(paint.yellow(`(the event log was cut by ${p.budget.stoppedBy()}: --json writes every event, in chunks)`));
    else if (o.events && fit < events.length) io.out(paint.yellow(`(the event log was cut at ${fit.toLocaleString('en-US')} events to stay under --max-memory ${o.maxMemory}: --json writes every event, in chunks)`));
  }
  io.out(`\n${paint.bold('ledger')}`);
  if (!stop()) io.out(renderLedger(p.ledger, o.events ? Number.MAX_SAFE_INTEGER : 12, r.hang && !o.events ? [...new Set(r.hang.waiters.flatMap((w) => (w.bar !== undefined ? [w.bar] : [])))] : undefined));
  if (p.table) {
    io.out(`\n${paint.bold('phase tracking')}`);
    // A long run has a row per iteration: the text shows the first ones (--json has every row).
    const lines = mergePhaseRows(p.table, p.ptWarps).lines.length;
    io.out(renderPhaseTable(p.table, p.ptVar, { warps: p.ptWarps, maxLines: PHASE_ROWS_SHOWN }));
    if (lines > PHASE_ROWS_SHOWN) io.out(paint.dim(`… ${(lines - PHASE_ROWS_SHOWN).toLocaleString('en-US')} more rows (--json has every row)`));
  }
  io.out(`\n${paint.bold('summary')}`);
  io.out(renderSummary(r, paint));
  if (p.loop) io.out(renderLoopSummary(p.loop, p.activeSms));
  else if (p.cut?.loopEvents) io.out(paint.yellow(`main loop: left out (its summary was cut by ${p.cut.by}: the report's share of the bound ran out)`));
  printFindings(p, io, paint, stop);
  if (r.stopped) io.out(paint.yellow(r.stopped));
  if (r.stoppedBy === 'timeout' && o.timeout !== undefined) io.out(paint.dim(`  (the simulation stops ${(reportReserveMs(o.timeout * 1000) / 1000).toFixed(1)} s before --timeout ${o.timeout}: building the report from its records gets that time${p.cut ? ', and it was cut at the timeout' : ''})`));
  if (r.stoppedBy === 'max-memory') io.out(paint.dim(`  (the simulation's records may fill ${p.share * 100}% of --max-memory ${o.maxMemory}; the ledger and timeline${o.trace ? ', the trace' : ''}${o.events ? ', the event log' : ''} built from them need the rest)`));
  if (o.trace) io.out(paint.dim(`\ntrace written to ${o.trace} (open it in https://ui.perfetto.dev)`));
  if (p.traceCut) io.out(paint.yellow(`the trace was cut short by ${p.budget.stoppedBy()}: ${p.traceCut.toLocaleString('en-US')} of its events left out (raise it, or lower --max-steps)`));
  const by = p.budget.stoppedBy();
  if (by && !p.traceCut) io.out(paint.yellow(`the report was cut short by ${by} (verdict incomplete, exit 3): raise it, or shrink the kernel's parameters with --set; --json writes everything, in chunks`));
  return by;
}

/** The diagnostics, the trap and the hang of a run's text report. */
function printFindings(p: RunReport, io: IO, paint: Paint, stop: () => boolean): void {
  const { program, r } = p;
  const names = (a: number) => (a >= 0 ? program.agents[a]!.name : null);
  for (const d of r.diagnostics) {
    const where = d.loc ? `${locText(d.loc)}: ` : '';
    const who = names(d.agent) ?? 'async unit';
    io.out(`${d.diag.severity === 'error' ? paint.red('error') : paint.yellow('warning')}[${d.diag.code}] ${where}${who}: ${d.diag.message}\n  H200: ${d.diag.h200}`);
  }
  if (r.verdict === 'trap' && r.final.trapped) {
    io.out(`\n${paint.red(paint.bold('TRAP'))}: [${r.final.trapped.code}] ${r.final.trapped.message}; ${r.final.trapped.code === 'not-modelled' ? 'mbsim stops the agent here: it does not model this instruction (not a hardware behaviour)' : 'the H200 stops the kernel here (sticky unspecified launch failure)'}`);
  }
  if (r.hang) {
    io.out(`\n${paint.red(paint.bold('HANG'))}: nothing can make progress; ${r.hang.waiters.length} agent(s) blocked forever`);
    for (let i = 0; i < r.hang.waiters.length; i++) {
      const w = r.hang.waiters[i]!;
      if (stop()) {
        io.out(`  … (${(r.hang.waiters.length - i).toLocaleString('en-US')} more blocked agents left out)`);
        break;
      }
      io.out(`  ${w.name} blocked in ${w.op} (${locText(w.loc)})`);
      // The operands as written (a PTX kernel's registers), once, beside the values they resolve to.
      if (w.source) io.out(`    PTX: ${w.source}`);
      if (w.state) io.out(`    ${w.barName}: phase ${w.state.phase}, pending ${w.state.pending}/${w.state.expected}, tx ${w.state.tx}`);
      for (const reason of w.reasons) io.out(`    - ${reason}`);
    }
    if (r.hang.unexplained) io.out(`  … (${r.hang.unexplained.toLocaleString('en-US')} more blocked agents, not explained: ${r.stopped ?? 'a bound stopped the explanation'})`);
    if (r.hang.cycle) io.out(`  wait-for cycle: ${r.hang.cycle.join(' → ')}`);
    io.out(paint.dim(`  (this is one timed schedule; \`${checkCommand(p.target, p.o)}\` explores every schedule and gives the shortest trace)`));
  }
}

/** A word as a POSIX shell reads it back: bare when it is plain, else in single quotes. */
function shellWord(w: string): string {
  return /^[\w./@%+=:,-]+$/.test(w) ? w : `'${w.replace(/'/g, `'\\''`)}'`;
}

/**
 * The `mbsim check` command for the kernel a run simulated: its target with the same `--set`
 * parameters and, for PTX, the same launch (a check without them is another kernel, or no launch
 * at all). Run's own --grid of a sketch is its bandwidth model, which check has no use for.
 */
export function checkCommand(target: string, o: Pick<RunOpts, 'set' | 'kernel' | 'block' | 'cluster' | 'grid' | 'param' | 'tensorMap' | 'dynamicSmem'>): string {
  const words = ['mbsim', 'check', target];
  for (const [k, v] of Object.entries(o.set ?? {})) words.push('--set', `${k}=${v}`);
  if (isPtx(target)) {
    if (o.kernel !== undefined) words.push('--kernel', o.kernel);
    if (o.block !== undefined) words.push('--block', Array.isArray(o.block) ? o.block.join(',') : String(o.block));
    if (o.cluster !== undefined) words.push('--cluster', String(o.cluster));
    if (o.grid !== undefined) words.push('--grid', String(o.grid));
    for (const [k, v] of Object.entries(o.param ?? {})) words.push('--param', `${k}=${v}`);
    for (const [k, v] of Object.entries(o.tensorMap ?? {})) words.push('--tensor-map', `${k}=${v}`);
    if (o.dynamicSmem !== undefined) words.push('--dynamic-smem', String(o.dynamicSmem));
  }
  return words.map(shellWord).join(' ');
}
