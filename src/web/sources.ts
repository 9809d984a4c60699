/**
 * The catalog of kernels the explorer can open: the built-in TypeScript examples and the sketch
 * files under `examples/` (bundled at build time), and turning a {@link SourceRef} into a kernel.
 */
import { EXAMPLES, findExample } from '../examples/index.js';
import type { Kernel } from '../kernel/ir.js';
import { parseSketch, SKETCH_CODES, type SketchDiagnostic } from '../lang/index.js';
import { KernelError } from '../machine/program.js';
import { parsePtx } from '../ptx/index.js';
import { translatePtx, type PtxLaunch } from '../ptxi/index.js';
import type { SourceRef } from './share.js';

const raw = import.meta.glob('../../examples/**/*.mbk', { query: '?raw', import: 'default', eager: true }) as Record<string, string>;

/** A bundled sketch file. */
export interface SketchFile {
  /** Path relative to the repository, e.g. `examples/bugs/B01.mbk`. */
  path: string;
  text: string;
  /** The leading comment paragraph, without `#` and `expect:` lines, as written. */
  summary: string;
  group: 'sketches' | 'bugs';
}

export const SKETCH_FILES: SketchFile[] = Object.entries(raw)
  .map(([k, text]) => {
    const path = k.replace(/^(\.\.\/)+/, '');
    return { path, text, summary: leadComment(text), group: path.includes('/bugs/') ? 'bugs' as const : 'sketches' as const };
  })
  .sort((a, b) => (a.group === b.group ? a.path.localeCompare(b.path) : a.group === 'sketches' ? -1 : 1));

/** A sketch's description: its leading comment paragraph, whole (without `expect:` lines). */
export function leadComment(text: string): string {
  const out: string[] = [];
  for (const l of text.split(/\r?\n/)) {
    if (!l.startsWith('#')) {
      if (out.length || l.trim()) break;
      continue;
    }
    const body = l.replace(/^#\s?/, '').trim();
    if (/^expect:/.test(body)) continue;
    out.push(body);
  }
  return out.join(' ').replace(/\s+/g, ' ').trim();
}

export const isExample = (n: string): boolean => !!findExample(n);
export const isFile = (p: string): boolean => SKETCH_FILES.some((f) => f.path === p);
export { EXAMPLES };

/** The sketch twin of a built-in example (`examples/NAME.mbk`), if bundled. */
export function sketchTwin(name: string): SketchFile | undefined {
  return SKETCH_FILES.find((f) => f.path === `examples/${name}.mbk`);
}

/** A problem of a sketch or of a PTX file (its parse, or its translation for the launch), at its place. */
export type SourceDiagnostic = Omit<SketchDiagnostic, 'code'> & { code: string };

/**
 * Parses a source text: a sketch, or PTX (`launch` given: `mbsim serve FILE.ptx`, the launch its
 * sidecar and flags gave) parsed and translated as `mbsim run | check FILE.ptx` do (docs/PTX.md).
 */
export function parseSource(text: string, file: string, launch?: PtxLaunch): { kernel?: Kernel; diagnostics: SourceDiagnostic[] } {
  if (!launch) return parseSketch(text, file);
  const r = parsePtx(text, file);
  if (!r.ok) return { diagnostics: [r.diagnostic] };
  try {
    return { kernel: translatePtx(r.module, launch).kernel, diagnostics: [] };
  } catch (err) {
    if (!(err instanceof KernelError)) throw err;
    const loc = err.loc && err.loc.line ? err.loc : { line: 1, col: 1 };
    return { diagnostics: [{ code: err.code, message: err.message, hint: '', file, line: loc.line, col: loc.col, endCol: ('endCol' in loc && loc.endCol) || loc.col + 1 }] };
  }
}

/** What loading a source gives: the kernel (when it parses), its sketch text (if any) and diagnostics. */
export interface Loaded {
  kernel?: Kernel;
  /** Sketch text, for source lines; absent for builder kernels. */
  text?: string;
  /** File name used in diagnostics and locations. */
  file: string;
  diagnostics: SourceDiagnostic[];
  /** Human name for the menu / title. */
  title: string;
}

/** Loads a source (never throws). */
export function load(src: SourceRef): Loaded {
  if (src.kind === 'example') {
    const ex = findExample(src.name);
    if (!ex) return { file: src.name, diagnostics: [], title: src.name };
    try {
      return { kernel: ex.build(), file: `${ex.name} (built-in)`, diagnostics: [], title: `${ex.name} (built-in)` };
    } catch (err) {
      return { file: ex.name, diagnostics: [{ code: SKETCH_CODES.internal, message: String((err as Error).message), hint: '', file: ex.name, line: 1, col: 1, endCol: 2 }], title: ex.name };
    }
  }
  const file = src.kind === 'file' ? src.path : src.name;
  const text = src.kind === 'file' ? SKETCH_FILES.find((f) => f.path === src.path)?.text ?? '' : src.text;
  const r = src.kind === 'ptx' ? parseSource(text, file, src.launch) : parseSketch(text, file);
  const out: Loaded = { text, file, diagnostics: r.diagnostics, title: file };
  if (r.kernel) out.kernel = r.kernel;
  return out;
}
