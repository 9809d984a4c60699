/**
 * The high half of a 32 × 32-bit product, exactly (PTX ISA §9.7.1.3 `mul`): `mul.hi` of a 32-bit
 * type, and nvcc's other way of writing it, a 64-bit product shifted right by at least 32 bits:
 *
 *     mul.wide.u32  %rd36, %r180, 613566757;    // ⌊x / 7⌋ of a loop's trip count
 *     shr.u64       %rd37, %rd36, 32;
 *     cvt.u32.u64   %r181, %rd37;
 *
 * The product itself may pass 2^53, which the machine's exact integers refuse (an `arith` trap),
 * even where the value is never used (a trip count computed for lanes that skip the loop). The
 * high half is computed from 16-bit halves instead, each partial product below 2^49:
 * ⌊a · b / 2^32⌋ = ⌊(a · ⌊b / 2^16⌋ + ⌊a · (b mod 2^16) / 2^16⌋) / 2^16⌋ (`>>` is the floor, so
 * the identity holds for signed operands too). A `shr` by `s ≥ 32` of a `mul.wide.u32` result
 * reads the product's operands instead of its destination (it is the high half shifted by
 * `s − 32`), so the product is left out when nothing else reads it (needed.ts).
 */
import type { Expr } from '../kernel/ir.js';
import type { Operand } from '../ptx/ast.js';
import { destsOf, regsOf } from './analysis.js';
import type { Flat, FlatIns } from './flat.js';
import { bin, num } from './emit.js';

/** ⌊a · b / 2^32⌋ for 32-bit operands, without a product beyond 2^49. */
export function high32(a: Expr, b: Expr): Expr {
  const hi = bin('*', a, bin('>>', b, num(16)));
  const lo = bin('>>', bin('*', a, bin('&', b, num(0xffff))), num(16));
  return bin('>>', bin('+', hi, lo), num(16));
}

/** A `shr` of a `mul.wide.u32` result by 32 or more: the product (its operands are read instead) and the shift beyond 32. */
export interface WideHigh {
  mul: FlatIns;
  a: Operand;
  b: Operand;
  /** The shift count minus 32. */
  extra: number;
}

const FUSED = new WeakMap<FlatIns, WideHigh>();

/** The fused form of `it` when {@link scanWideHighs} found one (a `shr` of a `mul.wide.u32` result). */
export function wideHighOf(it: FlatIns): WideHigh | undefined {
  return FUSED.get(it);
}

/**
 * Finds every `shr.{u64,b64} q, d, s` (s a constant, 32 ≤ s < 64) whose `d` has one definition, an
 * unguarded `mul.wide.u32 d, a, b` earlier in the same straight run of instructions (no label,
 * branch or other definition of `d`, `a` or `b` between them), and records it for
 * {@link wideHighOf}. Returns the map from each such `shr` to its product.
 */
export function scanWideHighs(flat: Flat): ReadonlyMap<FlatIns, WideHigh> {
  const out = new Map<FlatIns, WideHigh>();
  const defCount = new Map<string, number>();
  for (const it of flat.items) if (!('label' in it)) for (const d of destsOf(it)) defCount.set(d, (defCount.get(d) ?? 0) + 1);
  // The open products of the current straight run: destination → index of its mul.wide.
  let open = new Map<string, number>();
  flat.items.forEach((it, i) => {
    if ('label' in it) { open = new Map(); return; }
    const ins = it.ins;
    if (ins.base === 'shr' && !ins.guard && ins.mods.some((m) => m === 'u64' || m === 'b64')) {
      const [, src, sh] = ins.operands;
      const s = sh?.kind === 'int' ? Number(sh.value) : NaN;
      if (src?.kind === 'name' && s >= 32 && s < 64) {
        const d = it.name(src.name);
        const at = open.get(d);
        if (at !== undefined && defCount.get(d) === 1) {
          const mul = flat.items[at] as FlatIns;
          const w: WideHigh = { mul, a: mul.ins.operands[1]!, b: mul.ins.operands[2]!, extra: s - 32 };
          out.set(it, w);
          FUSED.set(it, w);
        }
      }
    }
    // A definition closes every open product that reads or writes the register it defines.
    for (const d of destsOf(it)) {
      for (const [p, at] of [...open]) {
        const m = flat.items[at] as FlatIns;
        if (p === d || m.ins.operands.slice(1, 3).some((o) => regsOf(o, m).includes(d))) open.delete(p);
      }
    }
    if (ins.base === 'mul' && ins.mods.includes('wide') && ins.mods.includes('u32') && !ins.guard && ins.operands.length === 3) {
      const d = destsOf(it)[0];
      if (d !== undefined && ins.operands.slice(1).every((o) => o.kind === 'int' || o.kind === 'name')) open.set(d, i);
    }
    if (ins.base === 'bra' || ins.base === 'ret' || ins.base === 'exit' || ins.base === 'call') open = new Map();
  });
  return out;
}
