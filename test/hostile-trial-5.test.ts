/**
 * A sixth hostile trial: the library's last plain errors (cloneState, replay, phaseTable), the
 * search's setup asked of the memory governor before it allocates, and the new cases of a fresh
 * trial as a new user (flags, values, paths, signals, sidecars).
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { main } from '../src/cli/main.js';
import * as M from '../src/index.js';
import { searchSetupBytes } from '../src/check/setup-bytes.js';
import { explore } from '../src/check/explore.js';
import { Governor } from '../src/machine/governor.js';
import { LARGEST } from './support/largest-launch.js';

const SRC = 'kernel k arch=sm_90a\nbarrier b[1] count=1\nrole p per=one:\n    mbarrier.arrive b[0]\n    mbarrier.try_wait.parity b[0], 0\n';
const prog = () => M.instantiate(M.parseSketch(SRC, 'k.mbk').kernel!);

/** The error `f` throws (fails when it throws none). */
function thrown(f: () => unknown): Error {
  try {
    f();
  } catch (e) {
    return e as Error;
  }
  throw new Error('expected a throw');
}

describe('the library\'s last plain errors name the function and the argument', () => {
  test('cloneState(garbage): a TypeError (it threw "Cannot read properties of null")', () => {
    for (const v of [null, {}, { agents: 3 }, 'x', [], { agents: [], bars: [], named: [], clusterDone: [], inflight: [], mem: 0 }]) {
      const e = thrown(() => M.cloneState(v as never));
      expect(e).toBeInstanceOf(TypeError);
      expect(e.message).toMatch(/^cloneState: s must be a MachineState \(from Machine.initial or Machine.step\), got /);
    }
    const m = new M.Machine(prog());
    const s = m.initial();
    expect(M.cloneState(s)).toEqual(s);
  });

  test('replay with a choice out of range or not enabled: a RangeError naming the schedule index (it threw "Cannot read properties of undefined")', () => {
    const p = prog();
    const cases: [number[], string][] = [
      [[5], 'replay: schedule[0] = 5 chooses agent 5, and the program has 1 agent (a schedule comes from a check\'s hazard or witness)'],
      [[1e12], 'replay: schedule[0] = 1000000000000 chooses agent 1000000000000, and the program has 1 agent'],
      [[-3], 'replay: schedule[0] = -3 chooses async operation 2, which is not in flight and ready there'],
      [[0, 0, 0, 0], 'replay: schedule[2] = 0 chooses agent 0 (p), which cannot step there'],
    ];
    for (const [schedule, msg] of cases) {
      const e = thrown(() => M.replay(p, schedule));
      expect(e).toBeInstanceOf(RangeError);
      expect(e.message).toContain(msg);
    }
    expect(M.replay(p, [0, 0]).steps.map((s) => s.actor)).toEqual(['p', 'p']);
  });

  test('phaseTable with an unknown role, barrier or variable: a RangeError naming the argument (a plain Error before)', () => {
    const p = prog();
    const cases: [() => unknown, string][] = [
      [() => M.phaseTable(p, 'nope'), "phaseTable: role 'nope' is no role of the program (its roles: p)"],
      [() => M.phaseTable(p, 'p', 'zz'), "phaseTable: barrier 'zz' is no barrier array of the program (its barriers: b)"],
      [() => M.phaseTable(p, 'p', 'b', 'q'), "phaseTable: phaseVar 'q' is no variable of role 'p' (its variables: warp, warpgroup)"],
    ];
    for (const [f, msg] of cases) {
      const e = thrown(f);
      expect(e).toBeInstanceOf(RangeError);
      expect(e.message).toBe(msg);
    }
  });
});

describe('the search\'s setup is asked of the governor before the codec allocates it', () => {
  test('searchSetupBytes grows with the launch: under 2 MB for one agent, over 30 MB for the largest launch (33,792 warps, 261,888 barriers)', () => {
    expect(searchSetupBytes(prog())).toBeLessThan(2 * 1048576);
    const big = M.instantiate(M.parseSketch(LARGEST, 'largest.mbk').kernel!);
    expect(searchSetupBytes(big)).toBeGreaterThan(30 * 1048576);
  });

  test('explore stops by max-memory, 0 states, when the resident set plus the setup would pass the bound (the codec\'s 150 MB took a 300 MiB check to 325-345 MiB)', () => {
    const p = prog();
    const need = searchSetupBytes(p);
    const rss = 1000 * 1048576;
    const at = (bound: number) => explore(p, { governor: new Governor({ maxMemory: bound }, { rss: () => rss, collect: null }) });
    const refused = at(rss + need - 1);
    expect([refused.stoppedBy, refused.states, refused.complete]).toEqual(['max-memory', 0, false]);
    const fits = at(rss + need + 64 * 1048576);
    expect([fits.stoppedBy, fits.complete]).toEqual([null, true]);
  });

  test('a governor the static checks already stopped by timeout: the search reports timeout, not max-memory', () => {
    let t = 0;
    const gov = new Governor({ maxMemory: 1e12, timeoutMs: 10 }, { now: () => t, rss: () => 0, collect: null });
    t = 20;
    expect(gov.check()).toBe('timeout');
    const r = explore(prog(), { governor: gov });
    expect([r.stoppedBy, r.states]).toEqual(['timeout', 0]);
  });
});

const dir = mkdtempSync(join(tmpdir(), 'mbsim-trial5-'));
const file = (name: string, text: string | Buffer) => {
  const f = join(dir, name);
  writeFileSync(f, text);
  return f;
};
const PTX = readFileSync('test/fixtures/ptx/tma_pipeline.ptx', 'utf8');
const LAUNCH = ['--kernel', 'tma_pipeline', '--param', 'param_2=4', '--tensor-map', 'param_0=16384'];

/** The CLI in process: exit code, stdout and stderr. */
async function cli(args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (x) => out.push(x), err: (x) => err.push(x), color: false });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('PTX launches the header or the file make impossible', () => {
  test('.shared .b8 buf[1e26]: exit 2 at the declaration (it was exit 70, "Invalid typed array length")', async () => {
    const f = file('huge-shared.ptx', PTX.replace('buf[32768]', 'buf[99999999999999999999999999]'));
    const r = await cli(['check', f, ...LAUNCH, '--block', '128']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^.*huge-shared\.ptx:41:25: error\[smem-size\]: shared memory per CTA is more than 9,007,199,254,740,991 bytes/);
  });

  test('.reqntid 4294967296 / 64,64,64 / 1e23: exit 2 at the directive, named as such (it said --block, at the .entry)', async () => {
    for (const [dims, why] of [['4294967296', "CUDA's limits are x, y ≤ 1024 and z ≤ 64"], ['64, 64, 64', 'mbsim runs whole warps'], ['99999999999999999999999', '1 to 3 positive integers']] as const) {
      const f = file('reqntid.ptx', PTX.replace(/^\)$/m, `)\n.reqntid ${dims}`));
      const r = await cli(['check', f, ...LAUNCH]);
      expect(r.code).toBe(2);
      expect(r.err).toContain(`reqntid.ptx:34:1: error[ptx-launch]: .reqntid `);
      expect(r.err).toContain(why);
      expect(r.err).toContain('(give --block N to launch another size)');
      expect(r.err).not.toContain('--block 4294967296');
    }
    // --block given: the directive is not used, the launch runs.
    expect((await cli(['check', file('reqntid2.ptx', PTX.replace(/^\)$/m, ')\n.reqntid 4294967296')), ...LAUNCH, '--block', '128', '--quiet'])).code).toBe(0);
  });

  test('__proto__ in --param, --tensor-map or a sidecar\'s params: an unknown parameter (it was dropped silently and the check ran)', async () => {
    const f = file('proto.ptx', PTX);
    const flag = await cli(['check', f, '--kernel', 'tma_pipeline', '--block', '128', '--param', '__proto__=4']);
    expect(flag.code).toBe(2);
    expect(flag.err).toContain('--param __proto__: kernel _Z12tma_pipeline14CUtensorMap_stPfi has no such parameter');
    for (const key of ['params', 'tensorMaps']) {
      file('proto.ptx.launch.json', `{"kernel":"tma_pipeline","block":128,"${key}":{"__proto__":4}}`);
      const r = await cli(['check', f]);
      expect(r.code).toBe(2);
      expect(r.err).toContain('has no parameter "__proto__"');
    }
  });

  test('--param / --tensor-map with a bad value name their own flag (it said --set), with the name as given', async () => {
    const f = file('pv.ptx', PTX);
    expect((await cli(['check', f, '--kernel', 'tma_pipeline', '--block', '128', '--param', 'param_2=4.5'])).err).toBe("mbsim: error: --param expects NAME=INTEGER, got 'param_2=4.5'");
    expect((await cli(['check', f, '--kernel', 'tma_pipeline', '--block', '128', '--param', '2=4.5'])).err).toBe("mbsim: error: --param expects NAME=INTEGER, got '2=4.5'");
    expect((await cli(['check', f, '--kernel', 'tma_pipeline', '--block', '128', '--param', '2=4', '--tensor-map', '0=99999999999999999999'])).err).toBe('mbsim: error: --tensor-map 0: integer 99999999999999999999 is outside the exact range ±(2^53 − 1)');
  });
});

describe('flags and files a new user gets wrong', () => {
  test('check --json --format short: exit 2 (the JSON won silently)', async () => {
    const r = await cli(['check', 'mechanism', '--json', '--format', 'short']);
    expect(r.code).toBe(2);
    expect(r.err).toBe('mbsim: error: --json and --format short ask for two formats of the report: give one (--format json is --json)');
    expect(r.out).toBe('');
  });

  test('run --phase-table with an unknown role: the flag named once, the list whole; a 5,000-character name cut', async () => {
    const r = await cli(['run', 'pipeline', '--phase-table', 'nope:full:phase']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^mbsim: error: --phase-table: role 'nope' is no role of the program \(its roles: [a-z_, ]+\)$/);
    const long = await cli(['run', 'pipeline', '--phase-table', `${'a'.repeat(5000)}:full:phase`]);
    expect(long.err).toContain(`role '${'a'.repeat(40)}…' is no role`);
    expect(long.err.length).toBeLessThan(300);
  });

  test('--timing with a JSON syntax error: file:line:col and a caret (it said "at position 18")', async () => {
    const cases: [string, string, string][] = [
      ['{"clockMHz": 1980,}', ':1:19: error: not valid JSON: expected a key in double quotes, got \'}\'', '{"clockMHz": 1980,}'],
      ['{\n  "clockMHz": 1980\n  "tmaLatency": 3\n}', ':3:3: error: not valid JSON: expected \',\' or \'}\'', '"tmaLatency": 3'],
      ['{"clockMHz": 1980} {"x":1}', ':1:20: error: not valid JSON: unexpected \'{\' after the JSON value', '{"clockMHz": 1980} {"x":1}'],
    ];
    for (const [text, msg, line] of cases) {
      const f = file('timing.json', text);
      const r = await cli(['run', 'mechanism', '--timing', f]);
      expect(r.code).toBe(2);
      expect(r.err).toContain(`${f}${msg}`);
      expect(r.err).toContain(line);
      expect(r.err).toContain('^');
    }
  });

  test('a UTF-16 sketch, PTX or timing file: one line naming the encoding (it was NULs and U+FFFD at 1:1)', async () => {
    const utf16 = (s: string) => Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(s, 'utf16le')]);
    const sk = file('u16.mbk', utf16(SRC));
    expect(await cli(['check', sk])).toEqual({ code: 2, out: '', err: `mbsim: error: cannot read sketch file ${sk}: it is UTF-16 text (its byte order mark says so); mbsim reads UTF-8: save it as UTF-8` });
    const tf = file('u16.json', utf16('{"clockMHz": 1980}'));
    expect((await cli(['run', 'mechanism', '--timing', tf])).err).toContain('cannot read timing file');
    const be = file('u16be.mbk', Buffer.from([0xfe, 0xff, 0, 0x6b]));
    expect((await cli(['check', be])).err).toContain('it is UTF-16 text');
  });

  test('a zero-width space, a combining accent or a no-break space in a sketch: named by code point (the quotes looked empty)', async () => {
    const at = (ch: string) => SRC.replace('mbarrier.arrive b[0]', `mbarrier.arrive b[0]${ch}`);
    for (const [ch, cp] of [['\u200b', 'U+200B'], ['\u0301', 'U+0301'], ['\u00a0', 'U+00A0']] as const) {
      const r = await cli(['check', file('inv.mbk', at(ch))]);
      expect(r.code).toBe(2);
      expect(r.err).toContain(`error[E-bad-char]: unexpected character "${ch}" (${cp})`);
    }
    // Visible characters stay as they were.
    expect((await cli(['check', file('vis.mbk', at('$'))])).err).toContain('unexpected character "$"\n');
  });
});
