/**
 * `mbsim run --timing FILE`: a timing file read through the one input reader (`input.ts`) and
 * validated against the timing model's parameters (src/sim/timing.ts).
 */
import { H200, mergeTiming, TimingError, type Timing } from '../sim/timing.js';
import { echo } from './args.js';
import { UsageError } from './errors.js';
import { readInput } from './input.js';
import { duplicateKey } from './json-keys.js';
import { JsonPosError, parseJsonPos } from './json-pos.js';
import { caretExcerpt, excerptColumn, lineAt } from '../lang/diagnostics.js';
import { alignCaret } from './terminal.js';

/** Largest `--timing` file read (bytes). */
export const TIMING_FILE_MAX = 1 << 20;

/**
 * The timing of `--timing FILE` (H200's without one): a JSON object of parameter names to numbers
 * (or `{ "value": number }`), each within its kind's physical range (src/sim/timing.ts).
 */
export function loadTiming(path: string | undefined): Timing {
  if (path === undefined) return H200;
  if (path.trim() === '') throw new UsageError('--timing needs a file name');
  const { text, truncated } = readInput(path, 'timing file', TIMING_FILE_MAX);
  if (truncated) throw new UsageError(`cannot read timing file ${echo(path)}: more than ${TIMING_FILE_MAX.toLocaleString('en-US')} bytes; a timing file has at most that`);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    // Where it fails, with a caret (JSON.parse says only "at position 18"); the positioned reader
    // finds the same errors in standard JSON.
    try {
      parseJsonPos(text);
    } catch (e) {
      if (e instanceof JsonPosError) throw atPos(echo(path), text, e, `not valid JSON: ${e.message}`);
    }
    throw new UsageError(`${echo(path)}: not valid JSON: ${echo((err as Error).message)}`);
  }
  const dup = duplicateKey(text);
  if (dup) throw new UsageError(`${echo(path)}:${dup.line}:${dup.col}: "${echo(dup.key)}" is given twice (first on line ${dup.firstLine}); give each setting once`);
  try {
    // The names a file may set are H200's own keys (not `toString` or `__proto__`).
    return mergeTiming(Object.assign(Object.create(null) as Timing, H200), json);
  } catch (err) {
    if (err instanceof TimingError) throw new UsageError(`${echo(path)}: ${err.message}`);
    throw err;
  }
}

/** `file:line:col: error: message` with the line and a caret under the position. */
function atPos(file: string, text: string, e: JsonPosError, message: string): UsageError {
  let out = `${file}:${e.pos.line}:${e.pos.col}: error: ${message}`;
  const src = lineAt(text, e.pos.line);
  if (src !== undefined) {
    const [shown, caret] = caretExcerpt(src, e.pos.col, e.pos.endCol);
    out = alignCaret(`${out}\n  ${shown}\n  ${caret}`, shown, excerptColumn(src, e.pos.col));
  }
  return new UsageError(out);
}
