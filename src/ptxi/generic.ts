/**
 * Generic addresses of shared memory (PTX ISA §6.4.1.1 "Generic Addressing"): a `-G` build reads
 * and writes `__shared__` arrays through generic pointers (`cvta.shared.u64 %rd50, %tmp; …
 * ld.f32 %f6, [%rd9]`) where an optimized build writes `ld.shared`. A generic `ld` / `st` whose
 * address derives from exactly one `.shared` array (through `mov`, `cvta`, `cvt`, `add`, `sub`,
 * `and`, `mad`, as the analysis's provenance) and from nothing else is that array's shared access:
 * it gets the `.shared` state space, so that it is translated (and cut into elements) like the
 * `ld.shared` / `st.shared` nvcc writes at -O3. One whose address went through `mapa` (a peer
 * CTA's shared memory, cooperative_groups' `cluster.map_shared_rank`: `cvta.shared.u64`, `mapa.u64`,
 * then a generic `st.u32`) gets `.shared::cluster` instead: distributed shared memory, whose CTA
 * the address names (PTX ISA §9.7.9.19 mapa). Everything else stays as it was.
 */
import type { Decl, Module, Operand } from '../ptx/ast.js';
import { destsOf, sourcesOf } from './analysis.js';
import type { Flat, FlatIns } from './flat.js';
import { initializedLoads } from './const-init.js';
import { localMemory } from './local.js';

const PROPAGATE = new Set(['mov', 'cvta', 'cvt', 'add', 'sub', 'and', 'mad']);
const SPACES = new Set(['param', 'global', 'const', 'local', 'async', 'tex']);

/** `flat` with its generic loads and stores of one `.shared` array given the `.shared` state space (see the module comment). */
export function genericShared(flat: Flat, m?: Module): Flat {
  const shared = new Set<string>();
  for (const d of [...flat.decls, ...(m?.items ?? []).filter((x): x is Decl => x.kind === 'decl')]) if (d.space.startsWith('.shared')) for (const n of d.names) shared.add(n.name);
  if (!shared.size) return flat;
  const isShared = (n: string) => shared.has(n.replace(/#\d+$/, ''));
  // The .shared arrays each register's value derives from; '?' for another symbol (a parameter).
  const prov = new Map<string, Set<string>>();
  // Registers whose address went through a `mapa` (a shared::cluster address).
  const viaMapa = new Set<string>();
  const srcSyms = (it: FlatIns, o: Operand): string[] => {
    if (o.kind === 'name') {
      const n = it.name(o.name);
      if (isShared(n)) return [n];
      // another symbol (a parameter, a .global variable): not a shared address
      if (!flat.regType(n) && !n.startsWith('%')) return ['?'];
      return [...(prov.get(n) ?? [])];
    }
    if (o.kind === 'address') return o.base ? srcSyms(it, { kind: 'name', name: o.base, pos: o.pos }) : [];
    return o.kind === 'expr' ? ['?'] : [];
  };
  for (let round = 0, changed = true; changed && round < 50; round++) {
    changed = false;
    for (const it of flat.items) {
      if ('label' in it) continue;
      const dests = destsOf(it);
      if (!dests.length) continue;
      // Address arithmetic carries its sources' symbols; a loaded parameter is another symbol's
      // address; any other result (an index, a loaded value) derives from none.
      const srcs = PROPAGATE.has(it.ins.base) || it.ins.base === 'mapa' ? sourcesOf(it).flatMap((o) => srcSyms(it, o)) : it.ins.base === 'ld' && it.ins.mods.includes('param') ? ['?'] : [];
      if (!srcs.length) continue;
      const mapa = it.ins.base === 'mapa' || (PROPAGATE.has(it.ins.base) && sourcesOf(it).some((o) => o.kind === 'name' && viaMapa.has(it.name(o.name))));
      for (const d of dests) {
        if (mapa && !viaMapa.has(d)) { viaMapa.add(d); changed = true; }
        const p = prov.get(d) ?? new Set<string>();
        const n = p.size;
        for (const s of srcs) p.add(s);
        if (p.size !== n || !prov.has(d)) { prov.set(d, p); changed = true; }
      }
    }
  }
  let touched = false;
  const items = flat.items.map((it) => {
    if ('label' in it || (it.ins.base !== 'ld' && it.ins.base !== 'st') || it.ins.mods.some((x) => SPACES.has(x) || x.startsWith('shared'))) return it;
    const a = it.ins.operands[it.ins.base === 'ld' ? 1 : 0];
    if (!a || a.kind !== 'address' || !a.base || a.rest) return it;
    const syms = new Set(srcSyms(it, a));
    if (syms.size !== 1 || syms.has('?')) return it;
    touched = true;
    const mods = [...it.ins.mods];
    const space = viaMapa.has(it.name(a.base)) ? 'shared::cluster' : 'shared';
    mods.splice(mods[0] === 'weak' || mods[0] === 'volatile' || mods[0] === 'relaxed' || mods[0] === 'acquire' || mods[0] === 'release' ? 1 : 0, 0, space);
    return { ...it, ins: { ...it.ins, mods, opcode: [it.ins.base, ...mods].join('.') } };
  });
  return touched ? { ...flat, items } : flat;
}

/**
 * The state spaces of a flat kernel's memory accesses resolved before its analysis: local memory
 * as per-thread cells ({@link localMemory}), then generic accesses of shared arrays as shared
 * ones ({@link genericShared}), then loads of initialized module variables as their values
 * ({@link initializedLoads}).
 */
export function memorySpaces(flat: Flat, m?: Module): Flat {
  return globalAddresses(initializedLoads(genericShared(localMemory(flat, m), m), m), m);
}

/** Address of the module's first `.global` / `.const` variable; the others follow, 256-aligned. */
export const GLOBAL_BASE = 0x6000_0000;

/**
 * `flat` with the module's `.global` and `.const` variables named by integer arithmetic (`mov.u64
 * %rd26, sym$138`, a `-G` build taking a static object's address) replaced by addresses of their
 * own, from {@link GLOBAL_BASE}: their values are integers like any other (the memory behind them
 * stays outside the model).
 */
function globalAddresses(flat: Flat, m?: Module): Flat {
  const addr = new Map<string, number>();
  let next = GLOBAL_BASE;
  for (const d of m?.items ?? []) {
    if (d.kind !== 'decl' || !(d.space.startsWith('.global') || d.space.startsWith('.const'))) continue;
    const el = Number(/(\d+)$/.exec(d.type)?.[1] ?? 8) / 8;
    for (const n of d.names) {
      if (n.range !== undefined) continue;
      addr.set(n.name, next);
      next += Math.ceil(Math.max(1, (n.dims ?? []).reduce<number>((a, x) => a * (x ?? 1), el)) / 256) * 256;
    }
  }
  if (!addr.size) return flat;
  let touched = false;
  const items = flat.items.map((it) => {
    if ('label' in it || !PROPAGATE.has(it.ins.base) || !it.ins.operands.some((o) => o.kind === 'name' && addr.has(it.name(o.name)))) return it;
    touched = true;
    const operands = it.ins.operands.map((o): Operand => {
      const a = o.kind === 'name' ? addr.get(it.name(o.name)) : undefined;
      return a === undefined ? o : { kind: 'int', value: BigInt(a), text: String(a), pos: o.pos };
    });
    return { ...it, ins: { ...it.ins, operands } };
  });
  return touched ? { ...flat, items } : flat;
}
