/**
 * Static facts about a flat PTX function that the translation needs (flow-insensitive, to a fixed
 * point over every definition of a register):
 *
 * - lane kind: `U` (warp-uniform), `T` (thread-index shaped: 32·k + lane with k uniform, so that
 *   `>> 5`, `& -32` or `< 32·n` of it are uniform again: `%tid.x` when the block's x is whole
 *   warps, with `%tid.y` and `%tid.z` uniform) or `V` (may differ between lanes: from `%tid.x/y`
 *   when a warp spans rows of the block, `%laneid`, `elect.sync`, loads through lane-varying addresses, anything defined inside a
 *   divergent region);
 * - opacity: a value mbsim does not compute (floating point, tensor data, global memory, clocks,
 *   integers beyond ±2^53, shared memory other than a value array's, smem-values.ts): its
 *   definitions are not translated and a use that needs it traps; a value array's load is opaque
 *   when one of the array's stores stores an opaque value;
 * - provenance: the symbols (`.shared` arrays, parameters) an address register is derived from;
 * - divergent regions: the blocks between a branch on a `V` predicate and its reconvergence point.
 */
import type { Instruction, Operand } from '../ptx/ast.js';
import { printInstruction } from '../ptx/printer.js';
import { regionOf, type Cfg, type Flat, type FlatIns } from './flat.js';
import { splitOf } from './split.js';
import type { ValueArrays } from './smem-values.js';

/** Lane kind of a register (see the module comment). */
export type Kind = 'U' | 'T' | 'V';

/** Facts of a function (see the module comment). */
export interface Facts {
  kind(reg: string): Kind;
  opaque(reg: string): boolean;
  /**
   * Why an opaque register has no modelled value: the instruction its value comes from (followed
   * back through the definitions that only passed an opaque source on) and what that instruction
   * produces, as `ld.shared.u32 %r7, [%r37] at line 132 (shared-memory data)`; undefined for a
   * register that is not opaque.
   */
  opaqueCause?(reg: string): string | undefined;
  /** Symbols the register's value derives from (address provenance). */
  prov(reg: string): ReadonlySet<string>;
  /** Blocks inside a divergent region: their code runs under a dynamic active mask. */
  divergent: ReadonlySet<number>;
  /** Blocks ending in a branch whose predicate is lane-varying. */
  varyingBranch: ReadonlySet<number>;
}

const FLOAT_TYPE = /^(f16|f32|f64|bf16|f16x2|bf16x2|e4m3|e5m2|e4m3x2|e5m2x2|tf32|f8x2)$/;
const NO_DEST = new Set(['st', 'bar', 'barrier', 'bra', 'ret', 'exit', 'trap', 'brkpt', 'cp', 'fence', 'membar', 'prefetch', 'prefetchu', 'nanosleep', 'red', 'setmaxnreg', 'griddepcontrol', 'call', 'st.async', 'cp.async', 'pmevent']);
const OPAQUE_SPECIAL = /^%(clock|clock64|globaltimer|globaltimer_lo|globaltimer_hi|smid|nsmid|gridid|pm\d|envreg\d+|dynamic_smem_size|total_smem_size)$/;

/** The destination register names of an instruction (flat names; sinks left out). */
export function destsOf(it: FlatIns): string[] {
  const ins = it.ins;
  if (!hasDest(it)) return [];
  const o = ins.operands[0];
  if (!o) return [];
  if (o.kind === 'name') return [it.name(o.name)];
  if (o.kind === 'pair') return [it.name(o.first), it.name(o.second)];
  if (o.kind === 'vector') return o.items.flatMap((x) => (x.kind === 'name' ? [it.name(x.name)] : []));
  return [];
}

/** Whether the instruction's first operand is a destination (a register, a pair, a vector or the sink `_`). */
function hasDest(it: FlatIns): boolean {
  const ins = it.ins;
  if (NO_DEST.has(ins.base)) return false;
  if (ins.base === 'mbarrier' && !['arrive', 'arrive_drop', 'try_wait', 'test_wait', 'pending_count'].includes(ins.mods[0] ?? '')) return false;
  if (ins.base === 'wgmma' && ins.mods[0] !== 'mma_async') return false;
  if (ins.base === 'tcgen05' && ins.mods[0] !== 'ld') return false;
  if (ins.base === 'clusterlaunchcontrol' && ins.mods[0] !== 'query_cancel') return false;
  const o = ins.operands[0];
  return !!o && (o.kind === 'name' || o.kind === 'pair' || o.kind === 'vector' || o.kind === 'sink');
}

/** Source operands (everything after the destination). */
export function sourcesOf(it: FlatIns): Operand[] {
  return hasDest(it) ? it.ins.operands.slice(1) : it.ins.operands;
}

/** Register names an operand reads (address bases included). */
export function regsOf(o: Operand, it: FlatIns): string[] {
  if (o.kind === 'name') return [it.name(o.name)];
  if (o.kind === 'address') return [...(o.base ? [it.name(o.base)] : []), ...(o.rest ?? []).flatMap((r) => regsOf(r, it))];
  if (o.kind === 'vector' || o.kind === 'list') return o.items.flatMap((x) => regsOf(x, it));
  if (o.kind === 'pair') return [it.name(o.first), it.name(o.second)];
  return [];
}

function imm(o: Operand | undefined): number | undefined {
  return o && o.kind === 'int' ? Number(o.value) : undefined;
}

/** Lane kind of a definition by `ins` whose sources have kinds `ks` (T rules of the module comment). */
function defKind(ins: Instruction, srcs: Operand[], ks: Kind[]): Kind {
  if (ins.base === 'elect') return 'V';
  if (ins.base === 'activemask' || ins.base === 'vote') return 'U';
  if (ins.base === 'shfl') return ks[1] === 'U' ? 'U' : 'V';
  if (ks.includes('V')) return 'V';
  if (!ks.includes('T')) return 'U';
  const c = imm(srcs[1]);
  const op = ins.base;
  if (op === 'mov' || op === 'cvt' || op === 'cvta') return 'T';
  if (c === undefined) return 'V';
  if (op === 'shr' && c >= 5) return 'U';
  if (op === 'div' && c % 32 === 0) return 'U';
  if (op === 'and' && (c & 31) === 0) return 'U';
  if ((op === 'add' || op === 'sub') && c % 32 === 0) return 'T';
  if (op === 'setp') {
    const cmp = ins.mods[0];
    if ((cmp === 'lt' || cmp === 'ge' || cmp === 'lo' || cmp === 'hs') && c % 32 === 0) return 'U';
    if ((cmp === 'gt' || cmp === 'le' || cmp === 'hi' || cmp === 'ls') && (c + 1) % 32 === 0) return 'U';
  }
  return 'V';
}

/**
 * Whether `ins` reads an integer of global memory whose value the machine keeps (a flag, a
 * semaphore): an `atom` or a strong (`.acquire`, `.relaxed`, `.volatile`) load of an integer type,
 * not through `.shared` (PTX ISA §9.7.13.5, §9.7.9.8).
 */
export function globalValue(ins: Instruction): boolean {
  if (ins.base !== 'ld' && ins.base !== 'atom') return false;
  if (ins.mods.some((m) => m.startsWith('shared') || m === 'param' || m === 'local' || m === 'const')) return false;
  if (!ins.mods.some((m) => /^[bsu](32|64)$/.test(m))) return false;
  return ins.base === 'atom' || ins.mods.some((m) => m === 'acquire' || m === 'relaxed' || m === 'volatile');
}

/**
 * What a definition by `ins` that is opaque whatever its sources produces (the words of
 * {@link Facts.opaqueCause}): floating point, memory data by state space, tensor data, a clock, or
 * an integer past the exact range.
 */
function opaqueWhat(ins: Instruction, srcs: Operand[], sharedWhy?: string): string {
  if (ins.mods.some((m) => FLOAT_TYPE.test(m))) return 'floating point';
  if (ins.base === 'ld' || ins.base === 'atom') {
    if (ins.mods.some((m) => m.startsWith('shared'))) return `shared-memory data: ${sharedWhy ?? 'the values of ld.shared are modelled for scalar integer loads at a warp-uniform address of a small integer array'}`;
    if (ins.mods.includes('local')) return 'local-memory data at an address not known statically';
    if (ins.mods.includes('const')) return 'constant-memory data';
    if (ins.base === 'atom') return 'an atomic not through a pointer parameter, or not of a 32- or 64-bit integer';
    if (!ins.mods.includes('global')) return 'memory data through a generic address';
    return 'global-memory data: only atom and strong (.acquire, .relaxed, .volatile) integer loads through a pointer parameter are modelled';
  }
  if (['wgmma', 'tcgen05', 'tex', 'suld'].includes(ins.base)) return 'tensor or texture data';
  for (const o of srcs) if (o.kind === 'name' && OPAQUE_SPECIAL.test(o.name)) return `the special register ${o.name}`;
  if (srcs.some((o) => o.kind === 'float')) return 'floating point';
  return 'an integer beyond ±2^53';
}

/** Whether a definition by `ins` is opaque whatever its sources (floating point, memory data, clocks). */
function opaqueDef(ins: Instruction, srcs: Operand[], it: FlatIns, flat: Flat): boolean {
  if (ins.mods.some((m) => FLOAT_TYPE.test(m))) return !(ins.base === 'mov' || ins.base === 'cvt') || ins.mods.filter((m) => FLOAT_TYPE.test(m)).length > 0;
  if (ins.base === 'ld') return !ins.mods.includes('param') && !globalValue(ins);
  if (ins.base === 'atom') return !globalValue(ins);
  if (['wgmma', 'tcgen05', 'mul24', 'mad24', 'tex', 'suld'].includes(ins.base)) return true;
  if ((ins.base === 'mul' || ins.base === 'mad') && ins.mods.includes('hi') && !ins.mods.some((m) => /^[su](16|32)$/.test(m))) return true;
  for (const o of srcs) {
    if (o.kind === 'float') return true;
    if (o.kind === 'int' && !Number.isSafeInteger(Number(o.value))) return true;
    if (o.kind === 'name' && OPAQUE_SPECIAL.test(o.name)) return true;
  }
  void it; void flat;
  return false;
}

/**
 * {@link Facts.opaqueCause} of `reg`: the chain of `cause` followed back to the instruction that is
 * opaque by itself (at most 10,000 links: the chain of a loop's register may come round).
 */
function describeCause(cause: ReadonlyMap<string, { it: FlatIns; from?: string }>, reg: string, values?: ValueArrays): string | undefined {
  let c = cause.get(reg);
  if (!c) return undefined;
  const seen = new Set<string>([reg]);
  while (c.from !== undefined && !seen.has(c.from) && cause.has(c.from)) { seen.add(c.from); c = cause.get(c.from)!; }
  const ins = c.it.ins;
  const what = c.from === undefined ? opaqueWhat(ins, ins.operands, values?.whyOf(c.it)) : 'a value computed from itself';
  return `${printInstruction(ins).replace(/;$/, '')} at line ${ins.pos.line} (${what})`;
}

/** Computes the {@link Facts} of `flat` over `cfg`; `symbols`: names that are addresses (shared arrays, parameters). */
export function analyze(flat: Flat, cfg: Cfg, symbols: ReadonlySet<string>, block: readonly [number, number, number] = [1024, 1, 1], values?: ValueArrays): Facts {
  const tidKind = threadKinds(block);
  const kind = new Map<string, Kind>();
  const opaque = new Set<string>();
  // Each opaque register's defining instruction and, when it only passed an opaque source on, that source.
  const cause = new Map<string, { it: FlatIns; from?: string }>();
  const prov = new Map<string, Set<string>>();
  const forcedV = new Set<string>();
  for (const it of flat.items) {
    if ('label' in it) continue;
    for (const d of destsOf(it)) if (FLOAT_TYPE.test((flat.regType(d) ?? '').slice(1))) { opaque.add(d); cause.set(d, { it }); }
  }
  const kindOf = (o: Operand, it: FlatIns): Kind => {
    if (o.kind === 'name') {
      const tk = tidKind[o.name];
      if (tk) return tk;
      if (o.name === '%laneid') return 'V';
      return kind.get(it.name(o.name)) ?? 'U';
    }
    if (o.kind === 'address' || o.kind === 'vector') {
      const ks = regsOf(o, it).map((r) => kind.get(r) ?? 'U');
      return ks.includes('V') || ks.includes('T') ? 'V' : 'U';
    }
    return 'U';
  };
  const divergent = new Set<number>();
  const varyingBranch = new Set<number>();
  const defCount = new Map<string, number>();
  for (const it of flat.items) if (!('label' in it)) for (const d of destsOf(it)) defCount.set(d, (defCount.get(d) ?? 0) + 1);
  const defsBy = new Map<string, FlatIns[]>();
  for (const it of flat.items) if (!('label' in it)) for (const d of destsOf(it)) (defsBy.get(d) ?? defsBy.set(d, []).get(d)!).push(it);
  // An unpack of an opaque `or.b64 %rd, %x, C` (a large constant C) with %x exact: its words are exact (split.ts).
  const exactSplit = (it: FlatIns): boolean => { const sp = splitOf(it, (r) => defsBy.get(r) ?? []); return !!sp && !opaque.has(sp.x); };
  // Blocks where each register is defined or read: a register whose every definition and use lies
  // on one side of a divergent branch is touched only by that side's lanes, which all compute the
  // same value when its sources are uniform: it stays one variable.
  const touched = new Map<string, Set<number>>();
  flat.items.forEach((it, i) => {
    if ('label' in it) return;
    const regs = [...destsOf(it), ...it.ins.operands.flatMap((o) => regsOf(o, it)), ...(it.ins.guard ? [it.name(it.ins.guard.pred)] : [])];
    for (const r of regs) (touched.get(r) ?? touched.set(r, new Set()).get(r)!).add(cfg.blockOf[i]!);
  });
  const sideLocal = (r: string, sides: Set<number>[]): boolean => {
    const t = touched.get(r);
    if (!t) return true;
    return sides.some((side, k) => [...t].every((x) => side.has(x) && !sides.some((o, j) => j !== k && o.has(x))));
  };
  for (let round = 0; round < 50; round++) {
    let changed = false;
    const next = new Map<string, Kind>();
    for (const it of flat.items) {
      if ('label' in it) continue;
      const dests = destsOf(it);
      if (!dests.length) continue;
      const srcs = sourcesOf(it);
      const ks = srcs.map((o) => kindOf(o, it));
      const k0 = defKind(it.ins, srcs, ks);
      const ldKind: Kind = it.ins.base === 'ld' || it.ins.base === 'mbarrier' ? (ks.includes('V') || ks.includes('T') ? 'V' : 'U') : k0;
      // A load of a value array (smem-values.ts) reads what its stores wrote: opaque when one of them stores an opaque value.
      const vload = it.ins.base === 'ld' ? values?.arrayOf(it) : undefined;
      const self = vload === undefined && opaqueDef(it.ins, srcs, it, flat);
      const from = self ? undefined : vload !== undefined ? (values!.stores.get(vload) ?? []).flatMap((x) => regsOf(x.o, x.it)).find((r) => opaque.has(r)) : srcs.flatMap((o) => regsOf(o, it)).find((r) => opaque.has(r));
      const op = self || from !== undefined && (vload !== undefined || it.ins.base !== 'ld' && it.ins.base !== 'mbarrier' && it.ins.base !== 'shfl' && it.ins.base !== 'clusterlaunchcontrol' && !exactSplit(it));
      const guardKind: Kind = it.ins.guard ? kindOf({ kind: 'name', name: it.ins.guard.pred, pos: it.ins.pos }, it) : 'U';
      const srcProv = new Set<string>();
      if (it.ins.base === 'ld' && it.ins.mods.includes('param')) {
        const a = srcs[0];
        if (a && a.kind === 'address' && a.base && symbols.has(a.base)) srcProv.add(a.base);
      }
      if (['mov', 'cvta', 'cvt', 'add', 'sub', 'and', 'mad', 'mapa'].includes(it.ins.base)) {
        for (const o of srcs) {
          if (o.kind === 'name' && symbols.has(o.name)) srcProv.add(o.name);
          if (o.kind === 'expr') for (const s of symbols) if (JSON.stringify(o.expr, (_k, x: unknown) => (typeof x === 'bigint' ? String(x) : x)).includes(`"${s}"`)) srcProv.add(s);
          for (const r of regsOf(o, it)) for (const s of prov.get(r) ?? []) srcProv.add(s);
        }
      }
      for (const d of dests) {
        const prev = next.get(d);
        // A write under a lane-varying guard over an earlier value (`mov.u32 %r152, 0; …
        // @%px mov.s32 %r152, 1` after `elect.sync %rx|%px`, CUTLASS's elect_one_sync) leaves the
        // other lanes' old value: it may differ between lanes. A register with that one definition
        // is read as the lanes that wrote it (the others hold no defined value).
        const k1 = guardKind === 'U' || (defCount.get(d) ?? 0) < 2 ? (it.ins.base === 'ld' || it.ins.base === 'mbarrier' ? ldKind : k0) : 'V';
        next.set(d, forcedV.has(d) ? 'V' : prev === undefined ? k1 : join(prev, k1));
        if (op && !opaque.has(d)) { opaque.add(d); cause.set(d, from !== undefined ? { it, from } : { it }); changed = true; }
        if (srcProv.size) {
          const p = prov.get(d) ?? new Set<string>();
          const n = p.size;
          for (const s of srcProv) p.add(s);
          if (p.size !== n || !prov.has(d)) { prov.set(d, p); changed = true; }
        }
      }
    }
    for (const [d, k] of next) if (kind.get(d) !== k) { kind.set(d, k); changed = true; }
    if (markRegions(flat, cfg, kind, sideLocal, { divergent, varyingBranch, forcedV })) changed = true;
    if (!changed) break;
  }
  const facts: Facts = {
    kind: (r) => kind.get(r) ?? 'U',
    opaque: (r) => opaque.has(r),
    opaqueCause: (r) => describeCause(cause, r, values),
    prov: (r) => prov.get(r) ?? new Set(),
    divergent,
    varyingBranch,
  };
  CAUSES.set(facts, cause);
  return facts;
}

/** The opacity causes of each {@link analyze} result. */
const CAUSES = new WeakMap<Facts, ReadonlyMap<string, { it: FlatIns; from?: string }>>();

/**
 * `facts` whose {@link Facts.opaqueCause} names why a shared array's loads are not values
 * (smem-values.ts `whyOf`), for a kernel without value arrays (whose facts need no second analysis).
 */
export function withSharedWhy(facts: Facts, values: ValueArrays): Facts {
  const cause = CAUSES.get(facts);
  return cause ? { ...facts, opaqueCause: (r) => describeCause(cause, r, values) } : facts;
}

/**
 * Marks the blocks ending in a branch on a lane-varying predicate, the blocks of their regions,
 * and (forced lane-varying) the registers defined there that are not local to one side. Returns
 * whether anything new was marked.
 */
function markRegions(flat: Flat, cfg: Cfg, kind: Map<string, Kind>, sideLocal: (r: string, sides: Set<number>[]) => boolean, out: { divergent: Set<number>; varyingBranch: Set<number>; forcedV: Set<string> }): boolean {
  const { divergent, varyingBranch, forcedV } = out;
  let changed = false;
  cfg.blocks.forEach((b, bi) => {
      const last = b.to > b.from ? flat.items[b.to - 1]! : undefined;
      if (!last || 'label' in last || last.ins.base !== 'bra' || !last.ins.guard) return;
      const p = last.name(last.ins.guard.pred);
      if ((kind.get(p) ?? 'U') === 'U') return;
      if (!varyingBranch.has(bi)) { varyingBranch.add(bi); changed = true; }
      const sides = b.succ.map((_, k) => regionOf(cfg, bi, k));
      for (const x of regionOf(cfg, bi)) {
        if (!divergent.has(x)) { divergent.add(x); changed = true; }
        const blk = cfg.blocks[x]!;
        for (let i = blk.from; i < blk.to; i++) {
          const it = flat.items[i]!;
          if ('label' in it) continue;
          for (const d of destsOf(it)) if (!forcedV.has(d) && !sideLocal(d, sides)) { forcedV.add(d); changed = true; }
        }
      }
    });
  return changed;
}

/**
 * Lane kinds of `%tid.x/y/z` in a block of `[x, y, z]` threads (warps are consecutive linear ids
 * `tid.x + tid.y · x + tid.z · x · y`): when x is whole warps, `tid.x` is `32 · k + lane` (T) and
 * `tid.y`, `tid.z` are the warp's (U); when a warp spans rows (x not a multiple of 32), `tid.x` and
 * `tid.y` differ between its lanes (V), and so does `tid.z` unless x · y is whole warps.
 */
export function threadKinds([x, y, z]: readonly [number, number, number]): Record<string, Kind> {
  const whole = x % 32 === 0;
  return {
    '%tid.x': whole ? 'T' : 'V',
    '%tid.y': whole || y === 1 ? 'U' : 'V',
    '%tid.z': z === 1 || (x * y) % 32 === 0 ? 'U' : 'V',
  };
}

/** Two definitions of one register: equal kinds stay, different ones may differ between lanes. */
function join(a: Kind, b: Kind): Kind {
  return a === b ? a : 'V';
}
