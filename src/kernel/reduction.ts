/**
 * The reductions of `red.async` (PTX ISA §9.7.13.7) and `cp.reduce.async.bulk{.tensor}` (PTX ISA
 * §9.7.9.25.4.2, §9.7.9.27.1.3): their operators, their element types, and which operator takes
 * which type, the one table the sketch language, the PTX front end and the builder check. The
 * operator and type change no synchronization; operations keep them for their text.
 */
import type { RedOp, RedType } from './ir.js';

/** The reduction operators (PTX ISA §9.7.13.7, §9.7.9.25.4.2). */
export const RED_OPS: readonly RedOp[] = ['add', 'min', 'max', 'inc', 'dec', 'and', 'or', 'xor'];

/** Every element type a reduction of either instruction takes (PTX ISA §9.7.9.25.4.2). */
export const RED_TYPES: readonly RedType[] = ['u32', 's32', 'u64', 's64', 'b32', 'b64', 'f16', 'bf16', 'f32', 'f64'];

/**
 * The reductions with a type: `red.async` (its `.mbarrier::complete_tx::bytes` form, into a peer's
 * shared memory) and `cp.reduce.async.bulk` (its `.global.shared::cta.bulk_group` form).
 * `cp.reduce.async.bulk.tensor` takes no type: the tensor map gives it.
 */
export type RedForm = 'red.async' | 'cp.reduce.async.bulk' | 'cp.reduce.async.bulk.tensor';

/** The PTX ISA section of each form. */
export const RED_SECTION: Record<RedForm, string> = { 'red.async': '§9.7.13.7', 'cp.reduce.async.bulk': '§9.7.9.25.4.2', 'cp.reduce.async.bulk.tensor': '§9.7.9.27.1.3' };

const BITS: RedOp[] = ['and', 'or', 'xor'];
/**
 * The types each operator takes, per form: PTX ISA §9.7.13.7's syntax for `red.async` (`.inc` /
 * `.dec`: `.u32`; `.min` / `.max`: `.u32`, `.s32`; `.and` / `.or` / `.xor`: `.b32`; `.add`:
 * `.u32`, `.s32`, `.u64`, and `.s64`, which ptxas 13.0 accepts too) and §9.7.9.25.4.2's table of
 * `.redOp` and element type for a `.global` destination (ptxas 13.0 agrees with every entry).
 */
const TYPES: Record<'red.async' | 'cp.reduce.async.bulk', Record<RedOp, readonly RedType[]>> = {
  'red.async': {
    add: ['u32', 's32', 'u64', 's64'], min: ['u32', 's32'], max: ['u32', 's32'], inc: ['u32'], dec: ['u32'],
    ...Object.fromEntries(BITS.map((b) => [b, ['b32']])) as Record<'and' | 'or' | 'xor', RedType[]>,
  },
  'cp.reduce.async.bulk': {
    add: ['u32', 's32', 'u64', 'f32', 'f64', 'f16', 'bf16'],
    min: ['u32', 's32', 'u64', 's64', 'f16', 'bf16'], max: ['u32', 's32', 'u64', 's64', 'f16', 'bf16'],
    inc: ['u32'], dec: ['u32'],
    ...Object.fromEntries(BITS.map((b) => [b, ['b32', 'b64']])) as Record<'and' | 'or' | 'xor', RedType[]>,
  },
};

/** The types `op` of `form` takes (none for the tensor form). */
export function redTypesOf(form: RedForm, op: RedOp): readonly RedType[] {
  return form === 'cp.reduce.async.bulk.tensor' ? [] : TYPES[form][op];
}

/**
 * Why `form.op{.noftz}.type` is not a valid PTX reduction, or undefined when it is (PTX ISA
 * §9.7.13.7, §9.7.9.25.4.2: `.add` of `.f16` / `.bf16` needs `.noftz`, and nothing else takes it,
 * as ptxas 13.0 says; §9.7.9.27.1.3: the tensor form takes no type). `type` is a word the front
 * end read (`u16` is reported as unknown).
 */
export function redTypeProblem(form: RedForm, op: RedOp, type: string, noftz = false): string | undefined {
  const sec = `(PTX ISA ${RED_SECTION[form]})`;
  if (form === 'cp.reduce.async.bulk.tensor') return `${form} takes no element type: its tensor map gives it ${sec}`;
  const takes = redTypesOf(form, op);
  const list = takes.map((t) => `.${t}`).join(', ');
  if (!(RED_TYPES as readonly string[]).includes(type)) return `unknown type .${type}: ${form}.${op} takes ${list} ${sec}`;
  if (!takes.includes(type as RedType)) return `${form}.${op} takes ${list}, not .${type} ${sec}`;
  const half = type === 'f16' || type === 'bf16';
  if (half && !noftz) return `${form}.add.${type} needs .noftz: write .add.noftz.${type} ${sec}`;
  if (noftz && !(op === 'add' && half)) return `.noftz is only for .add of .f16 and .bf16, not .${op}.${type} ${sec}`;
  return undefined;
}

/** The suffix an operation's text writes for its operator and type: `.add.u32`, `.add.noftz.f16`, `.min`, or nothing. */
export function redSuffix(op: RedOp | undefined, type: RedType | undefined): string {
  if (!op) return '';
  return `.${op}${type === 'f16' || type === 'bf16' ? '.noftz' : ''}${type ? `.${type}` : ''}`;
}
