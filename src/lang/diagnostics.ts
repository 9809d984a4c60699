/**
 * Diagnostics of the sketch language: every error has a stable code, a message, a hint and a
 * span (1-based line and column, `endCol` one past the last character).
 */
import { argError, isRecord, stringArg } from '../model/api-args.js';

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
  /** A constant `cp.async` size other than 4, 8 or 16 bytes (PTX ISA §9.7.9.25.3.1). */
  cpSize: 'E-cp-size',
  /** A negative constant `cp.async.wait_group` count (PTX ISA §9.7.9.25.3.3). */
  waitGroup: 'E-wait-group',
  indexRange: 'E-index-range',
  paramValue: 'E-param-value',
  assign: 'E-assign',
  arch: 'E-arch',
  /** A `KernelError` (src/machine/program.ts) from `instantiate()` with default parameters: `E-kernel-<its code>`. */
  kernel: 'E-kernel',
  internal: 'E-internal',
  /** An integer literal or constant expression without an exact value (beyond ±(2^53 − 1), division by zero, …). */
  arith: 'E-arith',
  /** An input limit (file size, line length, statement size, nesting, number of errors): see `limits.ts`. */
  limit: 'E-limit',
  /** A byte range outside its buffer (`A[0] + 9000` into 8192 bytes). */
  bufferRange: 'E-buffer-range',
  /** A bad `alias=` of a buffer declaration. */
  alias: 'E-alias',
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

/** Most columns of a source line a diagnostic echoes: longer lines are cut around the caret. */
export const EXCERPT_COLUMNS = 120;

/** Line `n` (1-based) of `source`, found without splitting the whole text; undefined past the end. */
export function lineAt(source: string, n: number): string | undefined {
  if (!(n >= 1)) return undefined;
  const nl = /\r\n|\r|\n/g;
  let start = 0;
  for (let line = 1; line < n; line++) {
    const m = nl.exec(source);
    if (!m) return undefined;
    start = m.index + m[0].length;
  }
  nl.lastIndex = start;
  const m = nl.exec(source);
  return source.slice(start, m ? m.index : source.length);
}

/**
 * The two lines a diagnostic shows for a span of `text` (1-based `col`, `endCol` one past the
 * end): the source line and the caret line under it, which repeats the line's tabs so that it lines
 * up in a terminal. A line longer than {@link EXCERPT_COLUMNS} is cut to that many columns around
 * the caret, with `…` where text is left out. The caret line is as wide as the terminal shows the
 * text before the caret ({@link displayPad}: a combining accent takes no column, a CJK character
 * two); {@link excerptColumn} gives the caret's place in the shown line.
 */
export function caretExcerpt(text: string, col: number, endCol: number): [string, string] {
  const start = Math.max(1, Math.min(col, text.length + 1));
  const end = Math.max(start + 1, Math.min(endCol, Math.max(text.length + 1, start + 1)));
  let from = 0;
  let to = text.length;
  if (text.length > EXCERPT_COLUMNS) {
    from = Math.max(0, Math.min(start - 1 - 40, text.length - EXCERPT_COLUMNS));
    to = Math.min(text.length, from + EXCERPT_COLUMNS);
  }
  const lead = from > 0 ? '…' : '';
  const shown = `${lead}${text.slice(from, to)}${to < text.length ? '…' : ''}`;
  let pad = (lead ? ' ' : '') + displayPad(text.slice(from, start - 1));
  // A span that starts with a combining accent points at the character it is drawn on.
  const first = text.codePointAt(start - 1);
  if (first !== undefined && columnsOf(first) === 0 && pad.endsWith(' ')) pad = pad.slice(0, -1);
  // The span's own width, at least the caret's column: a span of one combining accent is one caret.
  const tildes = Math.max(0, displayPad(text.slice(start - 1, Math.min(end - 1, to))).length - 1);
  return [shown, `${pad}^${'~'.repeat(tildes)}`];
}

/**
 * The column (1-based, in UTF-16 units) of the line {@link caretExcerpt} shows for `text` at which
 * its caret points at `col`: the same column unless the line was cut before it. `alignCaret`
 * (src/cli/terminal.ts) takes it.
 */
export function excerptColumn(text: string, col: number): number {
  const start = Math.max(1, Math.min(col, text.length + 1));
  if (text.length <= EXCERPT_COLUMNS) return start;
  const from = Math.max(0, Math.min(start - 1 - 40, text.length - EXCERPT_COLUMNS));
  return (from > 0 ? 1 : 0) + start - from;
}

/** Combining marks and zero-width format characters: no column of their own in a terminal. */
const ZERO_WIDTH = /^[\p{Mn}\p{Me}\p{Cf}]$/u;

/**
 * Columns a terminal gives the code point `cp`: 0 for a combining mark or a zero-width format
 * character (U+0301, U+200B), 2 for an East Asian wide or fullwidth character or an emoji, else 1.
 */
export function columnsOf(cp: number): number {
  if (cp < 0x300) return 1;
  if (ZERO_WIDTH.test(String.fromCodePoint(cp))) return 0;
  const wide = (cp >= 0x1100 && cp <= 0x115f) || (cp >= 0x2e80 && cp <= 0xa4cf && cp !== 0x303f) || (cp >= 0xac00 && cp <= 0xd7a3) || (cp >= 0xf900 && cp <= 0xfaff)
    || (cp >= 0xfe30 && cp <= 0xfe4f) || (cp >= 0xff00 && cp <= 0xff60) || (cp >= 0xffe0 && cp <= 0xffe6) || (cp >= 0x1f300 && cp <= 0x1f64f) || (cp >= 0x1f900 && cp <= 0x1f9ff) || (cp >= 0x20000 && cp <= 0x3fffd);
  return wide ? 2 : 1;
}

/** Blanks as wide as a terminal shows `text` (tabs kept as tabs), to put a caret under its end. */
export function displayPad(text: string): string {
  let out = '';
  for (const ch of text) out += ch === '\t' ? '\t' : ' '.repeat(columnsOf(ch.codePointAt(0)!));
  return out;
}

/** Shortens every word longer than 60 characters (a giant name or literal quoted in a message). */
function clip(text: string): string {
  return text.replace(/\S{61,}/g, (w) => `${w.slice(0, 40)}…`);
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
 * The source line is cut around the caret when it is long (`caretExcerpt`).
 */
export function formatDiagnostic(d: SketchDiagnostic, source: string): string {
  if (!isRecord(d, ['file', 'line', 'col', 'code', 'message'])) argError('formatDiagnostic', 'diagnostic', 'a SketchDiagnostic (from parseSketch)', d);
  stringArg('formatDiagnostic', 'source', source);
  const out = [`${d.file}:${d.line}:${d.col}: error[${d.code}]: ${clip(d.message)}`];
  const text = lineAt(source, d.line);
  if (text !== undefined) {
    const [line, caret] = caretExcerpt(text, d.col, d.endCol);
    out.push(`  ${line}`, `  ${caret}`);
  }
  if (d.hint) out.push(`hint: ${clip(d.hint)}`);
  return out.join('\n');
}

export { didYouMean, editDistance } from '../kernel/nearest.js';
