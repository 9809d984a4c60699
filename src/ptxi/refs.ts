/**
 * The barrier or buffer element an address operand of `.shared` memory names (layout.ts): an
 * mbarrier array's `(addr − base) / 8`, a buffer's `(addr − base) / granule`, a mixed array's
 * mbarriers and data (mixed.ts), and the CTA of a `shared::cluster` address from `mapa`.
 */
import type { BarRef, BufRef, Expr } from '../kernel/ir.js';
import { evalExpr, exprNames, showExpr } from '../kernel/expr.js';
import type { Operand } from '../ptx/ast.js';
import type { Facts } from './analysis.js';
import { address, bin, num, NotModelled, v, type Lane, type ValueEnv } from './emit.js';
import type { FlatIns } from './flat.js';
import { accessBytes, CLUSTER_STRIDE, type SharedSym } from './layout.js';
import { MixedChecks, staticOffset, type ConstOf } from './mixed.js';
import { withinElement } from './align.js';

/** The barrier and buffer references of address operands (insn.ts `InsEnv.bar` / `buf`). */
export interface SharedRefs {
  bar(it: FlatIns, o: Operand, lane?: Lane): BarRef;
  buf(it: FlatIns, o: Operand, lane?: Lane): BufRef;
  /**
   * The byte range an access of one address starts at (a copy's source or destination, a warp's
   * load or store of one address): {@link buf}'s element with the byte offset inside it
   * (`BufRef.offset`, and `offsetStep` when it is computed at run time), so that the machine sees
   * the bytes from there (views.ts) rather than from the element's start.
   */
  range(it: FlatIns, o: Operand, lane?: Lane): BufRef;
  /** The buffer element of `sym` at address `addr` (a wgmma descriptor's decoded start, desc.ts), read by `it`. */
  bufAt(it: FlatIns, sym: SharedSym, addr: Expr, within?: { offset: number } | { step: number }): BufRef;
  /** The run-time checks of mixed arrays' references, put around their operations. */
  checks: MixedChecks;
}

/**
 * {@link SharedRefs} over the laid-out arrays `shared` (by PTX name); `env` evaluates addresses and
 * collects statements to run first; `constOf` says which offsets are known before running.
 */
export function sharedRefs(facts: Facts, shared: Map<string, SharedSym>, env: ValueEnv, constOf?: ConstOf): SharedRefs {
  const checks = new MixedChecks();
  const where = (it: FlatIns, o: Operand, lane: Lane = 'lead'): { sym: SharedSym; addr: Expr } => {
    if (o.kind !== 'address') throw new NotModelled(`expected an address operand`);
    let sym = o.base ? shared.get(o.base) : undefined;
    if (!sym && o.base) {
      const ps = [...facts.prov(it.name(o.base))].filter((s) => shared.has(s));
      if (ps.length > 1) throw new NotModelled(`address ${o.base} may point into ${ps.join(' or ')}`);
      if (ps.length === 1) sym = shared.get(ps[0]!);
    }
    if (!sym) throw new NotModelled(`address [${o.base ?? ''}${o.offset ? `+${o.offset}` : ''}] is not derived from a .shared array`);
    return { sym, addr: address(env, it, o, lane) };
  };
  return {
    checks,
    bar(it, o, lane): BarRef {
      const { sym, addr } = where(it, o, lane);
      const cluster = clusterAddressed(it);
      if (sym.role === 'mixed') {
        if (!sym.bars) throw new NotModelled(`${sym.ir} holds data and mbarriers, and no mbarrier operation names a constant byte offset of it: where its mbarriers are is not known before running`);
        // A constant offset (the analysis's, as layout.ts found the mbarriers) names its barrier directly.
        const at = staticOffset(facts, it, o, (n) => shared.has(n), constOf);
        const off = at?.sym === sym.name ? num(at.offset) : bin('-', cluster ? bin('&', addr, num(CLUSTER_STRIDE - 1)) : addr, num(sym.base));
        return checks.bar(sym.bars, sym.ir, fold(off), cluster ? clusterIndex(addr, 0, 1).cta : undefined, it.ins.opcode);
      }
      if (sym.role !== 'barrier') throw new NotModelled(`${sym.ir} is used as data and as an mbarrier`);
      if (!cluster) return { name: sym.ir, index: bin('/', bin('-', addr, num(sym.base)), num(8)) };
      return { name: sym.ir, ...clusterIndex(addr, sym.base, 8) };
    },
    buf(it, o, lane: Lane = 'lead'): BufRef {
      const { sym, addr } = where(it, o, lane);
      return this.bufAt(it, sym, addr);
    },
    range(it, o, lane: Lane = 'lead'): BufRef {
      const { sym, addr } = where(it, o, lane);
      const cluster = clusterAddressed(it) && it.ins.base !== 'mbarrier';
      if (sym.role === 'barrier' || cluster || sym.granule >= sym.size) return this.bufAt(it, sym, addr);
      return this.bufAt(it, sym, addr, withinElement(facts, it, o, sym.name, sym.granule, (n) => shared.has(n), constOf));
    },
    bufAt(it, sym, addr, within?: Within): BufRef {
      if (sym.role === 'barrier') throw new NotModelled(`${it.ins.opcode} accesses the mbarrier array ${sym.ir} as data`);
      const cluster = clusterAddressed(it) && it.ins.base !== 'mbarrier';
      const ref = elementRef(env, sym, addr, cluster, within);
      if (sym.role !== 'mixed' || !sym.bars) return ref;
      const local = cluster ? bin('&', addr, num(CLUSTER_STRIDE - 1)) : addr;
      const bytes = it.ins.base === 'ld' || it.ins.base === 'st' ? accessBytes(it.ins.mods) ?? 1 : 1;
      return checks.data(ref, sym.bars, sym.ir, fold(bin('-', local, num(sym.base))), bytes, it.ins.opcode);
    },
  };
}

/** Where an address lies inside its element (align.ts {@link withinElement}). */
type Within = { offset: number } | { step: number };

/**
 * The most byte offsets inside one element a reference computed at run time may name for the
 * machine to enumerate them as views (views.ts); past it the offset is left out: the access is
 * taken from its element's start, as before offsets were known.
 */
const MAX_OFFSETS = 64;

/**
 * The buffer element of address `addr` in buffer (or mixed) array `sym`; with `within`, the byte
 * offset inside it too (a constant, or a variable set before the operation with the multiple of
 * bytes it always is).
 */
function elementRef(env: ValueEnv, sym: SharedSym, addr: Expr, cluster: boolean, within?: Within): BufRef {
  if (cluster) return { name: sym.ir, ...clusterIndex(addr, sym.base, sym.granule) };
  const index = bin('/', bin('-', addr, num(sym.base)), num(sym.granule));
  const off = within ? offsetRef(env, sym, addr, within) : {};
  if (addr.k === 'num') return { name: sym.ir, index, ...off };
  // The element goes into a variable of its own before the operation (`buf#%r35`), so that where
  // the warp rests at the access its frame holds the element, not the address: warps whose
  // addresses differ but name one element then keep equal records (check/warp-relative.ts).
  const elem = `${sym.ir}#${showExpr(addr)}`;
  if (!env.pre.some((x) => x.s === 'let' && x.name === elem)) env.pre.push({ s: 'let', name: elem, value: index, loc: { line: 0, col: 0 } });
  return { name: sym.ir, index: v(elem), ...off };
}

/** The `offset` (and `offsetStep`) fields of a reference at `addr` in `sym`, by `within`; none when it is always 0. */
function offsetRef(env: ValueEnv, sym: SharedSym, addr: Expr, within: Within): Pick<BufRef, 'offset' | 'offsetStep'> {
  if ('offset' in within) return within.offset ? { offset: num(within.offset) } : {};
  if (within.step >= sym.granule || sym.granule / within.step > MAX_OFFSETS) return {};
  const value = bin('%', bin('-', addr, num(sym.base)), num(sym.granule));
  if (addr.k === 'num') return { offset: fold(value) };
  // In a variable of its own, as the element (warps with equal offsets keep equal records).
  const name = `${sym.ir}+#${showExpr(addr)}`;
  if (!env.pre.some((x) => x.s === 'let' && x.name === name)) env.pre.push({ s: 'let', name, value, loc: { line: 0, col: 0 } });
  return { offset: v(name), offsetStep: within.step };
}

/** `e` as a number when it reads no variable. */
function fold(e: Expr): Expr {
  return exprNames(e).size ? e : num(evalExpr(e, () => undefined));
}

/**
 * Whether the addresses of `it` are `shared::cluster` ones that may name a peer CTA (mapa): mbarrier,
 * st/red.async, tcgen05.commit, and `ld` / `st` of `.shared::cluster` (distributed shared memory,
 * PTX ISA §9.7.9.8 / §9.7.9.11; generic ones through a `mapa` address get it in generic.ts).
 */
export function clusterAddressed(it: FlatIns): boolean {
  const b = it.ins.base;
  return it.ins.mods.includes('shared::cluster') && (b === 'mbarrier' || b === 'ld' || b === 'st' || (b === 'red' && it.ins.mods[0] === 'async') || (b === 'tcgen05' && it.ins.mods[0] === 'commit'));
}

/** Element and CTA of a shared::cluster address: rank = addr / 2^24 − 1, or the executing CTA below 2^24 (layout.ts CLUSTER_STRIDE). */
export function clusterIndex(addr: Expr, base: number, granule: number): { index: Expr; cta: Expr } {
  const local = bin('&', addr, num(CLUSTER_STRIDE - 1));
  const high = bin('>>', addr, num(24));
  return { index: bin('/', bin('-', local, num(base)), num(granule)), cta: bin('+', bin('*', bin('==', high, num(0)), v('cta')), bin('*', bin('!=', high, num(0)), bin('-', high, num(1)))) };
}
