// One .shared array holding mbarriers and data (CUTLASS's SharedStorage in the dynamic extern
// array): the mbarriers at the constant offsets mbarrier operations name, the rest a buffer
// (ptxi/mixed.ts). On nvcc's PTX of test/fixtures/ptx/src/mixed.cu (two TMA stages, A and B
// tiles, then full[2] and empty[2]) and its planted twins, and small hand-written kernels for the
// offsets that are not known before running.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { check } from '../src/check/index.js';
import { main } from '../src/cli/main.js';
import { instantiate } from '../src/machine/program.js';
import { parsePtx } from '../src/ptx/index.js';
import { translatePtx, type PtxLaunch } from '../src/ptxi/index.js';
import { tensorBox } from '../src/ptxi/layout.js';
import { simulate } from '../src/sim/simulate.js';

const L: PtxLaunch = { kernel: 'mixed', block: 96, params: { param_3: 4 }, tensorMaps: { param_0: 8192, param_1: 8192 }, dynamicSmem: 32800 };

function translate(text: string, file: string, launch: PtxLaunch) {
  const r = parsePtx(text, file);
  if (!r.ok) throw new Error(r.diagnostic.message);
  return translatePtx(r.module, launch).kernel;
}
const fixture = (f: string, launch: PtxLaunch = L) => instantiate(translate(readFileSync(`test/fixtures/ptx/${f}`, 'utf8'), f, launch));

async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (s) => out.push(s), err: (s) => err.push(s), color: false });
  return { code, out: out.join(''), err: err.join('') };
}

describe('mixed.cu: tiles and mbarriers in one dynamic shared-memory array', () => {
  it('the array is a buffer of 8 KiB elements (the boxes) and the four mbarriers at bytes 32768-32799 one barrier array', () => {
    const k = translate(readFileSync('test/fixtures/ptx/mixed.ptx', 'utf8'), 'mixed.ptx', L);
    expect(k.barriers.map((b) => [b.name, b.length])).toEqual([['smem+32768', { k: 'num', v: 4 }]]);
    expect(k.buffers.map((b) => [b.name, b.length, b.bytes])).toEqual([['smem', { k: 'num', v: 5 }, { k: 'num', v: 8192 }]]);
    // 5 whole elements end past the array's 32,800 bytes; its storage is those bytes less the mbarriers' 32.
    expect(k.buffers[0]!.storage).toEqual({ k: 'num', v: 32768 });
  });

  it('an array of exactly 227 KiB (not whole boxes) is within the per-CTA limit: its mbarriers are counted once', () => {
    const p = fixture('mixed.ptx', { ...L, dynamicSmem: 232448 });
    expect(p.buffers[0]!.length * p.buffers[0]!.bytes).toBe(29 * 8192);
    expect(() => fixture('mixed.ptx', { ...L, dynamicSmem: 232456 })).toThrow(/shared memory per CTA is 232,456 bytes; a CTA can have at most 232,448/);
  });

  it('runs and checks OK: full[s] and empty[s] are smem+32768[s] and [2 + s], the tiles smem[0..3]; one TMA copy per tile and elected lane', () => {
    const p = fixture('mixed.ptx');
    const s = simulate(p);
    expect(s.verdict).toBe('ok');
    expect(s.diagnostics).toEqual([]);
    const ops = (s.events ?? []).flatMap((e) => (e.e === 'op' ? [JSON.stringify(e)] : []));
    const inits = ops.filter((o) => o.includes('mbarrier.init')).map((o) => /smem\+32768\[(\d)\]/.exec(o)?.[1]).sort();
    expect(inits).toEqual(['0', '1', '2', '3']);
    // The producer's copies: 2 per tile (A and B), each one copy of one thread (elect.sync's lane), not 32.
    const arrives = (s.events ?? []).filter((e) => e.e === 'arrive' && e.agent === 0);
    expect(arrives.length).toBe(4);
    const r = check(p, { maxStates: 100_000, randomRuns: false });
    expect(r.verdict).toBe('ok');
    expect(r.complete).toBe(true);
    expect(r.coverage.states).toBe(37);
    expect(r.warnings).toEqual([]); // full and empty share one IR array: no count or trip warning for empty
  });

  it('-DBUG=1: the B box of the last stage lands on the mbarriers: reported at the copy', () => {
    const r = check(fixture('planted/mixed.bug1.ptx'), { maxStates: 100_000, randomRuns: false });
    expect(r.verdict).toBe('barrier-as-data');
    const h = r.hazards[0]!;
    expect(h.message).toMatch(/^cp\.async\.bulk\.tensor\.2d\.shared::cluster\.global\.tile\.mbarrier::complete_tx::bytes accesses bytes of smem that overlap its mbarriers \(bytes 32768-32799\): data written over or read from an mbarrier/);
    expect(h.locations[0]!.line).toBe(174);
  });

  it('-DBUG=2: the consumers read a stage without waiting on full[s]: a race on the tile', () => {
    const r = check(fixture('planted/mixed.bug2.ptx'), { maxStates: 100_000, randomRuns: false });
    expect(r.verdict).toBe('race');
    expect(r.hazards[0]!.subject?.name).toMatch(/^smem\[[02]\]$/);
    expect(r.hazards[0]!.message).toContain('smem+32768[0]');
  });

  it('mbsim check FILE.ptx with its launch file: exit 0; the twins exit 1', async () => {
    const ok = await cli(['check', 'test/fixtures/ptx/mixed.ptx', '--format', 'short']);
    expect(ok.err).toBe('');
    expect(ok.out).toContain('mbsim check mixed: OK, 0 errors, 0 warnings; 37 states');
    expect(ok.code).toBe(0);
    const bug = await cli(['check', 'test/fixtures/ptx/planted/mixed.bug1.ptx', '--format', 'short']);
    expect(bug.code).toBe(1);
    expect(bug.out).toMatch(/mixed\.bug1\.ptx:174:2: error\[barrier-as-data\]: cp\.async\.bulk\.tensor.* overlap its mbarriers/);
  });
});

/** A hand-written kernel over one dynamic array `smem`: `body` between the declarations and `ret`. */
function kernel(body: string): string {
  return `.version 8.0
.target sm_90a
.address_size 64
.extern .shared .align 16 .b8 smem[];
.visible .entry k()
.reqntid 64
{
  .reg .b32 %r<16>;
  .reg .pred %p<4>;
  mov.u32 %r1, %tid.x;
  shr.u32 %r2, %r1, 5;
  setp.eq.u32 %p1, %r2, 0;
  mov.u32 %r3, smem;
  mov.u32 %r4, 1;
  mov.u32 %r7, 32;
${body}
  ret;
}
`;
}
const run = (body: string) => simulate(instantiate(translate(kernel(body), 'k.ptx', { dynamicSmem: 256 })));
const notModelled = (s: ReturnType<typeof run>) => s.diagnostics.find((d) => d.diag.code === 'not-modelled')?.diag.message;
const asData = (s: ReturnType<typeof run>) => s.diagnostics.find((d) => d.diag.code === 'barrier-as-data')?.diag.message;

describe('hand-written mixed arrays: offsets known only at run time', () => {
  it('no mbarrier operation names a constant offset (smem + 8 · warp): not modelled, at the mbarrier operation', () => {
    const s = run(`  shl.b32 %r5, %r2, 3;
  add.s32 %r6, %r3, %r5;
  mbarrier.init.shared.b64 [%r6], %r4;
  st.shared.u32 [%r3+64], %r4;`);
    expect(s.verdict).toBe('trap');
    expect(notModelled(s)).toBe('mbarrier.init.shared.b64: not modelled yet: smem holds data and mbarriers, and no mbarrier operation names a constant byte offset of it: where its mbarriers are is not known before running');
  });

  it('a run-time address inside the known mbarriers is one of them; one off them (warp 1 at byte 16) is not modelled', () => {
    const inside = run(`  @%p1 mbarrier.init.shared.b64 [%r3], %r7;
  @%p1 mbarrier.init.shared.b64 [%r3+8], %r7;
  bar.sync 0;
  shl.b32 %r5, %r2, 3;
  add.s32 %r6, %r3, %r5;
  mbarrier.arrive.shared.b64 _, [%r6];
  st.shared.u32 [%r3+64], %r4;`);
    expect(notModelled(inside)).toBeUndefined();
    expect(inside.verdict).toBe('ok');
    expect(inside.diagnostics).toEqual([]);
    const off = run(`  @%p1 mbarrier.init.shared.b64 [%r3], %r7;
  @%p1 mbarrier.init.shared.b64 [%r3+8], %r7;
  bar.sync 0;
  shl.b32 %r5, %r2, 4;
  add.s32 %r6, %r3, %r5;
  mbarrier.arrive.shared.b64 _, [%r6];
  st.shared.u32 [%r3+64], %r4;`);
    expect(off.verdict).toBe('trap');
    expect(notModelled(off)).toMatch(/^mbarrier\.arrive\.shared\.b64: the mbarrier's offset in smem, which holds data and mbarriers, is computed at run time and lands off the mbarriers that mbarrier operations name with constant offsets \(bytes 0-15\): not modelled yet$/);
  });

  it('a data access over an mbarrier\'s 8 bytes (st.shared at byte 4) is reported; one beside them is not', () => {
    const over = run(`  mbarrier.init.shared.b64 [%r3], %r4;
  st.shared.u32 [%r3+4], %r4;`);
    expect(asData(over)).toMatch(/^st\.shared\.u32 accesses bytes of smem that overlap its mbarriers \(bytes 0-7\)/);
    const beside = run(`  mbarrier.init.shared.b64 [%r3], %r4;
  st.shared.u32 [%r3+8], %r4;`);
    expect(asData(beside)).toBeUndefined();
    expect(notModelled(beside)).toBeUndefined();
  });
});

describe('--tensor-map of a CUtensorMap field of a struct parameter (CUTLASS\'s Params)', () => {
  it('mbsim check: a field key (NAME+OFFSET) is the box of the copies through that field, over the launch file\'s parameter', async () => {
    const same = await cli(['check', 'test/fixtures/ptx/mixed.ptx', '--format', 'short', '--tensor-map', 'param_1+0=8192']);
    expect(same.code).toBe(0);
    const half = await cli(['check', 'test/fixtures/ptx/mixed.ptx', '--format', 'short', '--tensor-map', 'param_1+0=4096']);
    expect(half.code).toBe(1);
    expect(half.out).toMatch(/error\[hang\]/);
    const bad = await cli(['check', 'test/fixtures/ptx/mixed.ptx', '--tensor-map', 'param_9+0=4096']);
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('--tensor-map param_9+0: kernel');
  });

  const params = [{ name: 'k_param_0', type: '.b8', pos: { line: 1, col: 1 } }] as unknown as Parameters<typeof tensorBox>[0];
  it('a field\'s own box (NAME+OFFSET) wins over the parameter\'s; a missing one names the flag of the field', () => {
    expect(tensorBox(params, 'k_param_0', 384, { 'param_0+128': 16384, 'param_0+384': 8192 })).toBe(8192);
    expect(tensorBox(params, 'k_param_0', 128, { '0+128': 16384, param_0: 4096 })).toBe(16384);
    expect(tensorBox(params, 'k_param_0', 256, { param_0: 4096 })).toBe(4096);
    expect(() => tensorBox(params, 'k_param_0', 256, { 'param_0+128': 16384 })).toThrow('the box size of tensor map param_0+256 is not given: --tensor-map param_0+256=BYTES');
  });
});
