/**
 * A second hostile trial: every read of `check --watch` guarded like the first, `run`'s output of
 * a long run within --max-memory, `--workers` capped, `--sweep` within one --timeout, `check`'s
 * traces within its timeout, FIFO outputs that never block forever or fail silently, and smaller
 * cases (timing files, odd kernel paths, echoed arguments, numeric flags past 2^53, signals).
 */
import { spawn, spawnSync } from 'node:child_process';
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, test, vi } from 'vitest';
import { workerCount } from '../src/cli/args.js';
import { JsonStream } from '../src/cli/json-stream.js';
import { main } from '../src/cli/main.js';
import { readForWatch, watchFile } from '../src/cli/watch.js';
import { buildCli, measureCli } from './support/measured-cli.js';

const REPO = resolve(__dirname, '..');
const MiB = 1048576;
const fresh = () => mkdtempSync(join(tmpdir(), 'mbsim-trial-'));
const temps = (dir: string) => readdirSync(dir).filter((n) => n.includes('.tmp-'));

async function cli(args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (s) => out.push(s), err: (s) => err.push(s), color: false });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

beforeAll(() => {
  buildCli();
}, 180_000);

describe('--watch reads the file again with the guards of the first read', () => {
  test('a path that becomes a link to /dev/zero or a directory: a one-line problem, never a read of the device', () => {
    const dir = fresh();
    const f = join(dir, 'k.mbk');
    symlinkSync('/dev/zero', f);
    expect(readForWatch(f)).toBe(`\u0000cannot read sketch file ${f}: it is a character device, not a regular file`);
    rmSync(f);
    mkdirSync(f);
    expect(readForWatch(f)).toBe(`\u0000cannot read sketch file ${f}: it is a directory, not a regular file`);
    rmSync(f, { recursive: true });
    expect(readForWatch(f)).toBeNull(); // gone (an editor's save in progress): nothing to check yet
  });

  test('the watched file replaced by a link to /dev/zero: checked again (the check reports it), the watch goes on', async () => {
    const dir = fresh();
    const f = join(dir, 'k.mbk');
    writeFileSync(f, readFileSync(join(REPO, 'examples/bugs/B01.mbk')));
    let checks = 0;
    let stop!: () => void;
    const until = new Promise<void>((done) => (stop = done));
    let watching = false;
    const done = watchFile(f, { check: async () => (++checks, 2), out: (s) => (watching ||= s.includes('-- watching')), debounceMs: 20, until });
    for (let i = 0; i < 300 && !watching; i++) await new Promise((r) => setTimeout(r, 10));
    await new Promise((r) => setTimeout(r, 50));
    rmSync(f);
    symlinkSync('/dev/zero', f);
    for (let i = 0; i < 300 && checks < 2; i++) await new Promise((r) => setTimeout(r, 10));
    stop();
    expect(await done).toBe(2);
    expect(checks).toBe(2);
  });

  test('check --watch on a link to /dev/zero or a directory: exit 2 at once, what it is', async () => {
    const dir = fresh();
    symlinkSync('/dev/zero', join(dir, 'z.mbk'));
    const r = await cli(['check', join(dir, 'z.mbk'), '--watch']);
    expect(r.code).toBe(2);
    expect(r.err).toBe(`mbsim: error: --watch needs a sketch file: ${join(dir, 'z.mbk')}: it is a character device, not a regular file`);
    expect((await cli(['check', dir, '--watch'])).err).toMatch(/it is a directory, not a regular file$/);
  });
});

describe('run: the report of a long run stays within --max-memory', () => {
  test('--json of a run stopped by --max-memory 300: valid JSON, within 5% of the bound, exit 3, what was left out said', async () => {
    const dir = fresh();
    const out = join(dir, 'run.json');
    const r = await measureCli(['run', 'pipeline', '--set', 'K=100000000', '--max-steps', '20000000', '--max-memory', '300', '--json', '--trace', out]);
    expect(r.code).toBe(3);
    expect(r.err).toBe('');
    // Both outputs are built from the records; the document goes out at the pace of its reader
    // and the output budget collects garbage near the bound: within 5% of it.
    expect(r.peakRss).toBeLessThan(315 * MiB);
    const doc = JSON.parse(r.out);
    expect(doc.verdict).toBe('incomplete');
    expect(doc.stopped).toMatch(/^stopped by --max-memory/);
    // Either every event is there, or the document says how many were left out.
    if (doc.outputStopped) expect(doc.outputStopped.omitted).toBeGreaterThan(0);
    else expect(doc.events.length).toBe(doc.eventCount);
    expect(JSON.parse(readFileSync(out, 'utf8')).traceEvents.length).toBeGreaterThan(1000);
  }, 120_000);

  test('the chunked JSON is JSON.stringify\'s text, and a stop cuts arrays to valid JSON with a trailer', () => {
    const v = { a: [1, { b: undefined, c: 'x\u2028"' }, [undefined, null]], d: 'é', e: { f: [{ g: 1 }] }, h: undefined };
    const chunks = [...new JsonStream(() => false, 4).chunks(v)];
    expect(chunks.length).toBeGreaterThan(3);
    expect(chunks.join('')).toBe(JSON.stringify(v));
    let n = 0;
    const js = new JsonStream(() => ++n > 2);
    const text = [...js.chunks({ xs: [1, 2, 3, 4, 5] }, () => ({ outputStopped: { omitted: js.cut } }))].join('');
    expect(JSON.parse(text)).toEqual({ xs: [1, 2], outputStopped: { omitted: 3 } });
  });
});

describe('--workers and numeric flags', () => {
  test('more workers than CPUs: the CPU count, with a note', () => {
    expect(workerCount(1000, 2)).toEqual({ workers: 2, note: "mbsim: note: --workers 1000 is more than this machine's 2 CPUs; using 2 worker threads" });
    expect(workerCount(2, 2)).toEqual({ workers: 2, note: null });
  });

  test('check --workers 1000 runs with at most the CPUs and says so; a value past 2^53 is exit 2', async () => {
    const r = await cli(['check', 'examples/bugs/B01.mbk', '--workers', '1000', '--format', 'short']);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^mbsim: note: --workers 1000 is more than this machine's \d+ CPUs?; using \d+ worker threads?$/);
    const huge = await cli(['check', 'mechanism', '--workers', '9'.repeat(40)]);
    expect(huge.code).toBe(2);
    expect(huge.err).toBe(`mbsim: error: --workers ${'9'.repeat(40)} is beyond the integers mbsim handles exactly (at most 9,007,199,254,740,991)`);
  });

  test.each([
    ['run', '--max-steps', '9007199254740993'], ['run', '--width', '18014398509481984'], ['check', '--max-states', '9007199254740992'],
    ['check', '--max-traces', '1e3'], ['run', '--seed', '-9007199254740993'], ['run', '--timeout', '1000001'],
  ])('%s %s %s: exit 2, one line', async (verb, flag, value) => {
    const r = await cli([verb, 'mechanism', flag, value]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(new RegExp(`^mbsim: error: ${flag} .*${value.replace(/[-]/g, '\\-')}`));
    expect(r.err.split('\n')).toHaveLength(1);
  });
});

describe('--sweep', () => {
  test('--timeout bounds the whole sweep: the rows after it are incomplete, not checked (exit 3)', async () => {
    const r = await cli(['check', 'pipeline', '--sweep', 'K=1..5000', '--timeout', '1', '--format', 'short']);
    expect(r.code).toBe(3);
    expect(r.out).toMatch(/not checked: --timeout ran out/);
    const rows = r.out.split('\n').filter((l) => /^\d+\s+(ok|incomplete|bad-input|[a-z-]+)\s+[\d,]+(\s|$)/.test(l));
    expect(rows).toHaveLength(5000);
    expect(rows.at(-1)).toMatch(/^5000\s+incomplete\s+0\s+not checked: --timeout ran out$/);
  }, 60_000);

  test('--sweep K with --set K: exit 2, the conflict named', async () => {
    const r = await cli(['check', 'pipeline', '--sweep', 'K=1..2', '--set', 'K=3']);
    expect(r.code).toBe(2);
    expect(r.err).toBe('mbsim: error: --sweep K and --set K both give K: sweep it or set it, not both');
  });
});

describe('check: what follows the search stays within --timeout', () => {
  test('past the timeout once the search ends, findings after the first keep their schedule but get no trace', async () => {
    vi.resetModules();
    let offset = 0;
    const real = Date.now.bind(Date);
    const spy = vi.spyOn(Date, 'now').mockImplementation(() => real() + offset);
    vi.doMock('../src/check/explore.js', async () => {
      const actual = await vi.importActual<typeof import('../src/check/explore.js')>('../src/check/explore.js');
      // The search ends; then the clock is an hour later (past any timeout).
      return { ...actual, explore: (...a: Parameters<typeof actual.explore>) => { const r = actual.explore(...a); offset += 3_600_000; return r; } };
    });
    try {
      const { check } = await import('../src/check/check.js');
      const { renderCheck, checkJson } = await import('../src/check/report.js');
      const { loadSketchFile } = await import('../src/cli/sketch.js');
      const { instantiate } = await import('../src/machine/program.js');
      const sk = join(fresh(), 'races.mbk');
      writeFileSync(sk, `kernel races arch=sm_90a\nsmem S[3] bytes=4096\nrole w warps=1 per=one:\n${[0, 1, 2].map((i) => `    st.shared S[${i}]\n`).join('')}role r warps=1 per=one:\n${[0, 1, 2].map((i) => `    ld.shared S[${i}]\n`).join('')}`);
      const r = check(instantiate(loadSketchFile(sk), {}), { all: true, timeout: 60_000 });
      const found = [...r.hazards, ...r.warnings].filter((h) => !h.static);
      expect(found).toHaveLength(3); // a race on each of S[0], S[1], S[2]
      expect(found.filter((h) => !h.untraced)).toHaveLength(1);
      for (const h of found.filter((x) => x.untraced)) {
        expect(h.trace).toEqual([]);
        expect(h.schedule.length).toBeGreaterThan(0);
      }
      expect(renderCheck(r)).toMatch(/\(trace of \d+ steps? not built: the time bound ran out after the search; raise --timeout SECONDS to build it\)/);
      expect((checkJson(r) as { hazards: { untraced?: boolean }[]; warnings: { untraced?: boolean }[] }).hazards.concat((checkJson(r) as { warnings: { untraced?: boolean }[] }).warnings).some((h) => h.untraced)).toBe(true);
    } finally {
      spy.mockRestore();
      vi.doUnmock('../src/check/explore.js');
      vi.resetModules();
    }
  });
});

describe('FIFO outputs', () => {
  test('a FIFO nobody reads: exit 2 after the wait (bounded by --timeout), one line; the FIFO stays, no temp file', async () => {
    const dir = fresh();
    const fifo = join(dir, 'pipe');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    const r = await cli(['run', 'mechanism', '--trace', fifo, '--timeout', '1']);
    expect(r.code).toBe(2);
    expect(r.err).toBe(`mbsim: error: cannot write ${fifo}: it is a FIFO and no process opened it for reading within 1 s`);
    expect(lstatSync(fifo).isFIFO()).toBe(true);
    expect(temps(dir)).toEqual([]);
  }, 30_000);

  test('a reader that closes the FIFO early: exit 2, one line naming EPIPE', async () => {
    const dir = fresh();
    const fifo = join(dir, 'pipe');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    const reader = spawn('head', ['-c', '100', fifo], { stdio: ['ignore', 'pipe', 'ignore'] });
    // 780 KB of trace (far past a pipe's 64 KiB) on a budget the test process's own memory never reaches.
    const r = await cli(['run', 'pipeline', '--set', 'K=100', '--max-memory', '16384', '--trace', fifo]);
    reader.kill();
    expect(r.code).toBe(2);
    expect(r.err).toBe(`mbsim: error: cannot write ${fifo}: the reader closed it before the end (EPIPE)`);
    expect(lstatSync(fifo).isFIFO()).toBe(true);
  }, 30_000);
});

describe('smaller cases', () => {
  test('a timing file with a UTF-8 BOM is read; an object value without "value" is named', async () => {
    const dir = fresh();
    writeFileSync(join(dir, 'bom.json'), '\ufeff{"tmaLatency": 700}');
    expect((await cli(['run', 'mechanism', '--timing', join(dir, 'bom.json'), '--json', '--omit', 'events,spans,ledger'])).code).toBe(0);
    writeFileSync(join(dir, 'obj.json'), '{"tmaLatency": {"cycles": 700}}');
    const r = await cli(['run', 'mechanism', '--timing', join(dir, 'obj.json')]);
    expect(r.code).toBe(2);
    expect(r.err).toBe(`${join(dir, 'obj.json')}:1:16: error[E-timing-value]: timing parameter 'tmaLatency' must be a number or { "value": number }, got an object without "value"\n  {"tmaLatency": {"cycles": 700}}\n                 ^`);
    writeFileSync(join(dir, 'clock.json'), '{"clockMHz": 1e-300}');
    expect((await cli(['run', 'mechanism', '--timing', join(dir, 'clock.json')])).err).toMatch(/:1:14: error\[E-timing-value\]: timing parameter 'clockMHz' must be a clock in MHz from 1 to 100,000, got 1e-300\n  \{"clockMHz": 1e-300\}\n {15}\^~{5}$/);
  });

  test('a kernel path that is a link to /dev/zero, a FIFO or a directory says what it is', async () => {
    const dir = fresh();
    symlinkSync('/dev/zero', join(dir, 'z.mbk'));
    expect(spawnSync('mkfifo', [join(dir, 'f.mbk')]).status).toBe(0);
    for (const [p, what] of [[join(dir, 'z.mbk'), 'a character device'], [join(dir, 'f.mbk'), 'a FIFO'], [dir, 'a directory']] as const) {
      const r = await cli(['run', p]);
      expect(r.code).toBe(2);
      expect(r.err).toBe(`mbsim: error: cannot read sketch file ${p}: it is ${what}, not a regular file`);
    }
  });

  test('a kernel path through a file, or a loop of links: exit 2, the cause in words', async () => {
    const dir = fresh();
    symlinkSync(join(dir, 'loop.mbk'), join(dir, 'loop.mbk'));
    const r1 = await cli(['run', 'examples/pipeline.mbk/x.mbk']);
    expect(r1.code).toBe(2);
    expect(r1.err).toBe('mbsim: error: cannot read sketch file examples/pipeline.mbk/x.mbk: a part of the path before the name is not a directory (ENOTDIR)');
    const r2 = await cli(['check', join(dir, 'loop.mbk')]);
    expect(r2.code).toBe(2);
    expect(r2.err).toBe(`mbsim: error: cannot read sketch file ${join(dir, 'loop.mbk')}: a loop of symbolic links (ELOOP)`);
  });

  test('decode of a 100 KB argument echoes it cut short', async () => {
    const r = await cli(['decode', 'f'.repeat(100_000)]);
    expect(r.code).toBe(2);
    expect(r.err.length).toBeLessThan(300);
    expect(r.err).toContain('… (100,000 characters)');
    const set = await cli(['run', 'mechanism', '--set', `X=${'1'.repeat(50_000)}x`]);
    expect(set.code).toBe(2);
    expect(set.err.length).toBeLessThan(300);
  });
});

describe('found in the second trial', () => {
  test.each([
    ['--omit', ['run', 'mechanism', '--json', '--omit', 'a'.repeat(100_000)]],
    ['--phase-table', ['run', 'mechanism', '--phase-table', `${'a'.repeat(100_000)}::`]],
    ['--sweep', ['check', 'mechanism', '--sweep', `${'A'.repeat(100_000)}=x`]],
    ['an unknown --set name', ['run', 'mechanism', '--set', `${'P'.repeat(100_000)}=1`]],
  ])('%s with a 100 KB value: exit 2, the message cut short', async (_what, args) => {
    const r = await cli(args);
    expect(r.code).toBe(2);
    expect(r.err.length).toBeLessThan(1100);
    expect(r.err).toMatch(/… \([\d,]+ characters\)/);
  });

  test('an output name of 250 characters: written (the temporary name stays within NAME_MAX)', async () => {
    const dir = fresh();
    const f = join(dir, `${'t'.repeat(245)}.json`);
    // In this process (the test runner's, with its own resident set) the memory bound is set wide:
    // the case is about the name, not the bound.
    const r = await cli(['run', 'mechanism', '--trace', f, '--max-memory', '60000']);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(JSON.parse(readFileSync(f, 'utf8')).traceEvents.length).toBeGreaterThan(5);
    expect(temps(dir)).toEqual([]);
  });

  test('check --sarif F --trace F (or a link to F): exit 2, nothing written; /dev/null twice is fine', async () => {
    const dir = fresh();
    const f = join(dir, 'out.json');
    symlinkSync(f, join(dir, 'link.json'));
    for (const other of [f, join(dir, 'link.json')]) {
      const r = await cli(['check', 'examples/bugs/B01.mbk', '--sarif', f, '--trace', other]);
      expect(r.code).toBe(2);
      expect(r.err).toBe(`mbsim: error: --sarif and --trace both name ${other}: give each its own file`);
    }
    expect(readdirSync(dir)).toEqual(['link.json']);
    expect((await cli(['check', 'examples/bugs/B01.mbk', '--sarif', '/dev/null', '--trace', '/dev/null'])).code).toBe(1);
  });

  test('check --json through the chunked writer: the same document as JSON.stringify', async () => {
    const r = await cli(['check', 'examples/bugs/B01.mbk', '--json']);
    expect(r.code).toBe(1);
    const doc = JSON.parse(r.out);
    expect(doc.schema).toBe('mbsim.check/1');
    expect(doc.hazards[0].trace.length).toBeGreaterThan(0);
  });

  test('--sweep given 1,000 times: exit 2 at once (at most 64 ranges)', async () => {
    const args = ['check', 'mechanism'];
    for (let i = 0; i < 1000; i++) args.push('--sweep', `P${i}=1`);
    const r = await cli(args);
    expect(r.code).toBe(2);
    expect(r.err).toBe('mbsim: error: --sweep is given 1,000 times; at most 64 ranges (one per parameter)');
  });
});

describe('signals during a long write of the built CLI', () => {
  test('SIGINT while run writes a large --trace: no temporary file, no output file', async () => {
    const dir = fresh();
    const target = join(dir, 'trace.json');
    const child = spawn(process.execPath, [buildCli(), 'run', 'pipeline', '--set', 'K=200000', '--max-steps', '5000000', '--trace', target, '--width', '40'], { cwd: REPO, stdio: ['ignore', 'ignore', 'pipe'] });
    const exited = new Promise<NodeJS.Signals | null>((done) => child.on('exit', (_c, sig) => done(sig)));
    let sent = false;
    for (let i = 0; i < 12_000 && !sent; i++) {
      const t = temps(dir)[0];
      let size = 0;
      try {
        size = t ? statSync(join(dir, t)).size : 0;
      } catch {
        size = 0;
      }
      if (size > 0) sent = child.kill('SIGINT');
      else await new Promise((r) => setTimeout(r, 5));
    }
    expect(sent).toBe(true);
    expect(await exited).toBe('SIGINT');
    expect(readdirSync(dir)).toEqual([]);
  }, 90_000);
});
