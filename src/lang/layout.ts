/**
 * The layout step of the sketch lexer: physical lines into logical lines with NEWLINE, INDENT and
 * DEDENT tokens by Python's rules (see lexer.ts): implicit continuation after `,` and inside
 * brackets after `(`, `[` or a binary operator; a block after a line ending with `:`; a dedent
 * landing on an enclosing block's indentation; one indentation character (spaces or tabs) per
 * file. Errors become diagnostics and the stream stays well formed; the block and statement
 * limits (`limits.ts`) are checked on the way.
 */
import { createTokenInstance, type IToken, type TokenType } from 'chevrotain';
import { parseInteger } from '../kernel/arith.js';
import { SKETCH_CODES, type SketchDiagnostic } from './diagnostics.js';
import { LIMITS, StatementLimits, type LimitHit, type NestKind } from './limits.js';
import {
  Amp, AndAnd, BadString, Bang, Caret, Colon, Comma, Dedent, EqEq, Ge, Gt, Ident, Indent, Int, KwAnd, KwElect, KwElif,
  KwElse, KwFor, KwIf, KwNot, KwOr, KwRole, LBracket, Le, LParen, LShift, Lt, Minus, Ne, Newline, OrOr, Percent, Pipe,
  Plus, RBracket, RParen, RShift, Shape, Slash, Star, StringLit, Tilde,
} from './tokens.js';

/** Reports a diagnostic at `line`, columns [col, endCol). */
export type Diag = (code: SketchDiagnostic['code'], message: string, hint: string, line: number, col: number, endCol: number) => void;

/** A position for a synthesized token. */
interface Pos {
  offset: number;
  line: number;
  col: number;
}

/** Keywords that begin a block header: the next line is indented even if the ':' is missing. */
const HEADERS = new Set<TokenType | undefined>([KwRole, KwFor, KwIf, KwElif, KwElse, KwElect]);

/** Tokens after which a line break inside brackets continues the logical line (a `,` continues it anywhere). */
const CONTINUES = new Set<TokenType>([
  LParen, LBracket, Comma, OrOr, AndAnd, LShift, RShift, Le, Ge, EqEq, Ne, Lt, Gt, Plus, Minus, Star, Slash, Percent, Caret,
  Amp, Pipe, KwAnd, KwOr,
]);

/** How a token moves an expression's nesting (`prev`: the token before it on the logical line). */
function nestKind(t: TokenType, prev: TokenType | undefined): NestKind {
  if (t === LParen || t === LBracket) return 'open';
  if (t === RParen || t === RBracket) return 'close';
  if (t === Bang || t === Tilde || t === KwNot) return 'prefix';
  if (t === Minus) return prev === Int || prev === Ident || prev === RParen || prev === RBracket ? 'other' : 'prefix';
  if (t === Int || t === Ident || t === Shape || t === StringLit) return 'operand';
  return 'other';
}

/**
 * The block limits at the first token of a logical line, `level` blocks deep: the nesting depth and
 * the number of `elif` clauses of one `if` (`elifs[level]` counts them).
 */
function blockLimits(level: number, elifs: number[], tok: IToken): LimitHit | undefined {
  const line = tok.startLine ?? 1;
  const col = tok.startColumn ?? 1;
  if (level > LIMITS.blockNesting) {
    return {
      message: `this line is nested deeper than the limit of ${LIMITS.blockNesting} blocks`,
      hint: 'move deeply nested code into its own role or loop, or flatten conditions with and/or',
      line, col, endCol: col + Math.max(1, tok.image.length),
    };
  }
  elifs.length = level + 1;
  if (tok.tokenType !== KwElif) elifs[level] = 0;
  else if ((elifs[level] = (elifs[level] ?? 0) + 1) > LIMITS.elifClauses) {
    return {
      message: `this if statement has more elif clauses than the limit of ${LIMITS.elifClauses}`,
      hint: 'select with arithmetic (e.g. an index computed from the value) or split the chain into nested ifs',
      line, col, endCol: col + tok.image.length,
    };
  }
  return undefined;
}

const synth = (type: TokenType, at: Pos) => createTokenInstance(type, '', at.offset, at.offset, at.line, at.line, at.col, at.col);
const posOf = (t: IToken): Pos => ({ offset: t.startOffset, line: t.startLine ?? 1, col: t.startColumn ?? 1 });

/**
 * The layout of one token stream: {@link push} each token of `source` in order (stop at a crossed
 * limit), then {@link finish} at the end of the file for the parser's stream.
 */
export class Layout {
  private readonly out: IToken[] = [];
  private readonly stack: { width: number; phantom: boolean }[] = [{ width: 0, phantom: false }];
  private readonly limits = new StatementLimits();
  /** Per block level: the elif clauses of the if statement at that level so far. */
  private readonly elifs: number[] = [0];
  /** The previous token of the logical line. */
  private prevType: TokenType | undefined;
  private depth = 0;
  private atLineStart = true;
  private last: IToken | undefined;
  /** The previous logical line ended with ':' (or began a block header). */
  private headerPending = false;
  /** First token of the current logical line. */
  private first: IToken | undefined;
  private style: { ch: string; line: number } | undefined;

  constructor(private readonly source: string, private readonly diag: Diag) {}

  /** Takes the next token; returns the limit it crosses (then nothing more should be pushed). */
  push(tok: IToken): LimitHit | undefined {
    const { diag } = this;
    if (tok.tokenType === BadString) {
      diag(SKETCH_CODES.badChar, 'unterminated string', 'close the string with " on the same line', tok.startLine ?? 1, tok.startColumn ?? 1, (tok.endColumn ?? tok.startColumn ?? 1) + 1);
      tok = createTokenInstance(StringLit, `${tok.image}"`, tok.startOffset, tok.endOffset ?? tok.startOffset, tok.startLine ?? 1, tok.endLine ?? 1, tok.startColumn ?? 1, tok.endColumn ?? 1);
    }
    if (tok.tokenType === Newline) {
      this.newline(tok);
      return undefined;
    }
    if (this.atLineStart) {
      this.atLineStart = false;
      this.first = tok;
      this.indentation(tok);
      const hit = blockLimits(this.stack.length - 1, this.elifs, tok);
      if (hit) return hit;
    }
    if (tok.tokenType === Int) {
      const n = parseInteger(tok.image);
      if ('error' in n) diag(SKETCH_CODES.arith, n.error, 'mbsim computes exactly with integers up to ±(2^53 − 1) = ±9007199254740991', tok.startLine ?? 1, tok.startColumn ?? 1, (tok.startColumn ?? 1) + tok.image.length);
    }
    const hit = this.limits.token(nestKind(tok.tokenType, this.prevType), tok.startLine ?? 1, tok.startColumn ?? 1, tok.image.length);
    if (hit) return hit;
    this.prevType = tok.tokenType;
    this.out.push(tok);
    if (tok.tokenType === LParen || tok.tokenType === LBracket) this.depth++;
    else if ((tok.tokenType === RParen || tok.tokenType === RBracket) && this.depth > 0) this.depth--;
    this.last = tok;
    return undefined;
  }

  /** A line break: the end of a logical line, unless the line continues or is blank. */
  private newline(tok: IToken): void {
    const last = this.last;
    if (this.atLineStart) return;
    if (last && (last.tokenType === Comma || (this.depth > 0 && CONTINUES.has(last.tokenType)))) return;
    this.depth = 0;
    this.limits.newline();
    this.prevType = undefined;
    this.out.push(createTokenInstance(Newline, tok.image, tok.startOffset, tok.endOffset ?? tok.startOffset, tok.startLine ?? 1, tok.startLine ?? 1, tok.startColumn ?? 1, tok.startColumn ?? 1));
    this.headerPending = last?.tokenType === Colon || HEADERS.has(this.first?.tokenType);
    this.atLineStart = true;
  }

  /** The indentation of the logical line that `tok` begins: INDENT, DEDENTs, or a diagnostic. */
  private indentation(tok: IToken): void {
    const line = tok.startLine ?? 1;
    let width = this.indentWidth(tok, line);
    const stack = this.stack;
    const at = posOf(tok);
    const top = stack[stack.length - 1]!.width;
    if (this.headerPending) {
      this.headerPending = false;
      if (width > top) {
        stack.push({ width, phantom: false });
        this.out.push(synth(Indent, at));
      } else {
        this.diag(SKETCH_CODES.expectedIndent, 'expected an indented block after this line', "indent the block's statements deeper than the line ending with ':' (use 'pass' for an empty block)",
          this.last?.startLine ?? line, 1, (this.last?.endColumn ?? 0) + 1);
        this.out.push(synth(Indent, at), synth(Dedent, at));
        this.closeTo(width, at, tok);
      }
    } else if (width > top) {
      this.diag(SKETCH_CODES.unexpectedIndent, 'unexpected indentation', "only the statements of a block (after a line ending with ':') are indented deeper", line, 1, width + 1);
      stack.push({ width, phantom: true });
    } else if (width < top) {
      this.closeTo(width, at, tok);
    }
  }

  /**
   * The indentation width of `tok`'s line (columns of whitespace before it). A line whose
   * indentation mixes tabs and spaces, or uses the other character than the file's first indented
   * line, is taken as continuing the block it follows (or opening the block its header asks for):
   * one diagnostic for one cause.
   */
  private indentWidth(tok: IToken, line: number): number {
    const source = this.source;
    let ls = tok.startOffset;
    while (ls > 0 && source[ls - 1] !== '\n' && source[ls - 1] !== '\r') ls--;
    const ws = /^[ \t\f\v]*/.exec(source.slice(ls, tok.startOffset))![0];
    const width = ws.length;
    let mixed = false;
    if (ws.includes(' ') && ws.includes('\t')) {
      this.diag(SKETCH_CODES.mixedIndent, 'indentation mixes tabs and spaces', 'indent with spaces only (or tabs only) throughout the file', line, 1, width + 1);
      mixed = true;
    } else if (width > 0) {
      const ch = ws[0]!;
      const style = this.style;
      if (!style) this.style = { ch, line };
      else if (style.ch !== ch) {
        const what = (c: string) => (c === '\t' ? 'tabs' : 'spaces');
        this.diag(
          SKETCH_CODES.mixedIndent,
          `this line is indented with ${what(ch)} but line ${style.line} with ${what(style.ch)}`,
          'indent with spaces only (or tabs only) throughout the file', line, 1, width + 1,
        );
        mixed = true;
      }
    }
    return mixed ? this.stack[this.stack.length - 1]!.width + (this.headerPending ? 1 : 0) : width;
  }

  /** Closes blocks down to indentation `width` (a DEDENT each); a width no block has is a diagnostic. */
  private closeTo(width: number, at: Pos, tok: IToken): void {
    const stack = this.stack;
    while (stack.length > 1 && stack[stack.length - 1]!.width > width) {
      const lvl = stack.pop()!;
      if (!lvl.phantom) this.out.push(synth(Dedent, at));
    }
    if (stack[stack.length - 1]!.width !== width) {
      this.diag(
        SKETCH_CODES.badDedent,
        'this line does not match the indentation of any enclosing block',
        `indent it like the enclosing block (${stack[stack.length - 1]!.width} columns) or like a statement of the block it belongs to`,
        at.line, 1, (tok.startColumn ?? 1),
      );
      stack.push({ width, phantom: true });
    }
  }

  /** Ends the file at `end`: the last NEWLINE, a missing block's diagnostic, the open blocks' DEDENTs; the stream. */
  finish(end: Pos): IToken[] {
    const out = this.out;
    const last = this.last;
    if (!this.atLineStart) {
      out.push(createTokenInstance(Newline, '', end.offset, end.offset, end.line, end.line, end.col, end.col));
      this.headerPending = last?.tokenType === Colon || HEADERS.has(this.first?.tokenType);
    }
    if (this.headerPending) {
      this.diag(SKETCH_CODES.expectedIndent, 'expected an indented block after this line', "indent the block's statements deeper than the line ending with ':' (use 'pass' for an empty block)",
        last?.startLine ?? 1, 1, (last?.endColumn ?? 0) + 1);
      out.push(synth(Indent, end), synth(Dedent, end));
    }
    while (this.stack.length > 1) {
      if (!this.stack.pop()!.phantom) out.push(synth(Dedent, end));
    }
    return out;
  }
}
