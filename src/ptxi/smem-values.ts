/**
 * Values passed through shared memory (a scheduler thread's `next[s] = t`, read back by the
 * consumers with `t = next[s]` after an mbarrier or `bar.sync` hands the stage over): which
 * `.shared` arrays carry their integer values in the machine's value cells (machine/values.ts;
 * `ld.shared` with a destination reads an element's cell, `st.shared` with a value writes it,
 * machine/ops/smem.ts). A cell belongs to one buffer element, so a value array is cut into
 * elements of its accesses' size, one cell per stored integer.
 *
 * An array is a value array when every instruction that addresses it is a scalar integer
 * `ld.shared` / `st.shared` (`b`, `s`, `u` of 8 to 64 bits, no vector) of one size w, at a
 * warp-uniform address of this CTA's shared memory, at least one of them a load, and it has at
 * most {@link MAX_VALUE_ELEMENTS} elements of w bytes. Any other access (a bulk copy, TMA, wgmma,
 * tcgen05, an mbarrier, a vector or floating-point access, another size, a lane-varying address,
 * a peer CTA's address) leaves it opaque, with the reason in {@link ValueArrays.why}: a value read
 * at another offset or size than it was written is never guessed.
 */
import type { Operand } from '../ptx/ast.js';
import { regsOf, type Facts } from './analysis.js';
import type { Flat, FlatIns } from './flat.js';
import { shortName } from './layout.js';

/** Most elements of a value array (small scheduler rings such as `next[S]`). */
export const MAX_VALUE_ELEMENTS = 64;

/** A store into a value array: the instruction and the operand it stores. */
export interface ValueStore { it: FlatIns; o: Operand }

/** The value arrays of a kernel (see the module comment). */
export interface ValueArrays {
  /** Element bytes of each value array, by PTX symbol name. */
  bytes: ReadonlyMap<string, number>;
  /** Why an array read by integer loads is not a value array (its loads stay opaque), by name. */
  why: ReadonlyMap<string, string>;
  /** The value array a scalar load or store addresses, or undefined. */
  arrayOf(it: FlatIns): string | undefined;
  /** The stores into each value array. */
  stores: ReadonlyMap<string, readonly ValueStore[]>;
  /** The loads of each value array. */
  loads: ReadonlyMap<string, readonly FlatIns[]>;
  /** Why the value of load `it` is not modelled, when it reads an array that is not a value array. */
  whyOf(it: FlatIns): string | undefined;
}

const INT = /^[bsu](8|16|32|64)$/;

/** Whether `it` is in a state space of this CTA's shared memory (not a peer's, `shared::cluster`). */
function ctaShared(mods: readonly string[]): boolean {
  return mods.includes('shared') || mods.includes('shared::cta');
}

/** Bytes of a scalar integer `ld` / `st` (no vector), else undefined. */
function scalarInt(it: FlatIns): number | undefined {
  const m = it.ins.mods;
  if (m.some((x) => /^v\d$/.test(x) || x === 'async')) return undefined;
  const t = m.find((x) => INT.test(x));
  return t ? Number(INT.exec(t)![1]) / 8 : undefined;
}

/** The address operand of an `ld` / `st` (others: every address operand). */
function addresses(it: FlatIns): Operand[] {
  const b = it.ins.base;
  if (b === 'ld') return it.ins.operands.slice(1, 2);
  if (b === 'st') return it.ins.operands.slice(0, 1);
  return it.ins.operands.filter((o) => o.kind === 'address');
}

/**
 * The value arrays of `flat` (see the module comment). `sizes`: bytes of each `.shared` array by
 * PTX name; `facts`: lane kinds and address provenance (analysis.ts).
 */
export function valueArrays(flat: Flat, facts: Facts, sizes: ReadonlyMap<string, number>): ValueArrays {
  const widths = new Map<string, Set<number>>();
  const loads = new Map<string, FlatIns[]>();
  const bad = new Map<string, string>();
  const stores = new Map<string, ValueStore[]>();
  const target = new Map<FlatIns, string>();
  const named = new Map<FlatIns, string>();
  for (const it of flat.items) {
    if ('label' in it) continue;
    const ins = it.ins;
    for (const a of addresses(it)) {
      if (a.kind !== 'address' || ins.mods.includes('param')) continue;
      const regs = regsOf({ ...a, rest: [] }, it);
      const syms = [...new Set([...(a.base && sizes.has(a.base) ? [a.base] : []), ...regs.flatMap((r) => [...facts.prov(r)].filter((s) => sizes.has(s)))])];
      if (!syms.length) continue;
      const where = `${ins.opcode} at line ${ins.pos.line}`;
      const w = (ins.base === 'ld' || ins.base === 'st') && ctaShared(ins.mods) ? scalarInt(it) : undefined;
      const why = w === undefined ? `it is also accessed by ${where}`
        : syms.length > 1 ? `${where} may address several arrays`
        : regs.some((r) => facts.kind(r) !== 'U') ? `${where} addresses it at a lane-varying address`
        : undefined;
      if (ins.base === 'ld' && syms.length === 1) named.set(it, syms[0]!);
      for (const s of syms) {
        if (why) { if (!bad.has(s)) bad.set(s, why); continue; }
        (widths.get(s) ?? widths.set(s, new Set()).get(s)!).add(w!);
        if (ins.base === 'ld') (loads.get(s) ?? loads.set(s, []).get(s)!).push(it);
        else (stores.get(s) ?? stores.set(s, []).get(s)!).push({ it, o: ins.operands[1]! });
        target.set(it, s);
      }
    }
  }
  const bytes = new Map<string, number>();
  const why = new Map<string, string>();
  for (const s of loads.keys()) {
    const size = sizes.get(s)!;
    const ws = [...widths.get(s)!];
    const w = ws[0]!;
    const reason = bad.get(s)
      ?? (ws.length > 1 ? `it is accessed with ${ws.sort((x, y) => x - y).join('- and ')}-byte loads or stores` : undefined)
      ?? (size % w !== 0 || size / w > MAX_VALUE_ELEMENTS ? `it has ${size} bytes: values are modelled in arrays of at most ${MAX_VALUE_ELEMENTS} elements of their accesses' size` : undefined);
    if (reason) why.set(s, reason);
    else bytes.set(s, w);
  }
  return {
    bytes,
    why,
    arrayOf: (it) => { const s = target.get(it); return s !== undefined && bytes.has(s) ? s : undefined; },
    stores: new Map([...stores].filter(([s]) => bytes.has(s))),
    loads: new Map([...loads].filter(([s]) => bytes.has(s))),
    whyOf(it) {
      const s = named.get(it);
      const r = s === undefined ? undefined : why.get(s) ?? bad.get(s);
      return r === undefined ? undefined : `the values of ld.shared are modelled in small integer arrays only, and ${shortName(s!)} is not one: ${r}`;
    },
  };
}
