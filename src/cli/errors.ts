/**
 * The CLI's error for bad input: its message is printed as is (one line, or a located diagnostic
 * with its source line and caret) and the exit code is 2.
 */

/** Bad input from the user: printed as is, exit code 2. */
export class UsageError extends Error {}
