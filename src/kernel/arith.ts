/**
 * The one integer arithmetic of kernel expressions: every evaluator (the closures the machine runs,
 * static evaluation when instantiating, constant folding in the sketch language, `--set` values)
 * goes through these functions.
 *
 * Values are JavaScript numbers that hold integers exactly: |x| ≤ 2^53 − 1
 * ({@link MAX_EXACT}). Operators follow C on 64-bit integers (PTX `.s64`): `/` truncates toward zero,
 * `%` takes the dividend's sign, shifts take a count 0..63, `>>` is arithmetic, `& | ^ ~` are
 * two's-complement. Where C would wrap or be undefined, and wherever a result leaves ±(2^53 − 1), the
 * operation throws an {@link EvalFault} whose message names the cause ("integer overflow:
 * 9007199254740991 + 2 exceeds 2^53 − 1", "division by zero", "shift count 70 out of range 0..63"),
 * never a rounded or wrapped value. Operands are exact integers (literals, parameters and frame
 * values are checked when they enter), so checking each result keeps every value exact: a double
 * sum or product of two exact integers is exact whenever the true result is within ±(2^53 − 1), and
 * otherwise rounds to at least 2^53 in magnitude, which the range check catches.
 */
import type { BinOp } from './ir.js';

/** The largest integer mbsim computes with: 2^53 − 1 (`Number.MAX_SAFE_INTEGER`). */
export const MAX_EXACT = Number.MAX_SAFE_INTEGER;

/**
 * An expression that cannot be evaluated exactly (division or remainder by zero, a shift count
 * outside 0..63, a result beyond ±(2^53 − 1), a loop step of zero). Thrown by the evaluators; the
 * machine turns it into an `arith` diagnostic at the operation, the sketch language into `E-arith`.
 */
export class EvalFault extends Error {}

/** Throws the overflow fault of `a op b` whose true result is `r` (rounded). */
export function overflow(a: number | string, op: string, b: number | string, r: number): never {
  const bound = r > 0 ? 'exceeds 2^53 − 1' : 'is below −(2^53 − 1)';
  throw new EvalFault(`integer overflow: ${a} ${op} ${b} ${bound}`);
}

const inRange = (r: number): boolean => r <= MAX_EXACT && r >= -MAX_EXACT;

/** a + b, exact or an overflow fault. */
export function add(a: number, b: number): number {
  const r = a + b;
  return inRange(r) ? r : overflow(a, '+', b, r);
}

/** a − b, exact or an overflow fault. */
export function sub(a: number, b: number): number {
  const r = a - b;
  return inRange(r) ? r : overflow(a, '-', b, r);
}

/** a × b, exact or an overflow fault. */
export function mul(a: number, b: number): number {
  const r = a * b;
  return inRange(r) ? r || 0 : overflow(a, '*', b, r); // || 0: no −0
}

/** a / b truncated toward zero (C); `division by zero` when b is 0. */
export function div(a: number, b: number): number {
  if (b === 0) throw new EvalFault(`division by zero: ${a} / 0`);
  // Below 2^31 the double quotient is far from rounding across an integer; beyond, BigInt is exact.
  if ((a | 0) === a && (b | 0) === b) return Math.trunc(a / b) || 0;
  return Number(BigInt(a) / BigInt(b));
}

/** a % b with the dividend's sign (C; exact for doubles); `remainder by zero` when b is 0. */
export function rem(a: number, b: number): number {
  if (b === 0) throw new EvalFault(`remainder by zero: ${a} % 0`);
  return a % b || 0;
}

function shiftCount(op: string, a: number, b: number): void {
  if (!(b >= 0 && b <= 63)) throw new EvalFault(`shift count ${b} out of range 0..63 in ${a} ${op} ${b}`);
}

/** a << b (a × 2^b); the count must be 0..63 and the result within ±(2^53 − 1). */
export function shl(a: number, b: number): number {
  shiftCount('<<', a, b);
  const r = a * 2 ** b;
  return inRange(r) ? r : overflow(a, '<<', b, r);
}

/** a >> b, arithmetic (⌊a / 2^b⌋, exact); the count must be 0..63. */
export function shr(a: number, b: number): number {
  shiftCount('>>', a, b);
  return Math.floor(a / 2 ** b) || 0;
}

/** `&`, `|`, `^` on 64-bit two's complement (exact beyond the 32 bits of JavaScript's own operators). */
export function bitwise(op: '&' | '|' | '^', a: number, b: number): number {
  if ((a | 0) === a && (b | 0) === b) return op === '&' ? a & b : op === '|' ? a | b : a ^ b;
  const x = BigInt(a);
  const y = BigInt(b);
  const r = Number(BigInt.asIntN(64, op === '&' ? x & y : op === '|' ? x | y : x ^ y));
  return inRange(r) ? r : overflow(a, op, b, r);
}

/** Unary `-`, `!`, `~` (`~a` = −a − 1, which leaves the range only for a = 2^53 − 1). */
export function unary(op: '-' | '!' | '~', a: number): number {
  if (op === '-') return a === 0 ? 0 : -a;
  if (op === '!') return a ? 0 : 1;
  const r = -a - 1;
  if (!inRange(r)) throw new EvalFault(`integer overflow: ~${a} is below −(2^53 − 1)`);
  return r;
}

/**
 * Applies a binary operator with the semantics above. `&&` and `||` here see both operands; the
 * evaluators short-circuit them before calling (C: the right operand is not evaluated).
 */
export function applyBin(op: BinOp, a: number, b: number): number {
  switch (op) {
    case '+': return add(a, b);
    case '-': return sub(a, b);
    case '*': return mul(a, b);
    case '/': return div(a, b);
    case '%': return rem(a, b);
    case '<<': return shl(a, b);
    case '>>': return shr(a, b);
    case '&':
    case '|':
    case '^': return bitwise(op, a, b);
    case '==': return a === b ? 1 : 0;
    case '!=': return a !== b ? 1 : 0;
    case '<': return a < b ? 1 : 0;
    case '<=': return a <= b ? 1 : 0;
    case '>': return a > b ? 1 : 0;
    case '>=': return a >= b ? 1 : 0;
    case '&&': return a && b ? 1 : 0;
    case '||': return a || b ? 1 : 0;
  }
}

/** Throws {@link EvalFault} when a loop step is zero (the loop would never end). */
export function nonZeroStep(step: number): number {
  if (step === 0) throw new EvalFault('a loop step of 0');
  return step;
}

/** The result of {@link parseInteger}: the value, or why the text is not an exact integer. */
export type IntegerParse = { value: number } | { error: string };

const INTEGER = /^-?(?:0[xX][0-9a-fA-F][0-9a-fA-F_]*|0[bB][01][01_]*|\d[\d_]*)$/;

/**
 * Reads an integer literal as the sketch language and `--set` write it: decimal, `0x` hex or `0b`
 * binary, `_` separators, an optional leading `-`. Exact: a literal beyond ±(2^53 − 1) is an error
 * (never rounded), as is anything that is not such a literal.
 */
export function parseInteger(text: string): IntegerParse {
  if (text.length <= 15 && /^\d+$/.test(text)) return { value: Number(text) }; // the common case: always exact
  if (!INTEGER.test(text)) return { error: `'${text.length > 40 ? `${text.slice(0, 40)}…` : text}' is not an integer` };
  const neg = text.startsWith('-');
  const body = (neg ? text.slice(1) : text).replace(/_/g, '');
  const big = BigInt(body.replace(/^0[xX]/, '0x').replace(/^0[bB]/, '0b'));
  if (big > BigInt(MAX_EXACT)) {
    const shown = text.length > 40 ? `${text.slice(0, 40)}…` : text;
    return { error: `integer ${shown} is outside the exact range ±(2^53 − 1)` };
  }
  const v = Number(big);
  return { value: neg && v !== 0 ? -v : v };
}
