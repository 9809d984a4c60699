/**
 * The shapes of an instantiated kernel (machine/program.ts builds them): resolved barrier and
 * buffer arrays, compiled instructions and roles, agents, and the {@link Program} itself.
 */
import type { CompiledExpr } from '../kernel/expr.js';
import type { Expr, Kernel, Op, Per, RoleDecl, SrcLoc } from '../kernel/ir.js';
import type { BufferPlacement, BufferSpace } from './views.js';
import type { ValueLayout } from './values.js';

/** A resolved barrier array (per CTA). */
export interface BarrierInfo {
  name: string;
  decl: number;
  length: number;
  count: number;
  init: 'auto' | 'manual';
  /** CTA rank holding the array, or -1 for every CTA. */
  ctaOnly: number;
  /** Offset of element 0 inside a CTA's barrier block. */
  offset: number;
  /** A single barrier declared without a length: its name has no `[0]`. */
  scalar?: boolean;
  loc?: SrcLoc;
}

/**
 * A resolved buffer array (per CTA): `offset` is the key of element 0 in a CTA's buffer block;
 * `alloc`, `base`, `ctaOnly` and `ranged` place it (see {@link BufferPlacement}).
 */
export interface BufferInfo extends BufferPlacement {
  /** A single buffer declared without a length: its name has no `[0]`. */
  scalar?: boolean;
  /** `gmem`: the value its locations hold at launch (`init=`); absent: uninitialized. */
  init?: number;
  /** TMEM managed by `tcgen05.alloc`: the columns of each element, and the allocation slot of element 0 ({@link Program.tmemCols}). */
  cols?: number;
  tmemSlot?: number;
  loc?: SrcLoc;
}

/** Resolves a reference to a flat key at run time; returns -1 when the index or CTA is out of range. */
export type KeyFn = ((frame: number[]) => number) & {
  /** Why the key is -1 in `frame`: the reference with its evaluated index and CTA rank (messages). */
  describe?: (frame: number[]) => string;
};

/** A compiled operation: the IR op, its multiplicity and closures for its operands. */
export interface OpInstr {
  i: 'op';
  op: Op;
  per: Per;
  loc: SrcLoc;
  /** Barrier key (flat, global), or -1 when out of range. */
  bar?: KeyFn;
  /** Buffer key(s). */
  buf?: KeyFn;
  reads?: KeyFn[];
  /** Integer operands by name (count, bytes, parity, n, id, threads, cycles, multicast, chunks, cta). */
  ints: Record<string, CompiledExpr>;
  /** Slot of `dest` / `token` variables. */
  dest?: number;
  token?: number;
  /** Human-readable operand text for timelines. */
  text: string;
  /** Numeric code of `op.op` ({@link OPC}), for cheap dispatch in hot paths. */
  opc: number;
  /** Index of this instruction among the program's operations (0, 1, … over all roles), for per-instruction tables. */
  uid: number;
}


/**
 * Flat instructions of a compiled role program. `src` of a `set` / `jz` is the IR expression its
 * closure `e` computes (a `jz` falls through when it is non-zero, else jumps to `to`), for the
 * checker's static analyses (check/warp-relative.ts); absent where the closure is no one expression
 * (a `for` loop's test and increment with a `step`).
 */
export type Instr =
  | { i: 'set'; slot: number; e: CompiledExpr; loc: SrcLoc; src?: Expr }
  | { i: 'jmp'; to: number }
  | {
      i: 'jz'; e: CompiledExpr; to: number; loc: SrcLoc; src?: Expr;
      /** The head of a `for` loop: its counter's slot and its bounds (the body runs while the counter is below `to`, above it with a negative `step`). */
      loop?: { slot: number; from: Expr; to: Expr; step?: Expr };
    }
  | OpInstr
  | { i: 'end' };

/** A compiled role. */
export interface RoleCode {
  name: string;
  decl: RoleDecl;
  code: Instr[];
  slots: string[];
  threads: number;
  warps: number;
  /**
   * True when the role runs as one agent per warp (it has more than one warp and some of its code
   * is not a single thread's: see {@link roleSplits}); false: one agent for the whole role.
   */
  split: boolean;
}

/** One agent: one warp of a role instance in one CTA (or the whole instance when the role does not split). */
export interface AgentInfo {
  id: number;
  role: number;
  roleName: string;
  /** Global CTA index (cluster × clusterSize + rank). */
  cta: number;
  rank: number;
  cluster: number;
  instance: number;
  /** Threads this agent runs (the warp's lanes; the role's threads when the role does not split). */
  threads: number;
  /** Warps this agent runs: 1 for a warp of a split role, the role's warps otherwise. */
  warps: number;
  /** Index of the warp within its role instance (0 when the role does not split). */
  warp: number;
  /**
   * Agent that issues the wgmma operations of this agent's warpgroup (warps 4g … 4g+3 of the
   * instance): its warp 4g. `wgmma.mma_async` and `commit_group` are warpgroup-collective (PTX ISA
   * §9.7.15.5): the leader's issue starts the MMA, and a `wait_group` of any warp of the warpgroup
   * waits for the leader's groups. Equal to `id` for leaders and for agents of unsplit roles.
   */
  wgLeader: number;
  /** Display name such as `producer@c0`, `consumer[2]@c1` or, for a warp of a split role, `consumer.w1`. */
  name: string;
}

/** Options of {@link instantiate}. */
export interface InstantiateOptions {
  /**
   * Run every role as one agent whose warps move in lockstep (the machine's model before warps
   * became agents). It misses races between the warps of a role; the bench uses it to show what
   * warps as agents cost. Default false.
   */
  lockstep?: boolean;
}

/** A kernel ready to run: everything the machine needs, immutable. */
export interface Program {
  kernel: Kernel;
  params: Record<string, number>;
  /** {@link InstantiateOptions.lockstep} as given: true when every role runs as one agent. */
  lockstep: boolean;
  clusterSize: number;
  grid: number;
  ctas: number;
  barriers: BarrierInfo[];
  barriersPerCta: number;
  buffers: BufferInfo[];
  /** Buffer keys per CTA: the declared elements, then the byte-range views (views.ts). */
  buffersPerCta: number;
  /**
   * Columns of each allocation slot of a CTA: one slot per element of a TMEM buffer declared with
   * `cols=` (the `tcgen05.alloc` of that element allocates that many columns).
   */
  tmemCols: number[];
  /**
   * True when the kernel allocates Tensor Memory with `.cta_group::2` (PTX ISA §9.7.16.7.1): every
   * allocation is a CTA pair's, so a column held in either CTA of the pair is in use in both.
   */
  tmemPair: boolean;
  /** The key space of a CTA's buffers: views, byte ranges, the overlap table (views.ts). */
  bufferSpace: BufferSpace;
  roles: RoleCode[];
  agents: AgentInfo[];
  /** Display name of a barrier key, such as `full[1]` or `full[1]@c1`. */
  barrierName(key: number): string;
  /**
   * Display name of a buffer key: an element `tile[1]`, a range inside one `tile[1][0:64]` (bytes
   * from the element's start), a range of whole elements `tile[0..1]` (a span, views.ts).
   */
  bufferName(key: number): string;
  /** Decl index and element index of a barrier key. */
  barrierOf(key: number): { info: BarrierInfo; index: number; cta: number };
  bufferOf(key: number): { info: BufferInfo; index: number; cta: number };
  /**
   * The bytes buffer key `key` names: the key of its allocation's first element (in the key's
   * CTA), the byte offset inside that allocation and the length. What every access is.
   */
  bufferRange(key: number): { alloc: number; offset: number; bytes: number };
  /** Whether buffer keys `a` and `b` name overlapping bytes (one CTA, one allocation); a key overlaps itself. */
  buffersOverlap(a: number, b: number): boolean;
  /** Memory cells of values, global locations and launch control (machine/values.ts), or null when the kernel uses none. */
  values: ValueLayout | null;
  /** `choose` variables pinned with `--set NAME=V` (the simulator and the checker take only that value). */
  pins: Record<string, number>;
  /** Clusters that may run at once (`resident=`; the grid when every cluster is resident). */
  resident: number;
}
