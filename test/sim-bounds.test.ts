/**
 * The simulator's bounds and its timing validation: a timing that would make time infinite or
 * meaningless is refused at load (one validator, CLI and library), --max-steps always stops a run,
 * `run --max-memory` / `--timeout` stop it through the governor with verdict incomplete (exit 3),
 * and the text report keeps only the ledger's events.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { main } from '../src/cli/main.js';
import { findExample } from '../src/examples/index.js';
import { parseSketch } from '../src/lang/index.js';
import { instantiate } from '../src/machine/program.js';
import { LEDGER_EVENT_KINDS, simulate, SimTimeError } from '../src/sim/simulate.js';
import { H200, MAX_CYCLES, mergeTiming, paramKind, PARAM_KINDS, TimingError, validateTiming, type Timing } from '../src/sim/timing.js';
import { buildLedger } from '../src/report/ledger.js';

async function cli(args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (s) => out.push(s), err: (s) => err.push(s), color: false });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

const dir = mkdtempSync(join(tmpdir(), 'mbsim-bounds-'));
function timingFile(obj: unknown): string {
  const f = join(dir, `t${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(f, JSON.stringify(obj));
  return f;
}

const pipeline = (params: Record<string, number>) => instantiate(findExample('pipeline')!.build(), params);

describe('timing parameters are validated by kind', () => {
  test('the H200 defaults pass; every rate-like name (…PerCycle…, …MHz) is declared a rate', () => {
    expect(() => validateTiming(H200)).not.toThrow();
    for (const k of Object.keys(H200)) if (/PerCycle/.test(k)) expect(paramKind(k), k).toBe('rate');
    expect(paramKind('clockMHz')).toBe('clock');
    for (const k of Object.keys(PARAM_KINDS)) expect(Object.keys(H200)).toContain(k);
  });

  test.each([
    [{ tmaBytesPerCycleSm: 0 }, "timing parameter 'tmaBytesPerCycleSm' must be a rate greater than 0 (from 1e-6 to 1e+12), got 0"],
    [{ sms: 0 }, "timing parameter 'sms' must be a whole number from 1 to 1,000,000, got 0"],
    [{ sms: 1.5 }, "timing parameter 'sms' must be a whole number from 1 to 1,000,000, got 1.5"],
    [{ tmaLatency: 1e308 }, "timing parameter 'tmaLatency' must be a number of cycles from 0 to 1e+9, got 1e+308"],
    [{ clockMHz: 0 }, "timing parameter 'clockMHz' must be a clock in MHz from 1 to 100,000, got 0"],
    [{ clockMHz: 1e-300 }, "timing parameter 'clockMHz' must be a clock in MHz from 1 to 100,000, got 1e-300"],
    [{ tmaBytesPerCycleSm: 1e-300 }, "timing parameter 'tmaBytesPerCycleSm' must be a rate greater than 0 (from 1e-6 to 1e+12), got 1e-300"],
    [{ tmaLatency: { v: 1 } }, "timing parameter 'tmaLatency' must be a number or { \"value\": number }, got an object without \"value\""],
    [{ tmaLatency: { value: 'x'.repeat(100) } }, `timing parameter 'tmaLatency' must be a number of cycles from 0 to 1e+9, got "${'x'.repeat(39)}… (102 characters)`],
    [{ jitter: 1 }, "timing parameter 'jitter' must be a fraction from 0 up to (not including) 1, got 1"],
    [{ tmaSourceHbm: 2 }, "timing parameter 'tmaSourceHbm' must be 0 or 1, got 2"],
    [{ tmaQueueMaxLoadPct: 101 }, "timing parameter 'tmaQueueMaxLoadPct' must be a percentage from 0 to 100, got 101"],
    [{ issueArrive: -1 }, "timing parameter 'issueArrive' must be a number of cycles from 0 to 1e+9, got -1"],
    [{ issueArrive: '7' }, "timing parameter 'issueArrive' must be a number of cycles from 0 to 1e+9, got \"7\""],
    [{ issueArrive: { value: null } }, "timing parameter 'issueArrive' must be a number of cycles from 0 to 1e+9, got null"],
    [{ toString: 1 }, "unknown timing parameter 'toString'"],
    [{ __proto__: 1 } as object, null],
  ])('mergeTiming(%j) → %s', (over, message) => {
    if (message === null) {
      expect(() => mergeTiming(H200, over)).not.toThrow(); // a JSON-less object literal's __proto__ sets no key
      return;
    }
    expect(() => mergeTiming(H200, over)).toThrow(TimingError);
    expect(() => mergeTiming(H200, over)).toThrow(message);
  });

  test('signed cycles, edges of each kind', () => {
    expect(mergeTiming(H200, { tmaTensorExtra: -MAX_CYCLES }).tmaTensorExtra.value).toBe(-MAX_CYCLES);
    expect(() => mergeTiming(H200, { tmaTensorExtra: -MAX_CYCLES - 1 })).toThrow(TimingError);
    expect(mergeTiming(H200, { jitter: 0, tmaSourceHbm: 1, tmaQueueMaxLoadPct: 0, sms: 1, issueArrive: MAX_CYCLES }).sms.value).toBe(1);
  });

  test('the library validates too: simulate with a bad timing throws TimingError before running', () => {
    const bad: Timing = { ...H200, tmaBytesPerCycleSm: { value: 0, source: 'test' } };
    expect(() => simulate(pipeline({}), { timing: bad })).toThrow("timing parameter 'tmaBytesPerCycleSm' must be a rate greater than 0");
  });

  test.each([
    [{ tmaBytesPerCycleSm: 0 }, 'tmaBytesPerCycleSm'],
    [{ sms: 0 }, 'sms'],
    [{ tmaLatency: 1e308 }, 'tmaLatency'],
  ])('mbsim run --timing %j: exit 2 naming the parameter, at once', async (over, name) => {
    const f = timingFile(over);
    const t0 = Date.now();
    const r = await cli(['run', 'mechanism', '--timing', f]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(new RegExp(`^${f.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:1:\\d+: error\\[E-timing-value\\]: timing parameter '${name}' must be `));
    expect(r.out).toBe('');
    expect(Date.now() - t0).toBeLessThan(5000);
  });
});

describe('the simulator always stops', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  test('a zero-cost loop (every cost 0): --max-steps stops it', () => {
    const zero = Object.fromEntries(Object.keys(H200).filter((k) => paramKind(k) === 'cycles').map((k) => [k, 0]));
    const r = simulate(pipeline({ K: 1_000_000 }), { timing: mergeTiming(H200, zero), maxSteps: 5000 });
    expect(r.verdict).toBe('incomplete');
    expect(r.stoppedBy).toBe('max-steps');
    expect(r.steps).toBe(5000);
    expect(r.stopped).toContain('stopped after 5,000 steps');
  });

  test('time beyond 2^53 cycles is an error, not a silent loop', () => {
    const k = parseSketch(['kernel big arch=sm_90a', 'role w warps=1 per=one:', '    for i in range(0, 100):', '        work 1000000000000000'].join('\n'), 'big.mbk').kernel!;
    expect(k).toBeDefined();
    expect(() => simulate(instantiate(k, {}), { maxSteps: 1000 })).toThrow(SimTimeError);
    expect(() => simulate(instantiate(k, {}), { maxSteps: 1000 })).toThrow(/simulated time reached .* cycles \(beyond 2\^53/);
  });

  test('--timeout: the governor stops the run (clock read every 1024 events)', () => {
    let t = 0;
    vi.spyOn(Date, 'now').mockImplementation(() => (t += 1));
    const r = simulate(pipeline({ K: 1_000_000 }), { maxSteps: 10_000_000, timeoutMs: 50, recordEvents: false, recordSpans: false });
    vi.restoreAllMocks();
    expect(r.verdict).toBe('incomplete');
    expect(r.stoppedBy).toBe('timeout');
    // 50 clock reads of 1 ms each, 1024 wake-ups apart.
    expect(r.steps).toBeGreaterThan(40 * 1024 * 0.5);
    expect(r.steps).toBeLessThan(60 * 1024);
    expect(r.stopped).toMatch(/^stopped by --timeout after [\d,]+ steps \(/);
  });

  test('--max-memory: below the resident set, the run stops at its first check, naming the bound', () => {
    const r = simulate(pipeline({ K: 1_000_000 }), { maxSteps: 10_000_000, maxMemory: 1 });
    expect(r.verdict).toBe('incomplete');
    expect(r.stoppedBy).toBe('max-memory');
    expect(r.steps).toBeLessThanOrEqual(1024);
    expect(r.stopped).toMatch(/^stopped by --max-memory after [\d,]+ steps: the process holds \d+ MB .*raise --max-memory MB, lower --max-steps, or shrink/);
  });

  test('mbsim run --max-memory 1: below what the process holds, refused (exit 2) naming the least value', async () => {
    const r = await cli(['run', 'pipeline', '--max-memory', '1']);
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err).toMatch(/--max-memory 1 MB is below what mbsim itself holds before the simulation starts \(\d+ MB: .*; give more than \d+ \(the default is 2048\)/);
  });

  test('mbsim run --max-steps: exit 3 and the message says what to raise or shrink', async () => {
    const r = await cli(['run', 'pipeline', '--set', 'K=100000', '--max-steps', '2000']);
    expect(r.code).toBe(3);
    expect(r.out).toContain("stopped after 2,000 steps (a very long kernel, or a polling loop that never ends; raise the limit with --max-steps, or shrink the kernel's parameters with --set)");
  });

  test('bad --timeout / --max-memory values: exit 2', async () => {
    expect((await cli(['run', 'mechanism', '--timeout', '0'])).err).toBe("mbsim: --timeout expects a positive number of seconds, got '0'".replace('mbsim: ', 'mbsim: error: '));
    expect((await cli(['run', 'mechanism', '--max-memory', '-5'])).code).toBe(2);
  });
});

describe('memory per step', () => {
  test('the ledger kinds alone are about 40% of a pipeline\'s events and give the same ledger', () => {
    const p = pipeline({ K: 200 });
    const all = simulate(p);
    const some = simulate(p, { eventKinds: LEDGER_EVENT_KINDS });
    expect(some.eventCount).toBe(all.eventCount);
    expect(some.cycles).toBe(all.cycles);
    expect(some.events!.length / all.events!.length).toBeLessThan(0.45);
    expect(buildLedger(p, some.events!)).toEqual(buildLedger(p, all.events!));
  });

  test('the text report of a short run still shows its whole event log', async () => {
    const r = await cli(['run', 'mechanism']);
    expect(r.code).toBe(0);
    // access and exit events are not ledger kinds: the short run was simulated again with every event.
    expect(r.out).toContain('consumer: reads tile[1]');
    expect(r.out).toContain('producer: exits');
  });
});

describe('a run whose only remaining work is an asynchronous operation that can never start', () => {
  const sketch = (issuers: string) => `kernel wg arch=sm_90a
smem A bytes=8192
role mma warpgroups=1:
    if ${issuers}:
        wgmma.mma_async A shape=64x128x16
        wgmma.commit_group
        wgmma.wait_group 0
`;
  const run = (src: string) => simulate(instantiate(parseSketch(src, 'wg.mbk').kernel!));

  test('one warp of a warpgroup issues a wgmma: a hang at once (not incomplete after the idle bound), naming the warps that never issued it', () => {
    const r = run(sketch('warp == 0'));
    expect(r.verdict).toBe('hang');
    expect(r.stopped).toBeNull();
    expect(r.steps).toBeLessThan(10);
    const reasons = r.hang!.waiters.flatMap((w) => w.reasons);
    expect(reasons).toContain('the oldest of them waits for mma.w1–w3 (exited) of the warpgroup to issue its wgmma.mma_async (a warpgroup\'s MMA starts once all four warps issued it)');
  });

  test('all four warps issue it: ok', () => {
    expect(run(sketch('warp < 4')).verdict).toBe('ok');
  });

  test('mbsim run: exit 1 with HANG', async () => {
    const f = join(dir, 'wg.mbk');
    writeFileSync(f, sketch('warp == 0'));
    const r = await cli(['run', f]);
    expect(r.code).toBe(1);
    expect(r.out).toContain('HANG: nothing can make progress; 1 agent(s) blocked forever');
  });
});
