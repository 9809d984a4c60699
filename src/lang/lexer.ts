/**
 * Lexer of the sketch language: a Chevrotain lexer for the tokens, then a layout step that turns
 * physical lines into logical lines with NEWLINE, INDENT and DEDENT tokens (Python's rules):
 *
 * - blank lines and comment-only lines produce no tokens at all, whatever their indentation;
 * - a logical line ends at a line break, except after a `,` or when the line ends inside brackets
 *   after `(`, `[` or a binary operator (implicit continuation);
 * - after a line that ends with `:`, the next logical line must be indented deeper (INDENT);
 * - a line indented less than its predecessor closes blocks (one DEDENT each) and must land on
 *   the indentation of an enclosing block;
 * - indentation is either all spaces or all tabs, within a line and across the file.
 *
 * Errors become diagnostics; the layout recovers so that the parser sees a well-formed stream.
 * The input limits (`limits.ts`) are checked here, before the parser runs: a crossed limit is one
 * `E-limit` diagnostic and an empty token stream (`fatal`). The token types are in `tokens.ts`,
 * the layout step in `layout.ts`.
 */
import { Lexer, type ILexingError, type IToken } from 'chevrotain';
import { SKETCH_CODES, type SketchDiagnostic } from './diagnostics.js';
import { checkSize, LIMITS, type LimitHit } from './limits.js';
import { Layout } from './layout.js';
import { ALL_TOKENS, Newline } from './tokens.js';

const lexer = new Lexer(ALL_TOKENS.filter((t) => t.PATTERN !== Lexer.NA), {
  positionTracking: 'full',
  ensureOptimizations: false,
  skipValidations: true,
  // No first-character optimization: building its tables costs ~40 ms at every start, more than
  // lexing any sketch without them.
  safeMode: true,
});

/** Characters that show as nothing or change their neighbour (format, combining, odd spaces, unassigned). */
const INVISIBLE = /[\p{Cf}\p{Mn}\p{Me}\p{Zs}\p{Zl}\p{Zp}\p{Co}\p{Cn}]/u;

/** ` (U+200B)`: the code points of `s` when one of them is invisible in a terminal, else ''. */
function codePoints(s: string): string {
  const cs = [...s];
  if (!cs.some((c) => INVISIBLE.test(c))) return '';
  return ` (${cs.map((c) => `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`).join(' ')})`;
}

/**
 * The error for a non-ASCII character at `offset` that belongs to a name (a letter or digit of
 * another script, or a mark on a name's character, e.g. `ö` of `cönsümer`), else undefined: the
 * name, the character by code point, what a name may contain, and the ASCII spelling when taking
 * the accents off gives a valid name. `width`: the character's length in UTF-16 columns.
 */
function nameCharError(source: string, offset: number): { message: string; hint: string; width: number } | undefined {
  const ch = String.fromCodePoint(source.codePointAt(offset)!);
  const before = source.slice(Math.max(0, offset - 1), offset);
  const isName = /[\p{L}\p{N}]/u.test(ch) || (/\p{M}/u.test(ch) && /[A-Za-z0-9_]/.test(before));
  if (!isName || ch.charCodeAt(0) < 0x80) return undefined;
  const lineStart = Math.max(source.lastIndexOf('\n', offset - 1), source.lastIndexOf('\r', offset - 1)) + 1;
  const left = /[\p{L}\p{N}\p{M}_]*$/u.exec(source.slice(lineStart, offset))![0];
  const right = /^[\p{L}\p{N}\p{M}_]*/u.exec(source.slice(offset, offset + 200))![0];
  const name = left + right;
  const cp = `U+${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
  const ascii = name.normalize('NFD').replace(/\p{M}/gu, '');
  const suggest = /^[A-Za-z_][A-Za-z0-9_]*$/.test(ascii) ? `; did you mean '${ascii}'?` : '';
  return {
    message: `${cp} '${ch}' is not allowed in a name ('${name}')`,
    hint: `a name is ASCII letters, digits and _, and starts with a letter or _${suggest}`,
    width: ch.length,
  };
}

/** Result of lexing: the token stream for the parser and the lexical/layout diagnostics. */
export interface LexResult {
  tokens: IToken[];
  diagnostics: SketchDiagnostic[];
  /** Position just after the last character (for errors at the end of the file). */
  end: { line: number; col: number; offset: number };
  /** Per line: the column one past its last token (comments excluded). */
  lineEnd: Map<number, number>;
  /** An input limit was crossed: the diagnostics say where; nothing should be parsed. */
  fatal?: boolean;
  /** More lexical errors than the limit: the rest of the file was not lexed; nothing should be parsed. */
  stopped?: boolean;
}

/** Characters the lexer takes at a time (then up to the end of that line). */
const CHUNK = 1 << 16;

/**
 * Chevrotain's `tokenize`, a chunk of whole lines at a time (no token spans a line break), stopping
 * once there are more errors than {@link LIMITS}.errors: the lexer's error recovery is slow per
 * bad character, and a file full of them must not take seconds. Positions are those of `source`.
 */
function tokenizeBounded(source: string): { tokens: IToken[]; errors: ILexingError[]; stopped: boolean } {
  const tokens: IToken[] = [];
  const errors: ILexingError[] = [];
  let offset = 0;
  let lines = 0;
  while (offset < source.length || offset === 0) {
    let end = Math.min(source.length, offset + CHUNK);
    if (end < source.length) {
      const nl = source.indexOf('\n', end - 1);
      end = nl < 0 ? source.length : nl + 1;
    }
    const part = offset === 0 && end === source.length ? source : source.slice(offset, end);
    const r = lexer.tokenize(part);
    for (const t of r.tokens) {
      if (lines > 0 || offset > 0) {
        t.startOffset += offset;
        if (t.endOffset !== undefined) t.endOffset += offset;
        if (t.startLine !== undefined) t.startLine += lines;
        if (t.endLine !== undefined) t.endLine += lines;
      }
      tokens.push(t);
    }
    for (const e of r.errors) errors.push({ ...e, offset: e.offset + offset, line: e.line === undefined ? undefined : e.line + lines });
    if (errors.length > LIMITS.errors) return { tokens, errors, stopped: end < source.length };
    if (end >= source.length) break;
    lines += part.match(/\r\n|\r|\n/g)?.length ?? 0;
    offset = end;
  }
  return { tokens, errors, stopped: false };
}

/** Position just after the last character of `source` (1-based line and column). */
function endPosition(source: string): { line: number; col: number; offset: number } {
  const lines = source.split(/\r\n|\r|\n/);
  return { line: lines.length, col: lines[lines.length - 1]!.length + 1, offset: source.length };
}

/**
 * The first NUL character (U+0000) of `source` as one diagnostic's fields, or undefined. A text
 * file never holds one: a file that does is binary (an executable, an object file, a cubin), and
 * lexing it would print a screen of unexpected characters instead of saying so once.
 */
export function nulCharacter(source: string): Omit<SketchDiagnostic, 'code' | 'file'> | undefined {
  const at = source.indexOf('\0');
  if (at < 0) return undefined;
  const before = source.slice(0, at);
  const breaks = before.match(/\r\n|\r|\n/g)?.length ?? 0;
  const lineStart = Math.max(before.lastIndexOf('\n'), before.lastIndexOf('\r')) + 1;
  const col = at - lineStart + 1;
  return {
    message: 'a NUL character (U+0000): this is a binary file, not the text of a sketch',
    hint: 'a sketch is a UTF-8 text file (docs/LANGUAGE.md); PTX (nvcc -ptx output) is read from a file named *.ptx',
    line: breaks + 1,
    col,
    endCol: col + 1,
  };
}

/** Lexes `source` and applies the layout rules. Never throws. */
export function lex(source: string, file: string): LexResult {
  const diagnostics: SketchDiagnostic[] = [];
  const diag = (code: SketchDiagnostic['code'], message: string, hint: string, line: number, col: number, endCol: number) => {
    // One beyond the limit, so that parseSketch can tell that some were left out.
    if (diagnostics.length <= LIMITS.errors) diagnostics.push({ code, message, hint, file, line, col, endCol: Math.max(endCol, col + 1) });
  };
  const fatal = (h: LimitHit): LexResult => {
    diagnostics.push({ code: SKETCH_CODES.limit, message: h.message, hint: h.hint, file, line: h.line, col: h.col, endCol: h.endCol });
    return { tokens: [], diagnostics, end: { line: h.line, col: h.col, offset: 0 }, lineEnd: new Map(), fatal: true };
  };
  const binary = nulCharacter(source);
  if (binary) {
    diagnostics.push({ code: SKETCH_CODES.badChar, file, ...binary });
    return { tokens: [], diagnostics, end: { line: binary.line, col: binary.col, offset: 0 }, lineEnd: new Map(), fatal: true };
  }
  const size = checkSize(source);
  if (size) return fatal(size);
  const res = tokenizeBounded(source);
  for (const e of res.errors) {
    if (diagnostics.length > LIMITS.errors) break;
    const named = nameCharError(source, e.offset);
    if (named) {
      // One error: the rest of the name would be lexed as other names and options, each an error.
      diag(SKETCH_CODES.badChar, named.message, named.hint, e.line ?? 1, e.column ?? 1, (e.column ?? 1) + named.width);
      return { tokens: [], diagnostics, end: endPosition(source), lineEnd: new Map(), fatal: true };
    }
    const ch = source.slice(e.offset, e.offset + e.length);
    const shown = ch.length > 12 ? `${ch.slice(0, 12)}…` : ch;
    diag(
      SKETCH_CODES.badChar,
      `unexpected character${ch.length > 1 ? 's' : ''} ${JSON.stringify(shown)}${codePoints(shown)}`,
      'the sketch language uses ASCII names, numbers and the operators of C; comments start with #',
      e.line ?? 1, e.column ?? 1, (e.column ?? 1) + Math.max(1, e.length),
    );
  }
  const end = endPosition(source);
  if (res.stopped) return { tokens: [], diagnostics, end, lineEnd: new Map(), stopped: true };
  const lineEnd = lineEnds(res.tokens);
  const layout = new Layout(source, diag);
  for (const tok of res.tokens) {
    const hit = layout.push(tok);
    if (hit) return fatal(hit);
  }
  return { tokens: layout.finish(end), diagnostics, end, lineEnd };
}

/** Per line: the column one past its last token (tokens of one line only; comments are skipped by the lexer). */
function lineEnds(tokens: readonly IToken[]): Map<number, number> {
  const lineEnd = new Map<number, number>();
  for (const t of tokens) {
    if (t.tokenType === Newline || t.startLine === undefined || t.endColumn === undefined) continue;
    if (t.endLine !== t.startLine) continue;
    const e = t.endColumn + 1;
    if ((lineEnd.get(t.startLine) ?? 0) < e) lineEnd.set(t.startLine, e);
  }
  return lineEnd;
}
