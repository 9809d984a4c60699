/**
 * Diagnostics of the sketch language: every error has a stable code, a message, a hint and a
 * span (1-based line and column, `endCol` one past the last character).
 */

/** Stable diagnostic codes of the sketch language. Never rename; add new codes at the end. */
export const SKETCH_CODES = {
  badChar: 'E-bad-char',
  mixedIndent: 'E-mixed-indent',
  unexpectedIndent: 'E-unexpected-indent',
  badDedent: 'E-bad-dedent',
  expectedIndent: 'E-expected-indent',
  syntax: 'E-syntax',
  missingKernel: 'E-missing-kernel',
  duplicate: 'E-duplicate',
  unknownName: 'E-unknown-name',
  unknownMnemonic: 'E-unknown-mnemonic',
  operandCount: 'E-operand-count',
  operandKind: 'E-operand-kind',
  unknownOption: 'E-unknown-option',
  optionValue: 'E-option-value',
  missingOption: 'E-missing-option',
  initCount: 'E-init-count',
  workCycles: 'E-work-cycles',
  indexRange: 'E-index-range',
  paramValue: 'E-param-value',
  assign: 'E-assign',
  arch: 'E-arch',
  /** A {@link KernelError} from `instantiate()` with default parameters: `E-kernel-<its code>`. */
  kernel: 'E-kernel',
  internal: 'E-internal',
} as const;

/** One of the codes of {@link SKETCH_CODES}, or `E-kernel-<code>` for instantiation errors. */
export type SketchCode = (typeof SKETCH_CODES)[keyof typeof SKETCH_CODES] | `E-kernel-${string}`;

/** An error in a sketch file. */
export interface SketchDiagnostic {
  code: SketchCode;
  message: string;
  /** What to do about it (may be empty). */
  hint: string;
  file: string;
  line: number;
  col: number;
  /** Column one past the end of the span (at least col + 1). */
  endCol: number;
}

/** Splits source text into lines (LF, CRLF or CR). */
export function sourceLines(source: string): string[] {
  return source.split(/\r\n|\r|\n/);
}

/**
 * Formats a diagnostic like a compiler does:
 *
 * ```
 * file:line:col: error[CODE]: message
 *   <source line>
 *   ^~~~
 * hint: ...
 * ```
 *
 * The caret line repeats the tabs of the source line so that it lines up in a terminal.
 */
export function formatDiagnostic(d: SketchDiagnostic, source: string): string {
  const out = [`${d.file}:${d.line}:${d.col}: error[${d.code}]: ${d.message}`];
  const lines = sourceLines(source);
  const text = d.line >= 1 && d.line <= lines.length ? lines[d.line - 1]! : undefined;
  if (text !== undefined) {
    out.push(`  ${text}`);
    const start = Math.max(1, Math.min(d.col, text.length + 1));
    const end = Math.max(start + 1, Math.min(d.endCol, Math.max(text.length + 1, start + 1)));
    const pad = text.slice(0, start - 1).replace(/[^\t]/g, ' ');
    out.push(`  ${pad}^${'~'.repeat(end - start - 1)}`);
  }
  if (d.hint) out.push(`hint: ${d.hint}`);
  return out.join('\n');
}

/** Edit distance (Levenshtein), for did-you-mean hints. */
export function editDistance(a: string, b: string): number {
  const m = a.length, n = b.length;
  let prev = Array.from({ length: n + 1 }, (_, j) => j);
  for (let i = 1; i <= m; i++) {
    const cur = [i];
    for (let j = 1; j <= n; j++) {
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[n]!;
}

/** The candidate closest to `word`, if it is close enough to be a plausible typo. */
export function didYouMean(word: string, candidates: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestD = Infinity;
  const w = word.toLowerCase();
  for (const c of candidates) {
    const d = editDistance(w, c.toLowerCase());
    if (d < bestD) {
      bestD = d;
      best = c;
    }
  }
  if (best === undefined) return undefined;
  const limit = Math.max(1, Math.floor(Math.max(word.length, best.length) / 3));
  return bestD <= limit && bestD < word.length ? best : undefined;
}
