/**
 * `mbsim run | check FILE.ptx`: the launch flags a PTX file needs (no PTX file carries its block,
 * cluster, parameter values or tensor-map boxes), merged over the file's launch sidecar
 * (`ptx-launch.ts`: a `// # launch:` line, a `FILE.ptx.launch.json`), and the load: parse
 * (src/ptx/), translate to the kernel IR (src/ptxi/), then every driver runs it as it runs a
 * sketch. Bad input exits 2 with file:line:col and a caret.
 */
import type { Kernel } from '../kernel/ir.js';
import { KernelError } from '../machine/program.js';
import { functions, instructionsOf, parsePtx, PTX_CODES, type Module, type PtxDiagnostic } from '../ptx/index.js';
import type { Block, Decl, Operand } from '../ptx/ast.js';
import { paramKey, paramRef, pickEntry, shortName, translatePtx, type PtxLaunch } from '../ptxi/index.js';
import { parseSweep } from '../check/sweep.js';
import { UsageError } from './errors.js';
import { formatKernelError } from './load.js';
import { PARAM_CODES, type PtxFlags } from './ptx-flags.js';
import { formatPtxDiagnostic, loadPtxFile, ptxParseError } from './ptx-info.js';
import type { ParseBounds } from './parse-budget.js';
import { fileLaunch, inlineLaunch, launchError, type Sidecar } from './ptx-launch.js';

// The flags themselves live in ptx-flags.ts (light: every verb registers them at start).
export { addPtxFlags, isPtx, refusePtxFlags, type PtxFlags } from './ptx-flags.js';

/**
 * Reads, parses and translates a PTX file for the launch its sidecar and the flags give; errors
 * are {@link UsageError}s, warnings of its header values go to `warn`.
 */
export function loadPtxKernel(path: string, f: PtxFlags, warn?: (text: string) => void, bounds?: ParseBounds): Kernel {
  const { module, src } = loadPtxFile(path, warn, bounds);
  refuseNoEntry(module, src);
  const launch = ptxLaunchOf(path, src, module, f);
  launchValuesOfSets(module, launch, f);
  if (warn && launch.dynamicSmem === undefined) for (const d of unsizedDynamicSmem(module)) warn(formatPtxDiagnostic(d, src));
  if (warn) for (const d of [...unfitParams(module, launch), ...unusedTensorMaps(module, launch)]) warn(formatPtxDiagnostic(d, src));
  return translateOrExplain(module, launch);
}

/**
 * Refuses a module without a kernel to run (no `.entry` with a body: an empty file, one of comments
 * only, one of header directives only) with {@link PTX_CODES.noEntry} at the file's end, where a
 * compiler reports what the input lacks: the character after its last non-blank one (1:1 for an
 * empty file). Throws a {@link UsageError} (exit 2).
 */
export function refuseNoEntry(module: Module, src: string): void {
  if (functions(module).some((fn) => fn.entry && fn.body)) return;
  const text = src.replace(/\s+$/, '');
  const lines = text.split(/\r\n|\n|\r/);
  const line = lines.length;
  const col = lines[line - 1]!.length + 1;
  const what = text === '' ? 'the file is empty' : functions(module).some((fn) => fn.entry) ? 'its .entry declarations have no body' : 'the file has no .entry';
  throw ptxParseError(module.file, {
    code: PTX_CODES.noEntry, message: `no kernel to run: ${what}`, file: module.file, line, col, endCol: col + 1,
    hint: 'mbsim reads the PTX of a CUDA kernel (nvcc -ptx -lineinfo FILE.cu, or cuobjdump -ptx), with at least one .entry and its body',
  }, src);
}

/** Bits of the integer parameter types a launch value is checked against (`.b8` struct parameters are not). */
const PARAM_BITS: Record<string, number> = { '.u8': 8, '.s8': 8, '.u16': 16, '.s16': 16, '.b16': 16, '.u32': 32, '.s32': 32, '.b32': 32 };

/**
 * A warning at the declaration of each whole integer parameter whose launch value (`--param`, a
 * sidecar) does not fit its declared width: CUDA's launch passes the C type's bits, and the
 * kernel's `ld.param` of that width keeps only the low bits (`--param param_2=4294967298` of an
 * `int`, `.u32`, runs as 2). Accepted as either signedness: `-1` of a `.u32` is the bits of an `int`'s -1.
 */
export function unfitParams(module: Module, launch: PtxLaunch): PtxDiagnostic[] {
  let entry;
  try {
    entry = pickEntry(module, launch.kernel);
  } catch {
    return []; // the translation reports it
  }
  const out: PtxDiagnostic[] = [];
  for (const [k, value] of Object.entries(launch.params ?? {})) {
    const ref = paramRef(entry.params, k);
    const p = ref && !ref.offset ? entry.params[ref.index]! : undefined;
    const bits = p && !p.dims ? PARAM_BITS[p.type] : undefined;
    if (!p || bits === undefined) continue;
    const span = 2 ** bits;
    if (value >= -(span / 2) && value < span) continue;
    const low = ((value % span) + span) % span;
    out.push({
      code: PTX_CODES.launchWarning,
      message: `${shortName(p.name)} = ${value} does not fit the ${bits}-bit parameter (${p.type}, ${-(span / 2)} .. ${span - 1}): the kernel's ${bits}-bit load reads its low ${bits} bits, ${low}`,
      hint: `give the value the kernel is launched with, within ${bits} bits`,
      file: p.pos.file, line: p.pos.line, col: p.pos.col, endCol: p.pos.col + Math.max(1, p.name.length),
    });
  }
  return out;
}

/**
 * A warning at the declaration of each parameter the launch gives a tensor-map box
 * (`--tensor-map`, `"tensorMaps"`) when no instruction of the module reads a tensor map (no
 * `cp.async.bulk.tensor`, `cp.reduce.async.bulk.tensor` or `prefetch.tensor`): the box is then
 * never used, and a 1-D `cp.async.bulk` delivers the bytes of its size operand, not a box's.
 */
export function unusedTensorMaps(module: Module, launch: PtxLaunch): PtxDiagnostic[] {
  const keys = Object.keys(launch.tensorMaps ?? {});
  if (!keys.length || functions(module).some((fn) => instructionsOf(fn).some((i) => /\.tensor\b/.test(i.opcode)))) return [];
  let entry;
  try {
    entry = pickEntry(module, launch.kernel);
  } catch {
    return []; // the translation reports it
  }
  return keys.flatMap((k) => {
    const ref = paramRef(entry.params, k);
    const p = ref ? entry.params[ref.index]! : undefined;
    if (!p) return []; // the translation reports it
    return [{
      code: PTX_CODES.launchWarning,
      message: `--tensor-map ${k}: the kernel reads no tensor map (no cp.async.bulk.tensor), so this box is not used; a 1-D cp.async.bulk delivers the bytes of its size operand`,
      hint: 'leave the tensor map out of the launch, or check that this is the kernel you meant',
      file: p.pos.file, line: p.pos.line, col: p.pos.col, endCol: p.pos.col + Math.max(1, p.name.length),
    }];
  });
}

/**
 * A warning at each `extern .shared` array (`NAME[]`, the dynamic shared memory) that an instruction
 * of the module names, for a launch without `--dynamic-smem`: no PTX file carries that size, so
 * the array has none and the kernel's first access to it is outside it (an `index-range` trap
 * that names no flag).
 */
export function unsizedDynamicSmem(m: Module): PtxDiagnostic[] {
  const decls: { name: string; pos: { file: string; line: number; col: number } }[] = [];
  const collect = (d: Decl) => {
    if (d.space === '.shared' && d.linkage.includes('.extern')) for (const n of d.names) if (n.dims?.some((x) => x === null)) decls.push({ name: n.name, pos: n.pos });
  };
  for (const it of m.items) if (it.kind === 'decl') collect(it);
  const walk = (b: Block) => { for (const s of b.stmts) if (s.kind === 'decl') collect(s); else if (s.kind === 'block') walk(s); };
  const fns = functions(m);
  for (const fn of fns) if (fn.body) walk(fn.body);
  if (!decls.length) return [];
  const named = new Set<string>();
  const note = (o: Operand) => {
    if (o.kind === 'name') named.add(o.name);
    else if (o.kind === 'address' && o.base) named.add(o.base);
    else if (o.kind === 'vector') o.items.forEach(note);
    else if (o.kind === 'expr') JSON.stringify(o.expr, (_k, x: unknown) => (typeof x === 'bigint' ? String(x) : x)).replace(/"name":"([^"]+)"/g, (_all, n: string) => { named.add(n); return ''; });
  };
  for (const fn of fns) for (const ins of instructionsOf(fn)) ins.operands.forEach(note);
  return decls.filter((d) => named.has(d.name)).map((d) => ({
    code: PTX_CODES.launchWarning,
    message: `the dynamic shared-memory array ${d.name} has no size: no PTX file carries it, and the launch gives none`,
    hint: 'give the bytes the kernel is launched with (the launch\'s dynamic shared-memory size): --dynamic-smem BYTES, or "dynamicSmem" in the launch line or .launch.json (docs/PTX.md, "The launch")',
    file: d.pos.file, line: d.pos.line, col: d.pos.col, endCol: d.pos.col + Math.max(1, d.name.length),
  }));
}

/**
 * A kernel parameter that `--set` or `--sweep` names by its IR name (`param_N`) and the launch
 * gives no value (`--param`, a sidecar): the set value (the sweep's first) becomes its launch value,
 * so that the translation gives it an IR parameter the set (each sweep point) then overrides.
 */
function launchValuesOfSets(module: Module, launch: PtxLaunch, f: PtxFlags): void {
  const sets: [string, number][] = Object.entries(f.set ?? {});
  for (const spec of f.sweep ?? []) {
    try {
      const r = parseSweep(spec);
      sets.push([r.name, r.from]);
    } catch {
      // reported by the verb
    }
  }
  if (!sets.length) return;
  let entry;
  try {
    entry = pickEntry(module, launch.kernel);
  } catch {
    return; // the translation reports it
  }
  const params = (launch.params ??= {});
  for (const [k, value] of sets) {
    const ref = paramRef(entry.params, k);
    if (!ref || ref.offset || shortName(entry.params[ref.index]!.name) !== k || /^\.b8$/.test(entry.params[ref.index]!.type)) continue;
    const given = Object.keys(params).some((x) => { const r = paramRef(entry.params, x); return r?.index === ref.index && r.offset === 0; });
    if (!given) Object.defineProperty(params, k, { value, enumerable: true, writable: true, configurable: true });
  }
}

/** The launch of a parsed PTX file: its sidecars (`// # launch:` in `src`, `PATH.launch.json`) under the flags. */
function ptxLaunchOf(path: string, src: string, module: Module, f: PtxFlags): PtxLaunch {
  return mergeLaunch(module, f, [fileLaunch(path), inlineLaunch(path, src)].filter((x): x is Sidecar => x !== null));
}

function translateOrExplain(module: Module, launch: PtxLaunch): Kernel {
  try {
    return translatePtx(module, launch).kernel;
  } catch (err) {
    if (err instanceof KernelError) {
      // The library names its option (launch.params.NAME); the CLI names the flag that gave it.
      const m = err.message.replace(/^launch\.params\./, '--param ').replace(/^launch\.tensorMaps\./, '--tensor-map ');
      if (err.loc) throw new UsageError(formatKernelError(err));
      throw new UsageError(`mbsim: error: ${m}`).withCode(m !== err.message ? PARAM_CODES.name : `E-${err.code}`);
    }
    throw err;
  }
}

/**
 * `mbsim serve FILE.ptx`: the launch the explorer translates `text` (the file as read now) with,
 * from the sidecars read now and the flags, after checking that it parses and translates as for
 * `run` and `check`; a problem is a {@link UsageError} with the same message.
 */
export function servedPtxLaunch(path: string, f: PtxFlags, text: string): PtxLaunch {
  const r = parsePtx(text, path);
  if (!r.ok) throw ptxParseError(path, r.diagnostic, text);
  refuseNoEntry(r.module, text);
  const launch = ptxLaunchOf(path, text, r.module, f);
  translateOrExplain(r.module, launch);
  return launch;
}

/**
 * The launch of the flags over the sidecars (strongest first), field by field; a parameter or
 * tensor map is one entry whichever of its keys (name, `param_N`, index) each place uses. A
 * sidecar's kernel or parameter that the module lacks is an error at its place.
 */
export function mergeLaunch(m: Module, f: PtxFlags, sides: Sidecar[]): PtxLaunch {
  const pick = <K extends 'kernel' | 'block' | 'cluster' | 'grid' | 'dynamicSmem'>(k: K): PtxFlags[K] | undefined => f[k] ?? sides.find((s) => s.fields[k] !== undefined)?.fields[k];
  const kernel = pick('kernel');
  const launch: PtxLaunch = {
    ...(kernel !== undefined ? { kernel } : {}),
    ...(pick('block') !== undefined ? { block: pick('block')! } : {}),
    ...(pick('cluster') !== undefined ? { cluster: pick('cluster')! } : {}),
    ...(pick('grid') !== undefined ? { grid: pick('grid')! } : {}),
    ...(pick('dynamicSmem') !== undefined ? { dynamicSmem: pick('dynamicSmem')! } : {}),
    params: { ...(f.param ?? {}) },
    tensorMaps: { ...(f.tensorMap ?? {}) },
  };
  if (!sides.length) return launch;
  const from = f.kernel === undefined ? sides.find((s) => s.fields.kernel !== undefined) : undefined;
  let entry;
  try {
    entry = pickEntry(m, kernel);
  } catch (err) {
    if (from && err instanceof KernelError) throw launchError(from.file, from.text, from.where.kernel!, `launch: ${err.message}`);
    return launch; // the translation reports it as for the flags
  }
  // A parameter's identity: its index, and a struct field's byte offset (`param_0+640`: `0+640`).
  const index = (field: 'params' | 'tensorMaps', key: string): string | undefined => {
    const ref = field === 'params' || /\+\d+$/.test(key) ? paramRef(entry.params, key) : undefined;
    if (ref) return ref.offset || /\+\d+$/.test(key) ? `${ref.index}+${ref.offset}` : String(ref.index);
    const i = entry.params.findIndex((p, j) => paramKey(p, j).includes(key));
    return i < 0 ? undefined : String(i);
  };
  const names = entry.params.map((p, i) => `${shortName(p.name)} or ${i}`).join(', ');
  for (const field of ['params', 'tensorMaps'] as const) {
    const taken = new Set(Object.keys(launch[field]!).map((k) => index(field, k)));
    for (const s of sides) {
      for (const [key, value] of Object.entries(s.fields[field])) {
        const i = index(field, key);
        if (i === undefined) throw launchError(s.file, s.text, s.where[`${field}.${key}`]!, `launch: kernel ${entry.name} has no parameter "${key}" (${names || 'it has none'})`);
        if (taken.has(i)) continue;
        taken.add(i);
        launch[field]![String(i)] = value;
      }
    }
  }
  return launch;
}
