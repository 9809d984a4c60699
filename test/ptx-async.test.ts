// tcgen05, Ampere cp.async, st.async and cluster launch control in PTX: nvcc's PTX of the sm_100a
// reference kernel (hw/kernels/tcgen05*.ptx) and hand-written kernels accepted by ptxas
// (test/fixtures/ptx/ops/), each correct one OK and a one-line change of it caught.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { check } from '../src/check/index.js';
import { instantiate } from '../src/machine/program.js';
import { parsePtx } from '../src/ptx/index.js';
import { translatePtx, type PtxLaunch } from '../src/ptxi/index.js';
import { simulate } from '../src/sim/simulate.js';

function program(src: string, file: string, launch: PtxLaunch) {
  const r = parsePtx(src, file);
  if (!r.ok) throw new Error(r.diagnostic.message);
  return instantiate(translatePtx(r.module, launch).kernel);
}
const read = (f: string) => readFileSync(f, 'utf8');
/** `src` with `from` (which must occur) replaced by `to`. */
function change(src: string, from: string, to: string): string {
  expect(src).toContain(from);
  return src.replace(from, to);
}
const TC_LAUNCH: PtxLaunch = { block: 192, params: { param_3: 128, param_4: 2, param_5: 1 }, tensorMaps: { param_0: 16384, param_1: 16384 }, dynamicSmem: 33792 };

describe('hw/kernels/tcgen05*.ptx (sm_100a: producer warp, MMA warp 1, four epilogue warps)', () => {
  const tc = (f: string) => program(read(`hw/kernels/${f}`), f, TC_LAUNCH);

  it('translates: Tensor Memory is one 128-column allocation; the kernel simulates with no diagnostic', () => {
    const p = tc('tcgen05.ptx');
    expect(p.agents).toHaveLength(6);
    const tmem = p.buffers.find((b) => b.name === 'tmem')!;
    expect(tmem.bytes).toBe(128 * 512);
    const s = simulate(p);
    expect(s.verdict).toBe('ok');
    expect(s.diagnostics).toEqual([]);
    // warp 1 issues the MMAs (4 per k-iteration, K = 2) and the commits (one per stage use + acc_full).
    const ops = (s.events ?? []).flatMap((e) => (e.e === 'op' && e.agent === 1 && e.op.startsWith('tcgen05.') ? [e.op] : []));
    expect(ops.filter((o) => o === 'tcgen05.mma')).toHaveLength(8);
    expect(ops.filter((o) => o === 'tcgen05.commit')).toHaveLength(3);
    expect(ops).toContain('tcgen05.alloc');
  });

  it('bug1 (the stage released by mbarrier.arrive, not tcgen05.commit) races on a stage buffer', () => {
    const r = check(tc('tcgen05.bug1.ptx'), { maxStates: 100_000 });
    expect(r.verdict).toBe('race');
    expect(r.hazards[0]!.subject?.name).toMatch(/^dsmem\[[01]\]$/);
  });

  it('bug3 (the epilogue waits on acc_full with parity 1) races on the accumulator; run frees it under the MMAs', () => {
    const p = tc('tcgen05.bug3.ptx');
    const r = check(p, { maxStates: 100_000 });
    expect(r.verdict).toBe('race');
    expect(r.hazards[0]!.subject?.name).toBe('tmem[0]');
    expect(simulate(p).diagnostics.map((d) => d.diag.code)).toContain('tmem-dealloc-inflight');
  });

  it('a tcgen05 form outside the slice is a trap naming it at its line', () => {
    const src = change(read('hw/kernels/tcgen05.ptx'), 'tcgen05.mma.cta_group::1.kind::f16 [%r25], %rd6', 'tcgen05.mma.sp.cta_group::1.kind::f16 [%r25], %rd6');
    const s = simulate(program(src, 'sp.ptx', TC_LAUNCH));
    const d = s.diagnostics.find((x) => x.diag.code === 'not-modelled')!;
    expect(d.diag.message).toMatch(/^tcgen05\.mma\.sp\.cta_group::1\.kind::f16: not modelled yet/);
    expect(d.loc?.line).toBe(368);
  });
});

describe('ops/cp_async.ptx: cp.async with cp.async.mbarrier.arrive.noinc, then a commit_group / wait_group round', () => {
  const F = 'test/fixtures/ptx/ops/cp_async.ptx';
  it('OK in every schedule: each warp copies into its own 128 bytes', () => {
    const p = program(read(F), F, {});
    expect(p.buffers.map((b) => `${b.name}[${b.length}] ${b.bytes}`)).toEqual(['buf[2] 128']);
    const r = check(p, { maxStates: 100_000 });
    expect(r.verdict).toBe('ok');
    expect(r.complete).toBe(true);
  });

  it('a plain arrive instead of cp.async.mbarrier.arrive: the wait passes before the copies land (race)', () => {
    const src = change(read(F), 'cp.async.mbarrier.arrive.noinc.shared.b64 [%r2];', 'mbarrier.arrive.shared.b64 _, [%r2];');
    const r = check(program(src, 'plain.ptx', {}), { maxStates: 100_000 });
    expect(r.verdict).toBe('race');
    expect(r.hazards[0]!.locations.map((l) => l.line)).toEqual(expect.arrayContaining([24, 29])); // the copy and the read
  });

  it('no cp.async.wait_group before the read: a race with the second copy', () => {
    const src = change(read(F), 'cp.async.wait_group 0;', '');
    const r = check(program(src, 'nowait.ptx', {}), { maxStates: 100_000 });
    expect(r.verdict).toBe('race');
    expect(r.hazards[0]!.locations.map((l) => l.line)).toEqual(expect.arrayContaining([30, 33])); // the second copy and the read
  });
});

describe('ops/st_async.ptx: 2-CTA cluster, st.async into the peer with complete_tx on its barrier', () => {
  const F = 'test/fixtures/ptx/ops/st_async.ptx';
  it('OK in every schedule; each st.async lands in the peer CTA', () => {
    const p = program(read(F), F, { cluster: 2 });
    const s = simulate(p);
    expect(s.verdict).toBe('ok');
    const landed = (s.events ?? []).filter((e) => e.e === 'complete_tx').map((e) => e.e === 'complete_tx' && `${p.barrierName(e.bar)} ${e.bytes}`);
    expect(landed.sort()).toEqual(['bar[0]@c0 128', 'bar[0]@c1 128']);
    const r = check(p, { maxStates: 100_000 });
    expect(r.verdict).toBe('ok');
    expect(r.complete).toBe(true);
  });

  it('the read before the wait races with the peer\'s st.async', () => {
    const src = change(read(F), 'WAIT:\n', 'ld.shared.u32 %r9, [%r3];\nWAIT:\n');
    const r = check(program(src, 'early.ptx', { cluster: 2 }), { maxStates: 100_000 });
    expect(r.verdict).toBe('race');
    expect(r.hazards[0]!.subject?.name).toMatch(/^buf\[0\]@c[01]$/);
  });
});

describe('ops/clc.ptx: a try_cancel / query_cancel work loop (two clusters)', () => {
  const F = 'test/fixtures/ptx/ops/clc.ptx';
  it('OK in every schedule, success and failure of each try_cancel explored', () => {
    const p = program(read(F), F, { grid: 2 });
    const s = simulate(p);
    expect(s.verdict).toBe('ok');
    expect((s.events ?? []).filter((e) => e.e === 'op' && e.op === 'clc.try_cancel').length).toBeGreaterThan(1);
    const r = check(p, { maxStates: 100_000 });
    expect(r.verdict).toBe('ok');
    expect(r.complete).toBe(true);
  });

  it('reading the response before the wait races with its write', () => {
    const src = change(read(F), 'WAIT:\n', 'ld.shared.b128 %q0, [%r3];\nWAIT:\n');
    const r = check(program(src, 'early.ptx', { grid: 2 }), { maxStates: 100_000 });
    expect(r.verdict).toBe('race');
    expect(r.hazards[0]!.subject?.name).toMatch(/^resp\[0\]/);
  });
});

describe('ops/flag.ptx: a release/acquire flag between two CTAs and an atomic counter (global memory)', () => {
  const F = 'test/fixtures/ptx/ops/flag.ptx';
  it('the flag parameters are gmem arrays; the acquire loop is the machine\'s spin; OK in every schedule', () => {
    const p = program(read(F), F, { grid: 2 });
    expect(p.buffers.filter((b) => b.space === 'gmem').map((b) => `${b.name}[${b.length}] ${b.bytes}`)).toEqual(['param_0[256] 4', 'param_1[256] 4']);
    const s = simulate(p);
    expect(s.verdict).toBe('ok');
    const ops = (s.events ?? []).flatMap((e) => (e.e === 'op' ? [`${e.op} ${e.loc.line}`] : []));
    expect(ops).toContain('spin.global 23');
    // The atom's old value steers the branch: exactly one CTA (the one that counted second) stores at line 33.
    expect(ops.filter((o) => o === 'atom.global 28')).toHaveLength(2);
    expect(ops.filter((o) => o === 'st.strong 33')).toHaveLength(1);
    const r = check(p, { maxStates: 100_000 });
    expect(r.verdict).toBe('ok');
    expect(r.complete).toBe(true);
  });

  it('without the wait for the flag the data read races with the other CTA\'s store', () => {
    const src = change(read(F), '@%p3 bra WAITER;', '');
    const r = check(program(src, 'nowait.ptx', { grid: 2 }), { maxStates: 100_000 });
    expect(r.verdict).toBe('race');
    expect(r.hazards[0]!.subject?.name).toBe('param_0[1]');
    expect(r.hazards[0]!.locations.map((l) => l.line)).toEqual(expect.arrayContaining([19, 26]));
  });

  it('the flag stored .relaxed releases nothing: the data read after the spin races', () => {
    const src = change(read(F), '@%p1 st.release.gpu.global.u32 [%rd2], 1;', '@%p1 st.relaxed.gpu.global.u32 [%rd2], 1;');
    const r = check(program(src, 'relaxed.ptx', { grid: 2 }), { maxStates: 100_000 });
    expect(r.verdict).toBe('race');
    expect(r.hazards[0]!.message).toMatch(/through a global store that releases nothing/);
  });

  it('a flag that is never set: the waiting CTA hangs in its spin', () => {
    const src = change(read(F), 'st.release.gpu.global.u32 [%rd2], 1;', 'st.release.gpu.global.u32 [%rd2], 0;');
    const r = check(program(src, 'unset.ptx', { grid: 2 }), { maxStates: 100_000 });
    expect(r.verdict).toBe('hang');
  });

  it('an atomic executed by every lane is a trap, not one count for 32', () => {
    const src = change(read(F), '@%p1 atom.global.add.u32', 'atom.global.add.u32');
    const s = simulate(program(src, 'all.ptx', { grid: 2 }));
    const d = s.diagnostics.find((x) => x.diag.code === 'not-modelled')!;
    expect(d.diag.message).toMatch(/^atom\.global\.add\.u32 executed by several lanes of a warp/);
    expect(d.loc?.line).toBe(28);
  });
});

describe('tcgen05 forms of the 2-CTA kernels (hand-written, ptxas -arch=sm_100a)', () => {
  const SRC = [
    '.version 9.0', '.target sm_100a', '.address_size 64', '.visible .entry mc()', '.reqntid 32, 1, 1', '{',
    '.reg .b32 %r<16>;', '.reg .b16 %rs<4>;', '.shared .align 8 .b8 done[8];', '.shared .align 4 .b8 tbase[4];',
    'mov.u32 %r1, tbase;',
    'tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32 [%r1], 64;',
    'mov.u32 %r2, done;',
    'mbarrier.init.shared.b64 [%r2], 2;',
    'fence.mbarrier_init.release.cluster;',
    'barrier.cluster.arrive.aligned;',
    'barrier.cluster.wait.aligned;',
    'mov.u16 %rs1, 3;',
    'tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [%r2], %rs1;',
    'ld.shared.u32 %r3, [tbase];',
    'tcgen05.dealloc.cta_group::2.sync.aligned.b32 %r3, 64;',
    'ret;', '}', '',
  ].join('\n');

  it('commit with .multicast::cluster carries its CTA mask; alloc sizes the TMEM buffer (64 columns)', () => {
    const r = parsePtx(SRC, 'mc.ptx');
    if (!r.ok) throw new Error(r.diagnostic.message);
    const k = translatePtx(r.module, { cluster: 2 }).kernel;
    const ops = k.roles[0]!.body.flatMap((s) => (s.s === 'op' ? [s.op] : []));
    const commit = ops.find((o) => o.op === 'tcgen05.commit')!;
    expect(commit).toMatchObject({ op: 'tcgen05.commit', bar: { name: 'done' }, multicast: { k: 'var', name: '%rs1' } });
    expect(k.buffers.find((b) => b.name === 'tmem')).toMatchObject({ space: 'tmem', cols: { k: 'num', v: 64 }, bytes: { k: 'num', v: 64 * 512 } });
    // .cta_group::2 alloc / dealloc are the CTA pair's (each CTA's warp does its own CTA's half).
    expect(ops.filter((o) => o.op === 'tcgen05.alloc' || o.op === 'tcgen05.dealloc').map((o) => [o.op, 'pair' in o && o.pair])).toEqual([['tcgen05.alloc', true], ['tcgen05.dealloc', true]]);
    // run: the commit (no tcgen05 operation before it) arrives on done in both CTAs (mask 0b11).
    const p = instantiate(k);
    const s = simulate(p);
    expect(s.diagnostics).toEqual([]);
    const arrived = (s.events ?? []).filter((e) => e.e === 'arrive').map((e) => e.e === 'arrive' && p.barrierName(e.bar));
    expect(arrived.sort()).toEqual(['done[0]@c0', 'done[0]@c0', 'done[0]@c1', 'done[0]@c1']);
  });
});
