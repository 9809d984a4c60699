/**
 * Lowering of a role's body: its statements (`for`, `choose`, `if` / `elif` / `else`, `elect`,
 * assignments and operations) over the role's variables, in source order, so a name may be read
 * only after the line that assigns it.
 */
import type { CstNode } from 'chevrotain';
import type { Expr, SrcLoc, Stmt } from '../kernel/ir.js';
import { SKETCH_CODES } from './diagnostics.js';
import { BUILTIN_NAMES, NO_SPAN, type SExpr, type Span, exprOf, isTok, node, nodes, tok, tokSpan } from './cst.js';
import type { LowerCtx, RoleLowering, Scope } from './lower-context.js';
import { opStmt } from './lower-ops.js';

/**
 * The statements of role `roleName`'s block, or undefined when any of them failed to lower (the
 * diagnostics are pushed onto `c.diags`). `ranks`: the CTA ranks the role runs in, when known.
 */
export function lowerRole(c: LowerCtx, block: CstNode | undefined, roleName: string, ranks?: number[]): Stmt[] | undefined {
  const { paramNames, arrays } = c;
  const vars = new Set<string>();
  const scope: Scope = {
    has: (n) => vars.has(n) || paramNames.has(n) || BUILTIN_NAMES.includes(n),
    list: () => [...vars, ...paramNames, ...BUILTIN_NAMES],
    what: `role ${roleName}`,
    allowed: `role ${roleName} can read parameters, builtins (${BUILTIN_NAMES.join(', ')}) and variables assigned before this line`,
  };
  const r: RoleLowering = {
    c, roleName, ranks, vars, scope, ok: true, electDepth: 0, offsetSpans: new Map(),
    assignable: (name: string, span: Span): boolean => {
      if (paramNames.has(name) || BUILTIN_NAMES.includes(name) || arrays.has(name)) {
        const what = paramNames.has(name) ? 'a parameter' : arrays.has(name) ? `a ${arrays.get(name)!.kind} array` : 'a builtin';
        c.err(SKETCH_CODES.assign, `'${name}' is ${what} and cannot be assigned`, 'use another variable name', span);
        return false;
      }
      return true;
    },
  };
  const body = blockOf(r, block);
  return r.ok && block ? body : undefined;
}

/** An integer expression of the role; a failure marks the role failed. */
function ie(r: RoleLowering, e: SExpr): Expr | undefined {
  const x = r.c.intExpr(e, r.scope);
  if (!x) r.ok = false;
  return x;
}

function blockOf(r: RoleLowering, b: CstNode | undefined): Stmt[] {
  const out: Stmt[] = [];
  for (const st of nodes(b, 'stmt')) {
    const inner = Object.values(st.children)[0]?.[0];
    if (!inner || isTok(inner)) continue;
    const s = stmt(r, inner);
    if (s) out.push(...s);
  }
  return out;
}

function stmt(r: RoleLowering, n: CstNode): Stmt[] | undefined {
  const head = r.c.headOf(n) ?? NO_SPAN;
  const l = r.c.loc(head);
  switch (n.name) {
    case 'passStmt': return [];
    case 'forStmt': return forStmt(r, n, l);
    case 'chooseStmt': {
      // `choose v in range(A, B)`: every value A .. B - 1 (range(B): 0 .. B - 1), IR bounds inclusive.
      const v = tok(n, 'Ident');
      const ex = nodes(n, 'expr').map(exprOf).map((e) => ie(r, e));
      if (v && r.assignable(v.image, tokSpan(v))) r.vars.add(v.image);
      else r.ok = false;
      if (n.recoveredNode || !v || !ex.length || ex.some((e) => !e)) return undefined;
      const [lo, hi] = ex.length === 1 ? [{ k: 'num' as const, v: 0 }, ex[0]!] : [ex[0]!, ex[1]!];
      return [{ s: 'op', op: { op: 'choose', dest: v.image, lo, hi: hi.k === 'num' ? { k: 'num', v: hi.v - 1 } : { k: 'bin', op: '-', a: hi, b: { k: 'num', v: 1 } } }, loc: l }];
    }
    case 'ifStmt':
    case 'elifClause': return ifStmt(r, n, l);
    case 'electStmt': {
      r.electDepth++;
      const body = blockOf(r, node(n, 'block'));
      r.electDepth--;
      return [{ s: 'elect', body, loc: l }];
    }
    case 'simpleStmt': return simpleStmt(r, n, head, l);
    default:
      return undefined;
  }
}

function forStmt(r: RoleLowering, n: CstNode, l: SrcLoc): Stmt[] | undefined {
  const v = tok(n, 'Ident');
  const ex = nodes(n, 'expr').map(exprOf);
  if (n.recoveredNode || !v || ex.length === 0) {
    if (v) r.vars.add(v.image);
    blockOf(r, node(n, 'block'));
    r.ok = false;
    return undefined;
  }
  const [a, b, c] = ex.length === 1 ? [undefined, ex[0]!, undefined] : [ex[0], ex[1]!, ex[2]];
  const from = a ? ie(r, a) : { k: 'num' as const, v: 0 };
  const to = ie(r, b);
  const step = c ? ie(r, c) : undefined;
  if (r.assignable(v.image, tokSpan(v))) r.vars.add(v.image);
  else r.ok = false;
  const body = blockOf(r, node(n, 'block'));
  if (!from || !to || (c && !step)) return undefined;
  const s: Stmt = { s: 'for', var: v.image, from, to, body, loc: l };
  if (step) s.step = step;
  return [s];
}

function ifStmt(r: RoleLowering, n: CstNode, l: SrcLoc): Stmt[] | undefined {
  const cond = n.recoveredNode ? undefined : ie(r, exprOf(node(n, 'expr')));
  const then = blockOf(r, node(n, 'block'));
  let otherwise: Stmt[] | undefined;
  const elifs = nodes(n, 'elifClause');
  const els = node(n, 'elseClause');
  if (elifs.length) {
    // elif chains nest: if a: .. elif b: .. else: ..  ==  if a: .. else: (if b: .. else: ..)
    const [first, ...more] = elifs;
    const synthetic: CstNode = { name: 'elifClause', children: { ...first!.children, elifClause: more, ...(els ? { elseClause: [els] } : {}) } };
    otherwise = stmt(r, synthetic);
  } else if (els) otherwise = blockOf(r, node(els, 'block'));
  if (!cond) {
    r.ok = false;
    return undefined;
  }
  const s: Stmt = { s: 'if', cond, then, loc: l };
  if (otherwise) s.else = otherwise;
  return [s];
}

function simpleStmt(r: RoleLowering, n: CstNode, head: Span, l: SrcLoc): Stmt[] | undefined {
  const dest = tok(n, 'dest');
  if (n.recoveredNode) {
    if (dest) r.vars.add(dest.image);
    r.ok = false;
    return undefined;
  }
  if (dest) {
    const av = node(n, 'assignValue');
    const mn = tok(av, 'Mnemonic');
    if (!av || av.recoveredNode) {
      r.vars.add(dest.image);
      r.ok = false;
      return undefined;
    }
    if (mn) return opStmt(r, mn, node(av, 'opArgs'), dest, head);
    const value = ie(r, exprOf(node(av, 'expr')));
    if (!r.assignable(dest.image, tokSpan(dest))) r.ok = false;
    else r.vars.add(dest.image);
    return value ? [{ s: 'let', name: dest.image, value, loc: l }] : undefined;
  }
  const mn = tok(n, 'Mnemonic') ?? tok(n, 'Ident');
  if (!mn) return undefined;
  return opStmt(r, mn, node(n, 'opArgs'), undefined, head);
}
