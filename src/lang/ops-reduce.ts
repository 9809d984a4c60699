/**
 * The reduction operator and element type of `red.async.OP.TYPE` and
 * `cp.reduce.async.bulk{.tensor}….OP.TYPE` (PTX ISA §9.7.13.7, §9.7.9.25.4.2, §9.7.9.27.1.3): the
 * spellings the sketch accepts, and the operator and type they keep on the operation (`redop`,
 * `redType`; they change no synchronization, only the operation's text). Which operator takes
 * which type is kernel/reduction.ts's table.
 */
import { RED_OPS, RED_SECTION, redTypeProblem, type RedForm } from '../kernel/reduction.js';
import type { RedOp } from '../kernel/ir.js';
import type { OpSpec } from './ops.js';
import type { Qualified } from './ops-spelling.js';

const REDOPS: readonly string[] = RED_OPS;

/** Each accepted spelling before `.OP`, longest first, with the canonical operation it names. */
const BASES: readonly (readonly [string, string])[] = [
  ['red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes', 'red.async'],
  ['red.async', 'red.async'],
  ['cp.reduce.async.bulk.global.shared::cta.bulk_group', 'cp.reduce.async.bulk'],
  ['cp.reduce.async.bulk.tensor', 'cp.reduce.async.bulk.tensor'],
  ['cp.reduce.async.bulk', 'cp.reduce.async.bulk'],
];

/** Words that start a longer accepted spelling rather than name an operator (`red.async.relaxed…`). */
const QUALIFIERS = new Set(['relaxed', 'cluster', 'shared', 'mbarrier', 'global', 'bulk_group', 'tensor', 'tile', 'weak']);

/** The accepted spellings with an operator (aliases of the canonical names; did-you-mean and completion). */
export const REDUCTION_ALIASES: Record<string, string> = Object.fromEntries(BASES.flatMap(([b, name]) => REDOPS.map((r) => [`${b}.${r}`, name])));

/**
 * `red.async.OP{.TYPE}`, `red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.OP{.TYPE}`,
 * `cp.reduce.async.bulk{.tensor}.OP{.TYPE}` or `cp.reduce.async.bulk.global.shared::cta.bulk_group.OP{.noftz}{.TYPE}`
 * (PTX ISA §9.7.13.7, §9.7.9.25.4.2): the operation with `redop: OP` and `redType: TYPE`. An
 * operator that is not one of {@link REDOPS}, or a type that operator does not take there
 * (kernel/reduction.ts), is `invalid`, with `invalidAt` its columns in the mnemonic. Undefined when
 * `mnemonic` is none of these forms (`get` finds a canonical operation by name).
 */
export function parseReduction(mnemonic: string, get: (name: string) => OpSpec): Qualified | undefined {
  for (const [base, name] of BASES) {
    if (!mnemonic.startsWith(`${base}.`)) continue;
    const words = mnemonic.slice(base.length + 1).split('.');
    const op = words[0]!;
    const spec = get(name);
    if (!REDOPS.includes(op)) {
      if (!/^[a-z][a-z0-9_]*$/.test(op) || QUALIFIERS.has(op)) return undefined;
      return {
        spec,
        invalid: `unknown reduction operator .${op}: ${name} takes ${REDOPS.map((r) => `.${r}`).join(', ')} (PTX ISA ${RED_SECTION[name as RedForm]})`,
        invalidAt: [base.length, base.length + 1 + op.length],
      };
    }
    return typed(spec, name as RedForm, op as RedOp, words.slice(1), base.length + 1 + op.length);
  }
  return undefined;
}

/** The operation of operator `op` followed by `rest` (`[]`, `['u32']`, `['noftz', 'f16']`), which starts at column `at` of the mnemonic. */
function typed(spec: OpSpec, form: RedForm, op: RedOp, rest: string[], at: number): Qualified {
  if (!rest.length) return { spec, fields: { redop: op } };
  const noftz = rest[0] === 'noftz';
  const type = noftz ? rest[1] : rest[0];
  const end = at + rest.reduce((n, w) => n + 1 + w.length, 0);
  const problem = type === undefined ? `.noftz needs a type after it: ${form}.${op}.noftz.f16 (PTX ISA ${RED_SECTION[form]})`
    : rest.length > (noftz ? 2 : 1) ? `${form}.${op}.${rest.join('.')}: one type follows the operator (PTX ISA ${RED_SECTION[form]})`
      : redTypeProblem(form, op, type, noftz);
  // The caret: under the type (or what follows the operator when it is not one type).
  const from = problem && type !== undefined && rest.length === (noftz ? 2 : 1) ? end - type.length - 1 : at;
  if (problem) return { spec, invalid: problem, invalidAt: [from, end] };
  return { spec, fields: { redop: op, redType: type! } };
}
