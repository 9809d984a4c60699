/**
 * The hash primitives of the canonical state hash (codec.ts): murmur3-style lanes over record words,
 * the per-barrier hash and the canonical order of a symmetry group's members.
 */
import type { MBarrier } from '../model/mbarrier.js';

/**
 * Writes `agents` into `out` from `start`, ordered by their record hashes `rh` (h1, then h2; equal
 * records keep their index order): the canonical order of a symmetry group's members, used by the
 * state hash and by the explorer's choice of forced step alike. Insertion sort (groups are small).
 */
export function sortByRecord(agents: readonly number[], rh: Int32Array, out: Int32Array, start: number): void {
  for (let i = 0; i < agents.length; i++) {
    const v = agents[i]!;
    let j = start + i;
    while (j > start) {
      const u = out[j - 1]!;
      const d = rh[2 * u]! - rh[2 * v]! || rh[2 * u + 1]! - rh[2 * v + 1]!;
      if (d <= 0) break;
      out[j] = u;
      j--;
    }
    out[j] = v;
  }
}

/** Result pair of {@link mixRange}. */
export const H = new Int32Array(2);

export function mix1(h1: number, v: number): number {
  let k = Math.imul(v, 0xcc9e2d51);
  k = (k << 15) | (k >>> 17);
  k = Math.imul(k, 0x1b873593);
  h1 ^= k;
  h1 = (h1 << 13) | (h1 >>> 19);
  return (Math.imul(h1, 5) + 0xe6546b64) | 0;
}

export function mix2(h2: number, v: number): number {
  let j = Math.imul(v ^ 0x5bd1e995, 0x85ebca77);
  j = (j << 11) | (j >>> 21);
  h2 = Math.imul(h2 ^ j, 0xc2b2ae3d);
  h2 = (h2 << 17) | (h2 >>> 15);
  return (h2 + 0x27d4eb2f) | 0;
}

/** 64-bit hash (into H) of barrier `b` at key `j`: two murmur3 lanes over its fields, finalized. */
export function barHash(j: number, b: MBarrier): void {
  let h1 = 0x243f6a88;
  let h2 = 0x85a308d3;
  const st = b.status === 'valid' ? 1 : b.status === 'uninit' ? 0 : 2;
  h1 = mix1(h1, j);
  h2 = mix2(h2, j);
  h1 = mix1(h1, st);
  h2 = mix2(h2, st);
  h1 = mix1(h1, b.phase);
  h2 = mix2(h2, b.phase);
  if (b.phase > 0x7fffffff) {
    // Phases are unbounded: the high word too, so phases 2^32 apart do not hash alike.
    const hi = Math.floor(b.phase / 2 ** 32);
    h1 = mix1(h1, hi);
    h2 = mix2(h2, hi);
  }
  h1 = mix1(h1, b.pending);
  h2 = mix2(h2, b.pending);
  h1 = mix1(h1, b.expected);
  h2 = mix2(h2, b.expected);
  h1 = mix1(h1, b.tx);
  h2 = mix2(h2, b.tx);
  H[0] = fmix(h1 ^ 6);
  H[1] = fmix(h2 ^ 0x5bd1e995);
}

/** murmur3's 32-bit finalizer. */
export function fmix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}

/**
 * Two independent 32-bit lanes over sc[from, to) continuing from (h1, h2); result in H (finalized
 * by the callers: `Codec.record` results enter `Codec.combine`'s murmur mixes, which
 * ends in murmur3's finalizer). One multiply per word and lane: lane 1 multiplies then folds the
 * high bits down, lane 2 adds, rotates and multiplies with another odd constant, so each word moves
 * every later bit of both lanes and the two lanes never agree on a collision by construction.
 */
export function mixRange(sc: Int32Array, from: number, to: number, h1: number, h2: number): void {
  for (let i = from; i < to; i++) {
    const v = sc[i]!;
    h1 = Math.imul(h1 ^ v, 0x9e3779b1);
    h1 ^= h1 >>> 15;
    h2 = (h2 + v) | 0;
    h2 = Math.imul((h2 << 13) | (h2 >>> 19), 0x85ebca77);
  }
  H[0] = fmix(h1 ^ (to - from));
  H[1] = fmix(h2 ^ 0x27d4eb2f);
}
