/**
 * A fifth hostile trial: errno codes in words, the hang explanation and the report of a run within
 * --max-memory / --timeout, `check --watch` on every input file, the library's arguments checked.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { buildCli, measureCli } from './support/measured-cli.js';
import { errnoText } from '../src/cli/errno.js';
import { outputMode, OutputError } from '../src/cli/output.js';
import { LARGEST } from './support/largest-launch.js';

describe('errno codes in words', () => {
  test('errnoText: the words, then the code (it printed EACCES, ENOENT, EISDIR bare)', () => {
    const e = (code: string, errno?: number) => Object.assign(new Error(`x ${code}`), { code, ...(errno !== undefined ? { errno } : {}) });
    expect(errnoText(e('EACCES'))).toBe('permission denied (EACCES)');
    expect(errnoText(e('EROFS'))).toBe('the file system is read-only (EROFS)');
    expect(errnoText(e('EISDIR'))).toBe('it is a directory (EISDIR)');
    expect(errnoText(e('ENOENT'), { ENOENT: 'no such directory' })).toBe('no such directory (ENOENT)');
    expect(errnoText(e('ECONNRESET', -104))).toBe('connection reset by peer (ECONNRESET)');
    expect(errnoText(new Error('plain'))).toBe('plain');
  });

  test('an output under a regular file: ENOTDIR in words', () => {
    expect(() => outputMode('package.json/x.json')).toThrow(OutputError);
    expect(() => outputMode('package.json/x.json')).toThrow('cannot write package.json/x.json: a part of the path before the name is not a directory (ENOTDIR)');
    expect(() => outputMode('/no-such-dir-mbsim/x.json')).toThrow('cannot write /no-such-dir-mbsim/x.json: no such directory (ENOENT)');
  });
});

const MiB = 1048576;
const dir = mkdtempSync(join(tmpdir(), 'mbsim-trial4-'));


beforeAll(() => {
  buildCli();
}, 180_000);

describe('the hang explanation and the report of run within the bounds', () => {
  test('run of 33,792 blocked warps --max-memory 800 --timeout 20: exit 3, a line naming the bound, under 800 MiB and within about the timeout (it ran 12 min and grew to 920 MB explaining the hang)', async () => {
    const f = join(dir, 'largest.mbk');
    writeFileSync(f, LARGEST);
    const r = await measureCli(['run', f, '--max-memory', '800', '--timeout', '20'], 170_000);
    expect(r.err).toBe('');
    expect(r.code).toBe(3);
    expect(r.out).toContain('verdict: hang');
    expect(r.out).toMatch(/the explanation of the hang was cut: --(max-memory|timeout) .* blocked agents left unexplained/);
    expect(r.peakRss).toBeLessThan(800 * MiB);
    expect(r.wallMs).toBeLessThan(20_000 + 5000);
  }, 180_000);

  test('renderTimeline stops where stop() says so; renderLedger shows at most 32 barriers of a hang', async () => {
    const { parseSketch } = await import('../src/lang/index.js');
    const { instantiate } = await import('../src/machine/program.js');
    const { simulate } = await import('../src/sim/simulate.js');
    const { renderTimeline, renderLedger, FOCUS_MAX } = await import('../src/report/text.js');
    const { buildLedger } = await import('../src/report/ledger.js');
    const src = 'kernel k arch=sm_90a\nbarrier b[40] count=2\nrole p per=one:\n    for i in range(0, 40):\n        mbarrier.arrive b[i]\n    mbarrier.try_wait.parity b[0], 0\n';
    const p = instantiate(parseSketch(src, 'k.mbk').kernel!);
    const r = simulate(p);
    let n = 0;
    expect(renderTimeline(r, 96, undefined, () => ++n > 0).split('\n').at(-1)).toBe('… (the timeline stops here: 1 of 1 agents left out)');
    const text = renderLedger(buildLedger(p, r.events!), 12, Array.from({ length: 40 }, (_, i) => i));
    expect(FOCUS_MAX).toBe(32);
    expect(text).toContain('(the first 32 of the 40 barriers the hang waits on)');
  });

  test('renderLedger: maxPhases checked (a TypeError for a string, a RangeError for -1, NaN, 1.5); one phase left out is "1 more phase"', async () => {
    const { parseSketch } = await import('../src/lang/index.js');
    const { instantiate } = await import('../src/machine/program.js');
    const { simulate } = await import('../src/sim/simulate.js');
    const { renderLedger } = await import('../src/report/text.js');
    const { buildLedger } = await import('../src/report/ledger.js');
    const src = 'kernel k arch=sm_90a\nbarrier b[1] count=1\nrole w per=one:\n    for i in range(0, 3):\n        mbarrier.arrive b[0]\n        mbarrier.try_wait.parity b[0], i & 1\n';
    const p = instantiate(parseSketch(src, 'k.mbk').kernel!);
    const ledger = buildLedger(p, simulate(p).events!);
    expect(ledger.phases).toHaveLength(3);
    expect(renderLedger(ledger, 2).split('\n').at(-1)).toBe('… 1 more phase (--events shows all, --json too)');
    expect(renderLedger(ledger, 1).split('\n').at(-1)).toBe('… 2 more phases (--events shows all, --json too)');
    expect(renderLedger(ledger, 0)).toBe('… 3 more phases (--events shows all, --json too)');
    expect(renderLedger(ledger, Infinity)).toBe(renderLedger(ledger, 3));
    expect(renderLedger(ledger, 3)).not.toContain('more phase');
    for (const n of [-1, NaN, 1.5]) expect(() => renderLedger(ledger, n)).toThrow(new RangeError(`renderLedger: maxPhases must be a whole number of phases, 0 or more (Infinity for all), got ${n}`));
    expect(() => renderLedger(ledger, 'x' as never)).toThrow(new TypeError('renderLedger: maxPhases must be a number of phases, got a string ("x")'));
  });
});

describe('check --watch rechecks when any input changes', () => {
  test('a PTX kernel: its .launch.json created, changed and removed each check again (only the .ptx was watched)', async () => {
    const { readFileSync, rmSync } = await import('node:fs');
    const { watchVerb } = await import('../src/cli/check-verb.js');
    const d = mkdtempSync(join(tmpdir(), 'mbsim-trial4-watch-'));
    const ptx = join(d, 'k.ptx');
    writeFileSync(ptx, readFileSync('test/fixtures/ptx/tma_pipeline.ptx', 'utf8'));
    let checks = 0;
    let watching = false;
    const io = { out: (s: string) => (watching ||= s.includes('-- watching'), undefined), err: () => undefined, color: false };
    const done = watchVerb(ptx, { sweep: [] } as never, io, async () => (++checks, 0));
    const until = async (n: number) => {
      for (let i = 0; i < 500 && checks < n; i++) await new Promise((r) => setTimeout(r, 10));
    };
    for (let i = 0; i < 300 && !watching; i++) await new Promise((r) => setTimeout(r, 10));
    await new Promise((r) => setTimeout(r, 50));
    writeFileSync(`${ptx}.launch.json`, '{"block": 128}\n');
    await until(2);
    expect(checks).toBe(2);
    writeFileSync(`${ptx}.launch.json`, '{"block": 256}\n');
    await until(3);
    expect(checks).toBe(3);
    rmSync(`${ptx}.launch.json`);
    await until(4);
    expect(checks).toBe(4);
    process.emit('SIGINT');
    expect(await done).toBe(0);
  }, 30_000);
});

describe('the library with garbage arguments: a TypeError or RangeError naming the function and the argument', () => {
  test('every public function, given null, numbers, strings, arrays and objects of the wrong shape (they threw "Cannot read properties of undefined" from inside)', async () => {
    const M = await import('../src/index.js');
    const { parsePtx } = await import('../src/ptx/index.js');
    const { translatePtx } = await import('../src/ptxi/index.js');
    const { readFileSync } = await import('node:fs');
    const src = 'kernel k arch=sm_90a\nbarrier b[1] count=1\nrole p per=one:\n    mbarrier.arrive b[0]\n    mbarrier.try_wait.parity b[0], 0\n';
    const prog = M.instantiate(M.parseSketch(src, 'k.mbk').kernel!);
    const sim = M.simulate(prog);
    const mod = (parsePtx(readFileSync('test/fixtures/ptx/tma_pipeline.ptx', 'utf8'), 'x.ptx') as unknown as { module: never }).module;
    const garbage: unknown[] = [null, 0, NaN, -1, 'abc', [], { x: 1 }, true, 10n];
    const calls: [string, (v: never) => unknown][] = [
      ['simulate', (v) => M.simulate(prog, v)], ['check', (v) => M.check(prog, v)], ['instantiate', (v) => M.instantiate(M.parseSketch(src, 'k.mbk').kernel!, v)],
      ['encodeWord', (v) => M.encodeWord(v)], ['decodeToken', (v) => M.decodeToken(v)], ['kernel', (v) => M.kernel('k', v)],
      ['barrier', (v) => M.kernel('k').barrier('b', v)], ['role', (v) => M.kernel('k').role('r', {}, v)],
      ['buildLedger', (v) => M.buildLedger(prog, v)], ['renderTimeline', (v) => M.renderTimeline(v)], ['renderSummary', (v) => M.renderSummary(v)],
      ['renderLedger', (v) => M.renderLedger(v)], ['renderEventLog', (v) => M.renderEventLog(prog, v)], ['buildTrace', (v) => M.buildTrace(prog, sim.spans!, sim.events!, v)],
      ['phaseTable', (v) => M.phaseTable(v)], ['renderPhaseTable', (v) => M.renderPhaseTable(v)], ['checkJson', (v) => M.checkJson(v)],
      ['checkSarif', (v) => M.checkSarif(v)], ['renderCheck', (v) => M.renderCheck(v)], ['replay', (v) => M.replay(prog, v)],
      ['formatDiagnostic', (v) => M.formatDiagnostic(v, src)], ['Machine', (v) => new M.Machine(v)],
      ['parsePtx', (v) => parsePtx(v)], ['translatePtx', (v) => translatePtx(mod, v)],
    ];
    for (const [fn, call] of calls) {
      for (const v of garbage) {
        let err: unknown = null;
        try {
          call(v as never);
        } catch (e) {
          err = e;
        }
        if (err === null) continue; // some garbage is a valid value for some arguments (0 for a token, {} for options)
        const msg = `${fn}(${String(v)}): ${(err as Error).message}`;
        expect(err instanceof TypeError || err instanceof RangeError || err instanceof M.BuildError || err instanceof M.KernelError, msg).toBe(true);
        expect(msg).not.toMatch(/Cannot read properties|is not a function|is not iterable|Cannot convert/);
        if (err instanceof TypeError || err instanceof RangeError) expect((err as Error).message, msg).toMatch(new RegExp(`^${fn}\\b`));
      }
    }
  });
});

describe('an output in a directory that takes no new file', () => {
  test('check --trace /proc/self/status: exit 2, not "no such directory" (its directory is there)', async () => {
    const r = await measureCli(['check', 'examples/bugs/B01.mbk', '--trace', '/proc/self/status'], 60_000);
    expect(r.code).toBe(2);
    expect(r.err.trim()).toBe('mbsim: error: cannot write /proc/self/status: its directory accepts no new file, such as the temporary file written first (ENOENT)');
  }, 120_000);
});
