/**
 * Instruction operands and constant expressions (PTX ISA "Instruction Operands", "Constant
 * Expressions"): registers and names with vector components (`%tid.x`), the sink `_`, dual
 * destinations `%r|%p`, immediates, addresses `[base+off]` with tensor coordinates, vector operands
 * `{…}`, call lists `(…)`, and integer / symbol arithmetic with C precedence.
 */
import type { Expr, Operand, SrcPos } from './ast.js';
import { type Cursor, parseIntText } from './cursor.js';
import { floatValue, Tok } from './lexer.js';

/** Binary operators by precedence (higher binds tighter), C's order. */
const PREC: Record<string, number> = {
  '*': 10, '/': 10, '%': 10, '+': 9, '-': 9, '<<': 8, '>>': 8,
  '<': 7, '>': 7, '<=': 7, '>=': 7, '==': 6, '!=': 6, '&': 5, '^': 4, '|': 3, '&&': 2, '||': 1,
};

/** Vector-component suffixes of a register name (`%tid.x`, `%v.r`). */
const COMPONENT = /^\.[xyzwrgba]$/;

/** The binary operator at the cursor (one or two adjacent characters), without consuming it. */
function binaryOp(c: Cursor): string | undefined {
  if (c.kind() !== Tok.Punct) return undefined;
  const a = c.text();
  if (c.kind(1) === Tok.Punct && c.adjacent(c.p + 1)) {
    const two = a + c.text(1);
    if (two in PREC) return two;
  }
  if (a === '!' || a === '=') return undefined; // only in `!=` / `==`
  return a in PREC ? a : undefined;
}

/** Parses an expression with operators of at least precedence `min` (precedence climbing). */
export function parseExpr(c: Cursor, min = 0): Expr {
  let left = parseUnary(c);
  for (;;) {
    const op = binaryOp(c);
    if (op === undefined || PREC[op]! < min) return left;
    c.p += op.length;
    c.enter();
    const right = parseExpr(c, PREC[op]! + 1);
    c.leave();
    left = { kind: 'binary', op, left, right };
  }
}

function parseUnary(c: Cursor): Expr {
  if (c.punct('-') || c.punct('~') || c.punct('!')) {
    const op = c.text() as '-' | '~' | '!';
    c.p++;
    c.enter();
    const arg = parseUnary(c);
    c.leave();
    // A negative literal stays a literal: `-1`, `-0f3F800000`.
    if (op === '-' && arg.kind === 'int') return { kind: 'int', value: -arg.value, text: `-${arg.text}` };
    if (op === '-' && arg.kind === 'float') return { kind: 'float', value: -arg.value, text: `-${arg.text}` };
    return { kind: 'unary', op, arg };
  }
  return parsePrimary(c);
}

function parsePrimary(c: Cursor): Expr {
  const k = c.kind();
  if (k === Tok.Int) {
    const text = c.text();
    c.p++;
    return { kind: 'int', value: parseIntText(text), text };
  }
  if (k === Tok.Float) {
    const text = c.text();
    c.p++;
    return { kind: 'float', value: floatValue(text), text };
  }
  if (k === Tok.Ident) {
    const name = parseName(c);
    if (c.punct('(') && c.adjacent()) {
      c.p++;
      c.enter();
      const args: Expr[] = [];
      if (!c.punct(')')) do args.push(parseExpr(c)); while (c.accept(','));
      c.eat(')', `')' after the arguments of '${name}('`);
      c.leave();
      return { kind: 'call', fn: name, args };
    }
    return { kind: 'sym', name };
  }
  if (c.punct('(')) {
    c.p++;
    c.enter();
    const e = parseExpr(c);
    c.eat(')', "')'");
    c.leave();
    return e;
  }
  return c.fail('an operand (a register, a number, a name or an expression)');
}

/** A name with its vector component (`%tid.x`), at the cursor (an identifier). */
function parseName(c: Cursor): string {
  let name = c.text();
  c.p++;
  if (c.kind() === Tok.Dot && c.adjacent() && COMPONENT.test(c.text())) {
    name += c.text();
    c.p++;
  }
  return name;
}

/** Turns an expression into the simplest operand that holds it. */
function exprOperand(e: Expr, pos: SrcPos): Operand {
  if (e.kind === 'int') return { kind: 'int', value: e.value, text: e.text, pos };
  if (e.kind === 'float') return { kind: 'float', value: e.value, text: e.text, pos };
  if (e.kind === 'sym') return e.name === '_' ? { kind: 'sink', pos } : { kind: 'name', name: e.name, pos };
  return { kind: 'expr', expr: e, pos };
}

/**
 * Parses one operand. `lists`: a `(` starts an operand list (the return and argument lists of
 * `call`) rather than a parenthesized expression.
 */
export function parseOperand(c: Cursor, lists: boolean): Operand {
  const pos = c.pos();
  if (c.punct('[')) return parseAddress(c, pos);
  if (c.punct('{')) {
    c.p++;
    c.enter();
    const items: Operand[] = [];
    if (!c.punct('}')) do items.push(parseOperand(c, false)); while (c.accept(','));
    c.eat('}', "',' or '}' in the vector operand");
    c.leave();
    return { kind: 'vector', items, pos };
  }
  if (lists && c.punct('(')) {
    c.p++;
    c.enter();
    const items: Operand[] = [];
    if (!c.punct(')')) do items.push(parseOperand(c, false)); while (c.accept(','));
    c.eat(')', "',' or ')' in the operand list");
    c.leave();
    return { kind: 'list', items, pos };
  }
  if (c.kind() === Tok.Ident) {
    const start = c.p;
    const name = parseName(c);
    if (c.punct('|') && c.kind(1) === Tok.Ident) {
      c.p++;
      return { kind: 'pair', first: name, second: parseName(c), pos };
    }
    if (binaryOp(c) === undefined) return name === '_' ? { kind: 'sink', pos } : { kind: 'name', name, pos };
    c.p = start; // an expression that starts with this name (`sym+8`): parse it whole
  }
  return exprOperand(parseExpr(c), pos);
}

/** `[base]`, `[base+off]`, `[base+-off]`, `[off]`, `[base, {coords}]`, `[a, b, c]`. */
function parseAddress(c: Cursor, pos: SrcPos): Operand {
  c.p++;
  c.enter();
  let base: string | undefined;
  let offset = 0n;
  if (c.kind() === Tok.Ident) base = parseName(c);
  else offset = constInt(c, parseExpr(c));
  while (c.punct('+') || c.punct('-')) {
    let sign = c.punct('-') ? -1n : 1n;
    c.p++;
    if (c.punct('-')) { sign = -sign; c.p++; } // `[%rd1+-8]`
    if (c.kind() !== Tok.Int) c.fail("an integer offset after '+' or '-' in the address");
    offset += sign * parseIntText(c.text());
    c.p++;
  }
  let rest: Operand[] | undefined;
  while (c.accept(',')) (rest ??= []).push(parseOperand(c, false));
  c.eat(']', base === undefined && offset === 0n && rest === undefined ? "']'" : "'+', '-', ',' or ']' in the address");
  c.leave();
  const a: Operand = { kind: 'address', offset, pos };
  if (base !== undefined) a.base = base;
  if (rest) a.rest = rest;
  return a;
}

/** The value of a constant address expression, or a failure at it. */
function constInt(c: Cursor, e: Expr): bigint {
  if (e.kind === 'int') return e.value;
  return c.fail('a register, a name or an integer as the address');
}
