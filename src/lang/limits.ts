/**
 * Input limits of the sketch language, checked by the lexer before any expensive work (parsing,
 * lowering, instantiating), so that a malformed or hostile file is answered in well under a second
 * with one `E-limit` diagnostic at the place where the limit is crossed, instead of exhausting
 * memory or the stack.
 *
 * The nesting limits keep the recursion of the parser and of the tree walks well inside the stack
 * of a Node.js main thread or a browser worker (about 1 MB): a level of parentheses costs the
 * recursive-descent parser about 7 KB of stack, a block level about 1.5 KB. Long flat chains such
 * as `1 + 1 + … + 1` do not nest (they are parsed and walked with loops), so only the statement
 * size bounds them.
 */

/** The limits (documented in docs/LANGUAGE.md §Limits). */
export const LIMITS = {
  /** Characters in a sketch file (1 MiB). */
  fileChars: 1 << 20,
  /** Characters in one line. */
  lineChars: 65_536,
  /** Tokens in one statement or declaration (its logical line, continuation lines included). */
  statementTokens: 50_000,
  /** Nesting of parentheses, brackets and prefix operators (`-`, `!`, `~`, `not`) in an expression. */
  exprNesting: 32,
  /** Nesting of indented blocks (a role's block is level 1). */
  blockNesting: 32,
  /** `elif` clauses of one `if` statement (each is a nested if-else in the kernel). */
  elifClauses: 256,
  /** Diagnostics reported for one file; the parser and the lowering stop after that many. */
  errors: 50,
} as const;

/** Thrown by the lowering once the file has {@link LIMITS}.errors diagnostics: the rest is not checked. */
export class StopLowering extends Error {}

/** `1048576` → `1 MiB`, other numbers with thousands separators. */
export function limitText(n: number): string {
  if (n >= 1 << 20 && n % (1 << 20) === 0) return `${n / (1 << 20)} MiB`;
  return n.toLocaleString('en-US');
}

/** A limit crossed: the message names the limit and its value; the span is where it is crossed. */
export interface LimitHit {
  message: string;
  hint: string;
  line: number;
  col: number;
  endCol: number;
}

/**
 * Checks the file size and every line's length (one pass over the text, no allocation per line).
 * Returns the first limit crossed, or undefined.
 */
export function checkSize(source: string): LimitHit | undefined {
  const nl = /\r\n|\r|\n/g;
  let line = 1;
  let start = 0;
  const over = source.length > LIMITS.fileChars;
  for (;;) {
    const m = nl.exec(source);
    const end = m ? m.index : source.length;
    if (over && end >= LIMITS.fileChars) {
      const col = LIMITS.fileChars - start + 1;
      if (col <= LIMITS.lineChars + 1) {
        return {
          message: `the file is larger than the limit of ${limitText(LIMITS.fileChars)} (${LIMITS.fileChars.toLocaleString('en-US')} characters)`,
          hint: 'a sketch describes the synchronization of one kernel; split generated code or use parameters and loops',
          line, col, endCol: col + 1,
        };
      }
    }
    if (end - start > LIMITS.lineChars) {
      const col = LIMITS.lineChars + 1;
      return {
        message: `this line is longer than the limit of ${limitText(LIMITS.lineChars)} characters`,
        hint: 'break long expressions after an operator inside parentheses (implicit continuation), or compute parts into variables',
        line, col, endCol: col + 1,
      };
    }
    if (!m) return undefined;
    line++;
    start = m.index + m[0].length;
  }
}

/** How a token moves the nesting of an expression (classified by the lexer). */
export type NestKind = 'open' | 'close' | 'prefix' | 'operand' | 'other';

/**
 * The per-statement limits, fed one token at a time: the statement's size in tokens and the
 * nesting of its expressions (each open bracket, and each prefix operator until its operand ends,
 * is one level). {@link newline} starts the next statement.
 */
export class StatementLimits {
  private pending: number[] = [0];
  private depth = 0;
  private tokens = 0;

  /** Accounts for one token at `line:col` (`len` characters); returns the limit it crosses, if any. */
  token(kind: NestKind, line: number, col: number, len: number): LimitHit | undefined {
    const endCol = col + Math.max(1, len);
    if (++this.tokens > LIMITS.statementTokens) {
      return {
        message: `this statement is longer than the limit of ${limitText(LIMITS.statementTokens)} tokens`,
        hint: 'compute parts of a long expression into variables (x = ...) or parameters',
        line, col, endCol,
      };
    }
    const p = this.pending;
    if (kind === 'open') {
      p.push(0);
      this.depth++;
    } else if (kind === 'prefix') {
      p[p.length - 1]!++;
      this.depth++;
    } else if (kind === 'close' || kind === 'operand') {
      if (kind === 'close' && p.length > 1) this.depth -= 1 + p.pop()!;
      this.depth -= p[p.length - 1]!; // the operand of the pending prefix operators is complete
      p[p.length - 1] = 0;
    }
    if (this.depth > LIMITS.exprNesting) {
      return {
        message: `this expression is nested deeper than the limit of ${LIMITS.exprNesting} levels (parentheses, brackets and prefix operators)`,
        hint: 'compute inner parts into variables (x = ...) first',
        line, col, endCol,
      };
    }
    return undefined;
  }

  /** The statement ended. */
  newline(): void {
    this.pending = [0];
    this.depth = 0;
    this.tokens = 0;
  }
}
