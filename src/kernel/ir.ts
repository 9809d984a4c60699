/**
 * The kernel IR: what every front end (TypeScript builder, sketch language, later PTX) produces and
 * the machine runs. Plain, serializable data; names follow PTX.
 *
 * A kernel is a cluster of `cluster` CTAs (launched `grid` times, independent clusters). Each CTA
 * has barrier arrays, shared-memory and TMEM buffers, and warp-specialized roles. A role runs one
 * program on each of its warps, each warp an agent of its own (per CTA, per instance; a warp's
 * lanes execute in lockstep), and each operation says how many threads perform it (`per`: every
 * thread of the warp, one per warp, or one thread of the role), which sets the arrival
 * multiplicity of arrives. The builtins `warp` and `warpgroup` tell the warps apart.
 */

/** A place in a source file (1-based line and column). `file` is absent for builder kernels. */
export interface SrcLoc {
  file?: string;
  line: number;
  col: number;
  /** Column one past the end of the span, when known. */
  endCol?: number;
  /**
   * The source this location was compiled from, as `path:line` (a PTX instruction's CUDA line from
   * its `.loc`, nvcc -lineinfo); absent when unknown.
   */
  origin?: string;
}

/** Binary operators of expressions (C semantics on integers; `/` truncates, `%` takes the dividend's sign). */
export type BinOp = '+' | '-' | '*' | '/' | '%' | '^' | '&' | '|' | '<<' | '>>' | '==' | '!=' | '<' | '<=' | '>' | '>=' | '&&' | '||';

/** An integer expression over parameters, loop and local variables and the builtins `cta`, `instance`, `ncta`. */
export type Expr =
  | { k: 'num'; v: number }
  | { k: 'var'; name: string; loc?: SrcLoc }
  | { k: 'bin'; op: BinOp; a: Expr; b: Expr }
  | { k: 'un'; op: '-' | '!' | '~'; a: Expr };

/** A reference to one barrier of a declared array, optionally in another CTA of the cluster. */
export interface BarRef {
  name: string;
  index: Expr;
  /** CTA rank in the cluster that owns the barrier; absent: the executing CTA. */
  cta?: Expr;
}

/**
 * A reference to one buffer of a declared array, optionally in another CTA, optionally a byte
 * range inside it: the access starts `offset` bytes into the element (`A[s] + 4096` in a sketch,
 * an address `[A_s + 4096]` in PTX) and covers the operation's byte count (its `bytes` operand;
 * an operation without one covers the rest of the element). The machine resolves every access to
 * the triple (allocation, byte offset, byte length) of `Program.bufferRange`.
 */
export interface BufRef {
  name: string;
  index: Expr;
  cta?: Expr;
  /** Byte offset into the element; absent: 0. */
  offset?: Expr;
  /**
   * A front end's proof that `offset` is always a multiple of this many bytes (the PTX front end's
   * address alignment, ptxi/align.ts): when the offset is computed at run time, the machine
   * enumerates a view at each multiple inside the element (machine/views.ts), so that the range is
   * the access's own bytes rather than its whole element.
   */
  offsetStep?: number;
}

/** How many threads of the executing agent perform an operation. */
export type Per = 'thread' | 'warp' | 'one';

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

/** Statements of a role's program. */
export type Stmt =
  | { s: 'let'; name: string; value: Expr; loc: SrcLoc }
  | { s: 'for'; var: string; from: Expr; to: Expr; step?: Expr; body: Stmt[]; loc: SrcLoc }
  | { s: 'if'; cond: Expr; then: Stmt[]; else?: Stmt[]; loc: SrcLoc }
  | { s: 'elect'; body: Stmt[]; loc: SrcLoc }
  | { s: 'op'; op: Op; loc: SrcLoc }
  /**
   * Unstructured control flow (the PTX front end's `bra`): `label` marks a place in the role's
   * top-level statement list, `goto` jumps there (when `cond` is absent or non-zero). Both appear
   * only at the top level of a role's body, never inside `for` / `if` / `elect`.
   */
  | { s: 'label'; name: string; loc: SrcLoc }
  | { s: 'goto'; label: string; cond?: Expr; loc: SrcLoc };

/** A named integer parameter with its default (overridable with `--set NAME=VALUE`). */
export interface ParamDecl {
  name: string;
  value: number;
  loc?: SrcLoc;
  /**
   * Set when the kernel was built for this value and another one cannot be set at instantiation:
   * why (the PTX front end places a shared-memory array's mbarriers at offsets it computed from
   * the parameter, ptxi/launch-const.ts). `instantiate` refuses an override of it with this text.
   */
  fixed?: string;
}

/**
 * A barrier array of `length` mbarriers per CTA, each initialized with `count` expected arrivals.
 * `init: 'auto'` means the kernel's prologue initializes and publishes them (init, fence,
 * CTA/cluster sync) before any role starts; `'manual'`: the program must run `mbarrier.init`.
 */
export interface BarrierDecl {
  name: string;
  length: Expr;
  count: Expr;
  init: 'auto' | 'manual';
  /** CTA rank that holds the array; absent: every CTA. */
  cta?: Expr;
  /** Declared without a length (`barrier done count=1`): one barrier, named `done`, not `done[0]`. */
  scalar?: boolean;
  loc?: SrcLoc;
}

/** A buffer array in shared memory or tensor memory, `bytes` per element. */
export interface BufferDecl {
  name: string;
  /** `gmem`: global memory, one array for the whole launch (every CTA names the same locations). */
  space: 'smem' | 'tmem' | 'gmem';
  length: Expr;
  bytes: Expr;
  /**
   * TMEM only: the columns each element occupies once `tcgen05.alloc` allocates it (a power of two,
   * 32 … 512). Absent: the buffer is not managed (usable without an alloc, as if allocated for the
   * whole kernel).
   */
  cols?: Expr;
  /** Declared without a length (`smem tile bytes=N`): one buffer, named `tile`, not `tile[0]`. */
  scalar?: boolean;
  /**
   * A second view of another array's storage (`alias=A`, `alias=A[i]`): no storage of its own; its
   * element 0 starts at element `index` of array `name` (of the same space), and the whole view
   * must fit inside that array. Accesses through either name conflict where their bytes overlap.
   */
  alias?: { name: string; index: Expr };
  /** CTA rank that holds the array (`cta=N`); absent: every CTA. */
  cta?: Expr;
  /**
   * `smem` only: the bytes of shared memory the array occupies when they are not `length × bytes`
   * (a PTX array cut into whole elements that end past it, less the mbarriers declared inside
   * it); only the per-CTA shared-memory limit reads it.
   */
  storage?: Expr;
  /**
   * `gmem` only: the value every location holds when the launch starts (the host's memset).
   * Absent: not initialized for this launch (a strong read of it is the `global-uninit` hazard).
   */
  init?: Expr;
  loc?: SrcLoc;
}

/**
 * A warp-specialized role: `warps` warps (`threads` threads, default warps × 32) that run `body`.
 * One agent per CTA in `ctas` (default: every CTA), times `instances` (default 1; each instance
 * sees its number in the builtin `instance`). `per` is the default multiplicity of its operations.
 */
export interface RoleDecl {
  name: string;
  warps: number;
  threads?: number;
  per: Per;
  instances?: Expr;
  /** Where `instances` is written (its value's span), for messages about it. */
  instancesLoc?: SrcLoc;
  /** Predicate over `cta` choosing where the role runs; absent: every CTA. */
  where?: Expr;
  /**
   * Every warp issues the operations its code reaches, the one-thread ones included
   * (`mbarrier.init` / `inval`, `tcgen05.mma` / `commit` / `cp` / `shift`): the code itself chose
   * the issuing warp and lane (the PTX front end). Absent: in a role that runs one agent per warp
   * those are warp 0's, the other warps step over them. Its operands are then the front end's
   * registers (`empty[(%r12 - 10240) / 8], %r11`), whose text says nothing without their values:
   * explanations of a state (machine/hang.ts) name the barrier and parity they resolve to.
   */
  asWritten?: boolean;
  body: Stmt[];
  loc?: SrcLoc;
}

/** Target architecture: Hopper (wgmma, no tcgen05) or Blackwell (tcgen05). */
export type Arch = 'sm_90a' | 'sm_100a';

/** A whole kernel. */
export interface Kernel {
  name: string;
  description?: string;
  arch: Arch;
  params: ParamDecl[];
  /** CTAs per cluster (1 … 16). */
  cluster: Expr;
  /** Independent clusters launched (default 1). */
  grid?: Expr;
  /**
   * Co-residency assumption: at most this many clusters of the grid run at once (absent: all).
   * Clusters launch in index order; cluster i becomes resident once fewer than `resident` clusters
   * with a lower index are still running (machine/values.ts).
   */
  resident?: Expr;
  barriers: BarrierDecl[];
  buffers: BufferDecl[];
  roles: RoleDecl[];
  /** Source file the kernel came from, for locations. */
  file?: string;
  /** Where the kernel is declared (the `kernel` line of a sketch). */
  loc?: SrcLoc;
}
