/**
 * A simulation as a run model: `simulate` with an `onStep` that files every barrier's state after
 * each step, a hang's waiters drawn blocked to the end, and each blocked wait an event where it begins.
 */
import type { Kernel } from '../kernel/ir.js';
import type { MachineEvent } from '../machine/events.js';
import { Machine, type MachineState } from '../machine/machine.js';
import type { Program } from '../machine/program.js';
import { simulate } from '../sim/simulate.js';
import { withWaitStarts } from './wait-starts.js';
import { Grow, assemble, instantiateKernel, lastLE, recordStep, type RunModel, type SimSummary, type ViewSpan } from './model.js';

/** Largest number of steps the explorer simulates (a spinning kernel would never end). */
export const MAX_STEPS = 1_500_000;

/** Instantiates and simulates `kernel`; returns the model or an error message (never throws for bad kernels). */
export function runKernel(kernel: Kernel, overrides: Record<string, number>): { model?: RunModel; error?: string } {
  const inst = instantiateKernel(kernel, overrides);
  if (!inst.program) return { error: inst.error ?? 'error' };
  const program = inst.program;
  try {
    return { model: buildModel(program) };
  } catch (err) {
    return { error: `simulation failed: ${String((err as Error)?.message ?? err)}` };
  }
}

/** How far a simulation has come (for the page's progress line). */
export interface SimProgress {
  /** Events so far. */
  events: number;
  /** Simulated time so far, in cycles. */
  cycles: number;
  elapsedMs: number;
}

/**
 * Simulates `program` and builds the model. `onProgress` (optional) is called about every 0.2 s
 * of a long simulation.
 */
export function buildModel(program: Program, onProgress?: (p: SimProgress) => void): RunModel {
  const init = new Machine(program).initial();
  const grows: Grow[] = [];
  for (let k = 0; k < init.bars.length; k++) {
    const g = new Grow();
    g.push(-1, 0, init.bars[k]!);
    grows.push(g);
  }
  let evCount = 0;
  const touched: number[] = [];
  const at: number[] = [];
  const mark = new Uint8Array(init.bars.length);
  const t0 = performance.now();
  let steps = 0, lastReport = t0;
  const sim = simulate(program, {
    maxSteps: MAX_STEPS,
    onStep: (s: MachineState, events: readonly MachineEvent[]) => {
      if (onProgress && (++steps & 2047) === 0) {
        const now = performance.now();
        if (now - lastReport >= 200) {
          lastReport = now;
          onProgress({ events: evCount, cycles: events.length ? events[events.length - 1]!.t : 0, elapsedMs: now - t0 });
        }
      }
      if (events.length === 0) return;
      recordStep(events, evCount, s.bars, grows, mark, touched, at);
      evCount += events.length;
    },
  });
  const simMs = performance.now() - t0;
  const summary: SimSummary = { verdict: sim.verdict, cycles: sim.cycles, diagnostics: sim.diagnostics, hang: sim.hang, stopped: sim.stopped };
  const events = sim.events ?? [];
  const spans: ViewSpan[] = sim.spans ?? [];
  let endAt: number | undefined;
  if (sim.hang && sim.hang.waiters.length) {
    // The simulator closes a stall only when the agent resumes; a hang's waiters never do. Draw each
    // as blocked from its last event (the wait that blocked) to the end, which leaves room to see it.
    const last = Math.max(1, sim.cycles, events.length ? events[events.length - 1]!.t : 0);
    endAt = last + Math.max(8, last * 0.06);
    for (const w of sim.hang.waiters) {
      let since = 0;
      for (let i = events.length - 1; i >= 0; i--) {
        if ((events[i] as { agent?: number }).agent === w.agent) {
          since = events[i]!.t;
          break;
        }
      }
      spans.push({ lane: String(w.agent), t0: since, t1: endAt, kind: 'blocked', label: `blocked forever: ${w.op}`, ...(w.loc?.line ? { loc: w.loc } : {}) });
    }
  }
  // Each blocked wait also becomes an event where it begins (src/web/wait-starts.ts).
  const phaseAt = (bar: number, t: number) => {
    const g = grows[bar];
    if (!g) return 0;
    const j = lastLE(g.t, t);
    return j >= 0 ? g.phase[j]! : 0;
  };
  const ws = withWaitStarts(events, spans, sim.hang, phaseAt);
  for (const g of grows) for (let k = 0; k < g.ev.length; k++) if (g.ev[k]! >= 0) g.ev[k] = ws.remap[g.ev[k]!]!;
  return assemble(program, summary, ws.events, spans, grows, init.bars, simMs, endAt);
}
