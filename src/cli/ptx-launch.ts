/**
 * The launch sidecar of a PTX file (docs/PTX.md "The launch"): a fully specified launch written
 * once next to the kernel, so that `mbsim check kernel.ptx` needs no flags. Two places, both
 * optional: a comment line in the PTX file itself,
 *
 * ```
 * // # launch: {"kernel": "tma_wgmma", "block": 384, "params": {"kiters": 2}, "tensorMaps": {"tmA": 16384}}
 * ```
 *
 * and a file `kernel.ptx.launch.json` beside it holding the same object. Precedence: the flags,
 * then the `.launch.json` file, then the comment line, field by field (a parameter or tensor map
 * given in two places takes the value of the stronger one). Every key and value is validated; a
 * bad one is a {@link UsageError} (exit 2) at its file:line:col with a caret.
 */
import { caretExcerpt, excerptColumn, didYouMean, lineAt } from '../lang/diagnostics.js';
import { inputProblem, readInput } from './input.js';
import { UsageError } from './errors.js';
import { parseJsonPos, JsonPosError, type JsonNode, type JsonPos } from './json-pos.js';
import { alignCaret } from './terminal.js';
import { blockDims } from '../ptxi/index.js';

/** Most bytes of a `.launch.json` file read. */
export const LAUNCH_FILE_MAX = 1 << 20;

/** The fields of a launch (the flags' values, `params` and `tensorMaps` by PTX name, `param_N` or index). */
export interface LaunchFields {
  kernel?: string;
  block?: number | number[];
  cluster?: number;
  grid?: number;
  dynamicSmem?: number;
  params: Record<string, number>;
  tensorMaps: Record<string, number>;
}

/** One sidecar read: its fields, where each is written (`block`, `params.tiles`, ...), and its text for carets. */
export interface Sidecar {
  file: string;
  text: string;
  fields: LaunchFields;
  where: Record<string, JsonPos>;
}

const SCALARS = { kernel: 'a kernel name (string)', block: 'threads per CTA or [x, y, z]', cluster: 'CTAs per cluster', grid: 'clusters launched', dynamicSmem: 'bytes of dynamic shared memory' } as const;
const KEYS = ['kernel', 'block', 'cluster', 'grid', 'dynamicSmem', 'params', 'tensorMaps'];
const LINE = /^(\s*\/\/\s*#\s*launch:)(.*)$/;
const NAME = /^([A-Za-z_$][\w$]*|\d+)$/;

/** `file:line:col: error: message`, the source line and a caret under the span. */
export function launchError(file: string, text: string, p: JsonPos, message: string): UsageError {
  let out = `${file}:${p.line}:${p.col}: error: ${message}`;
  const src = lineAt(text, p.line);
  if (src !== undefined) {
    const [shown, caret] = caretExcerpt(src, p.col, p.endCol);
    out = alignCaret(`${out}\n  ${shown}\n  ${caret}`, shown, excerptColumn(src, p.col));
  }
  return new UsageError(out);
}

/** The `// # launch:` line of a PTX text, or null; a second such line is an error at it. */
export function inlineLaunch(file: string, src: string): Sidecar | null {
  let found: Sidecar | null = null;
  let firstLine = 0;
  const lines = src.split('\n');
  for (let n = 0; n < lines.length; n++) {
    const m = LINE.exec(lines[n]!.replace(/\r$/, ''));
    if (!m) continue;
    const col = m[1]!.length + 1;
    if (found) throw launchError(file, src, { line: n + 1, col: 1, endCol: col }, `a second '# launch:' line (the first is line ${firstLine}); a PTX file carries one launch`);
    firstLine = n + 1;
    if (!m[2]!.trim()) throw launchError(file, src, { line: n + 1, col, endCol: col + 1 }, `'# launch:' expects a JSON object on the same line, e.g. {"block": 128}`);
    found = readSidecar(file, src, m[2]!, n + 1, col);
  }
  return found;
}

/** The `PATH.launch.json` beside a PTX file, or null when there is none. */
export function fileLaunch(ptxPath: string): Sidecar | null {
  const file = `${ptxPath}.launch.json`;
  if (inputProblem(file) === 'no such file') return null;
  const { text, truncated } = readInput(file, 'launch file', LAUNCH_FILE_MAX);
  if (truncated) throw new UsageError(`launch file ${file} is larger than ${LAUNCH_FILE_MAX} bytes`);
  return readSidecar(file, text, text, 1, 1);
}

/** Parses and validates one sidecar's JSON (`json` starts at `line:col` of `text`). */
function readSidecar(file: string, text: string, json: string, line: number, col: number): Sidecar {
  let root: JsonNode;
  try {
    root = parseJsonPos(json, line, col);
  } catch (err) {
    if (err instanceof JsonPosError) throw launchError(file, text, err.pos, `launch: ${err.message}`);
    throw err;
  }
  const bad = (p: JsonPos, msg: string) => launchError(file, text, p, `launch: ${msg}`);
  if (root.kind !== 'object') throw bad(root, 'expected a JSON object ({"block": 128, ...})');
  const fields: LaunchFields = { params: {}, tensorMaps: {} };
  const where: Record<string, JsonPos> = {};
  const seen = new Set<string>();
  for (const { key, keyPos, value } of root.entries) {
    if (seen.has(key)) throw bad(keyPos, `key "${key}" is given twice`);
    seen.add(key);
    if (!KEYS.includes(key)) {
      const near = didYouMean(key.replace(/[-_]/g, ''), KEYS) ?? (/^param/i.test(key) ? 'params' : /^tensor/i.test(key) ? 'tensorMaps' : undefined);
      throw bad(keyPos, `unknown key "${key}"${near ? ` (did you mean "${near}"?)` : ''}; the keys are ${KEYS.join(', ')}`);
    }
    where[key] = value;
    if (key === 'kernel') {
      if (value.kind !== 'string' || !value.value) throw bad(value, `"kernel" expects ${SCALARS.kernel}`);
      fields.kernel = value.value;
    } else if (key === 'params' || key === 'tensorMaps') {
      if (value.kind !== 'object') throw bad(value, `"${key}" expects an object of NAME: INTEGER (NAME: the parameter's name, param_N or its index N)`);
      const into = fields[key];
      const names = new Set<string>();
      for (const e of value.entries) {
        const field = /^(.+)\+\d+$/.exec(e.key);
        if (!NAME.test(field ? field[1]! : e.key)) throw bad(e.keyPos, `"${e.key}" is not a parameter name, param_N or an index (a field of a struct parameter: NAME+BYTE_OFFSET)`);
        if (names.has(e.key)) throw bad(e.keyPos, `"${key}" names "${e.key}" twice`);
        names.add(e.key);
        // Defined, not assigned: a key "__proto__" is a name like any other (then an unknown parameter).
        Object.defineProperty(into, e.key, { value: integer(e.value, key === 'tensorMaps' ? 1 : -Infinity, `"${key}.${e.key}"`, bad), enumerable: true, writable: true, configurable: true });
        where[`${key}.${e.key}`] = e.keyPos;
      }
    } else if (key === 'block' && value.kind === 'array') {
      // The block's dimensions [x, y, z] (CUDA's dim3): y and z default to 1.
      if (value.items.length < 1 || value.items.length > 3) throw bad(value, `"block" expects threads per CTA or [x, y, z] (1 to 3 dimensions)`);
      const d = value.items.map((x, i) => integer(x, 1, `"block"[${i}]`, bad));
      const why = blockDims(d);
      if (typeof why === 'string') throw bad(value, `"block": [${d.join(', ')}]: ${why.replace(/^--block [^:]*: /, '')}`);
      fields.block = d;
    } else {
      const n = integer(value, key === 'dynamicSmem' ? 0 : 1, `"${key}"`, bad);
      if (key === 'block' && (n % 32 !== 0 || n > 1024)) throw bad(value, `"block": ${n}: mbsim runs whole warps: a multiple of 32 from 32 to 1024`);
      if (key === 'cluster' && n > 16) throw bad(value, `"cluster": ${n}: a cluster has at most 16 CTAs`);
      fields[key as 'block'] = n;
    }
  }
  return { file, text, fields, where };
}

function integer(v: JsonNode, min: number, what: string, bad: (p: JsonPos, m: string) => UsageError): number {
  if (v.kind !== 'number' || !Number.isSafeInteger(v.value) || /[.eE]/.test(v.text)) throw bad(v, `${what} expects an integer${min === 1 ? ' of at least 1' : min === 0 ? ' of at least 0' : ''}, got ${v.kind === 'number' ? v.text : v.kind}`);
  if (v.value < min) throw bad(v, `${what} expects an integer of at least ${min}, got ${v.value}`);
  return v.value;
}
