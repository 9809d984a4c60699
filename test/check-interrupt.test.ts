import { execFileSync, spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { check, renderCheck, renderShort } from '../src/check/index.js';
import { parseSketch } from '../src/lang/index.js';
import { instantiate } from '../src/machine/program.js';
import type { Program } from '../src/machine/program.js';
import { scheduleOf } from '../src/check/check.js';
import { stoppedInSetup } from '../src/check/search.js';
import { BoundReached, Governor } from '../src/machine/governor.js';

/**
 * Ctrl-C during `mbsim check` (src/cli/check-thread.ts): the search stops at its next bound check
 * and the partial result is printed (exit 130 for SIGINT, 143 for SIGTERM); `check()`'s `stop`
 * option does the same for the library. The CLI is the bundled command (scripts/bundle.mjs, into
 * a temporary package folder), run on DeepGEMM's sketch at K = 64 with `--timeout 600`: a search of
 * minutes that only the signal ends.
 */
const REPO = join(__dirname, '..');
const LONG = ['check', 'examples/deepgemm-fp8.mbk', '--set', 'K=64', '--timeout', '600'];
let pkg = '';
let bin = '';

beforeAll(() => {
  pkg = mkdtempSync(join(tmpdir(), 'mbsim-interrupt-'));
  copyFileSync(join(REPO, 'package.json'), join(pkg, 'package.json'));
  symlinkSync(join(REPO, 'examples'), join(pkg, 'examples'));
  execFileSync(process.execPath, [join(REPO, 'scripts', 'bundle.mjs'), join(pkg, 'dist', 'bin')], { cwd: REPO, stdio: 'pipe' });
  bin = join(pkg, 'dist', 'bin', 'mbsim.cjs');
}, 120_000);

afterAll(() => {
  if (pkg) rmSync(pkg, { recursive: true, force: true });
});

interface Ended {
  code: number | null;
  signal: NodeJS.Signals | null;
  out: string;
  err: string;
}

/** Runs the bundled CLI with `args` and sends it `signals` at `afterMs` (each `gapMs` after the one before). */
function interrupted(args: string[], signals: NodeJS.Signals[], afterMs = 2000, gapMs = 20): Promise<Ended> {
  return new Promise((done, fail) => {
    const p = spawn(process.execPath, [bin, ...args], { cwd: REPO, env: { ...process.env, NO_COLOR: '1', MBSIM_CACHE_DIR: join(pkg, 'cache') } });
    let out = '';
    let err = '';
    p.stdout.on('data', (d: Buffer) => (out += d.toString()));
    p.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const guard = setTimeout(() => p.kill('SIGKILL'), 60_000);
    signals.forEach((s, i) => setTimeout(() => p.kill(s), afterMs + gapMs * i));
    p.on('error', fail);
    p.on('close', (code, signal) => {
      clearTimeout(guard);
      done({ code, signal, out, err });
    });
  });
}

const COVERAGE = /^[\d,]+ states, [\d,]+ transitions, depth \d+, [\d.]+ s, ~[\d.]+ MB; interrupted: coverage is partial;/m;

describe('Ctrl-C during mbsim check', () => {
  test('SIGINT: the partial result (coverage line, verdict INCOMPLETE), exit 130; a --sarif file written before is replaced by the complete partial log', async () => {
    const sarif = join(pkg, 'old.sarif');
    writeFileSync(sarif, 'an earlier log\n');
    const r = await interrupted([...LONG, '--sarif', sarif], ['SIGINT']);
    expect([r.code, r.signal, r.err]).toEqual([130, null, '']);
    expect(r.out).toMatch(/^verdict: INCOMPLETE$/m);
    expect(r.out).toMatch(COVERAGE);
    // No hint to raise a bound: no bound stopped it.
    expect(r.out).not.toMatch(/to finish: raise/);
    const log = JSON.parse(readFileSync(sarif, 'utf8')) as { runs: { invocations: { toolExecutionNotifications: { properties: { stoppedBy: string } }[] }[]; properties: { verdict: string } }[] };
    expect(log.runs[0]!.properties.verdict).toBe('incomplete');
    expect(log.runs[0]!.invocations[0]!.toolExecutionNotifications.map((n) => n.properties.stoppedBy)).toEqual(['interrupt']);
  }, 90_000);

  test('--workers 2 --json: the partial document (stoppedBy "interrupt"), exit 130', async () => {
    const r = await interrupted([...LONG, '--workers', '2', '--json'], ['SIGINT']);
    expect([r.code, r.signal]).toEqual([130, null]);
    const doc = JSON.parse(r.out) as { verdict: string; complete: boolean; stoppedBy: string; coverage: { states: number } };
    expect([doc.verdict, doc.complete, doc.stoppedBy]).toEqual(['incomplete', false, 'interrupt']);
  }, 90_000);

  test('SIGTERM with --format short: the summary line says interrupted, exit 143', async () => {
    const r = await interrupted([...LONG, '--format', 'short'], ['SIGTERM']);
    expect([r.code, r.signal]).toEqual([143, null]);
    expect(r.out.trimEnd().split('\n').at(-1)).toMatch(/^mbsim check deepgemm-fp8: INCOMPLETE, \d+ errors?, \d+ warnings?; [\d,]+ states?, interrupted: coverage is partial$/);
  }, 90_000);

  test('a second SIGINT ends the process at once, by the signal (here while the partial result waits for a reader of its --sarif FIFO)', async () => {
    const fifo = join(pkg, 'log.fifo');
    execFileSync('mkfifo', [fifo]);
    const r = await interrupted([...LONG, '--sarif', fifo], ['SIGINT', 'SIGINT'], 2000, 1500);
    expect([r.code, r.signal, r.out]).toEqual([null, 'SIGINT', '']);
  }, 90_000);
});

function deepgemm(k: number): Program {
  const file = join(REPO, 'examples', 'deepgemm-fp8.mbk');
  const parsed = parseSketch(readFileSync(file, 'utf8'), file);
  return instantiate(parsed.kernel!, { K: k });
}

describe("check()'s stop option", () => {
  test('a shared flag already set: the check stops at once, interrupted, with nothing explored', () => {
    const flag = new Int32Array(new SharedArrayBuffer(4));
    Atomics.store(flag, 0, 1);
    const r = check(deepgemm(8), { stop: flag, timeout: 600_000 });
    expect([r.verdict, r.complete, r.stoppedBy, r.coverage.states]).toEqual(['incomplete', false, 'interrupt', 0]);
  });

  test('an AbortSignal aborted from onProgress: the search stops there with the states explored so far', () => {
    const ac = new AbortController();
    let seen = -1;
    const r = check(deepgemm(8), {
      stop: ac.signal, timeout: 600_000, onProgress: (p) => {
        if (seen < 0 && p.states > 0) {
          seen = p.states;
          ac.abort();
        }
      },
    });
    expect([r.verdict, r.complete, r.stoppedBy]).toEqual(['incomplete', false, 'interrupt']);
    expect(seen).toBeGreaterThan(0);
    expect(r.coverage.states).toBeGreaterThanOrEqual(seen);
    expect(renderCheck(r)).toMatch(COVERAGE);
    expect(renderShort(r)).toMatch(/interrupted: coverage is partial$/m);
  }, 60_000);

  test('a search stopped in its setup (an interrupt while the parallel workers start): the static findings\' schedules (state 0) end at the root', () => {
    const r = stoppedInSetup(new BoundReached('interrupt'), new Governor(), Date.now());
    expect([r.stoppedBy, [...r.parent]]).toEqual(['interrupt', [-1]]);
    expect(scheduleOf({ state: 0, extra: [] } as unknown as Parameters<typeof scheduleOf>[0], r.parent, r.chainOff, r.chainData)).toEqual([]);
  });

  test('anything else is refused', () => {
    expect(() => check(deepgemm(2), { stop: true as unknown as AbortSignal })).toThrow('check: stop must be an AbortSignal (an object with `aborted`) or an Int32Array');
  });
});
