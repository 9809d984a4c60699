/**
 * The builder of a role's program ({@link ProgramBuilder}): one method per statement (`let`, `for`,
 * `if`, `elect`) and per operation, named after its PTX mnemonic, each recording the TypeScript
 * line that called it as the statement's source location. The operations of the asynchronous units are
 * {@link AsyncOpsBuilder}'s (builder-async.ts), the other synchronous ones
 * {@link MemoryOpsBuilder}'s (builder-memory.ts); this module has the statements and the mbarrier
 * operations.
 */
import type { ExprLike } from './expr.js';
import type { Op, Per, Stmt } from './ir.js';
import { callerLoc, ex, parseRef } from './builder-refs.js';
import { AsyncOpsBuilder } from './builder-async.js';

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
export class ProgramBuilder extends AsyncOpsBuilder {
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
}
