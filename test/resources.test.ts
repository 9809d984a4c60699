/**
 * Resource bounds of long operations, measured on the process: the parallel and sequential search
 * and `mbsim run` stop within their --timeout and --max-memory (verdict incomplete, exit 3, the
 * bound named), the built CLI in a child process, its peak resident set taken by the kernel.
 */
import { beforeAll, describe, expect, test } from 'vitest';
import { check } from '../src/check/check.js';
import { findExample } from '../src/examples/index.js';
import { instantiate } from '../src/machine/program.js';
import { buildCli, measureCli } from './support/measured-cli.js';

const MiB = 1048576;
/**
 * The wall-time bounds hold on an idle machine with room to spare; on a 2-core machine shared with
 * other work a run can be starved of the CPU, so each timed test gets two more tries.
 */
const TIMED = { timeout: 60_000, retry: 2 };

beforeAll(() => {
  buildCli();
}, 180_000);

describe('check: --timeout and --max-memory hold for the whole process', () => {
  test('2 workers, CTAS=512, --timeout 5 --max-memory 1000: stops within 1 s of the timeout (startup included), under 1.1 GB', TIMED, async () => {
    const r = await measureCli(['check', 'pipeline', '--set', 'CTAS=512', '--workers', '2', '--timeout', '5', '--max-memory', '1000']);
    expect(r.err).toBe('');
    expect(r.code).toBe(3);
    expect(r.out).toContain('verdict: INCOMPLETE');
    expect(r.out).toMatch(/stopped by (timeout|max-memory)/);
    expect(r.out).toMatch(/raise --(timeout SECONDS|max-memory MB)/);
    expect(r.peakRss).toBeLessThan(1.1e9);
    expect(r.wallMs).toBeLessThanOrEqual(6500);
  });

  test('2 workers, CTAS=128, --timeout 5: stopped within 1.5 s of the timeout, under 1.1 GB', TIMED, async () => {
    const r = await measureCli(['check', 'pipeline', '--set', 'CTAS=128', '--workers', '2', '--timeout', '5', '--max-memory', '1000']);
    expect(r.code).toBe(3);
    expect(r.out).toMatch(/stopped by (timeout|max-memory)/);
    expect(r.peakRss).toBeLessThan(1.1e9);
    expect(r.wallMs).toBeLessThanOrEqual(6500);
  });

  test('1 worker, CTAS=512, --max-memory 300: stopped by max-memory, under 330 MB', async () => {
    // Without partial-order reduction: each successor of the 3,072-agent initial state is then one
    // stored state, so memory grows at once (with it, long forced chains make the growth slow).
    const r = await measureCli(['check', 'pipeline', '--set', 'CTAS=512', '--max-memory', '300', '--timeout', '30', '--reduce', 'symmetry']);
    expect(r.code).toBe(3);
    expect(r.out).toContain('stopped by max-memory');
    expect(r.out).toContain('raise --max-memory MB');
    expect(r.peakRss).toBeLessThan(330 * MiB);
  }, 60_000);
});

describe('run: --max-memory and --timeout', () => {
  test('K=100000000 --max-steps 20000000 --max-memory 400: stopped by --max-memory, under 440 MB, exit 3', async () => {
    const r = await measureCli(['run', 'pipeline', '--set', 'K=100000000', '--max-steps', '20000000', '--max-memory', '400', '--width', '40']);
    expect(r.code).toBe(3);
    expect(r.out).toMatch(/stopped by --max-memory after [\d,]+ steps: .*raise --max-memory MB, lower --max-steps, or shrink the kernel's parameters with --set/);
    expect(r.peakRss).toBeLessThan(440 * MiB);
  }, 120_000);

  test('--timeout 1 on a long run: stopped by --timeout within 1 s of it', TIMED, async () => {
    const r = await measureCli(['run', 'pipeline', '--set', 'K=100000000', '--max-steps', '20000000', '--timeout', '1', '--width', '40']);
    expect(r.code).toBe(3);
    expect(r.out).toMatch(/stopped by --timeout after [\d,]+ steps \([\d.]+ s; .*\); raise --timeout SECONDS/);
    expect(r.wallMs).toBeLessThanOrEqual(1000 + 1000 + 1500); // startup, the bound, the report of what was recorded
  });
});

describe('check (library): the parallel search under its bounds', () => {
  const big = () => instantiate(findExample('pipeline')!.build(), { CTAS: 128 });

  test('workers not ready by the deadline: incomplete by timeout, no error, soon after it', () => {
    const t0 = Date.now();
    const r = check(big(), { workers: 2, timeout: 200 });
    expect(r.verdict).toBe('incomplete');
    expect(r.stoppedBy).toBe('timeout');
    expect(Date.now() - t0).toBeLessThan(200 + 3000); // the static checks and one expansion's first successors
  }, 60_000);

  test('--max-memory below the process\'s resident set: incomplete by max-memory (workers told to stop), no RangeError', () => {
    const r = check(big(), { workers: 2, maxMemory: 1 * MiB, timeout: 120_000 });
    expect(r.verdict).toBe('incomplete');
    expect(r.stoppedBy).toBe('max-memory');
    expect(r.coverage.memoryBytes).toBeGreaterThan(1 * MiB);
  }, 150_000);

  test('a sequential search stopped by its timeout inside one large expansion', () => {
    const t0 = Date.now();
    const r = check(instantiate(findExample('pipeline')!.build(), { CTAS: 512 }), { timeout: 1500 });
    expect(r.stoppedBy).toBe('timeout');
    expect(Date.now() - t0).toBeLessThan(1500 + 1000);
    expect(r.coverage.depth).toBeLessThanOrEqual(1); // stopped inside the first expansions (how far it got depends on the machine)
  }, 60_000);
});
