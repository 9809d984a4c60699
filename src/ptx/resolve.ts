/**
 * What later passes ask of a parsed module: its functions, each function's scopes with their
 * labels and register declarations (PTX ISA "Statements": a `{ }` block is a scope; labels and
 * variables declared in it are visible in it and in the blocks it contains, shadowing outer ones),
 * and the CUDA source line of an instruction through its `.loc` and the `.file` table.
 */
import type { Block, Decl, DeclName, FileDirective, Func, Instruction, LocDirective, Module, Param, Stmt } from './ast.js';
import { inlineChain } from './inlined.js';

export { cudaOrigin } from './inlined.js';

/** A register or variable visible in a scope: its declaration and, for `%r<N>`, the range's name. */
export interface RegInfo {
  decl: Decl;
  name: DeclName;
}

/** One `{ }` scope of a function body. */
export interface Scope {
  block: Block;
  parent?: Scope;
  /** Labels of this scope: name → index of the label in `block.stmts` (its target follows it). */
  labels: Map<string, number>;
  /** Names declared in this scope (`.reg`, `.local`, `.shared`, `.param` …), exactly as named. */
  regs: Map<string, RegInfo>;
  /** `%r<N>` ranges of this scope: prefix → declaration, N in `name.range`. */
  ranges: Map<string, RegInfo>;
  /** Labels declared twice in this scope (a PTX error the interpreter reports). */
  duplicates: string[];
}

/** The scopes of one function and the lookups that follow them. */
export interface FunctionIndex {
  func: Func;
  /** The body's outermost scope (absent for a declaration). */
  root?: Scope;
  /** Every scope, outermost first (document order). */
  scopes: Scope[];
  /** The scope a statement belongs to. */
  scopeOf: Map<Stmt, Scope>;
  /** The label `name` as seen from `from` (a statement of this function): its scope and index. */
  label(from: Stmt, name: string): { scope: Scope; index: number } | undefined;
  /** The declaration of register or variable `name` as seen from `from`; parameters last. */
  reg(from: Stmt, name: string): RegInfo | Param | undefined;
}

/** The functions (`.entry` and `.func`, declared or defined) of a module, in source order. */
export function functions(m: Module): Func[] {
  return m.items.filter((i): i is Func => i.kind === 'function');
}

/** Every instruction of a function body in text order (nested scopes included). */
export function instructionsOf(f: Func): Instruction[] {
  const out: Instruction[] = [];
  const walk = (b: Block): void => {
    for (const s of b.stmts) {
      if (s.kind === 'instr') out.push(s);
      else if (s.kind === 'block') walk(s);
    }
  };
  if (f.body) walk(f.body);
  return out;
}

function buildScope(block: Block, parent: Scope | undefined, all: Scope[], scopeOf: Map<Stmt, Scope>): Scope {
  const s: Scope = { block, labels: new Map(), regs: new Map(), ranges: new Map(), duplicates: [] };
  if (parent) s.parent = parent;
  all.push(s);
  block.stmts.forEach((st, i) => {
    scopeOf.set(st, s);
    if (st.kind === 'label') {
      if (s.labels.has(st.name)) s.duplicates.push(st.name);
      else s.labels.set(st.name, i);
    } else if (st.kind === 'decl') {
      for (const n of st.names) (n.range !== undefined ? s.ranges : s.regs).set(n.name, { decl: st, name: n });
    }
  });
  for (const st of block.stmts) if (st.kind === 'block') buildScope(st, s, all, scopeOf);
  return s;
}

/** Splits `%r57` into `%r` and 57 (a register of a `%r<N>` range), or undefined. */
function rangeParts(name: string): [string, number] | undefined {
  const m = /^(.*?)(0|[1-9][0-9]*)$/.exec(name);
  return m && m[1] ? [m[1], Number(m[2])] : undefined;
}

/**
 * Indexes the scopes of `f`: labels and declarations per `{ }` block, so that a label or register
 * reused in many blocks (nvcc's inline-asm scopes `{ .reg .pred p; LAB_WAIT: … }`) resolves to the
 * innermost declaration visible from the statement that names it.
 */
export function functionIndex(f: Func): FunctionIndex {
  const scopes: Scope[] = [];
  const scopeOf = new Map<Stmt, Scope>();
  const root = f.body ? buildScope(f.body, undefined, scopes, scopeOf) : undefined;
  const params = new Map<string, Param>([...f.returns, ...f.params].map((p) => [p.name, p]));
  const idx: FunctionIndex = {
    func: f,
    scopes,
    scopeOf,
    label(from, name) {
      for (let s = scopeOf.get(from); s; s = s.parent) {
        const index = s.labels.get(name);
        if (index !== undefined) return { scope: s, index };
      }
      return undefined;
    },
    reg(from, name) {
      const parts = rangeParts(name);
      for (let s = scopeOf.get(from); s; s = s.parent) {
        const exact = s.regs.get(name);
        if (exact) return exact;
        if (parts) {
          const r = s.ranges.get(parts[0]);
          if (r && parts[1] < r.name.range!) return r;
        }
      }
      return params.get(name);
    },
  };
  if (root) idx.root = root;
  return idx;
}

/** A CUDA source position: the `.file` path, line and column (0: unknown), and the call site it was inlined at (its own call site in turn, up to the kernel). */
export interface CudaLocation {
  path: string;
  line: number;
  col: number;
  inlinedAt?: CudaLocation;
}

/**
 * Where the instruction came from in the CUDA source: its `.loc` mapped through the module's
 * `.file` table (a file index with no `.file` is named `file#N`), with the whole chain of call
 * sites it was inlined at (inlined.ts); undefined without a `.loc`.
 */
export function cudaLocation(m: Module, ins: Instruction | LocDirective): CudaLocation | undefined {
  const loc = ins.kind === 'loc' ? ins : ins.loc;
  if (!loc) return undefined;
  const files = fileTable(m);
  const at = (fileIndex: number, line: number, col: number): CudaLocation => ({ path: files.get(fileIndex)?.path ?? `file#${fileIndex}`, line, col });
  const out = at(loc.fileIndex, loc.line, loc.col);
  let inner = out;
  for (const f of inlineChain(m, loc)) inner = inner.inlinedAt = at(f.fileIndex, f.line, f.col);
  return out;
}

const FILES = new WeakMap<Module, Map<number, FileDirective>>();

/** The module's `.file` table: index → directive (computed once per module). */
export function fileTable(m: Module): Map<number, FileDirective> {
  let t = FILES.get(m);
  if (!t) {
    t = new Map();
    for (const i of m.items) if (i.kind === 'file') t.set(i.index, i);
    FILES.set(m, t);
  }
  return t;
}

/**
 * The string a `.debug_str` label names (a `.loc`'s `function_name`: the mangled name of the
 * inlined function): its `.b8` bytes up to the first 0, as Latin-1; undefined if absent.
 */
export function debugString(m: Module, label: string): string | undefined {
  for (const sec of m.items) {
    if (sec.kind !== 'section' || sec.name !== '.debug_str') continue;
    const at = sec.items.findIndex((i) => i.kind === 'label' && i.name === label);
    if (at < 0) continue;
    let out = '';
    for (const item of sec.items.slice(at + 1)) {
      if (item.kind === 'label') break;
      for (const v of item.text.split(',')) {
        const n = Number(v.trim());
        if (n === 0) return out;
        out += String.fromCharCode(n & 0xff);
      }
    }
    return out;
  }
  return undefined;
}
