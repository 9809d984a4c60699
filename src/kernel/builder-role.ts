/**
 * The builder of a role's program ({@link ProgramBuilder}): one method per statement (`let`, `for`,
 * `if`, `elect`) and per operation, named after its PTX mnemonic, each recording the TypeScript
 * line that called it as the statement's source location.
 */
import type { ExprLike } from './expr.js';
import type { MmaShape, Op, Per, Stmt, AtomOp, MemScope, RedOp, RedType, SpinCmp } from './ir.js';
import { argError, callerLoc, ex, pairOpt, parseBufRef, parseRef, redFields, ruled } from './builder-refs.js';
import { cpAsyncSizeProblem, waitGroupProblem } from './op-limits.js';

/** Options of an arrive. */
export interface ArriveOpts {
  count?: ExprLike;
  token?: string;
  per?: Per;
  noComplete?: boolean;
  /** `.release` / `.relaxed` (PTX ISA §9.7.13.15.13). */
  sem?: 'release' | 'relaxed';
  /** `.cta` / `.cluster` (PTX ISA §9.7.13.15.13); see the IR's `mbarrier.arrive` op. */
  scope?: 'cta' | 'cluster';
}

/** Options of the mbarrier waits. */
export interface WaitOpts {
  form?: 'try_wait' | 'test_wait';
  /** A single test whose 0/1 result goes to this variable (else the blocking retry loop). */
  dest?: string;
  /** `.acquire` (default) or `.relaxed` (PTX ISA §9.7.13.15.16). */
  sem?: 'acquire' | 'relaxed';
  /** `.cta` or `.cluster` scope of the acquire. */
  scope?: 'cta' | 'cluster';
}

/** Builds a role's program. */
export class ProgramBuilder {
  /** The statements built so far. */
  readonly body: Stmt[] = [];

  private push(op: Op): this {
    this.body.push({ s: 'op', op, loc: callerLoc() });
    return this;
  }

  private nested(fn: (b: ProgramBuilder) => unknown): Stmt[] {
    const b = new ProgramBuilder();
    fn(b);
    return b.body;
  }

  /** `name = value` (declares a local integer variable on first use). */
  let(name: string, value: ExprLike): this {
    this.body.push({ s: 'let', name, value: ex(value), loc: callerLoc() });
    return this;
  }

  /** `for v in range(from, to[, step])`. */
  for(v: string, from: ExprLike, to: ExprLike, body: (b: ProgramBuilder) => unknown, step?: ExprLike): this {
    const loc = callerLoc();
    const st: Stmt = { s: 'for', var: v, from: ex(from), to: ex(to), body: this.nested(body), loc };
    if (step !== undefined) st.step = ex(step);
    this.body.push(st);
    return this;
  }

  /** `if cond: then else: otherwise`. */
  if(cond: ExprLike, then: (b: ProgramBuilder) => unknown, otherwise?: (b: ProgramBuilder) => unknown): this {
    const loc = callerLoc();
    const st: Stmt = { s: 'if', cond: ex(cond), then: this.nested(then), loc };
    if (otherwise) st.else = this.nested(otherwise);
    this.body.push(st);
    return this;
  }

  /** `elect.sync` block: one elected thread of the agent runs the body. */
  elect(body: (b: ProgramBuilder) => unknown): this {
    const loc = callerLoc();
    this.body.push({ s: 'elect', body: this.nested(body), loc });
    return this;
  }

  /** `mbarrier.init [bar], count` (default: the declared count). */
  init(bar: string, count?: ExprLike): this {
    const op: Op = { op: 'mbarrier.init', bar: parseRef(bar) };
    if (count !== undefined) op.count = ex(count);
    return this.push(op);
  }

  /** `mbarrier.inval [bar]`. */
  inval(bar: string): this {
    return this.push({ op: 'mbarrier.inval', bar: parseRef(bar) });
  }

  private arriveOp(bar: string, o: ArriveOpts, extra: Partial<Extract<Op, { op: 'mbarrier.arrive' }>>): this {
    const op: Extract<Op, { op: 'mbarrier.arrive' }> = { op: 'mbarrier.arrive', bar: parseRef(bar), ...extra };
    if (o.count !== undefined) op.count = ex(o.count);
    if (o.token !== undefined) op.token = o.token;
    if (o.per !== undefined) op.per = o.per;
    if (o.noComplete) op.noComplete = true;
    if (o.sem !== undefined) op.sem = o.sem;
    if (o.scope !== undefined) op.scope = o.scope;
    return this.push(op);
  }

  /** `mbarrier.arrive [bar]{, count}` (`.noComplete` with `noComplete`). */
  arrive(bar: string, o: ArriveOpts = {}): this {
    return this.arriveOp(bar, o, {});
  }

  /** `mbarrier.arrive.expect_tx [bar], bytes`: tx-count += bytes, then one arrival. */
  arriveExpectTx(bar: string, bytes: ExprLike, o: ArriveOpts = {}): this {
    return this.arriveOp(bar, o, { expectTx: ex(bytes) });
  }

  /** `mbarrier.arrive_drop [bar]{, count}` (`.expect_tx` with `bytes`). */
  arriveDrop(bar: string, o: ArriveOpts & { bytes?: ExprLike } = {}): this {
    const extra: Partial<Extract<Op, { op: 'mbarrier.arrive' }>> = { drop: true };
    if (o.bytes !== undefined) extra.expectTx = ex(o.bytes);
    return this.arriveOp(bar, o, extra);
  }

  /** `mbarrier.expect_tx [bar], bytes` (no arrival). */
  expectTx(bar: string, bytes: ExprLike, per?: Per): this {
    const op: Op = { op: 'mbarrier.expect_tx', bar: parseRef(bar), bytes: ex(bytes) };
    if (per) op.per = per;
    return this.push(op);
  }

  /** `mbarrier.complete_tx [bar], bytes`. */
  completeTx(bar: string, bytes: ExprLike, per?: Per): this {
    const op: Op = { op: 'mbarrier.complete_tx', bar: parseRef(bar), bytes: ex(bytes) };
    if (per) op.per = per;
    return this.push(op);
  }

  /**
   * `mbarrier.try_wait.parity` retry loop: blocks until the phase with parity `parity` has
   * completed (returns at once iff the barrier's current parity differs). With `dest`, a single
   * test whose 0/1 result goes to `dest`.
   */
  wait(bar: string, parity: ExprLike, o: WaitOpts = {}): this {
    const op: Op = { op: 'mbarrier.wait', form: o.form ?? 'try_wait', bar: parseRef(bar), parity: ex(parity) };
    if (o.dest) op.dest = o.dest;
    if (o.sem) op.sem = o.sem;
    if (o.scope) op.scope = o.scope;
    return this.push(op);
  }

  /** Token form of the wait: `mbarrier.try_wait [bar], token`. */
  waitToken(bar: string, token: string, o: WaitOpts = {}): this {
    const op: Op = { op: 'mbarrier.wait', form: o.form ?? 'try_wait', bar: parseRef(bar), token };
    if (o.dest) op.dest = o.dest;
    if (o.sem) op.sem = o.sem;
    if (o.scope) op.scope = o.scope;
    return this.push(op);
  }

  /** `mbarrier.pending_count dest, token`. */
  pendingCount(dest: string, token: string): this {
    return this.push({ op: 'mbarrier.pending_count', dest, token });
  }

  /**
   * `cp.async.bulk.tensor` load of `bytes` into `dst` signalling complete_tx on `bar` (a plain
   * `cp.async.bulk` with `tensor: false`). `multicast`: CTA mask; `chunks`: partial credits.
   */
  tma(dst: string, bytes: ExprLike, bar: string, o: { multicast?: ExprLike; chunks?: ExprLike; tensor?: boolean; per?: Per } = {}): this {
    const op: Extract<Op, { op: 'cp.async.bulk' }> = { op: 'cp.async.bulk', tensor: o.tensor ?? true, dst: parseBufRef(dst), bytes: ex(bytes), bar: parseRef(bar) };
    if (o.multicast !== undefined) op.multicast = ex(o.multicast);
    if (o.chunks !== undefined) op.chunks = ex(o.chunks);
    if (o.per) op.per = o.per;
    return this.push(op);
  }

  /** `cp.async.bulk` store (shared → global) reading `src`, tracked by bulk async-groups. */
  bulkStore(src: string, bytes: ExprLike): this {
    return this.push({ op: 'cp.async.bulk.store', src: parseBufRef(src), bytes: ex(bytes) });
  }

  /** `cp.async.bulk.commit_group`. */
  bulkCommit(): this {
    return this.push({ op: 'cp.async.bulk.commit_group' });
  }

  /** `cp.async.bulk.wait_group{.read} n`. */
  bulkWait(n: ExprLike, read = true): this {
    return this.push({ op: 'cp.async.bulk.wait_group', n: ex(n), read });
  }

  /**
   * `tcgen05.mma`: reads the operands `reads` (A first), accumulates into the TMEM buffer `acc`.
   * `{ pair: true }`: `tcgen05.mma.cta_group::2`, the MMA of a CTA pair (each CTA's `acc` from its
   * half of A and both CTAs' halves of the others; the cluster size must be even).
   */
  mma(reads: string[], acc: string, shape: MmaShape, o: { pair?: boolean } = {}): this {
    if (!Array.isArray(reads) || reads.length === 0 || !reads.every((r) => typeof r === 'string')) argError('mma', 'reads', 'a non-empty array of buffer references', reads);
    if (typeof acc !== 'string') argError('mma', 'acc', 'a buffer reference (a string)', acc);
    if (typeof shape !== 'object' || shape === null || ![shape.m, shape.n, shape.k].every((d) => Number.isInteger(d) && d > 0)) argError('mma', 'shape', 'an object { m, n, k } of positive integers', shape);
    return this.push({ op: 'tcgen05.mma', reads: reads.map(parseBufRef), acc: parseBufRef(acc), shape: { m: shape.m, n: shape.n, k: shape.k }, ...pairOpt('mma', o) });
  }

  /** `tcgen05.commit.mbarrier::arrive::one [bar]{, ctaMask}`: one arrive when earlier tcgen05 ops complete. */
  commit(bar: string, multicast?: ExprLike): this {
    const op: Op = { op: 'tcgen05.commit', bar: parseRef(bar) };
    if (multicast !== undefined) op.multicast = ex(multicast);
    return this.push(op);
  }

  /** `tcgen05.ld` from a TMEM buffer, with its `tcgen05.wait::ld` (a synchronous read). */
  tmemLoad(src: string): this {
    return this.push({ op: 'tcgen05.ld', src: parseBufRef(src) });
  }

  // tcgen05 Tensor Memory management, data movement and fences (PTX ISA §9.7.16.7–§9.7.16.11).
  /**
   * `tcgen05.alloc` of the columns declared for TMEM buffer `buf` (`tmem(..., cols)`); blocks while
   * too few are free. `{ pair: true }`: `.cta_group::2`, one warp of each CTA of the pair issues it
   * and the columns are allocated in both.
   */
  tmemAlloc(buf: string, o: { pair?: boolean } = {}): this { return this.push({ op: 'tcgen05.alloc', buf: parseRef(buf), ...pairOpt('tmemAlloc', o) }); }
  /** `tcgen05.dealloc` of TMEM buffer `buf` (`{ pair: true }`: `.cta_group::2`, both CTAs of the pair). */
  tmemDealloc(buf: string, o: { pair?: boolean } = {}): this { return this.push({ op: 'tcgen05.dealloc', buf: parseRef(buf), ...pairOpt('tmemDealloc', o) }); }
  /** `tcgen05.relinquish_alloc_permit`: the CTA allocates no more (`{ pair: true }`: `.cta_group::2`). */
  relinquishAllocPermit(o: { pair?: boolean } = {}): this { return this.push({ op: 'tcgen05.relinquish_alloc_permit', ...pairOpt('relinquishAllocPermit', o) }); }
  /** Asynchronous `tcgen05.ld` (registers valid after {@link tmemWaitLd}). */
  tmemLoadAsync(src: string): this { return this.push({ op: 'tcgen05.ld.async', src: parseRef(src) }); }
  /** `tcgen05.st` to a TMEM buffer (asynchronous until {@link tmemWaitSt}). */
  tmemStore(dst: string): this { return this.push({ op: 'tcgen05.st', dst: parseRef(dst) }); }
  /** `tcgen05.wait::ld`. */
  tmemWaitLd(): this { return this.push({ op: 'tcgen05.wait::ld' }); }
  /** `tcgen05.wait::st`. */
  tmemWaitSt(): this { return this.push({ op: 'tcgen05.wait::st' }); }
  /** `tcgen05.cp` shared memory `src` to TMEM `dst`, in the issuer's tcgen05 order. */
  tmemCopy(dst: string, src: string): this { return this.push({ op: 'tcgen05.cp', dst: parseRef(dst), src: parseRef(src) }); }
  /** `tcgen05.shift` of TMEM `buf`, in the issuer's tcgen05 order. */
  tmemShift(buf: string): this { return this.push({ op: 'tcgen05.shift', buf: parseRef(buf) }); }
  /** `tcgen05.fence::before_thread_sync` (`after` false) or `::after_thread_sync` (`after` true). */
  tcFence(after: boolean): this { return this.push({ op: after ? 'tcgen05.fence::after_thread_sync' : 'tcgen05.fence::before_thread_sync' }); }

  /** `wgmma.mma_async` reading smem operands `reads`. */
  wgmma(reads: string[], shape: MmaShape): this {
    return this.push({ op: 'wgmma.mma_async', reads: reads.map(parseBufRef), shape });
  }

  /** `wgmma.commit_group`. */
  wgmmaCommit(): this {
    return this.push({ op: 'wgmma.commit_group' });
  }

  /** `wgmma.wait_group n`. */
  wgmmaWait(n: ExprLike): this {
    return this.push({ op: 'wgmma.wait_group', n: ex(n) });
  }

  /** `cp.async` (non-bulk) of `bytes` (4, 8 or 16: the cp-size of each thread, PTX ISA §9.7.9.25.3.1) into `dst`. */
  cpAsync(dst: string, bytes: ExprLike): this {
    return this.push({ op: 'cp.async', dst: parseBufRef(dst), bytes: ruled('cpAsync', ex(bytes), cpAsyncSizeProblem) });
  }

  /** `cp.async.mbarrier.arrive{.noinc} [bar]`. */
  cpAsyncArrive(bar: string, noinc = false): this {
    return this.push({ op: 'cp.async.mbarrier.arrive', bar: parseRef(bar), noinc });
  }

  /** `cp.async.commit_group`: closes this thread's open cp.async-group. */
  cpAsyncCommit(): this {
    return this.push({ op: 'cp.async.commit_group' });
  }

  /** `cp.async.wait_group n` (n ≥ 0, PTX ISA §9.7.9.25.3.3), or `cp.async.wait_all` when `n` is `'all'`. */
  cpAsyncWait(n: ExprLike | 'all'): this {
    return this.push(n === 'all' ? { op: 'cp.async.wait_group', n: ex(0), all: true } : { op: 'cp.async.wait_group', n: ruled('cpAsyncWait', ex(n), waitGroupProblem), all: false });
  }

  /** `st.async` (`red.async` with `red`; `redop`, `redType`: `red.async.add.u32`, PTX ISA §9.7.13.7) of `bytes` into `dst` (`buf[0]@1`), complete_tx on `bar` in `dst`'s CTA. */
  stAsync(dst: string, bytes: ExprLike, bar: string, o: { red?: boolean; redop?: RedOp; redType?: RedType; per?: Per } = {}): this {
    const op: Extract<Op, { op: 'st.async' }> = { op: 'st.async', red: o.red ?? false, dst: parseRef(dst), bytes: ex(bytes), bar: parseRef(bar) };
    Object.assign(op, redFields('stAsync', 'red.async', o));
    if (o.per) op.per = o.per;
    return this.push(op);
  }

  /** `cp.async.bulk.shared::cluster.shared::cta`: `bytes` from `src` (this CTA) into `dst` (a peer's), complete_tx on `bar` there. */
  dsmemCopy(dst: string, src: string, bytes: ExprLike, bar: string): this {
    return this.push({ op: 'cp.async.bulk.shared::cluster', dst: parseRef(dst), src: parseRef(src), bytes: ex(bytes), bar: parseRef(bar) });
  }

  /** `cp.reduce.async.bulk{.tensor}{.redop}{.redType}` shared → global reading `src`, tracked by bulk async-groups (PTX ISA §9.7.9.25.4.2). */
  bulkReduce(src: string, bytes: ExprLike, o: { tensor?: boolean; redop?: RedOp; redType?: RedType } = {}): this {
    const op: Extract<Op, { op: 'cp.reduce.async.bulk' }> = { op: 'cp.reduce.async.bulk', tensor: o.tensor ?? false, src: parseRef(src), bytes: ex(bytes) };
    Object.assign(op, redFields('bulkReduce', op.tensor ? 'cp.reduce.async.bulk.tensor' : 'cp.reduce.async.bulk', o));
    return this.push(op);
  }

  /** `cp.async.bulk.prefetch{.tensor}` of `bytes`: time only. */
  bulkPrefetch(bytes: ExprLike, tensor = false): this {
    return this.push({ op: 'cp.async.bulk.prefetch', tensor, bytes: ex(bytes) });
  }

  /**
   * `bar.sync id{, threads}` (named barrier; default count: every thread of the CTA). `aligned:
   * false` is `barrier.sync` (PTX ISA §9.7.13.1: `bar.sync` is `barrier.sync.aligned`).
   */
  barSync(id: ExprLike, threads?: ExprLike, o: { aligned?: boolean } = {}): this {
    const op: Op = { op: 'bar.sync', id: ex(id) };
    if (threads !== undefined) op.threads = ex(threads);
    if (o.aligned === false) op.aligned = false;
    return this.push(op);
  }

  /** `bar.arrive id, threads` (counts, does not block); `aligned: false` is `barrier.arrive`. */
  barArrive(id: ExprLike, threads: ExprLike, o: { aligned?: boolean } = {}): this {
    const op: Op = { op: 'bar.arrive', id: ex(id), threads: ex(threads) };
    if (o.aligned === false) op.aligned = false;
    return this.push(op);
  }

  /** `fence.proxy.async`. */
  fenceProxyAsync(): this {
    return this.push({ op: 'fence.proxy.async' });
  }

  /** `fence.mbarrier_init.release.cluster`. */
  fenceMbarrierInit(): this {
    return this.push({ op: 'fence.mbarrier_init' });
  }

  /** `barrier.cluster.arrive{.release|.relaxed}{.aligned}` (PTX ISA §9.7.13.3; default `.release`). */
  clusterArrive(o: { sem?: 'release' | 'relaxed'; aligned?: boolean } = {}): this {
    const op: Op = { op: 'barrier.cluster.arrive' };
    if (o.sem) op.sem = o.sem;
    if (o.aligned) op.aligned = true;
    return this.push(op);
  }

  /** `barrier.cluster.wait{.acquire}{.aligned}`. */
  clusterWait(o: { aligned?: boolean } = {}): this {
    const op: Op = { op: 'barrier.cluster.wait' };
    if (o.aligned) op.aligned = true;
    return this.push(op);
  }

  /**
   * A thread fence `fence.sem.scope` (PTX ISA §9.7.13.4): `acq_rel` (default) or `sc` orders both
   * ways; `release` / `acquire` one way. It turns the relaxed arrives after it into releases and
   * the relaxed waits before it into acquires, for threads inside `scope`.
   */
  fence(scope: 'cta' | 'cluster' | 'gpu' | 'sys', sem: 'acq_rel' | 'sc' | 'release' | 'acquire' = 'acq_rel'): this {
    return this.push({ op: 'fence', sem, scope });
  }

  /** `ld.shared` of a buffer (generic-proxy read); `bytes`: the range's length (default: the rest of the element). */
  read(buf: string, bytes?: ExprLike): this {
    return this.push({ op: 'ld.shared', buf: parseBufRef(buf), ...(bytes !== undefined ? { bytes: ex(bytes) } : {}) });
  }

  /** `st.shared` to a buffer (generic-proxy write); `bytes`: the range's length (default: the rest of the element). */
  write(buf: string, bytes?: ExprLike): this {
    return this.push({ op: 'st.shared', buf: parseBufRef(buf), ...(bytes !== undefined ? { bytes: ex(bytes) } : {}) });
  }

  /** Busy work for `cycles` cycles (no synchronization). */
  work(cycles: ExprLike): this {
    return this.push({ op: 'work', cycles: ex(cycles) });
  }

  /** `exit`. */
  exit(): this {
    return this.push({ op: 'exit' });
  }

  // Values, global memory and cluster launch control (docs/LANGUAGE.md §7; machine/ops/values.ts, clc.ts).
  /** `choose v in range(lo, hi)`: a nondeterministic `v` in lo .. hi − 1 (the checker explores each). */
  choose(v: string, lo: ExprLike, hi: ExprLike): this {
    return this.push({ op: 'choose', dest: v, lo: ex(lo), hi: { k: 'bin', op: '-', a: ex(hi), b: ex(1) } });
  }

  /** `dest = ld.shared buf`: reads the value a buffer element carries. */
  readValue(dest: string, buf: string): this {
    return this.push({ op: 'ld.shared', buf: parseBufRef(buf), dest });
  }

  /** `st.shared buf value=v`: writes a value into a buffer element. */
  writeValue(buf: string, value: ExprLike): this {
    return this.push({ op: 'st.shared', buf: parseBufRef(buf), value: ex(value) });
  }

  /** A load of the gmem location `g`: weak (`ld.global`) or strong at `scope`; `dest` gets its value. */
  ldGlobal(g: string, o: { dest?: string; sem?: 'weak' | 'relaxed' | 'acquire'; scope?: MemScope } = {}): this {
    const sem = o.sem ?? 'weak';
    const d = o.dest !== undefined ? { dest: o.dest } : {};
    return this.push(sem === 'weak' ? { op: 'ld.global', buf: parseBufRef(g), ...d } : { op: 'ld.strong', buf: parseBufRef(g), sem, scope: o.scope ?? 'gpu', ...d });
  }

  /** A store of `value` into the gmem location `g`: weak (`st.global`) or strong at `scope`. */
  stGlobal(g: string, value: ExprLike, o: { sem?: 'weak' | 'relaxed' | 'release'; scope?: MemScope } = {}): this {
    const sem = o.sem ?? 'weak';
    return this.push(sem === 'weak' ? { op: 'st.global', buf: parseBufRef(g), value: ex(value) } : { op: 'st.strong', buf: parseBufRef(g), value: ex(value), sem, scope: o.scope ?? 'gpu' });
  }

  /** `atom` (with `dest`: the old value) or `red` (`red: true`) of `aop` on the gmem location `g`. */
  atom(g: string, aop: AtomOp, value: ExprLike, o: { dest?: string; red?: boolean; sem?: 'relaxed' | 'acquire' | 'release' | 'acq_rel'; scope?: MemScope } = {}): this {
    const op: Extract<Op, { op: 'atom.global' }> = { op: 'atom.global', buf: parseBufRef(g), red: o.red ?? false, aop, value: ex(value), sem: o.sem ?? 'relaxed', scope: o.scope ?? 'gpu' };
    if (o.dest !== undefined) op.dest = o.dest;
    return this.push(op);
  }

  /** A spin loop of strong loads until the gmem location `g` compares `cmp` with `target`. */
  spin(g: string, cmp: SpinCmp, target: ExprLike, o: { dest?: string; sem?: 'relaxed' | 'acquire'; scope?: MemScope } = {}): this {
    const op: Extract<Op, { op: 'spin.global' }> = { op: 'spin.global', buf: parseBufRef(g), cmp, target: ex(target), sem: o.sem ?? 'acquire', scope: o.scope ?? 'gpu' };
    if (o.dest !== undefined) op.dest = o.dest;
    return this.push(op);
  }

  /**
   * `clusterlaunchcontrol.try_cancel` writing its 16-byte response into `resp` (a buffer of fewer
   * bytes is a KernelError when the kernel is instantiated, PTX ISA §9.7.13.17), complete_tx(16) on `bar`.
   */
  tryCancel(resp: string, bar: string, multicast = false): this {
    return this.push({ op: 'clc.try_cancel', dst: parseRef(resp), bar: parseRef(bar), multicast });
  }

  /** `clusterlaunchcontrol.query_cancel.is_canceled` / `.get_first_ctaid` of the response in `resp` into `dest`. */
  queryCancel(dest: string, resp: string, what: 'is_canceled' | 'first_ctaid' = 'is_canceled'): this {
    return this.push({ op: 'clc.query', src: parseRef(resp), what, dest });
  }
}
