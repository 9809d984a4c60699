/**
 * The token types of the sketch language (Chevrotain token types: literals, names, mnemonics,
 * keywords, operators with the categories the grammar and the precedence levels read, and the
 * layout tokens NEWLINE, INDENT, DEDENT), every one of them in lexing order, and a token's
 * description for messages.
 */
import { createToken, Lexer, type IToken, type TokenType } from 'chevrotain';

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
