/**
 * Loads a sketch file (`.mbk`, docs/LANGUAGE.md): parses it with the sketch language and reports
 * every diagnostic with file:line:col, the source line and a caret (exit code 2).
 */
import type { Kernel } from '../kernel/ir.js';
import { formatDiagnostic, LIMITS, parseSketch } from '../lang/index.js';
import { UsageError } from './load.js';
import { alignCaret } from './terminal.js';
import { readInput } from './input.js';
import { looksLikePtx } from './sniff.js';
import { weighParse, type ParseBounds } from './parse-budget.js';

/** Errors printed for one file. */
const SHOWN = 12;

/**
 * Parses the sketch at `path`; reports every diagnostic as a {@link UsageError}. A parse that
 * would pass the command's `bounds` (--max-memory, --timeout) is an IncompleteError (exit 3, parse-budget.ts).
 */
export function loadSketchFile(path: string, bounds?: ParseBounds): Kernel {
  // At most what can hold LIMITS.fileChars characters (4 UTF-8 bytes each) and one more: a larger
  // file is reported by the size limit without being read whole.
  const src = readInput(path, 'sketch file', LIMITS.fileChars * 4 + 4).text;
  weighParse(path, 'sketch', src.length, bounds);
  const r = parseSketch(src, path);
  if (!r.kernel || r.diagnostics.length) {
    // At most SHOWN errors, and each hint once: a binary file must not flood the terminal.
    const seenHints = new Set<string>();
    const shown = r.diagnostics.slice(0, SHOWN).map((d) => {
      const again = d.hint !== undefined && seenHints.has(d.hint);
      if (d.hint !== undefined) seenHints.add(d.hint);
      return alignCaret(formatDiagnostic(again ? { ...d, hint: '' } : d, src), src.split(/\r\n|\r|\n/)[d.line - 1], d.col);
    });
    // The same, one line per diagnostic (its located first line): `check --format short`.
    const brief = r.diagnostics.slice(0, SHOWN).map((d) => formatDiagnostic({ ...d, hint: '' }, src).split('\n')[0]!);
    const more = r.diagnostics.length - SHOWN;
    const tail: string[] = [];
    if (more > 0) tail.push(`… and ${more} more error${more > 1 ? 's' : ''} in ${path}`);
    // PTX saved as .mbk: its first error is "expected 'eof'" at a comment; say what the file is.
    if (looksLikePtx(src)) tail.push(`hint: ${path} looks like PTX (it has .version / .target / .entry directives), not a sketch: mbsim reads a file as PTX by its extension; save it as .ptx (then give its launch: docs/PTX.md)`);
    throw new UsageError([...shown, ...tail].join('\n'), [...brief, ...tail].join('\n'));
  }
  return r.kernel;
}
