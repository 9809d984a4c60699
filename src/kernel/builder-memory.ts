/**
 * The builder's synchronous operations other than the mbarrier's ({@link MemoryOpsBuilder}, the
 * base of a role's builder): named and cluster barriers (PTX ISA §9.7.13.1, §9.7.13.3), proxy,
 * mbarrier-init and thread fences (§9.7.13.4), shared-memory accesses and the values they carry,
 * busy work and `exit`, `choose`, global-memory loads, stores, atomics and spin loops, and cluster
 * launch control. Each method records the TypeScript line that called it as the operation's
 * source location (builder-refs.ts `callerLoc`).
 */
import type { ExprLike } from './expr.js';
import type { Op, Stmt, AtomOp, MemScope, SpinCmp } from './ir.js';
import { callerLoc, ex, parseBufRef, parseRef } from './builder-refs.js';

/** The statements of a role built so far and its synchronous non-mbarrier operations. */
export class MemoryOpsBuilder {
  /** The statements built so far. */
  readonly body: Stmt[] = [];

  /** Appends operation `op` at the caller's source location. */
  protected push(op: Op): this {
    this.body.push({ s: 'op', op, loc: callerLoc() });
    return this;
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
