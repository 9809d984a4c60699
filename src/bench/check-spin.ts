/**
 * The SPIN baseline of `../shared/bench/spin/pipeline.pml`, written with the builder, and a runner
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
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
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
    description: 'full/empty TMA → tcgen05 pipeline of ../shared/bench/spin/pipeline.pml (S stages, N iterations, C consumer warps, K copies per fill)',
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

/** Runs `mbsim check` on the SPIN pipeline. Peak memory: max RSS growth sampled during the run. */
export function benchCheckSpin(prm: SpinParams, opts: CheckOptions = {}): BenchRun & { estimateBytes: number; depth: number; cpuMs: number; kinds: string[] } {
  const program = instantiate(spinPipeline(prm));
  if (global.gc) global.gc();
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
    detail: h ? `${h.kind}: ${h.message} (trace ${h.trace.length} steps)` : r.complete ? 'no hazard in any schedule' : `stopped: ${r.stoppedBy}`,
  };
}

function onPath(cmd: string): boolean {
  const r = spawnSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' });
  return r.status === 0 && r.stdout.trim() !== '';
}

/** Default location of pipeline.pml: `../shared/bench/spin/pipeline.pml` from the repository root. */
export function defaultPml(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  // src/bench or dist/bench → repository root is two levels up.
  return resolve(here, '..', '..', '..', 'shared', 'bench', 'spin', 'pipeline.pml');
}

/**
 * Runs SPIN on pipeline.pml with these parameters: `spin -a`, `gcc -O2 -DSAFETY -DMEMLIM=16000`,
 * `./pan -m1000000`, timing the pan run only (as the README's table does). Returns null when spin or
 * gcc is not on PATH or the model file is missing. Verdict: `ok`, `hang` (invalid end state),
 * `race` (assertion violated) or `error`.
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
    const t0 = performance.now();
    const r = useTime
      ? spawnSync('/usr/bin/time', ['-f', 'MAXRSS_KB=%M CPU_S=%U+%S', './pan', '-m1000000'], { cwd: dir, encoding: 'utf8', timeout: timeoutMs, maxBuffer: 64 << 20 })
      : spawnSync('./pan', ['-m1000000'], { cwd: dir, encoding: 'utf8', timeout: timeoutMs, maxBuffer: 64 << 20 });
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
    if (!/errors: 0\b/.test(text)) {
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
