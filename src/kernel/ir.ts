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
  | { op: 'tcgen05.mma'; reads: BufRef[]; acc: BufRef; shape: MmaShape }
  | { op: 'tcgen05.commit'; bar: BarRef; multicast?: Expr }
  | { op: 'tcgen05.ld'; src: BufRef }
  | { op: 'wgmma.mma_async'; reads: BufRef[]; shape: MmaShape }
  | { op: 'wgmma.commit_group' }
  | { op: 'wgmma.wait_group'; n: Expr }
  | { op: 'cp.async'; dst: BufRef; bytes: Expr }
  | { op: 'cp.async.mbarrier.arrive'; bar: BarRef; noinc: boolean }
  | { op: 'bar.sync'; id: Expr; threads?: Expr }
  | { op: 'bar.arrive'; id: Expr; threads: Expr }
  | { op: 'fence.proxy.async' }
  | { op: 'fence.mbarrier_init' }
  | { op: 'barrier.cluster.arrive' }
  | { op: 'barrier.cluster.wait' }
  | { op: 'ld.shared'; buf: BufRef; bytes?: Expr }
  | { op: 'st.shared'; buf: BufRef; bytes?: Expr }
  | { op: 'work'; cycles: Expr }
  | { op: 'exit' };

/** Mnemonic of an operation (the `op` field). */
export type OpName = Op['op'];

/** Statements of a role's program. */
export type Stmt =
  | { s: 'let'; name: string; value: Expr; loc: SrcLoc }
  | { s: 'for'; var: string; from: Expr; to: Expr; step?: Expr; body: Stmt[]; loc: SrcLoc }
  | { s: 'if'; cond: Expr; then: Stmt[]; else?: Stmt[]; loc: SrcLoc }
  | { s: 'elect'; body: Stmt[]; loc: SrcLoc }
  | { s: 'op'; op: Op; loc: SrcLoc };

/** A named integer parameter with its default (overridable with `--set NAME=VALUE`). */
export interface ParamDecl {
  name: string;
  value: number;
  loc?: SrcLoc;
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
  space: 'smem' | 'tmem';
  length: Expr;
  bytes: Expr;
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
  /** Predicate over `cta` choosing where the role runs; absent: every CTA. */
  where?: Expr;
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
  barriers: BarrierDecl[];
  buffers: BufferDecl[];
  roles: RoleDecl[];
  /** Source file the kernel came from, for locations. */
  file?: string;
  /** Where the kernel is declared (the `kernel` line of a sketch). */
  loc?: SrcLoc;
}
