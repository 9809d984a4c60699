/**
 * Integer expressions: a small parser for the builder's string expressions, an evaluator and a
 * compiler to closures over a variable frame (what the machine runs).
 *
 * Precedence (C-like, low to high): `||`, `&&`, `|`, `^`, `&`, `== !=`, `< <= > >=`, `<< >>`,
 * `+ -`, `* / %`, unary `- ! ~`. The arithmetic is `arith.ts` (C 64-bit semantics, exact or an
 * {@link EvalFault}); `&&` and `||` short-circuit as in C.
 *
 * Every walk over an expression is iterative along chains of binary operators (`1 + 1 + … + 1`
 * is a left-deep tree as deep as it is long): only parentheses and precedence levels nest the
 * recursion, and the sketch language bounds those.
 */
import { applyBin, bitwise, div, EvalFault, MAX_EXACT, overflow, parseInteger, rem, shl, shr, unary } from './arith.js';
import type { BinOp, Expr, SrcLoc } from './ir.js';

export { applyBin, EvalFault, nonZeroStep } from './arith.js';

/** Error in an expression string: `offset` is the 0-based column of the offending character. */
export class ExprSyntaxError extends Error {
  constructor(message: string, readonly offset: number) {
    super(message);
  }
}

const LEVELS: BinOp[][] = [
  ['||'],
  ['&&'],
  ['|'],
  ['^'],
  ['&'],
  ['==', '!='],
  ['<', '<=', '>', '>='],
  ['<<', '>>'],
  ['+', '-'],
  ['*', '/', '%'],
];

const TOKEN = /\s*(0x[0-9a-fA-F]+|0b[01]+|\d+|[A-Za-z_][A-Za-z0-9_]*|<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%^&|<>!~()])/y;

/** Parses an expression string such as `(i / S) & 1 ^ 1`. Throws {@link ExprSyntaxError}. */
export function parseExpr(src: string, loc?: SrcLoc): Expr {
  const toks: { t: string; at: number }[] = [];
  TOKEN.lastIndex = 0;
  let pos = 0;
  while (pos < src.length) {
    if (/^\s*$/.test(src.slice(pos))) break;
    TOKEN.lastIndex = pos;
    const m = TOKEN.exec(src);
    if (!m) throw new ExprSyntaxError(`unexpected character '${src.slice(pos).trim()[0]}'`, pos + (src.slice(pos).length - src.slice(pos).trimStart().length));
    toks.push({ t: m[1]!, at: m.index + m[0].length - m[1]!.length });
    pos = TOKEN.lastIndex;
  }
  let i = 0;
  const peek = () => toks[i]?.t;
  const level = (n: number): Expr => {
    if (n === LEVELS.length) return unary();
    let a = level(n + 1);
    for (;;) {
      const t = peek();
      if (t && (LEVELS[n] as string[]).includes(t)) {
        i++;
        const b = level(n + 1);
        a = { k: 'bin', op: t as BinOp, a, b };
      } else return a;
    }
  };
  const unary = (): Expr => {
    const t = peek();
    if (t === '-' || t === '!' || t === '~') {
      i++;
      return { k: 'un', op: t, a: unary() };
    }
    return atom();
  };
  const atom = (): Expr => {
    const tok = toks[i];
    if (!tok) throw new ExprSyntaxError('expression ends too early', src.length);
    i++;
    if (tok.t === '(') {
      const e = level(0);
      if (peek() !== ')') throw new ExprSyntaxError("missing ')'", toks[i]?.at ?? src.length);
      i++;
      return e;
    }
    if (/^\d/.test(tok.t)) {
      const n = parseInteger(tok.t);
      if ('error' in n) throw new ExprSyntaxError(n.error, tok.at);
      return { k: 'num', v: n.value };
    }
    if (/^[A-Za-z_]/.test(tok.t)) {
      const v: Expr = { k: 'var', name: tok.t };
      if (loc) v.loc = { ...loc, col: loc.col + tok.at };
      return v;
    }
    throw new ExprSyntaxError(`unexpected '${tok.t}'`, tok.at);
  };
  const e = level(0);
  if (i < toks.length) throw new ExprSyntaxError(`unexpected '${toks[i]!.t}'`, toks[i]!.at);
  return e;
}

/** Something the builder accepts as an expression: a number, an expression string or an AST. */
export type ExprLike = number | string | Expr;

/** Converts an {@link ExprLike} to an AST. */
export function toExpr(e: ExprLike): Expr {
  if (typeof e === 'number') return { k: 'num', v: e };
  if (typeof e === 'string') return parseExpr(e);
  return e;
}

/**
 * Evaluates `e` with variables looked up in `env` (the same semantics and faults as
 * {@link compileExpr}); throws an `Error` on an unknown name and an {@link EvalFault} where the
 * arithmetic cannot be exact.
 */
export function evalExpr(e: Expr, env: (name: string) => number | undefined): number {
  return compileExpr(e, (n) => {
    const v = env(n);
    if (v === undefined) throw new Error(`unknown name '${n}'`);
    return { const: v };
  })([]);
}

/** A compiled expression: reads variable slots from `frame`. */
export type CompiledExpr = (frame: Int32Array | number[]) => number;

/** Chains of binary operators longer than this compile to a loop instead of nested closures. */
const CHAIN = 24;

/** Length of the chain of binary operators down `e`'s left operands, up to `max + 1`. */
function chainLength(e: Expr, max: number): number {
  let n = 0;
  for (let x = e; x.k === 'bin' && n <= max; x = x.a) n++;
  return n;
}

/**
 * The value of compiled expression `fn` in `frame`, or `undefined` when its arithmetic faults
 * ({@link EvalFault}: division by zero, a shift count outside 0..63, a value past ±(2^53 − 1)).
 * The rule of every evaluation outside an agent's own step (trace text, timing, analyses): a
 * fault there is not the evaluator's error; the step that evaluates the same expression reports it.
 * Anything else thrown is rethrown.
 */
export function tryInt(fn: CompiledExpr, frame: Int32Array | number[]): number | undefined {
  try {
    return fn(frame);
  } catch (err) {
    if (err instanceof EvalFault) return undefined;
    throw err;
  }
}

/**
 * Compiles `e` to a closure. `slot(name)` maps a name to a frame index, or returns a constant
 * (`{ const: n }`) for parameters; unknown names throw. The closure throws {@link EvalFault} where
 * the arithmetic cannot be exact (see `arith.ts`).
 */
export function compileExpr(e: Expr, slot: (name: string) => number | { const: number }): CompiledExpr {
  switch (e.k) {
    case 'num': {
      const v = e.v;
      return () => v;
    }
    case 'var': {
      const s = slot(e.name);
      if (typeof s === 'object') {
        const v = s.const;
        return () => v;
      }
      return (f) => f[s]!;
    }
    case 'un': {
      const a = compileExpr(e.a, slot);
      if (e.op === '-') return (f) => -a(f) || 0;
      if (e.op === '!') return (f) => (a(f) ? 0 : 1);
      return (f) => unary('~', a(f));
    }
    case 'bin': {
      if (chainLength(e, CHAIN) > CHAIN) return compileChain(e, slot);
      const a = compileExpr(e.a, slot);
      const b = compileExpr(e.b, slot);
      return binary(e.op, a, b);
    }
  }
}

/** The closure of `a op b` (the common operators inline, checked like `arith.ts`). */
function binary(op: BinOp, a: CompiledExpr, b: CompiledExpr): CompiledExpr {
  switch (op) {
    case '+': return (f) => {
      const x = a(f), y = b(f), r = x + y;
      return r <= MAX_EXACT && r >= -MAX_EXACT ? r : overflow(x, '+', y, r);
    };
    case '-': return (f) => {
      const x = a(f), y = b(f), r = x - y;
      return r <= MAX_EXACT && r >= -MAX_EXACT ? r : overflow(x, '-', y, r);
    };
    case '*': return (f) => {
      const x = a(f), y = b(f), r = x * y;
      return r <= MAX_EXACT && r >= -MAX_EXACT ? r || 0 : overflow(x, '*', y, r);
    };
    case '%': return (f) => rem(a(f), b(f)) || 0;
    case '/': return (f) => div(a(f), b(f)) || 0;
    case '&': return (f) => bitwise('&', a(f), b(f));
    case '^': return (f) => bitwise('^', a(f), b(f));
    case '|': return (f) => bitwise('|', a(f), b(f));
    case '<<': return (f) => shl(a(f), b(f));
    case '>>': return (f) => shr(a(f), b(f));
    case '<': return (f) => (a(f) < b(f) ? 1 : 0);
    case '==': return (f) => (a(f) === b(f) ? 1 : 0);
    case '&&': return (f) => (a(f) && b(f) ? 1 : 0);
    case '||': return (f) => (a(f) || b(f) ? 1 : 0);
    default: return (f) => applyBin(op, a(f), b(f));
  }
}

/** A long left-deep chain `((x0 op1 x1) op2 x2) …` as one loop (no recursion as deep as the chain). */
function compileChain(e: Expr, slot: (name: string) => number | { const: number }): CompiledExpr {
  const ops: BinOp[] = [];
  const rights: Expr[] = [];
  let x = e;
  for (; x.k === 'bin'; x = x.a) {
    ops.push(x.op);
    rights.push(x.b);
  }
  ops.reverse();
  const first = compileExpr(x, slot);
  const rest = rights.reverse().map((r) => compileExpr(r, slot));
  const n = ops.length;
  return (f) => {
    let acc = first(f);
    for (let i = 0; i < n; i++) {
      const op = ops[i]!;
      if (op === '&&') acc = acc && rest[i]!(f) ? 1 : 0;
      else if (op === '||') acc = acc || rest[i]!(f) ? 1 : 0;
      else acc = applyBin(op, acc, rest[i]!(f)) || 0;
    }
    return acc;
  };
}

/**
 * Folds `e` bottom-up without recursion: `leaf` for numbers and variables, `node` for an operator
 * applied to its operands' results (left before right).
 */
export function foldExpr<T>(e: Expr, leaf: (x: Expr & { k: 'num' | 'var' }) => T, node: (x: Expr & { k: 'un' | 'bin' }, a: T, b?: T) => T): T {
  const todo: Expr[] = [e];
  const expanded: boolean[] = [false];
  const vals: T[] = [];
  while (todo.length) {
    const x = todo.pop()!;
    const done = expanded.pop()!;
    if (x.k === 'num' || x.k === 'var') vals.push(leaf(x));
    else if (!done) {
      todo.push(x);
      expanded.push(true);
      if (x.k === 'bin') {
        todo.push(x.b);
        expanded.push(false);
      }
      todo.push(x.a);
      expanded.push(false);
    } else if (x.k === 'un') vals.push(node(x, vals.pop()!));
    else {
      const b = vals.pop()!;
      vals.push(node(x, vals.pop()!, b));
    }
  }
  return vals[0]!;
}

/** Prints an expression back as source text (fully parenthesized where needed). */
export function showExpr(e: Expr): string {
  return foldExpr<{ text: string; bin: boolean }>(
    e,
    (x) => ({ text: x.k === 'num' ? String(x.v) : x.name, bin: false }),
    (x, a, b) => {
      if (x.k === 'un') return { text: `${x.op}${a.text}`, bin: false };
      const wrap = (y: { text: string; bin: boolean }) => (y.bin ? `(${y.text})` : y.text);
      return { text: `${wrap(a)} ${x.op} ${wrap(b!)}`, bin: true };
    },
  ).text;
}

/** Names an expression reads (in order of first appearance). */
export function exprNames(e: Expr, out: Set<string> = new Set()): Set<string> {
  foldExpr(e, (x) => {
    if (x.k === 'var') out.add(x.name);
    return 0;
  }, () => 0);
  return out;
}
