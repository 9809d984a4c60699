/**
 * Walks over the definitions of a flat PTX function that the translation needs: the constant a
 * register holds (`mov` of an immediate), the shared-memory address a wgmma / tcgen05 descriptor
 * was built from, the arrive a token comes from, and the kernel's Tensor Memory allocation.
 */
import type { BufferDecl, SrcLoc } from '../kernel/ir.js';
import type { Operand } from '../ptx/ast.js';
import { printInstruction } from '../ptx/printer.js';
import { destsOf, type Facts } from './analysis.js';
import { num, NotModelled } from './emit.js';
import type { Flat, FlatIns } from './flat.js';
import type { SharedSym } from './layout.js';
import { TMEM } from './tcgen.js';

/** The kernel's `tcgen05.alloc` sites (their lines) and the column count of the only one, when constant. */
export interface TmemInfo { used: boolean; sites: number[]; cols: number | undefined }

/** Tensor Memory of a flat function: whether any tcgen05 instruction runs, its alloc sites, their columns. */
export function tmemOf(flat: Flat, facts: Facts): TmemInfo {
  const all = flat.items.filter((x): x is FlatIns => !('label' in x) && x.ins.base === 'tcgen05');
  const allocs = all.filter((x) => x.ins.mods[0] === 'alloc');
  const cols = allocs.length === 1 ? staticInt(facts, allocs[0]!, allocs[0]!.ins.operands[1]) : undefined;
  return { used: all.length > 0, sites: allocs.map((x) => x.ins.pos.line), cols };
}

/** The IR buffer of the kernel's Tensor Memory (128 lanes × 4 bytes per column; managed when allocated). */
export function tmemDecl(t: TmemInfo, loc: SrcLoc): BufferDecl[] {
  if (!t.used) return [];
  const cols = t.sites.length === 1 && t.cols !== undefined ? t.cols : undefined;
  return [{ name: TMEM, space: 'tmem', length: num(1), bytes: num((cols ?? 512) * 512), ...(cols !== undefined ? { cols: num(cols) } : {}), loc }];
}

/** The value of `o` when constant: an immediate, or a register whose one definition is a `mov` of one (followed a few steps). */
export function staticInt(facts: Facts, it: FlatIns, o: Operand | undefined): number | undefined {
  const defs = DEFS.get(facts);
  let cur: FlatIns = it;
  let op = o;
  for (let i = 0; i < 8 && op; i++) {
    if (op.kind === 'int') { const n = Number(op.value); return Number.isSafeInteger(n) ? n : undefined; }
    if (op.kind !== 'name' || !defs) return undefined;
    const d = defs.get(cur.name(op.name));
    if (!d || d.length !== 1 || d[0]!.ins.base !== 'mov' || d[0]!.ins.guard) return undefined;
    cur = d[0]!;
    op = cur.ins.operands[1];
  }
  return undefined;
}

/**
 * The kernel parameter and byte offset an `ld.param` address `[base+off]` reads: `base` a parameter
 * symbol, or a register whose single-definition chain of `mov`, `cvta.param` and `add` / `sub` of
 * an immediate leads to one (`mov.b64 %rd98, P; ld.param.u32 %r11, [%rd98+640]`: CUTLASS reads the
 * fields of its `Params` struct this way); undefined otherwise.
 */
export function paramAddress(facts: Facts, it: FlatIns, base: string, offset: number, isParam: (n: string) => boolean): { param: string; offset: number } | undefined {
  const defs = DEFS.get(facts);
  let cur = it;
  let name = base;
  let off = offset;
  for (let i = 0; i < 16; i++) {
    if (isParam(name)) return { param: name, offset: off };
    const d = defs?.get(cur.name(name));
    if (!d || d.length !== 1 || d[0]!.ins.guard) return undefined;
    const ins = d[0]!.ins;
    const [a, b] = ins.operands.slice(1);
    if (!a || a.kind !== 'name') return undefined;
    if (ins.base === 'add' || ins.base === 'sub') {
      if (!b || b.kind !== 'int') return undefined;
      off += (ins.base === 'add' ? 1 : -1) * Number(b.value);
    } else if (ins.base !== 'mov' && !(ins.base === 'cvta' && ins.mods.includes('param'))) return undefined;
    cur = d[0]!;
    name = a.name;
  }
  return undefined;
}

/** The byte offsets at which the kernel's `ld.param` instructions read each parameter (vector elements each), ascending. */
export function paramFieldsRead(flat: Flat, facts: Facts, isParam: (n: string) => boolean): Map<string, number[]> {
  const out = new Map<string, Set<number>>();
  for (const it of flat.items) {
    if ('label' in it || it.ins.base !== 'ld' || !it.ins.mods.includes('param')) continue;
    const src = it.ins.operands[1];
    if (!src || src.kind !== 'address' || !src.base) continue;
    const at = paramAddress(facts, it, src.base, Number(src.offset), isParam);
    const t = it.ins.mods.map((m) => /^[bsuf](8|16|32|64)$/.exec(m)).find((x) => x);
    if (!at || !t) continue;
    const set = out.get(at.param) ?? out.set(at.param, new Set()).get(at.param)!;
    destsOf(it).forEach((_, k) => set.add(at.offset + (k * Number(t[1])) / 8));
  }
  return new Map([...out].map(([k, v]) => [k, [...v].sort((a, b) => a - b)]));
}

/** Definitions by register name, filled by {@link setDefs} (the descriptor and token walks follow them back). */
const DEFS = new WeakMap<Facts, Map<string, FlatIns[]>>();

/** Records the definitions of every register of `flat` for the walks of this module. */
export function setDefs(flat: Flat, facts: Facts): void {
  const defs = new Map<string, FlatIns[]>();
  for (const it of flat.items) if (!('label' in it)) for (const d of destsOf(it)) (defs.get(d) ?? defs.set(d, []).get(d)!).push(it);
  DEFS.set(facts, defs);
}

/** The register a wgmma descriptor was built from that holds a shared-memory address (its single-definition chain). */
export function descriptorRoot(facts: Facts, _it: FlatIns, reg: string, shared: Map<string, SharedSym>): string {
  const defs = DEFS.get(facts)!;
  let r = reg;
  for (let i = 0; i < 16; i++) {
    if ([...facts.prov(r)].some((s) => shared.has(s))) return r;
    const d = defs.get(r);
    if (!d || d.length !== 1) break;
    const src = d[0]!.ins.operands.slice(1).find((o) => o.kind === 'name' && !/^%[a-z_]+(\.[xyz])?$/.test(o.name) || (o.kind === 'name' && /^%(r|rd)\d+/.test(o.name)));
    if (!src || src.kind !== 'name') break;
    r = d[0]!.name(src.name);
  }
  throw new NotModelled(`the shared-memory address of wgmma descriptor ${reg} (mbsim follows its definitions back to an address of a .shared array)`);
}

/**
 * The arrive destination that token operand `o` is a copy of (`mov` / `cvt` chains of single
 * definitions): every definition of it is an `mbarrier.arrive*` (PTX ISA §9.7.13.15.13, the
 * `state` operand), and it is one value for the warp.
 */
export function tokenRoot(facts: Facts, it: FlatIns, o: Operand): string {
  if (o.kind !== 'name') throw new NotModelled('a token that is not a register');
  const defs = DEFS.get(facts)!;
  let r = it.name(o.name);
  for (let i = 0; i < 16; i++) {
    const d = defs.get(r) ?? [];
    if (d.length && d.every((x) => x.ins.base === 'mbarrier' && (x.ins.mods[0] === 'arrive' || x.ins.mods[0] === 'arrive_drop'))) {
      if (facts.kind(r) !== 'U') throw new NotModelled(`the token ${r} differs between the lanes of a warp`);
      return r;
    }
    const src = d.length === 1 && (d[0]!.ins.base === 'mov' || d[0]!.ins.base === 'cvt') ? d[0]!.ins.operands[1] : undefined;
    if (!src || src.kind !== 'name') {
      // Where the chain of copies ends, said with the instruction(s) there.
      const at = d.length === 0 ? `${r} has no definition` : d.length > 1
        ? `${r} has ${d.length} definitions (${d.map((x) => `line ${x.ins.pos.line}`).join(', ')}), the paths of a join`
        : `${r} comes from ${printInstruction(d[0]!.ins).replace(/;$/, '')} at line ${d[0]!.ins.pos.line}`;
      throw new NotModelled(`the token ${it.name(o.name)} does not come from an mbarrier.arrive: ${r === it.name(o.name) ? '' : 'a copy of it, '}${at} (mbsim follows its single-definition copies back to the arrive that returned it)`);
    }
    r = d[0]!.name(src.name);
  }
  throw new NotModelled(`the token ${it.name(o.name)} does not come from an mbarrier.arrive (mbsim follows its copies back to the arrive that returned it, at most 16 copies)`);
}

/** The instructions that define register `reg` (empty when none or before {@link setDefs}). */
export function defsOf(facts: Facts, reg: string): FlatIns[] {
  return DEFS.get(facts)?.get(reg) ?? [];
}

