/**
 * `mbsim run --timing FILE`: a timing file read through the one input reader (`input.ts`) and
 * validated against the timing model's parameters (src/sim/timing.ts).
 */
import { H200, mergeTiming, TimingError, type Timing } from '../sim/timing.js';
import { echo } from './args.js';
import { UsageError } from './errors.js';
import { readInput } from './input.js';
import { duplicateKey } from './json-keys.js';
import { JsonPosError, parseJsonPos, type JsonNode, type JsonPos } from './json-pos.js';
import { caretExcerpt, excerptColumn, lineAt } from '../lang/diagnostics.js';
import { alignCaret } from './terminal.js';

/** Largest `--timing` file read (bytes). */
export const TIMING_FILE_MAX = 1 << 20;

/**
 * The timing of `--timing FILE` (H200's without one): a JSON object of parameter names to numbers
 * (or `{ "value": number }`), each within its kind's physical range (src/sim/timing.ts). A
 * rejected file is a UsageError at the entry's line:col with a caret (the value out of range, the
 * unknown name, the key given twice, the JSON syntax error).
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
      if (e instanceof JsonPosError) throw atPos(echo(path), text, e.pos, `not valid JSON: ${e.message}`, TIMING_CODES.json);
    }
    throw new UsageError(`${echo(path)}: not valid JSON: ${echo((err as Error).message)}`).withCode(TIMING_CODES.json);
  }
  const dup = duplicateKey(text);
  if (dup) {
    const pos = { line: dup.line, col: dup.col, endCol: dup.col + JSON.stringify(dup.key).length };
    throw atPos(echo(path), text, pos, `"${echo(dup.key)}" is given twice (first on line ${dup.firstLine}); give each setting once`, TIMING_CODES.duplicate);
  }
  try {
    return mergeTiming(h200Copy(), json);
  } catch (err) {
    if (!(err instanceof TimingError)) throw err;
    const at = errorPos(text, json);
    const code = at?.unknown ? TIMING_CODES.unknown : TIMING_CODES.value;
    throw at ? atPos(echo(path), text, at.pos, err.message, code) : new UsageError(`${echo(path)}: ${err.message}`).withCode(code);
  }
}

/** H200's timing as a record without a prototype: the names a file may set are H200's own keys (not `toString` or `__proto__`). */
const h200Copy = (): Timing => Object.assign(Object.create(null) as Timing, H200);

/**
 * Where the timing file's first rejected entry is: the key of an unknown parameter, the value of a
 * known one that `mergeTiming` refuses (each entry merged alone, in the file's order); undefined
 * when the file is no object or no single entry is refused.
 */
function errorPos(text: string, json: unknown): { pos: JsonPos; unknown: boolean } | undefined {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return undefined;
  let root: JsonNode;
  try {
    root = parseJsonPos(text);
  } catch {
    return undefined;
  }
  if (root.kind !== 'object') return undefined;
  for (const e of root.entries) {
    try {
      mergeTiming(h200Copy(), { [e.key]: (json as Record<string, unknown>)[e.key] });
    } catch (err) {
      if (!(err instanceof TimingError)) throw err;
      if (!Object.hasOwn(H200, e.key)) return { pos: e.keyPos, unknown: true };
      // An object or array may span lines: the caret marks its first character.
      const v = e.value;
      return { pos: v.kind === 'object' || v.kind === 'array' ? { line: v.line, col: v.col, endCol: v.col + 1 } : { line: v.line, col: v.col, endCol: v.endCol }, unknown: false };
    }
  }
  return undefined;
}

/**
 * The stable codes of a rejected `--timing` file (docs/CHECK.md, "Input errors with --json"): its
 * JSON syntax, a key given twice, a name that is no timing parameter, a value `mergeTiming` refuses.
 */
export const TIMING_CODES = { json: 'E-timing-json', duplicate: 'E-timing-duplicate', unknown: 'E-timing-unknown', value: 'E-timing-value' } as const;

/** `file:line:col: error[code]: message` with the line and a caret under the position. */
function atPos(file: string, text: string, pos: JsonPos, message: string, code: string): UsageError {
  let out = `${file}:${pos.line}:${pos.col}: error[${code}]: ${message}`;
  const src = lineAt(text, pos.line);
  if (src !== undefined) {
    const [shown, caret] = caretExcerpt(src, pos.col, pos.endCol);
    out = alignCaret(`${out}\n  ${shown}\n  ${caret}`, shown, excerptColumn(src, pos.col));
  }
  return new UsageError(out);
}
