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
 * `E-limit` diagnostic and an empty token stream (`fatal`).
 */
import { createToken, createTokenInstance, Lexer, type ILexingError, type IToken, type TokenType } from 'chevrotain';
import { parseInteger } from '../kernel/arith.js';
import { SKETCH_CODES, type SketchDiagnostic } from './diagnostics.js';
import { checkSize, LIMITS, StatementLimits, type LimitHit, type NestKind } from './limits.js';

// ---- token types -------------------------------------------------------------------------------

export const Indent = createToken({ name: 'Indent', pattern: Lexer.NA });
export const Dedent = createToken({ name: 'Dedent', pattern: Lexer.NA });
export const Newline = createToken({ name: 'Newline', pattern: /\r\n|\r|\n/, line_breaks: true });
export const WhiteSpace = createToken({ name: 'WhiteSpace', pattern: /[ \t\f\v]+/, group: Lexer.SKIPPED });
export const Comment = createToken({ name: 'Comment', pattern: /#[^\r\n]*/, group: Lexer.SKIPPED });

export const StringLit = createToken({ name: 'StringLit', pattern: /"(?:[^"\\\r\n]|\\.)*"/ });
/** An unterminated string: reported by the layout step, then parsed as if it were closed. */
export const BadString = createToken({ name: 'BadString', pattern: /"(?:[^"\\\r\n]|\\.)*/ });
/** MxNxK (other dimension counts are lexed too, and rejected when lowering). */
export const Shape = createToken({ name: 'Shape', pattern: /[1-9]\d*(?:x\d+)+(?![A-Za-z0-9_])/ });
export const Int = createToken({ name: 'Int', pattern: /0[xX][0-9a-fA-F][0-9a-fA-F_]*|0[bB][01][01_]*|\d[\d_]*/ });
export const Ident = createToken({ name: 'Ident', pattern: /[A-Za-z_][A-Za-z0-9_]*/ });
export const Mnemonic = createToken({
  name: 'Mnemonic',
  // A qualifier is a name, a tensor dimension count (`.2d` of `cp.async.bulk.prefetch.tensor.2d`),
  // or a tcgen05 data-movement shape (`.32x32b`, `.16x256b`, `.16x32bx2` of tcgen05.ld / st / cp).
  pattern: /[A-Za-z_][A-Za-z0-9_]*(?:\.(?:[A-Za-z_][A-Za-z0-9_]*|[1-5]d(?![A-Za-z0-9_])|\d+x\d+b(?:x2)?(?![A-Za-z0-9_]))(?:::[A-Za-z0-9_]+)*)+/,
});

function kw(word: string, ...categories: TokenType[]): TokenType {
  const name = `Kw${word[0]!.toUpperCase()}${word.slice(1)}`;
  return createToken({ name, pattern: new RegExp(`${word}(?![A-Za-z0-9_.])`), longer_alt: Ident, categories });
}

// Operator categories, one per precedence level (low to high), plus prefix operators.
export const OrOp = createToken({ name: 'OrOp', pattern: Lexer.NA });
export const AndOp = createToken({ name: 'AndOp', pattern: Lexer.NA });
export const BitOrOp = createToken({ name: 'BitOrOp', pattern: Lexer.NA });
export const BitXorOp = createToken({ name: 'BitXorOp', pattern: Lexer.NA });
export const BitAndOp = createToken({ name: 'BitAndOp', pattern: Lexer.NA });
export const EqOp = createToken({ name: 'EqOp', pattern: Lexer.NA });
export const RelOp = createToken({ name: 'RelOp', pattern: Lexer.NA });
export const ShiftOp = createToken({ name: 'ShiftOp', pattern: Lexer.NA });
export const AddOp = createToken({ name: 'AddOp', pattern: Lexer.NA });
export const MulOp = createToken({ name: 'MulOp', pattern: Lexer.NA });
export const PrefixOp = createToken({ name: 'PrefixOp', pattern: Lexer.NA });
/** Every binary operator (the grammar reads a flat chain; lowering applies the precedence levels above). */
export const BinOp = createToken({ name: 'BinOp', pattern: Lexer.NA });

export const KwKernel = kw('kernel');
export const KwParam = kw('param');
export const KwBarrier = kw('barrier');
export const KwSmem = kw('smem');
export const KwTmem = kw('tmem');
export const KwGmem = kw('gmem');
export const KwChoose = kw('choose');
export const KwRole = kw('role');
export const KwFor = kw('for');
export const KwIn = kw('in');
export const KwRange = kw('range');
export const KwIf = kw('if');
export const KwElif = kw('elif');
export const KwElse = kw('else');
export const KwElect = kw('elect');
export const KwPass = kw('pass');
export const KwAnd = kw('and', AndOp, BinOp);
export const KwOr = kw('or', OrOp, BinOp);
export const KwNot = kw('not', PrefixOp);

export const OrOr = createToken({ name: 'OrOr', pattern: '||', categories: [OrOp, BinOp] });
export const AndAnd = createToken({ name: 'AndAnd', pattern: '&&', categories: [AndOp, BinOp] });
export const LShift = createToken({ name: 'LShift', pattern: '<<', categories: [ShiftOp, BinOp] });
export const RShift = createToken({ name: 'RShift', pattern: '>>', categories: [ShiftOp, BinOp] });
export const Le = createToken({ name: 'Le', pattern: '<=', categories: [RelOp, BinOp] });
export const Ge = createToken({ name: 'Ge', pattern: '>=', categories: [RelOp, BinOp] });
export const EqEq = createToken({ name: 'EqEq', pattern: '==', categories: [EqOp, BinOp] });
export const Ne = createToken({ name: 'Ne', pattern: '!=', categories: [EqOp, BinOp] });
export const Lt = createToken({ name: 'Lt', pattern: '<', categories: [RelOp, BinOp] });
export const Gt = createToken({ name: 'Gt', pattern: '>', categories: [RelOp, BinOp] });
export const Assign = createToken({ name: 'Assign', pattern: '=' });
export const Plus = createToken({ name: 'Plus', pattern: '+', categories: [AddOp, BinOp] });
export const Minus = createToken({ name: 'Minus', pattern: '-', categories: [AddOp, PrefixOp, BinOp] });
export const Star = createToken({ name: 'Star', pattern: '*', categories: [MulOp, BinOp] });
export const Slash = createToken({ name: 'Slash', pattern: '/', categories: [MulOp, BinOp] });
export const Percent = createToken({ name: 'Percent', pattern: '%', categories: [MulOp, BinOp] });
export const Caret = createToken({ name: 'Caret', pattern: '^', categories: [BitXorOp, BinOp] });
export const Amp = createToken({ name: 'Amp', pattern: '&', categories: [BitAndOp, BinOp] });
export const Pipe = createToken({ name: 'Pipe', pattern: '|', categories: [BitOrOp, BinOp] });
export const Bang = createToken({ name: 'Bang', pattern: '!', categories: PrefixOp });
export const Tilde = createToken({ name: 'Tilde', pattern: '~', categories: PrefixOp });
export const LParen = createToken({ name: 'LParen', pattern: '(' });
export const RParen = createToken({ name: 'RParen', pattern: ')' });
export const LBracket = createToken({ name: 'LBracket', pattern: '[' });
export const RBracket = createToken({ name: 'RBracket', pattern: ']' });
export const Comma = createToken({ name: 'Comma', pattern: ',' });
export const Colon = createToken({ name: 'Colon', pattern: ':' });
export const At = createToken({ name: 'At', pattern: '@' });

const KEYWORDS = [
  KwKernel, KwParam, KwBarrier, KwSmem, KwTmem, KwGmem, KwChoose, KwRole, KwFor, KwIn, KwRange, KwIf, KwElif, KwElse, KwElect, KwPass,
  KwAnd, KwOr, KwNot,
];

/** Every token type, in lexing order (plus the layout and category types the parser needs). */
export const ALL_TOKENS: TokenType[] = [
  Newline, WhiteSpace, Comment, StringLit, BadString, Shape, Int, Mnemonic, ...KEYWORDS, Ident,
  OrOr, AndAnd, LShift, RShift, Le, Ge, EqEq, Ne, Lt, Gt, Assign, Plus, Minus, Star, Slash, Percent, Caret, Amp, Pipe,
  Bang, Tilde, LParen, RParen, LBracket, RBracket, Comma, Colon, At,
  Indent, Dedent, OrOp, AndOp, BitOrOp, BitXorOp, BitAndOp, EqOp, RelOp, ShiftOp, AddOp, MulOp, PrefixOp, BinOp,
];

// Only Newline spans a line break. Said here, Chevrotain need not find it out by parsing every
// token's regular expression when the lexer is built (~10 ms of every start); test/lang-start.test.ts
// checks that a lexer left to find out tokenizes every example the same.
for (const t of ALL_TOKENS) if (t !== Newline && t.PATTERN !== Lexer.NA) t.LINE_BREAKS = false;

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

/** Human-readable description of a token for messages. */
export function describeToken(t: IToken | undefined): string {
  if (!t || t.tokenType.name === 'EOF') return 'the end of the file';
  switch (t.tokenType) {
    case Newline: return t.image === '' ? 'the end of the file' : 'the end of the line';
    case Indent: return 'an indented block';
    case Dedent: return 'the end of the block';
    default: return `'${t.image.length > 40 ? `${t.image.slice(0, 40)}…` : t.image}'`;
  }
}

/** Keywords that begin a block header: the next line is indented even if the ':' is missing. */
const HEADERS = new Set<TokenType | undefined>([KwRole, KwFor, KwIf, KwElif, KwElse, KwElect]);

const CONTINUES = new Set<TokenType>([
  LParen, LBracket, Comma, OrOr, AndAnd, LShift, RShift, Le, Ge, EqEq, Ne, Lt, Gt, Plus, Minus, Star, Slash, Percent, Caret,
  Amp, Pipe, KwAnd, KwOr,
]);

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

/** How a token moves an expression's nesting (`prev`: the token before it on the logical line). */
function nestKind(t: TokenType, prev: TokenType | undefined): NestKind {
  if (t === LParen || t === LBracket) return 'open';
  if (t === RParen || t === RBracket) return 'close';
  if (t === Bang || t === Tilde || t === KwNot) return 'prefix';
  if (t === Minus) return prev === Int || prev === Ident || prev === RParen || prev === RBracket ? 'other' : 'prefix';
  if (t === Int || t === Ident || t === Shape || t === StringLit) return 'operand';
  return 'other';
}

function endPosition(source: string): { line: number; col: number; offset: number } {
  const lines = source.split(/\r\n|\r|\n/);
  return { line: lines.length, col: lines[lines.length - 1]!.length + 1, offset: source.length };
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
  const size = checkSize(source);
  if (size) return fatal(size);
  const res = tokenizeBounded(source);
  for (const e of res.errors) {
    if (diagnostics.length > LIMITS.errors) break;
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
  const lineEnd = new Map<number, number>();
  for (const t of res.tokens) {
    if (t.tokenType === Newline || t.startLine === undefined || t.endColumn === undefined) continue;
    if (t.endLine !== t.startLine) continue;
    const e = t.endColumn + 1;
    if ((lineEnd.get(t.startLine) ?? 0) < e) lineEnd.set(t.startLine, e);
  }
  const out: IToken[] = [];
  const synth = (type: TokenType, at: { offset: number; line: number; col: number }) =>
    createTokenInstance(type, '', at.offset, at.offset, at.line, at.line, at.col, at.col);
  const posOf = (t: IToken) => ({ offset: t.startOffset, line: t.startLine ?? 1, col: t.startColumn ?? 1 });

  const stack: { width: number; phantom: boolean }[] = [{ width: 0, phantom: false }];
  const limits = new StatementLimits();
  /** Per block level: the elif clauses of the if statement at that level so far. */
  const elifs: number[] = [0];
  let prevType: TokenType | undefined; // the previous token of the logical line
  let depth = 0;
  let atLineStart = true;
  let last: IToken | undefined;
  let headerPending = false; // the previous logical line ended with ':' (or began a block header)
  let first: IToken | undefined; // first token of the current logical line
  let style: { ch: string; line: number } | undefined;

  const closeTo = (width: number, at: { offset: number; line: number; col: number }, tok: IToken) => {
    while (stack.length > 1 && stack[stack.length - 1]!.width > width) {
      const lvl = stack.pop()!;
      if (!lvl.phantom) out.push(synth(Dedent, at));
    }
    if (stack[stack.length - 1]!.width !== width) {
      diag(
        SKETCH_CODES.badDedent,
        'this line does not match the indentation of any enclosing block',
        `indent it like the enclosing block (${stack[stack.length - 1]!.width} columns) or like a statement of the block it belongs to`,
        at.line, 1, (tok.startColumn ?? 1),
      );
      stack.push({ width, phantom: true });
    }
  };

  for (let tok of res.tokens) {
    if (tok.tokenType === BadString) {
      diag(SKETCH_CODES.badChar, 'unterminated string', 'close the string with " on the same line', tok.startLine ?? 1, tok.startColumn ?? 1, (tok.endColumn ?? tok.startColumn ?? 1) + 1);
      tok = createTokenInstance(StringLit, `${tok.image}"`, tok.startOffset, tok.endOffset ?? tok.startOffset, tok.startLine ?? 1, tok.endLine ?? 1, tok.startColumn ?? 1, tok.endColumn ?? 1);
    }
    if (tok.tokenType === Newline) {
      if (atLineStart) continue;
      if (last && (last.tokenType === Comma || (depth > 0 && CONTINUES.has(last.tokenType)))) continue;
      depth = 0;
      limits.newline();
      prevType = undefined;
      out.push(createTokenInstance(Newline, tok.image, tok.startOffset, tok.endOffset ?? tok.startOffset, tok.startLine ?? 1, tok.startLine ?? 1, tok.startColumn ?? 1, tok.startColumn ?? 1));
      headerPending = last?.tokenType === Colon || HEADERS.has(first?.tokenType);
      atLineStart = true;
      continue;
    }
    if (atLineStart) {
      atLineStart = false;
      first = tok;
      let ls = tok.startOffset;
      while (ls > 0 && source[ls - 1] !== '\n' && source[ls - 1] !== '\r') ls--;
      const ws = /^[ \t\f\v]*/.exec(source.slice(ls, tok.startOffset))![0];
      const line = tok.startLine ?? 1;
      let width = ws.length;
      let mixed = false;
      if (ws.includes(' ') && ws.includes('\t')) {
        diag(SKETCH_CODES.mixedIndent, 'indentation mixes tabs and spaces', 'indent with spaces only (or tabs only) throughout the file', line, 1, width + 1);
        mixed = true;
      } else if (width > 0) {
        const ch = ws[0]!;
        if (!style) style = { ch, line };
        else if (style.ch !== ch) {
          const what = (c: string) => (c === '\t' ? 'tabs' : 'spaces');
          diag(
            SKETCH_CODES.mixedIndent,
            `this line is indented with ${what(ch)} but line ${style.line} with ${what(style.ch)}`,
            'indent with spaces only (or tabs only) throughout the file', line, 1, width + 1,
          );
          mixed = true;
        }
      }
      // A line whose indentation cannot be compared is taken as continuing the block it follows
      // (or opening the block its header asks for): one diagnostic for one cause.
      if (mixed) width = stack[stack.length - 1]!.width + (headerPending ? 1 : 0);
      const at = posOf(tok);
      const top = stack[stack.length - 1]!.width;
      if (headerPending) {
        headerPending = false;
        if (width > top) {
          stack.push({ width, phantom: false });
          out.push(synth(Indent, at));
        } else {
          diag(SKETCH_CODES.expectedIndent, 'expected an indented block after this line', "indent the block's statements deeper than the line ending with ':' (use 'pass' for an empty block)",
            last?.startLine ?? line, 1, (last?.endColumn ?? 0) + 1);
          out.push(synth(Indent, at), synth(Dedent, at));
          closeTo(width, at, tok);
        }
      } else if (width > top) {
        diag(SKETCH_CODES.unexpectedIndent, 'unexpected indentation', "only the statements of a block (after a line ending with ':') are indented deeper", line, 1, width + 1);
        stack.push({ width, phantom: true });
      } else if (width < top) {
        closeTo(width, at, tok);
      }
      const hit = blockLimits(stack.length - 1, elifs, tok);
      if (hit) return fatal(hit);
    }
    if (tok.tokenType === Int) {
      const n = parseInteger(tok.image);
      if ('error' in n) diag(SKETCH_CODES.arith, n.error, 'mbsim computes exactly with integers up to ±(2^53 − 1) = ±9007199254740991', tok.startLine ?? 1, tok.startColumn ?? 1, (tok.startColumn ?? 1) + tok.image.length);
    }
    const hit = limits.token(nestKind(tok.tokenType, prevType), tok.startLine ?? 1, tok.startColumn ?? 1, tok.image.length);
    if (hit) return fatal(hit);
    prevType = tok.tokenType;
    out.push(tok);
    if (tok.tokenType === LParen || tok.tokenType === LBracket) depth++;
    else if ((tok.tokenType === RParen || tok.tokenType === RBracket) && depth > 0) depth--;
    last = tok;
  }
  const eof = { offset: end.offset, line: end.line, col: end.col };
  if (!atLineStart) {
    out.push(createTokenInstance(Newline, '', end.offset, end.offset, end.line, end.line, end.col, end.col));
    headerPending = last?.tokenType === Colon || HEADERS.has(first?.tokenType);
  }
  if (headerPending) {
    diag(SKETCH_CODES.expectedIndent, 'expected an indented block after this line', "indent the block's statements deeper than the line ending with ':' (use 'pass' for an empty block)",
      last?.startLine ?? 1, 1, (last?.endColumn ?? 0) + 1);
    out.push(synth(Indent, eof), synth(Dedent, eof));
  }
  while (stack.length > 1) {
    if (!stack.pop()!.phantom) out.push(synth(Dedent, eof));
  }
  return { tokens: out, diagnostics, end, lineEnd };
}
