/**
 * Start time of the `mbsim` command: `mbsim check` on a 10-line sketch, run as a fresh process,
 * with the installed command (dist/bin/mbsim.cjs, scripts/bundle.mjs: the bundle through its code
 * cache, src/cli/code-cache.ts), the same bundle without the cache (its first run, or
 * NODE_DISABLE_COMPILE_CACHE), and the unbundled modules tsc writes (dist/cli/bin.js), all from the
 * same `npm run build`; and, when `BENCH_STARTUP_BEFORE` names another build's entry (an earlier
 * commit's `dist/bin/mbsim.js`, say), that one. Wall time per run in milliseconds (the fastest and
 * the median of `runs`, the commands taking turns), next to a bare `node -e 0` as the floor. Where
 * the environment sets `NODE_EXTRA_CA_CERTS`, `node -e 0` and the installed command are also timed
 * without it, as on a machine that does not set it.
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

/** One command of the comparison: node's arguments, extra environment and variables left out of it. */
interface Cmd {
  args: string[];
  env?: Record<string, string>;
  unset?: string[];
}

/** The process's environment with `c`'s changes. */
function envOf(c: Cmd): NodeJS.ProcessEnv {
  const env = { ...process.env, ...c.env };
  for (const k of c.unset ?? []) delete env[k];
  return env;
}

/** Each command `runs` times, taking turns (so that a change of the machine's load hits all alike). */
function timeAll(cmds: Cmd[], runs: number): Timed[] {
  const t: number[][] = cmds.map(() => []);
  for (let i = 0; i < runs; i++) {
    cmds.forEach((c, k) => {
      const t0 = process.hrtime.bigint();
      const r = spawnSync(process.execPath, c.args, { stdio: ['ignore', 'ignore', 'pipe'], env: envOf(c) });
      t[k]!.push(Number(process.hrtime.bigint() - t0) / 1e6);
      if (r.status !== 0) throw new Error(`node ${c.args.join(' ')} exited ${r.status}: ${r.stderr}`);
    });
  }
  return t.map((x) => {
    x.sort((a, b) => a - b);
    return { minMs: x[0]!, medianMs: x[x.length >> 1]! };
  });
}

/** The start times of `mbsim check` on {@link TINY_SKETCH}. */
export interface StartTimes {
  /** `node -e 0`. */
  node: Timed;
  /** The installed command, its code cache written by an earlier run. */
  bundled: Timed;
  /** The same without the code cache. */
  uncached: Timed;
  /** tsc's modules. */
  unbundled: Timed;
  /** `BENCH_STARTUP_BEFORE`'s build, when given. */
  before?: Timed;
  /**
   * When the environment sets `NODE_EXTRA_CA_CERTS` (Node reads and parses that certificate file at
   * every start, before any of mbsim runs): `node -e 0` and the installed command without it.
   */
  noCerts?: { node: Timed; bundled: Timed };
}

/** The start times of `mbsim check` on {@link TINY_SKETCH} (null when the build is missing). */
export function startupBench(runs = 15, before = process.env.BENCH_STARTUP_BEFORE): StartTimes | null {
  const dist = join(dirname(fileURLToPath(import.meta.url)), '..');
  const bundled = join(dist, 'bin', 'mbsim.cjs');
  const unbundled = join(dist, 'cli', 'bin.js');
  if (!existsSync(bundled) || !existsSync(unbundled)) return null;
  if (before !== undefined && !existsSync(before)) throw new Error(`BENCH_STARTUP_BEFORE: no such file: ${before}`);
  const dir = mkdtempSync(join(tmpdir(), 'mbsim-start-'));
  try {
    const file = join(dir, 'tiny.mbk');
    writeFileSync(file, TINY_SKETCH);
    // The bench's own code cache folder: the first run writes it, as a user's first run does.
    const cached = { MBSIM_CACHE_DIR: join(dir, 'cache') };
    const certs = process.env.NODE_EXTRA_CA_CERTS ? ['NODE_EXTRA_CA_CERTS'] : null;
    const cmds: Cmd[] = [
      { args: ['-e', '0'] },
      { args: [bundled, 'check', file], env: cached },
      { args: [bundled, 'check', file], env: { NODE_DISABLE_COMPILE_CACHE: '1' } },
      { args: [unbundled, 'check', file] },
      ...(certs ? [{ args: ['-e', '0'], unset: certs }, { args: [bundled, 'check', file], env: cached, unset: certs }] : []),
      ...(before !== undefined ? [{ args: [before, 'check', file] }] : []),
    ];
    // One run of each first: the file cache is warm for all, and the code cache written.
    timeAll(cmds, 1);
    const t = timeAll(cmds, runs);
    const [node, b, u, ub] = t;
    const old = before !== undefined ? t[t.length - 1] : undefined;
    return { node: node!, bundled: b!, uncached: u!, unbundled: ub!, ...(certs ? { noCerts: { node: t[4]!, bundled: t[5]! } } : {}), ...(old ? { before: old } : {}) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The bench's lines: the start times and their ratios (target: under 150 ms for the installed command). */
export function startupReport(runs = 15): string[] {
  const r = startupBench(runs);
  if (!r) return ['skipped: dist/bin/mbsim.cjs or dist/cli/bin.js missing (npm run build)'];
  const ms = (t: Timed) => `${t.minMs.toFixed(0).padStart(4)} ms (median ${t.medianMs.toFixed(0)})`;
  const ratio = (a: Timed, b: Timed) => `${(a.minMs / b.minMs).toFixed(1)}x (fastest runs), ${(a.medianMs / b.medianMs).toFixed(1)}x (medians)`;
  return [
    `node -e 0 (the floor):                          ${ms(r.node)}`,
    ...(r.before ? [`before (BENCH_STARTUP_BEFORE):                  ${ms(r.before)}`] : []),
    `unbundled (dist/cli/bin.js, tsc):               ${ms(r.unbundled)}`,
    `bundle without its code cache (a first run):    ${ms(r.uncached)}`,
    `installed command (dist/bin/mbsim.cjs, cached): ${ms(r.bundled)}  (target < 150 ms)`,
    `installed command vs unbundled: ${ratio(r.unbundled, r.bundled)} faster start${r.before ? `; vs before: ${ratio(r.before, r.bundled)}` : ''}`,
    `beyond node's own start: ${(r.bundled.minMs - r.node.minMs).toFixed(0)} ms (fastest runs), ${(r.bundled.medianMs - r.node.medianMs).toFixed(0)} ms (medians)`,
    ...(r.noCerts
      ? [
          'without NODE_EXTRA_CA_CERTS (set here: Node parses its certificates at every start, before mbsim runs):',
          `  node -e 0:                                    ${ms(r.noCerts.node)}`,
          `  installed command (cached):                   ${ms(r.noCerts.bundled)}  (target < 150 ms)`,
        ]
      : []),
  ];
}
