/**
 * Start time of the `mbsim` command: `mbsim check` on a 10-line sketch, run as a fresh process,
 * with the bundled CLI (dist/bin/mbsim.js, scripts/bundle.mjs) and with the unbundled modules tsc
 * writes (dist/cli/bin.js), both from the same `npm run build`. Wall time per run in milliseconds
 * (the fastest and the median of `runs`), next to a bare `node -e 0` as the floor.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The 10-line sketch the start time is measured on: one TMA copy handed to a consumer. */
export const TINY_SKETCH = `kernel tiny arch=sm_100a
barrier full count=1
smem tile bytes=4096
role producer warps=1 per=one:
    mbarrier.arrive.expect_tx full, 4096
    cp.async.bulk.tensor tile, 4096, full
role consumer warps=1 per=one:
    mbarrier.try_wait.parity full, 0
    ld.shared tile
# end
`;

/** Fastest and median wall time of a command, in milliseconds. */
export interface Timed {
  minMs: number;
  medianMs: number;
}

function time(args: string[], runs: number): Timed {
  const t: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = process.hrtime.bigint();
    const r = spawnSync(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    t.push(Number(process.hrtime.bigint() - t0) / 1e6);
    if (r.status !== 0) throw new Error(`node ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  }
  t.sort((a, b) => a - b);
  return { minMs: t[0]!, medianMs: t[t.length >> 1]! };
}

/** The start times of `mbsim check` on {@link TINY_SKETCH}: bare node, bundled CLI, tsc output. */
export function startupBench(runs = 15): { node: Timed; bundled: Timed; unbundled: Timed } | null {
  const dist = join(dirname(fileURLToPath(import.meta.url)), '..');
  const bundled = join(dist, 'bin', 'mbsim.js');
  const unbundled = join(dist, 'cli', 'bin.js');
  if (!existsSync(bundled) || !existsSync(unbundled)) return null;
  const dir = mkdtempSync(join(tmpdir(), 'mbsim-start-'));
  try {
    const file = join(dir, 'tiny.mbk');
    writeFileSync(file, TINY_SKETCH);
    // One run of each first, so the file cache is warm for both.
    time([bundled, 'check', file], 1);
    time([unbundled, 'check', file], 1);
    return { node: time(['-e', '0'], runs), bundled: time([bundled, 'check', file], runs), unbundled: time([unbundled, 'check', file], runs) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The bench's lines: both start times and their ratio (target: under 150 ms for the bundle). */
export function startupReport(runs = 15): string[] {
  const r = startupBench(runs);
  if (!r) return ['skipped: dist/bin/mbsim.js or dist/cli/bin.js missing (npm run build)'];
  const ms = (t: Timed) => `${t.minMs.toFixed(0)} ms (median ${t.medianMs.toFixed(0)})`;
  return [
    `node -e 0 (the floor):            ${ms(r.node)}`,
    `unbundled (dist/cli/bin.js, tsc): ${ms(r.unbundled)}`,
    `bundled (dist/bin/mbsim.js):      ${ms(r.bundled)}  (target < 150 ms)`,
    `bundled / unbundled: ${(r.bundled.minMs / r.unbundled.minMs).toFixed(2)} (fastest runs), ${(r.bundled.medianMs / r.unbundled.medianMs).toFixed(2)} (medians); ${(r.unbundled.minMs / r.bundled.minMs).toFixed(1)}× faster start`,
  ];
}
