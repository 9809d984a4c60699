/**
 * The scratch arrays of the stable-step questions (stable.ts: what the others can bring to each
 * barrier and named barrier while an agent stays put), and the bound on a named barrier's
 * generations those questions use (docs/CHECK.md, "Stable waits").
 */
import type { NamedBarrier } from '../machine/machine.js';

/** What the others can bring to each barrier while agent `a` stays put (stable.ts `frozenFixpoint`). */
export interface Frozen {
  arrivals: Float64Array;
  tx: Uint8Array;
  reset: Uint8Array;
  /** A wait on the barrier that some other agent passes. */
  passed: Uint8Array;
  /**
   * A wait on the barrier that some other agent passes on its current phase (relying on no
   * completion of it: the parity of the phase before).
   */
  passedNow: Uint8Array;
  /** Threads arriving on each named barrier (key cta × 16 + id). */
  named: Float64Array;
  /** Per named barrier: the thread count the others' arrivals name (0: none), or -1 when they name several. */
  namedCount: Float64Array;
  /** A step that raises the barrier's tx-count (an `expect_tx`, alone or with an arrive). */
  txUp: Uint8Array;
  /** The bytes all sources together can credit to the barrier (over every phase; Infinity: not known). */
  delivered: Float64Array;
}

/** The arrays of one stable-step question (stable.ts `frozenFixpoint`), at least as long as the state's barriers and named barriers. */
export interface Scratch {
  gated: Uint8Array;
  /** Per barrier: how many phase completions the others can bring while A stays put (0 while gated). */
  comps: Float64Array;
  namedGated: Uint8Array;
  /** Per named barrier: how many generations the others can complete while A stays put (0 while gated). */
  namedComps: Float64Array;
  f: Frozen;
  need: Float64Array;
  /** Per barrier: the fewest bytes any arrival source registers per arrival (Infinity: no arrival source). */
  raiseMin: Float64Array;
}
let scratch: Scratch | null = null;

/**
 * The scratch arrays for a question about `n` barriers and `nn` named barriers: allocated once and
 * grown as needed (allocating five typed arrays per question was most of the question's cost). A
 * question runs to its end before the next one starts (no re-entry), so one set serves them all;
 * each question fills the first `n` / `nn` entries it reads.
 */
export function scratchFor(n: number, nn: number): Scratch {
  if (!scratch || scratch.gated.length < n || scratch.namedGated.length < nn) {
    const cn = Math.max(n, scratch?.gated.length ?? 0, 16);
    const cnn = Math.max(nn, scratch?.namedGated.length ?? 0, 16);
    scratch = {
      gated: new Uint8Array(cn), comps: new Float64Array(cn), namedGated: new Uint8Array(cnn), namedComps: new Float64Array(cnn), need: new Float64Array(cnn), raiseMin: new Float64Array(cn),
      f: { arrivals: new Float64Array(cn), tx: new Uint8Array(cn), reset: new Uint8Array(cn), passed: new Uint8Array(cn), passedNow: new Uint8Array(cn), named: new Float64Array(cnn), namedCount: new Float64Array(cnn), txUp: new Uint8Array(cn), delivered: new Float64Array(cn) },
    };
  }
  return scratch;
}

/** The scratch arrays of the question running now (set up by {@link scratchFor}). */
export function currentScratch(): Scratch {
  return scratch!;
}

/**
 * How many generations of a named barrier, its current one first, can complete when `threads`
 * more threads can arrive on it (the forward runs' arrivals, in threads): none while the current
 * generation's count (`nb.count` once a thread joined it, else `need`) is not reached, then one
 * more for every `min(count, need)` threads, since each later generation needs at least the
 * smallest count any arrival names (`need`; Infinity when none arrives). An upper bound: a run's
 * j-th `bar.sync` on the barrier, which waits for a generation at least j − 1 past the current
 * one, can pass only when it is at least j.
 */
export function namedGenerations(nb: Pick<NamedBarrier, 'arrived' | 'count'>, threads: number, need: number): number {
  const count = nb.arrived > 0 ? nb.count : need;
  const total = nb.arrived + threads;
  if (!(threads > 0) || total < count) return 0;
  const later = Math.min(count, need);
  return later > 0 ? 1 + Math.floor((total - count) / later) : Infinity;
}
