/**
 * The exhaustive explorer: breadth-first over every interleaving of agents and asynchronous
 * completions, driving the machine's own `apply`. States are deduplicated by a canonical 64-bit
 * hash (see codec.ts, which also does the symmetry reduction).
 *
 * Partial-order reduction: from every successor, forced steps (single-transition ample sets) are
 * applied in a chain until none is left; intermediate states are hashed into the visited set (so
 * other paths stop there) but never stored or expanded. A forced step is
 *   - an agent's `local` step (work, fences, commit_group) or `issue` step (TMA, bulk store, MMA,
 *     commit, cp.async, remote arrive: only starts an async op), unless it ends the agent;
 *   - a tcgen05.mma completion (its accesses stay visible as a ghost until a later commit of its
 *     issuer lands);
 *   - a TMA landing that cannot complete its phase (pending 0, bytes left after it, no direct
 *     expect_tx/complete_tx on that barrier array, no remote signal to it in flight); its write
 *     stays visible as a ghost until the phase completes.
 * Forced steps commute with every other transition (C1), and are invisible to the hazards (C2):
 * accesses they start or end stay visible (in flight or as ghosts). Chains are finite (C3).
 * docs/CHECK.md states the argument in full.
 *
 * Hazards are detected on transitions (diagnostics, accesses against in-flight intervals and
 * ghosts, passing waits, phase completions, exits) and on states (hang, co-enabled conflicting
 * generic accesses), so detection does not depend on the path that reached a state.
 */
import type { Program } from '../machine/program.js';
import { exploreParallel } from './parallel.js';
import { search, stoppedInSetup } from './search.js';
import { DEFAULT_BOUNDS, type ExploreOptions, type ExploreResult } from './engine.js';
import { BoundReached, Governor } from '../machine/governor.js';
import { searchSetupBytes } from './setup-bytes.js';

export {
  DEFAULT_BOUNDS, decodeChoice, encodeChoice, grow, growthGuard, keyOf, MAX_HAZARDS, stopOf,
  type ExploreOptions, type ExploreResult, type HashSet, type ParHooks, type Progress, type RawHazard, type SearchApi,
} from './engine.js';
export { cloneFor } from './clone.js';
export { opAccesses } from './ghosts.js';
export { search } from './search.js';

/** Runs the exhaustive search. */
export function explore(program: Program, opts: ExploreOptions = {}): ExploreResult {
  // The setup's allocations come before any reading of the search's: asked for first (each thread sets up its own copy).
  const t0 = Date.now();
  const gov = opts.governor ?? new Governor({ maxMemory: opts.maxMemory ?? DEFAULT_BOUNDS.maxMemory });
  if (!gov.allow(searchSetupBytes(program) * Math.max(1, opts.workers ?? 1))) return stoppedInSetup(new BoundReached(gov.stoppedBy ?? 'max-memory'), gov, t0);
  if ((opts.workers ?? 1) > 1) return exploreParallel(program, opts);
  return search(program, opts, null) as ExploreResult;
}
