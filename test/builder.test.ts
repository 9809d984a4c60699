import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { check } from '../src/check/index.js';
import { kernel, type KernelBuilder } from '../src/kernel/builder.js';
import type { Kernel, RedOp } from '../src/kernel/ir.js';
import { formatDiagnostic, parseSketch } from '../src/lang/index.js';
import { instantiate, KernelError } from '../src/machine/program.js';

/**
 * The TypeScript builder against the sketch language: each kernel built here is the kernel of a
 * sketch (a bug sketch of examples/bugs/ or one written below), apart from source locations, and
 * checks to the same verdict. Together with the other tests they call every public method of
 * KernelBuilder and ProgramBuilder; `.cta_group::2` is the option `{ pair: true }`.
 */

const BUGS = join(__dirname, '..', 'examples', 'bugs');

/** Deep copy without source locations. */
function strip(x: unknown): unknown {
  if (Array.isArray(x)) return x.map(strip);
  if (x && typeof x === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(x)) if (k !== 'loc' && k !== 'file' && !k.endsWith('Loc')) out[k] = strip(v);
    return out;
  }
  return x;
}

/** A buffer declared without a length (`smem A bytes=N`): reports name it `A`. */
const S = { scalar: true } as const;

/** The kernel of sketch source `src` (a file of examples/bugs/ when it ends in `.mbk`). */
function sketch(src: string): Kernel {
  const text = src.endsWith('.mbk') ? readFileSync(join(BUGS, src), 'utf8') : src;
  const r = parseSketch(text, src.endsWith('.mbk') ? src : 'k.mbk');
  if (!r.kernel) throw new Error(r.diagnostics.map((d) => formatDiagnostic(d, text)).join('\n'));
  return r.kernel;
}

/** The verdict and the findings (`kind subject`) of a strict, exhaustive check. */
function findings(k: Kernel): string[] {
  const r = check(instantiate(k), { all: true, strict: true });
  return [r.verdict, ...new Set([...r.hazards, ...r.warnings].map((h) => `${h.kind} ${h.subject?.name ?? ''}`.trim()))];
}

/** `built` is the kernel of sketch `src` (locations aside) and checks as it does. */
function same(built: KernelBuilder, src: string): string[] {
  const k = built.build();
  const s = sketch(src);
  expect(strip(k)).toEqual(strip(s));
  const f = findings(k);
  expect(f).toEqual(findings(s));
  return f;
}

describe('tcgen05.mma.cta_group::2: mma(..., { pair: true })', () => {
  /** T05 (the commit arrives on the issuing CTA only) and its fixed twin (multicast=0b11). */
  const t05 = (fixed: boolean) => kernel(fixed ? 'pair_mma_commit_multicast' : 'pair_mma_commit_one_cta', { arch: 'sm_100a', cluster: 2, params: { K: 2 } })
    .smem('A', 1, 4096, S).smem('B', 1, 4096, S).tmem('acc', 1, 65536, S)
    .barrier('full', { count: 1 }).barrier('empty', { count: 1 }).barrier('peer_full', { count: 1, cta: 0 })
    .role('producer', { warps: 1, per: 'one' }, (r) => r
      .for('k', 0, 'K', (r) => r
        .wait('empty', '(k & 1) ^ 1').arriveExpectTx('full', 8192).tma('A', 4096, 'full').tma('B', 4096, 'full')
        .if('cta == 1', (r) => r.wait('full', 'k & 1').arrive('peer_full@0', { sem: 'release', scope: 'cluster' })))
      .wait('empty', '(K - 1) & 1'))
    .role('mma', { warps: 1, per: 'one', where: 'cta == 0' }, (r) => r
      .for('k', 0, 'K', (r) => r
        .wait('full', 'k & 1').wait('peer_full', 'k & 1')
        .mma(['A', 'B'], 'acc', { m: 256, n: 128, k: 64 }, { pair: true })
        .commit('empty', fixed ? '0b11' : undefined)));

  test('T05 and T05-fixed: the builder\'s pair MMA is the sketch\'s, with the same hang and OK', () => {
    expect(same(t05(false), 'T05.mbk')).toEqual(['hang', 'hang empty@c1', 'count-mismatch empty@c1']);
    expect(same(t05(true), 'T05-fixed.mbk')).toEqual(['ok']);
  });
  test('one MMA per CTA of the pair (without pair: one MMA, in the issuing CTA only); the text says .cta_group::2', () => {
    const p = instantiate(t05(true).build());
    const mma = p.roles.find((r) => r.name === 'mma')!.code.flatMap((i) => (i.i === 'op' && i.op.op === 'tcgen05.mma' ? [i] : []));
    expect(mma.map((i) => [i.op.op === 'tcgen05.mma' && i.op.pair, i.text])).toEqual([[true, 'tcgen05.mma.cta_group::2 acc, A, B']]);
    const one = kernel('k', { arch: 'sm_100a' }).smem('A', 1, 4096).tmem('acc', 1, 4096)
      .role('w', { warps: 1, per: 'one' }, (r) => r.mma(['A'], 'acc', { m: 128, n: 128, k: 64 }, { pair: false })).build();
    const op = one.roles[0]!.body[0]!;
    expect(op.s === 'op' && op.op).toEqual({ op: 'tcgen05.mma', reads: [{ name: 'A', index: { k: 'num', v: 0 } }], acc: { name: 'acc', index: { k: 'num', v: 0 } }, shape: { m: 128, n: 128, k: 64 } });
    expect(instantiate(one).roles[0]!.code.flatMap((i) => (i.i === 'op' ? [i.text] : []))).toEqual(['tcgen05.mma acc[0], A[0]']);
  });
  test('a pair MMA in a cluster of odd size is the sketch\'s error, cta-pair', () => {
    const k = kernel('k', { arch: 'sm_100a', cluster: 3 }).smem('A', 1, 4096).tmem('acc', 1, 4096)
      .role('w', { warps: 1, per: 'one' }, (r) => r.mma(['A'], 'acc', { m: 256, n: 128, k: 64 }, { pair: true })).build();
    let err: unknown;
    try {
      instantiate(k);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(KernelError);
    expect((err as KernelError).message).toMatch(/^tcgen05\.mma\.cta_group::2 runs on a CTA pair: the cluster has 3 CTAs, it needs an even number/);
  });
  test('an init count outside [1, 2^20 - 1] (a literal or a parameter) is a KernelError at the barrier, init-count', () => {
    const body = (k: KernelBuilder) => k.role('w', { warps: 1, per: 'one' }, (r) => r.arrive('b')).build();
    for (const count of [0, -1, 2 ** 20]) {
      let err: unknown;
      try {
        instantiate(body(kernel('k', { arch: 'sm_90a' }).barrier('b', { count })));
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(KernelError);
      expect((err as KernelError).code).toBe('init-count');
      expect((err as KernelError).message).toBe(`init count of barrier b is ${count}; an mbarrier expects 1 to 1,048,575 (2^20 - 1) arrivals per phase (PTX ISA mbarrier.init)`);
      expect((err as KernelError).loc?.file).toMatch(/builder\.test\.ts$/);
    }
    expect(instantiate(body(kernel('k', { arch: 'sm_90a' }).barrier('b', { count: 2 ** 20 - 1 }))).barriers[0]!.count).toBe(2 ** 20 - 1);
    const byParam = body(kernel('k', { arch: 'sm_90a', params: { C: 1 } }).barrier('b', { count: 'C' }));
    expect(() => instantiate(byParam, { C: 0 })).toThrow(/^init count of barrier b is C = 0; an mbarrier expects 1 to 1,048,575/);
    expect(instantiate(byParam, { C: 3 }).barriers[0]!.count).toBe(3);
  });
  test('wrong arguments are a TypeError naming the method and the argument', () => {
    const r = (body: (r: Parameters<Parameters<KernelBuilder['role']>[2]>[0]) => unknown) => () => kernel('k', { arch: 'sm_100a' }).role('w', { warps: 1 }, body);
    const shape = { m: 128, n: 128, k: 64 };
    expect(r((b) => b.mma(['A'], 'acc', shape, { pair: 1 as never }))).toThrow(/^mma: options\.pair must be a boolean \(true: \.cta_group::2\), got a number \(1\)$/);
    expect(r((b) => b.mma(['A'], 'acc', shape, 'pair' as never))).toThrow(/^mma: options must be an object \(or left out\), got a string$/);
    expect(r((b) => b.mma('A' as never, 'acc', shape))).toThrow(/^mma: reads must be a non-empty array of buffer references, got a string$/);
    expect(r((b) => b.mma([], 'acc', shape))).toThrow(/^mma: reads must be a non-empty array of buffer references, got an array$/);
    expect(r((b) => b.mma(['A'], 0 as never, shape))).toThrow(/^mma: acc must be a buffer reference \(a string\), got a number \(0\)$/);
    expect(r((b) => b.mma(['A'], 'acc', { m: 128, n: 0, k: 64 }))).toThrow(/^mma: shape must be an object \{ m, n, k \} of positive integers, got an object of another shape$/);
    expect(r((b) => b.mma(['A'], 'acc', null as never))).toThrow(/^mma: shape must be .*, got null$/);
    // The allocation methods' { pair } is checked the same way.
    expect(r((b) => b.tmemAlloc('acc', { pair: 'yes' as never }))).toThrow(/^tmemAlloc: options\.pair must be a boolean/);
    expect(r((b) => b.tmemDealloc('acc', null as never))).toThrow(/^tmemDealloc: options must be an object \(or left out\), got null$/);
    expect(r((b) => b.relinquishAllocPermit(7 as never))).toThrow(/^relinquishAllocPermit: options must be an object/);
  });
});

describe('tcgen05 data movement, fences and allocation', () => {
  test('tmemCopy: T07 (the scale-factor stage freed by an arrive) races; T07-fixed (by a commit) is OK', () => {
    const t07 = (fixed: boolean) => kernel(fixed ? 'blockscaled_sf_commit' : 'blockscaled_sf_release', { arch: 'sm_100a', params: { K: 2 } })
      .barrier('full', { count: 1 }).barrier('empty', { count: 1 }).barrier('sf_full', { count: 1 }).barrier('sf_empty', { count: 1 }).barrier('done', { count: 1 })
      .smem('A', 1, 8192, S).smem('SF', 1, 512, S).tmem('acc', 1, 65536, S).tmem('sfa', 1, 512, S)
      .role('producer', { warps: 1, per: 'one' }, (r) => r.for('k', 0, 'K', (r) => r
        .wait('sf_empty', '(k & 1) ^ 1').arriveExpectTx('sf_full', 512).tma('SF', 512, 'sf_full')
        .wait('empty', '(k & 1) ^ 1').arriveExpectTx('full', 8192).tma('A', 8192, 'full')))
      .role('mma', { warps: 1, per: 'one' }, (r) => r
        .for('k', 0, 'K', (r) => {
          r.wait('sf_full', 'k & 1').tmemCopy('sfa', 'SF');
          if (fixed) r.commit('sf_empty');
          else r.arrive('sf_empty');
          r.wait('full', 'k & 1').mma(['A', 'sfa'], 'acc', { m: 128, n: 128, k: 64 }).commit('empty');
        })
        .commit('done').wait('done', 0));
    expect(same(t07(false), 'T07.mbk')).toEqual(['race', 'race SF']);
    expect(same(t07(true), 'T07-fixed.mbk')).toEqual(['ok']);
  });

  test('tmemStore / tmemWaitSt / tmemLoad / tcFence: T08 (wait::st after the signal) races; T08-fixed is OK', () => {
    const t08 = (fixed: boolean) => kernel(fixed ? 'attention_p_store_waited' : 'attention_p_store', { arch: 'sm_100a' })
      .barrier('kv_full', { count: 1 }).barrier('s_full', { count: 1 }).barrier('p_full', { count: 1 }).barrier('o_full', { count: 1 })
      .smem('Q', 1, 16384, S).smem('K', 1, 16384, S).smem('V', 1, 16384, S).tmem('S', 1, 32768, S).tmem('P', 1, 16384, S).tmem('O', 1, 32768, S)
      .role('load', { warps: 1, per: 'one' }, (r) => r.arriveExpectTx('kv_full', '3 * 16384').tma('Q', 16384, 'kv_full').tma('K', 16384, 'kv_full').tma('V', 16384, 'kv_full'))
      .role('mma', { warps: 1, per: 'one' }, (r) => r.wait('kv_full', 0).mma(['Q', 'K'], 'S', { m: 128, n: 128, k: 64 }).commit('s_full')
        .wait('p_full', 0).tcFence(true).mma(['P', 'V'], 'O', { m: 128, n: 64, k: 128 }).commit('o_full'))
      .role('softmax', { warps: 1, per: 'one' }, (r) => {
        r.wait('s_full', 0).tcFence(true).tmemLoad('S').tmemStore('P');
        if (fixed) r.tmemWaitSt();
        r.tcFence(false).arrive('p_full').wait('o_full', 0);
        if (!fixed) r.tmemWaitSt();
        r.tcFence(true).tmemLoad('O');
      });
    expect(same(t08(false), 'T08.mbk')).toEqual(['race', 'race P']);
    expect(same(t08(true), 'T08-fixed.mbk')).toEqual(['ok']);
  });

  test('tmemShift: T09 (the shift before the epilogue released the accumulator) races; T09-fixed is OK', () => {
    const t09 = (fixed: boolean) => kernel(fixed ? 'sliding_window_shift_after_read' : 'sliding_window_shift', { arch: 'sm_100a', params: { W: 2 } })
      .barrier('a_full', { count: 1 }).barrier('acc_full', { count: 1 }).barrier('acc_empty', { count: 1 })
      .smem('A', 1, 8192, S).tmem('acc', 1, 65536, S)
      .role('load', { warps: 1, per: 'one' }, (r) => r.arriveExpectTx('a_full', 8192).tma('A', 8192, 'a_full'))
      .role('mma', { warps: 1, per: 'one' }, (r) => r.wait('a_full', 0).for('w', 0, 'W', (r) => r
        .if('w > 0', (r) => (fixed ? r.wait('acc_empty', '(w - 1) & 1').tcFence(true).tmemShift('acc') : r.tmemShift('acc').wait('acc_empty', '(w - 1) & 1').tcFence(true)))
        .mma(['A'], 'acc', { m: 128, n: 128, k: 64 }).commit('acc_full')))
      .role('epilogue', { warps: 1, per: 'one' }, (r) => r.for('w', 0, 'W', (r) => r
        .wait('acc_full', 'w & 1').tcFence(true).tmemLoad('acc').tcFence(false).arrive('acc_empty')));
    expect(same(t09(false), 'T09.mbk')).toEqual(['race', 'race acc']);
    expect(same(t09(true), 'T09-fixed.mbk')).toEqual(['ok']);
  });

  test('tmemLoadAsync / tmemWaitLd: T04-fixed, the canonical epilogue hand-off, is OK', () => {
    const k = kernel('tc_fences', { arch: 'sm_100a', params: { TILES: 2 } })
      .smem('A', 1, 16384, S).smem('C', 1, 16384, S).tmem('acc', 1, 65536, { cols: 128, ...S })
      .barrier('acc_full', { count: 1 }).barrier('acc_empty', { count: 1 })
      .role('mma', { warps: 1, per: 'one' }, (r) => r.tmemAlloc('acc')
        .for('t', 0, 'TILES', (r) => r.wait('acc_empty', '(t & 1) ^ 1').tcFence(true).mma(['A'], 'acc', { m: 128, n: 128, k: 64 }).commit('acc_full'))
        .wait('acc_empty', '(TILES & 1) ^ 1').tcFence(true).tmemDealloc('acc'))
      .role('epilogue', { warps: 1, per: 'one' }, (r) => r.for('t', 0, 'TILES', (r) => r
        .wait('acc_full', 't & 1').tcFence(true).tmemLoadAsync('acc').tmemWaitLd().write('C').tcFence(false).arrive('acc_empty')));
    expect(same(k, 'T04-fixed.mbk')).toEqual(['ok']);
  });

  test('relinquishAllocPermit: T03-fixed is OK; an alloc after it is tmem-alloc-after-relinquish', () => {
    const t03 = (again: boolean) => kernel('tmem_freed', { arch: 'sm_100a', params: { TILES: 2 } })
      .smem('A', 1, 16384, S).tmem('acc', 1, 65536, { cols: 512, ...S }).barrier('done', { count: 1 })
      .role('mma', { warps: 1, per: 'one' }, (r) => {
        r.tmemAlloc('acc').relinquishAllocPermit()
          .for('t', 0, 'TILES', (r) => r.mma(['A'], 'acc', { m: 128, n: 128, k: 64 }))
          .commit('done').wait('done', 0).tcFence(true).tmemDealloc('acc');
        if (again) r.tmemAlloc('acc').tmemDealloc('acc');
      });
    expect(same(t03(false), 'T03-fixed.mbk')).toEqual(['ok']);
    expect(findings(t03(true).build())).toEqual(['tmem-alloc-after-relinquish', 'tmem-alloc-after-relinquish acc']);
  });
});

describe('wgmma, bulk reductions and the mbarrier instructions', () => {
  test('wgmma / wgmmaCommit / wgmmaWait: R01 (the epilogue tile written with a wgmma in flight) races; R01-fixed is OK', () => {
    const r01 = (fixed: boolean) => kernel(fixed ? 'epilogue_alias_fixed' : 'epilogue_alias', { arch: 'sm_90a', params: { K: 4, TILE: 4096 } })
      .smem('stage', 2, '2 * TILE').smem('C', 1, '4 * TILE', { alias: 'stage', ...S })
      .barriers('full', 2, { count: 1 }).barriers('empty', 2, { count: 1 })
      .role('producer', { warps: 1, per: 'one' }, (r) => r.for('k', 0, 'K', (r) => r
        .let('s', 'k % 2').wait('empty[s]', '((k / 2) & 1) ^ 1').arriveExpectTx('full[s]', '2 * TILE')
        .tma('stage[s]', 'TILE', 'full[s]').tma('stage[s] + TILE', 'TILE', 'full[s]')))
      .role('consumer', { warps: 1 }, (r) => {
        r.for('k', 0, 'K', (r) => r
          .let('s', 'k % 2').wait('full[s]', '(k / 2) & 1')
          .wgmma(['stage[s]', 'stage[s] + TILE'], { m: 64, n: 128, k: 16 }).wgmmaCommit().wgmmaWait(1)
          .if('k > 0', (r) => r.arrive('empty[(k + 1) % 2]', { per: 'one' })));
        if (fixed) r.wgmmaWait(0);
        r.write('C');
      });
    expect(same(r01(false), 'R01.mbk')).toEqual(['race', 'race C', 'race stage[1]', 'inflight-at-exit']);
    expect(same(r01(true), 'R01-fixed.mbk')).toEqual(['ok']);
  });

  test('bulkReduce: A04-fixed (the staging tile reused after wait_group.read) is OK; one group of depth 1 races', () => {
    // The sketch keeps the reduction operator (`.add`; it changes no synchronization, only the text).
    const a04 = (depth: number, redop?: RedOp) => kernel('bulk_reduce_epilogue', { arch: 'sm_90a', params: { TILES: 3, TILE: 8192, DEPTH: depth } })
      .smem('C', 1, 'TILE')
      .role('epi', { warps: 1, per: 'one' }, (r) => r
        .for('t', 0, 'TILES', (r) => r.write('C[0]').fenceProxyAsync().bulkReduce('C[0]', 'TILE', redop ? { redop } : {}).bulkCommit().bulkWait('DEPTH'))
        .bulkWait(0, false));
    expect(same(a04(0, 'add'), 'A04-fixed.mbk')).toEqual(['ok']);
    expect(findings(a04(1).build())).toEqual(['race', 'race C[0]']);
    // The builder's redop is the operation's text only.
    const add = instantiate(a04(0, 'add').build()).roles[0]!.code.flatMap((i) => (i.i === 'op' && i.op.op === 'cp.reduce.async.bulk' ? [[i.op.redop, i.text]] : []));
    expect(add).toEqual([['add', 'cp.reduce.async.bulk.add C[0], TILE']]);
    expect(findings(a04(1, 'max').build())).toEqual(['race', 'race C[0]']);
    expect(() => a04(0, 'mul' as RedOp).build()).toThrow("bulkReduce: redop must be one of add, min, max, inc, dec, and, or, xor, got 'mul'");
  });

  /**
   * Every other mbarrier instruction, and cp.async's arrive. `n` is the pending count the token
   * recorded: the count before its arrive (PTX ISA §9.7.13.15.17), 2 of b's 2 here.
   */
  const MISC = (want: number) => `kernel misc arch=sm_90a
barrier b count=2 manual
barrier d[1] count=1
barrier c[1] count=1
smem A[1] bytes=16

role r warps=1 per=one:
    mbarrier.init b, 2
    fence.mbarrier_init
    tok = mbarrier.arrive.noComplete b, 1
    n = mbarrier.pending_count tok
    if n == ${want}:
        mbarrier.arrive_drop b
    mbarrier.try_wait b, tok
    mbarrier.inval b
    mbarrier.expect_tx d[0], 64
    mbarrier.complete_tx d[0], 64
    mbarrier.arrive d[0]
    mbarrier.try_wait.parity d[0], 0
    cp.async A[0], 16
    cp.async.mbarrier.arrive.noinc c[0]
    mbarrier.try_wait.parity c[0], 0
    ld.shared A[0]
`;
  const misc = (want: number) => kernel('misc', { arch: 'sm_90a' })
    .barrier('b', { count: 2, init: 'manual' }).barriers('d', 1, { count: 1 }).barriers('c', 1, { count: 1 }).smem('A', 1, 16)
    .role('r', { warps: 1, per: 'one' }, (r) => r
      .init('b', 2).fenceMbarrierInit().arrive('b', { count: 1, noComplete: true, token: 'tok' }).pendingCount('n', 'tok')
      .if(`n == ${want}`, (r) => r.arriveDrop('b')).waitToken('b', 'tok').inval('b')
      .expectTx('d[0]', 64).completeTx('d[0]', 64).arrive('d[0]').wait('d[0]', 0)
      .cpAsync('A[0]', 16).cpAsyncArrive('c[0]', true).wait('c[0]', 0).read('A[0]'));
  test('init, fenceMbarrierInit, inval, arriveDrop, pendingCount, waitToken, expectTx, completeTx, cpAsyncArrive: the sketch\'s kernel, OK', () => {
    expect(same(misc(2), MISC(2))).toEqual(['ok']);
  });
  test('pendingCount reads 2, the count before the arrive: branching on 1 skips the arrive_drop, and the token wait hangs', () => {
    expect(same(misc(1), MISC(1))).toEqual(['hang', 'hang b']);
  });
});

describe('values, global memory and cluster launch control', () => {
  test('choose / writeValue / readValue: V01 (the tile index read before the wait) races; V01-fixed is OK', () => {
    const v01 = (fixed: boolean) => kernel('tile_scheduler', { arch: 'sm_100a', params: { TILES: 2, DONE: 2 } })
      .barriers('full', 1, { count: 1 }).barriers('empty', 1, { count: 1 }).smem('tile', 1, 16)
      .role('scheduler', { warps: 1, per: 'one' }, (r) => r.let('more', 1).for('i', 0, 'TILES + 1', (r) => r.if('more', (r) => r
        .wait('empty[0]', '(i & 1) ^ 1').choose('t', 0, 'DONE + 1').if('i == TILES', (r) => r.let('t', 'DONE'))
        .writeValue('tile[0]', 't').arrive('full[0]').if('t == DONE', (r) => r.let('more', 0)))))
      .role('consumer', { warps: 1, per: 'one' }, (r) => r.let('more', 1).for('i', 0, 'TILES + 1', (r) => r.if('more', (r) => {
        if (!fixed) r.readValue('t', 'tile[0]');
        r.wait('full[0]', 'i & 1');
        if (fixed) r.readValue('t', 'tile[0]');
        r.arrive('empty[0]').if('t == DONE', (r) => r.let('more', 0), (r) => r.work(100));
      })));
    expect(same(v01(false), 'V01.mbk')).toEqual(['race', 'race tile[0]', 'hang full[0]']);
    expect(same(v01(true), 'V01-fixed.mbk')).toEqual(['ok']);
  });

  test('atom / ldGlobal / stGlobal / spin: V06 (a relaxed red) races, V06-fixed (red.release) is OK; V05-fixed\'s atom.add is OK', () => {
    const v06 = (fixed: boolean, fence = false) => kernel(fixed ? 'splitk_red_release' : 'splitk_red_relaxed', { arch: 'sm_90a', grid: 2 })
      .gmem('partial', 2, { bytes: 16384 }).gmem('arrived', 1, { init: 0, ...S }).gmem('out', 1, { bytes: 16384, ...S })
      .role('split', { warps: 1, per: 'one' }, (r) => (fence ? r.stGlobal('partial[clusterid]', 'clusterid + 1').fence('gpu') : r.stGlobal('partial[clusterid]', 'clusterid + 1'))
        .atom('arrived', 'add', 1, { red: true, sem: fixed ? 'release' : 'relaxed' })
        .if('clusterid == 0', (r) => r.spin('arrived', 'eq', 2).ldGlobal('partial[0]', { dest: 'a' }).ldGlobal('partial[1]', { dest: 'b' }).stGlobal('out', 'a + b')));
    expect(same(v06(false), 'V06.mbk')).toEqual(['race', 'race partial[1]']);
    expect(same(v06(true), 'V06-fixed.mbk')).toEqual(['ok']);
    // __threadfence() before the relaxed red releases the partial sums too.
    expect(findings(v06(false, true).build())).toEqual(['ok']);
    const v05 = kernel('persistent_counter', { arch: 'sm_90a', grid: 2 }).gmem('done', 1, { init: 0, ...S })
      .role('worker', { warps: 1, per: 'one' }, (r) => r.work(100).atom('done', 'add', 1, { dest: 'n', sem: 'acq_rel' }).if('n == 1', (r) => r.spin('done', 'ge', 2)));
    expect(same(v05, 'V05-fixed.mbk')).toEqual(['ok']);
  });

  test('tryCancel (multicast) / queryCancel: V07 (only the issuing CTA arms its barrier) hangs; V07-fixed is OK', () => {
    const v07 = (fixed: boolean) => kernel(fixed ? 'clc_multicast_armed' : 'clc_multicast_unarmed', { arch: 'sm_100a', cluster: 2 })
      .barrier('got', { count: 1 }).smem('resp', 1, 16, S)
      .role('scheduler', { warps: 1, per: 'one' }, (r) => {
        if (fixed) r.arriveExpectTx('got', 16).if('cta == 0', (r) => r.tryCancel('resp', 'got', true));
        else r.if('cta == 0', (r) => r.arriveExpectTx('got', 16).tryCancel('resp', 'got', true));
        r.wait('got', 0).queryCancel('c', 'resp').if('c', (r) => r.queryCancel('x', 'resp', 'first_ctaid').work(100));
      });
    expect(same(v07(false), 'V07.mbk')).toEqual(['hang', 'hang got@c1', 'tx-mismatch got@c1']);
    expect(same(v07(true), 'V07-fixed.mbk')).toEqual(['ok']);
  });

  test('scalar: one buffer named without an index; an array of one keeps its index; scalar with another length is a BuildError', () => {
    const k = kernel('k').smem('t', 1, 64, S).smem('u', 1, 64).gmem('g', 1, S).role('w', { warps: 1, per: 'one' }, (r) => r.read('t').read('u')).build();
    expect(k.buffers.map((b) => [b.name, b.scalar ?? false])).toEqual([['t', true], ['u', false], ['g', true]]);
    const p = instantiate(k);
    expect([p.bufferName(p.buffers.find((b) => b.name === 't')!.offset), p.bufferName(p.buffers.find((b) => b.name === 'u')!.offset)]).toEqual(['t', 'u[0]']);
    expect(() => kernel('k').smem('t', 2, 64, S)).toThrow(/^buffer t: scalar is one buffer named without an index, so its length must be 1$/);
  });
});
