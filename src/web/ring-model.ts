/**
 * The full/empty protocol as data: which barrier arrays play `full` (data ready) and `empty`
 * (buffer free), who produces and who consumes (from the run's own waits and arrivals), and for a
 * cursor position each stage's barrier phases, whether a TMA copy is filling it and who holds it.
 * Pure; no DOM.
 */
import type { RunModel } from './model.js';
import { barStateAt, lastLE } from './model.js';

export interface RingPair {
  full: string;
  empty: string | null;
  stages: number;
  /** Roles that arrive on `full` (producers) and wait on it (consumers). */
  producer: string;
  consumer: string;
}

/** Guesses the full/empty arrays of a kernel: by name first, else the first two arrays of equal length. */
export function detectPair(m: RunModel): RingPair | null {
  const arrays = m.program.barriers;
  if (arrays.length === 0) return null;
  const byName = (re: RegExp) => arrays.find((b) => re.test(b.name));
  let full = byName(/full|tma|ready|load/i);
  let empty = byName(/empty|free|release/i);
  if (full && empty && full.length !== empty.length) empty = undefined;
  if (!full) {
    for (let i = 0; i < arrays.length && !full; i++)
      for (let j = i + 1; j < arrays.length; j++)
        if (arrays[i]!.length === arrays[j]!.length && arrays[i]!.length > 1) {
          full = arrays[i];
          empty = arrays[j];
          break;
        }
  }
  full ??= arrays.reduce((a, b) => (b.length > a.length ? b : a));
  return { full: full.name, empty: empty?.name ?? null, stages: full.length, ...roles(m, full.name) };
}

function roles(m: RunModel, full: string): { producer: string; consumer: string } {
  const prod = new Set<string>(), cons = new Set<string>();
  const asyncIssuer = new Map<number, number>();
  for (const e of m.events) {
    if (e.e === 'async') asyncIssuer.set(e.id, e.agent);
    if (e.e !== 'arrive' && e.e !== 'wait') continue;
    if (m.program.barrierOf(e.bar).info.name !== full) continue;
    const a = e.agent >= 0 ? e.agent : e.e === 'arrive' ? asyncIssuer.get(e.async) ?? -1 : -1;
    if (a < 0) continue;
    const role = m.program.agents[a]!.roleName;
    if (e.e === 'wait') cons.add(role);
    else prod.add(role);
  }
  return { producer: [...prod].join(', ') || 'producer', consumer: [...cons].join(', ') || 'consumer' };
}

/** Who holds a stage's buffer. */
export type Holder = 'producer' | 'tma' | 'consumer';

export interface StageState {
  stage: number;
  fullKey: number;
  emptyKey: number;
  fullPhase: number;
  emptyPhase: number;
  fullPending: number;
  fullTx: number;
  holder: Holder;
  /** TMA copies into this stage in flight at the cursor. */
  inflight: number;
}

/**
 * Per-stage in-flight TMA intervals (event index of issue and completion), for a CTA, precomputed
 * once per run.
 */
export interface RingIndex {
  pair: RingPair;
  cta: number;
  fullKeys: number[];
  emptyKeys: number[];
  /** Per stage: sorted issue event indices and matching done event indices (Infinity if never). */
  issue: number[][];
  done: number[][];
}

export function ringIndex(m: RunModel, pair: RingPair, cta: number): RingIndex {
  const p = m.program;
  const info = p.barriers.find((b) => b.name === pair.full)!;
  const einfo = pair.empty ? p.barriers.find((b) => b.name === pair.empty) : undefined;
  const keyOf = (off: number, s: number) => cta * p.barriersPerCta + off + s;
  const fullKeys = Array.from({ length: pair.stages }, (_, s) => keyOf(info.offset, s));
  const emptyKeys = Array.from({ length: pair.stages }, (_, s) => (einfo ? keyOf(einfo.offset, s) : -1));
  const stageOfFull = new Map(fullKeys.map((k, s) => [k, s]));
  const issue: number[][] = fullKeys.map(() => []), done: number[][] = fullKeys.map(() => []);
  const open = new Map<number, { s: number; j: number }>();
  m.events.forEach((e, i) => {
    if (e.e === 'async' && e.kind === 'tma') {
      const s = stageOfFull.get(e.bar);
      if (s === undefined) return;
      open.set(e.id, { s, j: issue[s]!.length });
      issue[s]!.push(i);
      done[s]!.push(Infinity);
    } else if (e.e === 'async.done') {
      const o = open.get(e.id);
      if (o) {
        done[o.s]![o.j] = i;
        open.delete(e.id);
      }
    }
  });
  return { pair, cta, fullKeys, emptyKeys, issue, done };
}

/** The stages' states after event `ev`. */
export function stagesAt(m: RunModel, r: RingIndex, ev: number): StageState[] {
  return r.fullKeys.map((fk, s) => {
    const fl = m.barLaneByKey.get(fk);
    const el = m.barLaneByKey.get(r.emptyKeys[s]!);
    const f = fl ? barStateAt(fl, ev) : { phase: 0, pending: 0, tx: 0 };
    const e = el ? barStateAt(el, ev) : { phase: 0 };
    // Copies issued at or before ev and not yet done.
    const iss = r.issue[s]!, dn = r.done[s]!;
    const upto = lastLE(iss, ev);
    let inflight = 0;
    for (let j = upto; j >= 0 && j >= upto - 64; j--) if (dn[j]! > ev) inflight++;
    const holder: Holder = f.phase > e.phase ? 'consumer' : inflight > 0 || f.tx > 0 ? 'tma' : 'producer';
    return { stage: s, fullKey: fk, emptyKey: r.emptyKeys[s]!, fullPhase: f.phase, emptyPhase: e.phase, fullPending: f.pending, fullTx: f.tx, holder, inflight };
  });
}
