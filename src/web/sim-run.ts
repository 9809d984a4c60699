/**
 * One simulation of the page's kernel in the engine worker: its progress line and cancel button
 * while it runs (events, cycles, seconds), then the model (with the milliseconds it took), or the
 * verdict and explanation of a cancellation or an error. A run that a newer one replaced reports
 * nothing.
 */
import { fmt, h, setText } from './dom.js';
import { Dropped, simulateIn } from './engine.js';
import { unpackModel, type RunModel } from './model.js';
import type { Program } from '../machine/program.js';
import type { SourceRef } from './share.js';

/** What a simulation run reports to the page. */
export interface SimRunHooks {
  /** Whether this run is still the page's latest. */
  current(): boolean;
  /** The progress line and the cancel button, shown while the worker reports progress. */
  progress: HTMLElement;
  cancel: HTMLElement;
  /** The simulation finished: its model. */
  done(m: RunModel): void;
  /** It was cancelled or failed: the verdict's head and the run-info paragraph. */
  failed(head: string, body: HTMLElement): void;
}

/** Simulates `program` (of source `src` with `params`) in the worker; reports through `hooks`. */
export function simulateRun(src: SourceRef, params: Record<string, number>, program: Program, hooks: SimRunHooks): void {
  const t0 = performance.now();
  let seen = 0;
  const busy = (on: boolean) => {
    hooks.progress.hidden = !on;
    hooks.cancel.hidden = !on;
    if (!on) setText(hooks.progress, '');
  };
  simulateIn(src, params, (p) => {
    if (!hooks.current()) return;
    seen = p.events;
    busy(true);
    setText(hooks.progress, `${fmt(p.events)} events · t = ${fmt(p.cycles)} cycles · ${(p.elapsedMs / 1000).toFixed(1)} s`);
  }).then((packed) => {
    if (!hooks.current()) return;
    busy(false);
    const m = unpackModel(packed, program);
    m.simMs = performance.now() - t0;
    hooks.done(m);
  }).catch((err: unknown) => {
    if (!hooks.current()) return;
    if (err instanceof Dropped && err.message === 'cancelled') {
      busy(false);
      hooks.failed('cancelled', h('p', { class: 'error', id: 'sim-cancelled' },
        `The simulation was cancelled after ${fmt(seen)} events (${((performance.now() - t0) / 1000).toFixed(1)} s). Lower a parameter or pick another kernel to simulate again.`));
      return;
    }
    if (err instanceof Dropped) return;
    busy(false);
    hooks.failed('error', h('p', { class: 'error' }, String((err as Error)?.message ?? err)));
  });
}
