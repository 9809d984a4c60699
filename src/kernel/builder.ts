/**
 * TypeScript builder for kernels. Reads like the seed chapter's code:
 *
 * ```ts
 * const k = kernel('pipeline', { params: { S: 2, N: 8, TILE: 4096 } });
 * k.barriers('full', 'S', { count: 1 });
 * k.barriers('empty', 'S', { count: 1 });
 * k.smem('tile', 'S', 'TILE');
 * k.role('producer', { warps: 1, per: 'one' }, (r) =>
 *   r.for('i', 0, 'N', (r) => {
 *     r.let('s', 'i % S');
 *     r.wait('empty[s]', '((i / S) & 1) ^ 1');
 *     r.arriveExpectTx('full[s]', 'TILE');
 *     r.tma('tile[s]', 'TILE', 'full[s]');
 *   }));
 * ```
 *
 * Barrier and buffer references are strings `name[index]` with an optional `@cta` suffix for the
 * copy in another CTA of the cluster (`full[s]@1`); expressions are strings (see `expr.ts`),
 * numbers or ASTs. Each statement records the TypeScript line that built it as its source location.
 * Misuse (unparsable reference or expression) throws {@link BuildError} at build time.
 *
 * This module builds the declarations ({@link KernelBuilder}); a role's statements and operations
 * are `builder-role.ts`, references, expressions and source locations `builder-refs.ts`.
 */
import { parseExpr, type ExprLike } from './expr.js';
import type { Arch, BarrierDecl, BufferDecl, Kernel, ParamDecl, Per, RoleDecl, SrcLoc } from './ir.js';
import { argError, BuildError, callerLoc, ex, isRecord, objectArg, parseRef } from './builder-refs.js';
import { ProgramBuilder } from './builder-role.js';
export { BuildError, parseBufRef, parseRef } from './builder-refs.js';
export { ProgramBuilder, type ArriveOpts, type WaitOpts } from './builder-role.js';

/** Options of a buffer declaration. */
export interface BufferOpts {
  /** View another array's storage: `'A'` or `'A[i]'` (from element i); see {@link BufferDecl.alias}. */
  alias?: string;
  /** The CTA rank that holds the array (other CTAs reach it as `name[i]@rank`). */
  cta?: ExprLike;
  /**
   * One buffer declared without a length, as the sketch's `smem tile bytes=N`: reports name it
   * `tile`, not `tile[0]` (the length must be 1); see {@link BufferDecl.scalar}.
   */
  scalar?: boolean;
}

/** Options of {@link kernel}. */
export interface KernelOpts {
  arch?: Arch;
  params?: Record<string, number>;
  cluster?: ExprLike;
  grid?: ExprLike;
  /** Clusters resident at once (`resident=`; absent: all). */
  resident?: ExprLike;
  description?: string;
}

/** Options of a role. */
export interface RoleOpts {
  warps?: number;
  threads?: number;
  per?: Per;
  instances?: ExprLike;
  where?: ExprLike;
}

const stringArg = (fn: string, name: string, v: unknown): void => {
  if (typeof v !== 'string') argError(fn, name, 'a string', v);
};
const functionArg = (fn: string, name: string, v: unknown): void => {
  if (typeof v !== 'function') argError(fn, name, 'a function', v);
};

/** Builds a {@link Kernel}. */
export class KernelBuilder {
  private readonly k: Kernel;

  constructor(name: string, o: KernelOpts = {}) {
    stringArg('kernel', 'name', name);
    objectArg('kernel', 'options', o);
    if (o.arch !== undefined && o.arch !== 'sm_90a' && o.arch !== 'sm_100a') argError('kernel', 'options.arch', "'sm_90a' or 'sm_100a'", o.arch);
    for (const [n, v] of Object.entries(o.params ?? {})) if (!Number.isSafeInteger(v)) argError('kernel', `options.params.${n.slice(0, 40)}`, 'an integer within ±(2^53 − 1)', v);
    const params: ParamDecl[] = Object.entries(o.params ?? {}).map(([n, v]) => ({ name: n, value: v }));
    this.k = { name, arch: o.arch ?? 'sm_100a', params, cluster: ex(o.cluster ?? 1), barriers: [], buffers: [], roles: [] };
    if (o.grid !== undefined) this.k.grid = ex(o.grid);
    if (o.resident !== undefined) this.k.resident = ex(o.resident);
    if (o.description) this.k.description = o.description;
  }

  /** Declares `length` mbarriers named `name`, each expecting `count` arrivals per phase. */
  barriers(name: string, length: ExprLike, o: { count: ExprLike; init?: 'auto' | 'manual'; cta?: ExprLike }): this {
    stringArg('barriers', 'name', name);
    if (!isRecord(o, ['count'])) argError('barriers', 'options', 'an object with a count ({ count: N })', o);
    const d: BarrierDecl = { name, length: ex(length), count: ex(o.count), init: o.init ?? 'auto', loc: callerLoc() };
    if (o.cta !== undefined) d.cta = ex(o.cta);
    this.k.barriers.push(d);
    return this;
  }

  /** Declares one mbarrier named `name` (reports call it `name`, not `name[0]`). */
  barrier(name: string, o: { count: ExprLike; init?: 'auto' | 'manual'; cta?: ExprLike }): this {
    stringArg('barrier', 'name', name);
    if (!isRecord(o, ['count'])) argError('barrier', 'options', 'an object with a count ({ count: N })', o);
    this.barriers(name, 1, o);
    this.k.barriers[this.k.barriers.length - 1]!.scalar = true;
    return this;
  }

  /**
   * Declares `length` shared-memory buffers of `bytes` bytes each; `o.alias` makes them a view of
   * another array's storage, `o.cta` places them in one CTA, `o.scalar` names a single buffer
   * without an index.
   */
  smem(name: string, length: ExprLike, bytes: ExprLike, o: BufferOpts = {}): this {
    this.k.buffers.push(bufferDecl(name, 'smem', length, bytes, o, callerLoc()));
    return this;
  }

  /**
   * Declares `length` tensor-memory buffers of `bytes` bytes each (options as {@link smem}); with
   * `cols` (a number or expression, or `{ cols }`), each is allocated by `tcgen05.alloc` (that many columns).
   */
  tmem(name: string, length: ExprLike, bytes: ExprLike, o: ExprLike | (BufferOpts & { cols?: ExprLike }) = {}): this {
    const opts: BufferOpts & { cols?: ExprLike } = typeof o === 'object' && o !== null && !('k' in o) ? o : { cols: o as ExprLike };
    const { cols, ...rest } = opts;
    this.k.buffers.push({ ...bufferDecl(name, 'tmem', length, bytes, rest, callerLoc()), ...(cols !== undefined ? { cols: ex(cols) } : {}) });
    return this;
  }

  /**
   * Declares `length` global-memory locations (one per launch) of `bytes` each, initialized to
   * `init` (absent: not initialized); `scalar` as for {@link smem}.
   */
  gmem(name: string, length: ExprLike, o: { bytes?: ExprLike; init?: ExprLike; scalar?: boolean } = {}): this {
    const d = bufferDecl(name, 'gmem', length, o.bytes ?? 4, o.scalar ? { scalar: true } : {}, callerLoc());
    if (o.init !== undefined) d.init = ex(o.init);
    this.k.buffers.push(d);
    return this;
  }

  /** Declares a role and builds its program. */
  role(name: string, o: RoleOpts, body: (b: ProgramBuilder) => unknown): this {
    stringArg('role', 'name', name);
    objectArg('role', 'options', o, false);
    functionArg('role', 'body', body);
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new BuildError(`role: name ${JSON.stringify(name.length > 40 ? `${name.slice(0, 40)}…` : name)} is not a name (letters, digits and _, not starting with a digit)`);
    if (this.k.roles.some((r) => r.name === name)) throw new BuildError(`role: a role named '${name}' is declared already`);
    for (const k of ['warps', 'threads'] as const) {
      const v = o[k];
      if (v !== undefined && (!Number.isSafeInteger(v) || v < 1)) argError('role', `options.${k}`, 'a positive integer', v);
    }
    if (o.per !== undefined && o.per !== 'thread' && o.per !== 'warp' && o.per !== 'one') argError('role', 'options.per', "'thread', 'warp' or 'one'", o.per);
    const loc = callerLoc();
    const b = new ProgramBuilder();
    body(b);
    // threads alone: as many warps as those threads fill.
    const warps = o.warps ?? (o.threads !== undefined ? Math.max(1, Math.ceil(o.threads / 32)) : 1);
    const r: RoleDecl = { name, warps, per: o.per ?? 'thread', body: b.body, loc };
    if (o.threads !== undefined) r.threads = o.threads;
    if (o.instances !== undefined) r.instances = ex(o.instances);
    if (o.where !== undefined) r.where = ex(o.where);
    this.k.roles.push(r);
    return this;
  }

  /** The finished kernel. */
  build(): Kernel {
    return this.k;
  }
}

/** A buffer declaration of `space`, its alias and CTA resolved. */
function bufferDecl(name: string, space: 'smem' | 'tmem' | 'gmem', length: ExprLike, bytes: ExprLike, o: BufferOpts, loc: SrcLoc | undefined): BufferDecl {
  const d: BufferDecl = { name, space, length: ex(length), bytes: ex(bytes) };
  if (loc) d.loc = loc;
  if (o.alias !== undefined) {
    const r = parseRef(o.alias);
    if (r.cta) throw new BuildError(`bad alias '${o.alias}': an alias views an array of its own CTA (write 'A' or 'A[i]')`);
    d.alias = { name: r.name, index: r.index };
  }
  if (o.cta !== undefined) d.cta = ex(o.cta);
  if (o.scalar) {
    if (d.length.k !== 'num' || d.length.v !== 1) throw new BuildError(`buffer ${name}: scalar is one buffer named without an index, so its length must be 1`);
    d.scalar = true;
  }
  return d;
}

/** Starts building a kernel. */
export function kernel(name: string, o: KernelOpts = {}): KernelBuilder {
  return new KernelBuilder(name, o);
}

export { parseExpr };
