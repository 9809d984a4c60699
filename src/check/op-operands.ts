/**
 * The expressions an operation of the IR reads, found without recursion, each with what it selects
 * (a CTA rank, a multicast mask, or neither), for the static analyses of warp-relative symmetry
 * (warp-relative.ts) and CTA symmetry on PTX (cta-relative.ts).
 */
import { foldExpr } from '../kernel/expr.js';
import type { Expr } from '../kernel/ir.js';

const isExpr = (e: unknown): e is Expr => {
  const k = (e as { k?: unknown } | null | undefined)?.k;
  return k === 'num' || k === 'var' || k === 'bin' || k === 'un';
};

/** Nesting depth of `e` (a number or variable is 1), computed without recursion. */
export function exprDepth(e: Expr): number {
  return foldExpr(e, () => 1, (_x, a, b) => 1 + Math.max(a, b ?? 0));
}

/**
 * What an operand of an operation selects: a CTA rank (a reference's `@cta`), a multicast CTA mask,
 * a buffer element (the `index` of a buffer reference: every reference but an operation's `bar`),
 * a byte offset inside that element (the `offset` of a buffer reference, ir.ts `BufRef.offset`),
 * or neither (null).
 */
export type OperandKind = 'cta' | 'mask' | 'elem' | 'off' | null;

/**
 * The expressions an operation reads (its operands, references' indices, CTAs and offsets), in field
 * order, without recursion, each with what it selects ({@link OperandKind}: the `cta` of a
 * barrier or buffer reference, the operation's `multicast` mask, the `index` and `offset` of a buffer reference;
 * the barrier reference is the operation's `bar`, kernel/ir.ts).
 */
export function opOperands(op: object): [Expr, OperandKind][] {
  const out: [Expr, OperandKind][] = [];
  /** Value, its kind, and whether it lies under the operation's `bar` (a barrier reference). */
  const todo: [unknown, OperandKind, boolean][] = [[op, null, false]];
  while (todo.length) {
    const [v, kind, bar] = todo.pop()!;
    if (!v || typeof v !== 'object') continue;
    if (isExpr(v)) out.push([v, kind]);
    else if (Array.isArray(v)) for (let i = v.length - 1; i >= 0; i--) todo.push([v[i], null, bar]);
    else {
      const isRef = typeof (v as { name?: unknown }).name === 'string' && isExpr((v as { index?: unknown }).index);
      const xs = Object.entries(v);
      for (let i = xs.length - 1; i >= 0; i--) {
        const [k, x] = xs[i]!;
        const under = bar || (v === op && k === 'bar');
        const kind: OperandKind = isRef && k === 'cta' ? 'cta' : isRef && !bar && k === 'index' ? 'elem' : isRef && !bar && k === 'offset' ? 'off' : v === op && k === 'multicast' ? 'mask' : null;
        todo.push([x, kind, under]);
      }
    }
  }
  return out;
}

/** The expressions an operation reads (its operands, references' indices, CTAs and offsets), in field order, without recursion. */
export function opExprs(op: object): Expr[] {
  return opOperands(op).map(([e]) => e);
}
