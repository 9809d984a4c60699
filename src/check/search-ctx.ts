/**
 * What the parts of one search share: the program, its machine and analysis, the static tables,
 * the step output the detectors read, the hazard sink, and the few facts that one part learns and
 * another reads (TMA copies' barriers per buffer, the landing the reduction takes alone).
 */
import type { Machine, StepOut } from '../machine/machine.js';
import type { Program } from '../machine/program.js';
import type { Analysis } from './analysis.js';
import type { Extra } from './codec.js';
import type { SearchFacts } from './search-facts.js';
import type { HazardSink } from './search-hazards.js';

/** The shared context of one search (built once by `search`). */
export interface SearchCtx {
  p: Program;
  m: Machine;
  an: Analysis;
  f: SearchFacts;
  /** `--strict`: strict warnings (cross-proxy WAR, scope-less remote arrives, bulk stores at exit are errors). */
  strict: boolean;
  /** The output of every step the search takes (sparse events: diagnostics, phases, waits, access starts). */
  out: StepOut;
  sink: HazardSink;
  /** Per buffer key: the barrier keys TMA copies into it complete on (learnt as copies are issued). */
  fedBy: Map<number, Set<number>>;
  /** Id of the TMA op whose landing the reduction is taking alone (its write becomes a ghost), or -1. */
  tmaGhost: number;
  /** Id of the tcgen05.commit whose landing the reduction is taking alone, or -1. */
  commitGhost: number;
}

/**
 * The checker data of one transition as the detectors update it: the fields of `x` that change,
 * each still `x`'s own until a detector copies it (copy on first write); one object per search,
 * reused by every transition.
 */
export interface ExtraDraft {
  x: Extra;
  hist: Extra['hist'];
  ghosts: Extra['ghosts'];
  tghosts: Extra['tghosts'];
  cghosts: Extra['cghosts'];
  pcm: Extra['pcm'];
}
