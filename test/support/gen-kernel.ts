/**
 * A fast-check generator of small random kernels in the Kernel IR (not the sketch language, so it
 * also covers what the language cannot say): 1-3 roles, 1-2 CTAs, 1-3 barrier arrays with random
 * counts, every arrive form, TMA copies (plain, multicast, chunked, issued before or after their
 * `arrive.expect_tx`), tcgen05.mma + commit, wgmma and bulk-store groups, cp.async with its groups,
 * st.async / red.async and DSMEM copies (in clusters), bulk reductions and prefetches, waits whose
 * parity is a small expression, buffer reads and writes, proxy fences, named and cluster barriers,
 * loops of 1-3 trips, `elect:` blocks, conditionals on the CTA rank and on the warp, and exits;
 * byte ranges: TMA boxes and loads / stores into one half of a buffer (`S0[i] + offset`, the
 * offset a constant or picked by a loop variable), and an
 * alias array `V` viewing S0's storage in half-size elements; and, in about a quarter of the
 * kernels, values that steer control flow (`choose`, values stored and loaded through shared
 * memory, weak and strong global loads and stores, atomics, spin waits on a global location,
 * branches on the value read), cluster launch control on sm_100a (`try_cancel` into a 16-byte
 * response, `query_cancel`), and sometimes a grid of two clusters of which one is resident.
 *
 * Kernels are kept small so the unreduced search finishes: the differential tests compare the
 * reduced checker against it (test/check-differential.test.ts).
 */
import fc from 'fast-check';
import type { Arch, AtomOp, BarRef, BufRef, Expr, Kernel, MemScope, Op, Per, RoleDecl, SpinCmp, Stmt } from '../../src/kernel/ir.js';

/** The declarations a role body is generated against. */
interface Ctx {
  arch: Arch;
  cluster: number;
  bars: { name: string; length: number }[];
  smem: { name: string; length: number; bytes: number; alias?: string }[];
  tmem: { name: string; length: number }[];
  /** Values, global memory and launch control in this kernel (the value variable is `x`). */
  values: boolean;
  /** Global locations `G[0..gmem-1]` (values only). */
  gmem: number;
  /** Rank-relative code only (see {@link symmetricClusterKernelArb}). */
  sym?: boolean;
}

const num = (v: number): Expr => ({ k: 'num', v });
const v = (name: string): Expr => ({ k: 'var', name });
const bin = (op: Extract<Expr, { k: 'bin' }>['op'], a: Expr, b: Expr): Expr => ({ k: 'bin', op, a, b });

/** Loop variables in scope, innermost last. */
type Scope = string[];

/** An index into an array of `length`: a constant, or a loop variable modulo the length. */
function indexArb(length: number, scope: Scope): fc.Arbitrary<Expr> {
  const opts: fc.Arbitrary<Expr>[] = [fc.nat(length - 1).map(num)];
  if (scope.length && length > 1) opts.push(fc.constantFrom(...scope).map((s) => bin('%', v(s), num(length))));
  return fc.oneof(...opts);
}

/** The CTA of a remote reference: the peer (`cta ^ 1`) or a constant rank. */
function ctaArb(ctx: Ctx): fc.Arbitrary<Expr | undefined> {
  if (ctx.cluster === 1) return fc.constant(undefined);
  if (ctx.sym) return fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, fc.constant(bin('^', v('cta'), num(1))));
  return fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, fc.constant(bin('^', v('cta'), num(1))), fc.nat(ctx.cluster - 1).map(num));
}

function barArb(ctx: Ctx, scope: Scope, remote = false): fc.Arbitrary<BarRef> {
  return fc.nat(ctx.bars.length - 1).chain((i) => {
    const b = ctx.bars[i]!;
    return fc.tuple(indexArb(b.length, scope), remote ? ctaArb(ctx) : fc.constant(undefined)).map(([index, cta]) => (cta ? { name: b.name, index, cta } : { name: b.name, index }));
  });
}

function smemArb(ctx: Ctx, scope: Scope, remote = false): fc.Arbitrary<BufRef> {
  return fc.nat(ctx.smem.length - 1).chain((i) => {
    const b = ctx.smem[i]!;
    return fc.tuple(indexArb(b.length, scope), remote ? ctaArb(ctx) : fc.constant(undefined)).map(([index, cta]) => (cta ? { name: b.name, index, cta } : { name: b.name, index }));
  });
}

const bytesArb = fc.constantFrom(1024, 2048, 4096);

/** A multicast mask: any, or (rank-relative code) every CTA, the peer or the own CTA. */
function maskArb(ctx: Ctx): fc.Arbitrary<Expr | undefined> {
  if (ctx.cluster === 1) return fc.constant(undefined);
  if (ctx.sym) return fc.option(fc.constantFrom(num(3), bin('<<', num(1), bin('^', v('cta'), num(1))), bin('<<', num(1), v('cta'))), { nil: undefined });
  return fc.option(fc.constantFrom(1, 2, 3).map(num), { nil: undefined });
}

/** A phase parity: a constant, or a small expression over a loop variable. */
function parityArb(scope: Scope): fc.Arbitrary<Expr> {
  const opts: fc.Arbitrary<Expr>[] = [fc.constantFrom(0, 1).map(num)];
  if (scope.length) {
    opts.push(fc.tuple(fc.constantFrom(...scope), fc.constantFrom(0, 1), fc.constantFrom(1, 2)).map(([s, off, div]) =>
      bin('&', bin('/', bin('+', v(s), num(off)), num(div)), num(1))));
  }
  return fc.oneof(...opts);
}

const perArb: fc.Arbitrary<Per | undefined> = fc.constantFrom<Per | undefined>(undefined, undefined, 'thread', 'warp', 'one');

const scopeArb = fc.constantFrom<MemScope | undefined>(undefined, 'cta', 'cluster', 'gpu');
/** A value stored: a constant or the value variable. */
const valueArb = fc.constantFrom<Expr>(num(0), num(1), num(1), v('x'));

/** The value, global-memory and launch-control operations (machine/ops/values.ts, clc.ts). */
function valueOps(ctx: Ctx, scope: Scope): fc.WeightedArbitrary<Op>[] {
  const g = fc.nat(ctx.gmem - 1).map((i): BufRef => ({ name: 'G', index: num(i) }));
  const ops: fc.WeightedArbitrary<Op>[] = [
    { weight: 2, arbitrary: fc.constantFrom(1, 2).map((hi) => ({ op: 'choose' as const, dest: 'x', lo: num(0), hi: num(hi) })) },
    { weight: 1, arbitrary: fc.tuple(smemArb(ctx, scope), valueArb).map(([buf, value]) => ({ op: 'st.shared' as const, buf, value })) },
    { weight: 1, arbitrary: smemArb(ctx, scope).map((buf) => ({ op: 'ld.shared' as const, buf, dest: 'x' })) },
    { weight: 1, arbitrary: g.map((buf) => ({ op: 'ld.global' as const, buf, dest: 'x' })) },
    { weight: 1, arbitrary: fc.tuple(g, valueArb).map(([buf, value]) => ({ op: 'st.global' as const, buf, value })) },
    { weight: 1, arbitrary: fc.tuple(g, fc.constantFrom<'relaxed' | 'acquire'>('relaxed', 'acquire'), scopeArb).map(([buf, sem, sc]) => ({ op: 'ld.strong' as const, buf, sem, ...(sc ? { scope: sc } : {}), dest: 'x' })) },
    { weight: 1, arbitrary: fc.tuple(g, fc.constantFrom<'relaxed' | 'release'>('relaxed', 'release'), scopeArb, valueArb).map(([buf, sem, sc, value]) => ({ op: 'st.strong' as const, buf, sem, ...(sc ? { scope: sc } : {}), value })) },
    { weight: 2, arbitrary: fc.record({
      buf: g, red: fc.boolean(), aop: fc.constantFrom<AtomOp>('add', 'add', 'exch', 'max', 'inc', 'or', 'cas'),
      sem: fc.constantFrom<'relaxed' | 'acquire' | 'release' | 'acq_rel'>('relaxed', 'release', 'acq_rel', 'acquire'), scope: scopeArb,
    }).map((r) => {
      // cas: atom only (red has none); it takes the lock when the location is 0.
      const red = r.red && r.aop !== 'cas';
      return { op: 'atom.global' as const, buf: r.buf, red, aop: r.aop, value: num(1), ...(r.aop === 'cas' ? { compare: num(0) } : {}), sem: r.sem, ...(r.scope ? { scope: r.scope } : {}), ...(red ? {} : { dest: 'x' }) };
    }) },
    { weight: 1, arbitrary: fc.tuple(g, fc.constantFrom<SpinCmp>('ge', 'eq', 'ne'), fc.constantFrom<'relaxed' | 'acquire'>('acquire', 'relaxed')).map(([buf, cmp, sem]) =>
      ({ op: 'spin.global' as const, buf, cmp, target: num(1), sem, scope: 'gpu' as const, dest: 'x' })) },
  ];
  if (ctx.arch === 'sm_100a') {
    const resp: BufRef = { name: 'R', index: num(0) };
    ops.push({ weight: 2, arbitrary: fc.tuple(barArb(ctx, scope), fc.boolean()).map(([bar, mc]) => ({ op: 'clc.try_cancel' as const, dst: resp, bar, multicast: mc && ctx.cluster > 1 })) });
    ops.push({ weight: 1, arbitrary: fc.constantFrom<'is_canceled' | 'first_ctaid'>('is_canceled', 'first_ctaid').map((what) => ({ op: 'clc.query' as const, src: resp, what, dest: 'x' })) });
  }
  return ops;
}

/** One operation (not a block). */
function opArb(ctx: Ctx, scope: Scope): fc.Arbitrary<Op> {
  const ops: fc.WeightedArbitrary<Op>[] = [
    { weight: 6, arbitrary: fc.record({
      bar: barArb(ctx, scope, true), count: fc.option(fc.constantFrom(1, 2).map(num), { nil: undefined }),
      expectTx: fc.option(bytesArb.map(num), { nil: undefined, freq: 2 }), drop: fc.boolean(), noComplete: fc.boolean(), per: perArb,
      scope: fc.constantFrom<'cta' | 'cluster' | undefined>(undefined, undefined, 'cluster', 'cta'),
    }).map((r) => {
      const o: Extract<Op, { op: 'mbarrier.arrive' }> = { op: 'mbarrier.arrive', bar: r.bar };
      if (r.count) o.count = r.count;
      if (r.expectTx) o.expectTx = r.expectTx;
      if (r.drop && !r.noComplete) o.drop = true;
      if (r.noComplete && !r.drop) o.noComplete = true;
      if (r.per) o.per = r.per;
      if (r.scope && r.bar.cta) o.scope = r.scope;
      return o;
    }) },
    { weight: 1, arbitrary: fc.record({ bar: barArb(ctx, scope), bytes: bytesArb.map(num) }).map((r) => ({ op: 'mbarrier.expect_tx' as const, bar: r.bar, bytes: r.bytes, per: 'one' as const })) },
    { weight: 1, arbitrary: fc.record({ bar: barArb(ctx, scope), bytes: bytesArb.map(num) }).map((r) => ({ op: 'mbarrier.complete_tx' as const, bar: r.bar, bytes: r.bytes, per: 'one' as const })) },
    { weight: 6, arbitrary: fc.record({ bar: barArb(ctx, scope), parity: parityArb(scope), form: fc.constantFrom<'try_wait' | 'test_wait'>('try_wait', 'try_wait', 'test_wait') })
      .map((r) => ({ op: 'mbarrier.wait' as const, form: r.form, bar: r.bar, parity: r.parity })) },
    { weight: 5, arbitrary: fc.record({
      tensor: fc.boolean(), dst: smemArb(ctx, scope), bar: barArb(ctx, scope), frac: fc.constantFrom(1, 2), half: fc.constantFrom<number | undefined>(undefined, 0, 1),
      multicast: maskArb(ctx),
      chunks: fc.option(fc.constant(num(2)), { nil: undefined, freq: 3 }),
    }).map((r) => {
      const buf = ctx.smem.find((b) => b.name === r.dst.name)!;
      // Half a buffer: the box lands at byte 0 or at the middle.
      const dst = r.frac === 2 && r.half !== undefined ? { ...r.dst, offset: num(r.half * buf.bytes / 2) } : r.dst;
      const o: Extract<Op, { op: 'cp.async.bulk' }> = { op: 'cp.async.bulk', tensor: r.tensor, dst, bytes: num(buf.bytes / r.frac), bar: r.bar, per: 'one' };
      if (r.multicast) o.multicast = r.multicast;
      if (r.chunks) o.chunks = r.chunks;
      return o;
    }) },
    { weight: 3, arbitrary: fc.record({ buf: smemArb(ctx, scope, true), w: fc.boolean(), half: fc.constantFrom<number | 'loop' | undefined>(undefined, undefined, 0, 1, 'loop') }).map((r) => {
      const op = r.w ? 'st.shared' as const : 'ld.shared' as const;
      if (r.half === undefined) return { op, buf: r.buf };
      // One half of the element (with a loop: the half the trip's parity picks).
      const bytes = ctx.smem.find((b) => b.name === r.buf.name)!.bytes / 2;
      const offset = r.half !== 'loop' ? num(r.half * bytes) : scope.length ? bin('*', bin('%', v(scope[scope.length - 1]!), num(2)), num(bytes)) : num(0);
      return { op, buf: { ...r.buf, offset }, bytes: num(bytes) };
    }) },
    { weight: 1, arbitrary: fc.constant({ op: 'fence.proxy.async' as const }) },
    { weight: 1, arbitrary: smemArb(ctx, scope).map((src) => ({ op: 'cp.async.bulk.store' as const, src, bytes: num(ctx.smem.find((b) => b.name === src.name)!.bytes), per: 'one' as const })) },
    { weight: 1, arbitrary: fc.constant({ op: 'cp.async.bulk.commit_group' as const }) },
    { weight: 1, arbitrary: fc.record({ n: fc.constantFrom(0, 1).map(num), read: fc.boolean() }).map((r) => ({ op: 'cp.async.bulk.wait_group' as const, n: r.n, read: r.read })) },
    { weight: 2, arbitrary: smemArb(ctx, scope).map((dst) => ({ op: 'cp.async' as const, dst, bytes: num(16) })) },
    { weight: 1, arbitrary: fc.record({ bar: barArb(ctx, scope), noinc: fc.boolean() }).map((r) => ({ op: 'cp.async.mbarrier.arrive' as const, bar: r.bar, noinc: r.noinc })) },
    { weight: 1, arbitrary: fc.constant({ op: 'exit' as const }) },
    // cp.async groups: the copies above join the open group.
    { weight: 1, arbitrary: fc.constant({ op: 'cp.async.commit_group' as const }) },
    { weight: 1, arbitrary: fc.constantFrom(0, 1, -1).map((n) => ({ op: 'cp.async.wait_group' as const, n: num(Math.max(0, n)), all: n < 0 })) },
    { weight: 1, arbitrary: fc.record({ bytes: fc.constantFrom(16, 1024).map(num), tensor: fc.boolean() }).map((r) => ({ op: 'cp.async.bulk.prefetch' as const, tensor: r.tensor, bytes: r.bytes })) },
    { weight: 1, arbitrary: smemArb(ctx, scope).map((src) => ({ op: 'cp.reduce.async.bulk' as const, tensor: false, src, bytes: num(ctx.smem.find((b) => b.name === src.name)!.bytes), per: 'one' as const })) },
  ];
  if (ctx.values) ops.push(...valueOps(ctx, scope));
  if (ctx.cluster > 1) {
    // st.async / red.async and the DSMEM copy: destination and barrier in one CTA (usually the peer).
    const target = fc.tuple(fc.nat(ctx.smem.length - 1), fc.nat(ctx.bars.length - 1), indexArb(1, scope), ctaArb(ctx)).map(([si, bi, index, cta]) => {
      const c = cta ?? bin('^', v('cta'), num(1));
      return { dst: { name: ctx.smem[si]!.name, index, cta: c }, bar: { name: ctx.bars[bi]!.name, index: num(0), cta: c } };
    });
    ops.push({ weight: 2, arbitrary: fc.tuple(target, fc.constantFrom(false, false, true), fc.constantFrom<Per>('thread', 'one')).map(([t, red, per]) => ({ op: 'st.async' as const, red, dst: t.dst, bytes: num(16), bar: t.bar, per })) });
    ops.push({ weight: 1, arbitrary: fc.tuple(target, smemArb(ctx, scope)).map(([t, src]) => ({ op: 'cp.async.bulk.shared::cluster' as const, dst: t.dst, src, bytes: num(1024), bar: t.bar, per: 'one' as const })) });
  }
  if (ctx.arch === 'sm_100a' && ctx.tmem.length) {
    ops.push({ weight: 3, arbitrary: fc.record({ reads: fc.array(smemArb(ctx, scope), { minLength: 1, maxLength: 2 }), acc: fc.nat(ctx.tmem.length - 1) }).map((r) => {
      const t = ctx.tmem[r.acc]!;
      return { op: 'tcgen05.mma' as const, reads: r.reads, acc: { name: t.name, index: num(0) }, shape: { m: 128, n: 128, k: 16 } };
    }) });
    ops.push({ weight: 3, arbitrary: fc.record({ bar: barArb(ctx, scope), multicast: maskArb(ctx) })
      .map((r) => (r.multicast ? { op: 'tcgen05.commit' as const, bar: r.bar, multicast: r.multicast } : { op: 'tcgen05.commit' as const, bar: r.bar })) });
    ops.push({ weight: 1, arbitrary: fc.constant(ctx.tmem[0]!).map((t) => ({ op: 'tcgen05.ld' as const, src: { name: t.name, index: num(0) } })) });
  }
  if (ctx.arch === 'sm_90a') {
    ops.push({ weight: 2, arbitrary: fc.array(smemArb(ctx, scope), { minLength: 1, maxLength: 2 }).map((reads) => ({ op: 'wgmma.mma_async' as const, reads, shape: { m: 64, n: 128, k: 16 } })) });
    ops.push({ weight: 2, arbitrary: fc.constant({ op: 'wgmma.commit_group' as const }) });
    ops.push({ weight: 2, arbitrary: fc.constantFrom(0, 1).map((n) => ({ op: 'wgmma.wait_group' as const, n: num(n) })) });
  }
  if (ctx.sym && ctx.smem[0]!.length === 2) {
    // Each CTA multicasts its own half of a stage (`S0[cta]`); a wgmma reads both halves.
    const s0 = ctx.smem[0]!;
    ops.push({ weight: 2, arbitrary: barArb(ctx, scope).map((bar) => ({ op: 'cp.async.bulk' as const, tensor: true, dst: { name: s0.name, index: v('cta') }, bytes: num(s0.bytes), bar, per: 'one' as const, multicast: num(3) })) });
    if (ctx.arch === 'sm_90a') ops.push({ weight: 1, arbitrary: fc.constant({ op: 'wgmma.mma_async' as const, reads: [{ name: s0.name, index: num(0) }, { name: s0.name, index: num(1) }], shape: { m: 64, n: 128, k: 16 } }) });
  }
  if (ctx.cluster > 1) {
    ops.push({ weight: 1, arbitrary: fc.constant({ op: 'barrier.cluster.arrive' as const }) });
    ops.push({ weight: 1, arbitrary: fc.constant({ op: 'barrier.cluster.wait' as const }) });
  }
  // Named barrier 1; its thread count is set after the roles are known (see kernelArb).
  ops.push({ weight: 1, arbitrary: fc.constant({ op: 'bar.sync' as const, id: num(1), threads: num(0) }) });
  return fc.oneof(...ops);
}

let line = 0;
const at = () => ({ line: ++line, col: 1 });

/** A statement list of at most `max` statements, blocks nested at most `depth` deep. */
function bodyArb(ctx: Ctx, scope: Scope, depth: number, max: number): fc.Arbitrary<Stmt[]> {
  const stmt: fc.Arbitrary<Stmt> = fc.oneof(
    { weight: 8, arbitrary: opArb(ctx, scope).map((op) => ({ s: 'op' as const, op, loc: at() })) },
    ...(depth > 0 ? [
      { weight: 2, arbitrary: fc.tuple(fc.integer({ min: 1, max: 3 }), fc.constant(null)).chain(([trips]) => {
        const name = ['i', 'j'][scope.length] ?? 'k';
        return bodyArb(ctx, [...scope, name], depth - 1, 3).map((body): Stmt => ({ s: 'for', var: name, from: num(0), to: num(trips), body, loc: at() }));
      }) },
      { weight: 2, arbitrary: bodyArb(ctx, scope, depth - 1, 3).map((body): Stmt => ({ s: 'elect', body, loc: at() })) },
      // Per-warp code: the leader warp alone, or every warp but it.
      { weight: 1, arbitrary: fc.tuple(bodyArb(ctx, scope, depth - 1, 2), fc.boolean()).map(([body, lead]): Stmt => ({
        s: 'if', cond: bin(lead ? '==' : '!=', v('warp'), num(0)), then: body, loc: at(),
      })) },
      // Control flow a value steers: the branch a `choose`, a load or an atomic decided.
      ...(ctx.values ? [{ weight: 2, arbitrary: fc.tuple(bodyArb(ctx, scope, depth - 1, 2), fc.boolean()).map(([body, zero]): Stmt => ({
        s: 'if', cond: bin(zero ? '==' : '!=', v('x'), num(0)), then: body, loc: at(),
      })) }] : []),
      ...(ctx.cluster > 1 || scope.length ? [{ weight: 1, arbitrary: fc.tuple(bodyArb(ctx, scope, depth - 1, 2), fc.boolean()).map(([body, onCta]): Stmt => ({
        // Rank-relative code: a condition on the rank that every CTA decides alike.
        s: 'if', cond: onCta || !scope.length ? (ctx.sym ? bin('<', v('cta'), v('ncta')) : bin('==', v('cta'), num(0))) : bin('==', v(scope[scope.length - 1]!), num(0)), then: body, loc: at(),
      })) }] : []),
    ] : []),
  );
  return fc.array(stmt, { minLength: 1, maxLength: max });
}

/** Declarations: arch, cluster size, barrier and buffer arrays; `sym`: a 2-CTA cluster with rank-relative code. */
const ctxArbOf = (sym: boolean): fc.Arbitrary<Ctx> => fc.record({
  arch: fc.constantFrom<Arch>('sm_90a', 'sm_100a'),
  cluster: sym ? fc.constant(2) : fc.constantFrom(1, 1, 2),
  bars: fc.array(fc.constantFrom(1, 2), { minLength: 1, maxLength: 3 }),
  smem: fc.array(fc.tuple(fc.constantFrom(1, 2), bytesArb), { minLength: 1, maxLength: 2 }),
  alias: fc.constantFrom(false, false, true),
  tmem: fc.boolean(),
  // Values turn CTA symmetry off: the rank-relative generator leaves them out.
  values: sym ? fc.constant(false) : fc.constantFrom(false, false, false, true),
  gmem: fc.constantFrom(1, 2),
}).map((r) => ({
  arch: r.arch, cluster: r.cluster, values: r.values, gmem: r.gmem,
  bars: r.bars.map((length, i) => ({ name: `b${i}`, length })),
  smem: [
    ...r.smem.map(([length, bytes], i) => ({ name: `S${i}`, length, bytes })),
    // V: S0's storage in elements of half the size.
    ...(r.alias ? [{ name: 'V', length: 2 * r.smem[0]![0], bytes: r.smem[0]![1] / 2, alias: 'S0' }] : []),
  ],
  tmem: r.arch === 'sm_100a' && r.tmem ? [{ name: 'T', length: 1 }] : [],
  ...(sym ? { sym } : {}),
}));

/** Walks every op of a statement list. */
function eachOp(body: Stmt[], f: (op: Op) => void): void {
  for (const s of body) {
    if (s.s === 'op') f(s.op);
    else if (s.s === 'for' || s.s === 'elect') eachOp(s.body, f);
    else if (s.s === 'if') { eachOp(s.then, f); if (s.else) eachOp(s.else, f); }
  }
}

/**
 * The body with `per=thread` / `per=warp` dropped inside `elect:` blocks (only the elected thread
 * runs such a block: instantiate rejects them there).
 */
function electPerOne(body: Stmt[], inElect = false): Stmt[] {
  return body.map((st): Stmt => {
    if (st.s === 'op') {
      const per = (st.op as { per?: Per }).per;
      if (!inElect || (per !== 'thread' && per !== 'warp')) return st;
      const op = { ...st.op } as Op & { per?: Per };
      delete op.per;
      return { ...st, op };
    }
    if (st.s === 'elect') return { ...st, body: electPerOne(st.body, true) };
    if (st.s === 'for') return { ...st, body: electPerOne(st.body, inElect) };
    if (st.s === 'if') return { ...st, then: electPerOne(st.then, inElect), ...(st.else ? { else: electPerOne(st.else, inElect) } : {}) };
    return st;
  });
}

/** A random small kernel (see the module comment); `sym`: see {@link symmetricClusterKernelArb}. */
const kernelArbOf = (sym: boolean): fc.Arbitrary<Kernel> => ctxArbOf(sym).chain((ctx) => {
  const roleArb = fc.record({
    warps: fc.constantFrom(1, 1, 2, 4),
    per: fc.constantFrom<Per>('thread', 'warp', 'one'),
    where: ctx.cluster > 1 && !sym ? fc.constantFrom<number | null>(null, null, 0, 1) : fc.constant(null),
    instances: fc.constantFrom(1, 1, 1, 2, 3),
    body: bodyArb(ctx, [], 2, 5),
  });
  return fc.tuple(fc.array(roleArb, { minLength: 1, maxLength: 3 }), fc.array(fc.constantFrom(1, 1, 2, 3), { minLength: ctx.bars.length, maxLength: ctx.bars.length }), fc.boolean(),
    fc.constantFrom<'none' | 'one' | 'all'>('none', 'none', 'none', 'one', 'all'), fc.boolean())
    .map(([rs, counts, exactNamed, grid, gInit]): Kernel => {
      const roles: RoleDecl[] = rs.map((r, i) => {
        const body = electPerOne(r.body);
        if (ctx.values) body.unshift({ s: 'let', name: 'x', value: num(0), loc: { line: 1000 + i, col: 2 } });
        const role: RoleDecl = { name: `r${i}`, warps: r.warps, per: r.per, body, loc: { line: 1000 + i, col: 1 } };
        if (r.where !== null) role.where = bin('==', v('cta'), num(r.where));
        if (r.instances > 1) role.instances = num(r.instances);
        return role;
      });
      // Named barrier 1: the threads of every role that uses it (or a wrong count, sometimes).
      let named = 0;
      for (const r of roles) {
        let uses = false;
        eachOp(r.body, (op) => { if (op.op === 'bar.sync') uses = true; });
        if (uses) named += r.warps * 32;
      }
      const threads = exactNamed ? named : Math.max(32, named - 32);
      for (const r of roles) eachOp(r.body, (op) => { if (op.op === 'bar.sync') op.threads = num(threads); });
      const k: Kernel = {
        name: 'gen', arch: ctx.arch, params: [], cluster: num(ctx.cluster),
        barriers: ctx.bars.map((b, i) => ({ name: b.name, length: num(b.length), count: num(counts[i]!), init: 'auto' as const })),
        buffers: [
          ...ctx.smem.map((b) => ({ name: b.name, space: 'smem' as const, length: num(b.length), bytes: num(b.bytes), ...(b.alias ? { alias: { name: b.alias, index: num(0) } } : {}) })),
          ...ctx.tmem.map((b) => ({ name: b.name, space: 'tmem' as const, length: num(b.length), bytes: num(16384) })),
          ...(ctx.values ? [{ name: 'G', space: 'gmem' as const, length: num(ctx.gmem), bytes: num(4), ...(gInit ? { init: num(0) } : {}) }] : []),
          ...(ctx.values && ctx.arch === 'sm_100a' ? [{ name: 'R', space: 'smem' as const, length: num(1), bytes: num(16) }] : []),
        ],
        roles,
      };
      // Two clusters, both resident or one at a time (the residency of values.ts), with global memory only.
      if (ctx.values && grid !== 'none') {
        k.grid = num(2);
        if (grid === 'one') k.resident = num(1);
      }
      return k;
    });
});

/** A random small kernel (see the module comment). */
export const kernelArb: fc.Arbitrary<Kernel> = kernelArbOf(false);

/**
 * A random small 2-CTA cluster kernel whose code is rank-relative, the shape the CTA symmetry
 * reduction identifies (check/cta-symmetry.ts): remote references to the peer (`cta ^ 1`), never
 * a constant rank; multicast to every CTA, the peer or the own CTA; conditions on the rank that
 * every CTA decides alike; roles in every CTA; and, with a two-element `S0`, copies of each CTA's
 * own half `S0[cta]` multicast to both and wgmmas reading both halves.
 */
export const symmetricClusterKernelArb: fc.Arbitrary<Kernel> = kernelArbOf(true);
