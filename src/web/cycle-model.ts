/**
 * One stage's full/empty cycle as data: producer → full[s] → consumer → empty[s] → producer. Each
 * event of the run that moves a stage along that cycle is filed under one of the four handoffs
 * (arrows), so the figure can light the arrow the cursor last reached:
 *
 * - 0 producer → full[s]: the producer's arrive (with expect_tx) on full[s], or a completion that
 *   lands on it (TMA bytes, complete_tx; a tcgen05.commit arrive);
 * - 1 full[s] → consumer: full[s] completes a phase (data ready), or the consumer's wait on it passes;
 * - 2 consumer → empty[s]: the consumer's arrive on empty[s] (it is done with the buffer);
 * - 3 empty[s] → producer: empty[s] completes a phase (buffer free), or the producer's wait on it passes.
 *
 * A phase completes when its pending arrival count and tx-count are both 0 (PTX ISA 9.1, mbarrier).
 * Pure; no DOM.
 */
import type { RunModel } from './model.js';
import { lastLE } from './model.js';
import type { RingIndex } from './ring-model.js';

/** Which arrow of the cycle an event advances: 0 P→full, 1 full→C, 2 C→empty, 3 empty→P. */
export type CycleArrow = 0 | 1 | 2 | 3;

/** An event that advances a stage along its cycle. */
export interface CycleStep {
  ev: number;
  stage: number;
  arrow: CycleArrow;
  /** What happened, in a few words (e.g. `full[1] completed phase 3`). */
  what: string;
}

/** Every cycle step of a run, in event order (for the ring's CTA and full/empty pair). */
export interface CycleIndex {
  ev: number[];
  steps: CycleStep[];
}

/** Files the run's events under the four arrows of each stage's cycle. */
export function cycleIndex(m: RunModel, r: RingIndex): CycleIndex {
  const stageOfFull = new Map<number, number>(r.fullKeys.map((k, s) => [k, s]));
  const stageOfEmpty = new Map<number, number>();
  r.emptyKeys.forEach((k, s) => {
    if (k >= 0) stageOfEmpty.set(k, s);
  });
  const sideOf = (agent: number): 'P' | 'C' | null => {
    const a = agent >= 0 ? m.program.agents[agent] : undefined;
    if (!a || a.cta !== r.cta) return null;
    const side = r.pair.agentSide[agent];
    return side === 'producer' ? 'P' : side === 'consumer' ? 'C' : null;
  };
  const out: CycleIndex = { ev: [], steps: [] };
  const add = (ev: number, stage: number, arrow: CycleArrow, what: string) => {
    out.ev.push(ev);
    out.steps.push({ ev, stage, arrow, what });
  };
  m.events.forEach((e, i) => {
    if (e.e !== 'arrive' && e.e !== 'complete_tx' && e.e !== 'phase' && e.e !== 'wait') return;
    const fs = stageOfFull.get(e.bar), es = stageOfEmpty.get(e.bar);
    if (fs !== undefined) {
      const name = `${r.pair.full}[${fs}]`;
      if (e.e === 'phase') add(i, fs, 1, `${name} completed phase ${e.completed}: the data is ready`);
      else if (e.e === 'wait') {
        if (e.pass && sideOf(e.agent) === 'C') add(i, fs, 1, `the consumer's wait on ${name} passed`);
      } else if (e.e === 'complete_tx') add(i, fs, 0, `${e.bytes} B landed on ${name} (tx-count ${e.tx})`);
      else if (e.agent < 0 || sideOf(e.agent) === 'P') add(i, fs, 0, `${e.agent < 0 ? 'an asynchronous arrive' : 'the producer arrived'}${e.expectTx ? ` with expect_tx(${e.expectTx} B)` : ''} on ${name} (pending ${e.pending})`);
    } else if (es !== undefined) {
      const name = `${r.pair.empty}[${es}]`;
      if (e.e === 'phase') add(i, es, 3, `${name} completed phase ${e.completed}: the buffer is free`);
      else if (e.e === 'wait') {
        // On a fresh barrier a wait for parity 1 passes at once (it names the phase before phase 0).
        if (e.pass && sideOf(e.agent) === 'P') add(i, es, 3, `the producer's wait on ${name} passed${e.phase === 0 && (e.parity & 1) === 1 ? ' at once (the buffer starts free: no phase has completed yet)' : ''}`);
      } else if (e.e === 'arrive' && (e.agent < 0 || sideOf(e.agent) === 'C')) add(i, es, 2, `the consumer arrived on ${name} (pending ${e.pending})`);
    }
  });
  return out;
}

/** The last cycle step at or before event `ev`, or null. */
export function cycleAt(c: CycleIndex, ev: number): CycleStep | null {
  const j = lastLE(c.ev, ev);
  return j >= 0 ? c.steps[j]! : null;
}
