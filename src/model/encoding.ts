/**
 * The H200's 64-bit mbarrier word and the 32-bit arrive token, as recovered on the hardware
 * (docs/HARDWARE.md):
 *
 * ```
 *  63 | 62 ........ 43 | 42 | 41 ......... 21 | 20 ........ 1 | 0
 *  ph |  2^20-pending  | ?  | (-tx) mod 2^21  | 2^20-expected | ?
 * ```
 *
 * The live word sits in the SYNCS unit; shared memory holds it only after `mbarrier.inval` or an
 * eviction (docs/HARDWARE.md, Encoding), so a word read from shared memory of a live barrier can be stale.
 * Bits 42 and 0 were never seen set; their meaning is unknown.
 */
import type { MBarrier, Token } from './mbarrier.js';
import { argError, isRecord } from './api-args.js';

const TWO20 = 1n << 20n;
const TWO21 = 1n << 21n;

/** Fields of a decoded word. `phaseParity` is all the word holds of the phase number. */
export interface DecodedWord {
  phaseParity: 0 | 1;
  /** Arrivals still missing in the current phase; a pending field of 0 means none (all arrivals are in). */
  pending: number;
  /**
   * What `mbarrier.pending_count` returns for a token with this upper half: `2^20 − field`, a pure
   * bit extraction, so a pending field of 0 gives 2^20 = 1048576 (docs/HARDWARE.md, Encoding).
   */
  pendingCount: number;
  expected: number;
  /** Signed tx-count in bytes (negative: more bytes completed than expected). */
  tx: number;
  /** Bits 42 and 0, never seen set on an H200. */
  unknownBits: number;
}

/** The 64-bit word of a valid barrier, as `mbarrier.inval` writes it back (docs/HARDWARE.md, Encoding). */
export function encodeWord(b: MBarrier): bigint {
  if (!isRecord(b) || !(['phase', 'pending', 'expected', 'tx'] as const).every((k) => Number.isSafeInteger(b[k]))) argError('encodeWord', 'barrier', 'an MBarrier ({ phase, pending, expected, tx }: integers)', b);
  const ph = BigInt(b.phase & 1);
  const pend = (TWO20 - BigInt(b.pending)) & (TWO20 - 1n);
  const tx = ((-BigInt(b.tx)) % TWO21 + TWO21) % TWO21;
  const exp = (TWO20 - BigInt(b.expected)) & (TWO20 - 1n);
  return (ph << 63n) | (pend << 43n) | (tx << 21n) | (exp << 1n);
}

/**
 * Decodes a 64-bit word (docs/HARDWARE.md, Encoding). An expected field of 0 means 2^20 (0 mod 2^20). A pending
 * field of 0 is 0 arrivals left as barrier state (`pending`), and 2^20 as `mbarrier.pending_count`
 * reads it (`pendingCount`, docs/HARDWARE.md, Encoding).
 */
export function decodeWord(word: bigint): DecodedWord {
  if (typeof word !== 'bigint') throw new TypeError(`decodeWord: expected a bigint, got ${word === null ? 'null' : typeof word}`);
  if (word < 0n || word >= 1n << 64n) throw new RangeError(`decodeWord: a 64-bit word is 0 … 2^64 − 1, got ${word}`);
  const w = BigInt.asUintN(64, word);
  const phaseParity = Number((w >> 63n) & 1n) as 0 | 1;
  const pendField = (w >> 43n) & (TWO20 - 1n);
  const txField = (w >> 21n) & (TWO21 - 1n);
  const expField = (w >> 1n) & (TWO20 - 1n);
  const pending = pendField === 0n ? 0 : Number(TWO20 - pendField);
  const pendingCount = Number(TWO20 - pendField);
  const expected = Number(TWO20 - expField);
  const txNeg = txField >= TWO20 ? txField - TWO21 : txField; // signed 21-bit
  const unknownBits = Number(((w >> 42n) & 1n) << 1n | (w & 1n));
  return { phaseParity, pending, pendingCount, expected, tx: Number(-txNeg) === 0 ? 0 : Number(-txNeg), unknownBits };
}

/**
 * The upper 32 bits a `mbarrier.arrive` returns as its token (docs/HARDWARE.md, Encoding): the word's
 * upper half before the arrive — phase parity, pending-before, and tx bits 41:32 (2 KiB units).
 */
export function tokenWord(t: Token): number {
  const b: MBarrier = { status: 'valid', phase: t.phase, pending: t.pendingBefore, expected: 1, tx: t.txBefore };
  return Number(encodeWord(b) >> 32n) >>> 0;
}

/**
 * Decodes the upper 32 bits of a token: parity, pending-before, what `mbarrier.pending_count`
 * returns for it (2^20 for a pending field of 0, docs/HARDWARE.md, Encoding), and tx to 2 KiB granularity.
 */
export function decodeToken(upper: number): { phaseParity: 0 | 1; pendingBefore: number; pendingCount: number; txApprox: number } {
  if (typeof upper !== 'number' || !Number.isInteger(upper)) argError('decodeToken', 'upper', 'an integer (the token\'s upper 32 bits)', upper);
  const w = BigInt(upper >>> 0) << 32n;
  const d = decodeWord(w);
  return { phaseParity: d.phaseParity, pendingBefore: d.pending, pendingCount: d.pendingCount, txApprox: d.tx };
}
