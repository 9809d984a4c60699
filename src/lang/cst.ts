/**
 * The sketch's CST as the lowering reads it: spans, expressions as written (`SExpr`, with
 * references and spans, before they become IR), option values, and the helpers that walk
 * chevrotain's nodes and tokens.
 */
import type { CstNode, IToken } from 'chevrotain';
import { parseInteger } from '../kernel/arith.js';
import { foldExpr } from '../kernel/expr.js';
import type { BinOp, Expr, MmaShape } from '../kernel/ir.js';

/** A span on one line. */
export interface Span {
  line: number;
  col: number;
  endCol: number;
}

/** Expressions as written (with references and spans), before they become IR. */
export type SExpr =
  | { k: 'num'; v: number; span: Span }
  | { k: 'name'; name: string; span: Span; index?: SExpr }
  | { k: 'bin'; op: BinOp; a: SExpr; b: SExpr; span: Span }
  | { k: 'un'; op: '-' | '!' | '~'; a: SExpr; span: Span }
  | { k: 'bad'; span: Span };

export type OptVal =
  | { kind: 'shape'; shape: MmaShape; span: Span }
  | { kind: 'string'; text: string; span: Span }
  | { kind: 'expr'; e: SExpr; span: Span };

export interface RawOption {
  key: string;
  keySpan: Span;
  value?: OptVal;
  span: Span;
}

export const BUILTIN_NAMES = ['cta', 'instance', 'ncta', 'clusterid', 'nthreads', 'nwarps', 'warp', 'warpgroup'];
export const NO_SPAN: Span = { line: 1, col: 1, endCol: 2 };

// ---- CST helpers ------------------------------------------------------------------------------

export type Child = CstNode | IToken;
export const isTok = (c: Child | undefined): c is IToken => !!c && 'image' in c;
export const children = (n: CstNode | undefined, key: string): Child[] => (n ? n.children[key] ?? [] : []);
export const tok = (n: CstNode | undefined, key: string, i = 0): IToken | undefined => {
  const c = children(n, key)[i];
  return isTok(c) && okTok(c) ? c : undefined;
};
export const node = (n: CstNode | undefined, key: string, i = 0): CstNode | undefined => {
  const c = children(n, key)[i];
  return c && !isTok(c) ? c : undefined;
};
export const nodes = (n: CstNode | undefined, key: string): CstNode[] => children(n, key).filter((c): c is CstNode => !isTok(c));
export function okTok(t: IToken): boolean {
  return !t.isInsertedInRecovery && Number.isFinite(t.startLine) && Number.isFinite(t.startColumn) && t.tokenType.name !== 'EOF';
}
/** The text of a string literal's `image` (`"a\\"b"` → `a"b`; JSON's escapes; the raw text when they are malformed). */
export function stringText(image: string): string {
  try {
    return JSON.parse(image) as string;
  } catch {
    return image.slice(1, -1);
  }
}

/**
 * The first line break in a string's text (`\n`, `\r`, VT, FF, NEL, U+2028, U+2029), as
 * `U+000A`, or undefined. The kernel's name and description are one line of the reports that
 * print them: an escaped `\n` in them would start a line of its own there (`verdict: OK`). Other
 * control characters are written as visible escapes by the CLI's output (src/cli/terminal.ts).
 */
export function lineBreakIn(text: string): string | undefined {
  const m = /[\n\v\f\r\u0085\u2028\u2029]/.exec(text);
  return m ? `U+${m[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}` : undefined;
}

export function tokSpan(t: IToken): Span {
  const line = t.startLine ?? 1;
  const col = t.startColumn ?? 1;
  const endCol = t.endLine === t.startLine && Number.isFinite(t.endColumn) ? t.endColumn! + 1 : col + Math.max(1, t.image.length);
  return { line, col, endCol: Math.max(endCol, col + 1) };
}
export function join(a: Span, b: Span): Span {
  return a.line === b.line && b.endCol > a.col ? { line: a.line, col: a.col, endCol: Math.max(a.endCol, b.endCol) } : a;
}
/** Collects every real token under `n` (unordered). */
export function allTokens(n: CstNode, out: IToken[], skip?: Set<string>): IToken[] {
  const ch = n.children;
  for (const k in ch) {
    if (skip?.has(k)) continue;
    for (const c of ch[k]!) {
      if ('image' in c) {
        if (c.image !== '' && okTok(c)) out.push(c);
      } else allTokens(c, out);
    }
  }
  return out;
}
/** Span of a node (its tokens on its first line); `skip` leaves out children such as `block`. */
export function spanOf(n: CstNode | undefined, skip?: string[]): Span | undefined {
  if (!n) return undefined;
  const ts = allTokens(n, [], skip ? new Set(skip) : undefined);
  if (ts.length === 0) return undefined;
  let first = ts[0]!;
  for (const t of ts) if (t.startOffset < first.startOffset) first = t;
  let s = tokSpan(first);
  for (const t of ts) if (t.startLine === s.line && t !== first) s = join(s, tokSpan(t));
  return s;
}

// ---- expressions from the CST -----------------------------------------------------------------

export const BINOPS: Record<string, BinOp> = { or: '||', and: '&&' };

export function exprOf(n: CstNode | undefined): SExpr {
  if (!n || n.recoveredNode) return { k: 'bad', span: spanOf(n) ?? NO_SPAN };
  switch (n.name) {
    case 'expr':
      return chainOf(n);
    case 'unaryExpr': {
      const op = tok(n, 'op');
      if (op) {
        const a = exprOf(node(n, 'unaryExpr'));
        const u = op.image === 'not' ? '!' : (op.image as '-' | '!' | '~');
        return { k: 'un', op: u, a, span: join(tokSpan(op), a.span) };
      }
      return exprOf(node(n, 'primary'));
    }
    case 'primary': {
      const int = tok(n, 'Int');
      if (int) {
        // An inexact literal was reported by the lexer (E-arith).
        const n = parseInteger(int.image);
        return 'value' in n ? { k: 'num', v: n.value, span: tokSpan(int) } : { k: 'bad', span: tokSpan(int) };
      }
      const id = tok(n, 'Ident');
      if (id) {
        const e: SExpr = { k: 'name', name: id.image, span: tokSpan(id) };
        if (children(n, 'LBracket').length) {
          e.index = exprOf(node(n, 'expr'));
          const rb = tok(n, 'RBracket');
          if (rb) e.span = join(e.span, tokSpan(rb));
        }
        return e;
      }
      const inner = node(n, 'expr');
      const lp = tok(n, 'LParen');
      const rp = tok(n, 'RParen');
      if (inner && lp && rp) {
        const e = exprOf(inner);
        return { ...e, span: join(join(tokSpan(lp), e.span), tokSpan(rp)) };
      }
      return { k: 'bad', span: spanOf(n) ?? NO_SPAN };
    }
    default:
      return { k: 'bad', span: spanOf(n) ?? NO_SPAN };
  }
}

/** Precedence level of each binary operator, low to high (C's; docs/LANGUAGE.md §2). */
export const PREC: Record<string, number> = {
  '||': 0, or: 0, '&&': 1, and: 1, '|': 2, '^': 3, '&': 4, '==': 5, '!=': 5, '<': 6, '<=': 6, '>': 6, '>=': 6,
  '<<': 7, '>>': 7, '+': 8, '-': 8, '*': 9, '/': 9, '%': 9,
};

/**
 * The tree of a flat chain `x0 op1 x1 op2 x2 …` (an `expr` node): operator precedence with every
 * level left-associative, by a loop over an operand and an operator stack (no recursion per
 * operand or per level).
 */
export function chainOf(n: CstNode): SExpr {
  const operands = nodes(n, 'operand');
  const ops = children(n, 'op').filter(isTok);
  if (operands.length === 0 || ops.length !== operands.length - 1) return { k: 'bad', span: spanOf(n) ?? NO_SPAN };
  const vals: SExpr[] = [exprOf(operands[0])];
  const pending: { op: BinOp; prec: number }[] = [];
  const reduce = () => {
    const { op } = pending.pop()!;
    const b = vals.pop()!;
    const a = vals.pop()!;
    vals.push({ k: 'bin', op, a, b, span: join(a.span, b.span) });
  };
  for (let i = 0; i < ops.length; i++) {
    const image = ops[i]!.image;
    const prec = PREC[image] ?? 0;
    while (pending.length && pending[pending.length - 1]!.prec >= prec) reduce();
    pending.push({ op: BINOPS[image] ?? (image as BinOp), prec });
    vals.push(exprOf(operands[i + 1]));
  }
  while (pending.length) reduce();
  return vals[0]!;
}

export function optValueOf(n: CstNode | undefined): OptVal | undefined {
  if (!n) return undefined;
  const sh = tok(n, 'Shape');
  if (sh) {
    const span = tokSpan(sh);
    const dims = sh.image.split('x').map(Number);
    if (dims.length !== 3) return { kind: 'expr', e: { k: 'bad', span }, span };
    return { kind: 'shape', shape: { m: dims[0]!, n: dims[1]!, k: dims[2]! }, span };
  }
  const st = tok(n, 'StringLit');
  if (st) {
    return { kind: 'string', text: stringText(st.image), span: tokSpan(st) };
  }
  const e = exprOf(node(n, 'expr'));
  return { kind: 'expr', e, span: e.span };
}

export function optionOf(n: CstNode): RawOption | undefined {
  const key = tok(n, 'Ident');
  if (!key) return undefined;
  const o: RawOption = { key: key.image, keySpan: tokSpan(key), span: tokSpan(key) };
  if (children(n, 'Assign').length) {
    const v = optValueOf(node(n, 'optValue'));
    if (!v) return undefined;
    o.value = v;
    o.span = join(o.span, v.span);
  }
  return o;
}

/**
 * Folds `e` bottom-up without recursion (operator chains are as deep as they are long): `f` gets a
 * node and its children's results, left to right; an index of `name[index]` is a child only with
 * `withIndex`.
 */
export function foldS<T>(e: SExpr, withIndex: boolean, f: (x: SExpr, kids: T[]) => T): T {
  const todo: SExpr[] = [e];
  const expanded: boolean[] = [false];
  const vals: T[] = [];
  const arity = (x: SExpr): number => (x.k === 'bin' ? 2 : x.k === 'un' || (x.k === 'name' && x.index && withIndex) ? 1 : 0);
  while (todo.length) {
    const x = todo.pop()!;
    const done = expanded.pop()!;
    const n = arity(x);
    if (n === 0) vals.push(f(x, []));
    else if (!done) {
      todo.push(x);
      expanded.push(true);
      if (x.k === 'bin') {
        todo.push(x.b);
        expanded.push(false);
      }
      todo.push(x.k === 'name' ? x.index! : (x as { a: SExpr }).a);
      expanded.push(false);
    } else if (n === 1) vals.push(f(x, [vals.pop()!]));
    else {
      const b = vals.pop()!;
      vals.push(f(x, [vals.pop()!, b]));
    }
  }
  return vals[0]!;
}

export function hasBad(e: SExpr): boolean {
  return foldS<boolean>(e, true, (x, kids) => x.k === 'bad' || kids.some(Boolean));
}
