/**
 * Statements that a branch on kernel parameters alone leaves out of this instance: the sketch's
 * `if C == 1:` around the single-CTA arrive of a kernel written for any cluster size. Such code is
 * a specialization (a template parameter in the CUDA source), not a forgotten arrive, so the static
 * `unreachable-arrive` warning is reported for it only where it explains a hang (check.ts).
 * Reads the kernel IR's structured `if` statements; unstructured control flow (the PTX front end's
 * labels and gotos, where parameters are already constants) names nothing here.
 */
import { evalExpr, exprNames, showExpr } from '../kernel/expr.js';
import type { Expr, Kernel, SrcLoc, Stmt } from '../kernel/ir.js';

/** Why a statement is left out: the deciding condition's text and where it is written. */
export interface ParamBranch {
  cond: string;
  loc: SrcLoc;
}

const key = (l: SrcLoc) => `${l.file ?? ''}:${l.line}:${l.col}`;

/**
 * The statements of `kernel`'s roles (by `file:line:col` of their source location) inside a branch
 * that is not taken with `params` and whose condition reads only kernel parameters and numbers
 * (no loop, local or builtin variable, none shadowed by a `let` or loop variable of the same name),
 * each with the innermost such condition. A condition that cannot be evaluated names nothing.
 */
export function paramExcluded(kernel: Kernel, params: Readonly<Record<string, number>>): Map<string, ParamBranch> {
  const out = new Map<string, ParamBranch>();
  const isParam = new Set(kernel.params.map((p) => p.name));
  const mark = (body: readonly Stmt[], why: ParamBranch) => walk(body, (s) => { if (!out.has(key(s.loc))) out.set(key(s.loc), why); });
  const decided = (cond: Expr, bound: ReadonlySet<string>): boolean | null => {
    const names = exprNames(cond);
    for (const n of names) if (!isParam.has(n) || bound.has(n)) return null;
    try {
      return evalExpr(cond, (n) => params[n]) !== 0;
    } catch {
      return null;
    }
  };
  const visit = (body: readonly Stmt[], bound: Set<string>): void => {
    for (const s of body) {
      if (s.s === 'let') bound.add(s.name);
      else if (s.s === 'for') visit(s.body, new Set([...bound, s.var]));
      else if (s.s === 'elect') visit(s.body, new Set(bound));
      else if (s.s === 'if') {
        const taken = decided(s.cond, bound);
        const why = { cond: showExpr(s.cond), loc: s.loc };
        if (taken === false) mark(s.then, why);
        if (taken === true && s.else) mark(s.else, why);
        visit(s.then, new Set(bound));
        if (s.else) visit(s.else, new Set(bound));
      }
    }
  };
  for (const r of kernel.roles) visit(r.body, new Set());
  return out;
}

/** Calls `f` on every statement of `body`, nested ones included. */
function walk(body: readonly Stmt[], f: (s: Stmt) => void): void {
  for (const s of body) {
    f(s);
    if (s.s === 'for' || s.s === 'elect') walk(s.body, f);
    else if (s.s === 'if') {
      walk(s.then, f);
      if (s.else) walk(s.else, f);
    }
  }
}
