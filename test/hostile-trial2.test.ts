/**
 * A third hostile trial: launch sizes refused before anything is laid out per thread, warp or
 * instance; arithmetic faults that only a schedule reaches reported like every other fault of the
 * kernel (check, run, the trace of a counterexample); the one meaning of a cluster CTA mask; names
 * such as `constructor`; and the CLI's outputs that would write into stdout in use.
 */
import { describe, expect, test } from 'vitest';
import { check } from '../src/check/index.js';
import { main } from '../src/cli/main.js';
import { parseSketch } from '../src/lang/index.js';
import { ctaMask16, maskRanks } from '../src/machine/cta-mask.js';
import { instantiate, KernelError, MAX_AGENTS } from '../src/machine/program.js';
import { simulate } from '../src/sim/simulate.js';

const kernelOf = (src: string) => {
  const r = parseSketch(src, 'k.mbk');
  if (!r.kernel) throw new Error(r.diagnostics.map((d) => `${d.line}:${d.col} ${d.message}`).join('\n'));
  return r.kernel;
};
const diagsOf = (src: string) => parseSketch(src, 'k.mbk').diagnostics.map((d) => ({ line: d.line, col: d.col, message: d.message }));
const instError = (src: string, set: Record<string, number> = {}) => {
  try {
    instantiate(kernelOf(src), set);
  } catch (e) {
    if (e instanceof KernelError) return { message: e.message, line: e.loc?.line, col: e.loc?.col };
    throw e;
  }
  return null;
};

async function cli(args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (s) => out.push(s), err: (s) => err.push(s), color: false });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

const role = (opts: string, body = '    mbarrier.arrive b[0]') => `kernel k arch=sm_90a\nparam N = 2\nbarrier b[1] count=1\nrole p ${opts}:\n${body}\n`;

describe('launch sizes are checked before agents are laid out', () => {
  test('instances=100000000: one message at the instances= value (the threads of the CTA), no agent built', () => {
    const d = diagsOf(role('instances=100000000'));
    expect(d).toEqual([{ line: 4, col: 18, message: 'CTA 0 has 3,200,000,000 threads; a CTA can have at most 1024 (32 warps); role p has 3,200,000,000 (100,000,000 instances × 32 threads)' }]);
  });

  test('instances from a parameter set on the command line: the same refusal, at the value', () => {
    expect(instError(role('instances=N'), { N: 2 ** 40 })).toEqual({ line: 4, col: 18, message: expect.stringMatching(/^CTA 0 has 35,184,372,088,832 threads; .* \(1,099,511,627,776 instances × 32 threads\)$/) });
  });

  test('instances=-5 is an error with a caret (it was silently 0); --set N=-3 likewise', () => {
    expect(diagsOf(role('instances=-5'))).toEqual([{ line: 4, col: 18, message: 'role p has instances=-5; the number of instances cannot be negative' }]);
    expect(instError(role('instances=N'), { N: -3 })).toEqual({ line: 4, col: 18, message: 'role p has instances=-3; the number of instances cannot be negative' });
  });

  test('instances=0 stays a role that does not run', () => {
    const src = `kernel k arch=sm_90a\nbarrier b[1] count=1\nrole p per=one:\n    mbarrier.arrive b[0]\nrole q per=one instances=0:\n    mbarrier.arrive b[0]\n`;
    expect(instantiate(kernelOf(src)).agents.map((a) => a.name)).toEqual(['p']);
  });

  test('mbarriers of every CTA: 28,000 per CTA × 1056 CTAs is refused at the array', () => {
    const src = `kernel k arch=sm_90a grid=1056\nbarrier b[28000] count=1\nrole p per=one:\n    mbarrier.arrive b[0]\n`;
    expect(diagsOf(src)).toEqual([{ line: 2, col: 1, message: 'the launch has 29,568,000 mbarriers (28,000 per CTA × 1056 CTAs); mbsim simulates at most 262,144 (largest array: b[28,000])' }]);
  });

  test('buffer keys of every CTA: 200,000 one-byte elements × 1056 CTAs is refused at the array', () => {
    const src = `kernel k arch=sm_90a grid=1056\nbarrier b[1] count=1\nsmem A[200000] bytes=1\nrole p per=one:\n    mbarrier.arrive b[0]\n    ld.shared A[0]\n`;
    expect(diagsOf(src)[0]).toEqual({ line: 3, col: 1, message: 'the launch has 211,200,000 buffer elements and byte ranges (200,000 per CTA × 1056 CTAs); mbsim simulates at most 4,194,304 (largest array: A[200,000])' });
  });

  test(`agents of the launch: 1024 one-thread instances in each of 1056 CTAs pass the CTA's limit but not the launch's ${MAX_AGENTS}`, () => {
    const src = `kernel k arch=sm_90a grid=1056\nbarrier b[1] count=1024\nrole p threads=1 instances=1024:\n    mbarrier.arrive b[0]\n`;
    const d = diagsOf(src);
    expect(d).toHaveLength(1);
    expect(d[0]).toMatchObject({ line: 3, col: 28 });
    expect(d[0]!.message).toBe('the launch has more than 33,792 agents (warps, or roles that run as one agent) over its 1056 CTAs; mbsim simulates at most 33,792 (32 per CTA of 1056 CTAs); role p alone has 1,024 in CTA 33');
  });

  test('check and run of instances=100000000 from the CLI: exit 2 with the line, column and caret', async () => {
    const { mkdtempSync, writeFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const f = join(mkdtempSync(join(tmpdir(), 'mbsim-trial2-')), 'inst.mbk');
    writeFileSync(f, role('instances=100000000'));
    for (const verb of ['check', 'run']) {
      const r = await cli([verb, f, '--max-memory', '200']);
      expect(r.code).toBe(2);
      expect(r.err.split('\n').slice(0, 3)).toEqual([
        `${f}:4:18: error[E-kernel-threads]: CTA 0 has 3,200,000,000 threads; a CTA can have at most 1024 (32 warps); role p has 3,200,000,000 (100,000,000 instances × 32 threads)`,
        '  role p instances=100000000:',
        '                   ^~~~~~~~~',
      ]);
    }
  }, 60_000);
});

describe('an arithmetic fault a schedule reaches is a finding of check and run, never an internal error', () => {
  const loop = (stmt: string, wait = true) => `kernel k arch=sm_90a\nbarrier b[1] count=1\nrole p per=one:\n    for i in range(0, 3):\n${wait ? '        mbarrier.arrive b[0]\n' : ''}        ${stmt}\n`;

  test('a shift count out of range in a parity, reached at i = 0 after a step: check reports arith with its line (the trace is rebuilt)', () => {
    const r = check(instantiate(kernelOf(loop('mbarrier.try_wait.parity b[0], (1 << (62 + i * 10)) & 1'))));
    expect(r.verdict).toBe('arith');
    const h = r.hazards[0]!;
    expect(h.message).toBe('integer overflow: 1 << 62 exceeds 2^53 − 1 in an expression of p');
    expect(h.locations[0]).toMatchObject({ line: 6 });
    expect(h.trace.map((s) => s.op)).toEqual(['mbarrier.arrive b[0]  [b[0]]', 'mbarrier.try_wait.parity b[0], (1 << (62 + (i * 10))) & 1  [b[0]]']);
  });

  test('a parity (12 / (2 - i)) & 1 dividing by zero at i = 2: check reports arith (the trace leaves the faulting operand out)', () => {
    const src = `kernel k arch=sm_90a\nbarrier b[1] count=1\nrole p per=one:\n    for i in range(0, 3):\n        mbarrier.arrive b[0]\n        mbarrier.try_wait.parity b[0], ((12 / (2 - i)) & 1) ^ (i & 1)\n`;
    const r = check(instantiate(kernelOf(src)));
    expect(r.verdict).toBe('arith');
    expect(r.hazards[0]!.message).toBe('division by zero: 12 / 0 in an expression of p');
    expect(r.hazards[0]!.trace.at(-1)!.op).toBe('mbarrier.try_wait.parity b[0], ((12 / (2 - i)) & 1) ^ (i & 1)  [b[0]]');
  });

  test('work 12 / (2 - i): check finds the fault (it said OK) and run traps with it (it was exit 70)', () => {
    const p = instantiate(kernelOf(loop('work 12 / (2 - i)', false)));
    const c = check(p);
    expect(c.verdict).toBe('arith');
    expect(c.hazards[0]!.message).toBe('division by zero: 12 / 0 in an expression of p');
    const s = simulate(p);
    expect(s.verdict).toBe('trap');
    expect(s.diagnostics.map((d) => [d.diag.code, d.loc?.line])).toEqual([['arith', 5]]);
  });
});

describe('a cluster CTA mask is the 16-bit ctaMask for every operation that takes one', () => {
  test('the helper: two\'s complement of negative values, ranks within the cluster, none diagnosed', () => {
    expect(ctaMask16(-1)).toBe(0xffff);
    expect(ctaMask16(-4)).toBe(0xfffc);
    expect(ctaMask16(0x10003)).toBe(3);
    expect(maskRanks(-1, 4)).toEqual([0, 1, 2, 3]);
    expect(maskRanks(0b1010, 4)).toEqual([1, 3]);
    expect(maskRanks(0, 2)).toEqual({ problem: 'multicast mask 0x0000 selects no CTA' });
    expect(maskRanks(-4, 2)).toEqual({ problem: 'multicast mask 0xfffc (-4 as a 16-bit mask) selects only CTA ranks beyond the cluster of 2 (0..1)' });
  });

  const cluster = (mask: string) => `kernel k arch=sm_90a cluster=2
param M = 3
barrier full[1] count=1
smem tile[2] bytes=1024
role producer per=one:
    mbarrier.arrive.expect_tx full[0], 2048
    cp.async.bulk.tensor tile[cta], 1024, full[0] multicast=${mask}
    mbarrier.try_wait.parity full[0], 0
    ld.shared tile[0]
    ld.shared tile[1]
`;

  test('multicast=-1 (the ~0 idiom) reaches every CTA, as (1 << ncta) - 1 does: same verdict and states (it was a unicast copy)', () => {
    const all = check(instantiate(kernelOf(cluster('(1 << ncta) - 1'))));
    const neg = check(instantiate(kernelOf(cluster('-1'))));
    expect(neg.verdict).toBe(all.verdict);
    expect(neg.coverage.states).toBe(all.coverage.states);
    expect(neg.verdict).toBe('ok');
  });

  test('a literal mask of 0 or of ranks beyond the cluster only: an error at the mask', () => {
    expect(diagsOf(cluster('0'))[0]).toEqual({ line: 7, col: 61, message: 'multicast mask 0x0000 selects no CTA: cp.async.bulk.tensor would deliver to no CTA' });
    expect(diagsOf(cluster('4'))[0]).toEqual({ line: 7, col: 61, message: 'multicast mask 0x0004 selects only CTA ranks beyond the cluster of 2 (0..1): cp.async.bulk.tensor would deliver to no CTA' });
  });

  test('a computed mask selecting no CTA (--set M=16): the machine\'s multicast-mask error, at the copy', () => {
    const r = check(instantiate(kernelOf(cluster('M')), { M: 16 }));
    expect(r.verdict).toBe('multicast-mask');
    expect(r.hazards[0]!.message).toBe('cp.async.bulk.tensor tile[cta], 1024, full[0], multicast=M: multicast mask 0x0010 selects only CTA ranks beyond the cluster of 2 (0..1); the copy would deliver nothing');
    expect(r.hazards[0]!.locations[0]).toMatchObject({ line: 7 });
  });

  test('tcgen05.commit reads its mask the same way: -1 is every CTA, 0 an error', () => {
    const commit = (mask: string) => `kernel k arch=sm_100a cluster=2\nbarrier done[1] count=2\nrole mma per=one:\n    tcgen05.commit done[0] multicast=${mask}\n    mbarrier.try_wait.parity done[0], 0\n`;
    expect(check(instantiate(kernelOf(commit('-1')))).verdict).toBe('ok');
    expect(diagsOf(commit('0'))[0]).toMatchObject({ line: 4, message: 'multicast mask 0x0000 selects no CTA: tcgen05.commit would deliver to no CTA' });
  });
});

describe('names of Object.prototype are names like any other', () => {
  test('constructor and toString as variables: not taken for parameters', () => {
    const src = `kernel k arch=sm_90a\nbarrier b[1] count=1\nrole p per=one:\n    constructor = 0\n    toString = 1\n    mbarrier.arrive b[constructor]\n    mbarrier.try_wait.parity b[0], toString - 1\n`;
    expect(check(instantiate(kernelOf(src))).verdict).toBe('ok');
  });

  test('__proto__ as a parameter: its value is its own, and --set __proto__ overrides it', () => {
    const src = `kernel k arch=sm_90a\nparam __proto__ = 1\nbarrier b[__proto__] count=1\nrole p per=one:\n    mbarrier.arrive b[__proto__ - 1]\n    mbarrier.try_wait.parity b[0], 0\n`;
    expect(instantiate(kernelOf(src)).barriers[0]!.length).toBe(1);
    const set = Object.defineProperty({}, '__proto__', { value: 2, enumerable: true }) as Record<string, number>;
    expect(instantiate(kernelOf(src), set).barriers[0]!.length).toBe(2);
  });
});

describe('an output file that is the standard output in use is refused', () => {
  test('check --json --trace /dev/stdout, /proc/self/fd/1 or -: exit 2, one clear line (it wrote two JSON documents)', async () => {
    for (const path of ['/dev/stdout', '/proc/self/fd/1', '-']) {
      const r = await cli(['check', 'examples/bugs/B01.mbk', '--json', '--trace', path]);
      expect(r.code).toBe(2);
      // One document on stdout: the error's (no report, no trace).
      expect(JSON.parse(r.out)).toMatchObject({ schema: 'mbsim.error/1', command: 'check', exitCode: 2 });
      expect(r.err).toBe(`mbsim: error: --trace ${path} is the standard output, where the report is written: give --trace a file of its own (or --quiet to print no report)`);
    }
    const s = await cli(['check', 'examples/bugs/B01.mbk', '--format', 'json', '--sarif', '-']);
    expect([s.code, s.err]).toEqual([2, 'mbsim: error: --sarif - is the standard output, where the report is written: give --sarif a file of its own (or --quiet to print no report)']);
  });

  test('run --trace /dev/stdout: refused (the run report goes to stdout too)', async () => {
    const r = await cli(['run', 'pipeline', '--trace', '/dev/stdout']);
    expect([r.code, r.out]).toEqual([2, '']);
    expect(r.err).toMatch(/^mbsim: error: --trace \/dev\/stdout is the standard output, where the report is written/);
  });
});

describe('mbsim serve reads the sketch within the CLI loader\'s bound, once per change', () => {
  test('a file over the bound: 413 with the sizes; a small one: read once for many concurrent requests, again after a change', async () => {
    const { mkdirSync, mkdtempSync, writeFileSync, truncateSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const { request } = await import('node:http');
    const { startServer, MAX_SKETCH_BYTES } = await import('../src/web/server/serve.js');
    const dir = mkdtempSync(join(tmpdir(), 'mbsim-serve2-'));
    mkdirSync(join(dir, 'app'));
    writeFileSync(join(dir, 'app', 'index.html'), '<!doctype html><title>t</title>');
    const f = join(dir, 's.mbk');
    writeFileSync(f, 'kernel k arch=sm_90a\n');
    const srv = await startServer({ root: join(dir, 'app'), port: 0, file: f });
    const get = () => new Promise<{ status: number; body: string }>((done, fail) => {
      const req = request({ host: '127.0.0.1', port: srv.port, path: '/mbsim-file.json', headers: { Host: `127.0.0.1:${srv.port}` } }, (res) => {
        let body = '';
        res.on('data', (c) => (body += String(c)));
        res.on('end', () => done({ status: res.statusCode!, body }));
      });
      req.on('error', fail);
      req.end();
    });
    try {
      const many = await Promise.all(Array.from({ length: 32 }, get));
      expect(new Set(many.map((r) => `${r.status} ${r.body}`))).toEqual(new Set([`200 ${JSON.stringify({ name: 's.mbk', text: 'kernel k arch=sm_90a\n' })}`]));
      writeFileSync(f, 'kernel k2 arch=sm_90a\n');
      expect(JSON.parse((await get()).body).text).toBe('kernel k2 arch=sm_90a\n');
      truncateSync(f, 100 * 1024 * 1024); // a sparse 100 MB file
      const big = await Promise.all(Array.from({ length: 32 }, get));
      expect(new Set(big.map((r) => `${r.status} ${r.body}`))).toEqual(new Set([`413 s.mbk has 104,857,600 bytes; a sketch may have at most ${MAX_SKETCH_BYTES.toLocaleString('en-US')}`]));
    } finally {
      await srv.close();
    }
  });
});

describe('--timing JSON: a setting given twice is refused at its line and column', () => {
  test('duplicate key: exit 2 naming the key, line:col and the first line; nested objects and strings with quotes are read right', async () => {
    const { mkdtempSync, writeFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const { duplicateKey } = await import('../src/cli/json-keys.js');
    expect(duplicateKey('{"a": 1, "b": {"a": 2}, "c": ["a", "a"]}')).toBeNull();
    expect(duplicateKey('{"a\\"": 1,\n  "x": {"k": 1,\n    "k": 2}}')).toEqual({ key: 'k', line: 3, col: 5, firstLine: 2 });
    const f = join(mkdtempSync(join(tmpdir(), 'mbsim-timing2-')), 't.json');
    writeFileSync(f, '{\n  "issueArrive": 10,\n  "issueArrive": 20\n}\n');
    const r = await cli(['run', 'mechanism', '--timing', f]);
    expect([r.code, r.out]).toEqual([2, '']);
    expect(r.err).toBe(`${f}:3:3: error[E-timing-duplicate]: "issueArrive" is given twice (first on line 2); give each setting once\n    "issueArrive": 20\n    ^~~~~~~~~~~~~`);
    // A value out of range is located at the value, on its own line of a multi-line file.
    writeFileSync(f, '{\n  "issueArrive": 10,\n  "tmaLatency": -3\n}\n');
    const v = await cli(['run', 'mechanism', '--timing', f]);
    expect([v.code, v.out]).toEqual([2, '']);
    expect(v.err).toBe(`${f}:3:17: error[E-timing-value]: timing parameter 'tmaLatency' must be a number of cycles from 0 to 1e+9, got -3\n    "tmaLatency": -3\n                  ^~`);
  });
});
