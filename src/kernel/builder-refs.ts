/**
 * What every part of the TypeScript builder shares: its error, the source location of the caller
 * (the TypeScript line that built a statement or declaration), expressions and the barrier and
 * buffer reference strings `name[index]@cta` (+ a byte offset for buffers).
 */
import { evalExpr, exprNames, toExpr, type ExprLike } from './expr.js';
import type { BufRef, Expr, RedOp, RedType, SrcLoc } from './ir.js';
import { RED_OPS, redTypeProblem, type RedForm } from './reduction.js';

/** A builder misuse: bad reference or expression syntax. */
export class BuildError extends Error {}

/** A TypeError `fn: name must be what, got …` (the kernel layer's own: it imports no other layer). */
export function argError(fn: string, name: string, what: string, v: unknown): never {
  const got = v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v === 'number' ? `a number (${v})` : typeof v === 'object' ? 'an object of another shape' : `a ${typeof v}`;
  throw new TypeError(`${fn}: ${name} must be ${what}, got ${v === undefined ? 'undefined' : got}`);
}

/** `v` is a non-null object (not an array) that has every key of `keys`. */
export const isRecord = (v: unknown, keys: readonly string[] = []): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v) && keys.every((k) => k in v);

/** Checks that `v` is an object (an options bag: undefined is allowed when `optional`). */
export function objectArg(fn: string, name: string, v: unknown, optional = true): void {
  if (!(optional && v === undefined) && !isRecord(v)) argError(fn, name, optional ? 'an object (or left out)' : 'an object', v);
}

/**
 * The `.cta_group::2` option `{ pair }` of builder method `fn` (the sketch's `.cta_group::2`
 * suffix): `{ pair: true }` for the IR when it is set; a TypeError for an options bag that is not
 * an object or a `pair` that is not a boolean.
 */
export function pairOpt(fn: string, o: unknown): { pair?: true } {
  objectArg(fn, 'options', o);
  const pair = (o as { pair?: unknown } | undefined)?.pair;
  if (pair !== undefined && typeof pair !== 'boolean') argError(fn, 'options.pair', 'a boolean (true: .cta_group::2)', pair);
  return pair ? { pair: true } : {};
}

/** The builder's modules (`builder.ts`, `builder-*.ts`), whose frames the caller's location skips. */
const BUILDER_FRAME = /\/kernel\/builder(?:-[a-z]+)?\./;

/** The source location of the first stack frame outside the builder: the line that called it. */
export function callerLoc(): SrcLoc {
  const stack = new Error().stack?.split('\n') ?? [];
  for (const line of stack.slice(1)) {
    if (BUILDER_FRAME.test(line)) continue;
    const m = /\(?([^()\s]+):(\d+):(\d+)\)?\s*$/.exec(line);
    if (m) return { file: m[1]!.replace(/^file:\/\//, ''), line: Number(m[2]), col: Number(m[3]) };
  }
  return { line: 0, col: 0 };
}

/** An expression from its string, number or AST form; {@link BuildError} when it does not parse. */
export function ex(e: ExprLike): Expr {
  // Checked here, not deep inside instantiate: NaN was "Invalid array length", an object
  // "compileExpr(...) is not a function".
  if (typeof e === 'number' && !Number.isSafeInteger(e)) throw new BuildError(`bad expression ${e}: a number must be an integer within ±(2^53 − 1)`);
  if (typeof e !== 'number' && typeof e !== 'string' && !(isRecord(e) && typeof e.k === 'string')) {
    argError('builder', 'an expression', "an integer, a string such as 'S * 2' or an Expr", e);
  }
  try {
    return toExpr(e);
  } catch (err) {
    throw new BuildError(`bad expression '${String(e)}': ${(err as Error).message}`);
  }
}

/** Parses `name[index]@cta`, `name[index]` or `name` (index 0). */
export function parseRef(ref: string): { name: string; index: Expr; cta?: Expr } {
  const m = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:\[(.*)\])?\s*(?:@\s*(.+))?$/.exec(ref);
  if (!m) throw new BuildError(`bad reference '${ref}': expected name[index] or name[index]@cta`);
  const out: { name: string; index: Expr; cta?: Expr } = { name: m[1]!, index: m[2] === undefined ? { k: 'num', v: 0 } : ex(m[2]) };
  if (m[3] !== undefined) out.cta = ex(m[3]);
  return out;
}

/**
 * Parses a buffer reference: `name[index]@cta` as {@link parseRef}, optionally followed by a byte
 * offset into the element, `+ OFF` (`A[s] + 4096`, `A[0]@1 + TILE`).
 */
export function parseBufRef(ref: string): BufRef {
  let depth = 0;
  for (let i = 0; i < ref.length; i++) {
    const c = ref[i];
    if (c === '[' || c === '(') depth++;
    else if (c === ']' || c === ')') depth--;
    else if (c === '+' && depth === 0) {
      const out: BufRef = parseRef(ref.slice(0, i));
      out.offset = ex(ref.slice(i + 1));
      return out;
    }
  }
  return parseRef(ref);
}

export { RED_OPS };

/** `redop` when it is a reduction operator ({@link RED_OPS}); a TypeError naming `fn` otherwise. */
export function redOp(fn: string, redop: unknown): RedOp {
  if (typeof redop === 'string' && (RED_OPS as readonly string[]).includes(redop)) return redop as RedOp;
  throw new TypeError(`${fn}: redop must be one of ${RED_OPS.join(', ')}, got ${typeof redop === 'string' ? `'${redop}'` : typeof redop}`);
}

/**
 * The builder's `redop` and `redType` of a reduction of `form` (kernel/reduction.ts; PTX ISA
 * §9.7.13.7, §9.7.9.25.4.2): each checked, the type only with an operator that takes it; a
 * TypeError naming `fn` otherwise.
 */
export function redFields(fn: string, form: RedForm, o: { redop?: unknown; redType?: unknown }): { redop?: RedOp; redType?: RedType } {
  const out: { redop?: RedOp; redType?: RedType } = {};
  if (o.redop !== undefined) out.redop = redOp(fn, o.redop);
  if (o.redType === undefined) return out;
  if (!out.redop) throw new TypeError(`${fn}: redType needs redop (the PTX type suffix follows the operator: .add.u32)`);
  const problem = typeof o.redType === 'string' ? redTypeProblem(form, out.redop, o.redType, o.redType === 'f16' || o.redType === 'bf16') : `redType must be a string, got ${typeof o.redType}`;
  if (problem) throw new TypeError(`${fn}: ${problem}`);
  out.redType = o.redType as RedType;
  return out;
}

/**
 * `e`, checked against an operand rule of op-limits.ts (PTX ISA) when it is a constant: a
 * TypeError `fn: …` when the rule rejects it. An expression of parameters is checked when the
 * kernel is instantiated (a KernelError at the caller's line).
 */
export function ruled(fn: string, e: Expr, rule: (v: number) => string | null): Expr {
  if (exprNames(e).size > 0) return e;
  let v: number;
  try {
    v = evalExpr(e, () => undefined);
  } catch {
    return e; // a fault of the expression itself: reported where it runs
  }
  const why = rule(v);
  if (why) throw new TypeError(`${fn}: ${why}`);
  return e;
}
