// A wgmma reads its whole operand tile (ptxi/desc-footprint.ts, PTX ISA §9.7.15.5.1 "Matrix
// Descriptor Format" and the canonical layouts of §9.7.15.5): the leading / stride byte offsets and
// the swizzle mode, known before running from the descriptor's definitions, give the bytes the
// operand covers, and the mma reads every buffer element they overlap.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { check } from '../src/check/index.js';
import { evalExpr, exprNames } from '../src/kernel/expr.js';
import type { Expr, Kernel, Stmt } from '../src/kernel/ir.js';
import { instantiate } from '../src/machine/program.js';
import { parsePtx } from '../src/ptx/index.js';
import { translatePtx, type PtxLaunch } from '../src/ptxi/index.js';
import { fallbackFootprint, footprint } from '../src/ptxi/desc-footprint.js';

function kernel(text: string, file: string, launch?: PtxLaunch): Kernel {
  const r = parsePtx(text, file);
  if (!r.ok) throw new Error(r.diagnostic.message);
  const l = launch ?? (JSON.parse(/\/\/ # launch: (.*)$/m.exec(text)![1]!) as PtxLaunch);
  return translatePtx(r.module, l).kernel;
}
type Ref = { name: string; index: Expr };
/** Every wgmma.mma_async's reads, and the `let`s of the elements they name (refs.ts: `buf#addr`). */
function wgmmas(k: Kernel): { reads: Ref[][]; lets: Map<string, Expr> } {
  const reads: Ref[][] = [];
  const lets = new Map<string, Expr>();
  const walk = (x: unknown): void => {
    if (!x || typeof x !== 'object') return;
    const o = x as { op?: string; reads?: Ref[]; s?: Stmt['s']; name?: string; value?: Expr };
    if (o.s === 'let' && o.name?.includes('#')) lets.set(o.name, o.value!);
    if (o.op === 'wgmma.mma_async') { reads.push(o.reads!); return; }
    for (const v of Object.values(x)) walk(v);
  };
  walk(k);
  return { reads, lets };
}
/**
 * The elements a wgmma's reads name when its A descriptor's start is byte `a` and B's `b` (A's
 * register is the first the reads name, B's the second; each holds `start >> 4`), as
 * `name[i]` texts without duplicates, A's then B's.
 */
function elementsAt(reads: Ref[], lets: Map<string, Expr>, a: number | undefined, b: number): string[][] {
  const expand = (e: Expr): Set<string> => new Set([...exprNames(e)].flatMap((n) => (lets.has(n) ? [...expand(lets.get(n)!)] : [n])));
  const regs = [...new Set(reads.flatMap((r) => [...expand(r.index)]))];
  const val = new Map(regs.map((r, i) => [r, (a === undefined ? b : i === 0 ? a : b) >> 4]));
  const look = (n: string): number | undefined => (lets.has(n) ? evalExpr(lets.get(n)!, look) : val.get(n));
  const of = (r: Ref) => [...expand(r.index)][0] ?? regs[0];
  const side = (reg: string | undefined) => [...new Set(reads.filter((r) => of(r) === reg).map((r) => `${r.name}[${evalExpr(r.index, look)}]`))];
  return a === undefined ? [side(regs[0])] : [side(regs[0]), side(regs[1])];
}
/** The base address of array `name` in the translation (from an element's `let`: `(addr − base) / granule`). */
function baseOf(lets: Map<string, Expr>, name: string): number {
  const e = [...lets].find(([n]) => n.startsWith(`${name}#`))![1] as Extract<Expr, { k: 'bin' }>;
  return ((e.a as Extract<Expr, { k: 'bin' }>).b as Extract<Expr, { k: 'num' }>).v;
}
/** A reference kernel with its launch line's launch and room for two stages of 32 KiB (and the 1 KiB alignment slack). */
const hw = (f: string) => {
  const text = readFileSync(`hw/kernels/${f}`, 'utf8');
  const l = JSON.parse(/\/\/ # launch: (.*)$/m.exec(text)![1]!) as PtxLaunch;
  return kernel(text, f, { ...l, dynamicSmem: 1024 + 2 * 32768 });
};

describe('the footprint rule (desc-footprint.ts, PTX ISA §9.7.15.5.1)', () => {
  it('K-major, 128-byte swizzle: 8-row atoms SBO apart, from the start rounded down to 128 bytes', () => {
    // B of m64n128k16 bf16: 16 row groups of 1024 bytes; a k-slice 32 bytes into the atom still covers it
    expect(footprint({ swizzle: 1, sbo: 1024, lbo: 16 }, { rows: 128, k: 16, bits: 16, mnMajor: false })).toEqual({ align: 128, extent: 15 * 1024 + 7 * 128 + 32 });
    expect(footprint({ swizzle: 3, sbo: 256 }, { rows: 64, k: 8, bits: 32, mnMajor: false })).toEqual({ align: 32, extent: 7 * 256 + 7 * 32 + 32 });
  });
  it('no swizzle: core matrices of 8 rows x 16 bytes, LBO apart along K, SBO along M/N', () => {
    expect(footprint({ swizzle: 0, lbo: 128, sbo: 256 }, { rows: 64, k: 16, bits: 16, mnMajor: false })).toEqual({ align: 16, extent: 7 * 256 + 128 + 128 });
    expect(footprint({ swizzle: 0, sbo: 256 }, { rows: 64, k: 16, bits: 16, mnMajor: false })).toBeUndefined(); // LBO needed, not known
  });
  it('MN-major (imm-trans 1) takes the larger of both roles of LBO / SBO; an open transpose the larger of both layouts', () => {
    const mn = footprint({ swizzle: 1, lbo: 8192, sbo: 1024 }, { rows: 128, k: 16, bits: 16, mnMajor: true })!;
    expect(mn).toEqual({ align: 128, extent: 8192 + 1024 + 7 * 128 + 128 });
    const open = footprint({ swizzle: 1, lbo: 8192, sbo: 1024 }, { rows: 128, k: 16, bits: 16 })!;
    expect(open.extent).toBe(Math.max(mn.extent, 15 * 1024 + 7 * 128 + 32));
  });
  it('unknown layout fields: R rows of 128 bytes (a dense 128-byte-swizzled tile)', () => {
    expect(footprint({ sbo: 1024 }, { rows: 64, k: 16, bits: 16, mnMajor: false })).toBeUndefined();
    expect(fallbackFootprint({ rows: 64, k: 16, bits: 16 })).toEqual({ align: 128, extent: 8192 });
  });
});

describe('the translated wgmma reads every element its tile covers', () => {
  it('cluster_mc.ptx: consumer c reads A element 4s+c and both multicast halves of B, 4s+2 and 4s+3, at every k-slice', () => {
    const { reads, lets } = wgmmas(hw('cluster_mc.ptx'));
    expect(reads.length).toBe(4); // BK / 16 unrolled
    const base = baseOf(lets, 'dsmem');
    for (const r of reads) for (const s of [0, 1]) for (const c of [0, 1]) for (const kk of [0, 3]) {
      const st = base + s * 32768;
      expect(elementsAt(r, lets, st + c * 8192 + kk * 32, st + 16384 + kk * 32)).toEqual([[`dsmem[${4 * s + c}]`], [`dsmem[${4 * s + 2}]`, `dsmem[${4 * s + 3}]`]]);
    }
  });
  it('tma_wgmma.ptx and persistent.ptx: A in element 2s (16 KiB elements), B the whole element 2s+1', () => {
    for (const f of ['tma_wgmma.ptx', 'persistent.ptx']) {
      const { reads, lets } = wgmmas(hw(f));
      const base = baseOf(lets, 'dsmem');
      for (const r of reads) for (const s of [0, 1]) for (const c of [0, 1]) {
        const st = base + s * 32768;
        expect([f, elementsAt(r, lets, st + c * 8192 + 96, st + 16384 + 96)]).toEqual([f, [[`dsmem[${2 * s}]`], [`dsmem[${2 * s + 1}]`]]]);
      }
    }
  });
  it('wgmma.ptx: A (64 x 16 bf16, 128-byte swizzle) is clamped to its 2 KiB array; B, MN-major (imm-trans-b 1), takes the larger role of LBO / SBO', () => {
    const { reads, lets } = wgmmas(kernel(readFileSync('test/fixtures/ptx/wgmma.ptx', 'utf8'), 'wgmma.ptx', { block: 128 }));
    const [a, b] = elementsAt(reads[0]!, lets, baseOf(lets, 'A'), baseOf(lets, 'B'));
    // 64-byte elements: A's 8 KiB footprint is the whole array; B's (1024 + 16) + 7 · 128 + 128 bytes, rounded up to 128
    expect(a).toEqual(Array.from({ length: 32 }, (_, i) => `A[${i}]`));
    expect(b).toEqual(Array.from({ length: 2176 / 64 }, (_, i) => `B[${i}]`));
  });
  it('desc_stage.ptx: m64n8k16 reads A stage s (8 KiB) and 1 KiB of B stage s', () => {
    const L = JSON.parse(readFileSync('test/fixtures/ptx/desc_stage.ptx.launch.json', 'utf8')) as PtxLaunch;
    const { reads, lets } = wgmmas(kernel(readFileSync('test/fixtures/ptx/desc_stage.ptx', 'utf8'), 'desc_stage.ptx', L));
    const base = baseOf(lets, 'smem');
    for (const s of [0, 1]) expect(elementsAt(reads[0]!, lets, base + s * 16384, base + 32768 + s * 16384)).toEqual([[`smem[${s}]`], [`smem[${2 + s}]`]]);
  });
});

/**
 * One CTA: thread 128 loads A (8 KiB at smem+0) and B in two 8 KiB halves (smem+8192, smem+16384)
 * with TMA; warps 0-3 wait on `full` and run one wgmma over A and B (128-byte swizzle, stride byte
 * offset 1024: CUTLASS's `or.b64` of the layout bits). `bug`: the second half completes on `other`,
 * which only the producer waits on (before it exits), and `full` expects A and the first half only.
 * `n`: the wgmma's N (128 reads both halves, 64 the first only).
 */
const FOOT = (bug: boolean, n = 128, hi = 'or.b64 \t%rd11, %rd5, 4611686293305360384;') => `.version 8.0
.target sm_90a
.address_size 64

.extern .shared .align 1024 .b8 smem[];
.shared .align 8 .b64 full;
.shared .align 8 .b64 other;

.visible .entry foot(
	.param .align 64 .b8 foot_param_0[128],
	.param .align 64 .b8 foot_param_1[128],
	.param .u64 foot_param_2
)
.maxntid 160, 1, 1
{
	.reg .pred 	%p<16>;
	.reg .b32 	%r<100>;
	.reg .b64 	%rd<32>;
	.reg .f32 	%f<8>;

	mov.u32 	%r1, %tid.x;
	setp.ne.s32 	%p1, %r1, 0;
	@%p1 bra 	$INIT_DONE;
	mov.u32 	%r3, full;
	mbarrier.init.shared::cta.b64 	[%r3], 1;
	mov.u32 	%r4, other;
	mbarrier.init.shared::cta.b64 	[%r4], 1;
	fence.mbarrier_init.release.cluster;
$INIT_DONE:
	bar.sync 	0;
	setp.lt.u32 	%p2, %r1, 128;
	@%p2 bra 	$CONSUMER;
	setp.ne.s32 	%p3, %r1, 128;
	@%p3 bra 	$DONE;
	mov.u32 	%r10, 0;
	mov.u32 	%r18, full;
	mov.u32 	%r19, other;
	mov.u32 	%r21, smem;
	add.s32 	%r22, %r21, 8192;
	add.s32 	%r23, %r21, 16384;
	mov.u64 	%rd2, foot_param_0;
	mov.u64 	%rd3, foot_param_1;
${bug ? `	mbarrier.arrive.expect_tx.shared::cta.b64 	_, [%r18], 16384;
	mbarrier.arrive.expect_tx.shared::cta.b64 	_, [%r19], 8192;` : `	mbarrier.arrive.expect_tx.shared::cta.b64 	_, [%r18], 24576;`}
	cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r21], [%rd2, {%r10, %r10}], [%r18];
	cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r22], [%rd3, {%r10, %r10}], [%r18];
	cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r23], [%rd3, {%r10, %r10}], [${bug ? '%r19' : '%r18'}];
$PWAIT:
	mbarrier.try_wait.parity.shared::cta.b64 	%p5, [${bug ? '%r19' : '%r18'}], 0;
	@!%p5 bra 	$PWAIT;
	bra.uni 	$DONE;

$CONSUMER:
	mov.u32 	%r30, smem;
	shr.u32 	%r31, %r30, 4;
	and.b32 	%r32, %r31, 16320;
	cvt.u64.u32 	%rd4, %r32;
	or.b64 	%rd10, %rd4, 4611686293305360384;
	add.s32 	%r33, %r30, 8192;
	shr.u32 	%r34, %r33, 4;
	and.b32 	%r35, %r34, 16320;
	cvt.u64.u32 	%rd5, %r35;
	ld.param.u64 	%rd6, [foot_param_2];
	${hi}
	mov.u32 	%r56, full;
$CWAIT:
	mbarrier.try_wait.parity.shared::cta.b64 	%p7, [%r56], 0;
	@!%p7 bra 	$CWAIT;
	wgmma.fence.sync.aligned;
	wgmma.mma_async.sync.aligned.m64n${n}k16.f32.bf16.bf16 {%f0, %f1, %f2, %f3}, %rd10, %rd11, 1, 1, 1, 0, 0;
	wgmma.commit_group.sync.aligned;
	wgmma.wait_group.sync.aligned 0;
$DONE:
	ret;
}
`;
const FL: PtxLaunch = { kernel: 'foot', block: 160, tensorMaps: { param_0: 8192, param_1: 8192 }, params: { param_2: 0 }, dynamicSmem: 24576 };
const verdict = (text: string) => {
  const r = check(instantiate(kernel(text, 'foot.ptx', FL)), { maxStates: 100_000, randomRuns: false });
  const h = r.hazards[0];
  return `${r.verdict} ${h?.kind ?? ''} ${h?.subject?.name ?? ''}`.trim();
};

describe('a planted bug found only with the footprint', () => {
  it('the second half of B completes on a barrier the consumers do not wait on: a race on it (element 2), not on the first half', () => {
    expect(verdict(FOOT(false))).toBe('ok');
    expect(verdict(FOOT(true))).toBe('race race smem[2]');
    // m64n64k16: B is the first half only, which `full` covers
    expect(verdict(FOOT(true, 64))).toBe('ok');
  }, 120_000);
  it('a descriptor whose layout bits are not known before running (or.b64 of a loaded value) reads R rows of 128 bytes', () => {
    const hi = 'or.b64 \t%rd11, %rd5, %rd6;';
    const { reads, lets } = wgmmas(kernel(FOOT(true, 128, hi), 'foot.ptx', FL));
    const base = baseOf(lets, 'smem');
    expect(elementsAt(reads[0]!, lets, base, base + 8192)[1]).toEqual(['smem[1]', 'smem[2]']);
    expect(verdict(FOOT(true, 128, hi))).toBe('race race smem[2]');
  }, 120_000);
  it('the layout bits are followed through an unpack, a stage added to the low word and a repack (CUTLASS), and a shfl.sync broadcast', () => {
    // stride byte offset 2048: m64n64k16's B spans 7 · 2048 + 1024 bytes, both halves (the fallback, 64 rows of 128 bytes, the first only)
    const fb = wgmmas(kernel(FOOT(true, 64, 'or.b64 \t%rd11, %rd5, %rd6;'), 'foot.ptx', FL));
    expect(elementsAt(fb.reads[0]!, fb.lets, baseOf(fb.lets, 'smem'), baseOf(fb.lets, 'smem') + 8192)[1]).toEqual(['smem[1]']);
    const hi = 'or.b64 \t%rd7, %rd5, 4611686568183267328;\n\tmov.b64 \t{%r40, %r41}, %rd7;\n\tadd.s32 \t%r42, %r40, 0;\n\tshfl.sync.idx.b32 \t%r43, %r41, 0, 31, -1;\n\tmov.b64 \t%rd11, {%r42, %r43};';
    const { reads, lets } = wgmmas(kernel(FOOT(true, 64, hi), 'foot.ptx', FL));
    const base = baseOf(lets, 'smem');
    expect(elementsAt(reads[0]!, lets, base, base + 8192)[1]).toEqual(['smem[1]', 'smem[2]']);
    expect(verdict(FOOT(true, 64, hi))).toBe('race race smem[2]');
    expect(verdict(FOOT(false, 64, hi))).toBe('ok');
  }, 120_000);
});
