/**
 * Where the symbols of a PTX kernel live in the translation: every `.shared` array (static and the
 * dynamic `extern .shared` one) gets a base address and becomes an IR barrier array (8 bytes per
 * mbarrier) when an mbarrier operation or a copy's completion operand addresses it, otherwise an
 * IR shared-memory buffer cut into elements of the tensor maps' box size (so that the stages of a
 * ring are separate elements); parameters get addresses (a tensor map is named by its address) or
 * values (`--param`).
 */
import type { BarrierDecl, BufferDecl, SrcLoc } from '../kernel/ir.js';
import type { Decl, Func, Module, Param } from '../ptx/ast.js';
import type { Facts } from './analysis.js';
import { regsOf } from './analysis.js';
import type { Flat } from './flat.js';

/** A `.shared` array of the kernel as the translation lays it out. */
export interface SharedSym {
  name: string;
  /** Display name in the IR (`full` for nvcc's `_ZZ…E4full`). */
  ir: string;
  base: number;
  size: number;
  role: 'barrier' | 'buffer';
  /** Bytes per IR element (8 for barriers). */
  granule: number;
  loc: SrcLoc;
}

/** First shared-memory address handed out (nothing lives at 0), and the alignment of every array. */
const SHARED_BASE = 1024;
const ALIGN = 1024;
/** Addresses of parameters (a tensor map is known by its address): one 4 KiB slot each from here. */
export const PARAM_BASE = 0x1000_0000;
/**
 * A `shared::cluster` address of CTA rank r (from `mapa`) is the CTA-local address plus
 * (r + 1) · 2^24; a plain shared address (below 2^24) is the executing CTA's.
 */
export const CLUSTER_STRIDE = 1 << 24;

/** nvcc's local-static mangling `_ZZ…E4full` → `full`; other names stay. */
export function shortName(name: string): string {
  const m = /E(\d+)([A-Za-z_][A-Za-z0-9_]*)$/.exec(name);
  if (m && m[2]!.length === Number(m[1])) return m[2]!;
  const p = /_param_(\d+)$/.exec(name);
  return p ? `param_${p[1]}` : name;
}

function declSize(d: Decl, n: Decl['names'][number], dynamicSmem: number): number {
  const elem = d.type === '.b64' || d.type === '.u64' || d.type === '.s64' || d.type === '.f64' ? 8 : d.type === '.b32' || d.type === '.u32' || d.type === '.s32' || d.type === '.f32' ? 4 : d.type === '.b16' || d.type === '.u16' ? 2 : 1;
  if (!n.dims || n.dims.length === 0) return elem;
  if (n.dims.some((x) => x === null)) return dynamicSmem;
  return n.dims.reduce<number>((a, x) => a * (x ?? 1), elem);
}

const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));

/** Lays out the `.shared` arrays of `f` (module-level ones included) and decides each one's role. */
export function layoutShared(m: Module, f: Func, flat: Flat, facts: Facts, dynamicSmem: number, boxes: number[], file: string): SharedSym[] {
  const decls = [...m.items.filter((i): i is Decl => i.kind === 'decl'), ...flat.decls].filter((d) => d.space.startsWith('.shared'));
  const barrierSyms = new Set<string>();
  /** Arrays an Ampere cp.async writes: cut into one warp's bytes (32 lanes × cp-size), each warp its own element. */
  const cpGranule = new Map<string, number>();
  for (const it of flat.items) {
    if ('label' in it) continue;
    const ins = it.ins;
    if (ins.base === 'cp' && (ins.mods[1] === 'ca' || ins.mods[1] === 'cg')) {
      const [dst, , size] = ins.operands;
      const per = size && size.kind === 'int' ? Number(size.value) * 32 : 512;
      if (dst && dst.kind === 'address' && dst.base) for (const s of [dst.base, ...regsOf({ ...dst, rest: [] }, it).flatMap((r) => [...facts.prov(r)])]) cpGranule.set(s, Math.min(cpGranule.get(s) ?? per, per));
    }
    let o;
    if (ins.base === 'mbarrier') o = ins.operands.find((x) => x.kind === 'address');
    else if (ins.base === 'cp' && ins.mods.some((x) => x.startsWith('mbarrier::complete_tx'))) o = [...ins.operands].reverse().find((x) => x.kind === 'address');
    else if ((ins.base === 'tcgen05' && ins.mods[0] === 'commit') || (ins.base === 'cp' && ins.mods[1] === 'mbarrier')) o = ins.operands.find((x) => x.kind === 'address');
    else if ((ins.base === 'st' || ins.base === 'red') && ins.mods[0] === 'async') o = [...ins.operands].reverse().find((x) => x.kind === 'address');
    else if (ins.base === 'clusterlaunchcontrol' && ins.mods[0] === 'try_cancel') o = ins.operands[1];
    if (!o || o.kind !== 'address' || !o.base) continue;
    barrierSyms.add(o.base);
    for (const r of regsOf({ ...o, rest: [] }, it)) for (const s of facts.prov(r)) barrierSyms.add(s);
  }
  const box = boxes.length ? boxes.reduce(gcd) : 0;
  const out: SharedSym[] = [];
  let at = SHARED_BASE;
  const used = new Set<string>();
  for (const d of decls) {
    for (const n of d.names) {
      const size = Math.max(1, declSize(d, n, dynamicSmem));
      const role = barrierSyms.has(n.name) ? 'barrier' : 'buffer';
      let ir = shortName(n.name);
      if (used.has(ir)) ir = n.name;
      used.add(ir);
      const cpg = cpGranule.get(n.name);
      const granule = role === 'barrier' ? 8 : box > 0 && size > box ? box : cpg !== undefined && size > cpg && size % cpg === 0 ? cpg : size;
      out.push({ name: n.name, ir, base: at, size, role, granule, loc: { file, line: n.pos.line, col: n.pos.col } });
      at += Math.ceil(size / ALIGN) * ALIGN;
    }
  }
  void f;
  return out;
}

/** The IR declarations of the laid-out arrays. */
export function sharedDecls(syms: SharedSym[]): { barriers: BarrierDecl[]; buffers: BufferDecl[] } {
  const barriers: BarrierDecl[] = [];
  const buffers: BufferDecl[] = [];
  for (const s of syms) {
    const length = { k: 'num' as const, v: Math.max(1, Math.ceil(s.size / s.granule)) };
    if (s.role === 'barrier') barriers.push({ name: s.ir, length, count: { k: 'num', v: 1 }, init: 'manual', loc: s.loc });
    else buffers.push({ name: s.ir, space: 'smem', length, bytes: { k: 'num', v: s.granule }, loc: s.loc });
  }
  return { barriers, buffers };
}

/** A kernel parameter by its PTX name, its `param_N` name or its index N. */
export function paramKey(p: Param, i: number): string[] {
  return [p.name, shortName(p.name), String(i)];
}
