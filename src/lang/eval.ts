/**
 * Constant evaluation for the lowering: an expression's value with the parameters' defaults, the
 * hint of an `E-arith` diagnostic, the value of a literal expression.
 */
import { EvalFault } from '../kernel/arith.js';
import { evalExpr, foldExpr } from '../kernel/expr.js';
import type { Expr } from '../kernel/ir.js';

/** True when every name `e` reads satisfies `ok` (so evaluating it cannot throw on a name). */
export function namesOnly(e: Expr, ok: (name: string) => boolean): boolean {
  return foldExpr<boolean>(e, (x) => x.k === 'num' || ok(x.name), (_x, a, b) => a && (b ?? true));
}

/** The value of `e` over `env`: `{ v }`, `{ fault }` (the arithmetic has no exact result) or undefined (a name is unknown). */
export function tryEval(e: Expr, env: (name: string) => number | undefined): { v: number } | { fault: string } | undefined {
  if (!namesOnly(e, (n) => env(n) !== undefined)) return undefined;
  try {
    return { v: evalExpr(e, env) };
  } catch (err) {
    if (err instanceof EvalFault) return { fault: err.message };
    throw err;
  }
}

/** The hint of an `E-arith` diagnostic for the fault `msg` (from `arith.ts`). */
export function arithHint(msg: string): string {
  if (/by zero/.test(msg)) return "the divisor is 0 with the parameters' defaults: change the default, or guard the division (d != 0 && n / d ...)";
  if (/^shift count/.test(msg)) return 'shift counts are 0..63 (64-bit integers)';
  return 'mbsim computes exactly with integers up to ±(2^53 − 1) = ±9007199254740991';
}

/** Value of an expression made of literals only, or undefined (also when it faults: the machine reports that at run time). */
export function literal(e: Expr): number | undefined {
  const r = tryEval(e, () => undefined);
  return r && 'v' in r ? r.v : undefined;
}
