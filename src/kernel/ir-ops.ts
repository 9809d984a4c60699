/**
 * The operations of the kernel IR (`Op`, by PTX mnemonic) and the small enumerations they use: the
 * vocabulary every front end emits and the machine executes. The containers (kernel, roles,
 * statements, references) are in ir.ts, which re-exports everything here.
 */

import type { BarRef, BufRef, Expr, Per } from './ir.js';

/** Tile shape of an MMA (elements); its duration comes from the timing model. */
export interface MmaShape {
  m: number;
  n: number;
  k: number;
}

/** The operations, by PTX mnemonic. */
export type Op =
  | { op: 'mbarrier.init'; bar: BarRef; count?: Expr }
  | { op: 'mbarrier.inval'; bar: BarRef }
  | {
      op: 'mbarrier.arrive';
      bar: BarRef;
      /** Arrive count operand (default 1). */
      count?: Expr;
      /** `.expect_tx` form: bytes added to the tx-count before the arrive. */
      expectTx?: Expr;
      /** `arrive_drop`. */
      drop?: boolean;
      /** `.noComplete`. */
      noComplete?: boolean;
      /** Variable that receives the token (the `state` result). */
      token?: string;
      per?: Per;
      /**
       * `.release` (PTX default) or `.relaxed` (PTX ISA §9.7.13.15.13). Absent: `.release`.
       */
      sem?: 'release' | 'relaxed';
      /**
       * `.cta` or `.cluster`: the set of threads that observe the release (PTX ISA §9.7.13.15.13;
       * the PTX default is `.cta`). Absent: not written. The checker treats an absent scope on a
       * remote arrive as `.cluster` (what the hand-off needs) and reports it under `--strict`; an
       * explicit `.cta` on another CTA's barrier is the `scope` hazard.
       */
      scope?: 'cta' | 'cluster';
    }
  | { op: 'mbarrier.expect_tx'; bar: BarRef; bytes: Expr; per?: Per }
  | { op: 'mbarrier.complete_tx'; bar: BarRef; bytes: Expr; per?: Per }
  | {
      /**
       * `mbarrier.try_wait.parity` / `test_wait.parity` (or the token forms when `token` is set).
       * Without `dest` it is the retry loop the seed's `T.ptx.mbarrier.try_wait` wraps: it blocks
       * until the phase completes. With `dest`, one test whose result (0/1) goes to `dest`.
       */
      op: 'mbarrier.wait';
      form: 'try_wait' | 'test_wait';
      bar: BarRef;
      parity?: Expr;
      token?: string;
      dest?: string;
      /**
       * `.acquire` (PTX default) or `.relaxed` (PTX ISA §9.7.13.15.16). A relaxed wait that returns
       * true orders nothing: the accesses after it are not ordered after the phase's releases
       * unless an acquire fence (`fence.acq_rel`, `fence.sc`, `fence.acquire`) follows. Absent: `.acquire`.
       */
      sem?: 'acquire' | 'relaxed';
      /**
       * `.cta` or `.cluster`: the scope of the acquire (PTX default `.cta`). An explicit `.cta`
       * acquire is not morally strong with a release by a thread of another CTA (a remote arrive),
       * so it does not synchronize with it (docs/CHECK.md, "Memory model"). Absent: not written.
       */
      scope?: 'cta' | 'cluster';
    }
  | { op: 'mbarrier.pending_count'; token: string; dest: string }
  | {
      /** `cp.async.bulk.tensor` (tensor: true) or `cp.async.bulk` global→shared with complete_tx. */
      op: 'cp.async.bulk';
      tensor: boolean;
      dst: BufRef;
      bytes: Expr;
      bar: BarRef;
      /** `.multicast::cluster` CTA mask; data and complete_tx go to every CTA whose bit is set. */
      multicast?: Expr;
      /** Number of partial complete_tx credits each destination receives (default 1). */
      chunks?: Expr;
      per?: Per;
    }
  | { op: 'cp.async.bulk.store'; src: BufRef; bytes: Expr; per?: Per }
  | { op: 'cp.async.bulk.commit_group' }
  | { op: 'cp.async.bulk.wait_group'; n: Expr; read: boolean }
  | {
      op: 'tcgen05.mma'; reads: BufRef[]; acc: BufRef; shape: MmaShape;
      /**
       * `.cta_group::2`: one MMA of a CTA pair (ranks 2p, 2p + 1), issued by one thread of either:
       * each CTA's accumulator `acc` is written from its own half of the first operand (A) and
       * both CTAs' halves of the others (B), read from both CTAs' shared memory (PTX ISA §9.7.16.5.1).
       */
      pair?: boolean;
    }
  | { op: 'tcgen05.commit'; bar: BarRef; multicast?: Expr }
  | { op: 'tcgen05.ld'; src: BufRef }
  // Tensor Memory management and data movement (PTX ISA §9.7.16.7–§9.7.16.9, §9.7.16.11.1).
  /**
   * `tcgen05.alloc`: allocates the `cols=` columns declared for the TMEM buffer `buf` in its CTA;
   * blocks while too few are free. `pair` (`.cta_group::2`): one warp of each CTA of the pair
   * (ranks 2p, 2p + 1) issues it, and the columns are allocated in both CTAs' Tensor Memory.
   */
  | { op: 'tcgen05.alloc'; buf: BufRef; pair?: boolean }
  /** `tcgen05.dealloc`: frees the columns of the TMEM buffer `buf` (`pair`: in both CTAs of the pair, one warp of each issuing it). */
  | { op: 'tcgen05.dealloc'; buf: BufRef; pair?: boolean }
  /** `tcgen05.relinquish_alloc_permit`: the CTA gives up the right to allocate (`pair`: `.cta_group::2`, for the pair's allocations). */
  | { op: 'tcgen05.relinquish_alloc_permit'; pair?: boolean }
  /** `tcgen05.ld` without its wait (asynchronous; the registers are valid after `tcgen05.wait::ld`). */
  | { op: 'tcgen05.ld.async'; src: BufRef }
  /** `tcgen05.st`: registers to the TMEM buffer `dst`, asynchronous until `tcgen05.wait::st`. */
  | { op: 'tcgen05.st'; dst: BufRef }
  | { op: 'tcgen05.wait::ld' }
  | { op: 'tcgen05.wait::st' }
  /** `tcgen05.cp`: shared memory `src` to TMEM `dst`, asynchronous, in the issuer's tcgen05 order (tracked by commit). */
  | { op: 'tcgen05.cp'; dst: BufRef; src: BufRef }
  /** `tcgen05.shift`: shifts the rows of TMEM `buf` down by one, asynchronous, in the issuer's tcgen05 order. */
  | { op: 'tcgen05.shift'; buf: BufRef }
  | { op: 'tcgen05.fence::before_thread_sync' }
  | { op: 'tcgen05.fence::after_thread_sync' }
  | { op: 'wgmma.mma_async'; reads: BufRef[]; shape: MmaShape }
  | { op: 'wgmma.commit_group' }
  | { op: 'wgmma.wait_group'; n: Expr }
  /**
   * Non-bulk `cp.async` (PTX ISA §9.7.9.25.3.1): `bytes` is the cp-size each thread copies (4, 8 or
   * 16; the sketch and the builder, checked at instantiation), or with `lanes` the cp-size times
   * the copying lanes (the PTX translation, which checks its immediate cp-size itself).
   */
  | { op: 'cp.async'; dst: BufRef; bytes: Expr; lanes?: true }
  /** `per`: the threads that arrive (each once its own earlier cp.async copies landed); absent: the role's default. */
  | { op: 'cp.async.mbarrier.arrive'; bar: BarRef; noinc: boolean; per?: Per }
  // The asynchronous copy family beyond TMA loads and bulk stores (machine/ops/cpasync.ts,
  // stasync.ts, bulk.ts).
  /** `cp.async.commit_group`: closes the thread's open cp.async-group (PTX ISA §9.7.9.25.3.2). */
  | { op: 'cp.async.commit_group' }
  /**
   * `cp.async.wait_group N` (`all: false`) or `cp.async.wait_all` (`all: true`: commit, then wait
   * for 0; `n` is 0): PTX ISA §9.7.9.25.3.3.
   */
  | { op: 'cp.async.wait_group'; n: Expr; all: boolean }
  /**
   * `st.async` / `red.async` (`red: true`) of `bytes` from registers into `dst` (this CTA's or a
   * peer's shared memory), with complete_tx(`bytes`) on `bar`, which must be in `dst`'s CTA
   * (PTX ISA §9.7.9.12, §9.7.13.7). `redop` names the reduction (`add`, `min`, ...) and `redType`
   * its element type (`u32`, ...; only with `redop`, a valid pair of kernel/reduction.ts); text only.
   */
  | { op: 'st.async'; red: boolean; dst: BufRef; bytes: Expr; bar: BarRef; redop?: RedOp; redType?: RedType; per?: Per }
  /**
   * `cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes`: a bulk copy of
   * `bytes` from `src` (this CTA) into `dst` (a peer CTA's shared memory), complete_tx on `bar` in
   * `dst`'s CTA; both sides in the async proxy (PTX ISA §9.7.9.25.4.1).
   */
  | { op: 'cp.async.bulk.shared::cluster'; dst: BufRef; src: BufRef; bytes: Expr; bar: BarRef; per?: Per }
  /**
   * `cp.reduce.async.bulk{.tensor}.global.shared::cta.bulk_group.<redop>`: reads `src` through the
   * async proxy into a global reduction, tracked by bulk async-groups like a bulk store
   * (PTX ISA §9.7.9.25.4.2, §9.7.9.27.1.3). `redop` names the reduction and `redType` its element
   * type (not on the tensor form, whose tensor map gives it; only with `redop`); text only.
   */
  | { op: 'cp.reduce.async.bulk'; tensor: boolean; src: BufRef; bytes: Expr; redop?: RedOp; redType?: RedType; per?: Per }
  /** `cp.async.bulk.prefetch{.tensor}.L2.global`: a hint; no effect on any state, only time (PTX ISA §9.7.9.25.4.3, §9.7.9.27.1.4). */
  | { op: 'cp.async.bulk.prefetch'; tensor: boolean; bytes: Expr }
  | {
      /**
       * `bar.sync` / `barrier.sync.aligned` (aligned, the default) or `barrier.sync` (`aligned:
       * false`, PTX ISA §9.7.13.1). All threads that meet on one generation of an aligned barrier
       * must execute the same instruction (checked per role: two sites of one role meeting is the
       * `aligned-barrier` diagnostic).
       */
      op: 'bar.sync'; id: Expr; threads?: Expr; aligned?: boolean;
    }
  | { /** `bar.arrive` / `barrier.arrive.aligned` (aligned, the default) or `barrier.arrive` (`aligned: false`). */ op: 'bar.arrive'; id: Expr; threads: Expr; aligned?: boolean }
  | { op: 'fence.proxy.async' }
  | { op: 'fence.mbarrier_init' }
  | {
      /**
       * `barrier.cluster.arrive{.release|.relaxed}{.aligned}` (PTX ISA §9.7.13.3). Absent `sem`:
       * `.release` (cluster scope). A `.relaxed` arrive releases nothing: the arriving thread's
       * earlier accesses are ordered before the waiters only through a release fence before it.
       */
      op: 'barrier.cluster.arrive'; sem?: 'release' | 'relaxed'; aligned?: boolean;
    }
  | { /** `barrier.cluster.wait{.acquire}{.aligned}`: always an acquire at cluster scope. */ op: 'barrier.cluster.wait'; aligned?: boolean }
  | {
      /**
       * A thread fence `fence{.sem}.scope` (PTX ISA §9.7.13.4; `membar.{cta,gl,sys}` is `fence.sc`
       * of cta / gpu / sys). `acq_rel` (the default) and `sc` are both a release and an acquire
       * fence; `release` / `acquire` one of them (the `.sync_restrict` forms). In happens-before a
       * release fence makes the relaxed arrives after it release patterns, an acquire fence makes
       * the relaxed waits before it acquire patterns (fence-fence synchronization when both are
       * relaxed); `scope` must include the other thread (`cta`: the same CTA).
       */
      op: 'fence'; sem: 'acq_rel' | 'sc' | 'release' | 'acquire'; scope: 'cta' | 'cluster' | 'gpu' | 'sys';
    }
  /** `ld.shared` (generic read); `dest`: the value cell of the buffer is read into that variable (values.ts). */
  | { op: 'ld.shared'; buf: BufRef; bytes?: Expr; dest?: string }
  /** `st.shared` (generic write); `value`: the small integer stored into the buffer's value cell. */
  | { op: 'st.shared'; buf: BufRef; bytes?: Expr; value?: Expr }
  // Values that steer control flow, global memory and cluster launch control (machine/ops/values.ts, clc.ts).
  /** `NAME = choose LO, HI`: a nondeterministic integer in LO..HI (both included); the checker explores every one. */
  | { op: 'choose'; dest: string; lo: Expr; hi: Expr }
  /** A weak `ld.global` of a global location: a data access that can race (PTX ISA §9.7.9.8); `dest`: its value. */
  | { op: 'ld.global'; buf: BufRef; dest?: string }
  /** A weak `st.global` of `value` (PTX ISA §9.7.9.11): a data access that can race. */
  | { op: 'st.global'; buf: BufRef; value: Expr }
  /** A strong load `ld.relaxed` / `ld.acquire` at `scope` of a global location (PTX ISA §9.7.9.8, §8.4). */
  | { op: 'ld.strong'; buf: BufRef; sem: 'relaxed' | 'acquire'; scope?: MemScope; dest?: string }
  /** A strong store `st.relaxed` / `st.release` of `value` (PTX ISA §9.7.9.11). */
  | { op: 'st.strong'; buf: BufRef; sem: 'relaxed' | 'release'; scope?: MemScope; value: Expr }
  /**
   * `atom` (with `dest`: the old value) or `red` (`red: true`) on a global location: `aop` of the
   * location and `value` (PTX ISA §9.7.13.5, §9.7.13.6); `.relaxed` when no semantics is written.
   * `cas` (compare-and-swap, `atom` only): the location becomes `value` when it equals `compare`.
   */
  | { op: 'atom.global'; buf: BufRef; red: boolean; aop: AtomOp; value: Expr; sem: 'relaxed' | 'acquire' | 'release' | 'acq_rel'; scope?: MemScope; dest?: string; compare?: Expr }
  /**
   * A spin loop of strong loads until the location compares `cmp` with `target` (`while (ld < k);`):
   * blocks until it does; `dest` gets the value that ended the loop.
   */
  | { op: 'spin.global'; buf: BufRef; cmp: SpinCmp; target: Expr; sem: 'relaxed' | 'acquire'; scope?: MemScope; dest?: string }
  /**
   * `clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes{.multicast::cluster::all}.b128`
   * (PTX ISA §9.7.13.17): asynchronously writes a 16-byte response into `dst` and performs
   * complete_tx(16) on `bar` (with `multicast`: in every CTA of the cluster).
   */
  | { op: 'clc.try_cancel'; dst: BufRef; bar: BarRef; multicast: boolean }
  /**
   * `clusterlaunchcontrol.query_cancel.is_canceled` / `.get_first_ctaid` of the response in `src`
   * (the `ld.shared.b128` of the response with the query, PTX ISA §9.7.13.18): a generic read.
   */
  | { op: 'clc.query'; src: BufRef; what: 'is_canceled' | 'first_ctaid'; dest: string }
  | { op: 'work'; cycles: Expr }
  /** What a front end cannot model yet, executed: stops the agent with the `not-modelled` diagnostic carrying `message`. */
  | {
      op: 'trap'; message: string; /** The diagnostic (default `not-modelled`). */ code?: 'not-modelled' | 'barrier-as-data';
      /**
       * The kernel parameters the launch gives no value that this trap stands for (the PTX front
       * end: the instruction reads them, `param_2`, or the field at byte 20 of a struct parameter,
       * `param_0+20`); a driver that reaches it reports the missing input (`--param`), not a
       * finding about the kernel. Absent for every other trap.
       */
      missingParams?: string[];
    }
  | { op: 'exit' };

/** Scope of a strong global-memory operation (PTX ISA §8.5). */
export type MemScope = 'cta' | 'cluster' | 'gpu' | 'sys';
/** The reduction operator of `red.async` and `cp.reduce.async.bulk` (PTX ISA §9.7.13.7, §9.7.9.25.4.2). */
export type RedOp = 'add' | 'min' | 'max' | 'inc' | 'dec' | 'and' | 'or' | 'xor';
/** The element type of a reduction (PTX ISA §9.7.13.7, §9.7.9.25.4.2; which operator takes which: kernel/reduction.ts). */
export type RedType = 'u32' | 's32' | 'u64' | 's64' | 'b32' | 'b64' | 'f16' | 'bf16' | 'f32' | 'f64';
/** The operations of `atom` / `red` that the model computes on small integers. */
export type AtomOp = 'add' | 'exch' | 'min' | 'max' | 'inc' | 'dec' | 'and' | 'or' | 'xor' | 'cas';
/** The comparison that ends a spin loop: `ge` waits until the value is at least the target. */
export type SpinCmp = 'eq' | 'ne' | 'ge' | 'gt' | 'le' | 'lt';

/** Mnemonic of an operation (the `op` field). */
export type OpName = Op['op'];
