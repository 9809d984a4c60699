// The launch sidecar of a PTX file: the `// # launch:` line and `FILE.ptx.launch.json`, their
// precedence under the flags, and bad sidecars (exit 2 at file:line:col with a caret).
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { mergeLaunch } from '../src/cli/ptx-load.js';
import { inlineLaunch } from '../src/cli/ptx-launch.js';
import { parsePtx } from '../src/ptx/index.js';
import { translatePtx } from '../src/ptxi/index.js';
import { CHECK_TAIL, SCALARS } from './support/ptx-scalars.js';

async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (s) => out.push(s), err: (s) => err.push(s), color: false });
  return { code, out: out.join(''), err: err.join('') };
}

const PIPE = readFileSync('test/fixtures/ptx/tma_pipeline.ptx', 'utf8');
/** A copy of the two-kernel pipeline fixture with `line` appended, in a fresh folder (no .launch.json). */
function withLine(line: string | null, json?: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'mbsim-launch-'));
  const f = join(dir, 'k.ptx');
  writeFileSync(f, line === null ? PIPE : `${PIPE}${line}\n`);
  if (json !== undefined) writeFileSync(`${f}.launch.json`, json);
  return f;
}
const LINE = '// # launch: {"kernel": "tma_pipeline", "block": 128, "params": {"param_2": 4}, "tensorMaps": {"param_0": 16384}}';
const LINE_NO = PIPE.split('\n').length; // the appended line's number

describe('mbsim check FILE.ptx with its launch in the file', () => {
  it('the committed GEMM twin carries its launch: check alone finds the hang, naming the PTX and the CUDA line', async () => {
    const r = await cli(['check', 'hw/kernels/tma_wgmma.bug1.ptx']);
    expect(r.err).toBe('');
    expect(r.code).toBe(1);
    expect(r.out).toContain('mbsim check tma_wgmma (sm_90a)  param_4=128 param_5=2 param_6=1');
    expect(r.out).toContain('HANG on barrier full[0]');
  }, 60_000);

  it('a comment line gives the launch; a flag overrides one field of it', async () => {
    const f = withLine(LINE);
    const ok = await cli(['check', f]);
    expect(ok.err).toBe('');
    expect(ok.code).toBe(0);
    expect(ok.out).toContain('param_2=4');
    const more = await cli(['run', f, '--param', '2=3']);
    expect(more.code).toBe(0);
    expect(more.out).toContain('param_2=3');
  });

  it('a .launch.json beside the file is stronger than the line, the flags stronger than both', () => {
    const r = parsePtx(PIPE, 'k.ptx');
    if (!r.ok) throw new Error(r.diagnostic.message);
    const inline = inlineLaunch('k.ptx', `${PIPE}${LINE}\n`)!;
    const json = { file: 'k.ptx.launch.json', text: '', fields: { block: 64, params: { param_2: 7 }, tensorMaps: {} }, where: {} };
    const l = mergeLaunch(r.module, { param: { tiles: 1 }, tensorMap: { 0: 8192 } } as never, [json, inline]);
    expect(l).toEqual({ kernel: 'tma_pipeline', block: 64, params: { tiles: 1, 2: 7 }, tensorMaps: { 0: 8192 } });
  });

  it('the launch file alone works (the two-kernel file needs no --kernel)', async () => {
    const f = withLine(null, '{"kernel": "tma_pipeline", "block": 128,\n "params": {"2": 4}, "tensorMaps": {"param_0": 16384}}\n');
    const r = await cli(['check', f]);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
  });
});

describe('a bad sidecar exits 2 at its file:line:col with a caret', () => {
  it('an unknown key in the line, with the key it resembles', async () => {
    const f = withLine('// # launch: {"kernel": "tma_pipeline", "blok": 128}');
    const r = await cli(['check', f]);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`${f}:${LINE_NO}:41: error: launch: unknown key "blok" (did you mean "block"?)`);
    expect(r.err).toContain(`\n  // # launch: {"kernel": "tma_pipeline", "blok": 128}\n${' '.repeat(42)}^~~~~~`);
  });

  it('a wrong type, a block that is not whole warps, a parameter the kernel lacks, broken JSON', async () => {
    const str = await cli(['check', withLine('// # launch: {"block": "128"}')]);
    expect(str.code).toBe(2);
    expect(str.err).toMatch(new RegExp(`:${LINE_NO}:24: error: launch: "block" expects an integer of at least 1, got string`));
    const odd = await cli(['check', withLine('// # launch: {"block": 100}')]);
    expect(odd.err).toMatch(new RegExp(`:${LINE_NO}:24: error: launch: "block": 100: mbsim runs whole warps`));
    const param = await cli(['check', withLine('// # launch: {"kernel": "tma_pipeline", "params": {"tiles": 3}}')]);
    expect(param.code).toBe(2);
    expect(param.err).toMatch(new RegExp(`:${LINE_NO}:52: error: launch: kernel \\S+ has no parameter "tiles" \\(param_0 or 0, `));
    const kernel = await cli(['check', withLine('// # launch: {"kernel": "nope"}')]);
    expect(kernel.err).toMatch(new RegExp(`:${LINE_NO}:25: error: launch: no kernel 'nope' in `));
    const broken = await cli(['check', withLine('// # launch: {"block": 128,}')]);
    expect(broken.err).toMatch(new RegExp(`:${LINE_NO}:28: error: launch: expected a key in double quotes, got '}'`));
    const two = await cli(['check', withLine(`${LINE}\n${LINE}`)]);
    expect(two.err).toMatch(new RegExp(`:${LINE_NO + 1}:1: error: a second '# launch:' line \\(the first is line ${LINE_NO}\\)`));
  });

  it('in a .launch.json: the line and column in that file', async () => {
    const f = withLine(null, '{\n  "kernel": "tma_pipeline",\n  "tensorMaps": {"param_0": 0}\n}\n');
    const r = await cli(['check', f]);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`${f}.launch.json:3:29: error: launch: "tensorMaps.param_0" expects an integer of at least 1, got 0`);
    expect(r.err).toContain('  "tensorMaps": {"param_0": 0}\n                              ^');
  });

  it('a copy of the committed GEMM with its line: the fixture sidecar still parses as PTX', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mbsim-launch-'));
    copyFileSync('hw/kernels/tcgen05.ptx', join(dir, 'k.ptx'));
    const s = inlineLaunch('k.ptx', readFileSync(join(dir, 'k.ptx'), 'utf8'))!;
    expect(s.fields).toEqual({ kernel: 'tcgen05_gemm', block: 192, params: { param_3: 128, param_4: 2, param_5: 1 }, tensorMaps: { param_0: 16384, param_1: 16384 }, dynamicSmem: 33792 });
  });
});


// A kernel whose integers are fields of one struct parameter (CUTLASS's `Params`), read through a
// register holding the parameter's address: the barrier's count at byte 8, two more at 16 and 20.
const STRUCT = `.version 9.0
.target sm_90a
.address_size 64
.visible .entry _Z6structPKv(.param .align 8 .b8 _Z6structPKv_param_0[64])
.reqntid 64, 1, 1
{
.reg .pred %p<4>;
.reg .b32 %r<8>;
.reg .b64 %rd<4>;
.shared .align 8 .b8 bar[8];
mov.b64 %rd1, _Z6structPKv_param_0;
add.s64 %rd2, %rd1, 16;
ld.param.u32 %r1, [%rd1+8];
ld.param.v2.u32 {%r2, %r3}, [%rd2];
add.s32 %r4, %r2, %r3;
` + CHECK_TAIL;

describe('fields of a struct parameter: --param NAME+OFFSET', () => {
  const file = () => {
    const dir = mkdtempSync(join(tmpdir(), 'mbsim-struct-'));
    writeFileSync(join(dir, 'struct.ptx'), STRUCT);
    return join(dir, 'struct.ptx');
  };
  it('reads each field at its byte offset, also through a register and as a vector; a missing field names the flag to give', async () => {
    const f = file();
    const ok = await cli(['check', f, '--param', 'param_0+8=64', '--param', '0+16=1', '--param', '_Z6structPKv_param_0+20=2', '--format', 'short']);
    expect([ok.code, ok.err]).toEqual([0, '']);
    expect(ok.out).toMatch(/OK/);
    const hang = await cli(['check', f, '--param', 'param_0+8=65', '--param', '0+16=1', '--param', '0+20=2', '--format', 'short']);
    expect(hang.code).toBe(1);
    expect(hang.out).toMatch(/error\[hang\]/);
    const missing = await cli(['check', f, '--param', '0+8=64', '--param', '0+16=1', '--format', 'short']);
    // A value the kernel cannot run without is the input's error (exit 2, one line), not a finding.
    expect([missing.code, missing.out]).toEqual([2, '']);
    expect(missing.err).toBe(`${f}:14:1: error: the field at byte 20 of kernel parameter param_0 has no value, and a branch, an address or a count of the kernel depends on it here: give --param param_0+20=VALUE`);
    const none = await cli(['check', f, '--format', 'short']);
    expect([none.code, none.out]).toEqual([2, '']);
    expect(none.err).toContain('the fields at bytes 8, 16, 20 of kernel parameter param_0 have no value, and a branch, an address or a count of the kernel depends on them here: give --param param_0+8=VALUE --param param_0+16=VALUE --param param_0+20=VALUE');
  }, 60_000);
  it('a sidecar may give fields too; a bad key exits 2 naming the field form', async () => {
    const f = file();
    writeFileSync(`${f}.launch.json`, '{"params": {"param_0+8": 64, "0+16": 1, "0+20": 2}}');
    const ok = await cli(['check', f, '--param', '0+8=64', '--format', 'short']);
    expect([ok.code, ok.err]).toEqual([0, '']);
    const bad = await cli(['check', f, '--param', 'nope+8=1']);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/--param nope\+8: kernel _Z6structPKv has no such parameter \(param_0 or 0; a field of a struct parameter: NAME\+BYTE_OFFSET\)/);
    const syntax = await cli(['check', f, '--param', '0+x=1']);
    expect([syntax.code, syntax.err]).toEqual([2, expect.stringContaining('a field of a struct parameter: NAME+BYTE_OFFSET')]);
  }, 60_000);
});


describe('scalar parameters without values', () => {
  it('the first one read stops the kernel, and its message names every scalar parameter the kernel reads without a value', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mbsim-scalars-'));
    const f = join(dir, 'scalars.ptx');
    writeFileSync(f, SCALARS);
    const none = await cli(['check', f, '--format', 'short']);
    expect([none.code, none.out]).toEqual([2, '']);
    expect(none.err).toBe(`${f}:10:1: error: kernel parameters param_0, param_1, param_2 have no value, and a branch, an address or a count of the kernel depends on them here: give --param param_0=VALUE --param param_1=VALUE --param param_2=VALUE`);
    const one = await cli(['check', f, '--param', 'param_0=64', '--param', 'param_1=1', '--format', 'short']);
    expect([one.code, one.out]).toEqual([2, '']);
    expect(one.err).toContain(':12:1: error: kernel parameter param_2 has no value, and a branch, an address or a count of the kernel depends on it here: give --param param_2=VALUE');
    const run = await cli(['run', f, '--param', 'param_0=64', '--param', 'param_1=1']);
    // run prints the located line, then the source line and a caret under the operation.
    expect([run.code, run.out]).toEqual([2, '']);
    expect(run.err.split('\n')[0]).toBe(one.err.split('\n')[0]);
    expect(run.err.split('\n').length).toBeGreaterThanOrEqual(3);
    expect(run.err).toMatch(/\n\s*\^/);
    const ok = await cli(['check', f, '--param', 'param_0=64', '--param', 'param_1=1', '--param', 'param_2=2', '--format', 'short']);
    expect([ok.code, ok.err]).toEqual([0, '']);
  }, 60_000);
});

describe('--set and --sweep of a PTX parameter without --param (docs/PTX.md)', () => {
  it('is the launch value: the kernel is translated with it, and each sweep point overrides it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mbsim-setparam-'));
    const f = join(dir, 'scalars.ptx');
    writeFileSync(f, SCALARS);
    const set = await cli(['check', f, '--set', 'param_0=64', '--set', 'param_1=1', '--set', 'param_2=2', '--format', 'short']);
    expect([set.code, set.err]).toEqual([0, '']);
    const mixed = await cli(['check', f, '--param', 'param_0=64', '--set', 'param_1=1', '--set', 'param_2=2', '--format', 'short']);
    expect([mixed.code, mixed.err]).toEqual([0, '']);
    const sweep = await cli(['check', f, '--set', 'param_0=64', '--set', 'param_1=1', '--sweep', 'param_2=1..3', '--format', 'short']);
    expect(sweep.err).toBe('');
    expect(sweep.code).toBe(1); // param_2=2 passes; 1 and 3 leave the barrier short
    expect(sweep.out).toMatch(/^2 +ok/m);
    const run = await cli(['run', f, '--set', 'param_0=64', '--set', 'param_1=1', '--set', 'param_2=2']);
    expect([run.code, run.err]).toEqual([0, '']);
    const unknown = await cli(['check', f, '--set', 'param_9=1']);
    expect(unknown.code).toBe(2);
    expect(unknown.err).toMatch(/unknown parameter 'param_9'/);
  }, 60_000);
});

describe('an instruction mbsim does not know at all (a typo ptxas rejects)', () => {
  it('info and check warn at its place; a run that reaches it says mbsim does not know it, with no claim about the H200', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mbsim-typo-'));
    const f = join(dir, 'typo.ptx');
    writeFileSync(f, SCALARS.replace('mbarrier.try_wait.parity', 'mbarrier.try_wiat.parity'));
    const warning = `${f}:26:1: warning[W-ptx-unknown]: unknown instruction 'mbarrier.try_wiat.parity.shared.b64': mbsim does not know 'mbarrier.try_wiat'`;
    const info = await cli(['info', f]);
    expect(info.code).toBe(0);
    expect(info.err).toContain(warning);
    const params = ['--param', 'param_0=64', '--param', 'param_1=1', '--param', 'param_2=2'];
    const run = await cli(['run', f, ...params]);
    expect(run.err).toContain(warning);
    expect(run.code).toBe(1);
    expect(run.out).toContain("mbarrier.try_wiat.parity.shared.b64: unknown instruction: mbsim does not know 'mbarrier.try_wiat'");
    const trap = run.out.split('\n').find((l) => l.startsWith('TRAP'))!;
    expect(trap).toContain('mbsim stops the agent here: it does not model this instruction');
    expect(trap).not.toContain('H200');
    const check = await cli(['check', f, ...params, '--format', 'short']);
    expect(check.err).toContain(warning);
    expect(check.out).toContain(`${f}:26:1: error[not-modelled]: mbarrier.try_wiat.parity.shared.b64: unknown instruction`);
    // A known instruction is no warning.
    writeFileSync(f, SCALARS);
    expect((await cli(['info', f])).err).toBe('');
  }, 60_000);
});

describe('translatePtx checks its launch options (docs/API.md); the CLI its --tensor-map', () => {
  const m = () => {
    const r = parsePtx(SCALARS, 'scalars.ptx');
    if (!r.ok) throw new Error('parse');
    return r.module;
  };
  it('an unknown key is a TypeError naming the nearest option; cluster/grid 0 and a box of 0 or less are RangeErrors naming the option', () => {
    expect(() => translatePtx(m(), { blok: 64 } as never)).toThrow(new TypeError("translatePtx: unknown launch option 'blok' (did you mean 'block'?); the options are kernel, block, cluster, grid, params, tensorMaps, dynamicSmem"));
    expect(() => translatePtx(m(), { cluster: 0 })).toThrow(new RangeError('translatePtx: launch.cluster must be at least 1, got 0'));
    expect(() => translatePtx(m(), { grid: 0 })).toThrow(new RangeError('translatePtx: launch.grid must be at least 1, got 0'));
    expect(() => translatePtx(m(), { tensorMaps: { param_0: -1 } })).toThrow(new RangeError('translatePtx: launch.tensorMaps.param_0 must be a positive byte count (the box), got -1'));
    // The library names its option, not a CLI flag.
    expect(() => translatePtx(m(), { params: { nope: 1 } })).toThrow(/^launch\.params\.nope: kernel _Z7scalarsiii has no such parameter/);
  });
  it('--tensor-map with a box of 0 or less exits 2; an unknown --param still names the flag', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mbsim-tmap-'));
    const f = join(dir, 'scalars.ptx');
    writeFileSync(f, SCALARS);
    for (const v of ['-1', '0']) {
      const r = await cli(['check', f, '--tensor-map', `param_0=${v}`]);
      expect([r.code, r.err]).toEqual([2, expect.stringContaining(`--tensor-map param_0: the box is a positive byte count, got ${v}`)]);
    }
    const r = await cli(['check', f, '--param', 'nope=1']);
    expect([r.code, r.err]).toEqual([2, expect.stringContaining('--param nope: kernel _Z7scalarsiii has no such parameter')]);
  });
});

describe('--kernel naming no kernel of the file', () => {
  it('is one line listing the kernels, with no place or caret in the file', async () => {
    const f = withLine(null);
    const r = await cli(['check', f, '--kernel', 'nope']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^mbsim: error: no kernel 'nope' in \S+ \(kernels: .*tma_pipeline.*\)\n?$/);
    expect(r.err).not.toContain(':1:1');
  });
});

describe('a block the kernel\'s .maxntid / .reqntid rules out (PTX ISA, performance-tuning directives)', () => {
  const ring = (directive: string) => {
    const dir = mkdtempSync(join(tmpdir(), 'mbsim-ntid-'));
    const f = join(dir, 'ring.ptx');
    writeFileSync(f, readFileSync('test/fixtures/ptx/ring.ptx', 'utf8').replace('.maxntid 64, 1, 1', directive));
    return f;
  };
  it('--block past .maxntid (the product of its extents) is refused at the directive, exit 2, with a caret; within it runs', async () => {
    const f = ring('.maxntid 64, 1, 1');
    const r = await cli(['check', f, '--block', '128', '--param', 'param_2=4']);
    expect([r.code, r.out]).toEqual([2, '']);
    expect(r.err).toBe(`${f}:23:1: error[ptx-launch]: .maxntid 64, 1, 1 allows at most 64 threads in a CTA, and the launch's block has 128 (give --block 64 or fewer, or no --block)\n  .maxntid 64, 1, 1\n  ^`);
    const two = await cli(['check', ring('.maxntid 32, 2, 1'), '--block', '32,3', '--param', 'param_2=4']);
    expect(two.err).toContain(".maxntid 32, 2, 1 allows at most 64 threads in a CTA, and the launch's block 32,3 has 96");
    expect((await cli(['check', f, '--block', '64', '--param', 'param_2=4', '--quiet'])).code).toBe(0);
  });
  it('--block other than .reqntid\'s dimensions is refused at the directive; the same dimensions run', async () => {
    const f = ring('.reqntid 64');
    const r = await cli(['check', f, '--block', '32', '--param', 'param_2=4']);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`${f}:23:1: error[ptx-launch]: .reqntid 64 requires blocks of 64 threads, and the launch's block is 32 (give --block 64, or no --block)`);
    expect((await cli(['check', f, '--block', '64,1,1', '--param', 'param_2=4', '--quiet'])).code).toBe(0);
    const parsed = parsePtx(readFileSync(f, 'utf8'), f);
    if (!parsed.ok) throw new Error('parse');
    expect(() => translatePtx(parsed.module, { block: [32, 2], params: { param_2: 4 } })).toThrow(/\.reqntid 64 requires blocks of 64 threads, and the launch's block is 32,2/);
  });
});
