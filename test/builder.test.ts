import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { check } from '../src/check/index.js';
import { kernel, type KernelBuilder } from '../src/kernel/builder.js';
import type { Kernel } from '../src/kernel/ir.js';
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
