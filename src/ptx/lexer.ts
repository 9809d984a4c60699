/**
 * The PTX lexer: one pass over the text with character codes, tokens kept as parallel typed
 * arrays (kind, start, end, line, column) so that a 100,000-line module (debug sections of
 * byte lists) costs no object per token. Token text is sliced from the source on demand.
 *
 * Token forms follow the PTX ISA's lexical rules (section "Syntax", "Identifiers", "Constants"):
 * identifiers `[A-Za-z][A-Za-z0-9_$]*` or `[_$%][A-Za-z0-9_$]+` (so `%r1`, `$L__BB0_1`, `_`);
 * directive and modifier words `.name`, with `::` parts (`.shared::cluster`, `.cta_group::2`) and
 * leading digits (`.32x32b`); integers (decimal, `0x` hex, `0b` binary, leading-`0` octal, optional
 * `U` suffix); floats (`1.5`, `1e-3`, `0fXXXXXXXX` single, `0dXXXXXXXXXXXXXXXX` double); strings;
 * one-character punctuation. Comments `//` and `/* *\/` are skipped.
 */

/** Token kinds (numbers, kept in a Uint8Array). */
export const Tok = {
  Eof: 0,
  /** An identifier: `mbarrier`, `%r1`, `$L__BB0_1`, `_`. */
  Ident: 1,
  /** A dot word: `.reg`, `.shared::cluster`, `.32x32b`. */
  Dot: 2,
  /** An integer constant. */
  Int: 3,
  /** A float constant (decimal or `0f` / `0d` hex). */
  Float: 4,
  /** A string in double quotes. */
  Str: 5,
  /** One punctuation character. */
  Punct: 6,
} as const;

/** One of the {@link Tok} kinds. */
export type Tok = (typeof Tok)[keyof typeof Tok];

/** A lexical error: where and what. */
export interface LexError {
  message: string;
  line: number;
  col: number;
  endCol: number;
}

/** The tokens of one source text, as parallel arrays indexed by token number. */
export class Tokens {
  count = 0;
  kind: Uint8Array;
  start: Int32Array;
  end: Int32Array;
  line: Int32Array;
  col: Int32Array;

  constructor(readonly src: string) {
    // About one token per 3 characters in compiler output; grown by doubling past that.
    const n = Math.max(1024, Math.ceil(src.length / 3));
    this.kind = new Uint8Array(n);
    this.start = new Int32Array(n);
    this.end = new Int32Array(n);
    this.line = new Int32Array(n);
    this.col = new Int32Array(n);
  }

  /** Appends one token (grows the arrays by doubling). */
  push(kind: Tok, start: number, end: number, line: number, col: number): void {
    if (this.count === this.kind.length) this.grow();
    const i = this.count++;
    this.kind[i] = kind;
    this.start[i] = start;
    this.end[i] = end;
    this.line[i] = line;
    this.col[i] = col;
  }

  private grow(): void {
    const n = this.kind.length * 2;
    const k = new Uint8Array(n); k.set(this.kind); this.kind = k;
    const s = new Int32Array(n); s.set(this.start); this.start = s;
    const e = new Int32Array(n); e.set(this.end); this.end = e;
    const l = new Int32Array(n); l.set(this.line); this.line = l;
    const c = new Int32Array(n); c.set(this.col); this.col = c;
  }

  /** The source text of token `i`. */
  text(i: number): string {
    return this.src.slice(this.start[i]!, this.end[i]!);
  }
}

/** Character classes, by code (ASCII only; other characters are not PTX). */
const IDENT_START = 1, IDENT_PART = 2, DIGIT = 4, HEX = 8, SPACE = 16;
const CLASS = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  const ch = String.fromCharCode(c);
  if (/[A-Za-z]/.test(ch)) CLASS[c]! |= IDENT_START | IDENT_PART;
  if (/[0-9]/.test(ch)) CLASS[c]! |= IDENT_PART | DIGIT;
  if (ch === '_' || ch === '$') CLASS[c]! |= IDENT_PART;
  if (/[0-9A-Fa-f]/.test(ch)) CLASS[c]! |= HEX;
  if (ch === ' ' || ch === '\t' || ch === '\f' || ch === '\v') CLASS[c]! |= SPACE;
}
const PUNCT = new Set(',;:[](){}<>@!|+-*/%=~&^?'.split('').map((c) => c.charCodeAt(0)));

function is(c: number, cls: number): boolean {
  return c < 128 && (CLASS[c]! & cls) !== 0;
}

/** What the character at `c` looks like in a message. */
function shown(c: number): string {
  // A control as the CLI's escapes write it (src/cli/terminal.ts), and its code point.
  if (c < 32 || (c >= 127 && c < 160)) return `'\\u${c.toString(16).padStart(4, '0')}' (U+${c.toString(16).toUpperCase().padStart(4, '0')}${c === 0 ? ': a binary file, not PTX text' : ''})`;
  const ch = String.fromCodePoint(c);
  return INVISIBLE.test(ch) ? `'${ch}' (U+${c.toString(16).toUpperCase().padStart(4, '0')})` : `'${ch}'`;
}

/**
 * Characters that show as nothing or change their neighbour in a terminal (format, combining,
 * odd spaces, private use, unassigned): an error quoting one names its code point too (the sketch
 * lexer's rule, src/lang/lexer.ts; this layer imports nothing).
 */
const INVISIBLE = /[\p{Cf}\p{Mn}\p{Me}\p{Zs}\p{Zl}\p{Zp}\p{Co}\p{Cn}]/u;

/**
 * Splits `src` into tokens, or returns the first lexical error (an unknown character, an
 * unterminated string or comment, a malformed number) with its 1-based line and column.
 */
export function lex(src: string): Tokens | LexError {
  const t = new Tokens(src);
  const n = src.length;
  // A byte-order mark is not PTX but editors write one: skipped (columns still count it).
  let i = src.charCodeAt(0) === 0xfeff ? 1 : 0, line = 1, lineStart = 0;
  const err = (message: string, at: number, len = 1): LexError => ({ message, line, col: at - lineStart + 1, endCol: at - lineStart + 1 + len });
  while (i < n) {
    const c = src.charCodeAt(i);
    if (c === 10) { i++; line++; lineStart = i; continue; }
    if (c === 13) { i++; if (src.charCodeAt(i) === 10) i++; line++; lineStart = i; continue; }
    if (is(c, SPACE)) { i++; continue; }
    const start = i, col = i - lineStart + 1;
    if (c === 47 /* / */ && src.charCodeAt(i + 1) === 47) {
      while (i < n && src.charCodeAt(i) !== 10 && src.charCodeAt(i) !== 13) i++;
      continue;
    }
    if (c === 47 && src.charCodeAt(i + 1) === 42 /* * */) {
      const sl = line, sc = col;
      i += 2;
      for (;;) {
        if (i >= n) return { message: 'unterminated comment: `/*` without `*/`', line: sl, col: sc, endCol: sc + 2 };
        const d = src.charCodeAt(i);
        if (d === 42 && src.charCodeAt(i + 1) === 47) { i += 2; break; }
        if (d === 10 || (d === 13 && src.charCodeAt(i + 1) !== 10)) { line++; lineStart = i + 1; }
        i++;
      }
      continue;
    }
    if (is(c, IDENT_START) || ((c === 95 || c === 36 || c === 37) /* _ $ % */ && (c !== 37 || is(src.charCodeAt(i + 1), IDENT_PART)))) {
      i++;
      while (i < n && is(src.charCodeAt(i), IDENT_PART)) i++;
      t.push(Tok.Ident, start, i, line, col);
      continue;
    }
    if (c === 46 /* . */ && is(src.charCodeAt(i + 1), IDENT_PART)) {
      i++;
      while (i < n && is(src.charCodeAt(i), IDENT_PART)) i++;
      // `::` parts: `.shared::cluster`, `.multicast::cluster::all`, `.cta_group::2`
      while (src.charCodeAt(i) === 58 && src.charCodeAt(i + 1) === 58 && is(src.charCodeAt(i + 2), IDENT_PART)) {
        i += 2;
        while (i < n && is(src.charCodeAt(i), IDENT_PART)) i++;
      }
      t.push(Tok.Dot, start, i, line, col);
      continue;
    }
    if (is(c, DIGIT)) {
      const r = lexNumber(src, i);
      if (typeof r === 'string') return err(r, start, Math.max(1, numberEnd(src, i) - start));
      t.push(r.float ? Tok.Float : Tok.Int, start, r.end, line, col);
      i = r.end;
      continue;
    }
    if (c === 34 /* " */) {
      i++;
      for (;;) {
        const d = src.charCodeAt(i);
        if (i >= n || d === 10 || d === 13) return err('unterminated string: a `"` is missing before the end of the line', start, i - start);
        if (d === 92 /* \ */) { i += 2; continue; }
        i++;
        if (d === 34) break;
      }
      t.push(Tok.Str, start, i, line, col);
      continue;
    }
    if (PUNCT.has(c)) {
      i++;
      t.push(Tok.Punct, start, i, line, col);
      continue;
    }
    const cp = src.codePointAt(i)!;
    return err(`unexpected character ${shown(cp)}`, start, cp > 0xffff ? 2 : 1);
  }
  t.push(Tok.Eof, n, n, line, n - lineStart + 1);
  return t;
}

/** The end of the run of number-like characters at `i` (for the span of a malformed number). */
function numberEnd(src: string, i: number): number {
  while (i < src.length && (is(src.charCodeAt(i), IDENT_PART) || src.charCodeAt(i) === 46)) i++;
  return i;
}

/** Scans a number at `i` (a digit): its end and whether it is a float, or an error message. */
function lexNumber(src: string, i: number): { end: number; float: boolean } | string {
  const c1 = src.charCodeAt(i + 1) | 0x20; // lower case
  if (src.charCodeAt(i) === 48 && (c1 === 0x66 /* f */ || c1 === 0x64 /* d */)) {
    const digits = c1 === 0x66 ? 8 : 16;
    let j = i + 2;
    while (is(src.charCodeAt(j), HEX)) j++;
    if (j - i - 2 !== digits || is(src.charCodeAt(j), IDENT_PART)) {
      return `malformed float constant '${src.slice(i, numberEnd(src, i))}': 0${c1 === 0x66 ? 'f' : 'd'} takes exactly ${digits} hex digits`;
    }
    return { end: j, float: true };
  }
  let j = i;
  if (src.charCodeAt(i) === 48 && (c1 === 0x78 /* x */ || c1 === 0x62 /* b */)) {
    j = i + 2;
    const hex = c1 === 0x78;
    while (hex ? is(src.charCodeAt(j), HEX) : src.charCodeAt(j) === 48 || src.charCodeAt(j) === 49) j++;
    if (j === i + 2) return `malformed integer '${src.slice(i, numberEnd(src, i))}': no digits after 0${hex ? 'x' : 'b'}`;
  } else {
    while (is(src.charCodeAt(j), DIGIT)) j++;
    let float = false;
    if (src.charCodeAt(j) === 46 && is(src.charCodeAt(j + 1), DIGIT)) {
      float = true;
      j++;
      while (is(src.charCodeAt(j), DIGIT)) j++;
    }
    if ((src.charCodeAt(j) | 0x20) === 0x65 /* e */) {
      let k = j + 1;
      if (src.charCodeAt(k) === 43 || src.charCodeAt(k) === 45) k++;
      if (is(src.charCodeAt(k), DIGIT)) {
        float = true;
        j = k;
        while (is(src.charCodeAt(j), DIGIT)) j++;
      }
    }
    if (float) {
      if (is(src.charCodeAt(j), IDENT_PART)) return `malformed float constant '${src.slice(i, numberEnd(src, i))}'`;
      return { end: j, float: true };
    }
    if (src.charCodeAt(i) === 48 && j - i > 1 && /[89]/.test(src.slice(i, j))) return `malformed octal integer '${src.slice(i, j)}'`;
  }
  if ((src.charCodeAt(j) | 0x20) === 0x75 /* U */) j++;
  if (is(src.charCodeAt(j), IDENT_PART)) return `malformed integer '${src.slice(i, numberEnd(src, i))}'`;
  return { end: j, float: false };
}

/** The value of a float token's text: `0f` bits as a float32, `0d` bits as a float64, or decimal. */
export function floatValue(text: string): number {
  const p = text[1];
  if (text[0] === '0' && (p === 'f' || p === 'F')) {
    const dv = new DataView(new ArrayBuffer(4));
    dv.setUint32(0, parseInt(text.slice(2), 16));
    return dv.getFloat32(0);
  }
  if (text[0] === '0' && (p === 'd' || p === 'D')) {
    const dv = new DataView(new ArrayBuffer(8));
    dv.setBigUint64(0, BigInt(`0x${text.slice(2)}`));
    return dv.getFloat64(0);
  }
  return Number(text);
}
