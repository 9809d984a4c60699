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

export type { MmaShape, Op, MemScope, RedOp, RedType, AtomOp, SpinCmp, OpName } from './ir-ops.js';
import type { Op } from './ir-ops.js';


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
