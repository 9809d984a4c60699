/**
 * The SPIN baseline of `bench/spin/pipeline.pml`, written with the builder, and a runner
 * for both checkers. The protocol: one producer waits on empty[s], does arrive.expect_tx(K·BYTES) on
 * full[s] and issues K TMA copies (each credits its bytes separately); C consumer warps wait on
 * full[s], issue a tcgen05.mma reading the stage and commit it to empty[s] (count C), so the MMA's
 * completion arrives. BUG: 0 correct; 1 producer's first empty wait uses parity 0 (hang);
 * 2 consumers skip the full wait (race); 3 empty barrier expects C−1 arrivals (overwrite race).
 *
 * `benchCheckSpin` runs `mbsim check` on it; `runSpin` runs `spin -a`, `gcc` and `./pan` when they
 * are on PATH (it installs nothing) and returns their numbers.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { kernel } from '../kernel/builder.js';
import type { Kernel } from '../kernel/ir.js';
import { instantiate } from '../machine/program.js';
import { check, type CheckOptions } from '../check/check.js';

/** Parameters of the SPIN pipeline model. */
export interface SpinParams {
  S: number;
  N: number;
  C: number;
  K: number;
  BUG: 0 | 1 | 2 | 3;
}

/** Bytes per TMA copy (SPIN's BYTES is 4; bulk copies need multiples of 16). */
export const COPY_BYTES = 16;

/** The pipeline of pipeline.pml as a kernel. */
export function spinPipeline(prm: SpinParams): Kernel {
  const k = kernel('spin-pipeline', {
    arch: 'sm_100a',
    params: { S: prm.S, N: prm.N, C: prm.C, K: prm.K, BUG: prm.BUG, BYTES: COPY_BYTES },
    description: 'full/empty TMA → tcgen05 pipeline of bench/spin/pipeline.pml (S stages, N iterations, C consumer warps, K copies per fill)',
  });
  k.barriers('full', 'S', { count: 1 });
  k.barriers('empty', 'S', { count: 'C - (BUG == 3)' });
  k.smem('tile', 'S * K', 'BYTES');
  k.tmem('acc', 'C', 'BYTES');
  k.role('producer', { warps: 1, per: 'one' }, (r) => {
    r.for('i', 0, 'N', (r) => {
      r.let('s', 'i % S');
      r.let('round', 'i / S');
      // BUG 1: parity (round & 1) instead of (round & 1) ^ 1: the first wait on a fresh barrier blocks.
      r.wait('empty[s]', '((round & 1) ^ 1) ^ (BUG == 1)');
      r.arriveExpectTx('full[s]', 'K * BYTES');
      r.for('k', 0, 'K', (r) => r.tma('tile[s * K + k]', 'BYTES', 'full[s]'));
    });
    // Producer tail: wait until the consumers' MMAs of the last S rounds have committed, so that no
    // MMA is still in flight when the CTA exits (pipeline.pml has no exit to check; a kernel must).
    r.for('i', 'N', 'N + S', (r) => {
      r.let('s', 'i % S');
      r.let('round', 'i / S');
      r.wait('empty[s]', '((round & 1) ^ 1) ^ (BUG == 1)');
    });
  });
  const reads: string[] = [];
  for (let j = 0; j < prm.K; j++) reads.push(`tile[s * K + ${j}]`);
  k.role('consumer', { warps: 1, per: 'one', instances: 'C' }, (r) =>
    r.for('i', 0, 'N', (r) => {
      r.let('s', 'i % S');
      r.let('round', 'i / S');
      r.if('BUG != 2', (r) => r.wait('full[s]', 'round & 1'));
      r.mma(reads, 'acc[instance]', { m: 128, n: 128, k: 16 });
      r.commit('empty[s]');
    }));
  return k.build();
}

/** What one checker run measured. */
export interface BenchRun {
  tool: 'mbsim' | 'spin';
  params: SpinParams;
  verdict: string;
  states: number;
  transitions: number;
  wallMs: number;
  /** Peak memory in bytes (mbsim: growth of the process RSS during the run, and the search's own estimate; spin: pan's report). */
  peakBytes: number;
  /** CPU time (user + system) in ms, when measured. */
  cpuMs?: number;
  detail: string;
}

/**
 * Runs `mbsim check` on the SPIN pipeline. Peak memory: max RSS growth sampled during the run.
 * With `forceGc` (default true) a full garbage collection runs first, when Node was started with
 * `--expose-gc`, so the RSS growth is the run's own. A forced collection also discards V8's optimized
 * code: the call after one runs about 5x slower than a warmed one (measured on S=5 N=20 C=2 K=3:
 * 479 ms after `gc()` against 81 ms), so timing loops pass `false` after their first call.
 */
export function benchCheckSpin(prm: SpinParams, opts: CheckOptions = {}, forceGc = true): BenchRun & { estimateBytes: number; depth: number; cpuMs: number; kinds: string[] } {
  const program = instantiate(spinPipeline(prm));
  if (forceGc && global.gc) global.gc();
  const rss0 = process.memoryUsage().rss;
  let peak = rss0;
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const r = check(program, {
    timeout: 600_000,
    maxStates: 50_000_000,
    ...opts,
    onProgress: (p) => {
      peak = Math.max(peak, process.memoryUsage().rss);
      opts.onProgress?.(p);
    },
  });
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  peak = Math.max(peak, process.memoryUsage().rss);
  const h = r.hazards[0];
  return {
    tool: 'mbsim', params: prm, verdict: r.verdict, states: r.coverage.states, transitions: r.coverage.transitions, wallMs,
    peakBytes: peak - rss0, estimateBytes: r.coverage.memoryBytes, depth: r.coverage.depth, cpuMs: (cpu.user + cpu.system) / 1000,
    kinds: [...new Set(r.hazards.map((h) => h.kind))],
    detail: h ? `${h.kind}: ${h.message} (trace ${h.trace.length} steps)${r.complete || r.stoppedBy === 'hazard' ? '' : `; search incomplete, stopped by ${r.stoppedBy}`}` : r.complete ? 'no hazard in any schedule' : `stopped: ${r.stoppedBy}`,
  };
}

function onPath(cmd: string): boolean {
  const r = spawnSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' });
  return r.status === 0 && r.stdout.trim() !== '';
}

/** Where pipeline.pml is: `$MBSIM_SPIN_MODEL`, else the repository's `bench/spin/pipeline.pml`. */
export function defaultPml(): string {
  if (process.env.MBSIM_SPIN_MODEL) return resolve(process.env.MBSIM_SPIN_MODEL);
  const here = dirname(fileURLToPath(import.meta.url));
  // src/bench or dist/bench → repository root is two levels up.
  return resolve(here, '..', '..', 'bench', 'spin', 'pipeline.pml');
}

/**
 * Runs SPIN on pipeline.pml with these parameters: `spin -a`, `gcc -O2 -DSAFETY -DMEMLIM=16000`,
 * `./pan -m1000000`, timing the pan run only (as the README's table does). Returns null when spin or
 * gcc is not on PATH or the model file is missing. Verdict: `ok`, `hang` (invalid end state),
 * `race` (assertion violated), `stopped` (pan ran past `timeoutMs`) or `error`.
 */
export function runSpin(prm: SpinParams, pml = defaultPml(), timeoutMs = 600_000): BenchRun | null {
  if (!onPath('spin') || !onPath('gcc') || !existsSync(pml)) return null;
  const dir = mkdtempSync(join(tmpdir(), 'mbsim-spin-'));
  try {
    copyFileSync(pml, join(dir, 'pipeline.pml'));
    const defs = [`-DS=${prm.S}`, `-DN=${prm.N}`, `-DC=${prm.C}`, `-DK=${prm.K}`, `-DBUG=${prm.BUG}`];
    execFileSync('spin', [...defs, '-a', 'pipeline.pml'], { cwd: dir, stdio: 'pipe' });
    execFileSync('gcc', ['-O2', '-DSAFETY', '-DMEMLIM=16000', '-o', 'pan', 'pan.c'], { cwd: dir, stdio: 'pipe' });
    const useTime = existsSync('/usr/bin/time');
    // coreutils `timeout` kills pan itself (a timeout of spawnSync would kill only /usr/bin/time).
    const pan = onPath('timeout') ? ['timeout', '-s', 'KILL', String(Math.ceil(timeoutMs / 1000)), './pan', '-m1000000'] : ['./pan', '-m1000000'];
    const t0 = performance.now();
    const so = { cwd: dir, encoding: 'utf8' as const, timeout: timeoutMs + 10_000, maxBuffer: 64 << 20 };
    const r = useTime ? spawnSync('/usr/bin/time', ['-f', 'MAXRSS_KB=%M CPU_S=%U+%S', ...pan], so) : spawnSync(pan[0]!, pan.slice(1), so);
    const wallMs = performance.now() - t0;
    const text = `${r.stdout ?? ''}\n${r.stderr ?? ''}`;
    const num = (re: RegExp) => {
      const m = re.exec(text);
      return m ? Number(m[1]!.replace(/,/g, '')) : NaN;
    };
    const stored = num(/([\d.e+]+) states, stored/);
    const trans = num(/([\d.e+]+) transitions/);
    const rssKb = num(/MAXRSS_KB=(\d+)/);
    const cpuM = /CPU_S=([\d.]+)\+([\d.]+)/.exec(text);
    const cpuMs = cpuM ? (Number(cpuM[1]) + Number(cpuM[2])) * 1000 : NaN;
    const memMb = num(/([\d.]+)\s+total actual memory usage/);
    // pan prints "errors: N"; the first error line is "pan:1: <what> (at depth D)".
    let verdict = 'ok';
    if (r.error || r.signal || r.status === 137 || /Command terminated by signal 9/.test(text)) verdict = 'stopped';
    else if (!/errors: 0\b/.test(text)) {
      verdict = /pan:1: invalid end state/.test(text) ? 'hang' : /pan:1: assertion violated/.test(text) ? 'race' : 'error';
    }
    const peakBytes = Number.isFinite(rssKb) ? rssKb * 1024 : Number.isFinite(memMb) ? memMb * 1024 * 1024 : NaN;
    const line = /pan:1:.*$/m.exec(text)?.[0] ?? '';
    return { tool: 'spin', params: prm, verdict, states: stored, transitions: trans, wallMs, cpuMs, peakBytes, detail: line || (verdict === 'ok' ? 'errors: 0' : '') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Reads pipeline.pml's README table (measured SPIN numbers) for reference, if present. */
export function spinReadmeTable(pml = defaultPml()): string | null {
  const readme = join(dirname(pml), 'README.md');
  return existsSync(readme) ? readFileSync(readme, 'utf8') : null;
}

/** SPIN's numbers for S=4 N=16 C=4 K=2 BUG=0 as measured in `bench/spin/README.md` (pan run only). */
export const SPIN_README_4_16_4_2: BenchRun = {
  tool: 'spin', params: { S: 4, N: 16, C: 4, K: 2, BUG: 0 }, verdict: 'ok', states: 18_882_267, transitions: NaN, wallMs: 49_400,
  peakBytes: 2.4 * 1024 ** 3, detail: 'measured numbers from bench/spin/README.md',
};

/**
 * The checker's raw rate on the correct pipeline with symmetry reduction off (so that the run is
 * long enough to be meaningful): after one warm-up run (JIT compilation, not counted), the search
 * is repeated until at least `minMs` of wall time have been measured. States visited = successor states generated and hashed
 * (the `transitions` counter); stored states = distinct states kept for expansion.
 */
export function rawRate(prm: Omit<SpinParams, 'BUG'>, minMs = 2000, workers = 1): { runs: number; states: number; transitions: number; wallMs: number } {
  let runs = 0;
  let states = 0;
  let transitions = 0;
  let wallMs = 0;
  const opts: CheckOptions = workers > 1 ? { symmetry: false, workers } : { symmetry: false };
  benchCheckSpin({ ...prm, BUG: 0 }, opts);
  while (wallMs < minMs && runs < 100) {
    const r = benchCheckSpin({ ...prm, BUG: 0 }, opts);
    runs++;
    states += r.states;
    transitions += r.transitions;
    wallMs += r.wallMs;
  }
  return { runs, states, transitions, wallMs };
}

/**
 * The report line of {@link rawRate}: one core, then (on a machine with more than one) the same
 * configuration with `workers` worker threads (default: `os.availableParallelism()`) and the speedup.
 */
export function rawRateLine(prm: Omit<SpinParams, 'BUG'>, minMs = 2000, workers = availableParallelism()): string {
  const r = rawRate(prm, minMs);
  const secs = r.wallMs / 1000;
  const n = (x: number) => Math.round(x).toLocaleString('en-US');
  let line = `raw rate: ${n(r.transitions / secs)} states visited/s (transitions), ${n(r.states / secs)} stored states/s, on S=${prm.S} N=${prm.N} C=${prm.C} K=${prm.K} ` +
    `correct with symmetry reduction off (${r.runs} run${r.runs > 1 ? 's' : ''} after a warm-up run: ${n(r.transitions)} transitions, ${n(r.states)} stored states in ${secs.toFixed(2)} s wall, one core)`;
  if (workers > 1) {
    const p = rawRate(prm, minMs, workers);
    const ps = p.wallMs / 1000;
    line += `; ${workers} workers: ${n(p.transitions / ps)} states visited/s, ${n(p.states / ps)} stored states/s ` +
      `(${p.runs} run${p.runs > 1 ? 's' : ''}: ${n(p.transitions)} transitions, ${n(p.states)} stored states in ${ps.toFixed(2)} s wall), ` +
      `speedup ${((p.transitions / ps) / (r.transitions / secs)).toFixed(2)}x`;
  }
  return line;
}

/**
 * The benchmark against SPIN: mbsim check on BUG=0..3 (same verdicts as SPIN expected: ok, hang,
 * race, race), then the big correct configuration with the ratios against SPIN (run here when spin
 * and gcc are on PATH, else the README's measured numbers) and mbsim's raw rate ({@link rawRateLine}). Returns the lines.
 */
export function checkSpinReport(prm: Omit<SpinParams, 'BUG'> = { S: 4, N: 16, C: 4, K: 2 }, small: Omit<SpinParams, 'BUG'> = { S: 4, N: 8, C: 2, K: 2 }, pml = defaultPml()): string[] {
  const out: string[] = [];
  const mb = (b: number) => `${(b / 1048576).toFixed(1)} MB`;
  const expect = ['ok', 'hang', 'race', 'race'];
  for (const BUG of [0, 1, 2, 3] as const) {
    const r = benchCheckSpin({ ...small, BUG });
    const s = runSpin({ ...small, BUG }, pml);
    // SPIN stops at the first error its depth-first search meets; mbsim reports the shortest. BUG=3
    // has both a race (shortest) and a hang: SPIN's verdict must be among the kinds mbsim finds with `all`.
    const kinds = s && s.verdict !== r.verdict ? benchCheckSpin({ ...small, BUG }, { all: true }).kinds : [r.verdict];
    const agree = !s || kinds.includes(s.verdict) || (s.verdict === 'ok' && r.verdict === 'ok');
    out.push(`BUG=${BUG} S=${small.S} N=${small.N} C=${small.C} K=${small.K}: mbsim ${r.verdict} (${r.states.toLocaleString('en-US')} states, ${(r.wallMs / 1000).toFixed(2)} s)` +
      `${s ? `, spin ${s.verdict} (${s.states.toLocaleString('en-US')} states, ${(s.wallMs / 1000).toFixed(2)} s)${s.verdict !== r.verdict && agree ? ` — also found by mbsim --all (${kinds.join(', ')})` : ''}` : ''}` +
      `; expected ${expect[BUG]}${r.verdict === expect[BUG] && agree ? '' : '  MISMATCH'}`);
  }
  const big = { ...prm, BUG: 0 as const };
  const r = benchCheckSpin(big);
  const spin = runSpin(big, pml) ?? (prm.S === 4 && prm.N === 16 && prm.C === 4 && prm.K === 2 ? SPIN_README_4_16_4_2 : null);
  const secs = r.wallMs / 1000;
  out.push(`S=${prm.S} N=${prm.N} C=${prm.C} K=${prm.K} correct: mbsim ${r.verdict}, ${r.states.toLocaleString('en-US')} states stored, ${r.transitions.toLocaleString('en-US')} transitions, ` +
    `${secs.toFixed(2)} s wall (${(r.cpuMs / 1000).toFixed(2)} s CPU), peak RSS growth ${mb(r.peakBytes)} (search estimate ${mb(r.estimateBytes)})`);
  out.push(`  ${rawRateLine(prm)}`);
  if (spin) {
    out.push(`  spin: ${spin.verdict}, ${spin.states.toLocaleString('en-US')} states, ${(spin.wallMs / 1000).toFixed(1)} s, ${mb(spin.peakBytes)} (${spin.detail || 'run here'})`);
    out.push(`  ratios: ${(spin.wallMs / r.wallMs).toFixed(1)}x faster, ${(spin.peakBytes / Math.max(r.peakBytes, r.estimateBytes)).toFixed(0)}x less memory, ` +
      `${(spin.states / r.states).toFixed(0)}x fewer states; SPIN's state space covered at ${Math.round(spin.states / secs).toLocaleString('en-US')} states/s`);
  }
  return out;
}

// `node --expose-gc dist/bench/check-spin.js [pipeline.pml]`: prints the report (until src/bench/main.ts calls checkSpinReport).
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const line of checkSpinReport(undefined, undefined, process.argv[2] ?? defaultPml())) console.log(line);
}
