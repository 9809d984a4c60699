// Mbarriers of a mixed shared-memory array at a byte offset computed from the launch's parameters
// (ptxi/launch-const.ts): DeepGEMM sizes a region by `shape_k` and places its mbarriers after it.
// On nvcc's PTX of test/fixtures/ptx/src/rtoffset.cu and its planted twins, and hand-written
// kernels for the arithmetic the evaluation follows and what it refuses to follow.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { check } from '../src/check/index.js';
import { evalExpr } from '../src/kernel/expr.js';
import { main } from '../src/cli/main.js';
import { instantiate, KernelError } from '../src/machine/program.js';
import { parsePtx } from '../src/ptx/index.js';
import { translatePtx, type PtxLaunch } from '../src/ptxi/index.js';
import { simulate } from '../src/sim/simulate.js';

const L: PtxLaunch = { kernel: 'rtoffset', block: 96, params: { param_2: 4, param_3: 256 }, tensorMaps: { param_0: 8192 }, dynamicSmem: 16448 };

function translate(text: string, file: string, launch: PtxLaunch) {
  const r = parsePtx(text, file);
  if (!r.ok) throw new Error(r.diagnostic.message);
  return translatePtx(r.module, launch).kernel;
}
const fixture = (f: string, launch: PtxLaunch = L) => translate(readFileSync(`test/fixtures/ptx/${f}`, 'utf8'), f, launch);
const withK = (k: number): PtxLaunch => ({ ...L, params: { ...L.params, param_3: k } });

async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (s) => out.push(s), err: (s) => err.push(s), color: false });
  return { code, out: out.join(''), err: err.join('') };
}

describe('rtoffset.cu: mbarriers after a region sized by shape_k', () => {
  it('shape_k = 256: two scales (8 bytes) after the 16,384 bytes of tiles, so full[2] and empty[2] are bytes 16392-16423', () => {
    const k = fixture('rtoffset.ptx');
    expect(k.barriers.map((b) => [b.name, b.length])).toEqual([['smem+16392', { k: 'num', v: 4 }]]);
    expect(k.params.map((p) => [p.name, p.value, p.fixed !== undefined])).toEqual([['param_2', 4, false], ['param_3', 256, true]]);
  });

  it('shape_k = 1024: eight scales (32 bytes), the mbarriers at byte 16416', () => {
    expect(fixture('rtoffset.ptx', withK(1024)).barriers.map((b) => b.name)).toEqual(['smem+16416']);
  });

  it('runs and checks OK; every mbarrier operation names the barrier array', () => {
    const p = instantiate(fixture('rtoffset.ptx'));
    const s = simulate(p);
    expect(s.verdict).toBe('ok');
    expect(s.diagnostics).toEqual([]);
    const r = check(p, { maxStates: 100_000, randomRuns: false });
    expect(r.verdict).toBe('ok');
    expect(r.complete).toBe(true);
    expect(r.coverage.states).toBe(31);
  });

  it('-DBUG=1 (the producer rounds the scales to 16 bytes): a hang at shape_k = 256, OK at 512 where both roundings agree', () => {
    const hang = check(instantiate(fixture('planted/rtoffset.bug1.ptx')), { maxStates: 100_000, randomRuns: false });
    expect(hang.verdict).toBe('hang');
    const ok = check(instantiate(fixture('planted/rtoffset.bug1.ptx', withK(512))), { maxStates: 100_000, randomRuns: false });
    expect(ok.verdict).toBe('ok');
  });

  it('-DBUG=2 (no wait on full[s]): a race on the stage-0 tile', () => {
    const r = check(instantiate(fixture('planted/rtoffset.bug2.ptx')), { maxStates: 100_000, randomRuns: false });
    expect(r.verdict).toBe('race');
    expect(r.hazards[0]!.message).toMatch(/reads smem\[0\] while the TMA copy .* is still writing it/);
  });

  it('a parameter the layout was computed from cannot be overridden at instantiation; another one can', () => {
    const k = fixture('rtoffset.ptx');
    expect(() => instantiate(k, { param_3: 2048 })).toThrow(KernelError);
    expect(() => instantiate(k, { param_3: 2048 })).toThrow(/^parameter param_3 cannot be set to 2048 here: where the kernel's mbarriers sit in shared memory was computed from it/);
    expect(instantiate(k, { param_3: 256 }).params.param_3).toBe(256);
    expect(simulate(instantiate(k, { param_2: 3 })).verdict).toBe('ok');
  });

  it('mbsim: check with the launch file is OK; --param shape_k translates anew; --set of it is exit 2', async () => {
    const ok = await cli(['check', 'test/fixtures/ptx/rtoffset.ptx', '--format', 'short']);
    expect(ok.out).toContain('mbsim check rtoffset: OK, 0 errors, 0 warnings; 31 states');
    expect(ok.code).toBe(0);
    const bug = await cli(['check', 'test/fixtures/ptx/planted/rtoffset.bug1.ptx', '--format', 'short']);
    expect(bug.code).toBe(1);
    const bug512 = await cli(['check', 'test/fixtures/ptx/planted/rtoffset.bug1.ptx', '--format', 'short', '--param', 'param_3=512']);
    expect(bug512.code).toBe(0);
    const set = await cli(['run', 'test/fixtures/ptx/rtoffset.ptx', '--set', 'param_3=2048']);
    expect(set.code).toBe(2);
    expect(set.err).toMatch(/parameter param_3 cannot be set to 2048 here/);
  });
});

/** A hand-written kernel: `off` computes `%r6`, the mbarriers' byte offset in `smem`, from `%r5` = parameter 0. */
function kernel(off: string): string {
  return `.version 8.0
.target sm_90a
.address_size 64
.extern .shared .align 16 .b8 smem[];
.visible .entry k(.param .u32 k_param_0)
.reqntid 32
{
  .reg .b16 %rs<4>;
  .reg .b32 %r<16>;
  .reg .b64 %rd<8>;
  .reg .pred %p<4>;
  ld.param.u32 %r5, [k_param_0];
  mov.u32 %r3, smem;
  mov.u32 %r4, 1;
${off}
  add.s32 %r8, %r3, %r6;
  mbarrier.init.shared.b64 [%r8], %r4;
  st.shared.u32 [%r3], %r4;
  ret;
}
`;
}
const bars = (off: string, p0: number | undefined) => {
  const k = translate(kernel(off), 'k.ptx', { dynamicSmem: 4096, ...(p0 === undefined ? {} : { params: { param_0: p0 } }) });
  return k.barriers.map((b) => b.name);
};

describe('launch-constant offsets: the arithmetic followed', () => {
  it('align up: (p * 4 + 7) & -8, past a 64-byte header', () => {
    const off = `  shl.b32 %r9, %r5, 2;
  add.s32 %r10, %r9, 71;
  and.b32 %r6, %r10, -8;`;
    expect(bars(off, 3)).toEqual(['smem+80']);
    expect(bars(off, 4)).toEqual(['smem+80']);
    expect(bars(off, 5)).toEqual(['smem+88']);
  });

  it('signed ceiling division as nvcc writes it (shr.s32 of the sign, shr.u32, add, shr.s32), then widening and narrowing cvt', () => {
    const off = `  add.s32 %r9, %r5, 127;
  shr.s32 %r10, %r9, 31;
  shr.u32 %r11, %r10, 25;
  add.s32 %r12, %r9, %r11;
  shr.s32 %r13, %r12, 7;
  shl.b32 %r14, %r13, 3;
  cvt.u64.u32 %rd1, %r14;
  add.s64 %rd2, %rd1, 256;
  cvt.u32.u64 %r6, %rd2;`;
    expect(bars(off, 1)).toEqual(['smem+264']);
    expect(bars(off, 129)).toEqual(['smem+272']);
  });

  it('mul.lo, mad.lo, min, max, div and rem', () => {
    const off = `  mul.lo.s32 %r9, %r5, 3;
  mad.lo.s32 %r10, %r9, 2, 5;
  min.s32 %r11, %r10, 100;
  max.s32 %r12, %r11, 12;
  div.s32 %r13, %r12, 4;
  rem.s32 %r14, %r12, 4;
  add.s32 %r15, %r13, %r14;
  shl.b32 %r6, %r15, 3;`;
    // p = 7: 21 → 47 → 47 → 47 → 11 + 3 = 14 → 112
    expect(bars(off, 7)).toEqual(['smem+112']);
    // p = 100: 300 → 605 → min 100 → 100 → 25 + 0 → 200
    expect(bars(off, 100)).toEqual(['smem+200']);
  });

  it('no launch value, a thread index or a guarded definition: not a constant (no mbarrier array; the run traps at the mbarrier)', () => {
    expect(bars('  shl.b32 %r6, %r5, 3;', undefined)).toEqual([]);
    expect(bars(`  mov.u32 %r9, %tid.x;
  add.s32 %r6, %r5, %r9;`, 1)).toEqual([]);
    expect(bars(`  setp.eq.u32 %p1, %r5, 0;
  mov.u32 %r6, 8;
  @%p1 mov.u32 %r6, 16;`, 0)).toEqual([]);
  });
});

// Where the evaluation once had arithmetic of its own (bits of the instruction's type), the value
// now is the IR's: what the translated kernel computes at run time (ptxi/alu.ts `aluExpr`), so the
// layout's offset is the value the run computes (`ir`: the kernel's statements evaluated). The IR
// itself reads operands as PTX does where a result depends on more than their low bits.
describe('launch-constant offsets: the value is the IR expression of the instruction', () => {
  /** `%r6` as the translated kernel computes it: its straight-line `let` statements evaluated in order. */
  const ir = (off: string, p0: number): number | undefined => {
    const k = translate(kernel(off), 'k.ptx', { dynamicSmem: 4096, params: { param_0: p0 } });
    const vals = new Map<string, number>([['param_0', p0]]);
    for (const st of k.roles[0]!.body) {
      if (st.s !== 'let') continue;
      try {
        vals.set(st.name, evalExpr(st.value, (n) => vals.get(n)));
      } catch {
        vals.delete(st.name);
      }
    }
    return vals.get('%r6');
  };

  it('a negative offset is negative (sub.s32 0 - 8 is −8, not 2^32 − 8): before the array, so no mbarrier array', () => {
    expect(bars('  sub.s32 %r6, %r5, 8;', 0)).toEqual([]);
    expect(bars('  sub.s32 %r6, %r5, 8;', 16)).toEqual(['smem+8']);
    expect(ir('  sub.s32 %r6, %r5, 8;', 0)).toBe(-8);
  });

  it('a signed operation reads a wrapped sum in two\'s complement (add.s32 past 2^31 − 1, then shr.s32 is −1)', () => {
    const off = `  add.s32 %r9, %r5, 1;
  shr.s32 %r10, %r9, 31;
  and.b32 %r6, %r10, 24;`;
    expect(bars(off, 2147483647)).toEqual(['smem+24']);
    expect(ir(off, 2147483647)).toBe(24);
    expect(bars(off, 5)).toEqual(['smem+0']);
  });

  it('mul.wide.u32 reads its operands modulo 2^32 (0 − 1 is 2^32 − 1): the high word of (2^32 − 1) · 8 + 8 is 8', () => {
    const off = `  sub.u32 %r9, %r5, 1;
  mul.wide.u32 %rd1, %r9, 8;
  add.s64 %rd3, %rd1, 8;
  shr.u64 %rd2, %rd3, 32;
  cvt.u32.u64 %r10, %rd2;
  shl.b32 %r6, %r10, 3;`;
    expect(bars(off, 0)).toEqual(['smem+64']);
    expect(ir(off, 0)).toBe(64);
  });

  it('a 16-bit shift reads its .u32 count whole and clamps it to 16 (65539: 0, not a shift by 3)', () => {
    const off = `  cvt.u16.u32 %rs1, %r5;
  shl.b16 %rs2, %rs1, %r5;
  cvt.u32.u16 %r9, %rs2;
  add.s32 %r6, %r9, 64;`;
    expect(bars(off, 65539)).toEqual(['smem+64']);
    expect(bars(off, 3)).toEqual(['smem+88']);
    expect(ir(off, 65539)).toBe(64);
  });

  it('a shift count past 63 clamps (shr.u32 by 100 is 0), as PTX clamps counts past the width', () => {
    const off = `  shr.u32 %r9, %r5, %r5;
  add.s32 %r6, %r9, 32;`;
    expect(bars(off, 100)).toEqual(['smem+32']);
    expect(ir(off, 100)).toBe(32);
  });
});
