/**
 * The sketch parser's syntax-error messages: what was expected, in words, and what was found, with
 * a hint on how the construct is written; the hint travels after a NUL character of the message
 * Chevrotain stores ({@link splitHint} separates them).
 */
import type { IParserErrorMessageProvider, IToken, TokenType } from 'chevrotain';
import { Colon, describeToken, KwElif, KwElse, Newline, RBracket, RParen } from './tokens.js';

/** How a syntax error names an expected token. */
const LABELS: Record<string, string> = {
  Newline: 'the end of the line', Indent: 'an indented block', Dedent: 'the end of the block', Ident: 'a name',
  Int: 'an integer', Mnemonic: 'an operation', StringLit: 'a string', Shape: 'a shape such as 128x128x64',
  Assign: "'='", Colon: "':'", Comma: "','", LParen: "'('", RParen: "')'", LBracket: "'['", RBracket: "']'", At: "'@'",
  KwIn: "'in'", KwRange: "'range'",
};

/** The words for token type `t` in a syntax error. */
function label(t: TokenType): string {
  return LABELS[t.name] ?? `'${t.name.replace(/^Kw/, '').toLowerCase()}'`;
}

/** What a rule expects, in words ("expected … but found"). */
const RULE_WHAT: Record<string, string> = {
  topItem: 'a declaration (kernel, param, barrier, smem, tmem, gmem, role)',
  stmt: 'a statement',
  simpleStmt: 'a statement',
  primary: 'an expression',
  unaryExpr: 'an expression',
  optValue: 'a value',
  opArg: 'an operand',
  assignValue: 'an expression or an operation',
  bufferDecl: "'smem', 'tmem' or 'gmem'",
};

/** The hint of a syntax error in a rule: how that construct is written. */
const RULE_HINT: Record<string, string> = {
  topItem: 'a sketch is a list of declarations; operations belong inside a role block',
  stmt: 'statements are assignments, operations (PTX mnemonics), for, if/else, elect and pass',
  simpleStmt: 'statements are assignments, operations (PTX mnemonics), for, if/else, elect and pass',
  primary: 'expressions are integers, names, name[index] references and C operators with parentheses',
  unaryExpr: 'expressions are integers, names, name[index] references and C operators with parentheses',
  forStmt: 'loops are written: for i in range(a, b[, step]):',
  chooseStmt: 'a choice is written: choose t in range(a, b)',
  opOption: 'options are written key=value, e.g. shape=128x128x64 or multicast=3',
  roleDecl: 'roles are written: role NAME warps=N [threads=N] [per=thread|warp|one] [instances=E] [where=E]:',
};

/** The hint for an `else` / `elif` found where no `if` block precedes it. */
function elseHint(t: IToken | undefined): string | undefined {
  if (t?.tokenType === KwElse || t?.tokenType === KwElif) return `'${t.image}' must follow an 'if' block, at the indentation of its 'if'`;
  return undefined;
}

/** Syntax-error messages carry their hint after a NUL character; `splitHint` separates them. */
export const errorMessageProvider: IParserErrorMessageProvider = {
  buildMismatchTokenMessage({ expected, actual, ruleName }) {
    let hint = RULE_HINT[ruleName] ?? '';
    if (expected === Colon) hint = "block headers (role, for, if, elif, else, elect) end with ':'";
    else if (expected === Newline) hint = 'one statement per line; separate operands with commas';
    else if (expected === RParen || expected === RBracket) hint = 'check that every bracket is closed';
    return `expected ${label(expected)} but found ${describeToken(actual)}\0${elseHint(actual) ?? hint}`;
  },
  buildNotAllInputParsedMessage({ firstRedundant }) {
    return `expected ${RULE_WHAT.topItem} but found ${describeToken(firstRedundant)}\0${elseHint(firstRedundant) ?? RULE_HINT.topItem}`;
  },
  buildNoViableAltMessage({ actual, ruleName }) {
    const what = RULE_WHAT[ruleName];
    const found = describeToken(actual[0]);
    return `${what ? `expected ${what} but found` : 'unexpected'} ${found}\0${elseHint(actual[0]) ?? RULE_HINT[ruleName] ?? ''}`;
  },
  buildEarlyExitMessage({ actual, ruleName }) {
    const what = RULE_WHAT[ruleName];
    return `${what ? `expected ${what} but found` : 'unexpected'} ${describeToken(actual[0])}\0${elseHint(actual[0]) ?? RULE_HINT[ruleName] ?? ''}`;
  },
};

/** Splits a message built by the error message provider into message and hint. */
export function splitHint(msg: string): { message: string; hint: string } {
  const i = msg.indexOf('\0');
  return i < 0 ? { message: msg, hint: '' } : { message: msg.slice(0, i), hint: msg.slice(i + 1) };
}
