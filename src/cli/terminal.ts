/**
 * Terminal-safe output: the single boundary through which the CLI writes text. A kernel name,
 * description, source line or message comes from a file someone else may have written; printed
 * raw, an ESC or BEL in it could clear the screen, set the window title or hide text, and a bidi
 * override (U+202E) could make a line read differently from what it says.
 *
 * {@link safeIO} wraps the CLI's {@link IO}: everything passed to `out` and `err` goes through
 * {@link terminalText}, which writes these characters as visible escapes, all of one form,
 * `\uHHHH` (JSON's and JavaScript's: `\u001b`, `\u0000`, `\u202e`):
 * - C0 controls except `\n` and `\t` (ESC, BEL, `\r`, NUL, …), DEL and the C1 controls
 *   (U+0080..U+009F);
 * - the bidi and format controls U+061C, U+200E, U+200F, U+202A..U+202E, U+2066..U+2069;
 * - U+FFFD, what a byte that is not UTF-8 reads as (src/cli/input.ts): a binary file's line shows
 *   `\ufffd` beside its `\u0000`s rather than a glyph the terminal may draw in any way.
 * JSON output passes the same boundary and stays exact JSON meaning the same value: `JSON.stringify`
 * already writes every C0 control inside a string as `\u00HH`, and the other escapes are JSON's own.
 *
 * The CLI's own colors cannot be written as ESC sequences (they would be escaped too): its
 * {@link Paint} ({@link markPaint}) writes markers that carry a random per-process key, which
 * {@link terminalText} turns into SGR sequences. Text from a file cannot know the key, so it cannot
 * produce a color, let alone another escape sequence. The key is drawn when the first marker is
 * written (output without colors never needs one); until then no text holds a marker, and a NUL in
 * it is escaped like any other control.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import type { Paint } from '../report/text.js';
import { lazyBuiltin } from './builtins.js';
import { displayPad } from '../lang/diagnostics.js';

/** Characters {@link terminalText} escapes (see the module comment). */
const UNSAFE = '[\\u0000-\\u0008\\u000b-\\u001f\\u007f-\\u009f\\u061c\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069\\ufffd]';

const crypto = lazyBuiltin<typeof import('node:crypto')>('node:crypto');

/** 8 random bytes from the system's generator (node:crypto, ~5 ms to load, where /dev/urandom is missing). */
function randomKey(): string {
  const buf = Buffer.alloc(8);
  try {
    const fd = openSync('/dev/urandom', 'r');
    try {
      if (readSync(fd, buf, 0, 8, null) === 8) return buf.toString('hex');
    } finally {
      closeSync(fd);
    }
  } catch {
    // no /dev/urandom (Windows)
  }
  return crypto().randomBytes(8).toString('hex');
}

/** The per-process marker prefix (NUL and the key), drawn on first use. */
let MARK: string | undefined;
/** Controls alone (before any marker exists), then markers or controls. */
let PATTERN = new RegExp(UNSAFE, 'g');

function marker(): string {
  if (MARK === undefined) {
    MARK = `\u0000${randomKey()}`;
    PATTERN = new RegExp(`${MARK}(\\d{1,2})m|${UNSAFE}`, 'g');
  }
  return MARK;
}

const hex = (c: number, digits: number) => c.toString(16).padStart(digits, '0');

/**
 * `s` with every control, bidi and format character (and U+FFFD) written as a visible escape
 * (`\u001b`, `\u202e`), and the color markers of {@link markPaint} turned into SGR sequences. `\n` and `\t`
 * stay as they are.
 */
export function terminalText(s: string): string {
  // Before the first marker the pattern has no group: the second argument is then the offset.
  return s.replace(PATTERN, (m: string, sgr: unknown) => {
    if (typeof sgr === 'string') return `\u001b[${sgr}m`;
    return `\\u${hex(m.charCodeAt(0), 4)}`;
  });
}

/** `s` with only the escapes of {@link terminalText} (markers, too, are escaped): for text without colors. */
export function escapeControls(s: string): string {
  return s.replace(new RegExp(UNSAFE, 'g'), (m) => `\\u${hex(m.charCodeAt(0), 4)}`);
}

const mark = (code: number) => `${marker()}${code}m`;

/** A color as picocolors writes it (nested closes reopen the outer color), with markers for SGR codes. */
function color(open: number, close: number): (s: string) => string {
  return (s) => {
    const o = mark(open);
    const c = mark(close);
    return `${o}${s.split(c).join(c + o)}${c}`;
  };
}

/** The CLI's colors as markers that only {@link terminalText} turns into SGR sequences. */
export const markPaint: Paint = {
  bold: color(1, 22),
  dim: color(2, 22),
  red: color(31, 39),
  green: color(32, 39),
  yellow: color(33, 39),
  cyan: color(36, 39),
};

/** What {@link safeIO} wraps: text sinks and whether colors are on. */
export interface TextIO {
  out(s: string): void;
  err(s: string): void;
  color: boolean;
}

/**
 * `io` with `out` and `err` passed through {@link terminalText}: the one boundary of the CLI's
 * text output. Other members are kept.
 */
export function safeIO<T extends TextIO>(io: T): T {
  return { ...io, out: (s: string) => io.out(terminalText(s)), err: (s: string) => io.err(terminalText(s)) };
}

/**
 * The boundary prints a control or bidi character of a quoted source line as an escape several
 * columns wide (`\u001b`); this widens the indentation of the caret row under the row `  QUOTED` of
 * `text` to match, so the caret still points at column `col` (1-based) of `quoted`. Text without
 * such characters, or without that row and a caret row after it, is returned unchanged.
 */
export function alignCaret(text: string, quoted: string | undefined, col: number): string {
  if (quoted === undefined || escapeControls(quoted) === quoted) return text;
  const rows = text.split('\n');
  const at = rows.indexOf(`  ${quoted}`);
  const caret = at >= 0 ? /^\s*(\^~*)$/.exec(rows[at + 1] ?? '') : null;
  if (!caret) return text;
  // An escaped character is as wide as its escape; any other as the terminal shows it (displayPad).
  const pad = [...quoted.slice(0, Math.max(0, col - 1))].map((c) => (escapeControls(c) !== c ? ' '.repeat(escapeControls(c).length) : displayPad(c))).join('');
  rows[at + 1] = `  ${pad}${caret[1]}`;
  return rows.join('\n');
}
