/**
 * The JSON document `run --json` and `check --json` (or `--format json`) print on stdout when the
 * command fails on its input (exit 2) or a bound stops it before it has a result (exit 3): a tool
 * that reads the command's stdout as JSON gets a document in every case. Schema `mbsim.error/1`
 * (docs/CHECK.md, "Input errors with `--json`"). The human-readable message still goes to stderr.
 */
import type { UsageError } from './errors.js';

/** One located problem of an {@link ErrorDocument}: a sketch, PTX or launch diagnostic. */
export interface ErrorDiagnostic {
  severity: 'error' | 'warning';
  /** The diagnostic's code (`E-unknown-mnemonic`, `ptx-syntax`, …); absent for an unlocated error. */
  code?: string;
  message: string;
  /** Where: the file as given on the command line, line and column 1-based; absent when the error has no place (a missing file, a bad flag). */
  file?: string;
  line?: number;
  col?: number;
  /** What to do about it, when the message gives a hint. */
  hint?: string;
}

/** What `--json` prints for a command that failed before it had a result. */
export interface ErrorDocument {
  schema: 'mbsim.error/1';
  /** The verb (`run`, `check`). */
  command: string;
  /** The process's exit code: 2 bad input, 3 stopped by a bound before the work began. */
  exitCode: number;
  /** The first problem's text as printed on stderr, in one line. */
  message: string;
  diagnostics: ErrorDiagnostic[];
}

/** A located first line: `FILE:LINE:COL: error[CODE]: MESSAGE` (the format every front end prints). */
const LOCATED = /^(.+?):(\d+):(\d+): (error|warning)(?:\[([^\]]+)\])?: (.*)$/;

/**
 * The error document of `err` for `command`. The diagnostics are read from the message as printed:
 * each located line starts one (its `hint:` line, when one follows, is its hint; source excerpts
 * and carets are left out); the place `err.loc` gives is the first one's; a message without a
 * located line or a place is one unlocated diagnostic.
 */
export function errorDocument(err: UsageError, command: string): ErrorDocument {
  const lines = err.message.split('\n');
  const diagnostics: ErrorDiagnostic[] = [];
  for (const line of lines) {
    const m = LOCATED.exec(line);
    if (m) {
      const [, file, ln, col, severity, code, message] = m;
      // A message printed without its code (a missing kernel parameter's line) has it on the error.
      const c = code ?? (diagnostics.length === 0 ? err.code : undefined);
      diagnostics.push({ severity: severity as 'error' | 'warning', ...(c ? { code: c } : {}), message: message!, file: file!, line: Number(ln), col: Number(col) });
    } else if (line.startsWith('hint: ') && diagnostics.length && diagnostics[diagnostics.length - 1]!.hint === undefined) {
      diagnostics[diagnostics.length - 1]!.hint = line.slice('hint: '.length);
    }
  }
  const first = lines[0]!.replace(/^(mbsim: )?(error: )?/, '');
  // A place the error carries as data (src/cli/errors.ts `loc`) is the first diagnostic's.
  if (err.loc && diagnostics.length) Object.assign(diagnostics[0]!, { file: err.loc.file, line: err.loc.line, col: err.loc.col });
  else if (err.loc) diagnostics.push({ severity: 'error', ...(err.code !== undefined ? { code: err.code } : {}), message: first, ...err.loc });
  if (!diagnostics.length) diagnostics.push({ severity: 'error', ...(err.code !== undefined ? { code: err.code } : {}), message: first });
  return { schema: 'mbsim.error/1', command, exitCode: err.exitCode === 3 ? 3 : 2, message: first, diagnostics };
}

/**
 * Whether `argv` (the verb first) asks for JSON output: `run` or `check` with `--json`, or `check`
 * with `--format json` / `--format=json`, before a `--` that ends the options, and no other
 * `--format` beside it.
 */
export function wantsJson(argv: readonly string[]): boolean {
  if (argv[0] !== 'run' && argv[0] !== 'check') return false;
  let json = false;
  for (let i = 1; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') break;
    if (a === '--json' || a === '--format=json') json = true;
    else if (a === '--format' && argv[0] === 'check') {
      // Another format asked for beside --json is bad input of its own: no JSON then.
      if (argv[i + 1] !== 'json') return false;
      json = true;
    } else if (a.startsWith('--format=')) return false;
  }
  return json;
}
