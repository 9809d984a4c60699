/**
 * Byte ranges of buffers: where each buffer array lives (its allocation, an alias of another
 * array's storage, one CTA only), the byte ranges that buffer references name (`A[s] + 4096` with
 * the operation's byte count), and which buffer keys overlap.
 *
 * Every access resolves to a buffer key. Keys `0 … elements − 1` of a CTA are the declared
 * elements, as always; an allocation that some reference addresses by a byte range, or that an
 * alias views, also gets one key per distinct range its references name (its *views*), enumerated
 * here before the run from the parameters, the per-warp builtins (`cta`, `instance`, `warp`, …) and
 * the variables of loops with constant bounds,
 * so that every driver (sequential or parallel search, simulator) sees the same keys. Two keys
 * conflict when they lie in one CTA, in one allocation, and their bytes overlap; a program without
 * ranges or aliases has no overlap table, and a key conflicts only with itself (the checker's fast
 * path). A range the enumeration cannot fix before the run (its offset reads a local variable, or a
 * loop variable whose bounds are computed) is taken as its whole element: conflicts are then
 * over-reported, never missed; unless a front end proved the offset a multiple of some bytes
 * (`BufRef.offsetStep`, PTX's address alignment), when each multiple inside the element is a view.
 *
 * Shared memory is one contiguous byte space (PTX ISA §9.7.9.25.5.1, `cp.async.bulk.tensor`: the
 * box is written contiguously into shared memory from the destination address; §9.7.9.25.4.1 for
 * the bulk copies' `size` bytes): a range of a shared-memory array that runs past the end of its
 * element covers the next elements of the same allocation (a 16 KiB TMA box landing in an array
 * cut into 8 KiB elements writes two of them). Such an allocation *spans*: its ranges are views
 * whose bytes cross element boundaries, and it has one more key, the whole allocation, which a
 * spanning range the enumeration did not fix resolves to (over-reported, never missed). A range
 * that runs past the end of its allocation is out of range, as one past its element is in tensor
 * and global memory.
 */
import { evalExpr, exprNames } from '../kernel/expr.js';
import type { BufRef, Expr, Kernel, Op, RoleDecl, Stmt } from '../kernel/ir.js';

/** A resolved buffer array's placement: filled in by {@link layoutBuffers}. */
export interface BufferPlacement {
  name: string;
  space: 'smem' | 'tmem' | 'gmem';
  length: number;
  bytes: number;
  /** Key of element 0 inside a CTA's buffer block. */
  offset: number;
  /** Index (in the program's buffer list) of the array that owns the storage: itself unless an alias. */
  alloc: number;
  /** Byte offset of element 0 inside that allocation. */
  base: number;
  /** CTA rank that holds the array, or -1 for every CTA. */
  ctaOnly: number;
  /** Bytes of shared memory it occupies when not `length × bytes` (ir.ts `BufferDecl.storage`). */
  storage?: number;
  /** True when its allocation has views or aliases: references to it resolve to byte ranges. */
  ranged: boolean;
  /** True when a range of its allocation may run past the end of its element (shared memory only): see the module comment. */
  spans?: boolean;
}

/** A byte range of one element that some reference names (a view key). */
export interface ViewInfo {
  /** Index of the array in the program's buffer list. */
  buffer: number;
  index: number;
  /** Byte offset inside the element and length. */
  off: number;
  len: number;
}

/** The key space of a CTA's buffers: elements, then views; per key its allocation and byte range. */
export interface BufferSpace {
  /** Keys per CTA: elements then views. */
  perCta: number;
  views: ViewInfo[];
  /** Per CTA-local key: allocation (array index), first byte and length inside the allocation. */
  alloc: Int32Array;
  lo: Int32Array;
  len: Int32Array;
  /** `perCta × perCta` table: 1 where two CTA-local keys overlap; null when no key has a range. */
  overlap: Uint8Array | null;
  /** View key (CTA-local) of (element key, offset, length), by {@link viewId}. */
  viewKey: Map<number, number>;
  /**
   * Per spanning allocation (by the index of the array that owns it): its bytes (elements × bytes
   * per element) and the CTA-local key of the whole allocation.
   */
  spans: Map<number, { end: number; whole: number }>;
}

/** One more than the most bytes of an element that view ids encode (a CTA's tensor memory, 256 KiB, is the largest). */
const SPAN = (1 << 18) + 1;
/** Elements per CTA that view ids encode exactly (below 2^53); beyond, no views (every range is its whole element). */
const MAX_VIEW_ELEMENTS = Math.floor(Number.MAX_SAFE_INTEGER / (SPAN * SPAN));

/** The number that names the range (`off`, `len`) of CTA-local element key `el` in {@link BufferSpace.viewKey}. */
export function viewId(el: number, off: number, len: number): number {
  return (el * SPAN + off) * SPAN + len;
}

/** Builtins whose values the enumeration knows per agent (with their ranges, see {@link enumerateViews}). */
const STATIC_BUILTINS = new Set(['cta', 'ncta', 'clusterid', 'instance', 'warp', 'warpgroup', 'nwarps', 'nthreads']);
/** Most environments one reference's enumeration tries before it gives up (takes the whole element). */
const MAX_ENVS = 4096;

/** The buffer references of an operation, with the byte count that sets each one's length (absent: the rest of the element). */
export function opBufRefs(op: Op): { ref: BufRef; bytes?: Expr }[] {
  const o = op as unknown as Record<string, unknown>;
  const out: { ref: BufRef; bytes?: Expr }[] = [];
  const bytes = o.bytes as Expr | undefined;
  for (const k of ['dst', 'src', 'buf']) {
    const v = o[k] as BufRef | undefined;
    if (v && typeof v === 'object' && typeof v.name === 'string') out.push(bytes ? { ref: v, bytes } : { ref: v });
  }
  const acc = o.acc as BufRef | undefined;
  if (acc && typeof acc === 'object') out.push({ ref: acc });
  if (Array.isArray(o.reads)) for (const r of o.reads as BufRef[]) out.push({ ref: r });
  return out;
}

/** The values a loop variable takes, by name (loops whose bounds are constants over the parameters). */
type Loops = ReadonlyMap<string, number[]>;
/** Most trips of one loop the enumeration follows. */
const MAX_TRIPS = 256;

/** The values of `for v in range(from, to, step)` when its bounds read parameters only (at most {@link MAX_TRIPS}), else null. */
function tripValues(st: Extract<Stmt, { s: 'for' }>, params: Record<string, number>): number[] | null {
  try {
    const env = (n: string) => (Object.hasOwn(params, n) ? params[n] : undefined);
    const from = evalExpr(st.from, env);
    const to = evalExpr(st.to, env);
    const step = st.step ? evalExpr(st.step, env) : 1;
    if (step === 0) return null;
    const out: number[] = [];
    for (let x = from; step > 0 ? x < to : x > to; x += step) if (out.push(x) > MAX_TRIPS) return null;
    return out;
  } catch {
    return null;
  }
}

function walkOps(stmts: Stmt[], f: (op: Op, loops: Loops) => void, params: Record<string, number> = {}, loops: Loops = new Map()): void {
  for (const st of stmts) {
    if (st.s === 'op') f(st.op, loops);
    else if (st.s === 'elect') walkOps(st.body, f, params, loops);
    else if (st.s === 'for') {
      const trips = tripValues(st, params);
      const inner = new Map(loops);
      if (trips) inner.set(st.var, trips);
      else inner.delete(st.var);
      walkOps(st.body, f, params, inner);
    } else if (st.s === 'if') { walkOps(st.then, f, params, loops); if (st.else) walkOps(st.else, f, params, loops); }
  }
}

/**
 * Marks the allocations that need byte ranges (an alias views them, or a reference names an
 * offset into one of their arrays) in `bufs` (mutated: `ranged`), and the shared-memory ones that
 * span (mutated: `spans`, and `ranged`): a reference's offset plus its operation's byte count may
 * run past the end of its element, over the values of the parameters, the per-agent builtins and
 * the loop variables of constant bounds (a count or offset that reads anything else may: spans).
 */
export function markRanged(kernel: Kernel, bufs: BufferPlacement[], params: Record<string, number> = {}, clusterSize = 1, grid = 1): void {
  const byName = new Map(bufs.map((b, i) => [b.name, i]));
  const need = new Set<number>();
  const spans = new Set<number>();
  bufs.forEach((b, i) => { if (b.alloc !== i) need.add(b.alloc); });
  for (const r of kernel.roles) walkOps(r.body, (op, loops) => {
    for (const { ref, bytes } of opBufRefs(op)) {
      const i = byName.get(ref.name);
      if (i === undefined) continue;
      const b = bufs[i]!;
      if (ref.offset) need.add(b.alloc);
      if (!bytes || b.space !== 'smem' || bufs[b.alloc]!.length * bufs[b.alloc]!.bytes <= b.bytes) continue;
      const vals = rangeValues(ref, bytes, b.bytes, r, params, clusterSize, grid, loops);
      if (!vals || vals.some(([o, l]) => o! + l! > b.bytes)) spans.add(b.alloc);
    }
  }, params);
  for (const b of bufs) {
    b.ranged = need.has(b.alloc) || spans.has(b.alloc);
    if (spans.has(b.alloc)) b.spans = true;
  }
}

/**
 * Every value of `exprs` over the parameters and the per-agent builtins of role `r`, or null when
 * one reads anything else (a loop variable, a local) or the environments are too many.
 */
function staticValues(exprs: Expr[], r: RoleDecl, params: Record<string, number>, clusterSize: number, grid: number, loops: Loops = new Map()): number[][] | null {
  const names = new Set<string>();
  for (const e of exprs) for (const n of exprNames(e)) names.add(n);
  const ranges: [string, number][] = [];
  const warps = r.warps;
  const fixed: Record<string, number> = Object.assign(Object.create(null) as Record<string, number>, params, { ncta: clusterSize, nwarps: warps, nthreads: r.threads ?? warps * 32 });
  let inst = 1;
  if (r.instances) {
    try { inst = evalExpr(r.instances, (n) => (Object.hasOwn(params, n) ? params[n] : undefined)); } catch { return null; }
  }
  const loopVals: [string, number[]][] = [];
  for (const n of names) {
    if (Object.hasOwn(params, n) || n === 'ncta' || n === 'nwarps' || n === 'nthreads') continue;
    const lv = loops.get(n);
    if (lv) { loopVals.push([n, lv]); continue; }
    if (!STATIC_BUILTINS.has(n)) return null;
    const count = n === 'cta' ? clusterSize : n === 'clusterid' ? grid : n === 'instance' ? inst : n === 'warp' ? warps : Math.ceil(warps / 4);
    ranges.push([n, Math.max(1, count)]);
  }
  let total = 1;
  for (const [, c] of ranges) if ((total *= c) > MAX_ENVS) return null;
  for (const [, l] of loopVals) if ((total *= Math.max(1, l.length)) > MAX_ENVS) return null;
  // Loop variables take every trip's value (a variable the body reassigns may take others: those
  // ranges resolve to their whole element at run time).
  for (const [n, l] of loopVals) ranges.push([n, l.length]);
  const lvOf = new Map(loopVals);
  const out: number[][] = [];
  const env: Record<string, number> = Object.assign(Object.create(null) as Record<string, number>, fixed);
  const rec = (k: number) => {
    if (k === ranges.length) {
      try { out.push(exprs.map((e) => evalExpr(e, (n) => env[n]))); } catch { /* faults at run time */ }
      return;
    }
    const [n, c] = ranges[k]!;
    const lv = lvOf.get(n);
    for (let v = 0; v < c; v++) { env[n] = lv ? lv[v]! : v; rec(k + 1); }
  };
  rec(0);
  return out;
}

/** Most offsets of one element a reference's `offsetStep` makes the enumeration try. */
const MAX_STEPS = 64;

/**
 * The (offset, byte count) pairs reference `ref` of an operation moving `bytes` (absent: the rest
 * of the element; then pairs of the offset alone) may name in an element of `elemBytes`: every
 * value over the parameters, builtins and loop variables ({@link staticValues}); for an offset
 * computed at run time, every multiple of the front end's `offsetStep` inside the element (at most
 * {@link MAX_STEPS}) with the static byte counts; null when neither is known.
 */
function rangeValues(ref: BufRef, bytes: Expr | undefined, elemBytes: number, r: RoleDecl, params: Record<string, number>, clusterSize: number, grid: number, loops: Loops): number[][] | null {
  const vals = staticValues([ref.offset ?? { k: 'num', v: 0 }, ...(bytes ? [bytes] : [])], r, params, clusterSize, grid, loops);
  const step = ref.offsetStep;
  if (vals || !ref.offset || step === undefined || !Number.isSafeInteger(step) || step < 1 || elemBytes / step > MAX_STEPS) return vals;
  const lens = bytes ? staticValues([bytes], r, params, clusterSize, grid, loops) : [[]];
  if (!lens) return null;
  const out: number[][] = [];
  for (let o = 0; o < elemBytes; o += step) for (const l of lens) out.push([o, ...l]);
  return out;
}

/**
 * The CTA-local key space of `bufs` (placed, `ranged` marked): one view per distinct in-range
 * (element, offset, length) that some reference of `kernel` names in a ranged allocation, and the
 * overlap table when any view or alias exists.
 */
export function enumerateViews(kernel: Kernel, bufs: BufferPlacement[], elements: number, params: Record<string, number>, clusterSize: number, grid: number): BufferSpace {
  const byName = new Map(bufs.map((b, i) => [b.name, i]));
  const views: ViewInfo[] = [];
  const viewKey = new Map<number, number>();
  if (elements <= MAX_VIEW_ELEMENTS) for (const r of kernel.roles) walkOps(r.body, (op, loops) => {
    for (const { ref, bytes } of opBufRefs(op)) {
      const bi = byName.get(ref.name);
      if (bi === undefined || !bufs[bi]!.ranged) continue;
      const b = bufs[bi]!;
      const vals = rangeValues(ref, bytes, b.bytes, r, params, clusterSize, grid, loops);
      if (!vals) continue;
      // A computed index (a stage variable): every element.
      const idx = staticValues([ref.index], r, params, clusterSize, grid, loops) ?? Array.from({ length: b.length }, (_, i) => [i]);
      const end = b.spans ? bufs[b.alloc]!.length * bufs[b.alloc]!.bytes : 0;
      for (const [index] of idx) for (const [off, l] of vals) {
        const len = bytes ? l! : b.bytes - off!;
        if (index! < 0 || index! >= b.length || off! < 0 || len < 1 || (off === 0 && len === b.bytes)) continue;
        // Past its element: a span inside its allocation (module comment), else out of range.
        if (off! + len > b.bytes && (!b.spans || off! >= b.bytes || b.base + index! * b.bytes + off! + len > end)) continue;
        const id = viewId(b.offset + index!, off!, len);
        if (viewKey.has(id)) continue;
        viewKey.set(id, elements + views.length);
        views.push({ buffer: bi, index: index!, off: off!, len });
      }
    }
  }, params);
  // The whole allocation of each spanning one: the key of a spanning range not enumerated above.
  const spans = new Map<number, { end: number; whole: number }>();
  bufs.forEach((b, i) => {
    if (!b.spans || b.alloc !== i) return;
    spans.set(i, { end: b.length * b.bytes, whole: elements + views.length });
    views.push({ buffer: i, index: 0, off: 0, len: b.length * b.bytes });
  });
  const perCta = elements + views.length;
  const alloc = new Int32Array(perCta);
  const lo = new Int32Array(perCta);
  const len = new Int32Array(perCta);
  for (const b of bufs) for (let i = 0; i < b.length; i++) {
    alloc[b.offset + i] = b.alloc;
    lo[b.offset + i] = b.base + i * b.bytes;
    len[b.offset + i] = b.bytes;
  }
  views.forEach((v, j) => {
    const b = bufs[v.buffer]!;
    alloc[elements + j] = b.alloc;
    lo[elements + j] = b.base + v.index * b.bytes + v.off;
    len[elements + j] = v.len;
  });
  let overlap: Uint8Array | null = null;
  if (bufs.some((b) => b.ranged)) {
    overlap = new Uint8Array(perCta * perCta);
    for (let x = 0; x < perCta; x++) for (let y = 0; y < perCta; y++) {
      if (alloc[x] === alloc[y] && lo[x]! < lo[y]! + len[y]! && lo[y]! < lo[x]! + len[x]!) overlap[x * perCta + y] = 1;
    }
  }
  return { perCta, views, alloc, lo, len, overlap, viewKey, spans };
}

/**
 * Whether buffer keys `a` and `b` (global: CTA × keys per CTA + local key) name overlapping bytes:
 * the same key, or two keys of one CTA whose ranges in one allocation overlap. Negative keys
 * conflict with nothing.
 */
export function keysOverlap(overlap: Uint8Array | null, perCta: number, a: number, b: number): boolean {
  if (a === b) return a >= 0;
  if (overlap === null || a < 0 || b < 0) return false;
  const ca = Math.floor(a / perCta);
  if (ca !== Math.floor(b / perCta)) return false;
  return overlap[(a - ca * perCta) * perCta + (b - ca * perCta)] === 1;
}

/** Bytes of `space` a CTA of the cluster holds at most: every array with storage of its own (aliases have none), those placed in one CTA counted there only. */
export function storageBytes(bufs: BufferPlacement[], space: 'smem' | 'tmem', clusterSize: number): number {
  const perRank = new Array<number>(clusterSize).fill(0);
  bufs.forEach((b, i) => {
    if (b.space !== space || b.alloc !== i) return;
    for (let r = 0; r < clusterSize; r++) if (b.ctaOnly < 0 || b.ctaOnly === r) perRank[r]! += b.storage ?? b.length * b.bytes;
  });
  return Math.max(0, ...perRank);
}

/**
 * The CTA-local key that the range `o` bytes into element `u` of array `b`, `l` bytes long, resolves
 * to, or -1 when it is out of range (the rule of {@link rangedKey}, shared with the checker's CTA
 * symmetry, check/cta-elements.ts): an array without ranges, its element; a range inside the
 * element, its view, or the element when it covers it or has no view; a range running past the
 * element in a spanning allocation (it must start inside the element and end inside the
 * allocation), its view, else the whole allocation.
 */
export function localRangeKey(b: BufferPlacement, u: number, o: number, l: number, space: BufferSpace): number {
  if (u < 0 || u >= b.length) return -1;
  const el = b.offset + u;
  if (!b.ranged) return el;
  if (o < 0 || l < 1) return -1;
  if (o + l > b.bytes) {
    const sp = b.spans ? space.spans.get(b.alloc) : undefined;
    if (!sp || o >= b.bytes || b.base + u * b.bytes + o + l > sp.end) return -1;
    return space.viewKey.get(viewId(el, o, l)) ?? sp.whole;
  }
  if (o === 0 && l === b.bytes) return el;
  return space.viewKey.get(viewId(el, o, l)) ?? el;
}

/** A key function of a buffer reference: the flat key, or -1 when out of range (with `describe`, why). */
export type BufKeyFn = ((frame: number[]) => number) & { describe?: (frame: number[]) => string };

/**
 * The key function of a reference to array `b` that is placed in one CTA or lies in a ranged
 * allocation: `whole` resolves the element (or -1); then the CTA must hold the array (a peer's
 * copy needs `@CTA`), and the range — `off` bytes in (0 when null), `len` bytes (the rest of the
 * element when null) — must lie inside the element, or, in a spanning allocation, start inside it
 * and end inside the allocation. The range's view key when it has one ({@link enumerateViews});
 * its element's key when it covers the element or is unknown; a spanning range without a view:
 * the whole allocation's key.
 */
export function rangedKey(ref: BufRef, b: BufferPlacement & { scalar?: boolean }, whole: BufKeyFn, off: ((f: number[]) => number) | null, len: ((f: number[]) => number) | null, space: BufferSpace, clusterSize: number): BufKeyFn {
  const perCta = space.perCta;
  const range = (f: number[]): [number, number] => {
    const o = off ? off(f) : 0;
    return [o, len ? len(f) : b.bytes - o];
  };
  const fn: BufKeyFn = (f) => {
    const k = whole(f);
    if (k < 0) return -1;
    const cta = Math.floor(k / perCta);
    if (b.ctaOnly >= 0 && cta % clusterSize !== b.ctaOnly) return -1;
    if (!b.ranged) return k;
    const [o, l] = range(f);
    const v = localRangeKey(b, k - cta * perCta - b.offset, o, l, space);
    return v < 0 ? -1 : cta * perCta + v;
  };
  fn.describe = (f) => {
    const k = whole(f);
    if (k < 0) return whole.describe ? whole.describe(f) : 'out of range';
    const cta = Math.floor(k / perCta);
    const name = b.scalar ? b.name : `${b.name}[${k - cta * perCta - b.offset}]`;
    if (b.ctaOnly >= 0 && cta % clusterSize !== b.ctaOnly) {
      return ref.cta
        ? `${b.name} exists only in CTA ${b.ctaOnly} (declared cta=${b.ctaOnly}), not in CTA ${cta % clusterSize}`
        : `${b.name} exists only in CTA ${b.ctaOnly} (declared cta=${b.ctaOnly}); CTA ${cta % clusterSize} reaches it only through distributed shared memory: write ${name}@${b.ctaOnly}`;
    }
    const [o, l] = range(f);
    const sp = b.spans ? space.spans.get(b.alloc) : undefined;
    if (sp && o >= 0 && o < b.bytes && l >= 1) {
      const left = sp.end - b.base - (k - cta * perCta - b.offset) * b.bytes;
      return `bytes ${o} to ${o + l - 1} (offset ${o}, ${l} bytes) of ${name} run past the end of its shared memory, which holds ${left} bytes from the start of ${name} (0 to ${left - 1})`;
    }
    return `bytes ${o} to ${o + l - 1} (offset ${o}, ${l} bytes) are outside ${name}, which has ${b.bytes} bytes (0 to ${b.bytes - 1})`;
  };
  return fn;
}
