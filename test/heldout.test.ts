import { describe, expect, test } from 'vitest';
import { gpipeRows, isHeldOut, loadGpipe, summarize, type GpipeConfig } from '../src/bench/heldout.js';
import { H200 } from '../src/sim/timing.js';

// Held-out validation against hw/results/model.json (src/bench/heldout.ts). The ceilings are the
// figures the model reaches (rounded up), not the targets of median 3% and max 15%: where a
// ceiling is above a target, the model does not meet it for that kind (docs/HARDWARE.md says why).
const CEILINGS: Record<string, [median: number, max: number]> = {
  consumers: [0.008, 0.019],
  stream_l2: [0.005, 0.132],
  stream_hbm: [0.009, 0.054],
  mainloop_tma: [0.042, 0.044],
  mainloop_wgmma: [0.020, 0.033],
  multicast: [0.024, 0.115],
  persistent: [0.016, 0.032],
  all: [0.009, 0.132],
};

describe('held-out validation (hw/results/model.json)', () => {
  const configs = loadGpipe();

  test('the split is fixed: every third configuration of each family, in file order', () => {
    expect(configs.length).toBe(243);
    const held = isHeldOut(configs);
    expect(held.filter(Boolean).length).toBe(80);
    const fam = (f: string) => configs.map((c, i) => [c, held[i]] as [GpipeConfig, boolean]).filter(([c]) => c.family === f).map(([, h]) => h);
    expect(fam('consumers').slice(0, 6)).toEqual([false, false, true, false, false, true]);
  });

  test('distinct-address L2 streams share the L2 by CTA count: 33 CTAs × 64 KiB at S=3 are bandwidth-bound, not at the producer rate', () => {
    const rows = gpipeRows(configs.filter((c) => c.family === 'stream' && c.source === 'l2_distinct' && c.tile_bytes === 65536 && c.stages === 3 && (c.ctas === 1 || c.ctas === 33)), H200);
    const [one, many] = [rows.find((r) => r.config.includes(' 1cta'))!, rows.find((r) => r.config.includes(' 33cta'))!];
    // measured 720 and 1147 cycles an iteration (ratio 1.59); a hard GPU-wide cap predicted 630 for
    // both, the share 8500 / (n - 1 + 92) 957 at 33 CTAs (-16.6%)
    expect(many.predicted / one.predicted).toBeGreaterThan(1.4);
    expect(Math.abs(many.error)).toBeLessThan(0.1);
  });

  test('the distinct-address share reaches a GPU-wide cap: 132 CTAs × 64 KiB read at 34-35 B/cycle an SM', () => {
    const rows = gpipeRows(configs.filter((c) => c.family === 'stream' && c.source === 'l2_distinct' && c.tile_bytes === 65536 && c.ctas === 132), H200);
    // measured 1913 (S=2) and 1867 (S=3) cycles an iteration; the share 8500 / (n - 1 + 92) gave 1720 for both
    expect(rows.length).toBe(2);
    for (const r of rows) expect(Math.abs(r.error), r.config).toBeLessThan(0.05);
  });

  test('two warpgroups run 4 wgmma each (model.cu records the stage total): fed from HBM they loop faster than one warpgroup running all 8', () => {
    const pick = (f: string) => configs.filter((c) => c.family === f && c.ctas === 1 && c.stages === 6 && c.source === 'hbm');
    const [one] = gpipeRows(pick('mainloop_wgmma1'), H200);
    const [two] = gpipeRows(pick('mainloop_wgmma2'), H200);
    // measured 1117 and 906 cycles a stage
    expect(one!.measured).toBeGreaterThan(two!.measured * 1.2);
    expect(two!.predicted).toBeLessThan(one!.predicted * 0.85);
    expect(Math.abs(two!.error)).toBeLessThan(0.1);
  });

  test('held-out median and max |error| per kind stay within what the model reaches', () => {
    const rows = gpipeRows(configs, H200);
    const s = summarize(rows.filter((r) => r.heldOut));
    expect(s.map((x) => x.kind).sort()).toEqual(Object.keys(CEILINGS).sort());
    for (const x of s) {
      const [med, max] = CEILINGS[x.kind]!;
      expect(x.median, `${x.kind} median`).toBeLessThanOrEqual(med);
      expect(x.max, `${x.kind} max`).toBeLessThanOrEqual(max);
    }
  });
});
