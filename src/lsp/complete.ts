/**
 * Completion for sketches: what may be written at the cursor, from the text before it on its line
 * (docs/LANGUAGE.md, sections 3, 6 and 7):
 *
 * - at the start of a top-level line: the declaration keywords;
 * - at the start of a statement in a role, or after `NAME = `: the operations (from the operation
 *   table, with their operands and PTX meaning) and, at the start, the statement keywords;
 * - anywhere else: the declared names (parameters, barriers, buffers, the role's variables) and
 *   the builtins.
 *
 * Each item replaces the whole word under the cursor (an operation's dots included).
 */
import type { CompletionItem, CompletionItemKind, Position } from 'vscode-languageserver';
import { OPS } from '../lang/ops.js';
import { MNEMONICS } from '../lang/ops-spelling.js';
import { opHover } from './features.js';
import type { SymbolIndex } from './symbols.js';

/** LSP `CompletionItemKind` numbers used here. */
const KIND = { function: 3, variable: 6, keyword: 14, constant: 21, struct: 22 } as const satisfies Record<string, CompletionItemKind>;

const DECLARATIONS = ['kernel', 'param', 'barrier', 'smem', 'tmem', 'gmem', 'role'];
const STATEMENTS = ['for', 'if', 'elif', 'else', 'elect', 'pass'];
const BUILTINS = ['cta', 'ncta', 'instance', 'clusterid', 'nthreads', 'nwarps'];

/** The role whose block line `line` (1-based) is in: the last `role` declaration above it, if no other top-level line came between. */
function roleAt(index: SymbolIndex, lines: string[], line: number): string | undefined {
  for (let l = line - 1; l >= 1; l--) {
    const text = lines[l - 1] ?? '';
    if (/^\S/.test(text) && !text.startsWith('#')) return index.defs.find((d) => d.kind === 'role' && d.line === l)?.name;
  }
  return undefined;
}

/** The completion items at `pos` of `text`. */
export function completionsAt(text: string, pos: Position, index: SymbolIndex): CompletionItem[] {
  const lines = text.split(/\r\n|\r|\n/);
  const lineText = lines[pos.line] ?? '';
  const before = lineText.slice(0, pos.character);
  if (/#/.test(before)) return [];
  const word = /[A-Za-z0-9_.:]*$/.exec(before)![0];
  const after = /^[A-Za-z0-9_.:]*/.exec(lineText.slice(pos.character))![0];
  const range = { start: { line: pos.line, character: pos.character - word.length }, end: { line: pos.line, character: pos.character + after.length } };
  const item = (label: string, kind: CompletionItemKind, extra: Partial<CompletionItem> = {}): CompletionItem => ({ label, kind, textEdit: { range, newText: label }, ...extra });
  const head = before.slice(0, before.length - word.length);
  if (head === '') return DECLARATIONS.map((k) => item(k, KIND.keyword));
  const statementStart = /^\s+$/.test(head);
  if (statementStart || /^\s+[A-Za-z_]\w*\s*=\s*$/.test(head)) {
    const ops = MNEMONICS.map((name) => {
      const doc = opHover(name);
      return item(name, KIND.function, { ...(doc ? { documentation: { kind: 'markdown', value: doc } } : {}), detail: OPS.find((o) => o.name === name)?.usage || 'PTX spelling' });
    });
    return statementStart ? [...STATEMENTS.map((k) => item(k, KIND.keyword)), ...ops] : ops;
  }
  const role = roleAt(index, lines, pos.line + 1);
  const names = index.defs.filter((d) => d.kind === 'param' || d.kind === 'barrier' || d.kind === 'smem' || d.kind === 'tmem' || d.kind === 'gmem' || (d.kind === 'variable' && d.role === role));
  const seen = new Set<string>();
  const out: CompletionItem[] = [];
  for (const d of names) {
    if (seen.has(d.name)) continue;
    seen.add(d.name);
    out.push(item(d.name, d.kind === 'param' ? KIND.constant : d.kind === 'variable' ? KIND.variable : KIND.struct, { detail: d.text }));
  }
  return [...out, ...BUILTINS.map((b) => item(b, KIND.variable, { detail: 'builtin' }))];
}
