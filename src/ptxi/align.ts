/**
 * How a shared-memory address lies inside the element of its array (layout.ts cuts arrays into
 * elements of `granule` bytes): the byte offset `(addr − base) mod granule` when it is known before
 * running (a constant offset from the symbol, mixed.ts `staticOffset`), else the largest power of
 * two that divides every value `addr − base` can take, from the definitions of its registers: a
 * symbol (0 from its base) and an immediate (its lowest set bit) start it; `mov` / `cvt` / `cvta`
 * keep it; `add`, `sub`, `or`, `xor` take the least of their operands'; `shl` by an immediate k
 * multiplies it by 2^k; `mul.lo` / `mul.wide` / `mad.lo` multiply their factors'; `and` the most of
 * its operands' (a mask's cleared low bits stay cleared); anything else (a load, a special register,
 * `shr`, …) is 1. A register defined in a loop takes the least over its definitions (the loop's
 * own contributions never lower it below the others'), so the walk assumes no constraint where it
 * meets a register again.
 */
import type { Operand } from '../ptx/ast.js';
import type { Facts } from './analysis.js';
import { defsOf } from './defs.js';
import type { FlatIns } from './flat.js';
import { staticOffset, type ConstOf } from './mixed.js';

/** The most definitions deep the walk follows (beyond: 1, nothing known). */
const DEPTH = 24;
/** A power of two larger than any shared-memory offset: "every bit below it is 0". */
const ANY = 2 ** 30;

/** The lowest set bit of `n` (a power of two), {@link ANY} for 0. */
function lowBit(n: number): number {
  if (!Number.isSafeInteger(n)) return 1;
  if (n === 0) return ANY;
  let b = 1;
  let x = Math.abs(n);
  while (x % 2 === 0 && b < ANY) { x /= 2; b *= 2; }
  return b;
}

/** What the walk reads. */
interface Ctx { facts: Facts; sym: string; isShared: (n: string) => boolean; seen: Set<string> }

function operandAlign(c: Ctx, it: FlatIns, o: Operand | undefined, depth: number): number {
  if (!o) return 1;
  if (o.kind === 'int') return lowBit(Number(o.value));
  if (o.kind !== 'name') return 1;
  // The array's own symbol is 0 from its base; another array's base is 1 KiB aligned (layout.ts).
  if (c.isShared(o.name)) return o.name === c.sym ? ANY : 1024;
  if (/^%[a-z_]+(\.[xyz])?$/.test(o.name) && it.name(o.name) === o.name) return 1; // %tid.x, %laneid, …
  return regAlign(c, it.name(o.name), depth);
}

function regAlign(c: Ctx, reg: string, depth: number): number {
  if (c.seen.has(reg)) return ANY;
  if (depth > DEPTH) return 1;
  const defs = defsOf(c.facts, reg);
  if (!defs.length) return 1;
  c.seen.add(reg);
  let out = ANY;
  for (const d of defs) {
    out = Math.min(out, defAlign(c, d, depth + 1));
    if (out === 1) break;
  }
  c.seen.delete(reg);
  return out;
}

/** The alignment one definition's result has (see the module comment). */
function defAlign(c: Ctx, d: FlatIns, depth: number): number {
  const ins = d.ins;
  const [, a, b, e] = ins.operands;
  const al = (o: Operand | undefined) => operandAlign(c, d, o, depth);
  const times = (x: number, y: number) => Math.min(ANY, x * y);
  switch (ins.base) {
    case 'mov': case 'cvt': case 'cvta': return ins.operands.length === 2 ? al(a) : 1;
    case 'add': case 'sub': case 'or': case 'xor': return Math.min(al(a), al(b));
    case 'and': return Math.max(al(a), al(b));
    case 'shl': return b?.kind === 'int' && Number(b.value) < 31 ? times(al(a), 2 ** Number(b.value)) : 1;
    case 'mul': return ins.mods[0] === 'lo' || ins.mods[0] === 'wide' ? times(al(a), al(b)) : 1;
    case 'mad': return ins.mods[0] === 'lo' || ins.mods[0] === 'wide' ? Math.min(times(al(a), al(b)), al(e)) : 1;
    default: return 1;
  }
}

/**
 * Where address operand `o` of `it` lies in the elements of `granule` bytes of the `.shared` array
 * it derives from: `{ offset }`, the constant byte offset inside its element, when the address is
 * a constant offset from the symbol; else `{ step }`, the greatest divisor of `granule` that every
 * offset inside the element is a multiple of (`granule` itself: the address is always an element's
 * start). `sym` is the array's PTX name.
 */
export function withinElement(facts: Facts, it: FlatIns, o: Operand, sym: string, granule: number, isShared: (n: string) => boolean, constOf?: ConstOf): { offset: number } | { step: number } {
  const at = staticOffset(facts, it, o, isShared, constOf);
  if (at?.sym === sym) return { offset: ((at.offset % granule) + granule) % granule };
  if (o.kind !== 'address' || o.rest?.length) return { step: 1 };
  const c: Ctx = { facts, sym, isShared, seen: new Set() };
  const base = o.base ? operandAlign(c, it, { kind: 'name', name: o.base, pos: o.pos } as Operand, 0) : ANY;
  const align = Math.min(base, lowBit(Number(o.offset)));
  return { step: gcd(Math.min(align, ANY), granule) };
}

const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));
