/**
 * The shape of an operation module. Each family of operations (`mbarrier.ts`, `bulk.ts`,
 * `wgmma.ts`, `tcgen05.ts`, `barriers.ts`, `cpasync.ts`, `stasync.ts`, `smem.ts`) defines one {@link OpDef} per
 * mnemonic and one {@link AsyncDef} per kind of asynchronous operation it creates, owning in one
 * place: when the operation blocks, what it does, which asynchronous completions it creates and how
 * they progress, which buffer bytes it accesses with which proxy, the role it plays in
 * happens-before, its text, and the key of its issue cost in the simulator's timing table.
 *
 * The {@link Machine} dispatches on `OpInstr.opc` through the table in `index.ts`; drivers (the
 * simulator, the checker) ask the table instead of switching on mnemonics.
 */
import type { Diagnostic } from '../../model/diagnostics.js';
import type { Expr, Op, OpName, SrcLoc } from '../../kernel/ir.js';
import type { AsyncKind } from '../events.js';
import type { AgentInfo, OpInstr, Program } from '../program.js';
import type { AgentState, AsyncOp, MachineState, StepOut } from '../state.js';

/** The IR operation with mnemonic `K`. */
export type OpK<K extends OpName> = Extract<Op, { op: K }>;

/** Which signal an arrive-family operation (local, remote or asynchronous) applies to a barrier. */
export type SignalKind = NonNullable<AsyncOp['remote']>;

/**
 * What the machine lends an operation module while it runs: the program, per-CTA tables, and the
 * functions that report diagnostics, faults and completed phases and that issue asynchronous
 * operations. Implemented by {@link Machine}; a module never keeps state of its own between steps.
 */
export interface OpCtx {
  readonly program: Program;
  /** Threads per CTA (sum over its agents): the default thread count of `bar.sync`. */
  readonly ctaThreads: readonly number[];
  /** Agents of each CTA. */
  readonly ctaAgents: readonly (readonly number[])[];
  /** Agents of each cluster. */
  readonly clusterAgents: readonly (readonly number[])[];
  /** Scratch for the buffer keys an MMA reads (copied once complete). */
  readonly scratchKeys: number[];
  /**
   * Per wgmma leader: the other warps of its warpgroup (null when it has none). A wgmma is one
   * warpgroup-collective operation (`.sync.aligned`, PTX ISA §9.7.15.5.2): it completes only after
   * every warp of the warpgroup has issued it.
   */
  readonly wgPeers: readonly (readonly number[] | null)[];
  /** Scratch for the model's diagnostics in {@link signal}. */
  readonly scratchDiags: Diagnostic[];
  /** Lanes of one warp aggregated into the arrive being signalled (over-arrival messages say so), or 0. */
  laneNote: number;
  /**
   * Operands of the parity wait that the wait's `enabled` evaluated last: barrier key and parity of
   * agent `waitA` in state `waitS`; any step clears `waitS`.
   */
  waitS: MachineState | null;
  waitA: number;
  waitKey: number;
  waitPar: number;
  /** Counts an event (events are counted even when not recorded). */
  emitted(s: MachineState): void;
  /** Reports a diagnostic (kept in `out.diags`, and as an event when events are recorded). */
  diag(s: MachineState, out: StepOut, d: Diagnostic, agent: number, asyncId: number, bar: number, loc?: SrcLoc, buf?: number): void;
  /** Reports a diagnostic that stops agent `a` and the kernel. */
  fault(s: MachineState, a: number, out: StepOut, d: Diagnostic, loc: SrcLoc | undefined, bar: number, buf?: number): void;
  /** Reports model diagnostics; returns true if one trapped (the kernel stops). */
  flush(s: MachineState, out: StepOut, diags: Diagnostic[], agent: number, asyncId: number, bar: number, loc?: SrcLoc): boolean;
  /** Records `n` phase completions of barrier `bar` (its phase has already advanced). */
  phaseDone(s: MachineState, out: StepOut, bar: number, n: number, agent: number, asyncId: number): void;
  /** Faults on an out-of-range barrier or buffer reference of `ins` (`what`: 'barrier' or 'buffer'), explained. */
  keyFault(s: MachineState, a: number, out: StepOut, ins: OpInstr, what: string): void;
  /** CTA (global index) holding barrier key / buffer key. */
  barCta(key: number): number;
  bufCta(key: number): number;
  /** Issues an asynchronous operation (fields in {@link AsyncOp} order; one object shape for all). */
  newAsync(
    s: MachineState, out: StepOut, kind: AsyncKind, agent: number, cta: number, bar: number, buf: number, reads: number[] | null,
    bytes: number, left: number, chunks: number, group: number, count: number, remote: AsyncOp['remote'], targets: number[] | null, loc: SrcLoc,
  ): AsyncOp;
  /** Marks agent `a` finished (emits `exit`, may complete a cluster-barrier round). */
  finish(s: MachineState, a: number, out: StepOut, loc: SrcLoc | undefined): void;
  /** Threads of agent `info` that perform `ins` (its `per`). */
  mult(ins: OpInstr, info: AgentInfo): number;
  /** Arrive instructions `ins` stands for, and the lanes each aggregates. */
  arriveInstrs(ins: OpInstr, info: AgentInfo): number;
  arriveLanes(ins: OpInstr, info: AgentInfo): number;
  /** Key (cta × 16 + id) of the named barrier `ins` names. */
  namedKey(a: number, ins: OpInstr, ag: AgentState): number;
}

/**
 * The happens-before role an agent operation plays, as the checker classifies it:
 * - `acquire`: a wait that observes a barrier phase (mbarrier waits);
 * - `group-wait`: retires the completed operations of the issuer's own asynchronous groups
 *   (`wgmma.wait_group`, `cp.async.bulk.wait_group`, `cp.async.wait_group` / `wait_all`);
 * - `barrier`: synchronizes the threads of the CTA or cluster (`bar.sync`, `barrier.cluster.wait`);
 * - `release`: signals a barrier other agents wait on (arrives, commits, `bar.arrive`, cluster arrive);
 * - `fence`: orders the issuer's own accesses between proxies or publishes an init;
 * - `access`: a shared-memory (or TMEM) load or store of the agent itself;
 * - `issue`: starts an asynchronous operation (its effects come with the async steps);
 * - `local`: touches nothing another agent can observe.
 */
export type SyncClass = 'acquire' | 'group-wait' | 'barrier' | 'release' | 'fence' | 'access' | 'issue' | 'local';

/** Renders a barrier or buffer reference (`full[i]`, `tile@1`), and an expression. */
export interface TextCtx {
  ref(r: { name: string; index: Expr; cta?: Expr }): string;
  expr(e: Expr): string;
}

/** One operation: everything about mnemonic `K` in one place. */
export interface OpDef<K extends OpName = OpName> {
  op: K;
  /** The family module it belongs to (for docs and tables). */
  family: string;
  /**
   * Whether agent `a` resting on `ins` may step now; absent: always (it never blocks). Throws
   * EvalFault when an operand cannot be evaluated (the machine then treats it as enabled).
   */
  enabled?(m: OpCtx, s: MachineState, a: number, ins: OpInstr, ag: AgentState): boolean;
  /**
   * Executes the operation (its `op` event is already emitted). `n`: the threads performing it
   * ({@link OpCtx.mult}); `cached`: `m.waitKey` / `m.waitPar` hold the operands the wait's
   * `enabled` just evaluated. Returns true when the agent moves past the operation (it then runs
   * its local instructions), false when it stays (a second step follows, or it trapped).
   */
  exec(m: OpCtx, s: MachineState, a: number, ins: OpInstr, out: StepOut, n: number, cached: boolean): boolean;
  /**
   * When the step emits the generic `op` event: 'always' (absent), 'never' (the op emits its own,
   * e.g. `wait`), or 'first' (only on the first of its two steps: `bar.sync`, while `sub` < 0).
   */
  opEvent?: 'always' | 'never' | 'first';
  /** The `op` event carries the resolved group count `n` (wait_group). */
  opEventN?: boolean;
  /** The step may mutate the barrier `ins.bar` names (for drivers that copy barriers on write). */
  touchesBar?: boolean;
  /** A shared-memory or TMEM access of the agent itself at the operation: its mode (proxy: generic). */
  access?: 'r' | 'w';
  /** The asynchronous kinds the operation issues (for docs and the checker's reductions). */
  issues?: readonly AsyncKind[];
  /** Happens-before role ({@link SyncClass}). */
  sync: SyncClass;
  /**
   * Its class for the checker's partial-order reduction: `local` steps commute with every step of
   * other agents (they touch only the agent's own record); `issue` steps only start asynchronous
   * operations (independent of other agents' steps except through what those operations later
   * do); `sync` steps read or write shared synchronization state.
   */
  por: 'local' | 'issue' | 'sync';
  /** Source-like text, for timelines and traces. */
  text(op: OpK<K>, t: TextCtx): string;
  /** Key of its issue cost in the simulator's timing table (`sim/timing.ts`, `ISSUE_COST`). */
  timing: string;
}

/** How an asynchronous operation in flight progresses, and what it accesses. */
export interface AsyncDef {
  kind: AsyncKind;
  family: string;
  /** Human-readable name (messages). */
  label: string;
  /** The in-order stream of its issuer it belongs to (tcgen05: `tc`, wgmma: `wg`), or null. */
  stream: 'tc' | 'wg' | null;
  /** Whether `o` may progress now; absent: always. */
  enabled?(s: MachineState, o: AsyncOp, m: OpCtx): boolean;
  /**
   * One step of `o`: returns 'done' when it completed (the machine removes it), 'more' when it
   * stays in flight, 'trap' when a signal trapped (the kernel stopped; `o` stays).
   */
  progress(m: OpCtx, s: MachineState, o: AsyncOp, out: StepOut): 'done' | 'more' | 'trap';
  /** The barrier its progress may mutate: a key, -1 for none, -2 for several. */
  touched(o: AsyncOp): number;
  /**
   * Its access to `o.buf` (written by copies and MMAs, read by bulk stores) with the proxy, or null;
   * `o.reads` (MMA operands) are always read through the async proxy.
   */
  bufAccess: { rw: 'r' | 'w'; proxy: 'generic' | 'async' } | null;
}
