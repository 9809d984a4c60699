/**
 * Where the symbols of a PTX kernel live in the translation: every `.shared` array (static and the
 * dynamic `extern .shared` one) gets a base address and becomes an IR barrier array (8 bytes per
 * mbarrier) when an mbarrier operation or a copy's completion operand addresses it, otherwise an
 * IR shared-memory buffer cut into elements of the tensor maps' box size, or else of the constant
 * size of the 1-D bulk copies that address it (so that the stages of a ring are separate elements);
 * an array that both mbarrier operations and data accesses address is mixed: its mbarriers are the
 * byte offsets the mbarrier operations name as constants, the rest a buffer (mixed.ts). Parameters
 * get addresses (a tensor map is named by its address) or values (`--param`).
 */
import type { BarrierDecl, BufferDecl, ParamDecl, SrcLoc } from '../kernel/ir.js';
import { KernelError } from '../machine/program.js';
import { NotModelled } from './emit.js';
import type { Decl, Func, Module, Operand, Param } from '../ptx/ast.js';
import type { Facts } from './analysis.js';
import { destsOf, regsOf } from './analysis.js';
import type { Flat } from './flat.js';
import { mixedBars, staticOffset, type ConstOf, type MixedBars } from './mixed.js';

/** A `.shared` array of the kernel as the translation lays it out. */
export interface SharedSym {
  name: string;
  /** Display name in the IR (`full` for nvcc's `_ZZ…E4full`). */
  ir: string;
  base: number;
  size: number;
  /** `mixed`: mbarriers at the offsets of {@link SharedSym.bars}, a buffer elsewhere. */
  role: 'barrier' | 'buffer' | 'mixed';
  /** Bytes per IR element (8 for barriers; a mixed array's buffer elements). */
  granule: number;
  /** A mixed array's mbarriers (absent when no mbarrier operation names a constant offset of it). */
  bars?: MixedBars;
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
  const nested = nestedLastName(name);
  if (nested) return nested;
  const p = /_param_(\d+)$/.exec(name);
  return p ? `param_${p[1]}` : name;
}

/**
 * The last component of a mangled namespace-scope name made of plain identifiers only,
 * `_ZN9deep_gemm11smem_bufferE` → `smem_buffer` (Itanium C++ ABI nested-name: `N` (length
 * identifier)+ `E`); undefined for any other name.
 */
function nestedLastName(name: string): string | undefined {
  if (!name.startsWith('_ZN') || !name.endsWith('E')) return undefined;
  let i = 3;
  let last: string | undefined;
  while (i < name.length - 1) {
    const m = /^(\d+)/.exec(name.slice(i));
    if (!m) return undefined;
    const len = Number(m[1]);
    const id = name.slice(i + m[1]!.length, i + m[1]!.length + len);
    if (id.length !== len || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(id)) return undefined;
    last = id;
    i += m[1]!.length + len;
  }
  return i === name.length - 1 ? last : undefined;
}

function declSize(d: Decl, n: Decl['names'][number], dynamicSmem: number): number {
  const elem = d.type === '.b64' || d.type === '.u64' || d.type === '.s64' || d.type === '.f64' ? 8 : d.type === '.b32' || d.type === '.u32' || d.type === '.s32' || d.type === '.f32' ? 4 : d.type === '.b16' || d.type === '.u16' ? 2 : 1;
  if (!n.dims || n.dims.length === 0) return elem;
  if (n.dims.some((x) => x === null)) return dynamicSmem;
  return n.dims.reduce<number>((a, x) => a * (x ?? 1), elem);
}

const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));

/**
 * The value of an integer operand when it is an immediate or a register every definition of which
 * (in the flattened kernel) is a `mov` of the same immediate; otherwise undefined.
 */
export function constantOf(flat: Flat, at: Flat['items'][number], o: Operand | undefined, depth = 0): number | undefined {
  if (!o || 'label' in at) return undefined;
  if (o.kind === 'int') return Number(o.value);
  if (o.kind !== 'name' || depth > 8) return undefined;
  const reg = at.name(o.name);
  let value: number | undefined;
  for (const it of flat.items) {
    if ('label' in it || !destsOf(it).includes(reg)) continue;
    const src = it.ins.operands[1];
    // a chain of moves (`mov %r61, %r60`, a -G build's copies and local-memory cells, local.ts) is followed
    const v = it.ins.base === 'mov' && it.ins.operands.length === 2 && !it.ins.guard ? constantOf(flat, it, src, depth + 1) : undefined;
    if (v === undefined) return undefined;
    if (value !== undefined && value !== v) return undefined;
    value = v;
  }
  return value;
}

const TYPE_BYTES: Record<string, number> = { b8: 1, u8: 1, s8: 1, b16: 2, u16: 2, s16: 2, f16: 2, bf16: 2, b32: 4, u32: 4, s32: 4, f32: 4, f16x2: 4, bf16x2: 4, b64: 8, u64: 8, s64: 8, f64: 8, b128: 16 };

/** Bytes one lane of an `ld` / `st` moves (its type times its vector width), from its modifiers. */
export function accessBytes(mods: readonly string[]): number | undefined {
  const t = mods.map((m) => TYPE_BYTES[m]).find((x) => x !== undefined);
  const vec = mods.map((m) => /^v(\d)$/.exec(m)).find((x) => x);
  return t === undefined ? undefined : t * (vec ? Number(vec[1]) : 1);
}

/** The `.shared` declarations of `f` (module-level ones included). */
function sharedDeclsOf(m: Module, flat: Flat): Decl[] {
  return [...m.items.filter((i): i is Decl => i.kind === 'decl'), ...flat.decls].filter((d) => d.space.startsWith('.shared'));
}

/** Bytes of each `.shared` array of the kernel by PTX name (the dynamic one: `dynamicSmem`). */
export function sharedSizes(m: Module, flat: Flat, dynamicSmem: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const d of sharedDeclsOf(m, flat)) for (const n of d.names) out.set(n.name, Math.max(1, declSize(d, n, dynamicSmem)));
  return out;
}

/** Instructions whose address operands other than an mbarrier operand access data. */
const DATA = new Set(['ld', 'st', 'cp', 'red', 'atom', 'clusterlaunchcontrol']);

/** The `.shared` arrays (and other symbols) an address operand derives from. */
function symsOf(o: Operand & { kind: 'address' }, it: Flat['items'][number], facts: Facts): string[] {
  if ('label' in it) return [];
  return [...(o.base ? [o.base] : []), ...regsOf({ ...o, rest: [] }, it).flatMap((r) => [...facts.prov(r)])];
}

/**
 * Lays out the `.shared` arrays of `f` (module-level ones included) and decides each one's role;
 * `constOf` says which offsets are known before running (mixed.ts `staticOffset`).
 */
export function layoutShared(m: Module, f: Func, flat: Flat, facts: Facts, dynamicSmem: number, boxes: number[], file: string, constOf?: ConstOf, valueBytes?: ReadonlyMap<string, number>): SharedSym[] {
  const decls = sharedDeclsOf(m, flat);
  const barrierSyms = new Set<string>();
  /** Arrays a data access (ld / st, a copy's source or destination) addresses. */
  const dataSyms = new Set<string>();
  /** The constant byte offsets mbarrier operands name, by array. */
  const barOffsets = new Map<string, number[]>();
  const names = new Set(decls.flatMap((d) => d.names.map((n) => n.name)));
  const isShared = (n: string) => names.has(n);
  /** Arrays an Ampere cp.async writes: cut into one warp's bytes (32 lanes × cp-size), each warp its own element. */
  const cpGranule = new Map<string, number>();
  /** Arrays a 1-D bulk copy (`cp.async.bulk`, no tensor map) of a constant size reads or writes: cut into that size. */
  const bulkGranule = new Map<string, number>();
  /** Arrays a warp's lanes load or store at lane-varying addresses: cut into one warp's bytes (32 × the access size). */
  const laneGranule = new Map<string, number>();
  for (const it of flat.items) {
    if ('label' in it) continue;
    const ins = it.ins;
    if (ins.base === 'cp' && (ins.mods[1] === 'ca' || ins.mods[1] === 'cg')) {
      const [dst, , size] = ins.operands;
      const per = size && size.kind === 'int' ? Number(size.value) * 32 : 512;
      if (dst && dst.kind === 'address' && dst.base) for (const s of [dst.base, ...regsOf({ ...dst, rest: [] }, it).flatMap((r) => [...facts.prov(r)])]) cpGranule.set(s, Math.min(cpGranule.get(s) ?? per, per));
    }
    const generic = ins.base === 'ld' || ins.base === 'st' ? ins.operands[ins.base === 'ld' ? 1 : 0] : undefined;
    if (generic?.kind === 'address' && ins.mods[0] !== 'async' && ins.mods.some((m) => m.startsWith('shared'))) {
      const regs = regsOf({ ...generic, rest: [] }, it);
      const bytes = accessBytes(ins.mods);
      if (bytes !== undefined && regs.some((r) => facts.kind(r) !== 'U')) for (const s of [...(generic.base ? [generic.base] : []), ...regs.flatMap((r) => [...facts.prov(r)])]) laneGranule.set(s, Math.min(laneGranule.get(s) ?? 32 * bytes, 32 * bytes));
    }
    if (ins.base === 'cp' && ins.mods[0] === 'async' && ins.mods[1] === 'bulk' && ins.mods[2] !== 'tensor' && !ins.mods.includes('prefetch')) {
      const bytes = constantOf(flat, it, ins.operands[2]);
      if (bytes !== undefined && bytes > 0) {
        for (const a of ins.operands.slice(0, 2)) {
          if (a?.kind !== 'address') continue;
          for (const s of [...(a.base ? [a.base] : []), ...regsOf({ ...a, rest: [] }, it).flatMap((r) => [...facts.prov(r)])]) bulkGranule.set(s, gcd(bulkGranule.get(s) ?? bytes, bytes));
        }
      }
    }
    let o;
    if (ins.base === 'mbarrier') o = ins.operands.find((x) => x.kind === 'address');
    else if (ins.base === 'cp' && ins.mods.some((x) => x.startsWith('mbarrier::complete_tx'))) o = [...ins.operands].reverse().find((x) => x.kind === 'address');
    else if ((ins.base === 'tcgen05' && ins.mods[0] === 'commit') || (ins.base === 'cp' && ins.mods[1] === 'mbarrier')) o = ins.operands.find((x) => x.kind === 'address');
    else if ((ins.base === 'st' || ins.base === 'red') && ins.mods[0] === 'async') o = [...ins.operands].reverse().find((x) => x.kind === 'address');
    else if (ins.base === 'clusterlaunchcontrol' && ins.mods[0] === 'try_cancel') o = ins.operands[1];
    if (DATA.has(ins.base)) {
      for (const a of ins.operands) if (a !== o && a.kind === 'address' && !ins.mods.includes('param')) for (const s of symsOf(a, it, facts)) dataSyms.add(s);
    }
    if (!o || o.kind !== 'address' || !o.base) continue;
    for (const s of symsOf(o, it, facts)) barrierSyms.add(s);
    const at = staticOffset(facts, it, o, isShared, constOf);
    if (at) (barOffsets.get(at.sym) ?? barOffsets.set(at.sym, []).get(at.sym)!).push(at.offset);
  }
  const box = boxes.length ? boxes.reduce(gcd) : 0;
  const out: SharedSym[] = [];
  let at = SHARED_BASE;
  const used = new Set<string>();
  for (const d of decls) {
    for (const n of d.names) {
      const size = Math.max(1, declSize(d, n, dynamicSmem));
      const role = barrierSyms.has(n.name) ? (dataSyms.has(n.name) ? 'mixed' : 'barrier') : 'buffer';
      let ir = shortName(n.name);
      if (used.has(ir)) ir = n.name;
      used.add(ir);
      const bars = role === 'mixed' ? mixedBars(ir, barOffsets.get(n.name) ?? []) : undefined;
      // The first that cuts the array into more than one element: the tensor maps' box, the 1-D bulk
      // copies' size, one warp's cp.async bytes, one warp's ld/st bytes; else the whole array.
      const cuts = box > 0 ? [box, cpGranule.get(n.name)] : [bulkGranule.get(n.name), cpGranule.get(n.name), laneGranule.get(n.name)];
      const cut = cuts.find((g) => g !== undefined && size > g && (g === box || size % g === 0));
      // A value array (smem-values.ts): one element, and one value cell, per scalar access.
      const granule = role === 'barrier' ? 8 : valueBytes?.get(n.name) ?? cut ?? size;
      out.push({ name: n.name, ir, base: at, size, role, granule, ...(bars ? { bars } : {}), loc: { file, line: n.pos.line, col: n.pos.col } });
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
    else {
      // The bytes the array holds (less its mbarriers, declared beside it), when its whole elements end past it.
      const storage = s.size - (s.bars ? 8 * s.bars.count : 0);
      buffers.push({ name: s.ir, space: 'smem', length, bytes: { k: 'num', v: s.granule }, ...(storage !== length.v * s.granule ? { storage: { k: 'num' as const, v: storage } } : {}), loc: s.loc });
    }
    if (s.bars) barriers.push({ name: s.bars.ir, length: { k: 'num', v: s.bars.count }, count: { k: 'num', v: 1 }, init: 'manual', loc: s.loc });
  }
  return { barriers, buffers };
}

/** A kernel parameter by its PTX name, its `param_N` name or its index N. */
export function paramKey(p: Param, i: number): string[] {
  return [p.name, shortName(p.name), String(i)];
}

/**
 * The parameter (its index) and byte offset a `--param` key names: a parameter by
 * {@link paramKey}, or a field of a struct parameter at a byte offset, `KEY+OFF` (`param_0+640`:
 * the 4-byte word at byte 640 of CUTLASS's `Params`); undefined when no parameter has that key.
 */
export function paramRef(params: readonly Param[], key: string): { index: number; offset: number } | undefined {
  const m = /^(.+)\+(\d+)$/.exec(key);
  const [base, offset] = m ? [m[1]!, Number(m[2])] : [key, 0];
  const index = params.findIndex((p, i) => paramKey(p, i).includes(base));
  return index < 0 || !Number.isSafeInteger(offset) ? undefined : { index, offset };
}

/** A parameter's IR declaration (its value) and its index. */
export interface ParamInfo { decl: ParamDecl; index: number }

/**
 * IR parameters of the integer parameters that have a value (`--param`), by PTX name and byte
 * offset (`NAME+0` a whole parameter, `NAME+640` a field of a struct parameter).
 */
export function paramValues(f: Func, launch: { params?: Record<string, number>; tensorMaps?: Record<string, number> }): Map<string, ParamInfo> {
  const out = new Map<string, ParamInfo>();
  const given = launch.params ?? {};
  for (const [k, value] of Object.entries(given)) {
    const ref = paramRef(f.params, k);
    if (!ref) throw new KernelError(`launch.params.${k}: kernel ${f.name} has no such parameter (${f.params.map((p, i) => `${shortName(p.name)} or ${i}`).join(', ')}; a field of a struct parameter: NAME+BYTE_OFFSET)`, undefined, 'ptx-launch');
    const p = f.params[ref.index]!;
    const key = `${p.name}+${ref.offset}`;
    if (out.has(key)) continue; // one entry whichever key names it (mergeLaunch keeps the first)
    const name = shortName(p.name) + (ref.offset || /^\.b8$/.test(p.type) ? `+${ref.offset}` : '');
    out.set(key, { decl: { name, value, loc: { file: '', line: p.pos.line, col: p.pos.col } }, index: ref.index });
  }
  for (const k of Object.keys(launch.tensorMaps ?? {})) {
    if (!paramRef(f.params, k)) throw new KernelError(`launch.tensorMaps.${k}: kernel ${f.name} has no such parameter`, undefined, 'ptx-launch');
  }
  return out;
}

/**
 * The box bytes (`--tensor-map`) of a copy through the tensor map of parameter `param`, at byte
 * `offset` of it when known (a `CUtensorMap` field of a struct parameter, CUTLASS's `Params`:
 * `--tensor-map param_0+128=16384`); the whole parameter's value otherwise. Throws NotModelled
 * naming the flag when neither is given.
 */
export function tensorBox(params: readonly Param[], param: string, offset: number | undefined, maps: Record<string, number>): number {
  const i = params.findIndex((p) => p.name === param);
  const short = shortName(param);
  const keys = Object.keys(maps).filter((k) => /\+\d+$/.test(k));
  const field = offset === undefined ? undefined : keys.find((k) => { const r = paramRef(params, k); return r?.index === i && r.offset === offset; });
  if (field !== undefined) return maps[field]!;
  const k = paramKey(params[i]!, i).find((x) => Object.hasOwn(maps, x));
  if (k !== undefined) return maps[k]!;
  const flag = offset ? `${short}+${offset}` : short;
  throw new NotModelled(`the box size of tensor map ${flag} is not given: --tensor-map ${flag}=BYTES`);
}
