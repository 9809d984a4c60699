/**
 * A fourth hostile trial: the largest launch the limits allow, checked and run under
 * --max-memory and --timeout (the setup of the check — static checks, the search's analysis and
 * initial state, the traces — is governed like the search itself), and the new cases of the trial.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { check } from '../src/check/index.js';
import { parseSketch } from '../src/lang/index.js';
import { instantiate } from '../src/machine/program.js';
import { buildCli, measureCli } from './support/measured-cli.js';
import { LARGEST } from './support/largest-launch.js';

const MiB = 1048576;
const dir = mkdtempSync(join(tmpdir(), 'mbsim-trial3-'));
const file = (name: string, text: string) => {
  const f = join(dir, name);
  writeFileSync(f, text);
  return f;
};


beforeAll(() => {
  buildCli();
}, 180_000);

describe('the largest allowed launch stays under --max-memory and --timeout', () => {
  const largest = file('largest.mbk', LARGEST);

  test('check --max-memory 300: incomplete (exit 3, max-memory named), peak resident set under 315 MiB (it was 937 MB and 68 s)', async () => {
    const r = await measureCli(['check', largest, '--max-memory', '300'], 170_000);
    expect(r.err).toBe('');
    expect(r.code).toBe(3);
    expect(r.out).toContain('verdict: INCOMPLETE');
    expect(r.out).toContain('stopped by max-memory');
    expect(r.out).toContain('raise --max-memory MB');
    expect(r.peakRss).toBeLessThan(315 * MiB);
    expect(r.wallMs).toBeLessThan(45_000);
  }, 180_000);

  test('check --timeout 3: incomplete by timeout within a few seconds (the static checks and the analysis ran 60 s before)', { timeout: 120_000, retry: 2 }, async () => {
    const r = await measureCli(['check', largest, '--timeout', '3'], 110_000);
    expect(r.code).toBe(3);
    expect(r.out).toContain('stopped by timeout');
    expect(r.wallMs).toBeLessThan(3000 + 4000);
  });

  test('run --max-memory 300: incomplete by max-memory, under 315 MiB', async () => {
    const r = await measureCli(['run', largest, '--max-memory', '300'], 110_000);
    expect(r.code).toBe(3);
    expect(r.out).toMatch(/stopped by --max-memory after [\d,]+ steps/);
    expect(r.peakRss).toBeLessThan(315 * MiB);
  }, 120_000);

  // The search's setup (the initial state's encoding, ~150 MB here) is asked of the governor
  // before the codec allocates it (src/check/setup-bytes.ts): it stops at about 200 MiB.
  test('PTX with --block 1024 --grid 1056 --max-memory 300: under 315 MiB (it was 457 MB, then 5-15% over the bound)', async () => {
    const r = await measureCli(['check', 'test/fixtures/ptx/tma_pipeline.ptx', '--kernel', 'tma_pipeline', '--block', '1024', '--grid', '1056',
      '--param', 'param_2=4', '--tensor-map', 'param_0=16384', '--max-memory', '300'], 170_000);
    expect(r.code).toBe(3);
    expect(r.out).toMatch(/stopped by (max-memory|timeout)/);
    expect(r.peakRss).toBeLessThan(315 * MiB);
  }, 180_000);
});

describe('the check of a large launch, in process', () => {
  const kernelOf = (src: string) => {
    const r = parseSketch(src, 'k.mbk');
    if (!r.kernel) throw new Error(r.diagnostics.map((d) => d.message).join('\n'));
    return r.kernel;
  };

  test('static findings are capped at 20,000 (one finding per CTA: an unused array of 1,056 CTAs made 260,832)', () => {
    const src = `kernel k arch=sm_90a grid=132\nbarrier b[2] count=1\nbarrier unused[200] count=1\nrole p per=one:\n    mbarrier.arrive b[0]\n    mbarrier.try_wait.parity b[0], 0\n`;
    const r = check(instantiate(kernelOf(src)), { maxStates: 1, timeout: 60_000 });
    const unused = r.warnings.filter((w) => w.kind === 'unused-barrier');
    expect(unused).toHaveLength(20_000);
    expect(unused[0]!.message).toBe('b[1]@c0 is initialized but no operation ever arrives on, waits on or signals it');
  }, 60_000);

  test('a bound hit in the setup of the search: no state, the bound named, no symmetry groups', () => {
    const r = check(instantiate(kernelOf(LARGEST)), { maxMemory: 1 });
    expect(r.verdict).toBe('incomplete');
    expect(r.stoppedBy).toBe('max-memory');
    expect(r.coverage.states).toBe(0);
    expect(r.coverage.symmetry).toEqual([]);
  }, 60_000);
});

describe('the governor collects garbage before it reads memory near the bound', () => {
  test('from 80% of the bound, once per 4% of growth: the reading after the collection decides', async () => {
    const { Governor } = await import('../src/machine/governor.js');
    const env = { t: 0, rss: 100, collected: 0 };
    const g = new Governor({ maxMemory: 1000 }, { now: () => (env.t += 25), rss: () => env.rss, collect: () => {
      env.collected++;
      env.rss -= 300; // garbage freed
    } });
    env.rss = 700;
    expect(g.memory()).toBe(700);
    expect(env.collected).toBe(0);
    env.rss = 1100; // past the bound, mostly garbage
    expect(g.check()).toBe(null);
    expect([env.collected, g.memory(true)]).toEqual([1, 800]);
    env.rss = 820; // less than 4% more than at the last collection (1100): no collection
    g.memory(true);
    expect(env.collected).toBe(1);
    env.rss = 1200;
    g.memory(true);
    expect(env.collected).toBe(2);
    env.rss = 1100; // held memory past the bound: the collection frees nothing of it
    const held = new Governor({ maxMemory: 1000 }, { now: () => (env.t += 25), rss: () => env.rss, collect: () => env.collected++ });
    expect(held.check()).toBe('max-memory');
  });
});

describe('the analysis of a cluster of 16 under the bounds', () => {
  test('PTX --block 1024 --cluster 16 --grid 66 --max-memory 300 --timeout 10: exit 3 within the timeout, under 315 MiB (it was 476 MB, 12.6 s)', { timeout: 120_000, retry: 1 }, async () => {
    const r = await measureCli(['check', 'test/fixtures/ptx/tma_pipeline.ptx', '--kernel', 'tma_pipeline', '--block', '1024', '--cluster', '16', '--grid', '66',
      '--param', 'param_2=4', '--tensor-map', 'param_0=16384', '--max-memory', '300', '--timeout', '10'], 110_000);
    expect(r.code).toBe(3);
    expect(r.out).toMatch(/stopped by (max-memory|timeout)/);
    expect(r.peakRss).toBeLessThan(315 * MiB);
    expect(r.wallMs).toBeLessThan(10_000 + 3000);
  });
});

describe('a launch in JSON nested past the reader\'s limit', () => {
  const ptx = (launch: string) => `// # launch: ${launch}\n${readFileSync('test/fixtures/ptx/tma_pipeline.ptx', 'utf8')}`;

  test('parseJsonPos: 64 levels are read, 65 are an error at the 65th (an object counts) (100,000 overflowed the stack)', async () => {
    const { parseJsonPos, JsonPosError, MAX_JSON_DEPTH } = await import('../src/cli/json-pos.js');
    expect(MAX_JSON_DEPTH).toBe(64);
    expect(parseJsonPos(`${'['.repeat(64)}${']'.repeat(64)}`).kind).toBe('array');
    for (const n of [65, 100_000]) {
      try {
        parseJsonPos(`{"a": ${'['.repeat(n)}${']'.repeat(n)}}`);
        expect.unreachable();
      } catch (e) {
        expect(e).toBeInstanceOf(JsonPosError);
        expect((e as InstanceType<typeof JsonPosError>).message).toBe('objects and arrays nested deeper than 64 levels');
        expect((e as InstanceType<typeof JsonPosError>).pos).toEqual({ line: 1, col: 70, endCol: 71 });
      }
    }
  });

  test('a # launch: line and a .ptx.launch.json of 100,000 brackets: exit 2 at the bracket (it was exit 70, "Maximum call stack size exceeded")', async () => {
    const deep = `{"block": ${'['.repeat(100_000)}${']'.repeat(100_000)}}`;
    const inline = file('deep-launch.ptx', ptx(deep));
    const side = file('deep-side.ptx', readFileSync('test/fixtures/ptx/tma_pipeline.ptx', 'utf8'));
    writeFileSync(`${side}.launch.json`, deep);
    for (const [f, where] of [[inline, `${inline}:1:87`], [side, `${side}.launch.json:1:74`]] as const) {
      const r = await measureCli(['run', f, '--kernel', 'tma_pipeline'], 60_000);
      expect(r.code).toBe(2);
      expect(r.err.split('\n')[0]).toBe(`${where}: error: launch: objects and arrays nested deeper than 64 levels`);
      expect(r.err).not.toMatch(/internal error|\n\s+at /);
    }
  }, 120_000);
});

describe('timing values that JSON cannot show, and partial timings', () => {
  test('--timing with a value nested 10,000 levels: exit 2 naming the parameter (it was exit 70, a stack overflow)', async () => {
    const f = file('deep-timing.json', `{"tmaLatency": ${'{"value": '.repeat(10_000)}1${'}'.repeat(10_000)}}`);
    const r = await measureCli(['run', 'mechanism', '--timing', f], 60_000);
    expect(r.code).toBe(2);
    expect(r.err.trim()).toBe(`mbsim: error: ${f}: timing parameter 'tmaLatency' must be a number of cycles from 0 to 1e+9, got an object`);
  }, 60_000);

  test('simulate with a cyclic value or a timing missing parameters: TimingError, not a TypeError from inside the run', async () => {
    const { simulate } = await import('../src/sim/simulate.js');
    const { H200, mergeTiming, TimingError } = await import('../src/sim/timing.js');
    const k = parseSketch('kernel k arch=sm_90a\nbarrier b[1] count=1\nrole p per=one:\n    mbarrier.arrive b[0]\n', 'k.mbk').kernel!;
    const p = instantiate(k);
    const cyc: { value: unknown } = { value: null };
    cyc.value = cyc;
    const n = Object.keys(H200).length;
    expect(() => simulate(p, { timing: { tmaLatency: { value: 300 } } as never })).toThrow(TimingError);
    expect(() => simulate(p, { timing: { tmaLatency: { value: 300 } } as never })).toThrow(new RegExp(`^the timing lacks ${n - 1} of its ${n} parameters \\(clockMHz, issueArrive, issueExpectTx, …\\): give them all, e\\.g\\. mergeTiming\\(H200, \\{ tmaLatency: 300 \\}\\)$`));
    expect(() => simulate(p, { timing: { ...H200, tmaLatency: cyc } as never })).toThrow("timing parameter 'tmaLatency' must be a number of cycles from 0 to 1e+9, got an object");
    // It points to the documentation the package ships, not to a source file it does not.
    expect(() => simulate(p, { timing: 7 as never })).toThrow(new TimingError('a timing must be an object of parameters (H200\'s, each with its source: docs/HARDWARE.md, "Timing parameters and their sources"), got 7'));
    expect(simulate(p, { timing: mergeTiming(H200, { tmaLatency: 300 }) }).verdict).toBe('ok');
  });
});

describe('check with more workers than threads can be had', () => {
  test('workers 1e9: a RangeError naming the limit (it was "Array buffer allocation failed")', () => {
    const p = instantiate(parseSketch('kernel k arch=sm_90a\nbarrier b[1] count=1\nrole p per=one:\n    mbarrier.arrive b[0]\n', 'k.mbk').kernel!);
    expect(() => check(p, { workers: 1e9 })).toThrow(new RangeError('check: workers must be at most 256 (threads, each with its own copy of the kernel), got 1000000000'));
  });
});

describe('serve: a request with two Host headers', () => {
  test('400 (it was served: Node keeps the first Host and drops the second)', async () => {
    const { mkdirSync } = await import('node:fs');
    const net = await import('node:net');
    const { startServer, hostHeaders } = await import('../src/web/server/serve.js');
    expect(hostHeaders(['Host', 'a', 'X', 'b', 'host', 'c'])).toBe(2);
    mkdirSync(join(dir, 'app'), { recursive: true });
    writeFileSync(join(dir, 'app', 'index.html'), '<!doctype html><title>t</title>');
    const srv = await startServer({ root: join(dir, 'app'), port: 0 });
    const ask = (hosts: string[]) => new Promise<string>((done, fail) => {
      const s = net.connect(srv.port, '127.0.0.1');
      let out = '';
      s.on('data', (d) => (out += d));
      s.on('error', fail);
      s.on('close', () => done(out.split('\r\n')[0]!));
      s.write(`GET / HTTP/1.1\r\n${hosts.map((h) => `Host: ${h}\r\n`).join('')}Connection: close\r\n\r\n`);
    });
    try {
      expect(await ask([`127.0.0.1:${srv.port}`, 'evil.example'])).toBe('HTTP/1.1 400 Bad Request');
      expect(await ask([`127.0.0.1:${srv.port}`])).toBe('HTTP/1.1 200 OK');
    } finally {
      await srv.close();
    }
  });
});

describe('an output path that is another input of the command', () => {
  test('run --trace over its --timing file, and run / check --trace over the .launch.json beside the PTX (or a link to it): exit 2, the input kept (both were overwritten)', async () => {
    const { symlinkSync } = await import('node:fs');
    const timing = file('in-timing.json', '{}\n');
    const r = await measureCli(['run', 'mechanism', '--timing', timing, '--trace', timing], 60_000);
    expect([r.code, r.out]).toEqual([2, '']);
    expect(r.err.trim()).toBe(`mbsim: error: cannot write ${timing}: it is the --timing file (${timing}); choose another output path`);
    expect(readFileSync(timing, 'utf8')).toBe('{}\n');
    const ptx = file('in.ptx', readFileSync('test/fixtures/ptx/tma_pipeline.ptx', 'utf8'));
    const launch = '{"kernel": "tma_pipeline", "block": 128, "params": {"param_2": 4}, "tensorMaps": {"param_0": 16384}}\n';
    writeFileSync(`${ptx}.launch.json`, launch);
    symlinkSync(`${ptx}.launch.json`, join(dir, 'launch-link'));
    for (const [verb, flag] of [['run', '--trace'], ['check', '--trace'], ['check', '--sarif']]) {
      const out = join(dir, 'launch-link');
      const x = await measureCli([verb!, ptx, flag!, out], 60_000);
      expect(x.code).toBe(2);
      expect(x.err.trim()).toBe(`mbsim: error: cannot write ${out}: it is the launch file of the kernel (${ptx}.launch.json); choose another output path`);
    }
    expect(readFileSync(`${ptx}.launch.json`, 'utf8')).toBe(launch);
  }, 180_000);
});

describe('run --events within --timeout', () => {
  test('a run of 500,000+ events stopped by --timeout 2: the log is cut and says so, the process ends within about 2 s of the bound (it printed every event, 6.6 s)', { timeout: 120_000, retry: 2 }, async () => {
    const r = await measureCli(['run', 'pipeline', '--set', 'K=200000', '--events', '--timeout', '2'], 100_000);
    expect(r.code).toBe(3);
    expect(r.out).toMatch(/… \(the log stops here: [\d,]+ of [\d,]+ events left out\)/);
    expect(r.out).toContain('(the event log was cut by --timeout: --json writes every event, in chunks)');
    expect(r.wallMs).toBeLessThan(2000 + 3000);
  });

  test('renderEventLog stops where stop() says so', async () => {
    const { renderEventLog } = await import('../src/report/text.js');
    const { simulate } = await import('../src/sim/simulate.js');
    const { findExample } = await import('../src/examples/index.js');
    const p = instantiate(findExample('pipeline')!.build());
    const r = simulate(p);
    let n = 0;
    const text = renderEventLog(p, r.events!, Infinity, () => ++n > 5);
    expect(text.split('\n').at(-1)).toBe(`… (the log stops here: ${(r.events!.length - 5).toLocaleString('en-US')} of ${r.events!.length.toLocaleString('en-US')} events left out)`);
  });
});
