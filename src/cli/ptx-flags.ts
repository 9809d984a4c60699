/**
 * The launch flags of `run | check FILE.ptx` as commander reads them (the load itself is
 * `ptx-load.ts`, loaded only for PTX input): light, since every start registers them.
 */
import { Option, type Command } from 'commander';
import { echo, parsePositiveArg } from './args.js';
import { UsageError } from './errors.js';
import { parseSet } from './set-arg.js';

/** The launch flags as commander parses them. */
export interface PtxFlags {
  kernel?: string;
  block?: number | number[];
  cluster?: number;
  grid?: number;
  param?: Record<string, number>;
  tensorMap?: Record<string, number>;
  dynamicSmem?: number;
  /**
   * `--set NAME=V` / `--sweep NAME=A..B` of the verb: a PTX parameter they name that the launch
   * gives no value is translated with V (A), the launch's value, so that `--set param_N=V` needs no
   * `--param` first (docs/PTX.md).
   */
  set?: Record<string, number>;
  sweep?: string[];
}

/**
 * The stable codes of a PTX kernel's launch values given on the command line (docs/CHECK.md,
 * "Input errors with --json"): a `--param` / `--tensor-map` naming no parameter of the kernel,
 * a value that is no integer (or no box size), a parameter the kernel needs that has none.
 */
export const PARAM_CODES = { name: 'E-ptx-param', value: 'E-ptx-param-value', missing: 'E-ptx-param-missing' } as const;

/** `NAME=INTEGER` where NAME may also be a parameter index (`2=8`) or a struct field `NAME+OFFSET` (`0+640=2`, `param_0+128=16384`). */
function nameValue(flag: string) {
  const field = flag === '--param' || flag === '--tensor-map';
  return (v: string, acc: Record<string, number> = {}): Record<string, number> => {
    const t = v.trim();
    const f = field ? /^([A-Za-z_$][\w$]*|\d+)(\+\d+)=/.exec(t) : null;
    const m = f ? [t, `${f[1]}${f[2]}`, t.slice(f[0].length)] : /^([A-Za-z_$][\w$]*|\d+)=(.*)$/.exec(t);
    if (!m) throw new UsageError(`${flag} expects NAME=INTEGER (NAME: the parameter's name, param_N or its index N${field ? '; a field of a struct parameter: NAME+BYTE_OFFSET' : ''}), got '${echo(v)}'`).withCode(PARAM_CODES.value);
    const key = /^\d/.test(m[1]!) || f ? `_${m[1]!.replace('+', '_')}` : m[1]!;
    let one: Record<string, number>;
    try {
      one = parseSet(`${key}=${m[2]}`, {}, flag);
    } catch (err) {
      // Named as given (an index N is parsed as the name _N).
      if (err instanceof UsageError && key !== m[1]) throw new UsageError(err.message.replace(`'${key}=`, `'${m[1]}=`).replace(`${flag} ${key}:`, `${flag} ${m[1]}:`)).withCode(PARAM_CODES.value);
      throw err instanceof UsageError ? err.withCode(PARAM_CODES.value) : err;
    }
    if (Object.hasOwn(acc, m[1]!)) throw new UsageError(`${flag} ${m[1]} is given twice`).withCode(PARAM_CODES.value);
    if (flag === '--tensor-map' && !(one[key]! >= 1)) throw new UsageError(`${flag} ${m[1]}: the box is a positive byte count, got ${one[key]!}`).withCode(PARAM_CODES.value);
    // Defined, not assigned: `__proto__` is a name like any other (an unknown parameter), not the prototype.
    Object.defineProperty(acc, m[1]!, { value: one[key]!, enumerable: true, writable: true, configurable: true });
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
    .option('--param <NAME=VALUE>', 'PTX: an integer kernel parameter, by name, param_N or index N, or a field of a struct parameter at a byte offset, NAME+OFFSET (repeatable)', nameValue('--param'))
    .option('--tensor-map <NAME=BYTES>', 'PTX: bytes one TMA load through this CUtensorMap parameter (or CUtensorMap field of a struct parameter, NAME+OFFSET) delivers (its box; repeatable)', nameValue('--tensor-map'))
    .addOption(new Option('--dynamic-smem <BYTES>', 'PTX: bytes of dynamic shared memory (the extern .shared array)').argParser(parsePositiveArg('--dynamic-smem')));
  if (withGrid) cmd.addOption(new Option('--grid <N>', 'PTX: clusters launched, all simulated (default 1)').argParser(parsePositiveArg('--grid')));
  return cmd;
}

/** Whether `target` names a PTX file. */
export function isPtx(target: string): boolean {
  return /\.ptx$/i.test(target);
}

/** Refuses PTX launch flags given for a sketch (they would be ignored silently). */
export function refusePtxFlags(f: PtxFlags, withGrid: boolean): void {
  const given = (['kernel', 'block', 'cluster', 'dynamicSmem', ...(withGrid ? ['grid'] : [])] as const).filter((k) => f[k as keyof PtxFlags] !== undefined);
  if (Object.keys(f.param ?? {}).length) given.push('param' as never);
  if (Object.keys(f.tensorMap ?? {}).length) given.push('tensorMap' as never);
  if (given.length) throw new UsageError(`--${String(given[0]).replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} is a launch flag of PTX files; a sketch declares its launch itself`);
}
