/**
 * Explains a raw mbarrier word or arrive token as an engineer would read it from a kernel's printf
 * or from a dump of a hung kernel: the fields, what a parity waiter would see, what is outstanding.
 * Encoding: docs/HARDWARE.md, "Encoding" (read off an H200 with the conformance probes).
 */
import { decodeWord } from '../model/encoding.js';

/** A decoded value, ready to print. */
export interface Decoded {
  input: string;
  kind: 'word' | 'token';
  lines: string[];
}

/** Thrown for input that is not a hexadecimal word or token. */
export class DecodeError extends Error {}

/**
 * Decodes `text`: 9 to 16 hex digits are a 64-bit word (as `mbarrier.inval` or an eviction writes
 * it back), 1 to 8 hex digits the upper 32 bits of an arrive token. `0x` and `_` are accepted.
 * A `bigint` or a `number` (a safe integer) is the 64-bit word itself, 0 ≤ value < 2^64 (a token
 * is given as its hex text). Anything else, or a value out of range, throws a {@link DecodeError}.
 */
export function explainWord(text: string | number | bigint): Decoded {
  if (typeof text === 'number' || typeof text === 'bigint') {
    if (typeof text === 'number' && !Number.isSafeInteger(text)) throw new DecodeError(`${text} is not an integer mbsim can take exactly (a number must be a safe integer; pass a bigint or hex text)`);
    const v = BigInt(text);
    if (v < 0n || v >= 1n << 64n) throw new DecodeError(`${text} is outside a 64-bit mbarrier word (0 to 2^64 - 1)`);
    return explainWord(`0x${v.toString(16).padStart(16, '0')}`);
  }
  if (typeof text !== 'string') throw new DecodeError(`explainWord expects hex text, a number or a bigint, got ${text === null ? 'null' : typeof text}`);
  const clean = text.trim().toLowerCase().replace(/^0x/, '').replace(/_/g, '');
  if (!/^[0-9a-f]{1,16}$/.test(clean)) throw new DecodeError(`'${text}' is not a hexadecimal word (up to 16 digits) or token (up to 8 digits)`);
  const isWord = clean.length > 8;
  const value = BigInt(`0x${clean}`);
  const word = isWord ? value : value << 32n;
  const d = decodeWord(word);
  const lines: string[] = [];
  const hex = isWord ? `0x${clean.padStart(16, '0')}` : `0x${clean.padStart(8, '0')}`;
  lines.push(`${hex}  ${isWord ? '64-bit mbarrier word' : 'arrive token (upper 32 bits of the state before the arrive)'}`);
  lines.push(`  phase parity  ${d.phaseParity}                 bit 63`);
  const pendField = Number((word >> 43n) & 0xfffffn);
  if (pendField === 0) {
    lines.push(`  pending       0      arrivals    bits 62:43 are 0: every arrival of the phase is in`);
    lines.push(`  pending_count 1048576           mbarrier.pending_count reads 2^20 − bits 62:43 = 2^20 for a token with this field (docs/HARDWARE.md, Encoding), not 0`);
  } else {
    lines.push(`  pending       ${String(d.pending).padEnd(6)} arrivals    bits 62:43 hold 2^20 − pending (0x${pendField.toString(16)})`);
  }
  if (isWord) {
    const expField = Number((word >> 1n) & 0xfffffn);
    if (expField === 0) lines.push('  expected      0      arrivals    bits 20:1 are 0: the count was dropped to 0 (arrive_drop) or init(0) ran; no later phase can complete (docs/HARDWARE.md, Encoding)');
    else lines.push(`  expected      ${String(d.expected).padEnd(6)} arrivals    bits 20:1 hold 2^20 − expected`);
    lines.push(`  tx-count      ${String(d.tx).padEnd(6)} bytes       bits 41:21 hold (−tx) mod 2^21${d.tx < 0 ? ' (negative: more bytes completed than expected)' : ''}`);
  } else {
    // Tokens carry only bits 41:32 of the tx field: 2 KiB granularity.
    const hi = Number((word >> 32n) & 0x3ffn);
    const lo = hi << 11;
    const toTx = (f: number) => -(f >= 1 << 20 ? f - (1 << 21) : f);
    const a = toTx(lo);
    const b = toTx(lo | 0x7ff);
    const [min, max] = a < b ? [a, b] : [b, a];
    lines.push(`  tx-count      ${min}..${max} bytes   only bits 41:32 travel in a token (2 KiB granularity)`);
    lines.push('  expected      not in a token (bits 20:1 are in the lower half, which a token does not carry)');
  }
  const cur = d.phaseParity;
  lines.push(`  a waiter with try_wait.parity(${cur}) blocks: the phase with parity ${cur} is the current, incomplete one`);
  lines.push(`  a waiter with try_wait.parity(${cur ^ 1}) passes: parity ${cur ^ 1} names the phase just completed`);
  const out: string[] = [];
  if (d.pending > 0) out.push(`${d.pending} arrival${d.pending > 1 ? 's' : ''}`);
  if (d.tx > 0) out.push(`${isWord ? d.tx : 'up to ' + d.tx} bytes`);
  if (d.tx < 0) out.push(`an expect_tx of ${-d.tx} bytes (tx-count is negative)`);
  lines.push(`  outstanding: ${out.length ? out.join(' and ') : 'nothing — but a phase completes the moment pending and tx-count both reach 0, so a word never rests here unless expected is 0 (after arrive_drop to zero) or it was init(0)'}`);
  if (d.unknownBits) {
    const set = [...(d.unknownBits & 2 ? [42] : []), ...(d.unknownBits & 1 ? [0] : [])];
    lines.push(`  ${set.length > 1 ? 'bits 42 and 0 are' : `bit ${set[0]} is`} set: never seen set on an H200; the meaning is unknown`);
  }
  if (isWord) {
    lines.push('  note: on Hopper the live state sits in the SYNCS unit; the shared-memory copy is written back only by');
    lines.push('        mbarrier.inval or an eviction, so a word read from a live barrier can be stale (docs/HARDWARE.md, Encoding)');
  } else {
    lines.push('  note: the lower 32 bits of a .b64 token are whatever the register held before; ignore them (docs/HARDWARE.md, Encoding)');
  }
  lines.push('  inferred: bit 42 and bit 0 unused; everything else was read off an H200 (docs/HARDWARE.md)');
  return { input: text, kind: isWord ? 'word' : 'token', lines };
}
