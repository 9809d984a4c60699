/**
 * The parser's position in the token arrays, its token tests, and the one syntax error it raises
 * (caught by `parsePtx`, which turns it into a diagnostic: the parser never throws to its caller).
 */
import type { SrcPos } from './ast.js';
import { Tok, type Tokens } from './lexer.js';

/** Most nested `{ }` scopes and parenthesized expressions: deeper input is refused, not recursed. */
export const MAX_DEPTH = 200;

/** A syntax error at token `at` (internal: `parsePtx` reports it as a diagnostic). */
export class SyntaxFail extends Error {
  /**
   * `after`: the error is just past token `at` (a missing `;` reported at the end of its line,
   * not at the next line's first token).
   */
  constructor(message: string, readonly at: number, readonly hint = '', readonly code: 'E-ptx-syntax' | 'E-ptx-limit' | 'E-ptx-header' = 'E-ptx-syntax', readonly after = false) {
    super(message);
  }
}

/** The shape of a token in a message: `'foo'`, `a string`, `the end of the file`. */
export function describe(t: Tokens, i: number): string {
  const k = t.kind[i];
  if (k === Tok.Eof) return 'the end of the file';
  if (k === Tok.Str) return 'a string';
  const s = t.text(i);
  return `'${s.length > 40 ? `${s.slice(0, 40)}…` : s}'`;
}

/** A cursor over the tokens of one file. */
export class Cursor {
  /** The current token. */
  p = 0;
  /** Nesting depth of scopes and parentheses. */
  depth = 0;

  constructor(readonly t: Tokens, readonly file: string) {}

  /** The kind of the token `ahead` tokens on. */
  kind(ahead = 0): number {
    return this.t.kind[this.p + ahead] ?? Tok.Eof;
  }

  /** The text of the token `ahead` tokens on. */
  text(ahead = 0): string {
    return this.t.text(this.p + ahead);
  }

  /** Whether the token `ahead` tokens on is the punctuation `ch`. */
  punct(ch: string, ahead = 0): boolean {
    const i = this.p + ahead;
    return this.t.kind[i] === Tok.Punct && this.t.src.charCodeAt(this.t.start[i]!) === ch.charCodeAt(0);
  }

  /** Whether the token `ahead` tokens on is the dot word `w`. */
  dot(w: string, ahead = 0): boolean {
    const i = this.p + ahead;
    return this.t.kind[i] === Tok.Dot && this.t.end[i]! - this.t.start[i]! === w.length && this.t.src.startsWith(w, this.t.start[i]!);
  }

  /** Whether token `i` starts where token `i - 1` ends (no space between: `%tid.x`, `ld.param`). */
  adjacent(i = this.p): boolean {
    return i > 0 && this.t.start[i] === this.t.end[i - 1];
  }

  /** The position of token `i` (default: the current one). */
  pos(i = this.p): SrcPos {
    return { file: this.file, line: this.t.line[i]!, col: this.t.col[i]! };
  }

  /** Warnings of the header's values (`.version`, `.target`, a directive's value) ptxas accepts: message, hint, token. */
  readonly warnings: { message: string; hint: string; at: number }[] = [];

  /** Throws an error of a header value (`E-ptx-header`) at token `at` (default: the current one). */
  headerError(message: string, hint = '', at = this.p): never {
    throw new SyntaxFail(message, at, hint, 'E-ptx-header');
  }

  /** Records a warning of a header value at token `at` (default: the current one). */
  warn(message: string, hint = '', at = this.p): void {
    this.warnings.push({ message, hint, at });
  }

  /** Throws the syntax error "expected `what`, found …" at the current token. */
  fail(what: string, hint = ''): never {
    throw new SyntaxFail(`expected ${what}, found ${describe(this.t, this.p)}`, this.p, hint);
  }

  /**
   * Fails with "expected `what`" for a missing terminator: when the current token starts a later
   * line than the previous one, the error is placed just after the previous token (where the `;`
   * belongs) and names the line of what was found.
   */
  failMissing(what: string): never {
    const t = this.t, p = this.p;
    if (p > 0 && t.line[p]! > t.line[p - 1]!) {
      throw new SyntaxFail(`expected ${what}, found ${describe(t, p)} on line ${t.line[p]}`, p - 1, '', 'E-ptx-syntax', true);
    }
    return this.fail(what);
  }

  /** Consumes the punctuation `ch` or fails with "expected `what`". */
  eat(ch: string, what = `'${ch}'`): void {
    if (!this.punct(ch)) {
      // A missing terminator or closer belongs at the end of its line, not at the next line's start.
      if (ch === ';' || ch === ']' || ch === ')' || ch === '}') this.failMissing(what);
      this.fail(what);
    }
    this.p++;
  }

  /** Consumes the punctuation `ch` if it is next; says whether it was. */
  accept(ch: string): boolean {
    if (!this.punct(ch)) return false;
    this.p++;
    return true;
  }

  /** Consumes an identifier and returns its text, or fails with "expected `what`". */
  ident(what: string): string {
    if (this.kind() !== Tok.Ident) this.fail(what);
    return this.t.text(this.p++);
  }

  /** Consumes an integer constant and returns it as a number (exact up to 2^53), or fails. */
  int(what: string): number {
    let neg = false;
    if (this.punct('-') && this.kind(1) === Tok.Int) {
      neg = true;
      this.p++;
    }
    if (this.kind() !== Tok.Int) this.fail(what);
    const s = this.t.text(this.p++);
    const v = Number(parseIntText(s));
    return neg ? -v : v;
  }

  /** Consumes a string constant and returns its contents (escapes kept as written). */
  str(what: string): string {
    if (this.kind() !== Tok.Str) this.fail(what);
    const s = this.t.text(this.p++);
    return s.slice(1, -1);
  }

  /** Enters one level of nesting (a scope or parenthesis), failing past {@link MAX_DEPTH}. */
  enter(): void {
    if (++this.depth > MAX_DEPTH) throw new SyntaxFail(`nesting deeper than ${MAX_DEPTH} levels`, this.p, 'PTX from nvcc nests a few levels; this input is not compiler output', 'E-ptx-limit');
  }

  /** Leaves one level of nesting. */
  leave(): void {
    this.depth--;
  }
}

/** An integer token's text as a bigint (`0x1F`, `017` octal, `0b101`, a `U` suffix). */
export function parseIntText(text: string): bigint {
  // Short decimals (nearly every immediate) go through a double: exact below 2^53, and faster.
  if (text.length <= 15 && (text.charCodeAt(0) !== 48 || text.length === 1) && DECIMAL.test(text)) return BigInt(+text);
  const t = text.endsWith('U') || text.endsWith('u') ? text.slice(0, -1) : text;
  if (t.length > 1 && t[0] === '0' && t[1]! >= '0' && t[1]! <= '9') return BigInt(`0o${t.slice(1)}`);
  return BigInt(t);
}

const DECIMAL = /^[0-9]+$/;
