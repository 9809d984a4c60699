/**
 * Short source-like text of operations (timelines, traces, messages): each operation module's
 * `text` with references written as in a sketch.
 */
import { showExpr } from '../kernel/expr.js';
import type { Expr, Op } from '../kernel/ir.js';
import { opDef } from './ops/index.js';

function refTextOf(r: { name: string; index: Expr; cta?: Expr; offset?: Expr }, scalars?: ReadonlySet<string>): string {
  const cta = r.cta ? (r.cta.k === 'num' || r.cta.k === 'var' ? showExpr(r.cta) : `(${showExpr(r.cta)})`) : '';
  const scalar = !!scalars?.has(r.name) && r.index.k === 'num' && r.index.v === 0;
  const off = r.offset ? ` + ${r.offset.k === 'bin' && r.offset.op !== '*' && r.offset.op !== '/' && r.offset.op !== '%' ? `(${showExpr(r.offset)})` : showExpr(r.offset)}` : '';
  return `${scalar ? r.name : `${r.name}[${showExpr(r.index)}]`}${off}${r.cta ? `@${cta}` : ''}`;
}

/**
 * Short source-like text of an operation, for timelines and traces (each operation module's
 * `text`). A barrier or buffer named in `scalars` (declared without a length) is written without
 * its `[0]`.
 */
export function opText(op: Op, scalars?: ReadonlySet<string>): string {
  return opDef(op.op).text(op, { ref: (r) => refTextOf(r, scalars), expr: showExpr });
}
