/**
 * Loads a sketch file (`.mbk`, docs/LANGUAGE.md): parses it with the sketch language and reports
 * every diagnostic with file:line:col, the source line and a caret (exit code 2).
 */
import { readFileSync } from 'node:fs';
import type { Kernel } from '../kernel/ir.js';
import { formatDiagnostic, parseSketch } from '../lang/index.js';
import { UsageError } from './load.js';
import { alignCaret } from './terminal.js';

/** Errors printed for one file. */
const SHOWN = 12;

/** Parses the sketch at `path`; reports every diagnostic as a {@link UsageError}. */
export function loadSketchFile(path: string): Kernel {
  let src: string;
  try {
    src = readFileSync(path, 'utf8');
  } catch (err) {
    throw new UsageError(`cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  if (src.charCodeAt(0) === 0xfeff) src = src.slice(1);
  const r = parseSketch(src, path);
  if (!r.kernel || r.diagnostics.length) {
    // At most SHOWN errors, and each hint once: a binary file must not flood the terminal.
    const seenHints = new Set<string>();
    const shown = r.diagnostics.slice(0, SHOWN).map((d) => {
      const again = d.hint !== undefined && seenHints.has(d.hint);
      if (d.hint !== undefined) seenHints.add(d.hint);
      return alignCaret(formatDiagnostic(again ? { ...d, hint: '' } : d, src), src.split(/\r\n|\r|\n/)[d.line - 1], d.col);
    });
    const more = r.diagnostics.length - SHOWN;
    if (more > 0) shown.push(`… and ${more} more error${more > 1 ? 's' : ''} in ${path}`);
    throw new UsageError(shown.join('\n'));
  }
  return r.kernel;
}
