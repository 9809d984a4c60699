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
import { parsePtx } from '../src/ptx/index.js';

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
      [() => M.phaseTable(p, 'p', 'b', 'q'), "phaseTable: phaseVar 'q' is no variable of role 'p': its waits on b read no variable as their parity (its variables: warp, warpgroup)"],
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
    // --block given: the launch must still have the block the directive requires.
    const given = await cli(['check', file('reqntid2.ptx', PTX.replace(/^\)$/m, ')\n.reqntid 4294967296')), ...LAUNCH, '--block', '128', '--quiet']);
    expect(given.code).toBe(2);
    expect(given.err).toContain('reqntid2.ptx:34:1: error[ptx-launch]: .reqntid 4294967296 requires blocks of 4294967296 threads, and the launch\'s block is 128');
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
      ['{"clockMHz": 1980,}', ':1:19: error[E-timing-json]: not valid JSON: expected a key in double quotes, got \'}\'', '{"clockMHz": 1980,}'],
      ['{\n  "clockMHz": 1980\n  "tmaLatency": 3\n}', ':3:3: error[E-timing-json]: not valid JSON: expected \',\' or \'}\'', '"tmaLatency": 3'],
      ['{"clockMHz": 1980} {"x":1}', ':1:20: error[E-timing-json]: not valid JSON: unexpected \'{\' after the JSON value', '{"clockMHz": 1980} {"x":1}'],
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

describe('run --timeout keeps a share for the report and cuts what does not fit in it', () => {
  const LOOP = 'kernel k arch=sm_90a\nbarrier b[1] count=1\nrole p per=one:\n    for i in range(0, 1000000000):\n        mbarrier.arrive b[0]\n        mbarrier.try_wait.parity b[0], i % 2\n';
  const run = () => M.simulate(M.instantiate(M.parseSketch(LOOP, 'loop.mbk').kernel!), { maxSteps: 3000 });
  /** A cut that says stop after `n` questions. */
  const after = (n: number) => ({ stop: () => n-- <= 0, omitted: 0 });

  test('buildLedger with a cut: the phases of the first events, the rest counted and said (it built the whole ledger, about 1 s after a 3 s run)', () => {
    const r = run();
    const events = r.events!;
    const whole = M.buildLedger(r.program, events);
    expect(whole.omittedEvents).toBeUndefined();
    const cut = after(100);
    const part = M.buildLedger(r.program, events, cut);
    expect(part.omittedEvents).toBe(events.length - 100);
    expect(cut.omitted).toBe(events.length - 100);
    expect(part.phases.length).toBeLessThan(whole.phases.length);
    expect(part.phases[0]).toEqual(whole.phases[0]);
    expect(M.renderLedger(part)).toContain(`the ledger was cut short: built from the run's first events, ${(events.length - 100).toLocaleString('en-US')} later events left out`);
    expect(() => M.buildLedger(r.program, events, 3 as never)).toThrow(TypeError);
  });

  test('loopSummary with a cut: null, the events not looked at counted', async () => {
    const { loopSummary } = await import('../src/report/loop.js');
    const r = run();
    expect(loopSummary(r)).not.toBeNull();
    const cut = after(10);
    expect(loopSummary(r, 1, cut)).toBeNull();
    expect(cut.omitted).toBe(r.events!.length - 10);
  });

  test('the budget: building stops at the deadline itself, rendering and writing at its grace (under a second)', async () => {
    const { outputBudget, OUTPUT_GRACE_MS, reportReserveMs } = await import('../src/cli/budget.js');
    expect(OUTPUT_GRACE_MS).toBeLessThan(1000);
    expect(reportReserveMs(3000)).toBe(600);
    expect(reportReserveMs(600_000)).toBe(10_000);
    const spin = (f: () => boolean) => {
      for (let i = 0; i < 5000; i++) if (f()) return true;
      return false;
    };
    const past = outputBudget(1e12, Date.now() - 1, () => 0, null);
    expect([spin(past.build), spin(past.render), past.stoppedBy()]).toEqual([true, false, '--timeout']);
    const late = outputBudget(1e12, Date.now() - OUTPUT_GRACE_MS - 1, () => 0, null);
    expect(spin(late.render)).toBe(true);
  });

  test('run --timeout 1 of a loop of 1e9 iterations: exit 3, stopped by --timeout, the share said, within the timeout plus slack (it overran by 0.2-4 s)', async () => {
    const f = file('loop.mbk', LOOP);
    const t0 = Date.now();
    const r = await cli(['run', f, '--timeout', '1', '--max-steps', '1000000000000', '--phase-table', 'p:b:i']);
    const took = Date.now() - t0;
    expect(r.code).toBe(3);
    expect(r.out).toContain('stopped by --timeout');
    expect(r.out).toContain('(the simulation stops 0.2 s before --timeout 1: building the report from its records gets that time');
    // The phase table comes from the run itself (it was a second, unbounded simulation).
    expect(r.out).toContain('phase tracking');
    // A runaway (the 1e9 iterations unbounded) takes minutes; the report after the stop is not yet
    // held to its 0.2 s reserve when a phase table is asked (2.5-3 s with the built CLI, up to 5.5 s
    // in-process on a loaded 2-core machine), so the bound here is the runaway's, not the reserve's.
    expect(took).toBeLessThan(1000 + 9000);
  });
});

describe('PTX header values ptxas rejects: exit 2 at the value, with a caret; a warning naming the rule where ptxas accepts', () => {
  const withLine = (name: string, from: RegExp, to: string) => file(name, PTX.replace(from, to));
  const cases: [string, RegExp, string, string, string][] = [
    ['version.ptx', /^\.version 9\.0$/m, '.version 99.9', ':9:10: error[E-ptx-header]: .version 99.9: no such PTX ISA version (they run from 1.0 to 9.1)', '.version 99.9'],
    ['version2.ptx', /^\.version 9\.0$/m, '.version 8.9', ':9:10: error[E-ptx-header]: .version 8.9: no such PTX ISA version (PTX ISA 8.x ends at 8.8)', '.version 8.9'],
    ['target.ptx', /^\.target sm_90a$/m, '.target sm_9999', ':10:9: error[E-ptx-header]: .target sm_9999: no such architecture; ptxas rejects an unknown target', '.target sm_9999'],
    ['target2.ptx', /^\.target sm_90a$/m, '.target sm_90a, fast', ":10:17: error[E-ptx-header]: .target fast: no such architecture", '.target sm_90a, fast'],
    ['maxnreg.ptx', /^\)$/m, ')\n.maxnreg 1e11', ":34:10: error[E-ptx-header]: .maxnreg expects registers per thread as whole numbers, found '1e11'", '.maxnreg 1e11'],
    ['maxnreg2.ptx', /^\)$/m, ')\n.maxnreg 99999999999', ':34:10: error[E-ptx-header]: .maxnreg 99999999999: a 32-bit unsigned value', '.maxnreg 99999999999'],
    ['reg.ptx', /%r<61>/, '%r<2e9>', ":37:16: error[E-ptx-syntax]: a register count in '<N>' is a whole number, found the float constant '2e9'", '%r<2e9>'],
    ['reqncta.ptx', /^\)$/m, ')\n.reqnctapercluster 99999', ':34:20: error[E-ptx-header]: .reqnctapercluster 99999: a cluster has at most 16 CTAs', '.reqnctapercluster 99999'],
    ['reqncta2.ptx', /^\)$/m, ')\n.reqnctapercluster 4, 4, 4', ':34:20: error[E-ptx-header]: .reqnctapercluster 4, 4, 4: a cluster has at most 16 CTAs (8 portable, 16 with the non-portable size on sm_90 and later), these are 64', '.reqnctapercluster 4, 4, 4'],
    ['rank0.ptx', /^\)$/m, ')\n.maxclusterrank 0', ':34:17: error[E-ptx-header]: .maxclusterrank 0: each value is at least 1 (CTAs per cluster)', '.maxclusterrank 0'],
  ];
  test.each(cases)('%s: exit 2, file:line:col, the line and a caret (they were accepted silently)', async (name, from, to, msg, line) => {
    const f = withLine(name, from, to);
    const r = await cli(['check', f, ...LAUNCH, '--block', '128', '--cluster', '2']);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`${f}${msg}`);
    expect(r.err).toContain(line);
    expect(r.err).toMatch(/\n\s+\^/);
    expect(r.err).not.toMatch(/at .*\.(ts|js):\d+/);
    // mbsim info parses the same way.
    expect((await cli(['info', f])).code).toBe(2);
  });

  test('.reqnctapercluster / .maxclusterrank against the launch\'s cluster: exit 2 at the directive; .reqnctapercluster is the default cluster', async () => {
    const req = withLine('req2.ptx', /^\)$/m, ')\n.reqnctapercluster 2');
    const four = await cli(['check', req, ...LAUNCH, '--block', '128', '--cluster', '4']);
    expect(four.code).toBe(2);
    expect(four.err).toContain(`${req}:34:1: error[ptx-launch]: .reqnctapercluster 2 requires clusters of 2 CTAs, and the launch has 4 (give --cluster 2, or no --cluster)`);
    const rank = withLine('rank1.ptx', /^\)$/m, ')\n.maxclusterrank 1');
    const two = await cli(['check', rank, ...LAUNCH, '--block', '128', '--cluster', '2']);
    expect(two.code).toBe(2);
    expect(two.err).toContain(`${rank}:34:1: error[ptx-launch]: .maxclusterrank 1 allows at most 1 CTA in a cluster, and the launch has 2 (--cluster 2)`);
    expect(two.err).toContain('^');
    const { translatePtx } = await import('../src/ptxi/index.js');
    const parsed = parsePtx(readFileSync(req, 'utf8'), req);
    if (!parsed.ok) throw new Error('parse');
    const k = translatePtx(parsed.module, { kernel: 'tma_pipeline', block: 128, params: { param_2: 4 }, tensorMaps: { param_0: 16384 } }).kernel;
    expect(k.cluster).toMatchObject({ k: 'num', v: 2 });
  });

  test('.maxnreg past 255, .maxclusterrank past 16, .version 9.5: a warning naming the rule, the run goes on', async () => {
    const cases: [string, RegExp, string, string][] = [
      ['w1.ptx', /^\)$/m, ')\n.maxnreg 100000', ':34:10: warning[W-ptx-header]: .maxnreg 100000 bounds nothing: a thread has at most 255 registers (ptxas accepts it and allocates at most 255)'],
      ['w2.ptx', /^\)$/m, ')\n.maxclusterrank 64', ':34:17: warning[W-ptx-header]: .maxclusterrank 64 bounds nothing: a cluster has at most 16 CTAs (ptxas accepts it)'],
      ['w3.ptx', /^\.version 9\.0$/m, '.version 9.5', ':9:10: warning[W-ptx-header]: .version 9.5 is newer than PTX ISA 9.1, the newest mbsim knows'],
    ];
    for (const [name, from, to, msg] of cases) {
      const f = withLine(name, from, to);
      const r = await cli(['check', f, ...LAUNCH, '--block', '128', '--max-states', '5']);
      expect(r.code).toBe(3);
      expect(r.err).toContain(`${f}${msg}`);
      expect(r.err).toContain('^');
    }
  });

  test('a callee\'s .reg %r<2000000000>: nothing allocated per register (a loop of 2e9 renames before)', async () => {
    const { translatePtx } = await import('../src/ptxi/index.js');
    const src = '.version 9.0\n.target sm_90a\n.address_size 64\n.func f()\n{\n.reg .b32 %r<2000000000>;\nmov.u32 %r7, 1;\nret;\n}\n.visible .entry k()\n.reqntid 32, 1, 1\n{\ncall f, ();\nret;\n}\n';
    const parsed = parsePtx(src, 'call.ptx');
    if (!parsed.ok) throw new Error(parsed.diagnostic.message);
    const t0 = Date.now();
    const k = translatePtx(parsed.module).kernel;
    expect(k.roles).toHaveLength(1);
    expect(Date.now() - t0).toBeLessThan(5000);
  });
});

describe('messages a new user meets with the wrong file', () => {
  test('mbsim info on a sketch lists the sketch (it reported a PTX syntax error at \'kernel\')', async () => {
    for (const name of ['info.mbk', 'info-sketch.txt']) {
      const r = await cli(['info', file(name, SRC)]);
      expect(r.code).toBe(0);
      expect(r.out).toContain(`${name}: sketch, kernel 'k' (sm_90a), cluster 1`);
      expect(r.out).toContain('role p: 1 warp, per=one');
      expect(r.err).not.toContain('E-ptx');
    }
    // A sketch with errors is reported as check reports it.
    const bad = await cli(['info', file('info-bad.mbk', `${SRC}    nope\n`)]);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/info-bad\.mbk:\d+:\d+: error\[E-/);
  });

  test('PTX saved as .mbk: a hint that it looks like PTX (it said only "expected \'eof\'")', async () => {
    const f = file('saved.mbk', PTX);
    const r = await cli(['check', f]);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`hint: ${f} looks like PTX (it has .version / .target / .entry directives), not a sketch: mbsim reads a file as PTX by its extension; save it as .ptx`);
    expect((await cli(['check', file('plain.mbk', `${SRC}    nope\n`)])).err).not.toContain('looks like PTX');
  });

  test('the caret counts columns as the terminal shows them: a combining accent takes none, a wide character two (it sat one column right)', async () => {
    const { caretExcerpt, displayPad } = await import('../src/lang/diagnostics.js');
    expect(displayPad('ae\u0301\t\u4e2d')).toBe('  \t  ');
    const line = 'x = e\u0301 $';
    // `$` is code unit 7 (1-based); it shows in column 6.
    expect(caretExcerpt(line, 7, 8)[1]).toBe('     ^');
    // An error at the accent itself points at the character it is drawn on.
    expect(caretExcerpt(line, 6, 7)[1]).toBe('    ^');
    expect(caretExcerpt('\u4e2d\u6587 $', 4, 5)[1]).toBe('     ^');
    // The accent inside a string (a name with one is an error at the accent itself, below).
    const r = await cli(['check', file('accent.mbk', SRC.replace('arch=sm_90a', 'arch=sm_90a description="e\u0301" $'))]);
    expect(r.code).toBe(2);
    const rows = r.err.split('\n');
    const at = rows.findIndex((x) => x.includes('unexpected character "$"'));
    expect(at).toBeGreaterThanOrEqual(0);
    const shown = rows[at + 1]!;
    const caret = rows[at + 2]!;
    // The caret's column in the terminal is the `$`'s: the accent takes no column of its own.
    expect(displayPad(shown.slice(0, shown.indexOf('$'))).length).toBe(caret.indexOf('^'));
    // In a name, the error is at the accent, and the caret sits on the letter it is drawn on.
    const n = await cli(['check', file('accent-name.mbk', SRC.replace('mbarrier.arrive b[0]', 'mbarrier.arrive b[0] e\u0301 $'))]);
    expect(n.code).toBe(2);
    const nrows = n.err.split('\n');
    const nat = nrows.findIndex((x) => x.includes("U+0301") && x.includes('is not allowed in a name'));
    expect(nat).toBeGreaterThanOrEqual(0);
    expect(displayPad(nrows[nat + 1]!.slice(0, nrows[nat + 1]!.indexOf('e\u0301'))).length).toBe(nrows[nat + 2]!.indexOf('^'));
  });
});
