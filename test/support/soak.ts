/**
 * `npm run fuzz`: the long soak of the differential oracle (test/support/differential.ts) on
 * generated kernels (test/support/gen-kernel.ts), spread over processes.
 *
 *   npm run fuzz -- [--kernels N] [--seed S] [--procs P] [--workers-every W] [--seconds T] [--quiet]
 *
 * N kernels (default 100,000) are split into P shards (default: one per core); shard i checks its
 * share with fast-check seed S + i (S defaults to the clock), so one (N, S, P) repeats exactly. Every
 * W-th kernel of a shard (default 10; 0: never) is also checked with `workers: 2` against one worker.
 * With `--seconds T` the shards stop starting kernels after T seconds (the summary counts the
 * kernels actually checked).
 * Prints kernels/s and the divergences found as it goes, each divergent kernel as IR JSON on a
 * `divergence:` line (shrink it into test/fixtures/differential/), and a final summary line
 * `soak: {...}` as JSON; exits 1 when any divergence was found, 2 on bad arguments.
 *
 * The same file is the shard (`--shard I`), started by the parent with its own Node flags, so it
 * runs from the TypeScript sources (`--import ./test/support/ts-register.mjs`) or bundled.
 */
import { fork } from 'node:child_process';
import { availableParallelism } from 'node:os';
import fc from 'fast-check';
import { kernelArb } from './gen-kernel.js';
import { compare, compareWorkers } from './differential.js';

interface Args {
  kernels: number;
  seed: number;
  procs: number;
  workersEvery: number;
  /** Wall-clock seconds after which the shards stop starting kernels (0: no limit). */
  seconds: number;
  shard?: number;
  quiet: boolean;
}

/** What a shard reports to the parent (and prints as `shard:` JSON lines when run alone). */
interface ShardReport {
  shard: number;
  kernels: number;
  compared: number;
  skipped: number;
  withHazards: number;
  workersCompared: number;
  divergences: string[];
  done: boolean;
}

function parseArgs(argv: string[]): Args {
  const a: Args = { kernels: 100_000, seed: Date.now() % 2 ** 31, procs: availableParallelism(), workersEvery: 10, seconds: 0, quiet: false };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    if (flag === '--quiet') {
      a.quiet = true;
      continue;
    }
    const val = Number(argv[++i]);
    if (!Number.isSafeInteger(val) || val < 0) usage(`${flag} needs a non-negative integer, got '${argv[i] ?? ''}'`);
    if (flag === '--kernels') a.kernels = val;
    else if (flag === '--seed') a.seed = val;
    else if (flag === '--procs') a.procs = Math.max(1, val);
    else if (flag === '--workers-every') a.workersEvery = val;
    else if (flag === '--seconds') a.seconds = val;
    else if (flag === '--shard') a.shard = val;
    else usage(`unknown flag ${flag}`);
  }
  return a;
}

function usage(msg: string): never {
  process.stderr.write(`soak: ${msg}\nusage: npm run fuzz -- [--kernels N] [--seed S] [--procs P] [--workers-every W] [--seconds T] [--quiet]\n`);
  process.exit(2);
}

/** Runs shard `i` of `a`: its share of the kernels, reporting every 250 kernels and at the end. */
function runShard(a: Args, i: number, report: (r: ShardReport) => void): void {
  const runs = Math.floor(a.kernels / a.procs) + (i < a.kernels % a.procs ? 1 : 0);
  const r: ShardReport = { shard: i, kernels: 0, compared: 0, skipped: 0, withHazards: 0, workersCompared: 0, divergences: [], done: false };
  if (runs > 0) {
    fc.assert(
      fc.property(kernelArb, (k) => {
        r.kernels++;
        const c = compare(k);
        if (!c) r.skipped++;
        else {
          r.compared++;
          if (c.full.hazards.length) r.withHazards++;
          if (c.divergences.length) r.divergences.push(`divergence: ${JSON.stringify(c.divergences)}\nkernel: ${JSON.stringify(k)}`);
        }
        if (a.workersEvery > 0 && r.kernels % a.workersEvery === 0) {
          const w = compareWorkers(k);
          if (w) {
            r.workersCompared++;
            if (JSON.stringify(w.one) !== JSON.stringify(w.two)) {
              r.divergences.push(`divergence: workers one ${JSON.stringify(w.one)} two ${JSON.stringify(w.two)}\nkernel: ${JSON.stringify(k)}`);
            }
          }
        }
        if (r.kernels % 250 === 0) report({ ...r });
        return true;
      }),
      { numRuns: runs, seed: a.seed + i, ...(a.seconds > 0 ? { interruptAfterTimeLimit: a.seconds * 1000, markInterruptAsFailure: false } : {}) },
    );
  }
  r.done = true;
  report(r);
}

/** Starts the shards, prints progress every 10 s and the summary; resolves with the exit code. */
async function runParent(a: Args): Promise<number> {
  const t0 = Date.now();
  const last = new Map<number, ShardReport>();
  const printed = new Set<string>();
  const total = () => [...last.values()].reduce((s, r) => ({
    kernels: s.kernels + r.kernels, compared: s.compared + r.compared, skipped: s.skipped + r.skipped,
    withHazards: s.withHazards + r.withHazards, workersCompared: s.workersCompared + r.workersCompared,
    divergences: s.divergences + r.divergences.length,
  }), { kernels: 0, compared: 0, skipped: 0, withHazards: 0, workersCompared: 0, divergences: 0 });
  const line = () => {
    const t = total();
    const s = (Date.now() - t0) / 1000;
    return `fuzz: ${t.kernels} kernels (${t.compared} compared, ${t.workersCompared} with --workers 2), ${(t.kernels / s).toFixed(1)} kernels/s, ${t.divergences} divergences, ${s.toFixed(0)} s`;
  };
  const tick = a.quiet ? undefined : setInterval(() => console.log(line()), 10_000);
  let failed = 0;
  await Promise.all(Array.from({ length: a.procs }, (_, i) => new Promise<void>((resolve) => {
    const child = fork(process.argv[1]!, ['--kernels', `${a.kernels}`, '--seed', `${a.seed}`, '--procs', `${a.procs}`, '--workers-every', `${a.workersEvery}`, '--seconds', `${a.seconds}`, '--shard', `${i}`], { execArgv: process.execArgv });
    child.on('message', (m: ShardReport) => {
      last.set(i, m);
      for (const d of m.divergences) if (!printed.has(d)) (printed.add(d), console.log(d));
    });
    child.on('exit', (code) => {
      if (code !== 0 || !last.get(i)?.done) failed++;
      resolve();
    });
  })));
  if (tick) clearInterval(tick);
  const t = total();
  const s = (Date.now() - t0) / 1000;
  console.log(line());
  console.log(`soak: ${JSON.stringify({ seed: a.seed, procs: a.procs, ...t, seconds: Math.round(s), kernelsPerSecond: +(t.kernels / s).toFixed(2), shardsFailed: failed })}`);
  return t.divergences || failed ? 1 : 0;
}

const args = parseArgs(process.argv.slice(2));
if (args.shard !== undefined) {
  const i = args.shard;
  let final: ShardReport | undefined;
  runShard(args, i, (r) => {
    if (r.done) final = r;
    else if (process.send) process.send(r);
    else console.log(`shard: ${JSON.stringify(r)}`);
  });
  // The last report is sent before exiting: process.send is asynchronous.
  if (process.send) process.send(final!, () => process.exit(0));
  else console.log(`shard: ${JSON.stringify(final)}`);
} else {
  process.exitCode = await runParent(args);
}
