// Integer values passed through shared memory (src/ptxi/smem-values.ts, smem-value-ops.ts): the
// front end maps a small integer array's scalar ld.shared / st.shared onto the machine's value
// cells; what it cannot carry exactly (lane-varying stores, mixed sizes, misaligned addresses,
// large arrays) is a located not-modelled trap, never a guessed value.
import { describe, expect, it } from 'vitest';
import { check } from '../src/check/index.js';
import { instantiate } from '../src/machine/program.js';
import { opsOf } from '../src/machine/values.js';
import { parsePtx } from '../src/ptx/index.js';
import { translatePtx } from '../src/ptxi/index.js';
import { simulate } from '../src/sim/simulate.js';

/** A one-warp kernel: `decl` in its body, then `lines` (the first at line 11); a failed check ends in `trap`. */
const kernel = (decl: string, lines: string[]) => [
  '.version 8.8', '.target sm_90a', '.address_size 64', '',
  '.visible .entry k()', '{',
  '\t.reg .pred %p<4>;', '\t.reg .b32 %r<16>;', '\t.reg .b64 %rd<4>;', `\t${decl}`,
  ...lines.map((l) => `\t${l}`), '}', '',
].join('\n');

const translate = (text: string) => {
  const r = parsePtx(text, 'v.ptx');
  if (!r.ok) throw new Error(r.diagnostic.message);
  return translatePtx(r.module, { block: 32 }).kernel;
};
const run = (text: string) => check(instantiate(translate(text)), { maxStates: 10_000, randomRuns: false });

/** `if (%r1 != want) trap;` after loading %r1 with `load`. */
const expectLoaded = (load: string, want: number) => [load, `setp.eq.s32 %p1, %r1, ${want};`, '@%p1 bra DONE;', 'trap;', 'DONE:', 'ret;'];

describe('scalar integer values through a small shared array', () => {
  it('a stored value is loaded back: the branch on it is taken (u32, -1 through u32, s8 sign-extended, u8 zero-extended)', () => {
    const ok = (decl: string, store: string, load: string, want: number) => {
      const r = run(kernel(decl, [store, 'bar.warp.sync -1;', ...expectLoaded(load, want)]));
      expect({ v: r.verdict, h: r.hazards.map((h) => h.message) }).toEqual({ v: 'ok', h: [] });
    };
    ok('.shared .align 4 .b8 next[8];', 'st.shared.u32 [next+4], 7;', 'ld.shared.u32 %r1, [next+4];', 7);
    ok('.shared .align 4 .b8 next[8];', 'st.shared.u32 [next], -1;', 'ld.shared.u32 %r1, [next];', -1);
    ok('.shared .align 1 .b8 flag[4];', 'st.shared.u8 [flag+1], 200;', 'ld.shared.s8 %r1, [flag+1];', -56);
    ok('.shared .align 1 .b8 flag[4];', 'st.shared.u8 [flag+1], -56;', 'ld.shared.u8 %r1, [flag+1];', 200);
  });

  it('a wrong expectation traps: the loaded value is the stored one, not any value', () => {
    const r = run(kernel('.shared .align 4 .b8 next[8];', ['st.shared.u32 [next+4], 7;', ...expectLoaded('ld.shared.u32 %r1, [next+4];', 8)]));
    expect(r.verdict).toBe('not-modelled');
    expect(r.hazards[0]!.message).toBe('trap: the kernel traps here');
    expect(r.hazards[0]!.locations[0]!.line).toBe(15);
  });

  it('the IR: ld.shared with a destination, st.shared with a value, elements of the accesses\' size', () => {
    const k = translate(kernel('.shared .align 4 .b8 next[8];', ['st.shared.u32 [next+4], 7;', ...expectLoaded('ld.shared.u32 %r1, [next+4];', 7)]));
    expect(k.buffers.find((b) => b.name === 'next')).toMatchObject({ length: { v: 2 }, bytes: { v: 4 } });
    const ops = k.roles.flatMap((x) => opsOf(x.body));
    expect(ops.find((o) => o.op === 'st.shared')).toMatchObject({ value: { k: 'num', v: 7 } });
    expect(ops.find((o) => o.op === 'ld.shared')).toMatchObject({ dest: '%r1' });
  });

  it('one lane\'s store (if (lane == 0)) stores that lane\'s value; the simulator runs it', () => {
    const text = kernel('.shared .align 4 .b8 next[4];', [
      'mov.u32 %r2, %laneid;', 'setp.ne.s32 %p2, %r2, 0;', '@%p2 bra SKIP;', 'add.s32 %r3, %r2, 5;', 'st.shared.u32 [next], %r3;', 'SKIP:',
      'bar.warp.sync -1;', ...expectLoaded('ld.shared.u32 %r1, [next];', 5),
    ]);
    expect(run(text).verdict).toBe('ok');
    expect(simulate(instantiate(translate(text))).verdict).toBe('ok');
  });
});

describe('a load whose destination differs between lanes', () => {
  it('a load in divergent code into a register the other lanes set otherwise: each active lane gets the value', () => {
    const text = kernel('.shared .align 4 .b8 next[4];', [
      'mov.u32 %r2, %laneid;', 'st.shared.u32 [next], 9;', 'bar.warp.sync -1;', 'setp.lt.u32 %p2, %r2, 4;', '@%p2 bra A;',
      'mov.u32 %r1, 9;', 'bra.uni J;', 'A:', 'ld.shared.u32 %r1, [next];', 'J:', ...expectLoaded('', 9).slice(1),
    ]);
    const ops = translate(text).roles.flatMap((x) => opsOf(x.body));
    expect(ops.find((o) => o.op === 'ld.shared')).toMatchObject({ dest: '%smem' });
    expect(run(text).verdict).toBe('ok');
    // The same with the value 8 stored: lanes 0-3 load 8 and trap.
    const bad = run(text.replace('st.shared.u32 [next], 9;', 'st.shared.u32 [next], 8;'));
    expect({ v: bad.verdict, m: bad.hazards[0]!.message, line: bad.hazards[0]!.locations[0]!.line }).toEqual({ v: 'not-modelled', m: 'trap: the kernel traps here', line: 23 });
  });
});

describe('what is not carried: a located not-modelled, never a guess', () => {
  it('lanes storing different values to one address: a trap at the store', () => {
    const r = run(kernel('.shared .align 4 .b8 next[4];', ['mov.u32 %r2, %laneid;', 'st.shared.u32 [next], %r2;', 'bar.warp.sync -1;', ...expectLoaded('ld.shared.u32 %r1, [next];', 0)]));
    expect(r.verdict).toBe('not-modelled');
    expect(r.hazards[0]!.message).toBe('st.shared.u32: lanes of a warp store different values to one element of next: not modelled (a value stored by one lane, or by lanes that agree, is)');
    expect(r.hazards[0]!.locations[0]!.line).toBe(12);
  });

  it('a 64-bit load over two 32-bit stores: the array is not a value array, the branch names why', () => {
    const r = run(kernel('.shared .align 8 .b8 next[8];', [
      'st.shared.u32 [next], 1;', 'st.shared.u32 [next+4], 0;', 'ld.shared.u64 %rd1, [next];', 'setp.eq.s64 %p1, %rd1, 1;', '@%p1 bra DONE;', 'trap;', 'DONE:', 'ret;',
    ]));
    expect(r.verdict).toBe('not-modelled');
    expect(r.hazards[0]!.message).toMatch(/^bra: the value of %p1 is not modelled \(it comes from ld\.shared\.u64 %rd1, \[next\] at line 13 \(shared-memory data: the values of ld\.shared are modelled in small integer arrays only, and next is not one: it is accessed with 4- and 8-byte loads or stores\)\)$/);
    expect(r.hazards[0]!.locations[0]!.line).toBe(15);
  });

  it('an array of more than 64 elements: not a value array, with the reason', () => {
    const r = run(kernel('.shared .align 4 .b8 big[512];', ['st.shared.u32 [big+4], 7;', ...expectLoaded('ld.shared.u32 %r1, [big+4];', 7)]));
    expect(r.verdict).toBe('not-modelled');
    expect(r.hazards[0]!.message).toMatch(/big is not one: it has 512 bytes: values are modelled in arrays of at most 64 elements of their accesses' size\)\)$/);
  });

  it('a misaligned address of a value array: a trap at the load', () => {
    const r = run(kernel('.shared .align 4 .b8 next[8];', ['mov.u32 %r4, next;', 'add.s32 %r5, %r4, 2;', 'st.shared.u32 [next], 7;', 'ld.shared.u32 %r1, [%r5];', 'setp.eq.s32 %p1, %r1, 7;', '@%p1 bra DONE;', 'trap;', 'DONE:', 'ret;']));
    expect(r.verdict).toBe('not-modelled');
    expect(r.hazards[0]!.message).toBe('ld.shared.u32: an address of next that is not a multiple of its 4-byte elements: a value read at another offset than it was written is not modelled');
    expect(r.hazards[0]!.locations[0]!.line).toBe(14);
  });

  it('a store of an opaque value (a clock) leaves the loads opaque, named through the store', () => {
    const r = run(kernel('.shared .align 4 .b8 next[4];', ['mov.u32 %r6, %clock;', 'st.shared.u32 [next], %r6;', ...expectLoaded('ld.shared.u32 %r1, [next];', 0)]));
    expect(r.verdict).toBe('not-modelled');
    expect(r.hazards[0]!.message).toMatch(/^bra: the value of %p1 is not modelled \(it comes from mov\.u32 %r6, %clock at line 11 \(the special register %clock\)\)$/);
  });
});
