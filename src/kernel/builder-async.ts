/**
 * The builder's operations of the asynchronous units ({@link AsyncOpsBuilder}): TMA and bulk
 * copies, bulk stores, reductions and prefetches with their bulk async-groups (PTX ISA
 * §9.7.9.25), tcgen05 MMAs, commits, Tensor Memory allocation, loads, stores, copies, shifts and
 * fences (§9.7.16), wgmma and its groups (§9.7.15), cp.async and its groups (§9.7.9.25.3),
 * `st.async` / `red.async` and the DSMEM copy. Each method records the TypeScript line that called
 * it as the operation's source location (builder-refs.ts `callerLoc`).
 */
import type { ExprLike } from './expr.js';
import type { MmaShape, Op, Per, RedOp, RedType } from './ir.js';
import { argError, ex, pairOpt, parseBufRef, parseRef, redFields, ruled } from './builder-refs.js';
import { cpAsyncSizeProblem, waitGroupProblem } from './op-limits.js';
import { MemoryOpsBuilder } from './builder-memory.js';

/** The asynchronous operations of a role's builder, over its synchronous ones. */
export class AsyncOpsBuilder extends MemoryOpsBuilder {
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
}
