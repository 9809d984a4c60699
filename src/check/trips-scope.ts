/**
 * Where the all-trip-counts check applies (trips.ts): the trip parameter may size nothing (no
 * barrier, buffer, count, cluster or role), and the trip loops reached before the trip loops end
 * must never end with a huge trip count. Its other uses before the trip loops end are placed by
 * trips-offset.ts (`t * N` with `t` an enclosing loop's counter, read modulo a period).
 */
import type { Expr, Kernel, SrcLoc } from '../kernel/ir.js';
import type { Program } from '../machine/program.js';
import { mentions, type TripLoop } from './trips-loops.js';
import { evalExpr } from '../kernel/expr.js';

/** Why the trip parameter cannot be treated as a trip count, or null. */
export interface OutOfScope {
  why: string;
  loc?: SrcLoc;
}

/** The kernel's declarations outside the role bodies that name `param` (sizes, counts, shapes), or null. */
export function sizedBy(kernel: Kernel, param: string): OutOfScope | null {
  let found: SrcLoc | undefined | null = null;
  const visit = (v: unknown, loc: SrcLoc | undefined, key: string) => {
    if (found !== null || !v || typeof v !== 'object' || key === 'body') return;
    if (Array.isArray(v)) return v.forEach((x) => visit(x, loc, ''));
    const o = v as Record<string, unknown>;
    const here = (o.loc as SrcLoc | undefined) ?? loc;
    if (typeof o.k === 'string' && ['num', 'var', 'bin', 'un'].includes(o.k)) {
      if (mentions(o as unknown as Expr, param)) found = here;
      return;
    }
    for (const [k, x] of Object.entries(o)) if (k !== 'loc' && k !== 'params') visit(x, here, k);
  };
  visit(kernel, kernel.loc, '');
  return found === null ? null : { why: `${param} sizes a declaration (a barrier, buffer, count, cluster or role): a trip count may only bound loops`, loc: found ?? undefined };
}

/**
 * Whether the trip loops of role `r` are ones the check can take (each reached before the trip
 * loops end starts at a value of the other parameters and is bounded by a · N + b, a ≥ 1), or
 * where the first one it cannot is; when they are, the end of the role's first unguarded trip loop
 * (Infinity without one): the pcs below it are those the first search runs, whose uses of `param`
 * trips-offset.ts places. `loops`: the role's trip loops.
 */
export function usesInScope(p: Program, r: number, param: string, loops: readonly TripLoop[]): OutOfScope | { end: number } {
  const rc = p.roles[r]!;
  const code = rc.code;
  // Pcs reached only once a trip loop of the role has ended: after an unguarded trip loop that
  // never ends with the huge count (it starts at a parameter value and its bound grows with N).
  const guardedAt = (pc: number) => code.some((ins, j) => j < pc && ((ins.i === 'jz' && !ins.loop && pc < ins.to) || (ins.i === 'jmp' && ins.to > j && pc < ins.to)));
  let firstEnd = Infinity;
  for (const l of [...loops].sort((a, b) => a.head - b.head)) {
    if (l.head >= firstEnd) continue; // reached only after the huge count's loop ended: any bounds
    const head = code[l.head]!;
    const why = head.i === 'jz' && head.loop ? unendingWhy(head.loop.from, head.loop.to, p.params, param) : 'not a for loop';
    if (why) return { why: `role ${rc.name}: a loop bounded by ${param} before its trip loops end must ${why}`, loc: head.i === 'jz' ? head.loc : undefined };
    if (!guardedAt(l.head)) firstEnd = Math.min(firstEnd, l.end);
  }
  return { end: firstEnd };
}

/**
 * Why a trip loop `range(from, to)` would end (or not start) with the huge trip count, or null:
 * `from` must be a value of the other parameters and `to` a · N + b with a ≥ 1 (parameters only).
 */
function unendingWhy(from: Expr, to: Expr, params: Record<string, number>, param: string): string | null {
  const at = (e: Expr, n: number): number | null => {
    try {
      return evalExpr(e, (name) => (name === param ? n : Object.hasOwn(params, name) ? params[name] : undefined));
    } catch {
      return null;
    }
  };
  if (mentions(from, param) || at(from, 0) === null) return `start at a value of the other parameters (not of ${param} or a variable)`;
  const h = 2 ** 30;
  const t1 = at(to, h);
  const t2 = at(to, 2 * h);
  const t0 = at(to, 0);
  if (t1 === null || t2 === null || t0 === null) return 'have a bound made of parameters only';
  const slope = (t2 - t1) / h;
  if (!Number.isInteger(slope) || slope < 1 || t1 !== t0 + slope * h) return `have a bound a · ${param} + b with a ≥ 1`;
  return null;
}
