import { describe, expect, test } from 'vitest';
import { kernel } from '../src/kernel/builder.js';
import { instantiate } from '../src/machine/program.js';
import { simulate } from '../src/sim/simulate.js';
import { H200, mergeTiming } from '../src/sim/timing.js';

/**
 * The shared L2 / HBM model of src/sim/async-schedule.ts beyond one source per run: the part of a
 * copy's bytes that reads tiles every SM reads (`tmaSharedTilePct`) and bulk stores to fresh tiles
 * sharing HBM's write rate (`bulkStoreHbm`, `hbmWriteBytesPct`). Simulated cycles, mean field over
 * `activeSms` SMs doing what the simulated CTA does.
 */

/** One lane storing a 32 KiB tile N times back to back, each store waited for. */
const stores = () => {
  const k = kernel('stores', { params: { N: 16 } });
  k.smem('ebuf', 1, 32768);
  k.role('w', { warps: 1, per: 'one' }, (r) =>
    r.for('i', 0, 'N', (r) => {
      r.bulkStore('ebuf[0]', 32768);
      r.bulkCommit();
      r.bulkWait(0, true);
    }));
  return instantiate(k.build());
};

/** A producer lane streaming 32 KiB a stage (two 16 KiB boxes) into S = 4 stages it waits on itself. */
const copies = () => {
  const k = kernel('copies', { params: { S: 4, N: 64 } });
  k.barriers('full', 'S', { count: 1 });
  k.smem('stage', 'S', 32768);
  k.role('p', { warps: 1, per: 'one' }, (r) =>
    r.for('it', 0, 'N', (r) => {
      r.let('s', 'it % S');
      r.if('it >= S', (r) => r.wait('full[s]', '((it / S) & 1) ^ 1', { form: 'try_wait' }));
      r.arriveExpectTx('full[s]', 32768);
      r.tma('stage[s]', 16384, 'full[s]', { tensor: true });
      r.tma('stage[s]', 16384, 'full[s]', { tensor: true });
    }));
  return instantiate(k.build());
};

const cycles = (p: ReturnType<typeof stores>, overrides: Record<string, number>, activeSms: number) =>
  simulate(p, { timing: mergeTiming(H200, overrides), recordSpans: false, activeSms }).cycles;

describe('shared L2 / HBM traffic of copies and stores', () => {
  test('bulk stores to fresh tiles on 132 SMs share HBM\'s write rate; on one SM they do not', () => {
    const p = stores();
    const l2 = cycles(p, {}, 132);
    const hbm = cycles(p, { bulkStoreHbm: 1 }, 132);
    // 132 SMs storing, each busy on its channel about a third of the time (the store's latency,
    // 840 cycles, follows its transfer): 70% of 2,420 B/cycle among the 40-odd storing at once, about
    // 40 B/cycle an SM against the SM's own 96: 16 stores take 35,925 cycles instead of 20,016
    expect(hbm / l2).toBeGreaterThan(1.6);
    expect(hbm).toBeGreaterThan(16 * 2000);
    // one SM alone stores at its own rate wherever the tile goes
    expect(cycles(p, { bulkStoreHbm: 1 }, 1)).toBe(cycles(p, {}, 1));
    // the write share scales with hbmWriteBytesPct
    expect(cycles(p, { bulkStoreHbm: 1, hbmWriteBytesPct: 35 }, 132)).toBeGreaterThan(hbm * 1.7);
  });

  test('a box every SM reads does not count against the distinct-address share', () => {
    const p = copies();
    const all = cycles(p, { tmaSourceL2Distinct: 1 }, 132);
    const half = cycles(p, { tmaSourceL2Distinct: 1, tmaSharedTilePct: 50 }, 132);
    // 132 SMs reading 32 KiB of distinct addresses a stage get 4,625 / 132 = 35 B/cycle each
    // (about 936 cycles a stage); with half the bytes L2-hot the distinct half takes 468
    expect(all / 64).toBeGreaterThan(880);
    expect(half / all).toBeLessThan(0.65);
    // on tiles every SM reads already (no distinct source) the percentage changes nothing
    expect(cycles(p, { tmaSharedTilePct: 50 }, 132)).toBe(cycles(p, {}, 132));
  });
});
