/**
 * The shared-memory operand of a wgmma matrix descriptor, decoded from the descriptor's value (PTX
 * ISA §9.7.15.5.1 "Matrix Descriptor Format": bits 0-13 hold the start address as
 * `(addr & 0x3FFFF) >> 4`; the leading and stride byte offsets, base offset and swizzle mode above
 * them do not move the start). The walk finds the register whose low 14 bits are those of the
 * descriptor, so that a 64-bit descriptor whose high word leaves the exact range (`mov.b64 %rd,
 * {%lo, %hi}`, `or.b64` of a large constant) is decoded from its low word.
 */
import type { BufRef, Expr, MmaShape, Op, SrcLoc, Stmt } from '../kernel/ir.js';
import type { Operand } from '../ptx/ast.js';
import type { Facts } from './analysis.js';
import { defsOf } from './defs.js';
import { bin, num, NotModelled, once, regVar, type Lane, type ValueEnv } from './emit.js';
import type { InsEnv } from './insn.js';
import type { FlatIns } from './flat.js';
import type { SharedSym } from './layout.js';
import { descriptorLayout, fallbackFootprint, footprint, type OperandShape } from './desc-footprint.js';

/** The start-address field's mask (14 bits of 16-byte units). */
const FIELD = 0x3fff;

/**
 * A buffer element a descriptor may name, under `cond` (its address falls in that array) when
 * several arrays may hold it; `refs`, when the start address is decoded from the value: every
 * element the operand of shape `op` covers ({@link footprintRefs}).
 */
export interface DescRead { cond?: Expr; ref: BufRef; refs?: (op: OperandShape) => BufRef[] }

/** Whether an immediate operand leaves the low 14 bits of the other operand of `op` as they are. */
function keepsField(op: string, o: Operand | undefined): boolean {
  if (!o || o.kind !== 'int') return false;
  const low = BigInt.asUintN(64, BigInt(o.value)) & BigInt(FIELD);
  if (op === 'and') return low === BigInt(FIELD);
  return (op === 'or' || op === 'xor' || op === 'add') && low === 0n; // add: carries only go up
}

/** The source register of a definition that keeps the low 14 bits of its source, or undefined. */
function fieldSource(x: FlatIns): string | undefined {
  const ins = x.ins;
  if (ins.guard || ins.operands.length < 2) return undefined;
  const [a, b] = ins.operands.slice(1);
  if (ins.base === 'mov' && a?.kind === 'vector') {
    const lo = a.items[0]; // {lo, hi}: the first element is the low bits
    return lo?.kind === 'name' ? x.name(lo.name) : undefined;
  }
  if ((ins.base === 'mov' || ins.base === 'cvt') && a?.kind === 'name' && ins.operands.length === 2) {
    if (ins.mods.some((m) => /^(f|bf|e4m3|e5m2)/.test(m)) || ins.mods.some((m) => /^[bsu]8$/.test(m))) return undefined;
    return /^%[a-z_]+(\.[xyz])?$/.test(a.name) ? undefined : x.name(a.name);
  }
  if (['and', 'or', 'xor', 'add'].includes(ins.base) && ins.operands.length === 3) {
    if (a?.kind === 'name' && keepsField(ins.base, b)) return x.name(a.name);
    if (b?.kind === 'name' && keepsField(ins.base, a)) return x.name(b.name);
  }
  return undefined;
}

/**
 * The register whose low 14 bits are descriptor `reg`'s start-address field and whose value the
 * translation computes: the deepest one with a modelled value along the single definitions that keep
 * those bits (`mov.b64 {lo, hi}` → `lo`, `cvt`, `and` / `or` / `xor` / `add` of a constant that
 * leaves them); undefined when every one is opaque.
 */
export function descriptorLow(facts: Facts, reg: string): string | undefined {
  let best = facts.opaque(reg) ? undefined : reg;
  let r = reg;
  for (let i = 0; i < 16; i++) {
    const d = defsOf(facts, r);
    const next = d.length === 1 ? fieldSource(d[0]!) : undefined;
    if (!next) break;
    r = next;
    if (!facts.opaque(r)) best = r;
  }
  return best;
}

/** The start byte address a descriptor holds, `(low & 0x3FFF) << 4` (§9.7.15.5.1), from register `low` in `lane`. */
export function startAddress(env: ValueEnv, low: string, lane: Lane = 'lead'): Expr {
  return bin('*', bin('&', regVar(env, low, lane), num(FIELD)), num(16));
}

/**
 * The buffer elements descriptor register `reg` of `it` may read: the data arrays (buffers and
 * mixed arrays) that its decoded start address may fall in, each under the condition that it does
 * when there are several (`at(sym, addr)`: the element of `sym` at `addr`, refs.ts; `root`: the
 * register of a shared-memory address it was built from, defs.ts `descriptorRoot`). Undefined when
 * the descriptor's value is opaque (the caller follows its provenance instead).
 */
export function descriptorReads(env: ValueEnv, reg: string, shared: Map<string, SharedSym>, at: (sym: SharedSym, addr: Expr) => BufRef, root?: string): DescRead[] | undefined {
  const low = descriptorLow(env.facts, reg);
  if (!low) return undefined;
  // The array its provenance root points into, when one (the stage-0 tile a descriptor moved to
  // stage s was built from lies in the array of every stage); else every data array.
  const from = root ? [...env.facts.prov(root)].filter((s) => shared.get(s)?.role !== 'barrier' && shared.has(s)) : [];
  const data = from.length === 1 ? [shared.get(from[0]!)!] : [...shared.values()].filter((s) => s.role !== 'barrier');
  if (!data.length) return undefined;
  const addr = startAddress(env, low);
  const layout = descriptorLayout(env.facts, reg);
  const read = (s: SharedSym): DescRead => ({ ref: at(s, addr), refs: (op) => footprintRefs(s, addr, footprint(layout, op) ?? fallbackFootprint(op), at) });
  if (data.length === 1) return [read(data[0]!)];
  return data.map((s) => ({ cond: bin('&&', bin('>=', addr, num(s.base)), bin('<', addr, num(s.base + s.size))), ...read(s) }));
}

/** The most elements one operand's read names (first, last and those after the first): an array of small elements keeps the MMA's read list bounded. */
const MAX_REFS = 64;

/** `min(a, b)` as an expression. */
const min = (a: Expr, b: Expr): Expr => (a.k === 'num' && b.k === 'num' ? num(Math.min(a.v, b.v)) : bin('-', a, bin('*', bin('>', a, b), bin('-', a, b))));

/**
 * The elements of data array `s` that the bytes an operand starting at `start` reads overlap (PTX
 * ISA §9.7.15.5.1; `fp` from desc-footprint.ts: `start − start mod align` up to `roundUp(start +
 * extent, align)`), clamped to the array's end: the first and last element through `at` (each
 * checked as `at` checks one), those between as the first's index plus i, at most the last's
 * (duplicates name one element twice, which the MMA's reads allow); at most {@link MAX_REFS}, the
 * first 63 and the last, when the operand spans more elements.
 */
export function footprintRefs(s: SharedSym, start: Expr, fp: { align: number; extent: number }, at: (sym: SharedSym, addr: Expr) => BufRef): BufRef[] {
  const A = fp.align;
  const begin = A > 16 ? bin('-', start, bin('%', start, num(A))) : start;
  const end = bin('*', bin('/', bin('+', start, num(fp.extent + A - 1)), num(A)), num(A));
  const first = at(s, begin);
  const longest = Math.ceil((fp.extent + A - 16) / A) * A; // start is 16-byte aligned: start mod A ≤ A − 16
  const n = Math.min(Math.floor((longest - 1) / s.granule) + 2, Math.ceil(s.size / s.granule), MAX_REFS);
  if (n <= 1) return [first];
  const last = at(s, min(bin('-', end, num(1)), num(s.base + s.size - 1)));
  if (first.index.k === 'num' && last.index.k === 'num') {
    const [i0, i1] = [first.index.v, last.index.v];
    return [first, ...Array.from({ length: Math.min(MAX_REFS - 2, Math.max(0, i1 - i0 - 1)) }, (_, i) => ({ ...first, index: num(i0 + 1 + i) })), ...(i1 > i0 ? [last] : [])];
  }
  const mid = Array.from({ length: n - 2 }, (_, i) => ({ ...first, index: min(bin('+', first.index, num(i + 1)), last.index) }));
  return [first, ...mid, last];
}

/** Bits of one element of a wgmma type (§9.7.15.5: .f16/.bf16 16, .tf32 32, .e4m3/.e5m2/.s8/.u8 8, .b1 1). */
const TYPE_BITS: Record<string, number> = { f16: 16, bf16: 16, tf32: 32, e4m3: 8, e5m2: 8, s8: 8, u8: 8, b1: 1 };

/**
 * The operand shapes of a `wgmma.mma_async` (PTX ISA §9.7.15.5): A has m rows, B n, both k of their
 * type (`.dtype.atype.btype` after the shape); `imm-trans-a` / `imm-trans-b` (the .f16 / .bf16
 * forms only) of 1 make the operand MN-major, 0 K-major; a transpose operand that is not an
 * immediate leaves it open (both layouts' larger footprint).
 */
export function operandShapes(ins: FlatIns['ins'], shape: MmaShape): { a: OperandShape; b: OperandShape } {
  const si = ins.mods.findIndex((x) => /^m\d+n\d+k\d+$/.test(x));
  const [at, bt] = [ins.mods[si + 2], ins.mods[si + 3]];
  const bits = (t: string | undefined) => TYPE_BITS[t ?? ''] ?? 16;
  const ops = ins.operands;
  const rs = ops[1]?.kind === 'vector'; // A from registers
  const trans = (i: number): boolean | undefined => {
    if (at !== 'f16' && at !== 'bf16') return false;
    const o = ops[i];
    return o?.kind === 'int' ? o.value !== 0n : undefined;
  };
  return {
    a: { rows: shape.m, k: shape.k, bits: bits(at), mnMajor: trans(6) },
    b: { rows: shape.n, k: shape.k, bits: bits(bt), mnMajor: trans(rs ? 6 : 7) },
  };
}

/**
 * `wgmma.fence / commit_group / wait_group / mma_async` (PTX ISA §9.7.15): the
 * `mma_async`'s shared-memory reads are the elements its descriptors name ({@link DescRead}; A from
 * registers, the RS form, reads only B), one operation per combination of the arrays they may fall in.
 */
export function wgmmaStmts(env: InsEnv, it: FlatIns, lead: (o: Operand) => Expr, loc: SrcLoc, divergent: boolean, guard?: Expr): Stmt[] {
  const ins = it.ins;
  const m0 = ins.mods[0];
  if (m0 === 'fence') return [];
  if (m0 === 'commit_group') return once({ op: 'wgmma.commit_group' }, loc, divergent, guard);
  if (m0 === 'wait_group') return once({ op: 'wgmma.wait_group', n: lead(ins.operands[0]!) }, loc, divergent, guard);
  if (m0 !== 'mma_async') throw new NotModelled(ins.opcode);
  const shapeText = ins.mods.find((x) => /^m\d+n\d+k\d+$/.test(x));
  const [, mm, nn, kk] = /^m(\d+)n(\d+)k(\d+)$/.exec(shapeText ?? 'm64n64k16')!;
  const shape: MmaShape = { m: Number(mm), n: Number(nn), k: Number(kk) };
  const ops = ins.operands;
  const alts: [DescRead, OperandShape][][] = [];
  const sh = operandShapes(ins, shape);
  // A from registers (the RS form): only B is read from shared memory
  for (const [o, os] of [[ops[1], sh.a], [ops[2], sh.b]] as const) if (o && o.kind === 'name') alts.push(env.descReads(it, it.name(o.name)).map((x) => [x, os]));
  const combos = alts.reduce<[DescRead, OperandShape][][]>((acc, xs) => acc.flatMap((c) => xs.map((x) => [...c, x])), [[]]);
  const mma = (c: [DescRead, OperandShape][]) => once({ op: 'wgmma.mma_async', reads: c.flatMap(([x, os]) => (x.refs ? x.refs(os) : [x.ref])), shape } as Op, loc, divergent, guard);
  if (combos.length === 1 && combos[0]!.every(([x]) => !x.cond)) return mma(combos[0]!);
  // Several arrays may hold a decoded start address: the one it falls in, at run time.
  const miss = once({ op: 'trap', message: `${ins.opcode}: a matrix descriptor's start address lies in no .shared data array` }, loc, divergent, guard);
  return combos.reduceRight<Stmt[]>((rest, c) => {
    const conds = c.flatMap(([x]) => (x.cond ? [x.cond] : []));
    const cond = conds.reduce((a, b) => bin('&&', a, b));
    return [{ s: 'if', cond, then: mma(c), else: rest, loc }];
  }, miss);
}
