/**
 * `--set NAME=VALUE`, the parameter overrides of `run` and `check` (and of PTX's `--param`): parsed
 * while commander reads the command line, so this module is light (no kernel loading).
 */
import { parseInteger } from '../kernel/arith.js';
import { echo } from './args.js';
import { UsageError } from './errors.js';

/**
 * Parses one `NAME=VALUE` (integer: decimal, 0x hex or 0b binary, optional `_` separators between
 * digits; at least one digit) into `acc` (changed in place and returned; the CLI starts each
 * command with a fresh object). Throws a {@link UsageError} for another form,
 * a value beyond ±(2^53 − 1) or a name given twice (own keys only: `__proto__` is a name like any
 * other, and is then reported as an unknown parameter).
 */
export function parseSet(spec: string, acc: Record<string, number> = {}, flag = '--set'): Record<string, number> {
  const m = /^([A-Za-z_][A-Za-z0-9_]*)=(-?(?:0x_*[0-9a-fA-F][0-9a-fA-F_]*|0b_*[01][01_]*|_*[0-9][0-9_]*))$/.exec(spec.trim());
  if (!m) throw new UsageError(`${flag} expects NAME=INTEGER, got '${echo(spec)}'`);
  const n = parseInteger(m[2]!);
  if ('error' in n) throw new UsageError(`${flag} ${m[1]}: ${n.error}`);
  if (Object.hasOwn(acc, m[1]!)) throw new UsageError(`${flag} ${m[1]} is given twice`);
  // Added in place (a copy per flag would make 30,000 flags quadratic); defineProperty: an own
  // property even for `__proto__` (assignment would set the prototype).
  Object.defineProperty(acc, m[1]!, { value: n.value, enumerable: true, writable: true, configurable: true });
  return acc;
}
