/**
 * Instantiation: a {@link Kernel} plus parameter values becomes a {@link Program} — sizes resolved,
 * barriers and buffers given flat keys, every role's statements compiled to a flat instruction list
 * with jumps and closures over a variable frame, and the agents laid out.
 *
 * Errors in the kernel (unknown name, non-positive size, unknown parameter) throw
 * {@link KernelError} with the source location of the offending declaration or statement.
 */
import { EvalFault } from '../kernel/arith.js';
import { evalExpr, showExpr } from '../kernel/expr.js';
import { residentOf, splitPins, valueLayout } from './values.js';
import type { Expr, Kernel, Op, RoleDecl, SrcLoc } from '../kernel/ir.js';
import { compileRole } from './compile-role.js';
export { perThreads, roleReadsWarp, roleSplits, laneSiblings, sliceShared, sliceSharedAt, sliceSiblings } from './roles.js';
import { enumerateViews, keysOverlap, markRanged, storageBytes } from './views.js';
import { argKind, objectArg, plainObjectArg } from '../model/api-args.js';
import { MAX_COUNT } from '../model/mbarrier.js';
import type { AgentInfo, BarrierInfo, BufferInfo, InstantiateOptions, OpInstr, Program, RoleCode } from './program-types.js';
export type { BarrierInfo, BufferInfo, KeyFn, OpInstr, Instr, RoleCode, AgentInfo, InstantiateOptions, Program } from './program-types.js';

/** A kernel that cannot be instantiated: the message names the problem, `loc` where it is. */
export class KernelError extends Error {
  constructor(message: string, readonly loc?: SrcLoc, readonly code = 'kernel') {
    super(message);
  }
}

/** Most CTAs one simulation holds: 8 per SM of an H200 (132 SMs). */
export const MAX_CTAS = 1056;
/** Shared memory a CTA can use on Hopper / Blackwell: 227 KiB. */
export const MAX_SMEM_PER_CTA = 227 * 1024;
/** Tensor memory of an SM on Blackwell: 128 lanes × 512 columns × 4 bytes. */
export const MAX_TMEM_PER_CTA = 256 * 1024;
/** Threads a CTA can have: 1024. */
export const MAX_THREADS_PER_CTA = 1024;
/**
 * Most agents one program has: 32 per CTA of the largest launch (a warp of each of 32 warps in
 * {@link MAX_CTAS} CTAs). A CTA may have more (1024 one-thread roles), the launch as a whole not:
 * every agent is a record in every state the checker holds.
 */
export const MAX_AGENTS = MAX_CTAS * 32;
/**
 * Most mbarriers one program has over all its CTAs: 2^18 (each is an object of every state). A
 * CTA's own are bounded by shared memory (8 bytes each, {@link MAX_SMEM_PER_CTA}).
 */
export const MAX_BARRIERS = 1 << 18;
/**
 * Most buffer keys one program has over all its CTAs (declared elements and the byte ranges
 * accessed, views.ts): 2^22; the checker keeps tables indexed by them.
 */
export const MAX_BUFFER_KEYS = 1 << 22;

/** Frame slots of the builtins every program can read. */
export const BUILTINS = ['cta', 'instance', 'ncta', 'clusterid', 'nthreads', 'nwarps', 'warp', 'warpgroup'] as const;

/** Frame slot of the builtin `warp` (the warp's index within its role instance). */
export const WARP_SLOT = 6;
/** Frame slot of the builtin `warpgroup` (`warp / 4`). */
export const WARPGROUP_SLOT = 7;

/**
 * Operations one thread of the role performs whatever their `per`: a split role runs them on its
 * warp 0 only (PTX: `mbarrier.init` / `inval` and `tcgen05.mma` / `commit` are issued by a single
 * thread, CUDA code guards them with `if (threadIdx.x == 0)` or `elect_one_sync()`).
 */
export const SINGLE_THREAD_OPS: ReadonlySet<Op['op']> = new Set<Op['op']>(['mbarrier.init', 'mbarrier.inval', 'tcgen05.mma', 'tcgen05.commit', 'tcgen05.cp', 'tcgen05.shift']);


/** Tensor Memory columns of a CTA (PTX ISA §9.7.16.7.1: 128 lanes × 512 columns of 32 bits). */
export const TMEM_COLUMNS = 512;
/** Managed TMEM buffer elements a CTA may declare (one bit each in the agents' allocation masks). */
export const MAX_TMEM_SLOTS = 30;

export { OPC } from './ops/index.js';
export { opText } from './optext.js';

function evalStatic(e: Expr, params: Record<string, number>, what: string, loc?: SrcLoc): number {
  try {
    return evalExpr(e, (n) => params[n]);
  } catch (err) {
    if (err instanceof EvalFault) throw new KernelError(`${what}: ${err.message}`, loc, 'arith');
    throw new KernelError(`${what}: ${(err as Error).message} (only parameters may appear here)`, loc, 'static-expr');
  }
}

/**
 * The last of `arrays` (sorted by `offset`, as laid out) whose offset is at most `o`: the array a
 * flat key's offset `o` falls in (a binary search: a kernel may declare thousands of arrays).
 */
function lastAtOrBefore<T extends { offset: number }>(arrays: readonly T[], o: number): T {
  let lo = 0;
  let hi = arrays.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (arrays[mid]!.offset <= o) lo = mid;
    else hi = mid - 1;
  }
  return arrays[lo]!;
}

/**
 * A count for a message: with thousands separators, or `more than 9,007,199,254,740,991` past
 * 2^53 − 1, where a double no longer holds it exactly (a product of sizes would print rounded).
 */
function countText(n: number): string {
  return n > Number.MAX_SAFE_INTEGER ? `more than ${Number.MAX_SAFE_INTEGER.toLocaleString('en-US')}` : n.toLocaleString('en-US');
}

/** The error of a launch with more buffer keys than {@link MAX_BUFFER_KEYS}, at its largest array. */
function tooManyKeys(buffers: readonly BufferInfo[], perCta: number, ctas: number, kernel: Kernel): KernelError {
  const big = [...buffers].sort((x, y) => y.length - x.length)[0];
  const n = perCta * ctas;
  return new KernelError(`the launch has ${countText(n)} buffer elements and byte ranges (${perCta.toLocaleString('en-US')} per CTA × ${ctas} CTAs); mbsim simulates at most ${MAX_BUFFER_KEYS.toLocaleString('en-US')}${big ? ` (largest array: ${big.name}[${big.length.toLocaleString('en-US')}])` : ''}`, big?.loc ?? kernel.loc, 'size');
}

/**
 * Instantiates `kernel` with parameter `overrides` (which must name declared parameters).
 * Throws {@link KernelError}.
 */
export function instantiate(kernel: Kernel, overrides: Record<string, number> = {}, options: InstantiateOptions = {}): Program {
  if (!kernel || typeof kernel !== 'object' || !Array.isArray(kernel.params) || !Array.isArray(kernel.roles)) {
    throw new TypeError(`instantiate: expected a Kernel (from parseSketch or the builder), got ${kernel === null ? 'null' : Array.isArray(kernel) ? 'an array' : typeof kernel}`);
  }
  plainObjectArg('instantiate', 'overrides', overrides, 'a plain object of parameter names to integers, { S: 4 } (or left out)');
  objectArg('instantiate', 'options', options, true, ['lockstep']);
  // Null-prototype maps keyed by the kernel's names: `constructor` or `__proto__` are names like any other.
  const params: Record<string, number> = Object.create(null) as Record<string, number>;
  for (const p of kernel.params) params[p.name] = p.value;
  const { params: paramOverrides, pins } = splitPins(kernel, overrides);
  for (const [n, v] of Object.entries(paramOverrides)) {
    if (!Object.hasOwn(params, n)) {
      const known = kernel.params.map((p) => p.name).join(', ') || 'none';
      throw new KernelError(`unknown parameter '${n}' (this kernel has: ${known})`, undefined, 'unknown-param');
    }
    if (!Number.isInteger(v)) throw new KernelError(`parameter ${n} must be an integer, got ${typeof v === 'number' ? v : argKind(v)}`, undefined, 'bad-param');
    const fixed = kernel.params.find((p) => p.name === n)?.fixed;
    if (fixed !== undefined && v !== params[n]) throw new KernelError(`parameter ${n} cannot be set to ${v} here: ${fixed}`, undefined, 'bad-param');
    params[n] = v;
  }
  for (const p of kernel.params) {
    if (!Number.isSafeInteger(params[p.name])) throw new KernelError(`parameter ${p.name} = ${params[p.name]} is outside the integers mbsim represents exactly (±2^53)`, p.loc, 'bad-param');
  }
  const clusterSize = evalStatic(kernel.cluster, params, 'cluster size');
  if (clusterSize < 1 || clusterSize > 16) throw new KernelError(`cluster size ${clusterSize} is outside 1..16`, kernel.loc, 'cluster-size');
  const grid = kernel.grid ? evalStatic(kernel.grid, params, 'grid') : 1;
  if (grid < 1) throw new KernelError(`grid ${grid} must be at least 1`, kernel.loc, 'grid');
  if (clusterSize * grid > MAX_CTAS) throw new KernelError(`the launch has ${(clusterSize * grid).toLocaleString('en-US')} CTAs; mbsim simulates at most ${MAX_CTAS} (8 per SM of an H200) at once`, kernel.loc, 'grid');
  // Before anything is allocated per thread, warp or instance: the threads of every CTA.
  checkThreadsPerCta(kernel, params, clusterSize, grid);
  let resident: number;
  try { resident = residentOf(kernel, params, grid); } catch (err) { throw new KernelError((err as Error).message, kernel.loc, 'resident'); }
  // Sizes and counts may also read the cluster size.
  const sizeEnv: Record<string, number> = Object.assign(Object.create(null) as Record<string, number>, params, { ncta: clusterSize });

  const barriers: BarrierInfo[] = [];
  let off = 0;
  const seen = new Set<string>();
  kernel.barriers.forEach((d, decl) => {
    if (seen.has(d.name)) throw new KernelError(`'${d.name}' is declared twice`, d.loc, 'duplicate');
    seen.add(d.name);
    const length = evalStatic(d.length, sizeEnv, `length of barrier array ${d.name}`, d.loc);
    const count = evalStatic(d.count, sizeEnv, `init count of ${d.name}`, d.loc);
    if (length < 1) throw new KernelError(`barrier array ${d.name} has length ${sizeText(d.length, length)}; it needs at least 1`, d.loc, 'size');
    // The bounds of a literal count in a sketch (E-init-count, lang/lower.ts) and of mbarrier.init
    // (PTX ISA §9.7.13.15.9: 1 .. 2^20 − 1; docs/SEMANTICS.md): a parameter may not make it wrong either.
    if (count < 1 || count > MAX_COUNT) {
      throw new KernelError(`init count of barrier ${d.name} is ${sizeText(d.count, count)}; an mbarrier expects 1 to ${MAX_COUNT.toLocaleString('en-US')} (2^20 - 1) arrivals per phase (PTX ISA mbarrier.init)`, d.loc, 'init-count');
    }
    const ctaOnly = d.cta ? evalStatic(d.cta, params, `CTA of ${d.name}`, d.loc) : -1;
    const info: BarrierInfo = { name: d.name, decl, length, count, init: d.init, ctaOnly, offset: off };
    if (d.scalar && length === 1) info.scalar = true;
    if (d.loc) info.loc = d.loc;
    barriers.push(info);
    off += length;
  });
  const barriersPerCta = off;
  const buffers: BufferInfo[] = [];
  const tmemCols: number[] = [];
  off = 0;
  kernel.buffers.forEach((d, i) => {
    if (seen.has(d.name)) throw new KernelError(`'${d.name}' is declared twice`, d.loc, 'duplicate');
    seen.add(d.name);
    const length = evalStatic(d.length, sizeEnv, `length of buffer array ${d.name}`, d.loc);
    const bytes = evalStatic(d.bytes, sizeEnv, `size of buffer ${d.name}`, d.loc);
    if (length < 1) throw new KernelError(`buffer array ${d.name} has length ${sizeText(d.length, length)}; it needs at least 1`, d.loc, 'size');
    if (bytes < 1) throw new KernelError(`buffer ${d.name} has ${sizeText(d.bytes, bytes)} bytes; it needs at least 1`, d.loc, 'size');
    const ctaOnly = d.cta ? evalStatic(d.cta, params, `CTA of ${d.name}`, d.loc) : -1;
    if (d.cta && (ctaOnly < 0 || ctaOnly >= clusterSize)) throw new KernelError(`buffer array ${d.name} is placed in CTA ${ctaOnly}, outside the cluster of ${clusterSize} (0..${clusterSize - 1})`, d.loc, 'index-range');
    const info: BufferInfo = { name: d.name, space: d.space, length, bytes, offset: off, alloc: i, base: 0, ctaOnly, ranged: false, ...(d.init ? { init: evalStatic(d.init, sizeEnv, `init of ${d.name}`, d.loc) } : {}) };
    if (d.storage && d.space === 'smem') info.storage = evalStatic(d.storage, sizeEnv, `storage of ${d.name}`, d.loc);
    if (d.scalar && length === 1) info.scalar = true;
    if (d.cols) {
      const cols = evalStatic(d.cols, sizeEnv, `columns of TMEM buffer ${d.name}`, d.loc);
      if (d.space !== 'tmem') throw new KernelError(`buffer ${d.name}: cols= is for TMEM buffers (tmem), not shared memory`, d.loc, 'tmem-cols');
      if (cols < 32 || cols > TMEM_COLUMNS || (cols & (cols - 1)) !== 0) {
        throw new KernelError(`TMEM buffer ${d.name} has cols=${cols}: tcgen05.alloc allocates a power of two of at least 32 and at most ${TMEM_COLUMNS} columns (PTX ISA §9.7.16.7.1)`, d.loc, 'tmem-cols');
      }
      if (tmemCols.length + length > MAX_TMEM_SLOTS) throw new KernelError(`TMEM buffers with cols= have more than ${MAX_TMEM_SLOTS} elements per CTA; mbsim tracks at most ${MAX_TMEM_SLOTS}`, d.loc, 'tmem-cols');
      info.cols = cols;
      info.tmemSlot = tmemCols.length;
      for (let i = 0; i < length; i++) tmemCols.push(cols);
    }
    if (d.loc) info.loc = d.loc;
    buffers.push(info);
    off += length;
  });
  placeAliases(kernel, buffers, sizeEnv);
  markRanged(kernel, buffers, params, clusterSize, grid);
  const elementsPerCta = off;
  const barByName = new Map(barriers.map((b) => [b.name, b]));
  const bufByName = new Map(buffers.map((b) => [b.name, b]));
  const ctas = clusterSize * grid;
  // Per-CTA resources of Hopper / Blackwell (CUDA C++ Programming Guide, compute capability 9.0 / 10.0).
  const smemBytes = storageBytes(buffers, 'smem', clusterSize) + barriersPerCta * 8;
  if (smemBytes > MAX_SMEM_PER_CTA) {
    const big = buffers.filter((b) => b.space === 'smem').sort((x, y) => y.length * y.bytes - x.length * x.bytes)[0];
    throw new KernelError(`shared memory per CTA is ${countText(smemBytes)} bytes; a CTA can have at most ${MAX_SMEM_PER_CTA.toLocaleString('en-US')} (227 KiB)${big ? ` (largest: ${big.name}, ${big.length} × ${big.bytes.toLocaleString('en-US')} bytes)` : ''}`, big?.loc ?? kernel.loc, 'smem-size');
  }
  // Managed TMEM (cols=) is checked by columns when it is allocated, not here.
  const tmemBytes = storageBytes(buffers.map((b) => (b.space === 'tmem' && b.cols !== undefined ? { ...b, bytes: 0 } : b)), 'tmem', clusterSize);
  if (tmemBytes > MAX_TMEM_PER_CTA) {
    throw new KernelError(`tensor memory per CTA is ${tmemBytes.toLocaleString('en-US')} bytes; an SM has ${MAX_TMEM_PER_CTA.toLocaleString('en-US')} (128 lanes × 512 columns × 4 bytes)`, buffers.find((b) => b.space === 'tmem')?.loc ?? kernel.loc, 'tmem-size');
  }

  // The views are enumerated into typed arrays of the keys per CTA: a launch already past the
  // bound on its declared elements (a PTX `.shared .b8 buf[1e26]`) is refused before.
  if (elementsPerCta * ctas > MAX_BUFFER_KEYS) throw tooManyKeys(buffers, elementsPerCta, ctas, kernel);
  const bufferSpace = enumerateViews(kernel, buffers, elementsPerCta, params, clusterSize, grid);
  const buffersPerCta = bufferSpace.perCta;
  if (barriersPerCta * ctas > MAX_BARRIERS) {
    const big = [...barriers].sort((x, y) => y.length - x.length)[0]!;
    throw new KernelError(`the launch has ${(barriersPerCta * ctas).toLocaleString('en-US')} mbarriers (${barriersPerCta.toLocaleString('en-US')} per CTA × ${ctas} CTAs); mbsim simulates at most ${MAX_BARRIERS.toLocaleString('en-US')} (largest array: ${big.name}[${big.length.toLocaleString('en-US')}])`, big.loc ?? kernel.loc, 'size');
  }

  if (buffersPerCta * ctas > MAX_BUFFER_KEYS) throw tooManyKeys(buffers, buffersPerCta, ctas, kernel);

  const uids = { next: 0 };
  const roles: RoleCode[] = kernel.roles.map((r) =>
    compileRole(r, params, clusterSize, barByName, bufByName, barriersPerCta, bufferSpace, uids, options.lockstep === true),
  );

  const tmemPair = allocGroups(roles);

  const agents: AgentInfo[] = [];
  for (let cl = 0; cl < grid; cl++) {
    for (let rank = 0; rank < clusterSize; rank++) {
      const cta = cl * clusterSize + rank;
      roles.forEach((rc, ri) => {
        const r = rc.decl;
        const inst = instancesIn(r, params, clusterSize, cl, rank);
        const adding = inst * (rc.split ? Math.ceil(rc.threads / 32) : 1);
        if (agents.length + adding > MAX_AGENTS) {
          throw new KernelError(`the launch has more than ${MAX_AGENTS.toLocaleString('en-US')} agents (warps, or roles that run as one agent) over its ${ctas} CTAs; mbsim simulates at most ${MAX_AGENTS.toLocaleString('en-US')} (32 per CTA of ${MAX_CTAS} CTAs); role ${r.name} alone has ${adding.toLocaleString('en-US')} in CTA ${cta}`, r.instancesLoc ?? r.loc ?? kernel.loc, 'size');
        }
        for (let i = 0; i < inst; i++) {
          const ctaTag = clusterSize > 1 || grid > 1 ? `@c${grid > 1 ? cta : rank}` : '';
          const instTag = inst > 1 ? `[${i}]` : '';
          const base = `${r.name}${instTag}`;
          if (!rc.split) {
            agents.push({
              id: agents.length, role: ri, roleName: r.name, cta, rank, cluster: cl, instance: i,
              threads: rc.threads, warps: rc.warps, warp: 0, wgLeader: agents.length, name: `${base}${ctaTag}`,
            });
            continue;
          }
          const first = agents.length;
          for (let w = 0; w * 32 < rc.threads; w++) {
            agents.push({
              id: agents.length, role: ri, roleName: r.name, cta, rank, cluster: cl, instance: i,
              threads: Math.min(32, rc.threads - 32 * w), warps: 1, warp: w, wgLeader: first + (w & ~3),
              name: `${base}.w${w}${ctaTag}`,
            });
          }
        }
      });
    }
  }
  if (agents.length === 0) throw new KernelError('the kernel has no roles to run (no role, or every role\'s where-condition is false)', kernel.roles[0]?.loc ?? kernel.loc, 'no-roles');

  const ctaTag = (cta: number) => (ctas > 1 ? `@c${grid > 1 ? cta : cta % clusterSize}` : '');
  const barrierOf = (key: number) => {
    const cta = Math.floor(key / barriersPerCta);
    const o = key - cta * barriersPerCta;
    const info = lastAtOrBefore(barriers, o);
    return { info, index: o - info.offset, cta };
  };
  const bufferOf = (key: number) => {
    const cta = Math.floor(key / buffersPerCta);
    const o = key - cta * buffersPerCta;
    if (o >= elementsPerCta) {
      const v = bufferSpace.views[o - elementsPerCta]!;
      return { info: buffers[v.buffer]!, index: v.index, cta };
    }
    const info = lastAtOrBefore(buffers, o);
    return { info, index: o - info.offset, cta };
  };
  const overlap = bufferSpace.overlap;
  const values = valueLayout(kernel, ctas, buffersPerCta, buffers.filter((b) => b.space === 'gmem').map((b) => ({ offset: b.offset, length: b.length, init: b.init ?? null })));
  return {
    kernel, params, lockstep: options.lockstep === true, clusterSize, grid, ctas, barriers, barriersPerCta, buffers, buffersPerCta, tmemCols, tmemPair, bufferSpace, roles, agents, values, pins, resident,
    barrierOf, bufferOf,
    bufferRange(key) {
      const cta = Math.floor(key / buffersPerCta);
      const o = key - cta * buffersPerCta;
      return { alloc: cta * buffersPerCta + buffers[bufferSpace.alloc[o]!]!.offset, offset: bufferSpace.lo[o]!, bytes: bufferSpace.len[o]! };
    },
    buffersOverlap: (a, b) => keysOverlap(overlap, buffersPerCta, a, b),
    barrierName(key) {
      const { info, index, cta } = barrierOf(key);
      return `${info.scalar ? info.name : `${info.name}[${index}]`}${ctaTag(cta)}`;
    },
    bufferName(key) {
      const { info, index, cta } = bufferOf(key);
      const o = key - cta * buffersPerCta;
      const v = o >= elementsPerCta ? bufferSpace.views[o - elementsPerCta]! : null;
      // A range of whole elements (a span, views.ts): `tile[0..1]`; any other range: its bytes from the element's start.
      const whole = v !== null && v.off === 0 && v.len % info.bytes === 0 && !info.scalar;
      const el = whole ? `${info.name}[${index}..${index + v.len / info.bytes - 1}]` : info.scalar ? info.name : `${info.name}[${index}]`;
      return `${el}${v && !whole ? `[${v.off}:${v.off + v.len}]` : ''}${info.space === 'gmem' ? '' : ctaTag(cta)}`;
    },
  };
}

/**
 * Whether the kernel's Tensor Memory allocation is a CTA pair's (`.cta_group::2`). PTX ISA
 * §9.7.16.7.1 wants every `tcgen05.alloc` / `dealloc` / `relinquish_alloc_permit` of a kernel to
 * name the same `.cta_group`: a kernel that mixes them is a kernel error (`cta-group-mix`).
 */
function allocGroups(roles: RoleCode[]): boolean {
  let one: OpInstr | undefined;
  let two: OpInstr | undefined;
  for (const rc of roles) {
    for (const i of rc.code) {
      if (i.i !== 'op') continue;
      const op = i.op;
      if (op.op !== 'tcgen05.alloc' && op.op !== 'tcgen05.dealloc' && op.op !== 'tcgen05.relinquish_alloc_permit') continue;
      if (op.pair) two ??= i;
      else one ??= i;
    }
  }
  if (one && two) {
    const [later, earlier] = one.loc.line > two.loc.line ? [one, two] : [two, one];
    throw new KernelError(`${later.text} and ${earlier.text} (line ${earlier.loc.line}) name different .cta_group: every tcgen05.alloc, dealloc and relinquish_alloc_permit of a kernel must use the same one (PTX ISA §9.7.16.7.1)`, later.loc, 'cta-group-mix');
  }
  return two !== undefined;
}

/**
 * Instances of role `r` in CTA `rank` of cluster `cl`: its `instances` (default 1), or 0 where its
 * where-condition is false. Throws {@link KernelError} for a fault in either or a negative count.
 */
function instancesIn(r: RoleDecl, params: Record<string, number>, clusterSize: number, cl: number, rank: number): number {
  if (r.where) {
    const env = (n: string) => (n === 'cta' ? rank : n === 'ncta' ? clusterSize : n === 'clusterid' ? cl : Object.hasOwn(params, n) ? params[n] : undefined);
    let ok: number;
    try {
      ok = evalExpr(r.where, env);
    } catch (err) {
      throw new KernelError(`role ${r.name}: where-condition: ${(err as Error).message}`, r.loc, err instanceof EvalFault ? 'arith' : 'static-expr');
    }
    if (!ok) return 0;
  }
  if (!r.instances) return 1;
  const at = r.instancesLoc ?? r.loc;
  const inst = evalStatic(r.instances, params, `instances of role ${r.name}`, at);
  if (inst < 0) throw new KernelError(`role ${r.name} has instances=${inst}; the number of instances cannot be negative`, at, 'size');
  return inst;
}

/**
 * Refuses a launch whose CTA has more than {@link MAX_THREADS_PER_CTA} threads (CUDA C++
 * Programming Guide, compute capability 9.0 / 10.0), from the roles' declarations alone: instances
 * × threads of every role in every CTA, before one agent is laid out (a role of 10^8 instances must
 * be a message, not 10^8 agents). Names the role contributing most, at its `instances=`.
 */
function checkThreadsPerCta(kernel: Kernel, params: Record<string, number>, clusterSize: number, grid: number): void {
  for (let cl = 0; cl < grid; cl++) {
    for (let rank = 0; rank < clusterSize; rank++) {
      let threads = 0;
      let big: { r: RoleDecl; inst: number; t: number } | undefined;
      for (const r of kernel.roles) {
        const inst = instancesIn(r, params, clusterSize, cl, rank);
        const t = inst * (r.threads ?? r.warps * 32);
        threads += t;
        if (!big || t > big.t) big = { r, inst, t };
      }
      if (threads > MAX_THREADS_PER_CTA && big) {
        const cta = cl * clusterSize + rank;
        const per = big.r.threads ?? big.r.warps * 32;
        const what = big.inst === 1 ? '' : ` (${big.inst.toLocaleString('en-US')} instances × ${per} threads)`;
        throw new KernelError(
          `CTA ${cta} has ${countText(threads)} threads; a CTA can have at most ${MAX_THREADS_PER_CTA} (32 warps); role ${big.r.name} has ${countText(big.t)}${what}`,
          big.inst === 1 ? big.r.loc ?? kernel.loc : big.r.instancesLoc ?? big.r.loc ?? kernel.loc, 'threads');
      }
    }
  }
}

/**
 * Places every alias array (`alias=A[i]`, mutates `buffers`): in its target's allocation, from
 * the start of element `i`, inside that allocation, in the same space, in the CTAs that hold it.
 */
function placeAliases(kernel: Kernel, buffers: BufferInfo[], sizeEnv: Record<string, number>): void {
  const index = new Map(buffers.map((b, i) => [b.name, i]));
  const done = new Set<number>();
  const place = (i: number, path: number[]): void => {
    if (done.has(i)) return;
    const d = kernel.buffers[i]!;
    const b = buffers[i]!;
    if (!d.alias) { done.add(i); return; }
    const t = index.get(d.alias.name);
    if (t === undefined) throw new KernelError(`${d.name} is an alias of '${d.alias.name}', which is not a buffer array`, d.loc, 'unknown-buffer');
    if (path.includes(t)) throw new KernelError(`${d.name} is an alias of itself (through ${[...path, t].map((j) => buffers[j]!.name).join(' → ')})`, d.loc, 'alias');
    place(t, [...path, t]);
    const tb = buffers[t]!;
    if (tb.space !== b.space) throw new KernelError(`${d.name} (${b.space}) cannot alias ${tb.name} (${tb.space}): an alias lies in the same memory`, d.loc, 'alias');
    if (d.cta) throw new KernelError(`${d.name} is an alias: it lives in the CTAs that hold ${tb.name}, and takes no cta=`, d.loc, 'alias');
    const at = evalStatic(d.alias.index, sizeEnv, `element of ${tb.name} that ${d.name} starts at`, d.loc);
    if (at < 0 || at >= tb.length) throw new KernelError(`${d.name} starts at ${tb.name}[${at}], outside ${tb.name}[${tb.length}]`, d.loc, 'index-range');
    const root = buffers[tb.alloc]!;
    b.alloc = tb.alloc;
    b.base = tb.base + at * tb.bytes;
    b.ctaOnly = tb.ctaOnly;
    const end = b.base + b.length * b.bytes;
    const size = root.length * root.bytes;
    if (end > size) {
      throw new KernelError(`${d.name} (${b.length} × ${b.bytes} bytes from byte ${b.base}) ends at byte ${end}, past the ${size} bytes of ${root.name}: an alias must fit inside the storage it views`, d.loc, 'alias');
    }
    done.add(i);
  };
  buffers.forEach((_, i) => place(i, [i]));
}

function sizeText(e: Expr, v: number): string {
  return e.k === 'num' ? String(v) : `${showExpr(e)} = ${v}`;
}
