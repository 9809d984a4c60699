/**
 * `mbsim check`: exhaustive exploration of every schedule of a kernel's agents and asynchronous
 * completions, with hazards (hang, race, phase-alias, tx-mismatch, inflight-at-exit and every
 * diagnostic code of the model) and their shortest traces. See docs/CHECK.md.
 */
import { writeFileSync, renameSync } from 'node:fs';
import type { Program } from '../machine/program.js';
import { check, type CheckOptions, type CheckResult } from './check.js';
import { checkJson, checkSarif, renderCheck, NO_PAINT, type CheckPaint } from './report.js';
import { hazardTrace } from './trace.js';

export { check, replay, type CheckOptions, type CheckResult, type Hazard, type TraceStep, type BarrierSnapshot } from './check.js';
export { checkJson, checkSarif, renderCheck, ledgerLines, type CheckPaint } from './report.js';
export { happensBefore, type HbAccess, type HbRace } from './hb.js';
export { explore, type ExploreOptions, type Progress } from './explore.js';
export { hazardTrace } from './trace.js';
export { staticChecks } from './static.js';

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
  /** Write the first hazard's counterexample as a Perfetto trace to this file. */
  trace?: string;
}

/** Where the CLI writes. */
export interface CheckIO {
  out(s: string): void;
  err(s: string): void;
  color: boolean;
}

async function colors(on: boolean): Promise<CheckPaint> {
  if (!on) return NO_PAINT;
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
  if (opts.timeoutMs !== undefined) co.timeout = opts.timeoutMs;
  if (opts.maxMemoryMb !== undefined) co.maxMemory = opts.maxMemoryMb * 1024 * 1024;
  if (opts.all) co.all = true;
  if (opts.strict) co.strict = true;
  return co;
}

/**
 * Runs the checker for the CLI: text report (or `--json`) to `io.out`, optional SARIF file,
 * a progress line on `io.err` when it is a terminal (`io.color`) and not `--json`.
 * Returns the exit code: 0 ok, 1 hazard, 3 incomplete.
 */
export async function runCheckCli(program: Program, opts: CheckCliOptions, io: CheckIO): Promise<number> {
  const co = checkOptions(opts);
  const progress = io.color && !opts.json;
  if (progress) {
    co.onProgress = (p) => {
      const rate = p.elapsedMs > 0 ? Math.round((p.states / p.elapsedMs) * 1000) : 0;
      io.err(`\r${p.states.toLocaleString('en-US')} states  ${rate.toLocaleString('en-US')}/s  depth ${p.depth}  frontier ${p.frontier.toLocaleString('en-US')}  ~${(p.memory / 1048576).toFixed(0)} MB   `);
    };
  }
  const r = check(program, co);
  if (progress) io.err('\r\x1b[K');
  if (opts.sarif) {
    const tmp = `${opts.sarif}.tmp-${process.pid}`;
    writeFileSync(tmp, `${JSON.stringify(checkSarif(r), null, 2)}\n`);
    renameSync(tmp, opts.sarif);
  }
  let traced: string | null = null;
  if (opts.trace) {
    const h = r.hazards[0] ?? r.warnings.find((w) => !w.static);
    if (h) {
      writeAtomic(opts.trace, JSON.stringify(hazardTrace(program, h)));
      traced = `trace of ${h.severity === 'error' ? h.kind.toUpperCase() : `warning ${h.kind}`} (${h.trace.length} steps) written to ${opts.trace} (open it in https://ui.perfetto.dev)`;
    } else traced = `no counterexample: ${opts.trace} not written`;
  }
  if (opts.json) io.out(JSON.stringify(checkJson(r)));
  else {
    io.out(renderCheck(r, await colors(io.color)));
    if (traced) io.out(traced);
  }
  return exitCode(r);
}

function writeAtomic(path: string, data: string): void {
  const tmp = `${path}.tmp-${process.pid}`;
  writeFileSync(tmp, data);
  renameSync(tmp, path);
}

/** One parameter range of `--sweep NAME=A..B`. */
export interface SweepRange {
  name: string;
  from: number;
  to: number;
}

/** Parses `NAME=A..B` (or `NAME=A`); integers, A ≤ B. Throws an Error with a usage message. */
export function parseSweep(spec: string): SweepRange {
  const m = /^([A-Za-z_][A-Za-z0-9_]*)=(-?\d+)(?:\.\.(-?\d+))?$/.exec(spec.trim());
  if (!m) throw new Error(`--sweep expects NAME=A..B with integers A <= B, got '${spec}'`);
  const from = Number(m[2]);
  const to = m[3] === undefined ? from : Number(m[3]);
  if (to < from) throw new Error(`--sweep ${spec}: the range is empty (${from} > ${to})`);
  return { name: m[1]!, from, to };
}

/** Every combination of the ranges (the last range varies fastest). */
export function sweepCombinations(ranges: SweepRange[]): Record<string, number>[] {
  let out: Record<string, number>[] = [{}];
  for (const r of ranges) {
    const next: Record<string, number>[] = [];
    for (const base of out) for (let v = r.from; v <= r.to; v++) next.push({ ...base, [r.name]: v });
    out = next;
  }
  return out;
}

/**
 * `--sweep`: checks every combination of the ranges and prints a table of verdicts (or, with
 * `json`, one `mbsim.check-sweep/1` document). `build` instantiates the kernel with one
 * combination, or throws (bad input for that combination: the row says why, exit code 2).
 * Exit code: the worst row, hazard (1) before bad input (2) before incomplete (3) before ok (0).
 */
export async function runCheckSweepCli(
  kernelName: string, ranges: SweepRange[], build: (params: Record<string, number>) => Program, opts: CheckCliOptions, io: CheckIO,
): Promise<number> {
  const combos = sweepCombinations(ranges);
  const co = checkOptions(opts);
  const paint = await colors(io.color);
  const rows: { params: Record<string, number>; verdict: string; code: number; states: number; ms: number; what: string; result?: CheckResult }[] = [];
  for (const params of combos) {
    let prog: Program;
    try {
      prog = build(params);
    } catch (err) {
      const msg = ((err as Error).message ?? String(err)).replace(/^mbsim: error: /, '').split('\n')[0]!;
      rows.push({ params, verdict: 'bad-input', code: 2, states: 0, ms: 0, what: msg });
      continue;
    }
    const r = check(prog, co);
    const h = r.hazards[0];
    const what = h ? `${h.subject ? `${h.subject.name}: ` : ''}${h.message}` : r.verdict === 'incomplete' ? `stopped by ${r.stoppedBy}` : r.warnings.length ? `${r.warnings.length} warning(s): ${[...new Set(r.warnings.map((w) => w.kind))].join(', ')}` : '';
    rows.push({ params, verdict: r.verdict, code: exitCode(r), states: r.coverage.states, ms: r.coverage.elapsedMs, what, result: r });
  }
  const rank = (c: number) => (c === 1 ? 3 : c === 2 ? 2 : c === 3 ? 1 : 0);
  const worst = rows.reduce((w, r) => (rank(r.code) > rank(w) ? r.code : w), 0);
  if (opts.json) {
    io.out(JSON.stringify({
      schema: 'mbsim.check-sweep/1', kernel: kernelName, ranges, exit: worst,
      rows: rows.map((r) => (r.result ? { params: r.params, verdict: r.verdict, exit: r.code, result: checkJson(r.result) } : { params: r.params, verdict: r.verdict, exit: r.code, error: r.what })),
    }));
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
  out.push(`${[...counts].map(([v, n]) => `${n} ${v}`).join(', ')}; exit ${worst}`);
  out.push(paint.dim(`${rows.reduce((n, r) => n + r.states, 0).toLocaleString('en-US')} states in ${(ms / 1000).toFixed(2)} s`));
  io.out(`${out.join('\n')}\n`);
  return worst;
}
