/**
 * Phase counts past int32 packing: the waiter history (check/wait-hist.ts), the state encoding and
 * the phase-alias detector stay exact at large phase numbers (a one-role arrive / wait loop once
 * reported a false phase-alias past 2^18 phases). The text report of long traces: report-long.test.ts.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { parseSketch } from '../src/lang/index.js';
import { instantiate } from '../src/machine/program.js';
import { Machine } from '../src/machine/machine.js';
import { analyse } from '../src/check/analysis.js';
import { Codec, StateBuf } from '../src/check/codec.js';
import { initialExtra } from '../src/check/search.js';
import { searchFacts } from '../src/check/search-facts.js';
import { HazardSink } from '../src/check/search-hazards.js';
import { waitDetector } from '../src/check/detect-waits.js';
import type { SearchCtx, ExtraDraft } from '../src/check/search-ctx.js';
import { getHistSlot, lastObserved, lastPc, lastStale, NEVER, putHistSlot, setPass } from '../src/check/wait-hist.js';
import { check } from '../src/check/check.js';

const LOOP = `kernel k arch=sm_90a
param N = 4
barrier b count=1
role p warps=1 per=one:
    for i in range(N):
        mbarrier.arrive b
        mbarrier.try_wait.parity b, i & 1
`;

function loopProgram() {
  const k = parseSketch(LOOP, 'loop.mbk');
  expect(k.diagnostics).toEqual([]);
  return instantiate(k.kernel!);
}

/** The pc of the loop's wait instruction. */
function waitPc(p: ReturnType<typeof loopProgram>): number {
  const pc = p.roles[0]!.code.findIndex((ins) => ins.i === 'op' && ins.op.op === 'mbarrier.wait');
  expect(pc).toBeGreaterThanOrEqual(0);
  return pc;
}

describe('waiter history and encoding at large phase numbers', () => {
  test('history words keep phases past 2^18, 2^31 and 2^32 exactly', () => {
    const h = [-2, 0];
    for (const o of [2 ** 18, 2 ** 18 + 1, 2 ** 31 + 5, 2 ** 40 + 3]) {
      setPass(h, 0, o, 4097, true);
      expect(lastObserved(h, 0)).toBe(o);
      expect(lastPc(h, 0)).toBe(4097); // past the old 12-bit pc field too
      expect(lastStale(h, 0)).toBe(true);
    }
    expect(lastObserved([-2, 0], 0)).toBe(null);
  });

  test('a history slot is one word while it fits the packed form, exact words beyond, and reads back', () => {
    const cases: [number, number, number][] = [
      // [phase word, position word, encoded words]
      [NEVER, 0, 1], [0, 0, 1], [5, 2 * 7 + 1, 1], [2 ** 18 - 1, 2 ** 13 - 1, 1],
      [2 ** 18, 0, 3], [3, 2 ** 13, 3], [2 ** 31, 9, 5], [2 ** 40 + 3, 2 * 5000, 5], [NEVER, 4, 3],
    ];
    const seen = new Set<string>();
    for (const [ph, pos, words] of cases) {
      const sc = new Int32Array(8);
      const n = putHistSlot(sc, 0, [ph, pos], 0);
      expect(n).toBe(words);
      const back: number[] = [];
      expect(getHistSlot(sc, 0, back)).toBe(n);
      expect(back).toEqual([ph, pos]);
      seen.add([...sc.subarray(0, n)].join(','));
    }
    expect(seen.size).toBe(cases.length); // injective on these
    // The packed word is the former int32 packing, so record hashes of small histories are unchanged.
    const sc = new Int32Array(8);
    putHistSlot(sc, 0, [12, 2 * 40 + 1], 0);
    expect(sc[0]).toBe((12 << 13) | (40 << 1) | 1);
  });

  test('a state with phases past int32 encodes, decodes and hashes exactly', () => {
    const p = loopProgram();
    const an = analyse(p);
    const m = new Machine(p);
    const s = m.initial();
    const codec = new Codec(p, an, s);
    const x = initialExtra(p, an);
    const slot = an.waitSlots[0]!.get(0)!;
    const big = 2 ** 40 + 6;
    s.bars[0]!.phase = big;
    setPass(x.hist, slot, big - 1, waitPc(p), false);
    const buf = new StateBuf();
    codec.encode(s, x, buf, 0);
    const back = codec.decode(buf, 0);
    expect(back.s.bars[0]!.phase).toBe(big);
    expect(lastObserved(back.x.hist, slot)).toBe(big - 1);
    expect(back.x.hist).toEqual(x.hist);
    // Phases 2^32 apart are different states.
    const h1 = new Uint32Array(2);
    const h2 = new Uint32Array(2);
    codec.hash(s, x, h1);
    const t = { ...s, bars: s.bars.map((b) => ({ ...b, phase: b.phase + 2 ** 32 })) };
    codec.hash(t, x, h2);
    expect([...h2]).not.toEqual([...h1]);
  });
});

describe('the arrive / wait loop past 2^18 phases, end to end', () => {
  test('check is OK at 2^18 + 2 iterations (it was phase-alias from 2^18 + 1)', () => {
    const k = parseSketch(LOOP, 'loop.mbk');
    // Every iteration a stored state: with counting arrivals the lone arrive (its barrier only counts
    // arrivals) would be taken in forced chains, whose states are not stored.
    const r = check(instantiate(k.kernel!, { N: 2 ** 18 + 2 }), { timeout: 600_000, randomRuns: false, countingArrivals: false });
    expect([r.verdict, r.complete, r.hazards.map((h) => h.kind)]).toEqual(['ok', true, []]);
    expect(r.coverage.states).toBe(2 ** 18 + 3);
  }, 600_000);
});

describe('phase-alias detector at large phase numbers', () => {
  /** Runs one passing wait of the loop's agent on `b` (current phase `phase`, parity `parity`) after a last observation `last`. */
  function pass(last: number | null, phase: number, parity: 0 | 1) {
    const p = loopProgram();
    const an = analyse(p);
    const m = new Machine(p);
    const sink = new HazardSink(false);
    const ctx = { p, m, an, f: searchFacts(p, an), strict: false, sink, fedBy: new Map(), tmaGhost: -1, commitGhost: -1 } as unknown as SearchCtx;
    const s = m.initial();
    const pc = waitPc(p);
    s.agents[0]!.pc = pc;
    const x = initialExtra(p, an);
    const slot = an.waitSlots[0]!.get(0)!;
    if (last !== null) setPass(x.hist, slot, last, pc, false);
    const d: ExtraDraft = { x, hist: x.hist, ghosts: x.ghosts, tghosts: x.tghosts, cghosts: x.cghosts, pcm: x.pcm };
    const loc = p.roles[0]!.code[pc]!.i === 'op' ? (p.roles[0]!.code[pc] as { loc: { line: number; col: number } }).loc : { line: 0, col: 0 };
    waitDetector(ctx).wait({ e: 'wait', agent: 0, bar: 0, pass: true, phase, parity, loc } as never, s, s, d, 1);
    return { hazards: [...sink.hazards.values()], observed: lastObserved(d.hist, slot) };
  }

  test('the next phase after 2^18, 2^20 and 2^40 phases is no alias', () => {
    // The trial's loop at N = 2^18 + 1: the last pass observes phase 2^18 after phase 2^18 - 1.
    for (const n of [2 ** 18, 2 ** 18 + 1, 2 ** 20, 2 ** 31, 2 ** 40]) {
      const r = pass(n - 1, n + 1, (n & 1) as 0 | 1);
      expect(r.hazards).toEqual([]);
      expect(r.observed).toBe(n);
    }
  });

  test('a wait that skips phases at 2^40 is a phase-alias with exact phase numbers', () => {
    const last = 2 ** 40;
    const r = pass(last, last + 4, 1); // observes phase 2^40 + 3, due for 2^40 + 1
    expect(r.hazards.map((h) => h.kind)).toEqual(['phase-alias']);
    expect(r.hazards[0]!.message).toContain(`on phase ${last + 3} while it was due to wait for phase ${last + 1}: the barrier completed 2 phase(s) it never observed`);
  });

  test('a wait that falls behind at 2^19 is a phase-alias', () => {
    const last = 2 ** 19;
    const r = pass(last, last - 2, 0); // observes phase 2^19 - 4, due for 2^19 + 1
    expect(r.hazards.map((h) => h.kind)).toEqual(['phase-alias']);
    expect(r.hazards[0]!.message).toContain(`on phase ${last - 4}, 5 phases behind the phase ${last + 1}`);
  });
});

describe('skipping consumers at large phase numbers', () => {
  const SKIP = readFileSync(join(__dirname, 'fixtures', 'skip', 'one-role-k6.mbk'), 'utf8');

  /** c[1]'s wait on full[1] observing phase `observed` (never passed before), with c[0]'s last observation `other`. */
  function skipPass(other: number | null, observed: number) {
    const p = instantiate(parseSketch(SKIP, 'skip.mbk').kernel!);
    const an = analyse(p);
    const m = new Machine(p);
    const sink = new HazardSink(false);
    const ctx = { p, m, an, f: searchFacts(p, an), strict: false, sink, fedBy: new Map(), tmaGhost: -1, commitGhost: -1 } as unknown as SearchCtx;
    const s = m.initial();
    const c0 = p.agents.findIndex((g) => g.instance === 0 && p.roles[g.role]!.name === 'c');
    const c1 = p.agents.findIndex((g) => g.instance === 1 && p.roles[g.role]!.name === 'c');
    const full1 = 1; // full[0], full[1], empty[0], empty[1]
    const x = initialExtra(p, an);
    if (other !== null) setPass(x.hist, an.waitSlots[c0]!.get(full1)!, other, 0, false);
    const d: ExtraDraft = { x, hist: x.hist, ghosts: x.ghosts, tghosts: x.tghosts, cghosts: x.cghosts, pcm: x.pcm };
    waitDetector(ctx).wait({ e: 'wait', agent: c1, bar: full1, pass: true, phase: observed + 1, parity: (observed & 1) as 0 | 1, loc: { line: 29, col: 5 } } as never, s, s, d, 1);
    return [...sink.hazards.values()].map((h) => h.kind);
  }

  test('phases another consumer observed are skipped at 2^40; unobserved ones are a phase-alias', () => {
    const big = 2 ** 40;
    expect(skipPass(big + 1, big + 2)).toEqual([]);
    expect(skipPass(big - 3, big + 2)).toEqual(['phase-alias']);
    expect(skipPass(null, big + 2)).toEqual(['phase-alias']);
  });
});
