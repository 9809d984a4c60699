/**
 * Instantiation: a {@link Kernel} plus parameter values becomes a {@link Program} — sizes resolved,
 * barriers and buffers given flat keys, every role's statements compiled to a flat instruction list
 * with jumps and closures over a variable frame, and the agents laid out. The arrays are laid out
 * by layout-arrays.ts, the roles compiled by compile-role.ts, the agents laid out by
 * layout-agents.ts; the bounds a launch is held to are launch-limits.ts's.
 *
 * Errors in the kernel (unknown name, non-positive size, unknown parameter) throw
 * {@link KernelError} with the source location of the offending declaration or statement.
 */
import { residentOf, splitPins, valueLayout } from './values.js';
import type { Kernel, Op } from '../kernel/ir.js';
import { compileRole } from './compile-role.js';
export { perThreads, roleReadsWarp, roleSplits, laneSiblings, sliceShared, sliceSharedAt, sliceSiblings } from './roles.js';
import { enumerateViews, keysOverlap, markRanged } from './views.js';
import { argKind, objectArg, plainObjectArg } from '../model/api-args.js';
import type { BufferInfo, InstantiateOptions, OpInstr, Program, RoleCode } from './program-types.js';
export type { BarrierInfo, BufferInfo, KeyFn, OpInstr, Instr, RoleCode, AgentInfo, InstantiateOptions, Program } from './program-types.js';
import { countText, evalStatic, KernelError, MAX_BARRIERS, MAX_BUFFER_KEYS, MAX_CTAS } from './launch-limits.js';
export {
  KernelError, MAX_CTAS, MAX_SMEM_PER_CTA, MAX_TMEM_PER_CTA, MAX_THREADS_PER_CTA, MAX_AGENTS, MAX_BARRIERS, MAX_BUFFER_KEYS, TMEM_COLUMNS, MAX_TMEM_SLOTS,
} from './launch-limits.js';
import { checkCtaMemory, layoutBarriers, layoutBuffers } from './layout-arrays.js';
import { checkThreadsPerCta, layoutAgents } from './layout-agents.js';

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

export { OPC } from './ops/index.js';
export { opText } from './optext.js';

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

/** The error of a launch with more buffer keys than {@link MAX_BUFFER_KEYS}, at its largest array. */
function tooManyKeys(buffers: readonly BufferInfo[], perCta: number, ctas: number, kernel: Kernel): KernelError {
  const big = [...buffers].sort((x, y) => y.length - x.length)[0];
  const n = perCta * ctas;
  return new KernelError(`the launch has ${countText(n)} buffer elements and byte ranges (${perCta.toLocaleString('en-US')} per CTA × ${ctas} CTAs); mbsim simulates at most ${MAX_BUFFER_KEYS.toLocaleString('en-US')}${big ? ` (largest array: ${big.name}[${big.length.toLocaleString('en-US')}])` : ''}`, big?.loc ?? kernel.loc, 'size');
}

/**
 * The parameter values of a launch: the kernel's defaults with `overrides` (which must name
 * declared parameters, be integers and respect a parameter's `fixed` reason), and the `choose`
 * pins among the overrides (values.ts). Throws {@link KernelError}.
 */
function resolveParams(kernel: Kernel, overrides: Record<string, number>): { params: Record<string, number>; pins: ReturnType<typeof splitPins>['pins'] } {
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
  return { params, pins };
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
  const { params, pins } = resolveParams(kernel, overrides);
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
  const seen = new Set<string>();
  const barriers = layoutBarriers(kernel, params, sizeEnv, seen);
  const barriersPerCta = barriers.reduce((n, b) => n + b.length, 0);
  const { buffers, tmemCols, elementsPerCta } = layoutBuffers(kernel, params, sizeEnv, seen, clusterSize);
  markRanged(kernel, buffers, params, clusterSize, grid);
  const barByName = new Map(barriers.map((b) => [b.name, b]));
  const bufByName = new Map(buffers.map((b) => [b.name, b]));
  const ctas = clusterSize * grid;
  checkCtaMemory(kernel, buffers, barriersPerCta, clusterSize);

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
  const agents = layoutAgents(kernel, roles, params, clusterSize, grid);

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

