// wgmma matrix descriptors decoded from their value (ptxi/desc.ts, PTX ISA §9.7.15.5.1): the
// start-address field (bits 0-13, bytes >> 4) names the buffer element the wgmma reads, so a
// descriptor built once from stage 0's tile and moved to stage s by adding s << 10 to its low word
// reads stage s. On a hand-written 2-stage TMA pipeline (test/fixtures/ptx/desc_stage.ptx: A's
// descriptor on 32 bits, B's from 16-bit halves packed with `mov.b32 {lo, hi}` and broadcast by
// shfl.sync, both assembled with `mov.b64 {lo, hi}`) and its planted twins; and the ALU's vector
// pack / unpack forms of `mov` (§9.7.9.10).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { check, type CheckResult } from '../src/check/index.js';
import { instantiate } from '../src/machine/program.js';
import { parsePtx } from '../src/ptx/index.js';
import { translatePtx, type PtxLaunch } from '../src/ptxi/index.js';
import { simulate } from '../src/sim/simulate.js';

const L: PtxLaunch = JSON.parse(readFileSync('test/fixtures/ptx/desc_stage.ptx.launch.json', 'utf8')) as PtxLaunch;

function program(text: string, file: string, launch: PtxLaunch) {
  const r = parsePtx(text, file);
  if (!r.ok) throw new Error(r.diagnostic.message);
  return instantiate(translatePtx(r.module, launch).kernel);
}
const fixture = (f: string, launch: PtxLaunch = L) => program(readFileSync(`test/fixtures/ptx/${f}`, 'utf8'), f, launch);
const first = (r: CheckResult) => `${r.verdict} ${r.hazards[0]?.kind ?? ''} ${r.hazards[0]?.subject?.name ?? ''}`;

describe('desc_stage.ptx: descriptors built from stage 0 and advanced by stage << 10', () => {
  it('runs and checks OK (3 iterations over 2 stages): every wgmma reads the stage its consumer waited on', () => {
    const p = fixture('desc_stage.ptx');
    const s = simulate(p);
    expect(s.verdict).toBe('ok');
    expect(s.diagnostics).toEqual([]);
    const r = check(p, { maxStates: 100_000, randomRuns: false });
    expect(r.verdict).toBe('ok');
    expect(r.complete).toBe(true);
  }, 120_000);

  it('finds the planted bugs as races on the right tile: release before wgmma.wait_group (A stage 0), A or B moved to the other stage', () => {
    const cases: [string, string][] = [
      ['planted/desc_stage.early_release.ptx', 'race race smem[0]'],
      ['planted/desc_stage.wrong_stage.ptx', 'race race smem[1]'],
      ['planted/desc_stage.wrong_stage_b.ptx', 'race race smem[3]'],
    ];
    for (const [f, verdict] of cases) expect([f, first(check(fixture(f), { maxStates: 100_000, randomRuns: false }))]).toEqual([f, verdict]);
  }, 120_000);

  it('with one iteration the wrong stage is read with nothing in flight: the read of a tile never written is no race, and the kernel ends', () => {
    const p = fixture('planted/desc_stage.wrong_stage.ptx', { ...L, params: { param_2: 1 } });
    expect(check(p, { maxStates: 100_000, randomRuns: false }).verdict).toBe('ok');
  }, 120_000);
});

/** A one-warp kernel that traps unless `cond` holds after `body` (a `setp.ne` of `%r9` against `want`). */
const KERNEL = (body: string, want: number) => `.version 8.0
.target sm_90a
.address_size 64
.visible .entry pack()
{
  .reg .pred %p<4>;
  .reg .b16 %rs<8>;
  .reg .b32 %r<16>;
  .reg .b64 %rd<8>;
${body}
  setp.ne.u32 %p1, %r9, ${want};
  @%p1 trap;
  ret;
}
`;
const runs = (body: string, want: number) => simulate(program(KERNEL(body, want), 'pack.ptx', { kernel: 'pack', block: 32 })).verdict;

describe('mov pack and unpack (PTX ISA §9.7.9.10)', () => {
  it('mov.b32 {lo, hi} of 16-bit halves and back, swapped', () => {
    const body = `  mov.u32 %r1, 305419896;
  mov.b32 {%rs1, %rs2}, %r1;
  mov.b32 %r9, {%rs2, %rs1};`;
    expect(runs(body, 0x56781234)).toBe('ok');
    expect(runs(body, 0x12345678)).not.toBe('ok');
  });

  it('mov.b64 {lo, hi} of 32-bit words and back: each word exactly', () => {
    const body = `  mov.u32 %r1, 4294967295;
  mov.u32 %r2, 7;
  mov.b64 %rd1, {%r1, %r2};
  mov.b64 {%r3, %r4}, %rd1;
  shl.b32 %r5, %r4, 28;
  add.s32 %r9, %r5, %r3;`;
    // 7 << 28 + 0xFFFFFFFF, exact (no 32-bit wrap in the model's integers)
    expect(runs(body, 7 * 2 ** 28 + 0xffffffff)).toBe('ok');
  });

  it('the words of an or.b64 with a constant beyond 2^53 (a descriptor\'s layout bits) unpack exactly', () => {
    const pre = `  mov.u32 %r1, 4660;
  cvt.u64.u32 %rd1, %r1;
  or.b64 %rd2, %rd1, 4611686293305360384;
  mov.b64 {%r3, %r4}, %rd2;`;
    // 0x4000004000010000: low word 0x00010000, high word 0x40000040
    expect(runs(`${pre}\n  mov.u32 %r9, %r3;`, 0x10000 + 4660)).toBe('ok');
    expect(runs(`${pre}\n  mov.u32 %r9, %r4;`, 0x40000040)).toBe('ok');
    const add = `  mov.u32 %r1, 4294967295;
  cvt.u64.u32 %rd1, %r1;
  add.s64 %rd2, %rd1, 4611686293305360385;
  mov.b64 {%r3, %r4}, %rd2;`;
    // add: the low word's carry goes into the high word
    expect(runs(`${add}\n  mov.u32 %r9, %r3;`, 0x10000)).toBe('ok');
    expect(runs(`${add}\n  mov.u32 %r9, %r4;`, 0x40000041)).toBe('ok');
  });

  it('a 16-bit element is read modulo 2^16: cvt-free packing of a wider register keeps its low half', () => {
    const body = `  mov.u32 %r1, 65537;
  cvt.u16.u32 %rs1, %r1;
  mov.b16 %rs2, 3;
  mov.b32 %r9, {%rs1, %rs2};`;
    expect(runs(body, 3 * 65536 + 1)).toBe('ok');
  });
});

/** A one-warpgroup kernel whose wgmma's A descriptor is `%rd2` after `body`, B the tile's own address. */
const WG = (body: string) => `.version 8.0
.target sm_90a
.address_size 64
.shared .align 1024 .b8 tile[2048];
.visible .entry opaque_desc()
{
  .reg .pred %p<4>;
  .reg .b32 %r<16>;
  .reg .b64 %rd<8>;
  .reg .f32 %f<4>;
  mov.u32 %r1, tile;
  shr.u32 %r2, %r1, 4;
  cvt.u64.u32 %rd1, %r2;
  ld.shared.u64 %rd5, [%r1];
${body}
  wgmma.fence.sync.aligned;
  wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%f0, %f1, %f2, %f3}, %rd2, %rd1, 1, 1, 1, 0, 0;
  wgmma.commit_group.sync.aligned;
  wgmma.wait_group.sync.aligned 0;
  ret;
}
`;
const wgRun = (body: string) => simulate(program(WG(body), 'opaque_desc.ptx', { kernel: 'opaque_desc', block: 128 }));

describe('a descriptor whose value is opaque', () => {
  it('follows its provenance back to the shared-memory address it was built from, as before', () => {
    const s = wgRun('  xor.b64 %rd2, %rd1, %rd5;');
    expect(s.verdict).toBe('ok');
    expect(JSON.stringify(s.events ?? [])).toContain('wgmma.mma_async');
  });

  it('is a not-modelled trap at the wgmma when nothing leads back to a .shared array', () => {
    const s = wgRun('  xor.b64 %rd2, %rd5, %rd5;');
    expect(s.verdict).not.toBe('ok');
    expect(JSON.stringify(s.diagnostics)).toMatch(/the shared-memory address of wgmma descriptor/);
  });
});

describe('a decoded start address with several .shared data arrays and no provenance', () => {
  // A's descriptor packs 16-bit halves of `other`'s address (mov.b32 {lo, hi}: no provenance to
  // follow); the store into `other[0]` before wgmma.wait_group races with the wgmma's read only
  // when the read is found in `other`, by the address's value.
  const K = (store: string) => WG(`  mov.u32 %r3, other;
  shr.u32 %r4, %r3, 4;
  cvt.u16.u32 %rs1, %r4;
  mov.b16 %rs2, 1;
  mov.b32 %r5, {%rs1, %rs2};
  cvt.u64.u32 %rd2, %r5;
  wgmma.fence.sync.aligned;
  wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%f0, %f1, %f2, %f3}, %rd2, %rd1, 1, 1, 1, 0, 0;
  wgmma.commit_group.sync.aligned;
  mov.u32 %r6, 0;
  st.shared.u32 [${store}], %r6;`)
    .replace('.shared .align 1024 .b8 tile[2048];', '.shared .align 1024 .b8 tile[2048];\n.shared .align 1024 .b8 other[2048];')
    .replace('.reg .b32', '.reg .b16 %rs<4>;\n  .reg .b32');
  const run = (store: string) => check(program(K(store), 'two.ptx', { kernel: 'opaque_desc', block: 128 }), { maxStates: 10_000, randomRuns: false });
  it('names the array the address falls in: a store into other[0] races with A\'s read, one into tile with B\'s (its own address)', () => {
    expect(first(run('%r3'))).toBe('race race other[0]');
    expect(first(run('%r1+1024'))).toBe('race race tile[0]');
  });
});
