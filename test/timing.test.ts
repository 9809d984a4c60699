import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { errorReport, loadConfigs, predict, type PipelineConfig } from '../src/bench/calibrate.js';
import { H200, mergeTiming, TimingError } from '../src/sim/timing.js';

describe('H200 timing calibration (hw/results/pipeline.json)', () => {
  test('the defaults meet the targets: median |error| ≤ 5%, max ≤ 15% over every configuration', () => {
    const configs = loadConfigs();
    expect(configs.length).toBe(121);
    const r = errorReport(configs, H200);
    expect(r.median).toBeLessThanOrEqual(0.05);
    expect(r.max).toBeLessThanOrEqual(0.15);
  });

  test('a stream that idles between copies reads at its own rate: S=1 under load stays near the 1-CTA time', () => {
    const c = (ctas: number): PipelineConfig => ({
      stages: 1, tile_bytes: 65536, work_cycles: 0, ctas, source: 'l2_hot', consumer_wait: 'try_wait_all_lanes', trace: false, cycles_per_iter: 0, mean_cycles_per_iter: 0,
    });
    const one = predict(c(1), H200);
    expect(predict(c(132), H200) / one).toBeLessThan(1.1);
  });

  test('saturated HBM: 132 CTAs × 64 KiB at S=2 run at the HBM bandwidth', () => {
    const c: PipelineConfig = {
      stages: 2, tile_bytes: 65536, work_cycles: 0, ctas: 132, source: 'hbm_stream', consumer_wait: 'try_wait_all_lanes', trace: false, cycles_per_iter: 0, mean_cycles_per_iter: 0,
    };
    const bound = (132 * 65536) / H200.hbmBytesPerCycle.value;
    const p = predict(c, H200);
    expect(p).toBeGreaterThanOrEqual(bound * 0.98);
    expect(p).toBeLessThan(bound * 1.1);
  });

  test('tmaTensorExtra is signed; other parameters are not', () => {
    expect(mergeTiming(H200, { tmaTensorExtra: -50 }).tmaTensorExtra.value).toBe(-50);
    expect(() => mergeTiming(H200, { tmaLatency: -1 })).toThrow(TimingError);
  });

  test('docs/HARDWARE.md lists every parameter with its value and kind; those fitted to pipeline data say so', () => {
    const doc = readFileSync('docs/HARDWARE.md', 'utf8');
    for (const [k, p] of Object.entries(H200)) {
      const row = doc.split('\n').find((l) => l.startsWith(`| \`${k}\` | `));
      expect(row, k).toBeDefined();
      expect(row!.split(' | ')[1], k).toBe(String(p.value));
      if (/^fit|fitted from pipeline data/.test(p.source)) expect(row, k).toContain('**fitted**');
      else expect(row, k).not.toContain('**fitted**');
    }
  });

  test('the parameters\' sources cite data and docs a user has, not the benches\' source files; the docs sections they name exist', () => {
    const headings = new Set(readFileSync('docs/HARDWARE.md', 'utf8').split('\n').filter((l) => l.startsWith('#')).map((l) => l.replace(/^#+\s*/, '')));
    for (const [k, p] of Object.entries(H200)) {
      expect(p.source, k).not.toMatch(/\bsrc\//);
      for (const m of p.source.matchAll(/docs\/HARDWARE\.md "([^"]+)"/g)) expect(headings.has(m[1]!), `${k}: ${m[1]}`).toBe(true);
    }
  });
});
