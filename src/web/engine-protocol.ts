/**
 * Requests the explorer sends to its worker and the replies, and `handle`, which serves one
 * request (in the worker, or on the page's thread when workers are unavailable).
 */
import { check, type CheckResult } from '../check/check.js';
import type { Progress } from '../check/explore.js';
import { symmetrySummary } from '../check/report.js';
import { phaseRows, type PhaseRowX } from './phase-rows.js';
import { instantiateKernel, packModel, type PackedModel } from './model.js';
import { buildModel, type SimProgress } from './sim-model.js';
import type { SourceRef } from './share.js';
import { load } from './sources.js';

/** Bounds of a check run from the page. */
export interface CheckBounds {
  maxStates: number;
  timeoutMs: number;
  /** Estimated bytes of the search (the worker's memory is the tab's). */
  maxMemory: number;
}

export type WorkerRequest =
  | { type: 'sim'; id: number; src: SourceRef; params: Record<string, number> }
  | { type: 'check'; id: number; src: SourceRef; params: Record<string, number>; bounds: CheckBounds }
  | { type: 'phases'; id: number; src: SourceRef; params: Record<string, number>; role: string; barrier: string; variable: string };

/**
 * A check result as plain data (the program stays behind), with what the summary needs of the
 * program: the reductions by symmetry in the CLI's words (src/check/report.ts `symmetrySummary`).
 */
export type PackedCheck = Omit<CheckResult, 'program'> & { symmetryText: string };

/** `r` as plain data for the page. */
export function packCheck(r: CheckResult): PackedCheck {
  const { program: _p, ...rest } = r;
  return { ...rest, symmetryText: symmetrySummary(r) };
}

export type WorkerReply =
  | { type: 'sim'; id: number; model: PackedModel }
  | { type: 'progress'; id: number; progress: Progress }
  | { type: 'sim-progress'; id: number; progress: SimProgress }
  | { type: 'check'; id: number; result: PackedCheck }
  | { type: 'phases'; id: number; rows: PhaseRowX[] }
  | { type: 'error'; id: number; error: string };

function program(src: SourceRef, params: Record<string, number>) {
  const l = load(src);
  if (!l.kernel) throw new Error(l.diagnostics.length ? `the sketch does not parse (${l.diagnostics.length} problem(s))` : 'no kernel');
  const inst = instantiateKernel(l.kernel, params);
  if (!inst.program) throw new Error(inst.error ?? 'error');
  return inst.program;
}

/** Serves one request; `reply` receives progress messages and then exactly one answer. */
export function handle(req: WorkerRequest, reply: (m: WorkerReply) => void): void {
  try {
    if (req.type === 'sim') {
      const m = buildModel(program(req.src, req.params), (progress) => reply({ type: 'sim-progress', id: req.id, progress }));
      reply({ type: 'sim', id: req.id, model: packModel(m) });
    } else if (req.type === 'check') {
      const r = check(program(req.src, req.params), {
        maxStates: req.bounds.maxStates, timeout: req.bounds.timeoutMs, maxMemory: req.bounds.maxMemory,
        onProgress: (progress) => reply({ type: 'progress', id: req.id, progress }),
      });
      reply({ type: 'check', id: req.id, result: packCheck(r) });
    } else {
      reply({ type: 'phases', id: req.id, rows: phaseRows(program(req.src, req.params), req.role, req.barrier, req.variable) });
    }
  } catch (err) {
    reply({ type: 'error', id: req.id, error: String((err as Error)?.message ?? err) });
  }
}
