/**
 * Loads of initialized module variables (PTX ISA §5.4.4 "Variable Initializers", §9.7.9.8 ld): a
 * `.const` variable, or a `.global` one that no instruction of the kernel stores to, holds its
 * initializer for the whole launch, so an integer `ld` of it at a constant offset reads a known
 * value. nvcc hoists a constant temporary into such a variable (`-G`: libcu++'s
 * `cuda::aligned_size_t<16>(1024)` is `.global .align 8 .b8 K$0[8] = {0, 4}`, read with `mov.u64
 * %rd25, K$0; cvta.global.u64 %rd26, %rd25; ld.u64 %rd27, [%rd26]`). Only those temporaries (a `$`
 * in the name) are read this way: a user's `__device__` or `__constant__` variable may be set by the
 * host (`cudaMemcpyToSymbol`) before the launch. Each such load becomes a `mov` of the value; every
 * other load stays as it was (opaque). The address must lead back to the variable plus a constant through single definitions
 * (`mov`, `cvta`, `cvt`, `add` of a constant) and the variable's address may reach nothing but such
 * loads (so no store through a copied pointer can change it).
 */
import type { Decl, Init, Module, Operand } from '../ptx/ast.js';
import { destsOf, sourcesOf } from './analysis.js';
import type { Flat, FlatIns } from './flat.js';

/** Little-endian bytes of an initialized variable; undefined when an element is not an integer. */
function initBytes(d: Decl, init: Init, size: number): number[] | undefined {
  const elem = Number(/(\d+)$/.exec(d.type)?.[1] ?? 0) / 8;
  if (!Number.isInteger(elem) || elem < 1 || /^\.f/.test(d.type)) return undefined;
  const items: bigint[] = [];
  const walk = (x: Init): boolean => {
    if (x.kind === 'list') return x.items.every(walk);
    if (x.kind !== 'int') return false;
    items.push(x.value);
    return true;
  };
  if (!walk(init)) return undefined;
  const bytes = new Array<number>(Math.max(size, items.length * elem)).fill(0);
  items.forEach((v, i) => {
    let u = BigInt.asUintN(elem * 8, v);
    for (let b = 0; b < elem; b++) { bytes[i * elem + b] = Number(u & 0xffn); u >>= 8n; }
  });
  return bytes;
}

/** The integer of `n` bytes at `off` (little-endian, signed for an `.s` type); undefined past the exact range. */
function readInt(bytes: readonly number[], off: number, n: number, signed: boolean): number | undefined {
  if (off < 0 || off + n > bytes.length) return undefined;
  let u = 0n;
  for (let b = n - 1; b >= 0; b--) u = (u << 8n) | BigInt(bytes[off + b]!);
  const v = signed ? BigInt.asIntN(n * 8, u) : u;
  return v >= BigInt(-Number.MAX_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : undefined;
}

const COPY = new Set(['mov', 'cvta', 'cvt', 'add']);

/** `flat` with its loads of initialized, never-stored module variables replaced by moves of their values (see the module comment). */
export function initializedLoads(flat: Flat, m?: Module): Flat {
  const vars = new Map<string, number[]>();
  for (const d of m?.items ?? []) {
    if (d.kind !== 'decl' || !(d.space.startsWith('.global') || d.space.startsWith('.const'))) continue;
    for (const n of d.names) {
      // Only nvcc's own temporaries (`K$0`): a user's variable may be set by the host (cudaMemcpyToSymbol) before the launch.
      if (!n.init || n.range !== undefined || !n.name.includes('$')) continue;
      const el = Number(/(\d+)$/.exec(d.type)?.[1] ?? 8) / 8;
      const bytes = initBytes(d, n.init, (n.dims ?? []).reduce<number>((a, x) => a * (x ?? 1), el));
      if (bytes) vars.set(n.name, bytes);
    }
  }
  if (!vars.size) return flat;
  const defs = new Map<string, FlatIns[]>();
  for (const it of flat.items) if (!('label' in it)) for (const d of destsOf(it)) (defs.get(d) ?? defs.set(d, []).get(d)!).push(it);
  // The variable and offset a register holds the address of, through single definitions.
  const memo = new Map<string, { sym: string; off: number } | null>();
  const addrOfReg = (r: string, depth = 0): { sym: string; off: number } | null => {
    if (memo.has(r)) return memo.get(r)!;
    const d = defs.get(r);
    let out: { sym: string; off: number } | null = null;
    if (d && d.length === 1 && depth < 32 && COPY.has(d[0]!.ins.base) && !d[0]!.ins.guard) {
      const it = d[0]!;
      const [a, b] = sourcesOf(it);
      const base = a ? addrOfOperand(it, a, depth + 1) : null;
      if (base && it.ins.base !== 'add') out = b ? null : base;
      else if (base && b?.kind === 'int') out = { sym: base.sym, off: base.off + Number(b.value) };
    }
    memo.set(r, out);
    return out;
  };
  const addrOfOperand = (it: FlatIns, o: Operand, depth = 0): { sym: string; off: number } | null => {
    if (o.kind === 'name') return vars.has(o.name) ? { sym: o.name, off: 0 } : addrOfReg(it.name(o.name), depth);
    if (o.kind === 'address' && o.base && !o.rest) {
      const b = addrOfOperand(it, { kind: 'name', name: o.base, pos: o.pos }, depth);
      return b ? { sym: b.sym, off: b.off + Number(o.offset) } : null;
    }
    return null;
  };
  // A variable whose address reaches anything but a copy or the address of a load is left alone.
  const escaped = new Set<string>();
  for (const it of flat.items) {
    if ('label' in it) continue;
    const loadAddr = it.ins.base === 'ld' ? it.ins.operands[1] : undefined;
    const dests = destsOf(it);
    // A copy into a register that still holds a known address passes it on (that register is checked where it is used).
    if (COPY.has(it.ins.base) && dests.length === 1 && addrOfReg(dests[0]!)) continue;
    for (const o of it.ins.operands) {
      if (o === loadAddr || (dests.length && o === it.ins.operands[0])) continue;
      const a = o.kind === 'name' || o.kind === 'address' ? addrOfOperand(it, o) : null;
      if (a) escaped.add(a.sym);
      if (o.kind === 'expr') for (const s of vars.keys()) if (JSON.stringify(o.expr, (_k, x: unknown) => (typeof x === 'bigint' ? String(x) : x)).includes(`"${s}"`)) escaped.add(s);
    }
  }
  let touched = false;
  const items = flat.items.map((it) => {
    if ('label' in it || it.ins.base !== 'ld' || it.ins.mods.some((x) => x.startsWith('shared') || x === 'param' || x === 'local' || x.startsWith('v'))) return it;
    const t = it.ins.mods.find((x) => /^[bsu](8|16|32|64)$/.test(x));
    const [dst, src] = it.ins.operands;
    if (!t || !dst || dst.kind !== 'name' || !src) return it;
    const a = addrOfOperand(it, src);
    if (!a || escaped.has(a.sym)) return it;
    const value = readInt(vars.get(a.sym)!, a.off, Number(t.slice(1)) / 8, t.startsWith('s'));
    if (value === undefined) return it;
    touched = true;
    return { ...it, ins: { ...it.ins, opcode: `mov.${t}`, base: 'mov', mods: [t], operands: [dst, { kind: 'int' as const, value: BigInt(value), text: String(value), pos: src.pos }] } };
  });
  return touched ? { ...flat, items } : flat;
}
