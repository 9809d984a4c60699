/**
 * The registers whose values the translation must compute: those that reach, through any chain of
 * definitions (a value array's load: through its stores, smem-values.ts), a branch predicate or an operand of a modelled operation (a barrier or buffer
 * address, a count, a parity, a wgmma descriptor's shared-memory address). Everything else
 * (floating point, the addresses of global stores, timing) is left out of the warp's frame, which
 * keeps the states small and their number down (no dead value tells two states apart).
 */
import type { Operand } from '../ptx/ast.js';
import { destsOf, regsOf, sourcesOf } from './analysis.js';
import type { Flat, FlatIns } from './flat.js';
import type { ValueArrays } from './smem-values.js';
import { scanWideHighs } from './widemul.js';

/** Instructions whose register operands are read by the operation they become (not only by their destinations). */
function opReads(it: FlatIns): Operand[] {
  const ins = it.ins;
  switch (ins.base) {
    case 'mbarrier': case 'cp': case 'bar': case 'barrier': return sourcesOf(it);
    case 'ld': return ins.mods.some((m) => m.startsWith('shared')) ? [ins.operands[1]!] : [];
    case 'st': return ins.mods[0] === 'async' ? sourcesOf(it) : ins.mods.some((m) => m.startsWith('shared')) ? [ins.operands[0]!] : []; // st.async: its address and its mbarrier's
    case 'stmatrix': return [ins.operands[0]!];
    case 'wgmma': return ins.mods[0] === 'wait_group' ? ins.operands : [];
    case 'tcgen05': return ins.mods[0] === 'commit' ? ins.operands : [];
    case 'red': return ins.mods[0] === 'async' ? ins.operands : [];
    case 'clusterlaunchcontrol': return sourcesOf(it);
    default: return [];
  }
}

/**
 * The needed registers of `flat` (flat names). `descRoots(it)`: the registers a wgmma.mma_async
 * reads shared memory through (its descriptors' address roots).
 */
export function neededRegs(flat: Flat, descRoots: (it: FlatIns) => string[], flag: (it: FlatIns) => boolean = () => false, values?: ValueArrays): Set<string> {
  const need = new Set<string>();
  const defs = new Map<string, FlatIns[]>();
  const work: string[] = [];
  const add = (r: string) => { if (!need.has(r)) { need.add(r); work.push(r); } };
  // A shr of a mul.wide.u32 product reads the product's operands, not the product (widemul.ts).
  const fused = scanWideHighs(flat);
  for (const it of flat.items) {
    if ('label' in it) continue;
    const dests = destsOf(it);
    for (const d of dests) (defs.get(d) ?? defs.set(d, []).get(d)!).push(it);
    const reads = flag(it) ? sourcesOf(it) : opReads(it);
    if ((it.ins.base === 'wgmma' && it.ins.mods[0] === 'mma_async') || (it.ins.base === 'tcgen05' && (it.ins.mods[0] === 'mma' || it.ins.mods[0] === 'cp'))) for (const r of descRoots(it)) add(r);
    for (const o of reads) for (const r of regsOf(o, it)) add(r);
    if (it.ins.guard && (it.ins.base === 'bra' || reads.length || !dests.length)) add(it.name(it.ins.guard.pred));
  }
  while (work.length) {
    const r = work.pop()!;
    for (const it of defs.get(r) ?? []) {
      const w = fused.get(it);
      if (w) for (const o of [w.a, w.b]) for (const x of regsOf(o, w.mul)) add(x);
      else for (const o of sourcesOf(it)) for (const x of regsOf(o, it)) add(x);
      if (it.ins.guard) add(it.name(it.ins.guard.pred));
      // A load of a value array reads what the array's stores wrote (smem-values.ts).
      const arr = it.ins.base === 'ld' ? values?.arrayOf(it) : undefined;
      if (arr !== undefined) for (const x of values!.stores.get(arr) ?? []) for (const y of regsOf(x.o, x.it)) add(y);
      for (const d of destsOf(it)) add(d); // a dual destination (`r|p`, setp's pair) is one definition
    }
  }
  return need;
}
