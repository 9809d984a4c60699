/**
 * `mbsim run | check FILE.ptx`: the launch flags a PTX file needs (no PTX file carries its block,
 * cluster, parameter values or tensor-map boxes), merged over the file's launch sidecar
 * (`ptx-launch.ts`: a `// # launch:` line, a `FILE.ptx.launch.json`), and the load: parse
 * (src/ptx/), translate to the kernel IR (src/ptxi/), then every driver runs it as it runs a
 * sketch. Bad input exits 2 with file:line:col and a caret.
 */
import type { Kernel } from '../kernel/ir.js';
import { KernelError } from '../machine/program.js';
import { parsePtx, type Module } from '../ptx/index.js';
import { paramKey, paramRef, pickEntry, shortName, translatePtx, type PtxLaunch } from '../ptxi/index.js';
import { UsageError } from './errors.js';
import { formatKernelError } from './load.js';
import type { PtxFlags } from './ptx-flags.js';
import { formatPtxDiagnostic, loadPtxFile } from './ptx-info.js';
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
  return translateOrExplain(module, ptxLaunchOf(path, src, module, f));
}

/** The launch of a parsed PTX file: its sidecars (`// # launch:` in `src`, `PATH.launch.json`) under the flags. */
function ptxLaunchOf(path: string, src: string, module: Module, f: PtxFlags): PtxLaunch {
  return mergeLaunch(module, f, [fileLaunch(path), inlineLaunch(path, src)].filter((x): x is Sidecar => x !== null));
}

function translateOrExplain(module: Module, launch: PtxLaunch): Kernel {
  try {
    return translatePtx(module, launch).kernel;
  } catch (err) {
    if (err instanceof KernelError) throw new UsageError(err.loc ? formatKernelError(err) : `mbsim: error: ${err.message}`);
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
  if (!r.ok) throw new UsageError(formatPtxDiagnostic(r.diagnostic, text));
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
