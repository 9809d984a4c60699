/**
 * The names of a sketch and where they are declared, for the language server's go-to-definition
 * and hover. Built from the sketch language's own lexer (`src/lang/lexer.ts`; its token types in
 * `src/lang/tokens.ts`), line by line, so it works on a sketch with errors too: a declaration is a
 * top-level line starting with `param`, `barrier`, `smem`, `tmem`, `role` or `kernel`; a variable
 * is declared by its role's first assignment to it or by a `for` (docs/LANGUAGE.md, sections 3 and
 * 4). Parameters, barriers and buffers share one namespace, roles have their own, variables belong
 * to their role.
 *
 * Lines and columns are 1-based; `endCol` is one past the last character (as in the sketch
 * diagnostics).
 */
import type { IToken } from 'chevrotain';
import { lex } from '../lang/lexer.js';
import { Assign, Ident, KwBarrier, KwFor, KwGmem, KwKernel, KwParam, KwRole, KwSmem, KwTmem, Mnemonic, Newline, StringLit } from '../lang/tokens.js';

/** What a declared name is. */
export type SymbolKind = 'param' | 'barrier' | 'smem' | 'tmem' | 'gmem' | 'role' | 'kernel' | 'variable';

/** A span of the source: 1-based line and column, `endCol` one past the end. */
export interface Span {
  line: number;
  col: number;
  endCol: number;
}

/** A declared name. */
export interface SymbolDef extends Span {
  name: string;
  kind: SymbolKind;
  /** The declaration's whole line, trimmed (comments included). */
  text: string;
  /** For a variable: the role it belongs to. */
  role?: string;
}

/** One word of the source the server can say something about: a name or an operation. */
export interface SymbolWord extends Span {
  text: string;
  /** `name`: an identifier (a reference or a declaration); `op`: an operation's mnemonic. */
  type: 'name' | 'op';
  /** The role whose block the word is in, if any. */
  role?: string;
}

/** Every declaration and every word of a sketch. */
export interface SymbolIndex {
  defs: SymbolDef[];
  words: SymbolWord[];
}

const DECL_KIND = new Map<unknown, SymbolKind>([
  [KwParam, 'param'], [KwBarrier, 'barrier'], [KwSmem, 'smem'], [KwTmem, 'tmem'], [KwGmem, 'gmem'], [KwRole, 'role'], [KwKernel, 'kernel'],
]);

const span = (t: IToken): Span => ({ line: t.startLine ?? 1, col: t.startColumn ?? 1, endCol: (t.endColumn ?? t.startColumn ?? 1) + 1 });

/** Splits the tokens into lines (the Newline tokens and the layout tokens, which have no text, left out). */
function tokenLines(tokens: IToken[]): IToken[][] {
  const lines: IToken[][] = [];
  let cur: IToken[] = [];
  for (const t of tokens) {
    if (t.tokenType === Newline) {
      if (cur.length) lines.push(cur);
      cur = [];
    } else if (t.image !== '' && Number.isFinite(t.startLine)) cur.push(t);
  }
  if (cur.length) lines.push(cur);
  return lines;
}

/** Indexes the declarations and words of `source` (never throws; a sketch the lexer rejects whole gives an empty index). */
export function indexSymbols(source: string): SymbolIndex {
  const defs: SymbolDef[] = [];
  const words: SymbolWord[] = [];
  let lx: ReturnType<typeof lex>;
  try {
    lx = lex(source, '');
  } catch {
    return { defs, words };
  }
  const lines = source.split(/\r\n|\r|\n/);
  let role: string | undefined;
  const vars = new Set<string>();
  for (const toks of tokenLines(lx.tokens)) {
    const first = toks[0]!;
    const text = (lines[(first.startLine ?? 1) - 1] ?? '').trim();
    const top = first.startColumn === 1;
    const kind = top ? DECL_KIND.get(first.tokenType) : undefined;
    if (top) role = undefined;
    if (kind) {
      const name = toks[1];
      if (name && (name.tokenType === Ident || (kind === 'kernel' && name.tokenType === StringLit))) {
        const image = name.tokenType === StringLit ? name.image.slice(1, -1) : name.image;
        defs.push({ name: image, kind, text, ...span(name) });
        if (kind === 'role') role = image;
      }
    } else if (role !== undefined) {
      // `for V in …` and `V = …` declare a role's variable the first time.
      const v = first.tokenType === KwFor ? toks[1] : first.tokenType === Ident && toks[1]?.tokenType === Assign ? first : undefined;
      if (v && v.tokenType === Ident && !vars.has(`${role}\0${v.image}`)) {
        vars.add(`${role}\0${v.image}`);
        defs.push({ name: v.image, kind: 'variable', text, role, ...span(v) });
      }
    }
    toks.forEach((t, i) => {
      const inRole = role !== undefined && !kind ? { role } : {};
      if (t.tokenType === Mnemonic) words.push({ text: t.image, type: 'op', ...span(t), ...inRole });
      else if (t.tokenType === Ident) {
        // `key=value` options are not names; a statement's leading `work` / `exit` is an operation.
        if (i > 0 && toks[i + 1]?.tokenType === Assign) return;
        const isOp = i === 0 && !kind && (t.image === 'work' || t.image === 'exit') && toks[1]?.tokenType !== Assign;
        words.push({ text: t.image, type: isOp ? 'op' : 'name', ...span(t), ...inRole });
      }
    });
  }
  return { defs, words };
}

/** The word at 1-based `line`, `col` (a cursor just after a word's last character counts), or undefined. */
export function wordAt(index: SymbolIndex, line: number, col: number): SymbolWord | undefined {
  return index.words.find((w) => w.line === line && col >= w.col && col <= w.endCol);
}

/**
 * The declaration `word` refers to: a parameter, barrier or buffer; else a variable of the word's
 * role; else a role or the kernel. Undefined for builtins, option keys and unknown names.
 */
export function definitionOf(index: SymbolIndex, word: SymbolWord): SymbolDef | undefined {
  if (word.type !== 'name') return undefined;
  const named = index.defs.filter((d) => d.name === word.text);
  const global = named.find((d) => d.kind === 'param' || d.kind === 'barrier' || d.kind === 'smem' || d.kind === 'tmem' || d.kind === 'gmem');
  if (global) return global;
  const variable = named.find((d) => d.kind === 'variable' && d.role === word.role);
  if (variable) return variable;
  return named.find((d) => d.kind === 'role') ?? named.find((d) => d.kind === 'kernel');
}

/** Every word that refers to `def` (its own declaration included), in source order. */
export function referencesOf(index: SymbolIndex, def: SymbolDef): SymbolWord[] {
  return index.words.filter((w) => w.text === def.name && definitionOf(index, w) === def);
}
