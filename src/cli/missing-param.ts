/**
 * A PTX kernel that reads a parameter the launch gives no value (`--param`): the translation leaves
 * a trap where the value is needed (ptxi/translate.ts). When one schedule of the kernel reaches it,
 * the kernel cannot run with this input: that is the user's input error (exit 2, one line naming
 * the parameters and the flag), not a finding about the kernel.
 */
import type { Program } from '../machine/program.js';
import { simulate } from '../sim/simulate.js';
import { UsageError } from './errors.js';

/** The trap message of a parameter (or parameter field) without a value (ptxi/translate.ts). */
const MISSING = /has no value: give --param ([^\s=]+)=VALUE/;

/** True when `x` (a kernel's IR) holds a trap whose message is a missing parameter's. */
function hasMissingTrap(x: unknown, seen: Set<object> = new Set()): boolean {
  if (typeof x !== 'object' || x === null || seen.has(x)) return false;
  seen.add(x);
  const o = x as Record<string, unknown>;
  if (o.op === 'trap' && typeof o.message === 'string') return MISSING.test(o.message);
  const vals = Array.isArray(x) ? x : x instanceof Map ? [...x.values()] : Object.values(o);
  return vals.some((v) => hasMissingTrap(v, seen));
}

/** The parameter names a missing-parameter trap message names, in its order. */
export function missingNames(message: string): string[] {
  const m = MISSING.exec(message);
  if (!m) return [];
  const many = /the kernel reads \d+ parameters that have none: ([^)]*)\)/.exec(message);
  if (many) return many[1]!.split(', ');
  const fields = /the kernel reads \d+ fields of (\S+) that have none: bytes ([\d, ]+)\)/.exec(message);
  if (fields) return fields[2]!.split(', ').map((b) => `${fields[1]!}+${b}`);
  return [m[1]!];
}

/**
 * Throws a {@link UsageError} when a run of `program` stops at a parameter without a value: the
 * place it is first needed, the parameters and the flag that gives them.
 */
export function refuseMissingParams(program: Program): void {
  if (!hasMissingTrap(program.kernel)) return;
  const r = simulate(program, { maxSteps: 100_000, timeoutMs: 5_000 });
  const d = r.diagnostics.find((x) => MISSING.test(x.diag.message));
  if (!d) return;
  const names = missingNames(d.diag.message);
  const field = /the field at byte (\d+) of parameter/.exec(d.diag.message);
  const base = names[0]!.replace(/\+\d+$/, '');
  const what = field ? (names.length > 1 ? `the fields at bytes ${names.map((n) => n.slice(base.length + 1)).join(', ')} of kernel parameter ${base}` : `the field at byte ${field[1]} of kernel parameter ${base}`) : names.length > 1 ? `kernel parameters ${names.join(', ')}` : `kernel parameter ${names[0]!}`;
  const at = d.loc ? `${d.loc.file ?? program.kernel.name}:${d.loc.line}:${d.loc.col}: ` : '';
  const give = names.map((n) => `--param ${n}=VALUE`).join(' ');
  throw new UsageError(`${at}error: ${what} ${names.length > 1 ? 'have' : 'has'} no value, and a branch, an address or a count of the kernel depends on ${names.length > 1 ? 'them' : 'it'} here: give ${give}`);
}
