import { describe, expect, test } from 'vitest';
import { gpipeRows, isHeldOut, loadGpipe, summarize, type GpipeConfig } from '../src/bench/heldout.js';
import { H200 } from '../src/sim/timing.js';

// Held-out validation against hw/results/model.json (src/bench/heldout.ts). The ceilings are the
// figures the model reaches (rounded up), not the targets of median 3% and max 15%: where a
// ceiling is above a target, the model does not meet it for that kind (docs/HARDWARE.md says why).
const CEILINGS: Record<string, [median: number, max: number]> = {
  consumers: [0.085, 0.115],
  stream_l2: [0.13, 0.46],
  stream_hbm: [0.08, 0.125],
  mainloop_tma: [0.05, 0.47],
  mainloop_wgmma: [0.04, 0.23],
  multicast: [0.13, 0.16],
  persistent: [0.145, 0.15],
  all: [0.085, 0.47],
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
