/**
 * The permutation of buffer elements paired with a CTA permutation, for roles run as written (PTX;
 * cta-relative.ts, docs/CHECK.md "Symmetry between CTAs"). A cluster kernel whose CTAs each fill
 * their own part of a shared buffer (`cluster_mc`: CTA r copies its half of B into element
 * `4s + 2 + r` of `dsmem` of both CTAs, multicast) runs the same code in every CTA except for the
 * element indices derived from the rank. Renaming CTA r into π(r) maps its transitions onto the
 * other CTA's only if the elements are renamed too: σ, one permutation of each array's elements,
 * the same in every CTA.
 *
 * σ is read off the agents' warp-relative analyses: at every buffer reference (its index is a
 * selecting operand of `WarpRelative.sels`, kind `elem`) agent a (CTA r) and its image b (CTA π(r))
 * name elements x and y row by row over the same free values; where they differ, σ(x) = y. The pairs
 * must form a permutation of each array's elements ({@link elementPerm}). Then every operation of
 * every pair (a, b) must name, row by row, σ of a's elements as b's ({@link opsFollow}): per
 * operation the set of (field, array, element, byte range) compared, so a wgmma reading both halves
 * of B in either order matches. Where a reference's byte range is known row by row (its offset a
 * value or a table of the warp analysis, the operand of kind `off`, and its byte count a constant or
 * the rest of the element), the key it resolves to (views.ts `localRangeKey`) is compared instead:
 * a's key mapped by the key map (below) must be b's. Otherwise (an offset the analysis cannot
 * tabulate) an element σ moves refuses σ, and an element σ fixes must have every view that starts
 * in it fixed by the key map.
 *
 * Only the keys the references can name constrain the key map: with the offsets' values known, a
 * view that the enumeration of views.ts made for an offset known only as a multiple of some bytes
 * (`BufRef.offsetStep`) but that no row names (a 16 KiB view 1 KiB into `dsmem[0]` of `cluster_mc`,
 * whose offset is always 0) is no constraint ({@link reachableKeys}).
 *
 * Only shared-memory arrays get a σ (Tensor Memory elements are allocation slots the agents' records
 * name), and only arrays with storage of their own (no alias views them).
 *
 * The buffer keys then move by the byte permutation τ that σ induces on each allocation (element x's
 * bytes onto element σ(x)'s): key k goes to the key whose byte range is τ of k's (views.ts: elements,
 * byte-range views, the whole allocation of a spanning one); a key whose image is not contiguous, or
 * is no key, refuses σ ({@link elementKeyMap}). Overlap between keys is preserved, since τ is a
 * bijection on bytes, and the key an access of a resolves to (views.ts `rangedKey`: the view of its
 * range, its element, the whole allocation) maps onto the key b's access resolves to: a range inside
 * a moved element shifts with it, a range starting in a fixed element is fixed.
 */
import type { BufRef, Expr, Op } from '../kernel/ir.js';
import type { OpInstr, Program, RoleCode } from '../machine/program.js';
import { localRangeKey, opBufRefs } from '../machine/views.js';
import { opOperands } from './op-operands.js';
import type { WarpRelative } from './warp-relative.js';

/** σ: per array index of `Program.buffers` whose elements move, the image of each element (a permutation of 0 … length − 1). */
export type ElemPerm = Map<number, Int32Array>;

/** One buffer reference of an operation as a selecting operand: its array, the sel indices of its element and offset, and its byte count. */
interface ElemRef {
  /** Index of the array in `Program.buffers`. */
  buf: number;
  /** Index into `WarpRelative.sels` of its element (kind `elem`). */
  sel: number;
  /** Index into `WarpRelative.sels` of its byte offset inside the element (kind `off`); null when it has none (0). */
  offSel: number | null;
  /** The operation's field that holds the reference (`dst`, `src`, `reads`, …): references of one field are compared as a set. */
  field: string;
  /** Its byte count: a constant (past the element: it spans), `rest` (the rest of the element), or null when computed. */
  bytes: number | 'rest' | null;
}

/** The operations with buffer references, each as its pc and references, in code order. */
export interface ElemOp {
  pc: number;
  refs: ElemRef[];
}

const num = (e: Expr): number | null => (e.k === 'num' ? e.v : null);

/**
 * The operations of `rel`'s signature with buffer-element operands: each `§i` of an operation line
 * of `ctaSig` is, in order, a selecting operand of the operation at that pc (op-operands.ts).
 */
export function elemOps(p: Program, rc: RoleCode, rel: WarpRelative): ElemOp[] | string {
  const out: ElemOp[] = [];
  const byName = new Map(p.buffers.map((b, i) => [b.name, i]));
  for (const line of rel.ctaSig.split('\n')) {
    const m = /^(\d+)!/.exec(line);
    if (!m || !line.includes('§')) continue;
    const pc = Number(m[1]);
    const ins = rc.code[pc];
    if (!ins || ins.i !== 'op') return `instruction ${pc} is not an operation`;
    const op = (ins as OpInstr).op as Op;
    const kinded = opOperands(op).filter(([, k]) => k);
    const idx = [...line.matchAll(/\u00a7(\d+)/g)].map((x) => Number(x[1]));
    if (idx.length < kinded.length) return `instruction ${pc}: its operands and its signature disagree`;
    const bufRefs = opBufRefs(op);
    const refs: ElemRef[] = [];
    for (let i = 0; i < kinded.length; i++) {
      const [e, kind] = kinded[i]!;
      if (kind !== 'elem') continue;
      const br = bufRefs.find((r) => r.ref.index === e);
      const ref: BufRef | undefined = br?.ref;
      const buf = ref ? byName.get(ref.name) : undefined;
      if (!ref || buf === undefined) return `instruction ${pc}: a buffer index names no buffer array`;
      let offSel: number | null = null;
      if (ref.offset) {
        const j = kinded.findIndex(([x, k]) => k === 'off' && x === ref.offset);
        if (j < 0) return `instruction ${pc}: a buffer offset is not among its operands`;
        offSel = idx[j]!;
      }
      const bytes = br!.bytes === undefined ? 'rest' : num(br!.bytes);
      const field = Object.entries(op).find(([, x]) => x === ref || (Array.isArray(x) && x.includes(ref)))?.[0] ?? '';
      refs.push({ buf, sel: idx[i]!, offSel, field, bytes });
    }
    if (refs.length) out.push({ pc, refs });
  }
  return out;
}

/** A table's free values: `n:v.v;m:v` (warp-values.ts `formTable`) as names and set sizes. */
function domain(head: string): [string, number][] {
  return head ? head.split(';').map((d) => { const i = d.indexOf(':'); return [d, d.slice(i + 1).split('.').length]; }) : [];
}

/** Row `r` of the combined domain `all` as a row of a table over `own` (mixed radix, the last name fastest). */
function rowOf(r: number, all: [string, number][], own: [string, number][]): number {
  const digit = new Map<string, number>();
  for (let i = all.length - 1; i >= 0; i--) { const [n, s] = all[i]!; digit.set(n, r % s); r = Math.floor(r / s); }
  let x = 0;
  for (const [n, s] of own) x = x * s + digit.get(n)!;
  return x;
}

/** Most rows of one operation's combined free values compared. */
const MAX_ROWS = 1 << 12;

/**
 * The rows of the sels `cols` of one analysis over their combined free values (a and b share heads):
 * per row, each column's value or 'F'; null when a column has no table or the rows are too many.
 */
function selRows(cols: readonly number[], rel: WarpRelative): (number | 'F')[][] | null {
  const all: [string, number][] = [];
  const doms: [string, number][][] = [];
  for (const c of cols) {
    const t = rel.sels[c]!.table;
    if (!t) return null;
    const d = domain(t.head);
    doms.push(d);
    for (const x of d) if (!all.some(([n]) => n === x[0])) all.push(x);
  }
  const rows = all.reduce((n, [, s]) => n * s, 1);
  if (rows > MAX_ROWS) return null;
  const out: (number | 'F')[][] = [];
  for (let r = 0; r < rows; r++) out.push(cols.map((c, i) => rel.sels[c]!.table!.vals[rowOf(r, all, doms[i]!)]!));
  return out;
}

/** Whether `ref`'s byte range is known row by row in `rel`: a byte count known and an offset that is absent or tabulated. */
const rangeKnown = (ref: ElemRef, rel: WarpRelative): boolean => ref.bytes !== null && (ref.offSel === null || rel.sels[ref.offSel]!.table !== null);

/**
 * The CTA-local key that `ref` names in a row where its element is `u` and its offset `o` (views.ts
 * `localRangeKey`), or -1 when the machine faults there.
 */
function rowKey(p: Program, ref: ElemRef, u: number | 'F', o: number | 'F'): number {
  if (u === 'F' || o === 'F') return -1;
  const info = p.buffers[ref.buf]!;
  const len = ref.bytes === 'rest' ? info.bytes - o : ref.bytes!;
  return localRangeKey(info, u, o, len, p.bufferSpace);
}

/** Per reference of `refs`, its element's column and its offset's column (-1: no offset) among `cols`; the offsets only where `known`. */
function refColumns(refs: readonly ElemRef[], known: readonly boolean[]): { cols: number[]; at: [number, number][] } {
  const cols: number[] = [];
  const at = refs.map((r, i): [number, number] => {
    const e = cols.push(r.sel) - 1;
    return [e, r.offSel !== null && known[i] ? cols.push(r.offSel) - 1 : -1];
  });
  return { cols, at };
}

/**
 * Adds to `pairs` (per array: element → image) the elements a names where b names others, row by
 * row; a reason when a pair contradicts another or the references cannot be compared.
 */
export function collectPairs(p: Program, ops: ElemOp[], ra: WarpRelative, rb: WarpRelative, pairs: Map<number, Map<number, number>>): string | null {
  for (const op of ops) for (const r of op.refs) {
    const x = ra.sels[r.sel]!;
    const y = rb.sels[r.sel]!;
    if (x.form === y.form) continue;
    const name = p.buffers[r.buf]!.name;
    if (!x.table || !y.table || x.table.head !== y.table.head || x.table.vals.length !== y.table.vals.length) return `the element of ${name} named at instruction ${op.pc} depends on values that differ between the CTAs`;
    const m = pairs.get(r.buf) ?? pairs.set(r.buf, new Map()).get(r.buf)!;
    for (let j = 0; j < x.table.vals.length; j++) {
      const u = x.table.vals[j]!;
      const v = y.table.vals[j]!;
      if (u === v) continue;
      const len = p.buffers[r.buf]!.length;
      if (u === 'F' || v === 'F' || u < 0 || v < 0 || u >= len || v >= len) return `the element of ${name} named at instruction ${op.pc} is out of range in one CTA only`;
      if ((m.get(u) ?? v) !== v) return `${name}[${u}] would move to two elements`;
      m.set(u, v);
    }
  }
  return null;
}

/** σ from the collected pairs: each array's pairs must be a permutation of the elements they name. */
export function elementPerm(p: Program, pairs: Map<number, Map<number, number>>): ElemPerm | string {
  const sigma: ElemPerm = new Map();
  for (const [buf, m] of pairs) {
    const info = p.buffers[buf]!;
    const img = new Set(m.values());
    if (img.size !== m.size || [...img].some((v) => !m.has(v))) return `the elements of ${info.name} the CTAs name do not form a permutation`;
    if (info.alloc !== buf || p.buffers.some((b, i) => i !== buf && b.alloc === info.alloc)) return `${info.name} shares its storage with another array`;
    // Tensor Memory elements are allocation slots whose holders the agents' records name: not renamed.
    if (info.space !== 'smem') return `${info.name} is not shared memory (only shared-memory elements are exchanged with the CTAs)`;
    const s = Int32Array.from({ length: info.length }, (_, j) => j);
    for (const [u, v] of m) s[u] = v;
    sigma.set(buf, s);
  }
  return sigma;
}

/**
 * The CTA-local keys of σ's arrays that some operation can name (`ops` per agent, its analysis in
 * `rel`): for a reference whose byte range is known row by row, the key of each row's element and
 * range, as views.ts `localRangeKey` resolves it; for a range not known, the element, every view
 * that starts in it and the whole allocation.
 */
export function reachableKeys(p: Program, ops: readonly ElemOp[][], rel: readonly (WarpRelative | null)[], sigma: ElemPerm): Set<number> {
  const sp = p.bufferSpace;
  const out = new Set<number>();
  const startsIn = new Map<string, number[]>();
  sp.views.forEach((v, j) => {
    const key = `${v.buffer}:${v.index}`;
    (startsIn.get(key) ?? startsIn.set(key, []).get(key)!).push(sp.perCta - sp.views.length + j);
  });
  ops.forEach((list, a) => {
    const ra = rel[a]!;
    for (const op of list) for (const r of op.refs) {
      if (!sigma.has(r.buf)) continue;
      const info = p.buffers[r.buf]!;
      const known = rangeKnown(r, ra);
      const rows = known ? selRows(r.offSel === null ? [r.sel] : [r.sel, r.offSel], ra) : null;
      if (rows) {
        for (const [u, o] of rows) {
          const k = rowKey(p, r, u!, o ?? 0);
          if (k >= 0) out.add(k);
        }
        continue;
      }
      const whole = sp.spans.get(info.alloc)?.whole;
      for (const u of ra.sels[r.sel]!.table?.vals ?? []) {
        if (u === 'F' || u < 0 || u >= info.length) continue;
        out.add(info.offset + u);
        for (const k of startsIn.get(`${r.buf}:${u}`) ?? []) out.add(k);
        if (whole !== undefined) out.add(whole);
      }
    }
  });
  return out;
}

/**
 * The CTA-local buffer key map of σ (see the module comment): per key the key whose byte range is
 * τ of its own; a key no operation can name (not in `reach`) whose image is no key takes a key left
 * over. With, per array of σ, per element, whether every view starting in it is fixed.
 */
export function elementKeyMap(p: Program, sigma: ElemPerm, reach: ReadonlySet<number>): { local: Int32Array; fixedStart: Map<number, Uint8Array> } | string {
  const sp = p.bufferSpace;
  const local = Int32Array.from({ length: sp.perCta }, (_, k) => k);
  const fixedStart = new Map<number, Uint8Array>();
  if (!sigma.size) return { local, fixedStart };
  const byRange = new Map<string, number[]>();
  const rk = (alloc: number, lo: number, len: number) => `${alloc}:${lo}:${len}`;
  for (let k = 0; k < sp.perCta; k++) {
    const key = rk(sp.alloc[k]!, sp.lo[k]!, sp.len[k]!);
    (byRange.get(key) ?? byRange.set(key, []).get(key)!).push(k);
  }
  const byAlloc = new Map<number, number>();
  for (const buf of sigma.keys()) byAlloc.set(p.buffers[buf]!.alloc, buf);
  const unmapped: number[] = [];
  for (let k = 0; k < sp.perCta; k++) {
    const buf = byAlloc.get(sp.alloc[k]!);
    if (buf === undefined) continue;
    const info = p.buffers[buf]!;
    const s = sigma.get(buf)!;
    const lo = sp.lo[k]!;
    const hi = lo + sp.len[k]!;
    // τ on [lo, hi): pieces cut at element boundaries, each shifted with its element.
    const pieces: [number, number][] = [];
    for (let x = lo; x < hi;) {
      const e = Math.floor((x - info.base) / info.bytes);
      const inside = e >= 0 && e < info.length;
      const end = inside ? Math.min(hi, info.base + (e + 1) * info.bytes) : e < 0 ? Math.min(hi, info.base) : hi;
      const d = inside ? (s[e]! - e) * info.bytes : 0;
      pieces.push([x + d, end + d]);
      x = end;
    }
    pieces.sort((u, v) => u[0] - v[0]);
    const nlo = pieces[0]![0];
    if (nlo === lo && pieces.every((q, i) => i === 0 || q[0] === pieces[i - 1]![1])) continue;
    const to = pieces.every((q, i) => i === 0 || q[0] === pieces[i - 1]![1]) ? byRange.get(rk(sp.alloc[k]!, nlo, hi - lo)) ?? [] : [];
    if (to.length === 1) { local[k] = to[0]!; continue; }
    if (reach.has(k)) return `${p.bufferName(k)} has no counterpart once the CTAs' elements of ${info.name} are exchanged`;
    unmapped.push(k);
  }
  // Keys no operation names: any of the keys left over (a bijection; they never occur in a state).
  const used = new Set<number>();
  for (let k = 0; k < sp.perCta; k++) if (!unmapped.includes(k)) used.add(local[k]!);
  const spare = [...Array(sp.perCta).keys()].filter((k) => !used.has(k));
  if (spare.length !== unmapped.length) return 'the buffer keys do not map one to one once the CTAs\' elements are exchanged';
  unmapped.forEach((k, i) => (local[k] = spare[i]!));
  if (new Set(local).size !== local.length) return 'the buffer keys do not map one to one once the CTAs\' elements are exchanged';
  for (const buf of sigma.keys()) {
    const fx = new Uint8Array(p.buffers[buf]!.length).fill(1);
    sp.views.forEach((v, j) => {
      const k = sp.perCta - sp.views.length + j;
      if (v.buffer === buf && local[k] !== k) fx[v.index] = 0;
    });
    fixedStart.set(buf, fx);
  }
  return { local, fixedStart };
}

/**
 * Whether every operation of a (`ops`, analysis `ra`) names, row by row, σ of its elements as b's
 * (`rb`): a reason, or null (see the module comment). `local` is the CTA-local key map of σ.
 */
export function opsFollow(p: Program, ops: ElemOp[], ra: WarpRelative, rb: WarpRelative, sigma: ElemPerm, local: Int32Array, fixedStart: Map<number, Uint8Array>): string | null {
  for (const op of ops) {
    const moved = op.refs.some((r) => sigma.has(r.buf));
    if (!moved) {
      const d = op.refs.find((r) => ra.sels[r.sel]!.form !== rb.sels[r.sel]!.form);
      if (d) return `the element of ${p.buffers[d.buf]!.name} named at instruction ${op.pc} differs between the CTAs`;
      continue;
    }
    const bad = op.refs.find((r) => !ra.sels[r.sel]!.table || !rb.sels[r.sel]!.table || ra.sels[r.sel]!.table!.head !== rb.sels[r.sel]!.table!.head);
    if (bad) return `the element of ${p.buffers[bad.buf]!.name} named at instruction ${op.pc} is not a function of the rank the analysis can tabulate`;
    // The offsets' forms are equal in a and b (cta-relative.ts), so are their tables.
    const known = op.refs.map((r) => rangeKnown(r, ra) && rangeKnown(r, rb));
    const { cols, at } = refColumns(op.refs, known);
    const rowsA = selRows(cols, ra);
    const rowsB = selRows(cols, rb);
    if (!rowsA || !rowsB) return `instruction ${op.pc} names elements over too many values to compare`;
    for (let j = 0; j < rowsA.length; j++) {
      const mine: string[] = [];
      const theirs: string[] = [];
      for (let i = 0; i < op.refs.length; i++) {
        const r = op.refs[i]!;
        const info = p.buffers[r.buf]!;
        const s = sigma.get(r.buf);
        const [ce, co] = at[i]!;
        const u = rowsA[j]![ce]!;
        const v = rowsB[j]![ce]!;
        const inRange = (x: number | 'F'): x is number => x !== 'F' && x >= 0 && x < info.length;
        if (known[i]) {
          // The key each names: a's through the key map must be b's (a fault names its element: it must stay).
          const ka = rowKey(p, r, u, co < 0 ? 0 : rowsA[j]![co]!);
          const kb = rowKey(p, r, v, co < 0 ? 0 : rowsB[j]![co]!);
          if (ka < 0 && s && inRange(u) && s[u] !== u) return `instruction ${op.pc} names ${info.name}[${u}], which the CTAs exchange, with a byte range outside it`;
          mine.push(`${r.field}:${ka < 0 ? `F${u}` : local[ka]!}`);
          theirs.push(`${r.field}:${kb < 0 ? `F${v}` : kb}`);
          continue;
        }
        let img: number | 'F' = u;
        if (s && inRange(u)) {
          img = s[u]!;
          if (img !== u) return `instruction ${op.pc} names ${info.name}[${u}], which the CTAs exchange, with a byte range not known`;
          if (!fixedStart.get(r.buf)![u]) return `instruction ${op.pc} names ${info.name}[${u}] with a byte range that may reach elements the CTAs exchange`;
        }
        mine.push(`${r.field}:${r.buf}:${img}:?`);
        theirs.push(`${r.field}:${r.buf}:${v}:?`);
      }
      // As sets: a field names its keys as a set (a wgmma's footprint lists an element once per piece).
      if ([...new Set(mine)].sort().join() !== [...new Set(theirs)].sort().join()) return `instruction ${op.pc} does not name the elements the CTA permutation maps its image's onto`;
    }
  }
  return null;
}
