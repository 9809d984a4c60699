/**
 * The shared-memory footprint of a wgmma operand: the byte range its matrix descriptor describes
 * (PTX ISA §9.7.15.5.1 "Matrix Descriptor Format", with the canonical layouts of §9.7.15.5
 * "Shared Memory Matrix Layout" / "Strides"). The layout fields (leading byte offset, bits 16-29;
 * stride byte offset, bits 32-45; swizzle mode, bits 62-63) are found statically, as the bits of
 * the descriptor's value known before running ({@link knownBits}: immediates combined by `mov`,
 * `mov.b64 {lo, hi}`, `cvt`, `and` / `or` / `xor` / `add`, `shl` / `shr`, `shfl.sync`), since a
 * kernel's layout bits are constants even where its start address is not.
 */
import type { Operand } from '../ptx/ast.js';
import type { Facts } from './analysis.js';
import { defsOf } from './defs.js';
import type { FlatIns } from './flat.js';

/** The bits of a value known before running: `zero` known 0, `one` known 1 (64-bit masks). */
export interface Known { zero: bigint; one: bigint }

const ALL = (1n << 64n) - 1n;
const UNKNOWN: Known = { zero: 0n, one: 0n };
const exact = (v: bigint): Known => ({ one: BigInt.asUintN(64, v), zero: ALL & ~BigInt.asUintN(64, v) });
const join = (a: Known, b: Known): Known => ({ zero: a.zero & b.zero, one: a.one & b.one });
const widthMask = (w: number): bigint => (1n << BigInt(w)) - 1n;

/** `k` as a `w`-bit value: bits from `w` up known zero (a zero extension). */
const zext = (k: Known, w: number): Known => ({ zero: (k.zero & widthMask(w)) | (ALL & ~widthMask(w)), one: k.one & widthMask(w) });

/** The width of an instruction's type modifier (`b64` → 64), the last one (`cvt.u64.u32`: the source's). */
function widths(mods: readonly string[]): number[] {
  return mods.flatMap((m) => { const x = /^[bsuf](8|16|32|64)$/.exec(m); return x ? [Number(x[1])] : []; });
}

/** Known bits of a sum (LLVM's KnownBits::computeForAddCarry, carry in 0): a carry is known where it is the same at both extremes. */
function addKnown(a: Known, b: Known): Known {
  const maxA = ALL & ~a.zero, maxB = ALL & ~b.zero;
  const sumMax = BigInt.asUintN(64, maxA + maxB);
  const sumMin = BigInt.asUintN(64, a.one + b.one);
  const carryKnown = ALL & ~((sumMax ^ maxA ^ maxB) ^ (sumMin ^ a.one ^ b.one));
  const known = (a.zero | a.one) & (b.zero | b.one) & carryKnown;
  return { zero: known & ~sumMin & ALL, one: known & sumMin };
}

/**
 * The bits of register `reg` (a flat name) known before running, from its definitions (every
 * definition's, when several: their common bits); a register on a cycle of definitions, one
 * loaded or computed otherwise, has none known.
 */
export function knownBits(facts: Facts, reg: string, walk: Walk = { seen: new Set(), memo: new Map(), steps: 0 }): Known {
  const done = walk.memo.get(reg);
  if (done) return done;
  if (walk.seen.has(reg) || ++walk.steps > 4096) return UNKNOWN;
  const ds = defsOf(facts, reg);
  if (!ds.length) return UNKNOWN;
  walk.seen.add(reg);
  try {
    const k = ds.map((d) => defKnown(facts, d, reg, walk)).reduce(join);
    walk.memo.set(reg, k);
    return k;
  } finally {
    walk.seen.delete(reg);
  }
}

/** A {@link knownBits} walk: the registers on its path (a cycle knows nothing), results so far, steps taken (at most 4096). */
interface Walk { seen: Set<string>; memo: Map<string, Known>; steps: number }

function operandKnown(facts: Facts, it: FlatIns, o: Operand | undefined, walk: Walk): Known {
  if (!o) return UNKNOWN;
  if (o.kind === 'int') return exact(BigInt(o.value));
  if (o.kind !== 'name' || /^%[a-z_]+(\.[xyz])?$/.test(o.name)) return UNKNOWN;
  return knownBits(facts, it.name(o.name), walk);
}

/** The known bits of the value `it` writes to its first destination. */
function defKnown(facts: Facts, it: FlatIns, reg: string, walk: Walk): Known {
  const ins = it.ins;
  const w = widths(ins.mods)[0] ?? 64;
  const [, a, b] = ins.operands;
  const src = (o: Operand | undefined) => operandKnown(facts, it, o, walk);
  const sized = (k: Known) => zext(k, w);
  if (ins.guard) return UNKNOWN; // a guarded definition may leave the old value (joined elsewhere)
  switch (ins.base) {
    case 'mov': {
      const dst = ins.operands[0];
      if (ins.operands.length !== 2) return UNKNOWN;
      if (dst?.kind === 'vector') {
        // an unpack `mov.b64 {%lo, %hi}, %rd`: item i is bits part·i .. of the source
        const i = dst.items.findIndex((x) => x.kind === 'name' && it.name(x.name) === reg);
        const part = w / dst.items.length;
        if (i < 0 || a?.kind !== 'name') return UNKNOWN;
        const x = src(a), sh = BigInt(part * i);
        return zext({ zero: x.zero >> sh, one: x.one >> sh }, part);
      }
      if (a?.kind === 'vector') {
        const part = w / a.items.length;
        return a.items.reduce<Known>((acc, x, i) => {
          const k = zext(src(x), part);
          const sh = BigInt(part * i);
          return { zero: acc.zero & ~(widthMask(part) << sh) | ((k.zero & widthMask(part)) << sh), one: acc.one | ((k.one & widthMask(part)) << sh) };
        }, { zero: ALL & ~widthMask(w), one: 0n });
      }
      return sized(src(a));
    }
    case 'cvt': {
      const [dw, sw] = widths(ins.mods);
      if (!dw || !sw || ins.mods.some((m) => /^(f|bf|e4m3|e5m2|tf32)/.test(m))) return UNKNOWN;
      const s = src(a);
      const signed = ins.mods.filter((m) => /^[bsuf](8|16|32|64)$/.test(m))[1]?.startsWith('s');
      // a sign extension whose sign bit is not known zero: only the source's own bits are known
      if (sw < dw && signed && !((s.zero >> BigInt(sw - 1)) & 1n)) return { zero: s.zero & widthMask(sw), one: s.one & widthMask(sw) };
      return zext(s, Math.min(sw, dw));
    }
    case 'and': { const x = src(a), y = src(b); return sized({ zero: x.zero | y.zero, one: x.one & y.one }); }
    case 'or': { const x = src(a), y = src(b); return sized({ zero: x.zero & y.zero, one: x.one | y.one }); }
    case 'xor': { const x = src(a), y = src(b); const k = (x.zero | x.one) & (y.zero | y.one); return sized({ zero: k & ~(x.one ^ y.one) & ALL, one: k & (x.one ^ y.one) }); }
    case 'add': return ins.mods.some((m) => /^(f|bf|cc|sat)/.test(m)) ? UNKNOWN : sized(addKnown(src(a), src(b)));
    case 'shl': case 'shr': {
      const n = b?.kind === 'int' ? Number(b.value) : undefined;
      if (n === undefined || n < 0 || n >= w) return UNKNOWN;
      const x = zext(src(a), w);
      const sh = BigInt(n);
      if (ins.base === 'shl') return sized({ zero: (x.zero << sh) | widthMask(n), one: x.one << sh });
      if (ins.mods.some((m) => /^s\d/.test(m))) return UNKNOWN;
      return sized({ zero: (x.zero >> sh) | (widthMask(n) << BigInt(w - n)), one: x.one >> sh });
    }
    // A lane's copy of another lane's value: the bits known of the value are known of the copy.
    case 'shfl': return ins.operands[0]?.kind === 'name' ? sized(src(a)) : UNKNOWN;
    default: return UNKNOWN;
  }
}

/** The layout fields of a descriptor (§9.7.15.5.1), each undefined when not known before running. */
export interface DescLayout { lbo?: number; sbo?: number; swizzle?: 0 | 1 | 2 | 3 }

/** Bits `lo`..`hi` (inclusive) of a known value, when all of them are known. */
function field(k: Known, lo: number, hi: number): number | undefined {
  const m = widthMask(hi - lo + 1) << BigInt(lo);
  return ((k.zero | k.one) & m) === m ? Number((k.one & m) >> BigInt(lo)) : undefined;
}

/**
 * The leading / stride byte offsets and swizzle mode of descriptor register `reg` (PTX ISA
 * §9.7.15.5.1: bits 16-29 LBO >> 4, bits 32-45 SBO >> 4, bits 62-63 swizzle: 0 none, 1 128-byte,
 * 2 64-byte, 3 32-byte), as far as they are known before running.
 */
export function descriptorLayout(facts: Facts, reg: string): DescLayout {
  const k = knownBits(facts, reg);
  const lbo = field(k, 16, 29), sbo = field(k, 32, 45), sw = field(k, 62, 63);
  return { ...(lbo !== undefined ? { lbo: lbo * 16 } : {}), ...(sbo !== undefined ? { sbo: sbo * 16 } : {}), ...(sw !== undefined ? { swizzle: sw as 0 | 1 | 2 | 3 } : {}) };
}

/** A wgmma operand as the instruction gives it: rows (m for A, n for B), k, element bits, major-ness. */
export interface OperandShape { rows: number; k: number; bits: number; mnMajor?: boolean }

/**
 * The bytes an operand reads relative to its start address `start`: from `start − start mod align`
 * up to `roundUp(start + extent, align)`. K-major (§9.7.15.5, "Shared Memory Matrix Layout"), rows
 * R, row groups G = ⌈R / 8⌉, K bytes Kb = k × element bytes:
 * - no swizzle: core matrices of 8 rows × 16 B (128 contiguous bytes), LBO apart along K, SBO apart
 *   along M/N: extent (G−1)·SBO + (⌈Kb/16⌉−1)·LBO + 128, align 16;
 * - swizzle of S = 128 / 64 / 32 B: atoms of 8 rows × S B, rows S apart, atoms SBO apart along M/N
 *   (LBO apart along K when Kb > S): the unswizzled bytes run to start + (G−1)·SBO +
 *   (⌈Kb/S⌉−1)·LBO + 7·S + min(S, Kb), and the swizzle XORs only address bits 4 .. log2(S)−1 with
 *   higher ones, so each byte stays in the S-aligned segment of its unswizzled address: align S
 *   (a k-slice whose start lies inside the atom covers the whole atom rows).
 * MN-major (the `imm-trans` forms): 16-byte (or S-byte) chunks along M/N and rows of K; which of
 * LBO / SBO steps along which dimension is taken as the larger extent of both. Undefined when a
 * needed field is not known.
 */
export function footprint(layout: DescLayout, op: OperandShape): { align: number; extent: number } | undefined {
  const sw = layout.swizzle;
  if (sw === undefined) return undefined;
  const S = [0, 128, 64, 32][sw]!;
  const kb = Math.ceil((op.k * op.bits) / 8);
  const lbo = layout.lbo, sbo = layout.sbo;
  const unit = S || 16;
  const kMajor = (): number | undefined => {
    const g = Math.ceil(op.rows / 8), kc = Math.ceil(kb / unit);
    if ((g > 1 && sbo === undefined) || (kc > 1 && lbo === undefined)) return undefined;
    const steps = (g - 1) * (sbo ?? 0) + (kc - 1) * (lbo ?? 0);
    return S ? steps + 7 * S + Math.min(S, kb) : steps + 128;
  };
  const mnMajor = (): number | undefined => {
    const mnBytes = Math.ceil((op.rows * op.bits) / 8);
    const cm = Math.ceil(mnBytes / unit), ck = Math.ceil(op.k / 8);
    const offs = [lbo, sbo];
    const need = (cm > 1 ? 1 : 0) + (ck > 1 ? 1 : 0);
    if (need && offs.some((x) => x === undefined)) return undefined;
    const [p, q] = [lbo ?? 0, sbo ?? 0];
    const steps = Math.max((cm - 1) * p + (ck - 1) * q, (cm - 1) * q + (ck - 1) * p);
    return S ? steps + 7 * S + Math.min(S, mnBytes) : steps + 128;
  };
  const e = op.mnMajor === false ? kMajor() : op.mnMajor === true ? mnMajor() : ((x, y) => (x === undefined || y === undefined ? undefined : Math.max(x, y)))(kMajor(), mnMajor());
  return e === undefined ? undefined : { align: unit, extent: e };
}

/**
 * The footprint assumed when the descriptor's layout fields are not known before running (PTX ISA
 * §9.7.15.5.1): R rows of 128 bytes from the start rounded down to 128 bytes, the extent of a
 * dense 128-byte-swizzled K-major tile (8-row atoms 1024 bytes apart), the widest canonical row;
 * it covers every dense K-major tile whose K extent is at most 128 bytes. Not a bound (a strided
 * tile may reach further), as docs/PTX.md says.
 */
export function fallbackFootprint(op: OperandShape): { align: number; extent: number } {
  return { align: 128, extent: op.rows * 128 };
}
