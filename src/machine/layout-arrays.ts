/**
 * The barrier and buffer arrays of one CTA laid out from a kernel's declarations: sizes and init
 * counts evaluated and bounded (PTX ISA mbarrier.init, §9.7.16.7.1 for Tensor Memory columns),
 * flat offsets per CTA, the Tensor Memory slots of `cols=` buffers, alias arrays placed in their
 * target's allocation, and the shared and Tensor Memory a CTA uses checked against what an SM
 * has. Called by `instantiate` (program.ts); errors are {@link KernelError}s at the declaration.
 */
import type { Kernel } from '../kernel/ir.js';
import { MAX_COUNT } from '../model/mbarrier.js';
import { storageBytes } from './views.js';
import type { BarrierInfo, BufferInfo } from './program-types.js';
import { countText, evalStatic, KernelError, MAX_SMEM_PER_CTA, MAX_TMEM_PER_CTA, MAX_TMEM_SLOTS, sizeText, TMEM_COLUMNS } from './launch-limits.js';

/**
 * The barrier arrays of `kernel` with their flat offsets within a CTA (in declaration order).
 * `sizeEnv`: the parameters and `ncta`; `seen` collects the declared names (a name declared twice
 * is an error).
 */
export function layoutBarriers(kernel: Kernel, params: Record<string, number>, sizeEnv: Record<string, number>, seen: Set<string>): BarrierInfo[] {
  const barriers: BarrierInfo[] = [];
  let off = 0;
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
  return barriers;
}

/**
 * The buffer arrays of `kernel` with their flat offsets within a CTA (in declaration order),
 * aliases placed (every array's `alloc` and `base`), the column counts of the Tensor Memory slots
 * (`tmemCols`) and the declared elements per CTA. `seen`: the names declared so far.
 */
export function layoutBuffers(
  kernel: Kernel, params: Record<string, number>, sizeEnv: Record<string, number>, seen: Set<string>, clusterSize: number,
): { buffers: BufferInfo[]; tmemCols: number[]; elementsPerCta: number } {
  const buffers: BufferInfo[] = [];
  const tmemCols: number[] = [];
  let off = 0;
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
  return { buffers, tmemCols, elementsPerCta: off };
}

/**
 * Refuses a CTA whose shared memory (its arrays and 8 bytes per mbarrier) or unmanaged Tensor
 * Memory exceeds an SM's (CUDA C++ Programming Guide, compute capability 9.0 / 10.0); managed
 * Tensor Memory (`cols=`) is checked by columns when it is allocated, not here.
 */
export function checkCtaMemory(kernel: Kernel, buffers: BufferInfo[], barriersPerCta: number, clusterSize: number): void {
  const smemBytes = storageBytes(buffers, 'smem', clusterSize) + barriersPerCta * 8;
  if (smemBytes > MAX_SMEM_PER_CTA) {
    const big = buffers.filter((b) => b.space === 'smem').sort((x, y) => y.length * y.bytes - x.length * x.bytes)[0];
    throw new KernelError(`shared memory per CTA is ${countText(smemBytes)} bytes; a CTA can have at most ${MAX_SMEM_PER_CTA.toLocaleString('en-US')} (227 KiB)${big ? ` (largest: ${big.name}, ${big.length} × ${big.bytes.toLocaleString('en-US')} bytes)` : ''}`, big?.loc ?? kernel.loc, 'smem-size');
  }
  const tmemBytes = storageBytes(buffers.map((b) => (b.space === 'tmem' && b.cols !== undefined ? { ...b, bytes: 0 } : b)), 'tmem', clusterSize);
  if (tmemBytes > MAX_TMEM_PER_CTA) {
    throw new KernelError(`tensor memory per CTA is ${tmemBytes.toLocaleString('en-US')} bytes; an SM has ${MAX_TMEM_PER_CTA.toLocaleString('en-US')} (128 lanes × 512 columns × 4 bytes)`, buffers.find((b) => b.space === 'tmem')?.loc ?? kernel.loc, 'tmem-size');
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
