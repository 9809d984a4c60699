/**
 * `mbsim run | check FILE.ptx`: the launch flags a PTX file needs (no PTX file carries its block,
 * cluster, parameter values or tensor-map boxes), merged over the file's launch sidecar
 * (`ptx-launch.ts`: a `// # launch:` line, a `FILE.ptx.launch.json`), and the load: parse
 * (src/ptx/), translate to the kernel IR (src/ptxi/), then every driver runs it as it runs a
 * sketch. Bad input exits 2 with file:line:col and a caret.
 */
import { Option, type Command } from 'commander';
import type { Kernel } from '../kernel/ir.js';
import { KernelError } from '../machine/program.js';
import { parsePtx, type Module } from '../ptx/index.js';
import { paramKey, pickEntry, shortName, translatePtx, type PtxLaunch } from '../ptxi/index.js';
import { echo, parsePositiveArg } from './args.js';
import { UsageError } from './errors.js';
import { formatKernelError, parseSet } from './load.js';
import { formatPtxDiagnostic, loadPtxFile } from './ptx-info.js';
import { fileLaunch, inlineLaunch, launchError, type Sidecar } from './ptx-launch.js';

/** The launch flags as commander parses them. */
export interface PtxFlags {
  kernel?: string;
  block?: number | number[];
  cluster?: number;
  grid?: number;
  param?: Record<string, number>;
  tensorMap?: Record<string, number>;
  dynamicSmem?: number;
}

/** `NAME=INTEGER` where NAME may also be a parameter index (`2=8`). */
function nameValue(flag: string) {
  return (v: string, acc: Record<string, number>): Record<string, number> => {
    const m = /^([A-Za-z_$][\w$]*|\d+)=(.*)$/.exec(v.trim());
    if (!m) throw new UsageError(`${flag} expects NAME=INTEGER (NAME: the parameter's name, param_N or its index N), got '${echo(v)}'`);
    const key = /^\d/.test(m[1]!) ? `_${m[1]}` : m[1]!;
    const one = parseSet(`${key}=${m[2]}`, {});
    if (Object.hasOwn(acc, m[1]!)) throw new UsageError(`${flag} ${m[1]} is given twice`);
    acc[m[1]!] = one[key]!;
    return acc;
  };
}

/** `--block N` or `--block X,Y[,Z]` (checked for whole warps by the translation, as the sidecar's). */
function parseBlock(v: string): number | number[] {
  const parts = v.split(',');
  if (parts.length > 3) throw new UsageError(`--block expects N or X,Y[,Z] (the block's dimensions), got '${echo(v)}'`);
  const ns = parts.map((x) => parsePositiveArg('--block')(x.trim()));
  return ns.length === 1 ? ns[0]! : ns;
}

/** Adds the PTX launch flags to a verb (`withGrid`: the verb has no --grid of its own). */
export function addPtxFlags(cmd: Command, withGrid: boolean): Command {
  cmd
    .option('--kernel <NAME>', 'PTX: the .entry to run (full or demangled name; default: the only one)')
    .addOption(new Option('--block <N|X,Y[,Z]>', 'PTX: threads per CTA, or the block\'s dimensions (64,2); whole warps (default: the .reqntid / .maxntid directive)').argParser(parseBlock))
    .addOption(new Option('--cluster <N>', 'PTX: CTAs per cluster (default 1)').argParser(parsePositiveArg('--cluster')))
    .option('--param <NAME=VALUE>', 'PTX: an integer kernel parameter, by name, param_N or index N (repeatable)', nameValue('--param'), {})
    .option('--tensor-map <NAME=BYTES>', 'PTX: bytes one TMA load through this CUtensorMap parameter delivers (its box; repeatable)', nameValue('--tensor-map'), {})
    .addOption(new Option('--dynamic-smem <BYTES>', 'PTX: bytes of dynamic shared memory (the extern .shared array)').argParser(parsePositiveArg('--dynamic-smem')));
  if (withGrid) cmd.addOption(new Option('--grid <N>', 'PTX: clusters launched, all simulated (default 1)').argParser(parsePositiveArg('--grid')));
  return cmd;
}

/** Whether `target` names a PTX file. */
export function isPtx(target: string): boolean {
  return /\.ptx$/i.test(target);
}

/** Reads, parses and translates a PTX file for the launch its sidecar and the flags give; errors are {@link UsageError}s. */
export function loadPtxKernel(path: string, f: PtxFlags): Kernel {
  const { module, src } = loadPtxFile(path);
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
  const index = (key: string) => entry.params.findIndex((p, i) => paramKey(p, i).includes(key));
  const names = entry.params.map((p, i) => `${shortName(p.name)} or ${i}`).join(', ');
  for (const field of ['params', 'tensorMaps'] as const) {
    const taken = new Set(Object.keys(launch[field]!).map(index));
    for (const s of sides) {
      for (const [key, value] of Object.entries(s.fields[field])) {
        const i = index(key);
        if (i < 0) throw launchError(s.file, s.text, s.where[`${field}.${key}`]!, `launch: kernel ${entry.name} has no parameter "${key}" (${names || 'it has none'})`);
        if (taken.has(i)) continue;
        taken.add(i);
        launch[field]![String(i)] = value;
      }
    }
  }
  return launch;
}

/** Refuses PTX launch flags given for a sketch (they would be ignored silently). */
export function refusePtxFlags(f: PtxFlags, withGrid: boolean): void {
  const given = (['kernel', 'block', 'cluster', 'dynamicSmem', ...(withGrid ? ['grid'] : [])] as const).filter((k) => f[k as keyof PtxFlags] !== undefined);
  if (Object.keys(f.param ?? {}).length) given.push('param' as never);
  if (Object.keys(f.tensorMap ?? {}).length) given.push('tensorMap' as never);
  if (given.length) throw new UsageError(`--${String(given[0]).replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} is a launch flag of PTX files; a sketch declares its launch itself`);
}
