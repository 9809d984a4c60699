/**
 * The H200 mbarrier word and token encoding (docs/HARDWARE.md, "Encoding"): words written back by
 * `mbarrier.inval` and token/state upper halves recorded on a real H200 decode to the right fields,
 * and the model's encoder reproduces every recorded word and upper half.
 * Sources: FINDINGS.md §1 (shared notes) and this repo's vectors (conformance/h200/*.json).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { decodeToken, decodeWord, encodeWord, tokenWord } from '../src/model/encoding.js';
import type { MBarrier } from '../src/model/mbarrier.js';

const here = dirname(fileURLToPath(import.meta.url));
const vectorDir = join(here, '..', 'conformance', 'h200');

const bar = (phase: number, pending: number, expected: number, tx: number): MBarrier =>
  ({ status: 'valid', phase, pending, expected, tx });

/** Words written back by mbarrier.inval on the H200, with the state that produced them. */
const WORDS: { word: bigint; phaseParity: 0 | 1; pending: number; expected: number; tx: number; what: string }[] = [
  // init(count), nothing else (init_counts_then_inval; FINDINGS.md §1 gives the same four)
  { word: 0x7ffff800_001ffffen, phaseParity: 0, pending: 1, expected: 1, tx: 0, what: 'init(1)' },
  { word: 0x7ffff000_001ffffcn, phaseParity: 0, pending: 2, expected: 2, tx: 0, what: 'init(2)' },
  { word: 0x7fffe800_001ffffan, phaseParity: 0, pending: 3, expected: 3, tx: 0, what: 'init(3)' },
  { word: 0x7fffd800_001ffff6n, phaseParity: 0, pending: 5, expected: 5, tx: 0, what: 'init(5)' },
  { word: 0x7fffc800_001ffff2n, phaseParity: 0, pending: 7, expected: 7, tx: 0, what: 'init(7)' },
  { word: 0x7ffc0000_001fff00n, phaseParity: 0, pending: 128, expected: 128, tx: 0, what: 'init(128)' },
  { word: 0x7f800000_001fe000n, phaseParity: 0, pending: 4096, expected: 4096, tx: 0, what: 'init(4096)' },
  { word: 0x00000800_00000002n, phaseParity: 0, pending: 1048575, expected: 1048575, tx: 0, what: 'init(2^20-1)' },
  // FINDINGS.md §1 and init_inval_after_arrivals: init(3) + arrive + expect_tx(4096)
  { word: 0x7ffff3fe_001ffffan, phaseParity: 0, pending: 2, expected: 3, tx: 4096, what: 'init(3), arrive, expect_tx(4096)' },
  { word: 0x7fffe800_001ffff6n, phaseParity: 0, pending: 3, expected: 5, tx: 0, what: 'init(5), arrive(2)' },
  { word: 0xfffff800_001ffffcn, phaseParity: 1, pending: 1, expected: 2, tx: 0, what: 'init(2), 3 arrives' },
  // inval_word_with_tx_fields: the tx field's low 11 bits are visible only here
  { word: 0x7fffebff_fe1ffffan, phaseParity: 0, pending: 3, expected: 3, tx: 16, what: 'init(3), expect_tx(16)' },
  { word: 0x7fffe800_021ffffan, phaseParity: 0, pending: 3, expected: 3, tx: -16, what: 'init(3), complete_tx(16)' },
  { word: 0x7ffff3fe_fe1ffffcn, phaseParity: 0, pending: 2, expected: 2, tx: 2064, what: 'init(2), expect_tx(2064)' },
  { word: 0x7ffff9ff_fffffffen, phaseParity: 0, pending: 1, expected: 1, tx: -1048575, what: 'init(1), complete_tx(2^20-1)' },
  { word: 0x7ffffa00_001ffffen, phaseParity: 0, pending: 1, expected: 1, tx: 1048576, what: 'init(1), expect_tx to +2^20' },
  // drop to zero and init(0): expected field 0 (decodes as 2^20, i.e. 0 mod 2^20)
  { word: 0x80000000_00000000n, phaseParity: 1, pending: 0, expected: 1 << 20, tx: 0, what: 'init(1), arrive_drop, count-0 arrives' },
  { word: 0x80000000_00200000n, phaseParity: 1, pending: 0, expected: 1 << 20, tx: -1, what: 'init(0) (UB): (2^20)<<1 spills into the tx field' },
];

describe('recorded H200 words decode to their fields', () => {
  for (const w of WORDS) {
    it(`${w.what}: 0x${w.word.toString(16).padStart(16, '0')}`, () => {
      const d = decodeWord(w.word);
      expect(d.phaseParity).toBe(w.phaseParity);
      expect(d.pending).toBe(w.pending);
      expect(d.expected).toBe(w.expected);
      expect(d.tx).toBe(w.tx);
      expect(d.unknownBits).toBe(0); // bits 42 and 0 were never seen set
      expect(encodeWord(bar(w.phaseParity, w.pending, w.expected, w.tx))).toBe(w.word);
    });
  }
});

/** Upper halves (tokens, and states read by a count-0 arrive) recorded on the H200. */
const UPPERS: { upper: number; phaseParity: 0 | 1; pending: number; txApprox: number; what: string }[] = [
  { upper: 0x7fffd800, phaseParity: 0, pending: 5, txApprox: 0, what: 'init(5), before the first arrive' },
  { upper: 0x7fffe000, phaseParity: 0, pending: 4, txApprox: 0, what: 'init(5), before the second' },
  { upper: 0x7ffff800, phaseParity: 0, pending: 1, txApprox: 0, what: 'pending 1' },
  { upper: 0xfffff800, phaseParity: 1, pending: 1, txApprox: 0, what: 'init(1) after one phase' },
  { upper: 0xffffd800, phaseParity: 1, pending: 5, txApprox: 0, what: 'init(5) in phase 1' },
  { upper: 0x7ffffbff, phaseParity: 0, pending: 1, txApprox: 2048, what: 'expect_tx(2048)' },
  { upper: 0x7ffffbfe, phaseParity: 0, pending: 1, txApprox: 4096, what: 'expect_tx(4096)' },
  { upper: 0x7ffff801, phaseParity: 0, pending: 1, txApprox: -2048, what: 'tx -2048 (complete_tx first)' },
  { upper: 0x7ffffa00, phaseParity: 0, pending: 1, txApprox: 1048576, what: 'tx +2^20' },
  { upper: 0x7ffff9ff, phaseParity: 0, pending: 1, txApprox: -1046528, what: 'tx -(2^20-1): only 2 KiB units are visible' },
  { upper: 0x000003ff, phaseParity: 0, pending: 0, txApprox: 2048, what: 'all arrived, 16 bytes outstanding (FINDINGS.md §1): tx in (0, 2048]' },
  { upper: 0x80000000, phaseParity: 1, pending: 0, txApprox: 0, what: 'init(0) (UB)' },
];

describe('recorded H200 token halves decode to their fields', () => {
  for (const u of UPPERS) {
    it(`${u.what}: 0x${u.upper.toString(16).padStart(8, '0')}`, () => {
      const d = decodeToken(u.upper);
      expect(d.phaseParity).toBe(u.phaseParity);
      expect(d.pendingBefore).toBe(u.pending);
      expect(d.txApprox).toBe(u.txApprox);
      expect(tokenWord({ barrier: 0, phase: u.phaseParity, pendingBefore: u.pending, txBefore: u.txApprox, noComplete: false }) >>> 0)
        .toBe(u.upper >>> 0);
    });
  }
});

describe('every word and upper half in the committed vectors round-trips', () => {
  const words = new Set<string>();
  const uppers = new Set<string>();
  for (const f of readdirSync(vectorDir).filter((n) => n.endsWith('.json'))) {
    const doc = JSON.parse(readFileSync(join(vectorDir, f), 'utf8')) as {
      sequences: { steps: { observed: { word?: string; token?: string; lane_tokens?: string[]; state?: Record<string, { hi?: string }> } }[] }[];
    };
    for (const s of doc.sequences)
      for (const st of s.steps) {
        const o = st.observed;
        if (o.word) words.add(o.word);
        if (o.token) uppers.add(o.token);
        for (const t of o.lane_tokens ?? []) uppers.add(t);
        for (const b of Object.values(o.state ?? {})) if (b.hi) uppers.add(b.hi);
      }
  }
  it('found recorded words and tokens', () => {
    expect(words.size).toBeGreaterThan(10);
    expect(uppers.size).toBeGreaterThan(30);
  });
  it('words: encode(decode(w)) == w', () => {
    for (const w of words) {
      const d = decodeWord(BigInt(w));
      expect(d.unknownBits, w).toBe(0);
      expect('0x' + encodeWord(bar(d.phaseParity, d.pending, d.expected, d.tx)).toString(16).padStart(16, '0'), w).toBe(w);
    }
  });
  it('upper halves: tokenWord(decodeToken(u)) == u', () => {
    for (const u of uppers) {
      const d = decodeToken(Number(BigInt(u)));
      const back = tokenWord({ barrier: 0, phase: d.phaseParity, pendingBefore: d.pendingBefore, txBefore: d.txApprox, noComplete: false }) >>> 0;
      expect('0x' + back.toString(16).padStart(8, '0'), u).toBe(u);
    }
  });
});

describe('a pending field of 0 (FINDINGS.md P4)', () => {
  it('decodes as no arrival left, and pending_count reads 2^20 for it', async () => {
    const d = decodeWord(0n);
    expect(d.pending).toBe(0);
    expect(d.pendingCount).toBe(1 << 20);
    expect(decodeToken(0x000003ff).pendingCount).toBe(1048576);
    expect(decodeToken(0x7fffd800).pendingCount).toBe(5);
    const { pendingCount } = await import('../src/model/mbarrier.js');
    expect(pendingCount({ barrier: 0, phase: 0, pendingBefore: 0, txBefore: 16, noComplete: true })).toBe(1048576);
    expect(pendingCount({ barrier: 0, phase: 0, pendingBefore: 3, txBefore: 0, noComplete: true })).toBe(3);
  });
});
