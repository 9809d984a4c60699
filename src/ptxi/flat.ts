/**
 * A PTX function body as a flat instruction list and its control-flow graph: `{ }` scopes are
 * flattened (their labels and registers renamed `NAME#k`, k the scope's number, so that nvcc's
 * inline-asm scopes `{ .reg .pred p; LAB_WAIT: … }` that reuse one name dozens of times stay
 * apart), basic blocks are cut at labels and after branches, and every block gets its immediate
 * post-dominator (the reconvergence point of a divergent branch, docs/PTX.md "Lanes").
 */
import type { Block, Decl, Func, Instruction, Operand } from '../ptx/ast.js';

/** One instruction of the flat list, its operand names resolved to their scope's renamed names. */
export interface FlatIns {
  ins: Instruction;
  /** Register / label name as written → name in the flat function (scope-local names renamed). */
  name(n: string): string;
}

/** A flat function: items in text order and the declared type of every register. */
export interface Flat {
  /** Labels (by flat name) and instructions, in text order. */
  items: ({ label: string } | FlatIns)[];
  /** Declared type (`.pred`, `.b32`, `.f32`, …) of each register by flat name; `%r<N>` ranges by prefix. */
  regType(n: string): string | undefined;
  /** `.shared` / `.global` declarations of the function body (flat names). */
  decls: Decl[];
}

/** Flattens `f`'s body (see the module comment). */
export function flatten(f: Func): Flat {
  const items: Flat['items'] = [];
  const types = new Map<string, string>();
  const ranges = new Map<string, { type: string; n: number }>();
  const decls: Decl[] = [];
  let scopes = 0;
  const walk = (b: Block, outer: (n: string) => string, depth: number): void => {
    const k = scopes++;
    const local = new Map<string, string>();
    const rename = (n: string) => (depth === 0 ? n : `${n}#${k}`);
    for (const st of b.stmts) {
      if (st.kind === 'label') local.set(st.name, rename(st.name));
      else if (st.kind === 'decl') {
        for (const d of st.names) {
          if (d.range !== undefined) { ranges.set(depth === 0 ? d.name : rename(d.name), { type: st.type, n: d.range }); if (depth) local.set(d.name, rename(d.name)); continue; }
          local.set(d.name, rename(d.name));
          types.set(rename(d.name), st.type);
        }
        if (st.space !== '.reg') decls.push(st);
      }
    }
    const name = (n: string): string => local.get(n) ?? outer(n);
    for (const st of b.stmts) {
      if (st.kind === 'label') items.push({ label: name(st.name) });
      else if (st.kind === 'instr') items.push({ ins: st, name });
      else if (st.kind === 'block') walk(st, name, depth + 1);
    }
  };
  if (f.body) walk(f.body, (n) => n, 0);
  const regType = (n: string): string | undefined => {
    const t = types.get(n);
    if (t) return t;
    const m = /^(.*?)(\d+)$/.exec(n);
    const r = m ? ranges.get(m[1]!) : undefined;
    return r && Number(m![2]) < r.n ? r.type : undefined;
  };
  return { items, regType, decls };
}

/** A basic block: items `from` … `to − 1` of the flat list, its successors (-1: the exit). */
export interface BlockInfo {
  from: number;
  to: number;
  succ: number[];
}

/** The control-flow graph of a flat function with post-dominators. */
export interface Cfg {
  blocks: BlockInfo[];
  /** Block of each flat item. */
  blockOf: number[];
  /** Immediate post-dominator of each block; -1: the exit. */
  ipdom: number[];
  /** Block that starts at each label (flat name). */
  labelBlock: Map<string, number>;
}

/** The branch target of `bra` / `bra.uni` (flat label name), or undefined. */
export function branchTarget(it: FlatIns): string | undefined {
  if (it.ins.base !== 'bra') return undefined;
  const o: Operand | undefined = it.ins.operands[0];
  return o && o.kind === 'name' ? it.name(o.name) : undefined;
}

const ENDS = new Set(['ret', 'exit', 'trap']);

/** Cuts `flat` into blocks, links them and computes immediate post-dominators. */
export function buildCfg(flat: Flat): Cfg {
  const blocks: BlockInfo[] = [];
  const blockOf: number[] = new Array(flat.items.length).fill(0);
  const labelBlock = new Map<string, number>();
  let start = 0;
  const close = (end: number) => {
    if (end > start || blocks.length === 0) blocks.push({ from: start, to: end, succ: [] });
    start = end;
  };
  flat.items.forEach((it, i) => {
    if ('label' in it) {
      if (i > start) close(i);
      labelBlock.set(it.label, blocks.length);
    } else if (it.ins.base === 'bra' || ENDS.has(it.ins.base)) close(i + 1);
  });
  close(flat.items.length);
  blocks.forEach((b, bi) => { for (let i = b.from; i < b.to; i++) blockOf[i] = bi; });
  blocks.forEach((b, bi) => {
    const last = b.to > b.from ? flat.items[b.to - 1]! : undefined;
    const next = bi + 1 < blocks.length ? bi + 1 : -1;
    if (last && !('label' in last)) {
      const t = branchTarget(last);
      if (t !== undefined) {
        b.succ.push(labelBlock.get(t) ?? -1);
        if (last.ins.guard) b.succ.push(next);
        return;
      }
      if (ENDS.has(last.ins.base) && !last.ins.guard) { b.succ.push(-1); return; }
    }
    b.succ.push(next);
  });
  return { blocks, blockOf, ipdom: postDominators(blocks), labelBlock };
}

/** Immediate post-dominators by the iterative set algorithm (blocks are few: hundreds). */
function postDominators(blocks: BlockInfo[]): number[] {
  const n = blocks.length;
  const EXIT = n;
  const all = new Set<number>(Array.from({ length: n + 1 }, (_, i) => i));
  const pdom: Set<number>[] = blocks.map(() => new Set(all));
  const pd = (b: number): Set<number> => (b === EXIT ? new Set([EXIT]) : pdom[b]!);
  for (let changed = true; changed;) {
    changed = false;
    for (let b = n - 1; b >= 0; b--) {
      const succ = blocks[b]!.succ.map((s) => (s < 0 ? EXIT : s));
      let acc: Set<number> | null = null;
      for (const s of succ) {
        const p = pd(s);
        const prev: Set<number> | null = acc;
        acc = prev === null ? new Set(p) : new Set([...prev].filter((x: number) => p.has(x)));
      }
      const next = acc ?? new Set<number>();
      next.add(b);
      if (next.size !== pdom[b]!.size) { pdom[b] = next; changed = true; }
    }
  }
  return pdom.map((set, b) => {
    const size = set.size;
    for (const d of set) {
      if (d === b) continue;
      if ((d === EXIT ? 1 : pdom[d]!.size) === size - 1) return d === EXIT ? -1 : d;
    }
    return -1;
  });
}

/**
 * Blocks of the region a branch at the end of block `b` opens: every block reachable from its
 * successors without passing its immediate post-dominator (where its lanes reconverge).
 */
export function regionOf(cfg: Cfg, b: number, only?: number): Set<number> {
  const stop = cfg.ipdom[b]!;
  const seen = new Set<number>();
  const todo = cfg.blocks[b]!.succ.filter((s, i) => s >= 0 && s !== stop && (only === undefined || i === only));
  while (todo.length) {
    const x = todo.pop()!;
    if (seen.has(x)) continue;
    seen.add(x);
    for (const s of cfg.blocks[x]!.succ) if (s >= 0 && s !== stop && !seen.has(s)) todo.push(s);
  }
  return seen;
}
