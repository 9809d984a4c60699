/**
 * Prints a parsed module back as PTX text. The output is not the input byte for byte (comments,
 * spacing and number spellings of folded offsets go), but parsing it gives the same tree except
 * for positions: the property test/ptx-parser.test.ts checks.
 */
import type { Block, Decl, DeclName, Expr, Func, Init, Instruction, LocDirective, Module, ModuleItem, Operand, Param, PtrAttr, Stmt } from './ast.js';

/** PTX text of `m`, one statement per line, scopes indented. */
export function printModule(m: Module): string {
  const out: string[] = [];
  if (m.version !== undefined) out.push(`.version ${m.version}`);
  if (m.targets.length) out.push(`.target ${m.targets.join(', ')}`);
  if (m.addressSize !== undefined) out.push(`.address_size ${m.addressSize}`);
  for (const item of m.items) out.push(printItem(item));
  return `${out.join('\n')}\n`;
}

function printItem(i: ModuleItem): string {
  switch (i.kind) {
    case 'function': return printFunc(i);
    case 'decl': return printDecl(i);
    case 'file': return `.file ${i.index} "${i.path}"${i.timestamp !== undefined ? `, ${i.timestamp}${i.size !== undefined ? `, ${i.size}` : ''}` : ''}`;
    case 'pragma': return `.pragma ${i.values.map((v) => `"${v}"`).join(', ')};`;
    case 'directive': return `${i.name} ${i.args.join(', ')};`;
    case 'section': {
      const body = i.items.map((s) => (s.kind === 'label' ? `${s.name}:` : `${s.type} ${s.text}`));
      return `.section ${i.name}\n{\n${body.join('\n')}\n}`;
    }
  }
}

function ptr(p: PtrAttr | undefined): string {
  if (!p) return '';
  return ` .ptr${p.space ? ` ${p.space}` : ''}${p.align !== undefined ? ` .align ${p.align}` : ''}`;
}

function dims(d: (number | null)[] | undefined): string {
  return d ? d.map((n) => `[${n ?? ''}]`).join('') : '';
}

function head(h: { space: string; align?: number; vector?: string; type: string; ptr?: PtrAttr }): string {
  return `${h.space}${h.align !== undefined ? ` .align ${h.align}` : ''}${h.vector ? ` ${h.vector}` : ''} ${h.type}${ptr(h.ptr)}`;
}

function printParam(p: Param): string {
  return `${head(p)} ${p.name}${dims(p.dims)}`;
}

function printInit(i: Init): string {
  return i.kind === 'list' ? `{${i.items.map(printInit).join(', ')}}` : printExpr(i);
}

function printName(n: DeclName): string {
  return `${n.name}${n.range !== undefined ? `<${n.range}>` : ''}${dims(n.dims)}${n.init ? ` = ${printInit(n.init)}` : ''}`;
}

function printDecl(d: Decl): string {
  const attrs = d.attributes ? ` ${d.attributes.join(' ')}` : '';
  const link = d.linkage.map((l) => `${l} `).join('');
  const h = head(d);
  return `${link}${d.space}${attrs}${h.slice(d.space.length)} ${d.names.map(printName).join(', ')};`;
}

function printFunc(f: Func): string {
  const link = f.linkage.map((l) => `${l} `).join('');
  const ret = f.returns.length ? ` (${f.returns.map(printParam).join(', ')})` : '';
  const params = `(${f.params.map(printParam).join(', ')})`;
  const dirs = f.directives.map((d) => `\n${d.name}${d.values ? ` ${d.values.map((v) => `"${v}"`).join(', ')};` : d.args.length ? ` ${d.args.join(', ')}` : ''}`).join('');
  const head = `${link}${f.entry ? '.entry' : '.func'}${ret} ${f.name}${params}${f.noreturn ? ' .noreturn' : ''}${dirs}`;
  return f.body ? `${head}\n${printBlock(f.body, '')}` : `${head};`;
}

function printBlock(b: Block, indent: string): string {
  const inner = `${indent}\t`;
  return `${indent}{\n${b.stmts.map((s) => printStmt(s, inner)).join('\n')}\n${indent}}`;
}

function printLoc(l: LocDirective): string {
  let s = `.loc ${l.fileIndex} ${l.line} ${l.col}`;
  const fn = (f: { label: string; offset: number } | undefined): string => (f ? `, function_name ${f.label}${f.offset ? `+${f.offset}` : ''}` : '');
  s += fn(l.functionName);
  if (l.inlinedAt) s += `, inlined_at ${l.inlinedAt.fileIndex} ${l.inlinedAt.line} ${l.inlinedAt.col}${fn(l.inlinedAt.functionName)}`;
  return s;
}

function printStmt(s: Stmt, indent: string): string {
  switch (s.kind) {
    case 'block': return printBlock(s, indent);
    case 'label': return `${s.name}:`;
    case 'decl': return indent + printDecl(s);
    case 'loc': return indent + printLoc(s);
    case 'pragma': return `${indent}.pragma ${s.values.map((v) => `"${v}"`).join(', ')};`;
    case 'directive': return `${indent}${s.name} ${s.args.join(' ')};`;
    case 'prototype': {
      const ret = s.returns.length ? ` (${s.returns.map(printParam).join(', ')})` : '';
      return `${s.name}: .callprototype${ret} _ (${s.params.map(printParam).join(', ')})${s.noreturn ? ' .noreturn' : ''};`;
    }
    case 'instr': return indent + printInstruction(s);
  }
}

/** One instruction as PTX text, guard and `;` included. */
export function printInstruction(i: Instruction): string {
  const guard = i.guard ? `@${i.guard.negated ? '!' : ''}${i.guard.pred} ` : '';
  return `${guard}${i.opcode}${i.operands.length ? ` ${i.operands.map(printOperand).join(', ')}` : ''};`;
}

/** One operand as PTX text. */
export function printOperand(o: Operand): string {
  switch (o.kind) {
    case 'name': return o.name;
    case 'sink': return '_';
    case 'int': case 'float': return o.text;
    case 'expr': return printExpr(o.expr);
    case 'pair': return `${o.first}|${o.second}`;
    case 'vector': return `{${o.items.map(printOperand).join(', ')}}`;
    case 'list': return `(${o.items.map(printOperand).join(', ')})`;
    case 'address': {
      const off = o.base === undefined ? `${o.offset}` : o.offset === 0n ? '' : o.offset < 0n ? `+${o.offset}` : `+${o.offset}`;
      const rest = o.rest ? o.rest.map((r) => `, ${printOperand(r)}`).join('') : '';
      return `[${o.base ?? ''}${off}${rest}]`;
    }
  }
}

/** An expression, fully parenthesized where it nests (so that it reparses to the same tree). */
export function printExpr(e: Expr): string {
  switch (e.kind) {
    case 'int': case 'float': return e.text;
    case 'sym': return e.name;
    case 'unary': return `${e.op}(${printExpr(e.arg)})`;
    case 'binary': return `(${printExpr(e.left)} ${e.op} ${printExpr(e.right)})`;
    case 'call': return `${e.fn}(${e.args.map(printExpr).join(', ')})`;
  }
}
