/**
 * A PTX function body as a flat instruction list and its control-flow graph: `{ }` scopes are
 * flattened (their labels and registers renamed `NAME#k`, k the scope's number, so that nvcc's
 * inline-asm scopes `{ .reg .pred p; LAB_WAIT: … }` that reuse one name dozens of times stay
 * apart), basic blocks are cut at labels and after branches, and every block gets its immediate
 * post-dominator (the reconvergence point of a divergent branch, docs/PTX.md "Lanes").
 */
import { KernelError } from '../machine/program.js';
import type { Block, Decl, Func, Instruction, Module, Operand } from '../ptx/ast.js';

/** The label a callee's `ret` branches to (renamed per inlined call). */
const RETURN = '%return';

/** One instruction of the flat list, its operand names resolved to their scope's renamed names. */
export interface FlatIns {
  ins: Instruction;
  /** Register / label name as written → name in the flat function (scope-local names renamed). */
  name(n: string): string;
  /** The `call` instructions an inlined callee's instruction was reached through, innermost first (absent in the kernel's own body). */
  calls?: readonly Instruction[];
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

/** Most nested levels of `.func` calls inlined (a deeper chain is refused). */
export const MAX_INLINE_DEPTH = 16;
/** Most instructions of a flat function after inlining (a larger one is refused). */
export const MAX_INLINED_INSTRUCTIONS = 200_000;

/** Bytes of one element of a `ld.param` / `st.param` type modifier (`b32` → 4). */
function typeBytes(mods: readonly string[]): number {
  for (const m of mods) {
    const t = /^[bsuf](8|16|32|64|128)$/.exec(m);
    if (t) return Number(t[1]) / 8;
  }
  return 0;
}

/**
 * Flattens `f`'s body (see the module comment). With `module`, a `call` of a `.func` that the
 * module defines is inlined (docs/PTX.md "Calls"): the callee's registers and labels are renamed
 * per call (`NAME#k`), its formal parameters and return values name the caller's call-site
 * `.param` variables, whose `st.param` / `ld.param` become moves of one variable per offset
 * (`param0#k+0`), and its `ret` a branch to the end of the inlined body. Recursion, and a chain
 * deeper than {@link MAX_INLINE_DEPTH}, throw {@link KernelError} at the call.
 */
export function flatten(f: Func, module?: Module): Flat {
  const items: Flat['items'] = [];
  const types = new Map<string, string>();
  const ranges = new Map<string, { type: string; n: number }>();
  const decls: Decl[] = [];
  const callParams = new Set<string>();
  const bodies = new Map<string, Func>();
  for (const g of module?.items ?? []) if (g.kind === 'function' && !g.entry && g.body) bodies.set(g.name, g);
  const file = module?.file;
  let scopes = 0;
  let count = 0;
  const push = (it: FlatIns): void => {
    if (++count > MAX_INLINED_INSTRUCTIONS) throw new KernelError(`${f.name} has more than ${MAX_INLINED_INSTRUCTIONS.toLocaleString('en-US')} instructions with its calls inlined: not modelled`, { file, line: it.ins.pos.line, col: it.ins.pos.col }, 'ptx-call');
    items.push(it);
  };
  /** A `ld.param` / `st.param` of a call-site `.param` variable: moves of one variable per offset. */
  const paramMoves = (st: Instruction, name: (n: string) => string): FlatIns[] | null => {
    if ((st.base !== 'ld' && st.base !== 'st') || !st.mods.includes('param')) return null;
    const addr = st.base === 'ld' ? st.operands[1] : st.operands[0];
    const val = st.base === 'ld' ? st.operands[0] : st.operands[1];
    if (!addr || addr.kind !== 'address' || !addr.base || addr.rest || !val) return null;
    const p = name(addr.base);
    if (!callParams.has(p)) return null;
    const size = typeBytes(st.mods);
    const type = st.mods.find((m) => /^[bsuf](8|16|32|64|128)$/.test(m)) ?? 'b32';
    const vals = val.kind === 'vector' ? val.items : [val];
    return vals.flatMap((x, i) => {
      if (x.kind === 'sink') return [];
      const slot = `${p}+${Number(addr.offset) + i * size}`;
      types.set(slot, `.${type}`);
      const slotOp = { kind: 'name' as const, name: slot, pos: x.pos };
      const ins: Instruction = { ...st, opcode: `mov.${type}`, base: 'mov', mods: [type], operands: st.base === 'ld' ? [x, slotOp] : [slotOp, x] };
      return [{ ins, name: (n: string) => (n === slot ? n : name(n)) }];
    });
  };
  const walk = (b: Block, outer: (n: string) => string, depth: number, stack: readonly string[], sites: readonly Instruction[] = []): void => {
    const at = (x: FlatIns): FlatIns => (sites.length ? { ...x, calls: sites } : x);
    const k = scopes++;
    const local = new Map<string, string>();
    const localRanges = new Map<string, { n: number; type: string }>();
    const rename = (n: string) => (depth === 0 ? n : `${n}#${k}`);
    for (const st of b.stmts) {
      if (st.kind === 'label') local.set(st.name, rename(st.name));
      else if (st.kind === 'decl') {
        for (const d of st.names) {
          if (d.range !== undefined) {
            if (stack.length) {
              // A callee's `%r<11>`: each register renamed for this call, as it is named (a
              // `%r<2000000000>` is not expanded register by register).
              localRanges.set(d.name, { n: d.range, type: st.type });
              continue;
            }
            ranges.set(depth === 0 ? d.name : rename(d.name), { type: st.type, n: d.range });
            if (depth) local.set(d.name, rename(d.name));
            continue;
          }
          local.set(d.name, rename(d.name));
          types.set(rename(d.name), st.type);
          if (st.space === '.param') callParams.add(rename(d.name));
        }
        if (st.space !== '.reg' && st.space !== '.param') decls.push(st);
      }
    }
    const name = (n: string): string => local.get(n) ?? rangeName(n) ?? outer(n);
    /** A register of a callee's `%r<N>` range (`%r7`, its index written as a plain decimal), renamed once. */
    const rangeName = (n: string): string | undefined => {
      if (!localRanges.size) return undefined;
      const m = /^(.*\D)(\d+)$/.exec(n);
      const r = m ? localRanges.get(m[1]!) : undefined;
      if (!r || String(Number(m![2])) !== m![2] || Number(m![2]) >= r.n) return undefined;
      const renamed = rename(n);
      local.set(n, renamed);
      types.set(renamed, r.type);
      return renamed;
    };
    for (const st of b.stmts) {
      if (st.kind === 'label') items.push({ label: name(st.name) });
      else if (st.kind === 'instr') {
        const callee = st.base === 'call' ? st.operands.find((o) => o.kind === 'name') : undefined;
        const g = callee && callee.kind === 'name' ? bodies.get(callee.name) : undefined;
        if (g) inline(st, g, name, depth, stack, sites);
        else if (stack.length && st.base === 'ret') push(at({ ins: { ...st, opcode: 'bra.uni', base: 'bra', mods: ['uni'], operands: [{ kind: 'name', name: RETURN, pos: st.pos }] }, name }));
        else for (const it of paramMoves(st, name) ?? [{ ins: st, name }]) push(at(it));
      } else if (st.kind === 'block') walk(st, name, depth + 1, stack, sites);
    }
  };
  /** Inlines the call `st` of `g` (see {@link flatten}). */
  const inline = (st: Instruction, g: Func, name: (n: string) => string, depth: number, stack: readonly string[], sites: readonly Instruction[]): void => {
    const at = { file, line: st.pos.line, col: st.pos.col };
    if (stack.includes(g.name)) throw new KernelError(`call ${g.name}: a recursive call (${[...stack, g.name].join(' → ')}): mbsim inlines .func calls, recursion is not modelled`, at, 'ptx-call');
    if (stack.length >= MAX_INLINE_DEPTH) throw new KernelError(`call ${g.name}: calls nested more than ${MAX_INLINE_DEPTH} deep (${[...stack, g.name].join(' → ')}): not modelled`, at, 'ptx-call');
    const fi = st.operands.findIndex((o) => o.kind === 'name');
    const lists = (from: number, to: number) => st.operands.slice(from, to).flatMap((o) => (o.kind === 'list' ? o.items : []));
    const rets = lists(0, fi);
    const args = lists(fi + 1, st.operands.length);
    const formal = new Map<string, string>();
    const bind = (ps: readonly { name: string }[], actual: Operand[], what: string): void => {
      if (actual.length !== ps.length) throw new KernelError(`call ${g.name}: ${actual.length} ${what} given, the function has ${ps.length}`, at, 'ptx-call');
      ps.forEach((p, i) => {
        const a = actual[i]!;
        const an = a.kind === 'name' ? name(a.name) : undefined;
        if (an === undefined || !callParams.has(an)) throw new KernelError(`call ${g.name}: ${what} ${i} is not a call-site .param variable: not modelled`, at, 'ptx-call');
        formal.set(p.name, an);
      });
    };
    bind(g.returns, rets, 'return values');
    bind(g.params, args, 'arguments');
    const k = scopes;
    const end = `${RETURN}#${k}`;
    if (st.guard) push({ ins: { ...st, guard: { ...st.guard, negated: !st.guard.negated }, opcode: 'bra.uni', base: 'bra', mods: ['uni'], operands: [{ kind: 'name', name: end, pos: st.pos }] }, name: (n) => (n === end ? n : name(n)), ...(sites.length ? { calls: sites } : {}) });
    // The callee sees module-level names, its formals as the call's .param variables, and `ret` as the end label.
    walk(g.body!, (n) => (n === RETURN ? end : formal.get(n) ?? n), depth + 1, [...stack, g.name], [st, ...sites]);
    items.push({ label: end });
  };
  if (f.body) walk(f.body, (n) => n, 0, []);
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
  /** Immediate post-dominator of each block; -1: the exit (paths that end in a `trap` are left out). */
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
      // A trap never reaches the kernel's end: no successor, so that the paths to it do not move
      // a branch's reconvergence point to the exit (libcu++'s assertion paths in -G builds).
      if (ENDS.has(last.ins.base) && !last.ins.guard) { if (last.ins.base !== 'trap') b.succ.push(-1); return; }
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
      const next = acc ?? new Set(all); // a trap: post-dominated by every block (it never reaches the exit)
      next.add(b);
      if (next.size !== pdom[b]!.size) { pdom[b] = next; changed = true; }
    }
  }
  return pdom.map((set, b) => {
    const size = set.size;
    if (size === n + 1) return -1; // every path from b traps
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
