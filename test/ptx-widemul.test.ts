// nvcc divides by a constant through the high half of a 32 × 32-bit product (`mul.hi.u32`, or
// `mul.wide.u32` then `shr.u64 …, 32`). The product passes 2^53 once an operand is large — a
// trip count `(n + 31 - tid) >> 5` wraps around for the threads past n and is still computed for
// them — and the machine's exact integers refuse it: the high half is computed from 16-bit halves
// (src/ptxi/widemul.ts). Kernels of the test's own, written as nvcc writes the idiom.
import { describe, expect, it } from 'vitest';
import { check } from '../src/check/index.js';
import { instantiate } from '../src/machine/program.js';
import { parsePtx } from '../src/ptx/index.js';
import { translatePtx } from '../src/ptxi/index.js';
import { simulate } from '../src/sim/simulate.js';

/** A 64-thread kernel: `body`, then thread 0 inits a barrier of count %r7 that every thread arrives on and waits for. */
const src = (body: string[]) => [
  '.version 9.0', '.target sm_90a', '.address_size 64',
  '.visible .entry k(.param .u32 k_param_0)', '.reqntid 64, 1, 1', '{',
  '.reg .pred %p<8>;', '.reg .b32 %r<16>;', '.reg .b64 %rd<8>;', '.shared .align 8 .b8 bar[8];',
  ...body,
  'mov.u32 %r1, %tid.x;', 'setp.ne.s32 %p1, %r1, 0;', '@%p1 bra SKIP;',
  'mov.u32 %r8, bar;', 'mbarrier.init.shared.b64 [%r8], %r7;',
  'SKIP:', 'bar.sync 0;', 'mov.u32 %r8, bar;', 'mbarrier.arrive.shared.b64 _, [%r8];',
  'W:', 'mbarrier.try_wait.parity.shared.b64 %p2, [%r8], 0;', '@!%p2 bra W;',
  'ret;', '}', '',
].join('\n');

function run(body: string[], params: Record<string, number> = {}) {
  const r = parsePtx(src(body), 'widemul.ptx');
  if (!r.ok) throw new Error(r.diagnostic.message);
  const p = instantiate(translatePtx(r.module, { params }).kernel);
  return { p, s: simulate(p) };
}

/** Per thread: `(n + 31 - tid) >> 5` (wraps to 134217727 for tid > n + 31), divided by 7 as nvcc does; a thread whose quotient is wrong traps. */
const tripCount = (shift: number, expectHigh: number) => [
  'ld.param.u32 %r9, [k_param_0];',
  'mov.u32 %r1, %tid.x;',
  'add.s32 %r2, %r9, 31;',
  'sub.s32 %r3, %r2, %r1;',
  'shr.u32 %r4, %r3, 5;',
  'mul.wide.u32 %rd1, %r4, 613566757;',
  `shr.u64 %rd2, %rd1, ${shift};`,
  'cvt.u32.u64 %r5, %rd2;',
  'setp.gt.u32 %p3, %r1, 32;',
  `selp.u32 %r6, ${expectHigh}, 0, %p3;`,
  'setp.ne.u32 %p4, %r5, %r6;',
  '@%p4 trap;',
  'mov.u32 %r7, 64;',
];

describe('the high half of a 32 × 32-bit product, beyond 2^53', () => {
  it('mul.wide.u32 then shr.u64 by 32: the quotient of every thread, the wrapped ones too (no arith trap)', () => {
    const { p, s } = run(tripCount(32, 19173961), { k_param_0: 1 });
    expect(s.diagnostics).toEqual([]);
    expect(s.verdict).toBe('ok');
    expect(check(p, { maxStates: 10_000 }).verdict).toBe('ok');
  });

  it('a shift past 32 shifts the high half further (shr.u64 by 35)', () => {
    const { s } = run(tripCount(35, 2396745), { k_param_0: 1 });
    expect(s.diagnostics).toEqual([]);
    expect(s.verdict).toBe('ok');
  });

  it('a wrong expectation still traps: the value is computed, not assumed', () => {
    const { s } = run(tripCount(32, 19173960), { k_param_0: 1 });
    expect(s.verdict).toBe('trap');
  });

  it('a product that something else reads is still computed (and is exact while it fits)', () => {
    const { s } = run([
      'mov.u32 %r4, 1000;',
      'mul.wide.u32 %rd1, %r4, 613566757;',
      'shr.u64 %rd2, %rd1, 32;',
      'cvt.u32.u64 %r5, %rd2;', // ⌊1000 · 613566757 / 2^32⌋ = 142
      'cvt.u32.u64 %r6, %rd1;', // the product's low word, read directly
      'setp.ne.u32 %p4, %r5, 142;', '@%p4 trap;',
      'setp.ne.u32 %p5, %r6, 3681400968;', '@%p5 trap;', // 613566757000 mod 2^32
      'mov.u32 %r7, 64;',
    ]);
    expect(s.diagnostics).toEqual([]);
    expect(s.verdict).toBe('ok');
  });

  it('mul.hi.u32 of two operands near 2^32', () => {
    const { s } = run([
      'mov.u32 %r4, -1;',
      'mul.hi.u32 %r5, %r4, -1431655765;', // ⌊0xFFFFFFFF · 0xAAAAAAAB / 2^32⌋ = 0xAAAAAAAA
      'setp.ne.u32 %p4, %r5, -1431655766;', '@%p4 trap;',
      'mov.u32 %r7, 64;',
    ]);
    expect(s.diagnostics).toEqual([]);
    expect(s.verdict).toBe('ok');
  });
});
