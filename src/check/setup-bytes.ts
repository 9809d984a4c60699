/**
 * What the search's setup allocates before its first governor reading: the initial state, its
 * encoding and the record hashes. For the largest launches this is a large share of any memory
 * bound (a PTX kernel of 66 CTAs × 1024 threads: some 150 MB of typed arrays, in about 2 s on a
 * loaded machine), and the codec that allocates it consults no governor; the check asks for it
 * first (`explore`, ./explore.ts), so that a launch whose setup cannot fit stops by `max-memory` before
 * the analysis instead of passing the bound.
 */
import type { Program } from '../machine/program.js';
import { Machine } from '../machine/machine.js';

/** Int32 words the codec writes per agent besides its frame (src/check/record-words.ts `putAgent`). */
const AGENT_WORDS = 18;
/** Int32 words per barrier and per named barrier. */
const BARRIER_WORDS = 5;

/** The smallest power of two at least `n` (a buffer that grows by doubling ends there). */
function pow2(n: number): number {
  let p = 1 << 16;
  while (p < n) p *= 2;
  return p;
}

/**
 * Bytes the search allocates to set up `program` (one thread): the machine state
 * ({@link Machine.stateBytes}), the codec's scratch and the frontier buffer that hold the encoded
 * initial state (each a doubling Int32Array, so up to twice the encoding), and two record-hash
 * arrays. An estimate from below of the frames' words (a value takes 1 to 3 words).
 */
export function searchSetupBytes(program: Program): number {
  let words = 0;
  for (const a of program.agents) words += AGENT_WORDS + program.roles[a.role]!.slots.length;
  words += BARRIER_WORDS * (program.ctas * program.barriersPerCta + program.ctas * 16);
  const encoded = pow2(words) * 4;
  const records = (2 * program.agents.length + 2) * 4 * 2;
  return new Machine(program).stateBytes() + 2 * encoded + records;
}
