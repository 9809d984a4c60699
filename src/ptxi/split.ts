/**
 * The 32-bit words of a 64-bit value that leaves the exact range only through a constant: `mov.b64
 * {%lo, %hi}, %rd` (PTX ISA §9.7.9.10 mov, unpack) of `%rd = or / and / xor / add .b64 %x, C` with
 * `%x` exact and `C` any 64-bit immediate (a wgmma matrix descriptor's layout bits, §9.7.15.5.1:
 * CUTLASS builds `or.b64 %rd, %x, 0x4000004000010000` and unpacks it to advance the low word). Each
 * word is computed from `%x`'s words and `C`'s, so both stay exact though `%rd` does not.
 */
import type { Expr } from '../kernel/ir.js';
import type { Operand } from '../ptx/ast.js';
import type { FlatIns } from './flat.js';

/** An unpack of a constant-combined 64-bit value: the operation, its exact operand (flat name), the constant's words. */
export interface Split { op: 'or' | 'and' | 'xor' | 'add'; x: string; c: [bigint, bigint] }

const OPS = new Set(['or', 'and', 'xor', 'add']);
const MASK = 0xffffffffn;

/** The {@link Split} of `it` when it is such an unpack (its source's single definition `defs(src)`), else undefined. */
export function splitOf(it: FlatIns, defs: (reg: string) => FlatIns[]): Split | undefined {
  const [dst, src] = it.ins.operands;
  if (it.ins.base !== 'mov' || dst?.kind !== 'vector' || dst.items.length !== 2 || src?.kind !== 'name' || !it.ins.mods.includes('b64')) return undefined;
  const d = defs(it.name(src.name));
  if (d.length !== 1 || d[0]!.ins.guard || !OPS.has(d[0]!.ins.base) || d[0]!.ins.operands.length !== 3) return undefined;
  const def = d[0]!;
  const [, a, b] = def.ins.operands as [Operand, Operand, Operand];
  const [x, c] = a.kind === 'name' && b.kind === 'int' ? [a, b] : b.kind === 'name' && a.kind === 'int' ? [b, a] : [undefined, undefined];
  if (!x || !c || x.kind !== 'name' || c.kind !== 'int') return undefined;
  const v = BigInt.asUintN(64, BigInt(c.value));
  return { op: def.ins.base as Split['op'], x: def.name(x.name), c: [v & MASK, v >> 32n] };
}

/** Word `k` (0 low, 1 high) of the split's value, from `x` (the exact operand's value) as unsigned 32-bit words. */
export function splitWord(s: Split, x: Expr, k: 0 | 1): Expr {
  const m = num(0xffffffff);
  const word = (i: 0 | 1) => (i === 0 ? bin('&', x, m) : bin('&', bin('>>', x, num(32)), m));
  const c = (i: 0 | 1) => num(Number(s.c[i]));
  if (s.op !== 'add') return bin(s.op === 'or' ? '|' : s.op === 'and' ? '&' : '^', word(k), c(k));
  const low = bin('+', word(0), c(0));
  return k === 0 ? bin('&', low, m) : bin('&', bin('+', bin('+', word(1), c(1)), bin('>>', low, num(32))), m);
}

const num = (v: number): Expr => ({ k: 'num', v });
const bin = (op: Extract<Expr, { k: 'bin' }>['op'], a: Expr, b: Expr): Expr => ({ k: 'bin', op, a, b });
