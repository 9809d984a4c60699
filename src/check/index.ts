/**
 * `mbsim check`: exhaustive exploration of every schedule of a kernel's agents and asynchronous
 * completions, with hazards (hang, race, phase-alias, tx-mismatch, inflight-at-exit and every
 * diagnostic code of the model) and their shortest traces. See docs/CHECK.md.
 */
import { writeFileSync, renameSync } from 'node:fs';
import type { Program } from '../machine/program.js';
import { check, type CheckOptions, type CheckResult } from './check.js';
import { checkJson, checkSarif, renderCheck, NO_PAINT, type CheckPaint } from './report.js';

export { check, replay, type CheckOptions, type CheckResult, type Hazard, type TraceStep, type BarrierSnapshot } from './check.js';
export { checkJson, checkSarif, renderCheck, ledgerLines, type CheckPaint } from './report.js';
export { happensBefore, type HbAccess, type HbRace } from './hb.js';
export { explore, type ExploreOptions, type Progress } from './explore.js';

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

/**
 * Runs the checker for the CLI: text report (or `--json`) to `io.out`, optional SARIF file,
 * a progress line on `io.err` when it is a terminal (`io.color`) and not `--json`.
 * Returns the exit code: 0 ok, 1 hazard, 3 incomplete.
 */
export async function runCheckCli(program: Program, opts: CheckCliOptions, io: CheckIO): Promise<number> {
  const co: CheckOptions = {};
  if (opts.maxStates !== undefined) co.maxStates = opts.maxStates;
  if (opts.timeoutMs !== undefined) co.timeout = opts.timeoutMs;
  if (opts.maxMemoryMb !== undefined) co.maxMemory = opts.maxMemoryMb * 1024 * 1024;
  if (opts.all) co.all = true;
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
  if (opts.json) io.out(JSON.stringify(checkJson(r)));
  else io.out(renderCheck(r, await colors(io.color)));
  return exitCode(r);
}
