/**
 * Declarations (PTX ISA "Variable Declarations", "Parameter State Space", "Kernel Function
 * Parameter Attributes"): the state space, `.align`, vector width, type and `.ptr` attributes in
 * any order, then names with `<N>` register ranges, `[N]` dimensions and `= …` initializers.
 */
import type { Decl, DeclName, Init, Param, PtrAttr, SrcPos } from './ast.js';
import { SyntaxFail, type Cursor } from './cursor.js';
import { Tok } from './lexer.js';
import { parseExpr } from './operands.js';

/** State spaces a declaration can name (`.shared::cta` and the like are spaces too). */
export const SPACES = new Set(['.reg', '.sreg', '.const', '.global', '.local', '.param', '.shared', '.tex']);

/** Linkage words before a declaration or function. */
export const LINKAGE = new Set(['.extern', '.visible', '.weak', '.common']);

/** Fundamental and opaque types (PTX ISA "Fundamental Types", "Texture, Sampler, and Surface Types"). */
export const TYPES = new Set([
  '.s8', '.s16', '.s32', '.s64', '.u8', '.u16', '.u32', '.u64', '.f16', '.f16x2', '.f32', '.f64',
  '.b8', '.b16', '.b32', '.b64', '.b128', '.pred', '.bf16', '.bf16x2', '.e4m3', '.e5m2', '.e4m3x2', '.e5m2x2',
  '.tf32', '.texref', '.samplerref', '.surfref',
]);

const VECTORS = new Set(['.v2', '.v4', '.v8']);

/** Whether a dot word names a state space (`.shared`, `.shared::cta`, `.param::entry`). */
export function isSpace(word: string): boolean {
  const i = word.indexOf('::');
  return SPACES.has(i < 0 ? word : word.slice(0, i));
}

/** The attributes of a declaration before its names. */
interface Head {
  space: string;
  align?: number;
  vector?: string;
  type: string;
  ptr?: PtrAttr;
  attributes?: string[];
}

/** Parses `.space` and its attributes up to the type (and `.ptr…` after it), at a space word. */
export function parseHead(c: Cursor): Head {
  const space = c.text();
  c.p++;
  let align: number | undefined, vector: string | undefined, type: string | undefined;
  let ptr: PtrAttr | undefined, attributes: string[] | undefined;
  while (c.kind() === Tok.Dot) {
    const w = c.text();
    if (w === '.align') {
      c.p++;
      const n = c.int("an alignment (bytes) after '.align'");
      if (ptr) ptr.align = n;
      else align = n;
    } else if (VECTORS.has(w)) {
      vector = w;
      c.p++;
    } else if (w === '.ptr') {
      ptr = {};
      c.p++;
    } else if (ptr && ptr.space === undefined && isSpace(w)) {
      ptr.space = w;
      c.p++;
    } else if (w === '.attribute') {
      const start = c.t.start[c.p]!;
      c.p++;
      c.eat('(', "'(' after '.attribute'");
      while (!c.punct(')') && c.kind() !== Tok.Eof) c.p++;
      c.eat(')', "')' after the attribute");
      (attributes ??= []).push(c.t.src.slice(start, c.t.end[c.p - 1]!));
    } else if (TYPES.has(w) && type === undefined) {
      type = w;
      c.p++;
    } else break;
  }
  if (type === undefined) c.fail(`a type (.b32, .u64, .f32, .pred, .b8, …) in the ${space} declaration`);
  const h: Head = { space, type };
  if (align !== undefined) h.align = align;
  if (vector !== undefined) h.vector = vector;
  if (ptr) h.ptr = ptr;
  if (attributes) h.attributes = attributes;
  return h;
}

/** `[N]…` dimensions after a name (`[]` is `null`), or undefined when there are none. */
function parseDims(c: Cursor): (number | null)[] | undefined {
  let dims: (number | null)[] | undefined;
  while (c.punct('[')) {
    c.p++;
    if (c.accept(']')) {
      (dims ??= []).push(null);
      continue;
    }
    (dims ??= []).push(c.int('an array size'));
    c.eat(']', "']' after the array size");
  }
  return dims;
}

/** An initializer: an expression or a braced list of initializers. */
function parseInit(c: Cursor): Init {
  if (!c.punct('{')) return parseExpr(c);
  c.p++;
  c.enter();
  const items: Init[] = [];
  if (!c.punct('}')) do items.push(parseInit(c)); while (c.accept(','));
  c.eat('}', "',' or '}' in the initializer");
  c.leave();
  return { kind: 'list', items };
}

/** One declared name with its range, dimensions and initializer. */
function parseDeclName(c: Cursor): DeclName {
  const pos = c.pos();
  const d: DeclName = { name: c.ident('a name to declare'), pos };
  if (c.punct('<')) {
    c.p++;
    // `%r<2e9>`: a float constant is no count (and no register range is ever allocated whole).
    if (c.kind() === Tok.Float) throw new SyntaxFail(`a register count in '<N>' is a whole number, found the float constant '${c.text().slice(0, 40)}'`, c.p);
    d.range = c.int("a register count in '<N>'");
    c.eat('>', "'>' after the register count");
  }
  const dims = parseDims(c);
  if (dims) d.dims = dims;
  if (c.accept('=')) d.init = parseInit(c);
  return d;
}

/** A declaration statement at a space word, up to and including its `;`. */
export function parseDecl(c: Cursor, linkage: string[], pos: SrcPos): Decl {
  const h = parseHead(c);
  const names: DeclName[] = [];
  do names.push(parseDeclName(c)); while (c.accept(','));
  if (!c.punct(';')) c.failMissing(`',' or ';' after the ${h.space} declaration`);
  c.p++;
  return { kind: 'decl', linkage, ...h, names, pos };
}

/** One parameter: `.param [attrs] .type [.ptr…] name[N]` or `.reg .type name`. */
function parseParam(c: Cursor): Param {
  const pos = c.pos();
  if (c.kind() !== Tok.Dot || !isSpace(c.text())) c.fail("a parameter ('.param' or '.reg')");
  const h = parseHead(c);
  const p: Param = { ...h, name: c.ident('a parameter name'), pos };
  delete (p as { attributes?: string[] }).attributes;
  const dims = parseDims(c);
  if (dims) p.dims = dims;
  return p;
}

/** `( [param {, param}] )` */
export function parseParamList(c: Cursor): Param[] {
  c.eat('(', "'('");
  const ps: Param[] = [];
  if (!c.punct(')')) do ps.push(parseParam(c)); while (c.accept(','));
  c.eat(')', "',' or ')' after the parameter");
  return ps;
}
