/**
 * Loads a sketch file (`.mbk`, docs/LANGUAGE.md): parses it with the sketch language and reports
 * every diagnostic with file:line:col, the source line and a caret (exit code 2).
 */
import { readFileSync } from 'node:fs';
import type { Kernel } from '../kernel/ir.js';
import { formatDiagnostic, parseSketch } from '../lang/index.js';
import { UsageError } from './load.js';

/** Parses the sketch at `path`; reports every diagnostic as a {@link UsageError}. */
export function loadSketchFile(path: string): Kernel {
  let src: string;
  try {
    src = readFileSync(path, 'utf8');
  } catch (err) {
    throw new UsageError(`cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  const r = parseSketch(src, path);
  if (!r.kernel || r.diagnostics.length) throw new UsageError(r.diagnostics.map((d) => formatDiagnostic(d, src)).join('\n'));
  return r.kernel;
}
