/**
 * Integer expressions: a small parser for the builder's string expressions, an evaluator and a
 * compiler to closures over a variable frame (what the machine runs).
 *
 * Precedence (C-like, low to high): `||`, `&&`, `|`, `^`, `&`, `== !=`, `< <= > >=`, `<< >>`,
 * `+ -`, `* / %`, unary `- ! ~`. Division truncates toward zero like C.
 */
import type { BinOp, Expr, SrcLoc } from './ir.js';

/**
 * An expression that cannot be evaluated at run time (division or remainder by zero, a loop step
 * of zero). Thrown by compiled expressions; the machine turns it into an `arith` diagnostic.
 */
export class EvalFault extends Error {}

function div(a: number, b: number): number {
  if (b === 0) throw new EvalFault('division by zero');
  return Math.trunc(a / b);
}

function rem(a: number, b: number): number {
  if (b === 0) throw new EvalFault('remainder by zero');
  return a % b;
}

/** A result that must stay an integer JavaScript represents exactly (|x| ≤ 2^53 − 1). */
function exact(x: number, what: string): number {
  if (!Number.isSafeInteger(x)) throw new EvalFault(`${what} is outside the integers mbsim represents exactly (±2^53)`);
  return x;
}

/**
 * Bitwise operators on 64-bit two's-complement integers, as C (and PTX's .s64) computes them: exact
 * beyond 32 bits (JavaScript's own operators truncate to 32). Shifts by a count outside 0..63, or a
 * result outside ±2^53, are an {@link EvalFault}.
 */
function bitop(op: '&' | '|' | '^' | '<<' | '>>', a: number, b: number): number {
  if ((op === '&' || op === '|' || op === '^') && (a | 0) === a && (b | 0) === b) return op === '&' ? a & b : op === '|' ? a | b : a ^ b;
  if (op === '<<' || op === '>>') {
    if (!Number.isInteger(b) || b < 0 || b > 63) throw new EvalFault(`a shift by ${b} (the count must be 0..63)`);
    if (op === '>>') return Math.floor(a / 2 ** b);
    return exact(a * 2 ** b, `${a} << ${b}`);
  }
  const x = BigInt.asIntN(64, BigInt(a));
  const y = BigInt.asIntN(64, BigInt(b));
  const r = BigInt.asIntN(64, op === '&' ? x & y : op === '|' ? x | y : x ^ y);
  return exact(Number(r), `${a} ${op} ${b}`);
}

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
    if (/^0x/i.test(tok.t)) return { k: 'num', v: parseInt(tok.t.slice(2), 16) };
    if (/^0b/i.test(tok.t)) return { k: 'num', v: parseInt(tok.t.slice(2), 2) };
    if (/^\d/.test(tok.t)) return { k: 'num', v: Number(tok.t) };
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

/** Applies a binary operator with C 64-bit integer semantics (bit operators exact beyond 32 bits). */
export function applyBin(op: BinOp, a: number, b: number): number {
  switch (op) {
    case '+': return a + b;
    case '-': return a - b;
    case '*': return a * b;
    case '/': return b === 0 ? NaN : Math.trunc(a / b);
    case '%': return b === 0 ? NaN : a % b;
    case '^':
    case '&':
    case '|':
    case '<<':
    case '>>': return bitop(op, a, b);
    case '==': return a === b ? 1 : 0;
    case '!=': return a !== b ? 1 : 0;
    case '<': return a < b ? 1 : 0;
    case '<=': return a <= b ? 1 : 0;
    case '>': return a > b ? 1 : 0;
    case '>=': return a >= b ? 1 : 0;
    case '&&': return a && b ? 1 : 0;
    case '||': return a || b ? 1 : 0;
  }
}

/** Evaluates `e` with variables looked up in `env`; throws on an unknown name. */
export function evalExpr(e: Expr, env: (name: string) => number | undefined): number {
  switch (e.k) {
    case 'num': return e.v;
    case 'var': {
      const v = env(e.name);
      if (v === undefined) throw new Error(`unknown name '${e.name}'`);
      return v;
    }
    case 'un': {
      const a = evalExpr(e.a, env);
      return e.op === '-' ? -a : e.op === '!' ? (a ? 0 : 1) : ~a;
    }
    case 'bin': return applyBin(e.op, evalExpr(e.a, env), evalExpr(e.b, env));
  }
}

/** A compiled expression: reads variable slots from `frame`. */
export type CompiledExpr = (frame: Int32Array | number[]) => number;

/**
 * Compiles `e` to a closure. `slot(name)` maps a name to a frame index, or returns a constant
 * (`{ const: n }`) for parameters; unknown names throw.
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
      if (e.op === '-') return (f) => -a(f);
      if (e.op === '!') return (f) => (a(f) ? 0 : 1);
      return (f) => -a(f) - 1; // ~x of a 64-bit integer
    }
    case 'bin': {
      const a = compileExpr(e.a, slot);
      const b = compileExpr(e.b, slot);
      const op = e.op;
      switch (op) {
        case '+': return (f) => a(f) + b(f);
        case '-': return (f) => a(f) - b(f);
        case '*': return (f) => a(f) * b(f);
        case '%': return (f) => rem(a(f), b(f));
        case '/': return (f) => div(a(f), b(f));
        case '&': return (f) => bitop('&', a(f), b(f));
        case '^': return (f) => bitop('^', a(f), b(f));
        case '|': return (f) => bitop('|', a(f), b(f));
        case '<': return (f) => (a(f) < b(f) ? 1 : 0);
        case '==': return (f) => (a(f) === b(f) ? 1 : 0);
        default: return (f) => applyBin(op, a(f), b(f));
      }
    }
  }
}

/** Throws {@link EvalFault} when a loop step is zero (the loop would never end). */
export function nonZeroStep(step: number): number {
  if (step === 0) throw new EvalFault('a loop step of 0');
  return step;
}

/** Prints an expression back as source text (fully parenthesized where needed). */
export function showExpr(e: Expr): string {
  switch (e.k) {
    case 'num': return String(e.v);
    case 'var': return e.name;
    case 'un': return `${e.op}${showExpr(e.a)}`;
    case 'bin': {
      const wrap = (x: Expr) => (x.k === 'bin' ? `(${showExpr(x)})` : showExpr(x));
      return `${wrap(e.a)} ${e.op} ${wrap(e.b)}`;
    }
  }
}

/** Names an expression reads. */
export function exprNames(e: Expr, out: Set<string> = new Set()): Set<string> {
  if (e.k === 'var') out.add(e.name);
  else if (e.k === 'un') exprNames(e.a, out);
  else if (e.k === 'bin') {
    exprNames(e.a, out);
    exprNames(e.b, out);
  }
  return out;
}
