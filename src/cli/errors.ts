/**
 * The CLI's error for bad input: its message is printed as is (one line, or a located diagnostic
 * with its source line and caret) and the exit code is 2.
 */

/** A place in the input: the file as given on the command line, line and column 1-based. */
export interface ErrorLoc { file: string; line: number; col: number }

/** Marks every {@link UsageError}, whichever copy of this module created it. */
const BRAND = Symbol.for('mbsim.cli.usage-error');

/**
 * Bad input from the user: printed as is, exit code 2. `instanceof UsageError` holds for one made
 * by any copy of this module: each verb's module is loaded when its verb runs, and a loader that
 * evaluates modules again (a test's module reset, a second bundle chunk) would otherwise make the
 * error of a later-loaded verb unknown to `main`, which then reported it as an internal error.
 */
export class UsageError extends Error {
  readonly [BRAND] = true;
  /** The CLI's exit code for it: 2 (bad input); 3 for an {@link IncompleteError}. */
  readonly exitCode: number = 2;

  /**
   * The stable code of an error without a place (`E-ptx-param`), for `--json`'s diagnostic
   * (src/cli/error-json.ts; a located message carries its code in `error[code]`).
   */
  code?: string;

  /**
   * Where the error is when it has one place in the input: the file as given on the command line,
   * line and column 1-based. `--json`'s error document and a `--sweep` row carry it as fields
   * (a missing kernel parameter's first use: src/cli/missing-param.ts).
   */
  loc?: ErrorLoc;

  /**
   * `message` is what is printed; `brief`, when given, is the same in one line per problem
   * (`file:line:col: error[code]: message`, no source line, caret or hint), for `--format short`.
   */
  constructor(message: string, readonly brief?: string) {
    super(message);
  }

  /** This error with its {@link code} set (returned for `throw new UsageError(…).withCode(…)`). */
  withCode(code: string): this {
    this.code = code;
    return this;
  }

  /** This error with its {@link loc} set. */
  withLoc(loc: ErrorLoc): this {
    this.loc = loc;
    return this;
  }

  static override [Symbol.hasInstance](x: unknown): boolean {
    if (this !== UsageError) return Function.prototype[Symbol.hasInstance].call(this, x);
    return typeof x === 'object' && x !== null && (x as { [BRAND]?: unknown })[BRAND] === true;
  }
}

/**
 * A bound stopped the command before it had a result to report (the parse of a file too large for
 * `--max-memory`): printed as is, exit code 3 (incomplete).
 */
export class IncompleteError extends UsageError {
  override readonly exitCode = 3;
}
