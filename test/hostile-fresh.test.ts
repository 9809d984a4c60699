/**
 * Hostile input, a further round of new cases: thousands of barrier arrays, NaN bounds and
 * widths given to the library, a proxy-style request target naming another host on `serve`, and
 * `exit` without `shutdown` on `lsp`. Each case failed before its fix.
 */
import { connect } from 'node:net';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { check, instantiate, parseSketch, renderTimeline, simulate } from '../src/index.js';
import { startServer, type RunningServer } from '../src/web/server/serve.js';
import { LspClient } from './support/lsp-client.js';
import { buildCli, measureCli } from './support/measured-cli.js';

const REPO = resolve(__dirname, '..');
const fresh = () => mkdtempSync(join(tmpdir(), 'mbsim-fresh-'));

/** A sketch with `n` barrier arrays b0..b(n-1) (b_i of `len(i)` barriers), one role arriving on b0[0]. */
function manyArrays(n: number, len = (i: number) => (i % 3) + 1): string {
  const lines = ['kernel many arch=sm_90a'];
  for (let i = 0; i < n; i++) lines.push(`barrier b${i}[${len(i)}] count=1`);
  lines.push('role w warps=1 per=one:', '    mbarrier.arrive b0[0]');
  return `${lines.join('\n')}\n`;
}

const loop = parseSketch('kernel k arch=sm_90a\nparam N = 3\nbarrier b[1] count=1\nrole w warps=1 per=one:\n    for i in range(0, N):\n        mbarrier.arrive b[0]\n        mbarrier.try_wait.parity b[0], i & 1\n', 'k.mbk').kernel!;

describe('a kernel with thousands of barrier arrays', () => {
  test('every flat barrier key names its own array and index', () => {
    const p = instantiate(parseSketch(manyArrays(3000), 'many.mbk').kernel!, {});
    expect(p.barriers).toHaveLength(3000);
    for (const b of p.barriers) {
      for (let i = 0; i < b.length; i++) {
        expect(p.barrierOf(b.offset + i)).toEqual({ info: b, index: i, cta: 0 });
        expect(p.barrierName(b.offset + i)).toBe(`${b.name}[${i}]`);
      }
    }
  });

  test('check of 20,000 arrays (as many unused-barrier warnings) ends within its --timeout', async () => {
    const f = join(fresh(), 'many.mbk');
    writeFileSync(f, manyArrays(20_000, () => 1));
    const r = await measureCli(['check', f, '--timeout', '10', '--format', 'short', '--max-traces', '0'], 120_000);
    expect(r.err).toBe('');
    expect([0, 3]).toContain(r.code);
    if (r.code === 0) expect(r.out).toMatch(/^mbsim check many: OK, 0 errors, 19999 warnings;/m);
    // Node's start, the 10 s bound and the report; before, the static findings' traces alone ran past 60 s.
    expect(r.wallMs).toBeLessThan(25_000);
  }, 150_000);
});

describe('the library refuses NaN where a bound or a width is expected', () => {
  test.each([
    ['simulate', 'maxSteps', () => simulate(instantiate(loop, {}), { maxSteps: NaN })],
    ['simulate', 'timeoutMs', () => simulate(instantiate(loop, {}), { timeoutMs: Number('x') })],
    ['simulate', 'activeSms', () => simulate(instantiate(loop, {}), { activeSms: NaN })],
    ['check', 'maxStates', () => check(instantiate(loop, {}), { maxStates: NaN })],
    ['check', 'timeout', () => check(instantiate(loop, {}), { timeout: NaN })],
    ['check', 'maxMemory', () => check(instantiate(loop, {}), { maxMemory: '1000' as unknown as number })],
  ])('%s with %s NaN (or a string): a RangeError naming it, not a run without that bound', (where, name, run) => {
    expect(run).toThrow(new RangeError(`${where}: ${name} must be a number (Infinity for no bound), got ${name === 'maxMemory' ? 'the string "1000"' : 'NaN'}`));
  });

  test.each([
    ['check', 'timeout', -5, 'a positive number of milliseconds', () => check(instantiate(loop, {}), { timeout: -5 })],
    ['check', 'timeout', 0, 'a positive number of milliseconds', () => check(instantiate(loop, {}), { timeout: 0 })],
    ['check', 'maxStates', 0, 'a positive whole number of states', () => check(instantiate(loop, {}), { maxStates: 0 })],
    ['check', 'maxStates', -1, 'a positive whole number of states', () => check(instantiate(loop, {}), { maxStates: -1 })],
    ['check', 'maxStates', 1.5, 'a positive whole number of states', () => check(instantiate(loop, {}), { maxStates: 1.5 })],
    ['check', 'maxMemory', -1, 'a positive number of bytes', () => check(instantiate(loop, {}), { maxMemory: -1 })],
    ['simulate', 'maxSteps', -1, 'a positive whole number of steps', () => simulate(instantiate(loop, {}), { maxSteps: -1 })],
    ['simulate', 'maxSteps', 0, 'a positive whole number of steps', () => simulate(instantiate(loop, {}), { maxSteps: 0 })],
    ['simulate', 'timeoutMs', -1, 'a positive number of milliseconds', () => simulate(instantiate(loop, {}), { timeoutMs: -1 })],
    ['simulate', 'maxMemory', 0, 'a positive number of bytes', () => simulate(instantiate(loop, {}), { maxMemory: 0 })],
  ])('%s with %s %s: a RangeError naming it and the value, not a silent incomplete', (where, name, v, what, run) => {
    expect(run).toThrow(new RangeError(`${where}: ${name} must be ${what} (Infinity for no bound), got ${v}`));
  });

  test('Infinity and positive bounds are still taken', () => {
    expect(check(instantiate(loop, {}), { timeout: Infinity, maxStates: Infinity, maxMemory: Infinity }).verdict).toBe('ok');
    expect(check(instantiate(loop, {}), { timeout: 60_000, maxStates: 1000, maxMemory: 2 ** 31 }).verdict).toBe('ok');
    expect(simulate(instantiate(loop, {}), { maxSteps: Infinity, timeoutMs: 60_000, maxMemory: 2 ** 31 }).verdict).toBe('ok');
    expect(simulate(instantiate(loop, {}), { maxSteps: 1 }).verdict).toBe('incomplete');
  });

  test('renderTimeline with a width of NaN, -5 or 1e9: a RangeError naming the width', () => {
    const r = simulate(instantiate(loop, {}));
    for (const w of [NaN, -5, 1e9, 40.5]) expect(() => renderTimeline(r, w)).toThrow(new RangeError(`renderTimeline: width must be a whole number of columns from 20 to 1000, got ${w}`));
    expect(renderTimeline(r, 20).length).toBeGreaterThan(0);
  });
});

describe('serve: a request target in absolute form names the host asked for', () => {
  let srv: RunningServer;
  beforeAll(async () => {
    const root = join(fresh(), 'app');
    mkdirSync(root);
    writeFileSync(join(root, 'index.html'), '<!doctype html><title>t</title>');
    const sketch = join(root, '..', 's.mbk');
    writeFileSync(sketch, 'kernel k arch=sm_90a\n');
    srv = await startServer({ root, port: 0, file: sketch });
  });
  afterAll(async () => {
    await srv.close();
  });

  /** The status line of a raw request with `target` and a loopback Host header. */
  const statusOf = (target: string) => new Promise<string>((done, fail) => {
    const s = connect(srv.port, '127.0.0.1', () => s.write(`GET ${target} HTTP/1.1\r\nHost: 127.0.0.1:${srv.port}\r\nConnection: close\r\n\r\n`));
    let got = '';
    s.on('data', (d) => (got += d));
    s.on('end', () => done(got.split('\r\n')[0]!));
    s.on('error', fail);
  });

  test('http://evil.example/mbsim-file.json with a loopback Host: 421; the loopback authority itself, or origin form: 200', async () => {
    expect(await statusOf('http://evil.example/mbsim-file.json')).toBe('HTTP/1.1 421 Misdirected Request');
    expect(await statusOf(`http://127.0.0.1:${srv.port}/mbsim-file.json`)).toBe('HTTP/1.1 200 OK');
    expect(await statusOf('/mbsim-file.json')).toBe('HTTP/1.1 200 OK');
  });
});

describe('lsp: exit without shutdown', () => {
  test('the server ends with exit code 1 (the protocol\'s), even while the client keeps its pipe open', async () => {
    buildCli();
    const lsp = new LspClient(process.execPath, [join(REPO, '.cache', 'mbsim-measured-cli', 'cli', 'bin.js'), 'lsp', '--stdio'], REPO);
    await lsp.request('initialize', { processId: process.pid, rootUri: null, capabilities: {} });
    lsp.notify('initialized', {});
    lsp.notify('exit', null);
    expect(await lsp.exited).toBe(1);
  }, 180_000);
});

describe('sizes and times past 2^53', () => {
  test('work 2^53 − 1 cycles: the run is refused as too long to time exactly (exit 2), not a cycle count rounded past 2^53', async () => {
    const { main } = await import('../src/cli/main.js');
    const f = join(fresh(), 'w.mbk');
    writeFileSync(f, 'kernel k arch=sm_90a\nbarrier b[1] count=1\nrole w warps=1 per=one:\n    work 9007199254740991\n    mbarrier.arrive b[0]\n');
    const err: string[] = [];
    expect(await main(['run', f, '--max-memory', '60000'], { out: () => undefined, err: (s) => err.push(s), color: false })).toBe(2);
    expect(err.join('\n')).toMatch(/^mbsim: error: simulated time reached \d+ cycles \(beyond 2\^53, or not a number\) after 2 steps/);
  });

  test('shared memory past 2^53 bytes is named as such, not as a rounded byte count', async () => {
    const { main } = await import('../src/cli/main.js');
    const f = join(fresh(), 'big.mbk');
    writeFileSync(f, 'kernel big arch=sm_90a\nparam N = 9007199254740991\nbarrier b[N] count=1\nrole w warps=1 per=one:\n    mbarrier.arrive b[0]\n');
    const err: string[] = [];
    expect(await main(['run', f], { out: () => undefined, err: (s) => err.push(s), color: false })).toBe(2);
    expect(err.join('\n')).toContain('error[E-kernel-smem-size]: shared memory per CTA is more than 9,007,199,254,740,991 bytes; a CTA can have at most 232,448 (227 KiB)');
  });
});

describe('library misuse: wrong types are a clear TypeError or RangeError, never a crash inside', () => {
  const p = instantiate(parseSketch('kernel k arch=sm_90a\nbarrier b count=1\nrole r warps=1 per=one:\n    mbarrier.arrive b\n', 'k.mbk').kernel!);
  test('instantiate, simulate and check of null or a non-object', () => {
    expect(() => instantiate(null as never)).toThrow(/^instantiate: expected a Kernel .*got null$/);
    expect(() => instantiate([] as never)).toThrow(/got an array$/);
    expect(() => simulate(null as never)).toThrow(/^simulate: program must be a Program \(from instantiate\), got null$/);
    expect(() => check(7 as never)).toThrow(/^check: program must be a Program \(from instantiate\), got a number \(7\)$/);
  });
  test('workers must be a positive integer', () => {
    expect(() => check(p, { workers: 1.5 })).toThrow(/^check: workers must be a positive integer, got 1\.5$/);
    expect(() => check(p, { workers: 0 })).toThrow(RangeError);
  });
  test('decodeWord takes a 64-bit bigint only', async () => {
    const { decodeWord } = await import('../src/model/encoding.js');
    expect(() => decodeWord(-1n)).toThrow(/^decodeWord: a 64-bit word is 0 … 2\^64 − 1, got -1$/);
    expect(() => decodeWord(1n << 64n)).toThrow(RangeError);
    expect(() => decodeWord(5 as never)).toThrow(/^decodeWord: expected a bigint, got number$/);
    expect(decodeWord(0n).phaseParity).toBe(0);
  });
});
