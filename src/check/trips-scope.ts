/**
 * Where the all-trip-counts check applies (trips.ts): the trip parameter may size nothing (no
 * barrier, buffer, count, cluster or role), and in the role code it may appear only in the bounds
 * of `for` loops and, before those loops end, as `t * N` with `t` the counter of an enclosing loop
 * that starts at 0 (zero while the trip loop inside it has not ended). Everywhere else the kernel
 * with a huge trip count would compute values that the kernel with the real one does not.
 */
import type { Expr, Kernel, SrcLoc } from '../kernel/ir.js';
import type { Instr, Program } from '../machine/program.js';
import { mentions, operandExprs, type TripLoop } from './trips-loops.js';
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
 * Whether every use of `param` in role `r`'s code is one the check can take (see the module
 * comment), or where the first one it cannot is. `loops`: the role's trip loops.
 */
export function usesInScope(p: Program, r: number, param: string, loops: readonly TripLoop[]): OutOfScope | null {
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
  // Counters of the `for` loops around the first trip loop that start at 0.
  const zeroOuter = new Set<string>();
  const first = loops.find((l) => l.end === firstEnd);
  if (first) {
    code.forEach((ins, j) => {
      if (ins.i === 'jz' && ins.loop && j < first.head && ins.to >= first.end && ins.loop.from.k === 'num' && ins.loop.from.v === 0) zeroOuter.add(rc.slots[ins.loop.slot]!);
    });
  }
  const ok = (e: Expr): boolean => {
    if (!mentions(e, param)) return true;
    if (e.k === 'bin' && e.op === '*') {
      const [a, b] = [e.a, e.b];
      if (a.k === 'var' && a.name === param && b.k === 'var' && zeroOuter.has(b.name)) return true;
      if (b.k === 'var' && b.name === param && a.k === 'var' && zeroOuter.has(a.name)) return true;
    }
    if (e.k === 'bin') return ok(e.a) && ok(e.b);
    if (e.k === 'un') return ok(e.a);
    return false;
  };
  const heads = new Set(loops.map((l) => l.head));
  for (let pc = 0; pc < code.length; pc++) {
    if (pc >= firstEnd) break;
    const ins: Instr = code[pc]!;
    if (heads.has(pc)) continue;
    // The initialisation of a trip loop's counter (just before its head).
    if (ins.i === 'set' && heads.has(pc + 1)) continue;
    const exprs: Expr[] = ins.i === 'set' || ins.i === 'jz' ? (ins.src ? [ins.src] : []) : ins.i === 'op' ? operandExprs(ins.op) : [];
    for (const e of exprs) {
      if (!ok(e)) {
        return { why: `role ${rc.name}: ${param} is used here before its loops end (only loop bounds and t * ${param}, with t an enclosing loop's counter from 0, are)`, loc: 'loc' in ins ? ins.loc : undefined };
      }
    }
  }
  return null;
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
