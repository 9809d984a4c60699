/**
 * The waiter history of the checker (`Extra.hist`): per (agent, barrier key it may wait on) slot,
 * two words: the last phase the agent's wait observed on that barrier, plus one (0 for a pass
 * before any phase completed; {@link NEVER} before its first pass), and the position of that wait
 * `pc × 2 + stale` (stale: a pass of the same wait instruction that re-observed the phase it saw
 * last; 0 before the first pass). Each value is a plain exact integer (the encodings write a
 * slot with {@link putHistSlot}: one word while small, exact words beyond), so neither the phase nor the position
 * wraps at any count the machine can reach (phases are exact integers, PTX ISA §9.7.13.15.4 leaves
 * the phase count unbounded; only its parity is architectural).
 */

import { getWide, putWide } from './wide-words.js';

/** Words per waiter slot in `Extra.hist`. */
export const HIST_WORDS = 2;

/** The phase word of a slot whose agent never passed a wait on its barrier. */
export const NEVER = -2;

/** A fresh history of `len` words ({@link HIST_WORDS} per slot): every slot {@link NEVER}. */
export function freshHist(len: number): number[] {
  const h = new Array<number>(len);
  for (let i = 0; i < len; i += HIST_WORDS) {
    h[i] = NEVER;
    h[i + 1] = 0;
  }
  return h;
}

/** The last phase observed in slot `slot` of `hist` (−1: passed before any phase completed), or null when never passed. */
export function lastObserved(hist: readonly number[], slot: number): number | null {
  const v = hist[slot]!;
  return v === NEVER ? null : v - 1;
}

/** The pc of the wait that passed last in slot `slot` (meaningful once it passed). */
export function lastPc(hist: readonly number[], slot: number): number {
  return Math.floor(hist[slot + 1]! / 2);
}

/** Whether the last pass in slot `slot` re-observed the phase the same wait had seen. */
export function lastStale(hist: readonly number[], slot: number): boolean {
  return hist[slot + 1]! % 2 === 1;
}

/** Writes a pass of the wait at `pc` that observed `observed` into slot `slot` of `hist` (in place). */
export function setPass(hist: number[], slot: number, observed: number, pc: number, stale: boolean): void {
  hist[slot] = observed + 1;
  hist[slot + 1] = pc * 2 + (stale ? 1 : 0);
}

/** Whether slot `slot` of `hist` holds exactly this pass. */
export function samePass(hist: readonly number[], slot: number, observed: number, pc: number, stale: boolean): boolean {
  return hist[slot] === observed + 1 && hist[slot + 1] === pc * 2 + (stale ? 1 : 0);
}

/** Resets slot `slot` of `hist` to never passed (in place). */
export function forgetPass(hist: number[], slot: number): void {
  hist[slot] = NEVER;
  hist[slot + 1] = 0;
}

/** Phase words (observed + 1) below this, with positions below {@link PACK_POS}, pack into one encoding word. */
const PACK_PHASE = 2 ** 18;
/** Position words (pc × 2 + stale) below this pack into one encoding word. */
const PACK_POS = 2 ** 13;
/** The marker word of a slot written in three parts by {@link putHistSlot}. */
const HIST_WIDE = -0x7fffffff;

/**
 * Writes the history slot at `hist[slot]` into the encoding scratch `sc` at `n` and returns the next
 * index. A slot whose words are small (observed phase below 2^18 − 1, pc below 4,096: every program
 * of the examples) is one word, `(phase word) << 13 | position`, or {@link NEVER}; any other slot is
 * the marker {@link HIST_WIDE} and its two words written exactly by wide-words.ts `putWide` (at
 * most three words each). The map is injective, so the canonical hash
 * and the concrete encoding identify exactly the states whose histories are equal; keeping the
 * small form one word also keeps the record hashes (and so the canonical order of a symmetry
 * group's members, forced.ts) what they are for phase counts the packed form can hold.
 * `sc` must have room for 7 words.
 */
export function putHistSlot(sc: Int32Array, n: number, hist: readonly number[], slot: number): number {
  const ph = hist[slot]!;
  const pos = hist[slot + 1]!;
  if (ph === NEVER && pos === 0) {
    sc[n] = NEVER;
    return n + 1;
  }
  if (ph >= 0 && ph < PACK_PHASE && pos >= 0 && pos < PACK_POS) {
    sc[n] = ph * PACK_POS + pos;
    return n + 1;
  }
  sc[n] = HIST_WIDE;
  return putWide(sc, putWide(sc, n + 1, ph), pos);
}

/**
 * Reads one slot written by {@link putHistSlot} from `d` at `k` into `hist` (pushed, two words)
 * and returns the next index.
 */
export function getHistSlot(d: Int32Array, k: number, hist: number[]): number {
  const w = d[k]!;
  if (w === NEVER) {
    hist.push(NEVER, 0);
    return k + 1;
  }
  if (w !== HIST_WIDE) {
    hist.push(Math.floor(w / PACK_POS), w % PACK_POS);
    return k + 1;
  }
  const [ph, k1] = getWide(d, k + 1);
  const [pos, k2] = getWide(d, k1);
  hist.push(ph, pos);
  return k2;
}

/** Sets the observed phase of slot `slot` (which has passed) to `observed`, keeping its position and stale bit (in place). */
export function moveObserved(hist: number[], slot: number, observed: number): void {
  hist[slot] = observed + 1;
}
