/**
 * The reduction operator of `red.async.OP` and `cp.reduce.async.bulk{.tensor}….OP` (PTX ISA
 * §9.7.13.7, §9.7.9.25.4.2, §9.7.9.27.1.3): the spellings the sketch accepts, and the operator
 * they keep on the operation (`redop`; it changes no synchronization, only the operation's text).
 */
import { RED_OPS } from '../kernel/builder-refs.js';
import type { OpSpec, Qualified } from './ops.js';

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

/** The PTX sections of each canonical reduction. */
const SECTION: Record<string, string> = { 'red.async': '§9.7.13.7', 'cp.reduce.async.bulk': '§9.7.9.25.4.2', 'cp.reduce.async.bulk.tensor': '§9.7.9.27.1.3' };

/** The accepted spellings with an operator (aliases of the canonical names; did-you-mean and completion). */
export const REDUCTION_ALIASES: Record<string, string> = Object.fromEntries(BASES.flatMap(([b, name]) => REDOPS.map((r) => [`${b}.${r}`, name])));

/**
 * `red.async.OP`, `red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.OP`,
 * `cp.reduce.async.bulk{.tensor}.OP` or `cp.reduce.async.bulk.global.shared::cta.bulk_group.OP`:
 * the operation with `redop: OP`. An operator that is not one of {@link REDOPS} is `invalid`, with
 * `invalidAt` its columns in the mnemonic. Undefined when `mnemonic` is none of these forms (`get`
 * finds a canonical operation by name).
 */
export function parseReduction(mnemonic: string, get: (name: string) => OpSpec): Qualified | undefined {
  for (const [base, name] of BASES) {
    if (!mnemonic.startsWith(`${base}.`)) continue;
    const op = mnemonic.slice(base.length + 1);
    const spec = get(name);
    if (REDOPS.includes(op)) return { spec, fields: { redop: op } };
    if (!/^[a-z][a-z0-9_]*$/.test(op) || QUALIFIERS.has(op)) return undefined;
    return {
      spec,
      invalid: `unknown reduction operator .${op}: ${name} takes ${REDOPS.map((r) => `.${r}`).join(', ')} (PTX ISA ${SECTION[name]})`,
      invalidAt: [base.length, mnemonic.length],
    };
  }
  return undefined;
}
