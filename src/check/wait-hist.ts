/**
 * The waiter history of the checker (`Extra.hist`): per (agent, barrier key it may wait on) slot,
 * two words: the last phase the agent's wait observed on that barrier, plus one (0 for a pass
 * before any phase completed; {@link NEVER} before its first pass), and the position of that wait
 * `pc × 2 + stale` (stale: a pass of the same wait instruction that re-observed the phase it saw
 * last; 0 before the first pass). Each value is a plain exact integer (the codec writes words
 * outside int32 in three words, state-decode.ts `putWide`), so neither the phase nor the position
 * wraps at any count the machine can reach (phases are exact integers, PTX ISA §9.7.13.15.4 leaves
 * the phase count unbounded; only its parity is architectural).
 */

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

/** Sets the observed phase of slot `slot` (which has passed) to `observed`, keeping its position and stale bit (in place). */
export function moveObserved(hist: number[], slot: number, observed: number): void {
  hist[slot] = observed + 1;
}
