// The PTX front end's interpreter slice: nvcc's PTX of the project's own kernels, translated to the
// kernel IR and run by the same machine and checker as the sketches (docs/PTX.md).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { check } from '../src/check/index.js';
import { instantiate } from '../src/machine/program.js';
import { parsePtx } from '../src/ptx/index.js';
import { translatePtx, type PtxLaunch } from '../src/ptxi/index.js';
import { renderSummary } from '../src/report/text.js';
import { simulate } from '../src/sim/simulate.js';

const PIPE = 'test/fixtures/ptx/tma_pipeline.ptx';
const PIPE_LAUNCH: PtxLaunch = { kernel: 'tma_pipeline', block: 128, params: { param_2: 4 }, tensorMaps: { param_0: 16384 } };
const GEMM_LAUNCH: PtxLaunch = { block: 384, params: { param_4: 128, param_5: 2, param_6: 1 }, tensorMaps: { param_0: 16384, param_1: 16384 }, dynamicSmem: 33792 };

function program(src: string, file: string, launch: PtxLaunch) {
  const r = parsePtx(src, file);
  if (!r.ok) throw new Error(r.diagnostic.message);
  return instantiate(translatePtx(r.module, launch).kernel);
}

const pipeline = readFileSync(PIPE, 'utf8');
/** The pipeline with one line of its PTX changed (a planted bug). */
function planted(from: string, to: string): string {
  expect(pipeline).toContain(from);
  return pipeline.replace(from, to);
}

describe('tma_pipeline.ptx (TMA ring, one producer thread, three consumer warps)', () => {
  it('translates to one role of 4 warps, one agent each, with the .shared arrays as barriers and stage buffers', () => {
    const p = program(pipeline, PIPE, PIPE_LAUNCH);
    expect(p.agents.map((a) => a.name)).toEqual(['tma_pipeline.w0', 'tma_pipeline.w1', 'tma_pipeline.w2', 'tma_pipeline.w3']);
    expect(p.barriers.map((b) => `${b.name}[${b.length}]`)).toEqual(['full[2]', 'empty[2]']);
    expect(p.buffers.map((b) => `${b.name}[${b.length}] ${b.bytes}`)).toEqual(['buf[2] 16384']);
  });

  it('simulates to completion and checks OK in every schedule', () => {
    const p = program(pipeline, PIPE, PIPE_LAUNCH);
    expect(simulate(p).verdict).toBe('ok');
    const r = check(p, { maxStates: 200_000 });
    expect(r.verdict).toBe('ok');
    expect(r.complete).toBe(true);
    expect(r.hazards).toEqual([]);
    expect(r.coverage.states).toBeGreaterThan(30);
  });

  it('an expect_tx of 1 KiB more than the copy delivers hangs on full[0], citing the PTX and the CUDA lines', () => {
    const p = program(planted('mov.u32 \t%r50, 16384;', 'mov.u32 \t%r50, 17408;'), 'bug-expect-tx.ptx', PIPE_LAUNCH);
    const r = check(p, { maxStates: 200_000, all: true });
    expect(r.verdict).toBe('hang');
    const hang = r.hazards.find((h) => h.kind === 'hang')!;
    expect(hang.subject?.name).toBe('full[0]');
    const tx = [...r.hazards, ...r.warnings].find((h) => h.kind === 'tx-mismatch')!;
    expect(tx.subject?.name).toBe('full[0]');
    // The arrive.expect_tx of line 147, written `mbarrier_arrive_expect_tx(...)` on line 37 of the .cu.
    expect(tx.locations.map((l) => `${l.file}:${l.line} ${l.origin}`)).toContain('bug-expect-tx.ptx:147 tma_pipeline.cu:37');
  });

  it('the consumers waiting on the wrong parity read a stage before its copy lands: a race on buf', () => {
    const p = program(planted('and.b32  \t%r3, %r23, 1;', 'xor.b32  \t%r3, %r23, 1;'), 'bug-parity.ptx', PIPE_LAUNCH);
    const r = check(p, { maxStates: 200_000 });
    expect(r.verdict).toBe('race');
    const race = r.hazards.find((h) => h.kind === 'race')!;
    expect(race.subject?.name).toMatch(/^buf\[[01]\]$/);
    // The consumer's ld.shared (line 214, `acc += buf[s][threadIdx.x]` on line 48) is one side.
    expect(race.locations.some((l) => l.line === 214 && l.origin === 'tma_pipeline.cu:48')).toBe(true);
  });
});

describe('hw/kernels/tma_wgmma*.ptx (producer warp, two consumer warpgroups, 384 threads)', () => {
  const gemm = (f: string) => program(readFileSync(`hw/kernels/${f}`, 'utf8'), f, GEMM_LAUNCH);

  it('the correct kernel simulates to completion: 12 warps, the bias copy and K = 2 iterations', () => {
    const p = gemm('tma_wgmma.ptx');
    expect(p.agents).toHaveLength(12);
    const s = simulate(p);
    expect(s.verdict).toBe('ok');
    expect(s.diagnostics).toEqual([]);
  });

  it('bug1 (expect_tx 1 KiB more than the two boxes) hangs', () => {
    const r = check(gemm('tma_wgmma.bug1.ptx'), { maxStates: 200_000 });
    expect(r.verdict).toBe('hang');
    expect(r.hazards[0]!.locations.every((l) => l.file === 'tma_wgmma.bug1.ptx')).toBe(true);
  }, 120_000);

  it('bug3 (the consumers start on the wrong parity) races on the stage buffer', () => {
    const r = check(gemm('tma_wgmma.bug3.ptx'), { maxStates: 400_000 });
    expect(r.verdict).toBe('race');
    expect(r.hazards[0]!.subject?.name).toBe('dsmem[0]');
  }, 240_000);
});

describe('cluster_multicast.ptx (2-CTA cluster: TMA multicast, mapa and a remote arrive)', () => {
  it('simulates to completion; the arrive through mapa lands on the peer CTA\'s barrier', () => {
    const f = 'test/fixtures/ptx/cluster_multicast.ptx';
    const p = program(readFileSync(f, 'utf8'), f, { block: 128, cluster: 2, tensorMaps: { param_0: 4096 } });
    expect(p.agents).toHaveLength(8);
    const s = simulate(p);
    expect(s.verdict).toBe('ok');
    // The remote arrive (line 124) is an asynchronous signal from one CTA's warp 0 into the other's barrier.
    const remote = (s.events ?? []).filter((e) => e.e === 'async' && e.kind === 'remote' && e.loc?.line === 124).map((e) => `${p.agents[(e as { agent: number }).agent]!.name} -> ${p.barrierName((e as { bar: number }).bar)}`);
    expect(remote.sort()).toEqual(['multicast.w0@c0 -> peer[0]@c1', 'multicast.w0@c1 -> peer[0]@c0']);
  });
});

describe('kernel names', () => {
  it('a nested, templated entry (cutlass::device_kernel<…>) is named by its unqualified name, and --kernel takes it qualified or not', () => {
    const name = '_ZN7cutlass13device_kernelIN4cute5tupleIJiiEEEEEvNT_6ParamsE';
    const text = (n: string) => `.version 9.0\n.target sm_90a\n.address_size 64\n.visible .entry ${n}()\n.reqntid 64, 1, 1\n{\nret;\n}\n`;
    const r = parsePtx(text(name) + text('_Z5otheri'), 'nested.ptx');
    if (!r.ok) throw new Error(r.diagnostic.message);
    for (const kernel of ['device_kernel', 'cutlass::device_kernel', name]) {
      const p = instantiate(translatePtx(r.module, { kernel }).kernel);
      expect(p.agents.map((a) => a.name)).toEqual(['device_kernel.w0', 'device_kernel.w1']);
    }
    expect(() => translatePtx(r.module, {})).toThrow(/2 kernels: choose one with --kernel NAME \(_ZN7cutlass13device_kernelI\S+ \(device_kernel\), _Z5otheri \(other\)\)/);
    expect(() => translatePtx(r.module, { kernel: 'cutlass' })).toThrow(/no kernel 'cutlass'/);
    // the run's summary names every warp in full (w10 and w11 were cut to `device_kernel.w1`)
    // (a block of 384 threads: the entry's .reqntid says so, since --block may not contradict it)
    const r384 = parsePtx(text(name).replace('.reqntid 64, 1, 1', '.reqntid 384, 1, 1'), 'nested384.ptx');
    if (!r384.ok) throw new Error(r384.diagnostic.message);
    const summary = renderSummary(simulate(instantiate(translatePtx(r384.module, { kernel: 'device_kernel' }).kernel)));
    expect(summary).toContain('  device_kernel.w10 issuing');
    expect(summary).toContain('  device_kernel.w0  issuing');
  });
});

describe('what is not modelled is a trap where it is executed, never a guess', () => {
  const src = (body: string) => `.version 9.0\n.target sm_90a\n.address_size 64\n.visible .entry k()\n.reqntid 64, 1, 1\n{\n.reg .pred %p<4>;\n.reg .b32 %r<8>;\n${body}\nret;\n}\n`;

  it('an instruction outside the slice names itself and its line', () => {
    const p = program(src('mov.u32 %r1, %tid.x;\npopc.b32 %r2, %r1;\nsetp.eq.s32 %p1, %r2, 0;\n@%p1 bra DONE;\nDONE:'), 'popc.ptx', {});
    const s = simulate(p);
    expect(s.verdict).not.toBe('ok');
    const d = s.diagnostics.find((x) => x.diag.code === 'not-modelled')!;
    expect(d.diag.message).toMatch(/^popc\.b32: not modelled yet/);
    expect(d.loc?.line).toBe(10);
  });

  it('mul.hi of 32-bit operands is the high word of the product (nvcc\'s division by a constant)', () => {
    const body = [
      '.shared .align 8 .b8 bar[8];',
      'mov.u32 %r1, 192;',
      'mul.hi.u32 %r2, %r1, -1431655765;', // 192 * 0xAAAAAAAB >> 32 = 128
      'shr.u32 %r3, %r2, 1;', // 192 / 3 = 64
      'mov.u32 %r4, -192;',
      'mul.hi.s32 %r5, %r4, 1431655766;', // ⌊-192 * 1431655766 / 2^32⌋ = -65
      'shr.u32 %r6, %r5, 31;',
      'add.s32 %r7, %r5, %r6;', // -192 / 3 = -64
      'setp.ne.s32 %p3, %r7, -64;',
      '@%p3 trap;',
      'mov.u32 %r1, %tid.x;',
      'setp.ne.s32 %p1, %r1, 0;',
      '@%p1 bra SKIP;',
      'mov.u32 %r4, bar;',
      'mbarrier.init.shared.b64 [%r4], %r3;',
      'SKIP:',
      'bar.sync 0;',
      'mov.u32 %r4, bar;',
      'mbarrier.arrive.shared.b64 _, [%r4];',
      'W:',
      'mbarrier.try_wait.parity.shared.b64 %p2, [%r4], 0;',
      '@!%p2 bra W;',
    ].join('\n');
    const s = simulate(program(src(body), 'mulhi.ptx', {}));
    expect(s.diagnostics).toEqual([]);
    expect(s.verdict).toBe('ok');
  });

  it('shfl.sync.idx.b32 with a predicate destination (CUTLASS\'s canonical_warp_idx_sync): the source lane\'s value, the predicate 1', () => {
    const body = (c: string) => [
      '.shared .align 8 .b8 bar[8];',
      'mov.u32 %r1, %tid.x;',
      'shr.u32 %r2, %r1, 5;',
      'mov.u32 %r3, 5;',
      `shfl.sync.idx.b32 %r4|%p3, %r1, %r3, ${c}, -1;`, // lane 5's tid: 32 · warp + 5
      'shl.b32 %r5, %r2, 5;',
      'add.s32 %r5, %r5, 5;',
      'setp.ne.s32 %p1, %r4, %r5;',
      '@%p1 trap;',
      '@!%p3 trap;',
      'shfl.sync.idx.b32 %r6, %r2, 0, 31, -1;', // a uniform value: the warp index
      'setp.ne.s32 %p1, %r6, %r2;',
      '@%p1 trap;',
      'setp.ne.s32 %p1, %r1, 0;',
      '@%p1 bra SKIP;',
      'mov.u32 %r7, bar;',
      'mbarrier.init.shared.b64 [%r7], 64;',
      'SKIP:',
      'bar.sync 0;',
      'mov.u32 %r7, bar;',
      'mbarrier.arrive.shared.b64 _, [%r7];',
    ].join('\n');
    const ok = simulate(program(src(body('31')), 'shfl.ptx', {}));
    expect([ok.verdict, ok.diagnostics]).toEqual(['ok', []]);
    expect(check(program(src(body('31')), 'shfl.ptx', {}), { maxStates: 1000 }).verdict).toBe('ok');
    // a width of 16 (c = 0x101f): segments of the warp, not modelled where it runs
    const seg = simulate(program(src(body('4127')), 'shfl16.ptx', {}));
    expect(seg.diagnostics.find((x) => x.diag.code === 'not-modelled')?.diag.message).toMatch(/clamp\/segment operand other than 31/);
  });

  it('a path that ends in trap (an assertion) does not move a divergent branch\'s reconvergence to the kernel\'s end; isspacep tests the address windows', () => {
    const body = [
      '.shared .align 8 .b8 bar[8];',
      'mov.u32 %r1, %tid.x;',
      'mov.u32 %r3, bar;',
      'cvt.u64.u32 %rd1, %r3;',
      'cvta.shared.u64 %rd2, %rd1;',
      'isspacep.shared %p3, %rd2;',
      '@!%p3 trap;',
      'isspacep.global %p3, %rd2;',
      '@%p3 trap;',
      'isspacep.local %p3, %rd2;',
      '@%p3 trap;',
      'setp.ne.s32 %p1, %r1, 0;',
      '@%p1 bra SKIP;', // lane-varying: lane 0 of warp 0 initializes
      'setp.eq.s32 %p2, %r1, 99;',
      '@%p2 bra BAD;',
      'mbarrier.init.shared.b64 [%r3], 64;',
      'bra SKIP;',
      'BAD:',
      'trap;',
      'SKIP:',
      'bar.sync 0;',
      'mbarrier.arrive.shared.b64 _, [%r3];',
      'W:',
      'mbarrier.try_wait.parity.shared.b64 %p2, [%r3], 0;',
      '@!%p2 bra W;',
    ].join('\n');
    const text = src(body).replace('.reg .b32 %r<8>;', '.reg .b32 %r<8>;\n.reg .b64 %rd<4>;');
    const s = simulate(program(text, 'trap-path.ptx', {}));
    expect([s.verdict, s.diagnostics]).toEqual(['ok', []]);
    expect(check(program(text, 'trap-path.ptx', {}), { maxStates: 1000 }).verdict).toBe('ok');
  });

  it('an arrive by 2 to 31 lanes of a warp counts its active lanes (lanes 0-3: one arrive of 4)', () => {
    const body = [
      '.shared .align 8 .b8 bar[8];',
      'mov.u32 %r1, %tid.x;',
      'setp.ne.s32 %p1, %r1, 0;',
      '@%p1 bra SKIP;',
      'mov.u32 %r3, bar;',
      'mbarrier.init.shared.b64 [%r3], 64;',
      'SKIP:',
      'bar.sync 0;',
      'setp.gt.u32 %p2, %r1, 3;',
      '@%p2 bra END;',
      'mov.u32 %r4, bar;',
      'mbarrier.arrive.shared.b64 _, [%r4];',
      'END:',
    ].join('\n');
    const s = simulate(program(src(body), 'lanes.ptx', {}));
    expect(s.diagnostics).toEqual([]);
    expect((s.events ?? []).filter((e) => e.e === 'arrive').map((e) => e.e === 'arrive' && `${e.loc?.line} ${e.count} ${e.pending}`)).toEqual(['20 4 60']);
  });
});
