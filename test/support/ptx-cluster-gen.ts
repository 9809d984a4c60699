/**
 * Generated 2-CTA cluster PTX kernels whose CTAs address a shared tile by their rank, for the
 * CTA-symmetry oracle of test/ptx-cta-elements.test.ts: two warps per CTA; thread 0 initializes a
 * barrier, a release cluster barrier publishes it, then thread 0 expects bytes and issues one TMA
 * copy of a 1 KiB box into element `c + k·rank` of the 3-element tile (multicast to a mask), every
 * lane waits for the phase (or not), reads elements of the tile, and the CTAs meet at a cluster
 * barrier before the exit (or not). A `wide` kernel has 2 KiB elements and boxes, and its copy may
 * land at a run-time offset inside its element that the front end knows only as a multiple of
 * 1,024 (`off`: the 1 KiB alignment pad of cluster_mc.cu, 0 at run time; the pad plus 1,024, which
 * runs into the next element; the pad plus `1024 · rank`, an offset that differs between the CTAs).
 */

/** The choices of one generated kernel. */
export interface ClusterGen {
  /** The copy's destination element is `dstC + dstK · rank` (outside 0 … 2: out of range). */
  dstC: number;
  dstK: number;
  /** Multicast mask: a constant, or `own` (1 << rank), or `peer` (1 << (rank ^ 1)). */
  mask: number | 'own' | 'peer';
  /** Bytes the barrier expects (the box is 1024). */
  expect: number;
  /** Elements every lane reads after the wait: each `c + k · rank`. */
  reads: { c: number; k: number }[];
  /** Whether the lanes wait for the barrier's phase before reading. */
  wait: boolean;
  /** Whether the CTAs meet at a cluster barrier before the exit. */
  exitSync: boolean;
  /** A rank-dependent change of rank 1 only: its copy goes to element `dstC + 2` (a bug in one CTA). */
  rank1Only: boolean;
  /** 2 KiB elements and a 2 KiB box (expect counted in 1 KiB boxes: doubled); absent: 1 KiB. */
  wide?: boolean;
  /** With `wide`: the copy's run-time offset inside its element (see the module comment); absent: none. */
  off?: 'pad' | 'padPlus' | 'rank';
}

/** The tensor map box (bytes) of `g`: the launch's `tensorMaps.param_0`. */
export const boxBytes = (g: ClusterGen): number => (g.wide ? 2048 : 1024);

/** The PTX text of `g` (launch: block 64, cluster 2, tensor map param_0 of {@link boxBytes} bytes). */
export function clusterPtx(g: ClusterGen): string {
  const shift = g.wide ? 11 : 10;
  // Fresh registers: the front end's alignment walk takes the least over every definition of a name.
  const last = g.off === 'padPlus' ? '%r22' : g.off === 'rank' ? '%r24' : '%r19';
  const off = !g.wide || !g.off ? '' : [
    // The alignment pad: ((tile + 1023) & -1024) - tile, a multiple of 1,024 (0: tile is aligned).
    '\tmov.u32 \t%r16, tile;',
    '\tadd.s32 \t%r17, %r16, 1023;',
    '\tand.b32 \t%r18, %r17, -1024;',
    '\tsub.s32 \t%r19, %r18, %r16;',
    ...(g.off === 'padPlus' ? ['\tadd.s32 \t%r22, %r19, 1024;'] : []),
    ...(g.off === 'rank' ? ['\tshl.b32 \t%r23, %r3, 10;', '\tadd.s32 \t%r24, %r19, %r23;'] : []),
    `\tadd.s32 \t%r26, %r10, ${last};`,
  ].join('\n');
  const dstReg = off ? '%r26' : '%r10';
  const mask = typeof g.mask === 'number'
    ? `\tmov.u16 \t%rs1, ${g.mask};`
    : `\t${g.mask === 'own' ? 'mov.u32 \t%r20, %r3;' : 'xor.b32 \t%r20, %r3, 1;'}\n\tshl.b32 \t%r21, 1, %r20;\n\tcvt.u16.u32 \t%rs1, %r21;`;
  const dst = g.rank1Only
    ? `\tmul.lo.s32 \t%r11, %r3, 2;\n\tadd.s32 \t%r11, %r11, ${g.dstC};`
    : `\tmul.lo.s32 \t%r11, %r3, ${g.dstK};\n\tadd.s32 \t%r11, %r11, ${g.dstC};`;
  const reads = g.reads.map((r, i) => [
    `\tmul.lo.s32 \t%r${30 + i}, %r3, ${r.k};`,
    `\tadd.s32 \t%r${30 + i}, %r${30 + i}, ${r.c};`,
    `\tshl.b32 \t%r${30 + i}, %r${30 + i}, ${shift};`,
    `\tadd.s32 \t%r${30 + i}, %r25, %r${30 + i};`,
    `\tld.shared.f32 \t%f${1 + i}, [%r${30 + i}];`,
  ].join('\n')).join('\n');
  return `
.version 8.0
.target sm_90a
.address_size 64

.visible .entry gen(
\t.param .align 128 .b8 gen_param_0[128]
)
.maxntid 64, 1, 1
.explicitcluster
.reqnctapercluster 2, 1, 1
{
\t.reg .pred \t%p<4>;
\t.reg .b16 \t%rs<2>;
\t.reg .f32 \t%f<8>;
\t.reg .b32 \t%r<40>;
\t.reg .b64 \t%rd<8>;
\t.shared .align 1024 .b8 tile[${3 * boxBytes(g)}];
\t.shared .align 8 .u64 full;

\tmov.b64 \t%rd1, gen_param_0;
\tmov.u32 \t%r3, %cluster_ctarank;
\tmov.u32 \t%r2, %tid.x;
\tsetp.ne.s32 \t%p1, %r2, 0;
\t@%p1 bra \t$L__BB0_2;
\tmov.u32 \t%r4, full;
\tmov.u32 \t%r7, 1;
\tmbarrier.init.shared::cta.b64 [%r4], %r7;
\tfence.mbarrier_init.release.cluster;
$L__BB0_2:
\tbarrier.cluster.arrive.release.aligned;
\tbarrier.cluster.wait.aligned;
\t@%p1 bra \t$L__BB0_5;
\tmov.u32 \t%r8, full;
\tmov.u32 \t%r9, ${(g.expect * boxBytes(g)) / 1024};
\tmbarrier.arrive.expect_tx.shared::cta.b64 _, [%r8], %r9;
\tcvta.param.u64 \t%rd3, %rd1;
\tmov.u32 \t%r10, tile;
${dst}
\tshl.b32 \t%r12, %r11, ${shift};
\tadd.s32 \t%r10, %r10, %r12;
${off ? `${off}\n` : ''}\tmov.u32 \t%r13, 0;
${mask}
\tcp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [${dstReg}], [%rd3, {%r13, %r13}], [%r8], %rs1;
$L__BB0_5:
${g.wait ? `\tmov.u32 \t%r15, 0;
\tmov.u32 \t%r14, full;
\t{
\t.reg .pred P1;
LAB_WAIT:
\tmbarrier.try_wait.parity.shared::cta.b64 P1, [%r14], %r15;
\t@P1 bra DONE;
\tbra LAB_WAIT;
DONE:
\t}` : ''}
\tmov.u32 \t%r25, tile;
${reads}
${g.exitSync ? '\tbarrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;' : ''}
\tret;
}
`;
}
