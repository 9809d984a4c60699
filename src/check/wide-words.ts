/**
 * Exact integers in the checker's int32 state encodings (codec.ts, record-words.ts,
 * state-decode.ts): a value inside int32 is one word, any other exact integer (|v| ≤ 2^53 − 1:
 * frame values, copy sizes, phase numbers) the marker {@link WIDE} and its high and low 32 bits.
 */

/** Marks a value that takes three words (marker, high and low 32 bits): one outside int32. */
export const WIDE = -0x80000000;

/**
 * Writes `v` (an exact integer, |v| ≤ 2^53 − 1: frame values, copy sizes) at `sc[n]`: one word, or
 * {@link WIDE} and two more beyond int32. Returns the next index.
 */
export function putWide(sc: Int32Array, n: number, v: number): number {
  if ((v | 0) === v && v !== WIDE) {
    sc[n] = v;
    return n + 1;
  }
  const hi = Math.floor(v / 2 ** 32);
  sc[n] = WIDE;
  sc[n + 1] = hi;
  sc[n + 2] = v - hi * 2 ** 32;
  return n + 3;
}

/** The value {@link putWide} wrote at `d[k]` and the index after it. */
export function getWide(d: Int32Array, k: number): [number, number] {
  const w = d[k]!;
  return w !== WIDE ? [w, k + 1] : [wideAt(d, k + 1), k + 3];
}

/** The value {@link putWide} wrote at the marker word `w` whose next words are `d[k]`, `d[k + 1]`. */
export function wideAt(d: Int32Array, k: number): number {
  return d[k]! * 2 ** 32 + (d[k + 1]! >>> 0);
}
