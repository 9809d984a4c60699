/**
 * Local memory (PTX ISA §5.1.5 "Local State Space"): a `-G` build keeps a function's locals in a
 * per-thread stack frame, `.local .b8 __local_depotN[S]`, addressed through `%SPL` (`mov.u64 %SPL,
 * __local_depotN`) and its generic form `%SP` (`cvta.local.u64 %SP, %SPL`), and passes arguments
 * by reference through it (`st.u32 [%SP+8], %r69` by the caller, `ld.u32 %r2, [%rd2]` in the callee).
 *
 * The translation models it as per-thread state of the warp's frame: every byte offset a store
 * writes is a cell (`__local_depot4+8`, a callee's depot renamed per inlined call like its
 * registers), and each access whose address resolves statically to one depot and offset — through
 * `mov`, `cvta` (to and from generic), `cvt`, `add` / `sub` of a constant, call-site parameter
 * moves, and addresses stored in local memory themselves — becomes a move to or from its cell before
 * the analysis runs. A cell is then a register like any other: one variable when the warp's lanes
 * agree, 32 (`…@0` … `…@31`) when they may not, opaque when an opaque value (floating point) was
 * stored in it; values pass through exactly. Each depot symbol is an address of its own, so that
 * integer arithmetic and comparisons of local addresses (a null test) compute; whatever they
 * compute from one counts as derived from the depot. A depot whose address escapes (stored to
 * other memory, read by an operation that is not integer arithmetic, passed to an undefined
 * function), or that is accessed through an address not known statically, is left as it was: its
 * loads stay opaque (a `not-modelled` trap where their value is needed). Accesses that overlap with
 * different offsets or sizes are left as they were, and so is every access sharing a byte with
 * them; the depot's other cells stay modelled.
 */
import type { Decl, Instruction, Module, Operand } from '../ptx/ast.js';
import { destsOf, sourcesOf } from './analysis.js';
import type { Flat, FlatIns } from './flat.js';

/** Address of the first depot; each depot gets 1 MiB (a thread's local memory is at most 512 KiB). */
export const LOCAL_BASE = 0x4000_0000;
const LOCAL_STRIDE = 0x10_0000;

/** What {@link localMemory} did: the depots modelled and those left opaque, with the reason. */
export interface LocalReport {
  /** Depots (flat names) whose accesses became cell moves. */
  modelled: string[];
  /** Depots left as they were, with why. */
  opaque: Map<string, string>;
  /**
   * Depots of which only some instructions were left as they were (accesses overlapping at
   * different offsets or sizes, and whatever shares their bytes), with the first such overlap.
   */
  overlaps: Map<string, string>;
}

interface Addr { depot: string; off: number }
interface Access { it: FlatIns; index: number; depot: string; off: number; bytes: number; type: string; load: boolean }

const PROPAGATE = new Set(['mov', 'cvta', 'cvt', 'add', 'sub']);
/** Integer arithmetic, comparison and selection: a local address read by them is a value (a null test), and their results carry it. */
const PURE = new Set([...PROPAGATE, 'mul', 'mad', 'div', 'rem', 'shl', 'shr', 'and', 'or', 'xor', 'not', 'neg', 'abs', 'min', 'max', 'setp', 'selp']);
const TYPE = /^[bsu](8|16|32|64)$/;

/** Bytes and type modifier of a memory access (`ld.u32` → 4, `u32`); undefined for other types. */
function accessType(ins: Instruction): { bytes: number; type: string; lanes: number } | undefined {
  const type = ins.mods.find((m) => TYPE.test(m) || /^f(16|32|64)$/.test(m));
  if (!type) return undefined;
  const vec = ins.mods.find((m) => /^v[248]$/.test(m));
  return { bytes: Number(type.slice(1)) / 8, type, lanes: vec ? Number(vec.slice(1)) : 1 };
}

/** Whether a load or store may address local memory (`.local` or generic; not param, shared, global, const). */
function localOrGeneric(ins: Instruction): boolean {
  return (ins.base === 'ld' || ins.base === 'st') && !ins.mods.some((m) => m === 'param' || m.startsWith('shared') || m === 'global' || m === 'const' || m === 'async');
}

/** The depot declarations of the flat function (`.local` variables, by their declared name) and their sizes in bytes. */
function depotSizes(decls: readonly Decl[], m?: Module): Map<string, number> {
  const out = new Map<string, number>();
  const all = [...decls, ...(m?.items ?? []).filter((d): d is Decl => d.kind === 'decl')];
  for (const d of all) {
    if (d.space !== '.local') continue;
    const t = /(\d+)$/.exec(d.type);
    const el = t ? Number(t[1]) / 8 : 1;
    for (const n of d.names) out.set(n.name, (n.dims ?? []).reduce<number>((a, x) => a * (x ?? 0), el) * (d.vector ? Number(d.vector.slice(2)) : 1));
  }
  return out;
}

/**
 * Rewrites the local-memory accesses of `flat` into moves of per-thread cells (see the module
 * comment) and gives each depot symbol an address of its own. Returns the new flat function
 * (the input is not changed) and what was modelled.
 */
export function localMemory(flat: Flat, m?: Module): Flat & { local: LocalReport } {
  const sizes = depotSizes(flat.decls, m);
  const report: LocalReport = { modelled: [], opaque: new Map(), overlaps: new Map() };
  if (!sizes.size) return { ...flat, local: report };
  const depotOf = (flatName: string): string | undefined => (sizes.has(flatName.replace(/#\d+$/, '')) ? flatName : undefined);
  const depots = new Map<string, number>();
  const items = flat.items;
  const ins = (i: number): FlatIns | undefined => { const x = items[i]; return x && !('label' in x) ? x : undefined; };
  items.forEach((_, i) => {
    const it = ins(i);
    if (!it) return;
    for (const o of it.ins.operands) for (const n of operandNames(o)) { const d = depotOf(it.name(n)); if (d && !depots.has(d)) depots.set(d, LOCAL_BASE + depots.size * LOCAL_STRIDE); }
  });
  const poison = (d: string, why: string) => { if (!report.opaque.has(d)) report.opaque.set(d, why); };
  const defs = new Map<string, number[]>();
  items.forEach((_, i) => { const it = ins(i); if (it) for (const d of destsOf(it)) (defs.get(d) ?? defs.set(d, []).get(d)!).push(i); });

  // Exact addresses (depot, offset) and the depots each register may derive from, to a fixed point.
  const exact = new Map<string, Addr | null>();
  const derived = new Map<string, Set<string>>();
  let accesses: Access[] = [];
  const cellKey = (a: Addr) => `${a.depot}+${a.off}`;
  const addrOf = (it: FlatIns, o: Operand | undefined): Addr | null | undefined => {
    if (!o) return undefined;
    if (o.kind === 'name') {
      const n = it.name(o.name);
      const d = depotOf(n);
      if (d) return { depot: d, off: 0 };
      return exact.has(n) ? exact.get(n)! : undefined;
    }
    if (o.kind === 'address') {
      if (!o.base || o.rest) return undefined;
      const b = addrOf(it, { kind: 'name', name: o.base, pos: o.pos });
      return b ? { depot: b.depot, off: b.off + Number(o.offset) } : b;
    }
    if (o.kind === 'expr' && o.expr.kind === 'binary' && (o.expr.op === '+' || o.expr.op === '-') && o.expr.left.kind === 'sym' && o.expr.right.kind === 'int') {
      const d = depotOf(it.name(o.expr.left.name));
      if (d) return { depot: d, off: (o.expr.op === '+' ? 1 : -1) * Number(o.expr.right.value) };
    }
    return undefined;
  };
  const derivedOf = (it: FlatIns, o: Operand): Set<string> => {
    const out = new Set<string>();
    for (const n of operandNames(o)) {
      const f = it.name(n);
      const d = depotOf(f);
      if (d) out.add(d);
      for (const x of derived.get(f) ?? []) out.add(x);
    }
    return out;
  };
  const cellStores = new Map<string, { it: FlatIns; value: Operand }[]>();
  for (let round = 0; round < 32; round++) {
    let changed = false;
    const setDerived = (r: string, ds: Iterable<string>) => {
      const s = derived.get(r) ?? new Set<string>();
      const n = s.size;
      for (const d of ds) s.add(d);
      if (s.size !== n) { derived.set(r, s); changed = true; }
    };
    // The accesses resolved so far and the values stored in each cell.
    accesses = [];
    cellStores.clear();
    items.forEach((_, i) => {
      const it = ins(i);
      if (!it || !localOrGeneric(it.ins)) return;
      const load = it.ins.base === 'ld';
      const a = addrOf(it, it.ins.operands[load ? 1 : 0]);
      const t = accessType(it.ins);
      if (!a || !t) return;
      const vals = valueOperands(it.ins.operands[load ? 0 : 1]);
      vals.forEach((val, k) => {
        const acc: Access = { it, index: i, depot: a.depot, off: a.off + k * t.bytes, bytes: t.bytes, type: t.type, load };
        accesses.push(acc);
        if (!load && val) (cellStores.get(cellKey(acc)) ?? cellStores.set(cellKey(acc), []).get(cellKey(acc))!).push({ it, value: val });
      });
    });
    for (const [r, is] of defs) {
      let out: Addr | null | undefined;
      for (const i of is) {
        const it = ins(i)!;
        const srcs = sourcesOf(it);
        let a: Addr | null | undefined = null;
        const b = it.ins.base;
        if (b === 'mov' || b === 'cvta' || b === 'cvt') a = addrOf(it, srcs[0]);
        else if (b === 'add' || b === 'sub') {
          const [x, y] = [addrOf(it, srcs[0]), addrOf(it, srcs[1])];
          const k = (o: Operand | undefined) => (o && o.kind === 'int' ? Number(o.value) : undefined);
          if (x && k(srcs[1]) !== undefined) a = { depot: x.depot, off: x.off + (b === 'add' ? 1 : -1) * k(srcs[1])! };
          else if (b === 'add' && y && k(srcs[0]) !== undefined) a = { depot: y.depot, off: y.off + k(srcs[0])! };
          else a = x === undefined && y === undefined ? undefined : null;
        } else if (b === 'ld' && localOrGeneric(it.ins)) {
          const c = addrOf(it, it.ins.operands[1]);
          const st = c ? cellStores.get(cellKey(c)) : undefined;
          const as = (st ?? []).map((s) => addrOf(s.it, s.value));
          a = !as.length || as.every((x) => x === undefined) ? undefined : as.every((x) => x && x.depot === as[0]!.depot && x.off === as[0]!.off) ? as[0]! : null;
        } else a = undefined;
        // undefined: not an address; null: derived from a depot but not known statically
        out = i === is[0] ? a : out === undefined && a === undefined ? undefined : out && a && out.depot === a.depot && out.off === a.off ? out : null;
      }
      if (out !== undefined && JSON.stringify(exact.get(r)) !== JSON.stringify(out)) { exact.set(r, out); changed = true; }
      for (const i of is) {
        const it = ins(i)!;
        if (PURE.has(it.ins.base)) for (const o of sourcesOf(it)) setDerived(r, derivedOf(it, o));
        if (it.ins.base === 'ld' && localOrGeneric(it.ins)) {
          const c = addrOf(it, it.ins.operands[1]);
          for (const s of (c ? cellStores.get(cellKey(c)) : undefined) ?? []) setDerived(r, derivedOf(s.it, s.value));
        }
      }
    }
    if (!changed) break;
  }

  // Escapes: a depot-derived value read by anything but address arithmetic, a local access's
  // address, or a store into a resolved cell.
  items.forEach((_, i) => {
    const it = ins(i);
    if (!it) return;
    const b = it.ins.base;
    const srcs = sourcesOf(it);
    srcs.forEach((o, k) => {
      const ds = derivedOf(it, o);
      if (!ds.size) return;
      if (PURE.has(b) && destsOf(it).length) return;
      const mem = localOrGeneric(it.ins);
      const isAddr = mem && o.kind === 'address';
      if (isAddr) {
        if (!addrOf(it, o)) for (const d of ds) poison(d, `line ${it.ins.pos.line}: ${it.ins.opcode} through an address not known statically`);
        else if (!accessType(it.ins)) for (const d of ds) poison(d, `line ${it.ins.pos.line}: ${it.ins.opcode} (an access of this type is not modelled)`);
        return;
      }
      if (b === 'st' && mem && k === 1 && addrOf(it, it.ins.operands[0])) return;
      for (const d of ds) poison(d, `line ${it.ins.pos.line}: its address is read by ${it.ins.opcode}`);
    });
  });
  const conflicted = conflicts(accesses, sizes, poison, report);
  const unmodelled = (c: Addr) => report.opaque.has(c.depot) || conflicted.has(cellKey(c));
  // Stores of an address into a depot or cell left opaque let that address escape.
  for (let again = true; again;) {
    again = false;
    for (const [, st] of cellStores) for (const s of st) {
      const c = addrOf(s.it, s.it.ins.operands[0]);
      if (!c || !unmodelled(c)) continue;
      for (const d of derivedOf(s.it, s.value)) if (!report.opaque.has(d)) { poison(d, `line ${s.it.ins.pos.line}: its address is stored into ${c.depot}, which is not modelled`); again = true; }
    }
  }
  for (const d of depots.keys()) if (!report.opaque.has(d)) report.modelled.push(d);
  const kept = accesses.filter((a) => !report.opaque.has(a.depot) && !conflicted.has(`#${a.index}`));
  return { ...rewrite(flat, kept, depots, cellStores), local: report };
}

/**
 * Accesses of one depot must agree byte for byte: one offset and size for every byte they share.
 * Where two do not (a bit-field struct written as `u32` and copied as `u64`, as cooperative_groups'
 * `-G` code does), the instructions touching those bytes are left as they were (their loads
 * opaque), together with every instruction that shares a byte with one of them, and the depot's
 * other cells stay modelled. An access outside the depot leaves the whole depot opaque (`poison`).
 * Returns the cells (`depot+off`) and instructions (`#index`) left out; records the first overlap
 * of each depot in `report.overlaps`.
 */
function conflicts(accesses: readonly Access[], sizes: ReadonlyMap<string, number>, poison: (d: string, why: string) => void, report: LocalReport): Set<string> {
  const byDepot = new Map<string, Access[]>();
  for (const a of accesses) (byDepot.get(a.depot) ?? byDepot.set(a.depot, []).get(a.depot)!).push(a);
  const out = new Set<string>();
  for (const [d, as] of byDepot) {
    const size = sizes.get(d.replace(/#\d+$/, '')) ?? 0;
    const bad = new Set<number>();
    for (const a of as) {
      if (a.off < 0 || a.off + a.bytes > size) poison(d, `line ${a.it.ins.pos.line}: ${a.it.ins.opcode} at offset ${a.off} is outside the ${size} bytes of ${d}`);
      for (const b of as) {
        if (!(a.off < b.off + b.bytes && b.off < a.off + a.bytes && (a.off !== b.off || a.bytes !== b.bytes))) continue;
        if (!report.overlaps.has(d)) report.overlaps.set(d, `lines ${a.it.ins.pos.line} and ${b.it.ins.pos.line}: accesses of ${a.bytes} and ${b.bytes} bytes at offsets ${a.off} and ${b.off} overlap`);
        bad.add(a.index);
      }
    }
    // Whole instructions (a vector's every element), and whatever shares a byte with them, to a fixed point.
    const touches = (a: Access, bytes: ReadonlySet<number>) => { for (let k = a.off; k < a.off + a.bytes; k++) if (bytes.has(k)) return true; return false; };
    for (let grew = true; grew;) {
      grew = false;
      const bytes = new Set<number>();
      for (const a of as) if (bad.has(a.index)) for (let k = a.off; k < a.off + a.bytes; k++) bytes.add(k);
      for (const a of as) if (!bad.has(a.index) && touches(a, bytes)) { bad.add(a.index); grew = true; }
    }
    for (const a of as) if (bad.has(a.index)) { out.add(`#${a.index}`); out.add(`${a.depot}+${a.off}`); }
  }
  return out;
}

/** The names an operand mentions (registers, symbols), address bases and expression symbols included. */
function operandNames(o: Operand): string[] {
  switch (o.kind) {
    case 'name': return [o.name];
    case 'address': return [...(o.base ? [o.base] : []), ...(o.rest ?? []).flatMap(operandNames)];
    case 'vector': case 'list': return o.items.flatMap(operandNames);
    case 'pair': return [o.first, o.second];
    case 'expr': { const out: string[] = []; const walk = (e: typeof o.expr): void => { if (e.kind === 'sym') out.push(e.name); else if (e.kind === 'unary') walk(e.arg); else if (e.kind === 'binary') { walk(e.left); walk(e.right); } else if (e.kind === 'call') e.args.forEach(walk); }; walk(o.expr); return out; }
    default: return [];
  }
}

/** The value operands of a load's destination or a store's source (a vector's items; a sink is undefined). */
function valueOperands(o: Operand | undefined): (Operand | undefined)[] {
  if (!o) return [];
  if (o.kind === 'vector') return o.items.map((x) => (x.kind === 'sink' ? undefined : x));
  return [o.kind === 'sink' ? undefined : o];
}

/** The flat function with the resolved accesses of modelled depots as cell moves and depot symbols as addresses. */
function rewrite(flat: Flat, accesses: Access[], depots: Map<string, number>, cellStores: Map<string, { it: FlatIns; value: Operand }[]>): Flat {
  const cellTypes = new Map<string, string>();
  const byIndex = new Map<number, Access[]>();
  for (const a of accesses) (byIndex.get(a.index) ?? byIndex.set(a.index, []).get(a.index)!).push(a);
  const items = flat.items.map((x, i): Flat['items'] | Flat['items'][number] => {
    if ('label' in x) return x;
    const as = byIndex.get(i);
    if (!as) return withDepotAddresses(x, depots);
    const load = as[0]!.load;
    const vals = valueOperands(x.ins.operands[load ? 0 : 1]);
    return as.flatMap((a, k) => {
      const val = vals[k];
      if (!val) return [];
      const cell = `${a.depot}+${a.off}`;
      cellTypes.set(cell, `.${a.type.replace(/^[su]/, 'b')}`);
      const cellOp: Operand = { kind: 'name', name: cell, pos: val.pos };
      const name = (n: string) => (n === cell ? n : x.name(n));
      const narrow = (t: string) => Number(t.slice(1)) < 64;
      let op = `mov.${a.type}`;
      if (load) {
        // A load of another signedness than the stores' re-reads the bits (cvt: sign-extended or not).
        const stored = (cellStores.get(cell) ?? []).map((s) => accessType(s.it.ins)?.type ?? a.type);
        if (narrow(a.type) && stored.some((t) => (t.startsWith('s') !== a.type.startsWith('s')))) op = `cvt.${a.type}.${a.type}`;
      } else if (val.kind === 'name' && Number((flat.regType(x.name(val.name)) ?? '').replace(/^\.[a-z]+/, '') || 0) > a.bytes * 8) op = `cvt.${a.type}.${a.type}`;
      const [base, ...mods] = op.split('.');
      const ins: Instruction = { ...x.ins, opcode: op, base: base!, mods, operands: load ? [val, cellOp] : [cellOp, val] };
      return [{ ...x, ins, name }];
    });
  });
  const flatItems = items.flatMap((x) => (Array.isArray(x) ? x : [x]));
  return { items: flatItems, decls: flat.decls, regType: (n) => cellTypes.get(n) ?? flat.regType(n) };
}

/** `it` with every depot symbol operand replaced by the depot's address (an immediate). */
function withDepotAddresses(it: FlatIns, depots: Map<string, number>): FlatIns {
  const o = it.ins.operands;
  if (!o.some((x) => x.kind === 'name' && depots.has(it.name(x.name)))) return it;
  const operands = o.map((x): Operand => {
    if (x.kind !== 'name') return x;
    const a = depots.get(it.name(x.name));
    return a === undefined ? x : { kind: 'int', value: BigInt(a), text: String(a), pos: x.pos };
  });
  return { ...it, ins: { ...it.ins, operands } };
}
