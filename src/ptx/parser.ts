/**
 * The PTX parser: recursive descent over the token arrays of `lexer.ts`, one token of lookahead
 * (two for labels). Module directives (PTX ISA "PTX Module Directives", "Debugging Directives"),
 * `.entry` / `.func` headers with their performance directives, bodies of statements with nested
 * `{ }` scopes, and `.section` data blocks. Every node gets its file:line:col.
 */
import type { Block, CallPrototype, FileDirective, Func, FuncDirective, InlinedAt, Instruction, LocDirective, Module, ModuleItem, Section, SectionItem, SrcPos, Stmt } from './ast.js';
import { checkTarget, checkVersion, directiveArgs } from './header.js';
import { Cursor, parseIntText } from './cursor.js';
import { isSpace, LINKAGE, parseDecl, parseParamList } from './decls.js';
import { Tok, type Tokens } from './lexer.js';
import { parseOperand } from './operands.js';

/** The directives a module may contain at its top level, for messages. */
const MODULE_WHAT = 'a module directive (.version, .target, .address_size, .file, .entry, .func, .global, .shared, .const, .section, …)';

/** Directives a body may hold besides declarations, `.loc` and `.pragma`, kept as their words. */
const BODY_DIRECTIVES = new Set(['.branchtargets', '.calltargets', '.maxnreg', '.maxntid', '.reqntid', '.minnctapersm', '.alias']);

/**
 * Parses a whole module from its tokens (throws `SyntaxFail`, which `parsePtx` reports). The
 * warnings of header values (src/ptx/header.ts) are pushed onto `warnings`.
 */
export function parseTokens(t: Tokens, file: string, warnings: Cursor['warnings'][number][] = []): Module {
  const c = new Cursor(t, file);
  const m: Module = { kind: 'module', file, targets: [], items: [], pos: c.pos() };
  while (c.kind() !== Tok.Eof) moduleItem(c, m);
  warnings.push(...c.warnings);
  return m;
}

function moduleItem(c: Cursor, m: Module): void {
  const pos = c.pos();
  if (c.kind() !== Tok.Dot) c.fail(MODULE_WHAT);
  const w = c.text();
  switch (w) {
    case '.version': {
      c.p++;
      if (c.kind() !== Tok.Float && c.kind() !== Tok.Int) c.fail("a version number after '.version' (e.g. 9.0)");
      m.version = c.text();
      checkVersion(c);
      c.p++;
      return;
    }
    case '.target': {
      c.p++;
      do {
        if (c.kind() === Tok.Ident) checkTarget(c);
        m.targets.push(c.ident("a target after '.target' (e.g. sm_90a)"));
      } while (c.accept(','));
      return;
    }
    case '.address_size': {
      c.p++;
      m.addressSize = c.int("32 or 64 after '.address_size'");
      return;
    }
    case '.file': {
      c.p++;
      m.items.push(fileDirective(c, pos));
      return;
    }
    case '.section': {
      c.p++;
      m.items.push(section(c, pos));
      return;
    }
    case '.pragma': {
      c.p++;
      m.items.push(pragma(c, pos));
      return;
    }
  }
  const linkage: string[] = [];
  while (c.kind() === Tok.Dot && LINKAGE.has(c.text())) {
    linkage.push(c.text());
    c.p++;
  }
  if (c.dot('.entry') || c.dot('.func')) m.items.push(func(c, linkage, pos));
  else if (c.kind() === Tok.Dot && isSpace(c.text())) m.items.push(parseDecl(c, linkage, pos));
  else if (c.dot('.alias')) m.items.push(otherDirective(c, pos));
  else c.fail(linkage.length ? "'.entry', '.func' or a variable declaration after the linkage" : MODULE_WHAT);
}

/** `.file N "path"[, timestamp[, size]]` (after the word). */
function fileDirective(c: Cursor, pos: SrcPos): FileDirective {
  const index = c.int("a file index after '.file'");
  const d: FileDirective = { kind: 'file', index, path: c.str('the file name (a string)'), pos };
  if (c.accept(',')) {
    if (c.kind() !== Tok.Int) c.fail('a timestamp (an integer)');
    d.timestamp = parseIntText(c.text());
    c.p++;
    if (c.accept(',')) {
      if (c.kind() !== Tok.Int) c.fail('a file size (an integer)');
      d.size = parseIntText(c.text());
      c.p++;
    }
  }
  return d;
}

/** `.pragma "a"[, "b"];` (after the word). */
function pragma(c: Cursor, pos: SrcPos): ModuleItem & Stmt {
  const values: string[] = [];
  do values.push(c.str("a string after '.pragma'")); while (c.accept(','));
  c.eat(';', "';' after the pragma");
  return { kind: 'pragma', values, pos };
}

/** A directive kept as its words up to `;` (`.alias a, b;`). */
function otherDirective(c: Cursor, pos: SrcPos): ModuleItem & Stmt {
  const name = c.text();
  c.p++;
  const args: string[] = [];
  while (!c.punct(';')) {
    if (c.kind() === Tok.Eof || c.punct('{') || c.punct('}')) c.fail(`';' after the ${name} directive`);
    if (!c.punct(',')) args.push(c.text());
    c.p++;
  }
  c.p++;
  return { kind: 'directive', name, args, pos };
}

/** `.section NAME { (LABEL: | .type v, v, …)* }` (after the word). Values are kept as text. */
function section(c: Cursor, pos: SrcPos): Section {
  if (c.kind() !== Tok.Dot && c.kind() !== Tok.Ident) c.fail("a section name after '.section' (e.g. .debug_str)");
  const name = c.text();
  c.p++;
  while (c.accept(',')) c.p++; // flags: `.section .nv.x, "a"`
  c.eat('{', `'{' to open the ${name} section`);
  const items: SectionItem[] = [];
  while (!c.accept('}')) {
    const ipos = c.pos();
    if (c.kind() === Tok.Ident && c.punct(':', 1)) {
      items.push({ kind: 'label', name: c.text(), pos: ipos });
      c.p += 2;
      continue;
    }
    if (c.kind() !== Tok.Dot) c.fail(`a label, a data directive (.b8, .b32, .b64, …) or '}' in the ${name} section`);
    const type = c.text();
    c.p++;
    // The values run to the last one not followed by ','; kept as their source text (debug
    // sections hold a megabyte of bytes: one string per line, not one per value).
    const start = c.t.start[c.p]!;
    const value = (): void => {
      const k = c.kind();
      // A section name is a value too (`.b32 .debug_abbrev` in -G output).
      if (k !== Tok.Int && k !== Tok.Ident && k !== Tok.Str && k !== Tok.Float && k !== Tok.Dot) c.fail(`a value after ${type}`);
      c.p++;
    };
    do {
      c.accept('-');
      value();
      // `label+4`, `label-label2`
      while ((c.punct('+') || c.punct('-')) && c.t.line[c.p] === ipos.line) {
        c.p++;
        value();
      }
    } while (c.accept(','));
    items.push({ kind: 'data', type, text: c.t.src.slice(start, c.t.end[c.p - 1]!), pos: ipos });
  }
  return { kind: 'section', name, items, pos };
}

/** `.entry` / `.func` header, directives and body or `;`. */
function func(c: Cursor, linkage: string[], pos: SrcPos): Func {
  const entry = c.dot('.entry');
  c.p++;
  const returns = !entry && c.punct('(') ? parseParamList(c) : [];
  const name = c.ident(`the name of the ${entry ? 'kernel' : 'function'}`);
  const params = c.punct('(') ? parseParamList(c) : [];
  const f: Func = { kind: 'function', entry, linkage, name, returns, params, directives: [], noreturn: false, pos };
  while (c.kind() === Tok.Dot) {
    const d: FuncDirective = { name: c.text(), args: [], pos: c.pos() };
    c.p++;
    if (d.name === '.noreturn') {
      f.noreturn = true;
      continue;
    }
    if (d.name === '.pragma') {
      d.values = [];
      do d.values.push(c.str("a string after '.pragma'")); while (c.accept(','));
      c.eat(';', "';' after the pragma");
      f.directives.push(d);
      continue;
    }
    d.args = directiveArgs(c, d.name);
    f.directives.push(d);
  }
  if (c.accept(';')) return f;
  if (!c.punct('{')) c.fail(`'{' to open the body of '${name}', ';' or a directive (.maxntid, .reqntid, .minnctapersm, …)`);
  f.body = block(c, { loc: undefined });
  return f;
}

/** The `.loc` in force while a function body is parsed (text order, across scopes). */
interface BodyState {
  loc: LocDirective | undefined;
}

/** `{ stmt* }` at the `{`. */
function block(c: Cursor, st: BodyState): Block {
  const pos = c.pos();
  c.p++;
  c.enter();
  const stmts: Stmt[] = [];
  for (;;) {
    if (c.accept('}')) break;
    if (c.kind() === Tok.Eof) c.fail("'}' to close the scope opened at line " + pos.line);
    stmts.push(statement(c, st));
  }
  c.leave();
  return { kind: 'block', stmts, pos };
}

function statement(c: Cursor, st: BodyState): Stmt {
  const pos = c.pos();
  const k = c.kind();
  if (k === Tok.Punct && c.punct('{')) return block(c, st);
  if (k === Tok.Dot) {
    const w = c.text();
    if (w === '.loc') {
      c.p++;
      return (st.loc = loc(c, pos));
    }
    if (w === '.pragma') {
      c.p++;
      return pragma(c, pos);
    }
    if (isSpace(w)) return parseDecl(c, [], pos);
    if (BODY_DIRECTIVES.has(w)) return otherDirective(c, pos);
    c.fail("a statement (an instruction, a label, a declaration, '{' or '}')", `PTX bodies hold declarations (.reg, .local, .shared, .param, …), .loc, .pragma and ${[...BODY_DIRECTIVES].join(', ')}`);
  }
  if (k === Tok.Ident && c.punct(':', 1)) {
    const name = c.text();
    c.p += 2;
    if (c.dot('.callprototype')) return prototype(c, name, pos);
    return { kind: 'label', name, pos };
  }
  if (k === Tok.Ident || c.punct('@')) return instruction(c, st, pos);
  return c.fail("a statement (an instruction, a label, a declaration, '{' or '}')");
}

/** `.loc f l c[, function_name LABEL[+N]][, inlined_at f l c[, function_name …]]` (after the word). */
function loc(c: Cursor, pos: SrcPos): LocDirective {
  const d: LocDirective = { kind: 'loc', fileIndex: c.int("a file index after '.loc'"), line: c.int('a line number'), col: c.int('a column number'), pos };
  let target: { functionName?: { label: string; offset: number } } = d;
  while (c.punct(',') && c.kind(1) === Tok.Ident) {
    c.p++;
    const w = c.text();
    c.p++;
    if (w === 'function_name') {
      const label = c.ident('a label after function_name');
      target.functionName = { label, offset: c.accept('+') ? c.int('an offset') : 0 };
    } else if (w === 'inlined_at') {
      const at: InlinedAt = { fileIndex: c.int('a file index after inlined_at'), line: c.int('a line number'), col: c.int('a column number') };
      d.inlinedAt = at;
      target = at;
    } else {
      c.p--;
      c.fail("'function_name' or 'inlined_at'");
    }
  }
  return d;
}

/** `name: .callprototype [(ret)] _ (params) [.noreturn];` at the word. */
function prototype(c: Cursor, name: string, pos: SrcPos): CallPrototype {
  c.p++;
  const returns = c.punct('(') ? parseParamList(c) : [];
  c.ident("'_' in the prototype");
  const params = c.punct('(') ? parseParamList(c) : [];
  let noreturn = false;
  if (c.dot('.noreturn')) {
    noreturn = true;
    c.p++;
  }
  c.eat(';', "';' after the prototype");
  return { kind: 'prototype', name, returns, params, noreturn, pos };
}

/** `[@[!]p] opcode{.mod} [operand {, operand}] ;` */
function instruction(c: Cursor, st: BodyState, pos: SrcPos): Instruction {
  let guard: Instruction['guard'];
  if (c.accept('@')) {
    const negated = c.accept('!');
    guard = { negated, pred: c.ident("a predicate register after '@'") };
  }
  const first = c.p;
  const opcodeCol = guard ? c.pos(first).col : undefined;
  const base = c.ident('an opcode');
  const mods: string[] = [];
  while (c.kind() === Tok.Dot && c.adjacent()) {
    mods.push(c.text().slice(1));
    c.p++;
  }
  const opcode = mods.length ? c.t.src.slice(c.t.start[first]!, c.t.end[c.p - 1]!) : base;
  const operands = [];
  if (!c.punct(';')) {
    const lists = base === 'call';
    do operands.push(parseOperand(c, lists)); while (c.accept(','));
  }
  if (!c.punct(';')) c.failMissing(`',' or ';' after the operands of '${opcode}'`);
  c.p++;
  const ins: Instruction = { kind: 'instr', opcode, base, mods, operands, pos };
  if (guard) ins.guard = guard;
  if (opcodeCol !== undefined) ins.opcodeCol = opcodeCol;
  if (st.loc) ins.loc = st.loc;
  return ins;
}
