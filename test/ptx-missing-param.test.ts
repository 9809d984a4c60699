// A PTX kernel parameter without a value (--param): the translator's trap names it in a field
// (`missingParams`), `check` and `run` decide the input error (exit 2) from their own result with no
// simulation of their own beforehand, a sweep's rows say the same, and a PTX hang names the barrier
// and parity its registers resolve to.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import type { Op, Stmt } from '../src/kernel/ir.js';
import { parsePtx } from '../src/ptx/index.js';
import { translatePtx } from '../src/ptxi/index.js';
import { instantiate } from '../src/machine/program.js';
import * as missingParam from '../src/cli/missing-param.js';
import { LATE, SCALARS } from './support/ptx-scalars.js';

// Every call of the simulator, counted: the check of a kernel with a missing parameter runs none.
const sims = vi.hoisted(() => ({ n: 0 }));
vi.mock('../src/sim/simulate.js', async (importOriginal) => {
  const mod = await importOriginal<typeof import('../src/sim/simulate.js')>();
  return { ...mod, simulate: (...args: Parameters<typeof mod.simulate>) => { sims.n++; return mod.simulate(...args); } };
});
const { main } = await import('../src/cli/main.js');

async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (s) => out.push(s), err: (s) => err.push(s), color: false });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

/** The module of PTX `text`; a parse error throws. */
function mod(text: string) {
  const r = parsePtx(text);
  if (!r.ok) throw new Error(r.diagnostic.message);
  return r.module;
}

/** The traps of a statement list (then / else branches included), with their lines. */
function traps(ss: Stmt[]): { line: number; op: Extract<Op, { op: 'trap' }> }[] {
  return ss.flatMap((s) => {
    if (s.s === 'op' && s.op.op === 'trap') return [{ line: s.loc.line, op: s.op }];
    if (s.s === 'if') return [...traps(s.then), ...traps(s.else ?? [])];
    return [];
  });
}

function scalarsFile(text = SCALARS): string {
  const f = join(mkdtempSync(join(tmpdir(), 'mbsim-missing-')), 'scalars.ptx');
  writeFileSync(f, text);
  return f;
}
const lateLine = (f: string) => `${f}:19:1: error: kernel parameter param_2 has no value, and a branch, an address or a count of the kernel depends on it here: give --param param_2=VALUE`;

describe('the translator puts the missing parameters on the trap (missingParams)', () => {
  it('names every scalar parameter without a value at the first read, only the missing one once the others are given; other traps have none', () => {
    const none = traps(translatePtx(mod(SCALARS)).kernel.roles[0]!.body);
    const missing = none.filter((t) => t.op.missingParams);
    expect(missing.map((t) => [t.line, t.op.missingParams])).toEqual([[10, ['param_0', 'param_1', 'param_2']], [11, ['param_0', 'param_1', 'param_2']], [12, ['param_0', 'param_1', 'param_2']]]);
    const some = traps(translatePtx(mod(SCALARS), { params: { param_0: 64, param_1: 1 } }).kernel.roles[0]!.body);
    expect(some.filter((t) => t.op.missingParams).map((t) => [t.line, t.op.missingParams])).toEqual([[12, ['param_2']]]);
    // The kernel's own `@%p1 trap` (line 15) is a trap without missing parameters.
    expect(some.filter((t) => !t.op.missingParams).map((t) => t.line)).toEqual([15]);
    const all = traps(translatePtx(mod(SCALARS), { params: { param_0: 64, param_1: 1, param_2: 2 } }).kernel.roles[0]!.body);
    expect(all.some((t) => t.op.missingParams)).toBe(false);
  });
  it('missing-param.ts parses no message and simulates nothing: it reads the field', () => {
    expect(Object.keys(missingParam).sort()).toEqual(['checkMissingParams', 'missingParamError', 'missingParamsAt', 'runMissingParams', 'staticMissingParams']);
    expect(missingParam.missingParamError(['param_0+8', 'param_0+16'], { file: 'k.ptx', line: 3, col: 1 }, 'k').message)
      .toBe('k.ptx:3:1: error: the fields at bytes 8, 16 of kernel parameter param_0 have no value, and a branch, an address or a count of the kernel depends on them here: give --param param_0+8=VALUE --param param_0+16=VALUE');
    // Its place as data (`--json`, sweep rows); a file that cannot be read again gives no source line.
    const e = missingParam.missingParamError(['param_1'], { file: 'k.ptx', line: 3, col: 1 }, 'k');
    expect([e.loc, e.brief === e.message]).toEqual([{ file: 'k.ptx', line: 3, col: 1 }, true]);
  });
});

describe('check and run decide the missing parameter from their own result', () => {
  const given = ['--param', 'param_0=64', '--param', 'param_1=1'];
  it('a trap every agent meets first (ld.param at the top) is decided from the compiled code alone; one behind a branch is not', () => {
    const prog = (text: string) => instantiate(translatePtx(mod(text), { params: { param_0: 64, param_1: 1 } }).kernel, {});
    expect(missingParam.staticMissingParams(prog(SCALARS))?.message).toBe('<ptx>:12:1: error: kernel parameter param_2 has no value, and a branch, an address or a count of the kernel depends on it here: give --param param_2=VALUE');
    expect(missingParam.staticMissingParams(prog(LATE))).toBeNull();
  });
  it('check: exit 2 with the one located line, and no simulation before the search (at the top: no search either)', async () => {
    const f = scalarsFile();
    sims.n = 0;
    const one = await cli(['check', f, ...given]);
    expect([one.code, one.out]).toEqual([2, '']);
    expect(one.err).toBe(`${f}:12:1: error: kernel parameter param_2 has no value, and a branch, an address or a count of the kernel depends on it here: give --param param_2=VALUE
  ld.param.u32 %r3, [_Z7scalarsiii_param_2];
  ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~`);
    const late = scalarsFile(LATE);
    const two = await cli(['check', late, ...given]);
    expect([two.code, two.out, two.err.split('\n')[0]]).toEqual([2, '', lateLine(late)]);
    expect(sims.n).toBe(0);
  }, 60_000);
  it('run: exit 2 with the same line, after exactly one simulation (its own)', async () => {
    const f = scalarsFile(LATE);
    sims.n = 0;
    // --json: no second simulation for the event log of a short run; the error is the JSON document.
    const run = await cli(['run', f, ...given, '--json']);
    expect(run.code).toBe(2);
    const doc = JSON.parse(run.out) as { schema: string; exitCode: number; message: string };
    expect([doc.schema, doc.exitCode, doc.message]).toEqual(['mbsim.error/1', 2, lateLine(f)]);
    expect(sims.n).toBe(1);
    const top = await cli(['run', scalarsFile(), ...given, '--json']);
    expect(top.code).toBe(2);
    expect(sims.n).toBe(1);
  }, 60_000);
  it('a trap of the kernel itself is still a finding (exit 1), not a missing parameter', async () => {
    const f = scalarsFile();
    const bad = await cli(['check', f, '--param', 'param_0=64', '--param', 'param_1=1', '--param', 'param_2=1', '--format', 'short']);
    expect(bad.code).toBe(1);
    expect(bad.out).toMatch(/:15:1: error\[not-modelled\]: trap: the kernel traps here/);
  }, 60_000);
});

describe('--sweep with a parameter without a value', () => {
  it('every combination is bad input with the missing-parameter line (exit 2), not a not-modelled finding', async () => {
    const top = scalarsFile();
    const atTop = await cli(['check', top, '--param', 'param_0=64', '--sweep', 'param_1=1..2']);
    expect(atTop.code).toBe(2);
    expect(atTop.out).toContain(`1        bad-input  0       ${top}:12:1: error: kernel parameter param_2 has no value`);
    const f = scalarsFile(LATE);
    const r = await cli(['check', f, '--param', 'param_0=64', '--sweep', 'param_1=1..2']);
    expect(r.code).toBe(2);
    const line = lateLine(f);
    const rows = r.out.split('\n').filter((l) => /^[12] +\S+ +\d+ /.test(l));
    expect(rows).toHaveLength(2);
    for (const row of rows) expect(row).toMatch(new RegExp(`^[12] +bad-input +\\d+ +${line.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}$`));
    expect(r.out).not.toContain('not-modelled');
    expect(r.out).toContain('2 bad-input; exit 2');
    const set = await cli(['check', f, '--set', 'param_0=64', '--sweep', 'param_1=1..1', '--json']);
    expect(set.code).toBe(2);
    const doc = JSON.parse(set.out) as { exit: number; rows: object[] };
    expect(doc.rows).toEqual([{ params: { param_1: 1 }, verdict: 'bad-input', exit: 2, error: line, file: f, line: 19, col: 1 }]);
  }, 60_000);
});

describe('a PTX hang names the resolved barrier and parity, not the registers', () => {
  const args = ['test/fixtures/ptx/ring_ppar.ptx', '--block', '64', '--param', 'param_2=4'];
  it('check: the hang and cycle lines name empty[0] / full[0] and parity 0', async () => {
    const r = await cli(['check', ...args]);
    expect(r.code).toBe(1);
    const hang = r.out.slice(r.out.indexOf('1. HANG'), r.out.indexOf('shortest trace'));
    expect(hang).toContain('no agent or asynchronous unit can make progress: ring.w0 in mbarrier.try_wait.parity empty[0], parity 0; ring.w1 in mbarrier.try_wait.parity full[0], parity 0');
    expect(hang).toContain('- ring.w0 blocked in mbarrier.try_wait.parity empty[0], parity 0 (line 326): waits for phase 0 of empty[0] (parity 0) to complete');
    expect(hang).toContain('agents that can still arrive on empty[0]: ring.w1 (blocked in mbarrier.try_wait.parity full[0], parity 0, line 112)');
    expect(hang).toContain('at test/fixtures/ptx/ring_ppar.ptx:326:1 (ring.cu:41, inlined at ring.cu:61)');
    expect(hang).not.toContain('%r');
    const cycle = r.out.slice(r.out.indexOf('2. CYCLE'));
    expect(cycle).toContain('ring.w0 waits in mbarrier.try_wait.parity empty[0], parity 0; ring.w1 waits in mbarrier.try_wait.parity full[0], parity 0, and each signal');
  }, 60_000);
  it('run: the waiter lines name the barrier and parity; the PTX operands are given once each', async () => {
    const r = await cli(['run', ...args]);
    expect(r.code).toBe(1);
    const hang = r.out.slice(r.out.indexOf('HANG:'));
    expect(hang).toContain('  ring.w0 blocked in mbarrier.try_wait.parity empty[0], parity 0 (test/fixtures/ptx/ring_ppar.ptx:326 (ring.cu:41, inlined at ring.cu:61))\n    PTX: mbarrier.try_wait.parity empty[(%r76 - 10240) / 8], %r75\n');
    expect(hang).toContain('  ring.w1 blocked in mbarrier.try_wait.parity full[0], parity 0 (test/fixtures/ptx/ring_ppar.ptx:112');
    // Registers appear only on the two PTX lines.
    expect(hang.split('\n').filter((l) => l.includes('%r'))).toEqual([
      '    PTX: mbarrier.try_wait.parity empty[(%r76 - 10240) / 8], %r75',
      '    PTX: mbarrier.try_wait.parity full[(%r42 - 9216) / 8], %r39',
    ]);
  }, 60_000);
});
