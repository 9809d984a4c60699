/**
 * A role's variable frame while the role is compiled (compile-role.ts): the builtins' slots, then
 * the role's variables in order of first assignment; which names are declared so far; and the
 * role's expressions compiled to closures over the frame, where a launch parameter is a constant
 * and an expression of parameters only is evaluated once (unless it faults: that is left to the
 * step that runs it, where the machine reports it). Unknown names and assignments to parameters
 * are {@link KernelError}s at the expression.
 */
import { compileExpr, evalExpr, exprNames, foldExpr, type CompiledExpr } from '../kernel/expr.js';
import type { Expr, SrcLoc } from '../kernel/ir.js';
import { BUILTINS, KernelError } from './program.js';

/** The frame of one role being compiled (see the module comment). */
export interface RoleFrame {
  /** Frame slot names: the builtins, then the role's variables. */
  readonly slots: string[];
  /** Names readable so far: the builtins and the variables assigned before. */
  readonly declared: Set<string>;
  /** The value of an expression of parameters only (null: it reads a variable, or faults: reported where it runs). */
  constOf(e: Expr): number | null;
  /** `e` compiled over the frame; every name it reads must be declared or a parameter. */
  cx(e: Expr, loc: SrcLoc): CompiledExpr;
  /** The slot of variable `name`, declared (given a slot) on its first assignment. */
  declare(name: string, loc?: SrcLoc): number;
}

/** The frame of role `role` (its name, for messages) over launch parameters `params`. */
export function roleFrame(role: string, params: Record<string, number>): RoleFrame {
  const slots: string[] = [...BUILTINS];
  const declared = new Set<string>(BUILTINS);
  const slotOf = (name: string, loc?: SrcLoc): number | { const: number } => {
    const i = slots.indexOf(name);
    if (i >= 0) return i;
    if (name in params) return { const: params[name]! };
    throw new KernelError(`unknown name '${name}' in role ${role}`, loc, 'unknown-name');
  };
  const constOf = (e: Expr): number | null => {
    for (const n of exprNames(e)) if (declared.has(n) || !(n in params)) return null;
    try {
      return evalExpr(e, (n) => params[n]);
    } catch {
      return null;
    }
  };
  const cx = (e: Expr, loc: SrcLoc): CompiledExpr => {
    for (const n of exprNames(e)) {
      if (!declared.has(n) && !(n in params)) {
        const vloc = findVarLoc(e, n) ?? loc;
        throw new KernelError(`unknown name '${n}' in role ${role}`, vloc, 'unknown-name');
      }
    }
    const fn = compileExpr(e, (n) => slotOf(n, loc));
    // An expression of parameters only is a constant: evaluate it once (unless it faults, which
    // must then happen at run time, where the machine reports it).
    let constant = true;
    for (const n of exprNames(e)) if (typeof slotOf(n, loc) === 'number') constant = false;
    if (constant && e.k !== 'num') {
      try {
        const v = fn([]);
        return () => v;
      } catch {
        return fn;
      }
    }
    return fn;
  };
  const declare = (name: string, loc?: SrcLoc): number => {
    if (name in params) throw new KernelError(`'${name}' is a parameter and cannot be assigned`, loc, 'assign-param');
    let i = slots.indexOf(name);
    if (i < 0) {
      slots.push(name);
      i = slots.length - 1;
    }
    declared.add(name);
    return i;
  };
  return { slots, declared, constOf, cx, declare };
}

/** Where variable `name` is first written in `e`, for messages. */
function findVarLoc(e: Expr, name: string): SrcLoc | undefined {
  return foldExpr<SrcLoc | undefined>(e, (x) => (x.k === 'var' && x.name === name ? x.loc : undefined), (_x, a, b) => a ?? b);
}
