/**
 * Runs the built CLI in a child process and measures it (tests of the resource bounds): wall time
 * from the spawn to the exit (node's startup included), and the child's peak resident set: its own
 * `process.resourceUsage().maxRSS` at exit (report-maxrss.mjs), and /proc/PID/status `VmHWM` (the
 * kernel's high-water mark of the whole process) read every 50 ms in case it is killed. The CLI is compiled once per test run into .cache/ of the checkout (the
 * sources with `tsc`, as `npm run build` does), so startup is that of an installed mbsim.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');
// Inside the checkout (not node_modules/.cache, which checkouts sharing one node_modules share).
const OUT = join(ROOT, '.cache', 'mbsim-measured-cli');

let built = false;
/** Compiles src/ into {@link OUT} (once per process); returns the CLI entry. */
export function buildCli(): string {
  if (!built) {
    execFileSync(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(ROOT, 'tsconfig.build.json'), '--outDir', OUT, '--sourceMap', 'false', '--declaration', 'false'], { stdio: 'pipe' });
    built = true;
  }
  const bin = join(OUT, 'cli', 'bin.js');
  if (!existsSync(bin)) throw new Error(`measured-cli: ${bin} was not built`);
  return bin;
}

/** What one measured run gave. */
export interface Measured {
  code: number | null;
  out: string;
  err: string;
  /** Spawn to exit. */
  wallMs: number;
  /** Peak resident set of the child (bytes): its own figure at exit, or the last VmHWM read. */
  peakRss: number;
}

function hwm(pid: number): number {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** Runs `mbsim ARGS…` (the built CLI), killed after `killMs`. */
export function measureCli(args: string[], killMs = 120_000): Promise<Measured> {
  const bin = buildCli();
  return new Promise((done, fail) => {
    const t0 = Date.now();
    const c = spawn(process.execPath, ['--import', new URL('./report-maxrss.mjs', `file://${__dirname}/`).href, bin, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } });
    let out = '';
    let err = '';
    let peak = 0;
    c.stdout.on('data', (d: Buffer) => (out += d));
    c.stderr.on('data', (d: Buffer) => (err += d));
    const poll = setInterval(() => {
      peak = Math.max(peak, hwm(c.pid!));
    }, 50);
    const kill = setTimeout(() => c.kill('SIGKILL'), killMs);
    c.on('error', fail);
    c.on('exit', (code) => {
      const wallMs = Date.now() - t0;
      clearInterval(poll);
      clearTimeout(kill);
      const own = /\nMAXRSS (\d+)\n$/.exec(err);
      if (own) err = err.slice(0, own.index);
      done({ code, out, err, wallMs, peakRss: Math.max(peak, own ? Number(own[1]) : 0) });
    });
  });
}
