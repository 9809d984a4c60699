/**
 * The call sites of inlined code (`nvcc -lineinfo`): a `.loc` of code inlined from a function names
 * the function's line and, with `inlined_at F L C`, the line it was inlined at. When that call site
 * is itself inside inlined code, nvcc writes its `.loc` just before (`.loc 4 33 3, function_name
 * $L__info_string2, inlined_at 1 22 5` then `.loc 4 17 3, …, inlined_at 4 33 3`): the chain up to
 * the kernel is followed through the latest earlier `.loc` of the same function at the call site's
 * position that is inlined itself.
 */
import type { Block, InlinedAt, LocDirective, Module } from './ast.js';
import type { CudaLocation } from './resolve.js';

/** One frame of an inlined-at chain: `.file` index, line and column. */
export interface InlineFrame {
  fileIndex: number;
  line: number;
  col: number;
}

/** Longest chain followed (a cycle in malformed input ends it). */
const MAX_DEPTH = 64;

interface LocIndex {
  /** Start line of each function, ascending. */
  starts: number[];
  /** `file:line:col` → the inlined `.loc` directives at that position, in text order. */
  at: Map<string, LocDirective[]>;
}

const INDEX = new WeakMap<Module, LocIndex>();

function indexOf(m: Module): LocIndex {
  let ix = INDEX.get(m);
  if (ix) return ix;
  ix = { starts: [], at: new Map() };
  const walk = (b: Block): void => {
    for (const s of b.stmts) {
      if (s.kind === 'block') walk(s);
      else if (s.kind === 'loc' && s.inlinedAt) {
        const k = `${s.fileIndex}:${s.line}:${s.col}`;
        (ix!.at.get(k) ?? ix!.at.set(k, []).get(k)!).push(s);
      }
    }
  };
  for (const f of m.items) {
    if (f.kind !== 'function' || !f.body) continue;
    ix.starts.push(f.pos.line);
    walk(f.body);
  }
  ix.starts.sort((a, b) => a - b);
  for (const list of ix.at.values()) list.sort((a, b) => a.pos.line - b.pos.line || a.pos.col - b.pos.col);
  INDEX.set(m, ix);
  return ix;
}

/** The first line of the function holding line `line` (0 before the first function). */
function functionStart(ix: LocIndex, line: number): number {
  let lo = 0;
  for (const s of ix.starts) if (s <= line) lo = s; else break;
  return lo;
}

/**
 * The call sites `loc` was inlined at, innermost first (`[the function's call site, …, the kernel's
 * line]`); empty when `loc` has no `inlined_at`.
 */
export function inlineChain(m: Module, loc: LocDirective): InlineFrame[] {
  const ix = indexOf(m);
  const start = functionStart(ix, loc.pos.line);
  const out: InlineFrame[] = [];
  let cur: LocDirective = loc;
  let site: InlinedAt | undefined = loc.inlinedAt;
  while (site && out.length < MAX_DEPTH) {
    out.push({ fileIndex: site.fileIndex, line: site.line, col: site.col });
    // The call site's own .loc, when it was inlined too: the latest one before `cur` in this function.
    const list = ix.at.get(`${site.fileIndex}:${site.line}:${site.col}`) ?? [];
    let parent: LocDirective | undefined;
    for (const d of list) {
      if (d.pos.line < start || d.pos.line > cur.pos.line || (d.pos.line === cur.pos.line && d.pos.col >= cur.pos.col)) continue;
      parent = d;
    }
    if (!parent) break;
    cur = parent;
    site = parent.inlinedAt;
  }
  return out;
}

/**
 * Whether a CUDA path is a header of the toolkit (`<cuda>/include/…`, an install's
 * `/usr/local/cuda-13.0/bin/../targets/x86_64-linux/include/…`, `…\\CUDA\\v13.0\\include\\…`, the pip wheels' `…/nvidia/cuda_runtime/include/…`), of CCCL
 * (`…/cccl/…`) or of the system (`/usr/include/…`), not the user's code. A project's own `include/`
 * folder is the user's code: header-only kernels (DeepGEMM's `deep_gemm/include/deep_gemm/impls/…`,
 * CUTLASS's `include/cutlass/…`) are cited with the call sites they were inlined at.
 */
export function isLibraryPath(path: string): boolean {
  return /^<cuda>[\\/]|[\\/]cccl[\\/]|^\/usr\/include\/|[\\/]nvidia[\\/][^\\/]+[\\/]include[\\/]|(^|[\\/])cuda(-[\d.]+)?[\\/](v?[\d.]+[\\/])?((bin[\\/]\.\.[\\/])?targets[\\/][^\\/]+[\\/])?include[\\/]/i.test(path);
}

/**
 * The CUDA origin of a location as reports print it: the innermost frame of the user's code with
 * the call sites it was inlined at, `util.cuh:42, inlined at kernel.cu:88`. Library frames are
 * left out wherever they are in the chain: inside the user's line (a CCCL wrapper's lines) and
 * between two of the user's frames (a library function that calls back the user's code, such as
 * cooperative_groups' `invoke_one` running a lambda); a chain of library frames only names the
 * innermost.
 */
export function originText(frames: readonly { path: string; line: number }[]): string | undefined {
  const user = frames.filter((f) => !isLibraryPath(f.path));
  const shown = (user.length ? user : frames.slice(0, 1)).filter((f) => f.line > 0);
  if (!shown.length) return undefined;
  return shown.map((f) => `${f.path}:${f.line}`).join(', inlined at ');
}

/** {@link originText} of a {@link CudaLocation} and its inlined-at chain; undefined without one. */
export function cudaOrigin(c: CudaLocation | undefined): string | undefined {
  const frames: CudaLocation[] = [];
  for (let f = c; f && frames.length <= MAX_DEPTH; f = f.inlinedAt) frames.push(f);
  return originText(frames);
}
