/**
 * `mbsim run --trace` within `--max-memory`: building the trace from the records stops at
 * BUILD_AT of the bound (the rest is for writing it), and what was left out is said in the file
 * (`outputStopped`), on stdout, and by exit 3. The resident set the output budget reads is made
 * to stand at 95 % of the bound (between BUILD_AT and the bound), so the outcome is exact.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { BUILD_AT, outputBudget } from '../src/cli/budget.js';
import { main } from '../src/cli/main.js';

const MiB = 1048576;
/**
 * The --max-memory of the runs (MB): the simulation's own governor reads the real resident set
 * against 30 % of it, so it must stay well above what a test worker holds (over 300 MB after a
 * few runs), or the simulation stops at step 0 instead of the output.
 */
const BOUND_MB = 4000;

afterEach(() => vi.restoreAllMocks());

describe('the output budget while a document is built', () => {
  test('building stops past BUILD_AT of the bound; writing goes on below the bound', () => {
    const b = outputBudget(1000, Infinity, () => 950, null);
    expect(BUILD_AT).toBeLessThan(0.95);
    let calls = 0;
    while (!b.build()) calls++;
    expect(calls).toBe(1023); // looked at once per 1024 calls
    expect(b.stoppedBy()).toBe('--max-memory');
    expect(b.trailer(7)).toEqual({ outputStopped: { by: '--max-memory', omitted: 7 } });
    // The stream still writes: 950 bytes are under the bound of 1000.
    const js = b.stream();
    const text = [...js.chunks({ a: Array.from({ length: 3000 }, (_, i) => i) })].join('');
    expect(JSON.parse(text).a).toHaveLength(3000);
    expect(js.cut).toBe(0);
  });

  test('under BUILD_AT nothing stops', () => {
    const b = outputBudget(1000, Infinity, () => 850, null);
    for (let i = 0; i < 5000; i++) expect(b.build()).toBe(false);
    expect(b.stoppedBy()).toBe(null);
    expect(b.trailer(0)).toBe(null);
  });
});

describe('mbsim run --trace at the memory bound', () => {
  const run = async (args: string[], rssAt: number | null) => {
    if (rssAt !== null) {
      const real = process.memoryUsage.rss.bind(process.memoryUsage);
      // Only the output budget (src/cli/budget.ts) sees the resident set at `rssAt`.
      vi.spyOn(process.memoryUsage, 'rss').mockImplementation(() => (new Error().stack!.includes('/cli/budget.') ? rssAt : real()));
    }
    const out: string[] = [];
    const code = await main(args, { out: (s) => out.push(s), err: () => undefined, color: false });
    return { code, out: out.join('\n') };
  };

  test('the trace is cut short, says so, and the run exits 3', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mbsim-trace-budget-'));
    const whole = join(dir, 'whole.json');
    const cut = join(dir, 'cut.json');
    const args = (f: string) => ['run', 'pipeline', '--set', 'K=2000', '--max-memory', String(BOUND_MB), '--trace', f];
    const a = await run(args(whole), null);
    expect(a.code).toBe(0);
    const full = JSON.parse(readFileSync(whole, 'utf8')) as { traceEvents: unknown[]; outputStopped?: unknown };
    expect(full.outputStopped).toBeUndefined();

    const b = await run(args(cut), 0.95 * BOUND_MB * MiB);
    expect(b.code).toBe(3);
    const doc = JSON.parse(readFileSync(cut, 'utf8')) as { traceEvents: unknown[]; outputStopped: { by: string; omitted: number } };
    expect(doc.outputStopped.by).toBe('--max-memory');
    expect(doc.outputStopped.omitted).toBeGreaterThan(0);
    expect(doc.traceEvents.length).toBeGreaterThan(1000);
    expect(doc.traceEvents.length).toBeLessThan(full.traceEvents.length);
    expect(b.out).toContain(`the trace was cut short by --max-memory: ${doc.outputStopped.omitted.toLocaleString('en-US')} of its events left out`);
  }, 60_000);
});
