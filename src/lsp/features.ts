/**
 * The language server's answers, as pure functions of a sketch's text: its diagnostics (from
 * `parseSketch`), the hover of a position (an operation's PTX meaning, a name's declaration) and
 * the definition of the name at a position. Positions are LSP positions (0-based line, 0-based
 * UTF-16 character, which is the sketch language's column − 1).
 */
import type { Diagnostic, DocumentSymbol, Hover, Location, Position, Range } from 'vscode-languageserver';
import type { SrcLoc } from '../kernel/ir.js';
import { parseSketch, type SketchDiagnostic, type SketchResult } from '../lang/index.js';
import { describeMnemonic } from './optext.js';
import { definitionOf, indexSymbols, referencesOf, wordAt, type Span, type SymbolDef, type SymbolIndex } from './symbols.js';

/** LSP `DiagnosticSeverity` values (the protocol's numbers). */
export const SEVERITY = { error: 1, warning: 2, information: 3, hint: 4 } as const;

/** The `source` of every diagnostic the server publishes for the sketch language. */
export const SOURCE = 'mbsim';

/** The LSP range of a 1-based span (`endCol` one past the end). */
export function rangeOf(s: { line: number; col: number; endCol?: number }): Range {
  const line = Math.max(0, s.line - 1);
  const start = Math.max(0, s.col - 1);
  return { start: { line, character: start }, end: { line, character: Math.max(start + 1, (s.endCol ?? s.col + 1) - 1) } };
}

/** A source location as an LSP location in the document `uri`. */
export function locationOf(uri: string, l: SrcLoc | Span): Location {
  return { uri, range: rangeOf(l) };
}

/** One sketch diagnostic as an LSP diagnostic: its code, the message, the hint on a second line. */
export function toDiagnostic(d: SketchDiagnostic): Diagnostic {
  return {
    range: rangeOf(d), severity: SEVERITY.error, code: d.code, source: SOURCE,
    message: d.hint ? `${d.message}\nhint: ${d.hint}` : d.message,
  };
}

/** Parses `text` (as the file `file`) and returns the parse result with its LSP diagnostics. */
export function sketchDiagnostics(text: string, file: string): { result: SketchResult; diagnostics: Diagnostic[] } {
  const result = parseSketch(text, file);
  return { result, diagnostics: result.diagnostics.map(toDiagnostic) };
}

/** What a builtin name of role code means (docs/LANGUAGE.md, section 4). */
const BUILTINS: Record<string, string> = {
  cta: 'builtin: the CTA\'s rank in its cluster (0 .. ncta − 1)',
  ncta: 'builtin: the number of CTAs in the cluster (the kernel\'s `cluster=`)',
  instance: 'builtin: the role instance\'s number (0 .. instances − 1)',
  clusterid: 'builtin: the cluster\'s number in the grid (0 .. grid − 1)',
  nthreads: 'builtin: the role\'s number of threads',
  nwarps: 'builtin: the role\'s number of warps',
};

const KIND_TEXT: Record<SymbolDef['kind'], string> = {
  param: 'parameter', barrier: 'barrier array (mbarriers per CTA)', smem: 'shared-memory buffer array', tmem: 'tensor-memory buffer array', gmem: 'global-memory array (one per launch)',
  role: 'role', kernel: 'kernel', variable: 'variable',
};

/** Markdown hover of an operation written `mnemonic`, or null for an unknown one. */
export function opHover(mnemonic: string): string | null {
  const d = describeMnemonic(mnemonic);
  if (!d) return null;
  const { spec, text } = d;
  const head = `**${spec.name}**${spec.usage ? ` \`${spec.usage}\`` : ''}${spec.arch ? ` (${spec.arch} only)` : ''}`;
  const lines = [head, '', `PTX: \`${text.ptx}\``, '', text.meaning];
  if (d.sem || d.scope) lines.push('', `Written: ${[d.sem && `.${d.sem}`, d.scope && `.${d.scope}`].filter(Boolean).join(' ')} (kept on the operation).`);
  if (spec.options?.length) lines.push('', `Options: ${spec.options.map((o) => `\`${o}=\``).join(', ')}${spec.required?.length ? ` (required: ${spec.required.map((o) => `\`${o}=\``).join(', ')})` : ''}.`);
  if (spec.dest) lines.push('', spec.dest === 'token' ? '`TOK = …` keeps the arrive\'s token.' : spec.dest === 'result' ? '`R = …` makes it a single test: R is 1 or 0.' : 'Its result must be assigned: `N = …`.');
  lines.push('', `PTX ISA ${text.sections}. See docs/LANGUAGE.md (section 7) and docs/SEMANTICS.md.`);
  return lines.join('\n');
}

/** Markdown hover of a declared name. */
function nameHover(def: SymbolDef): string {
  const where = def.kind === 'variable' ? `of role \`${def.role}\`, first assigned at line ${def.line}` : `declared at line ${def.line}`;
  return [`**${def.name}**: ${KIND_TEXT[def.kind]}, ${where}`, '', '```mbk', def.text, '```'].join('\n');
}

/** The hover at `pos` of `text`: an operation's PTX meaning, a name's declaration, a builtin; null elsewhere. */
export function hoverAt(text: string, pos: Position, index: SymbolIndex = indexSymbols(text)): Hover | null {
  const w = wordAt(index, pos.line + 1, pos.character + 1);
  if (!w) return null;
  let md: string | null = null;
  if (w.type === 'op') md = opHover(w.text);
  else {
    const def = definitionOf(index, w);
    md = def ? nameHover(def) : (Object.hasOwn(BUILTINS, w.text) ? BUILTINS[w.text]! : null);
  }
  return md ? { contents: { kind: 'markdown', value: md }, range: rangeOf(w) } : null;
}

/** The declaration of the name at `pos` of `text` in document `uri`, or null. */
export function definitionAt(text: string, uri: string, pos: Position, index: SymbolIndex = indexSymbols(text)): Location | null {
  const w = wordAt(index, pos.line + 1, pos.character + 1);
  const def = w ? definitionOf(index, w) : undefined;
  return def ? locationOf(uri, def) : null;
}

/** Every use of the name at `pos` (its declaration too when `withDeclaration`), as locations in `uri`. */
export function referencesAt(text: string, uri: string, pos: Position, withDeclaration: boolean, index: SymbolIndex = indexSymbols(text)): Location[] {
  const w = wordAt(index, pos.line + 1, pos.character + 1);
  const def = w ? definitionOf(index, w) : undefined;
  if (!def) return [];
  return referencesOf(index, def)
    .filter((r) => withDeclaration || r.line !== def.line || r.col !== def.col)
    .map((r) => locationOf(uri, r));
}

/** LSP `SymbolKind` numbers of the declarations: Module 2, Field 8, Function 12, Variable 13, Constant 14. */
const SYMBOL_KIND: Record<SymbolDef['kind'], DocumentSymbol['kind']> = { param: 14, barrier: 13, smem: 8, tmem: 8, gmem: 8, role: 12, kernel: 2, variable: 13 };

/** The outline: the kernel, parameters, barriers, buffers and roles, each spanning its declaration line. */
export function documentSymbols(index: SymbolIndex): DocumentSymbol[] {
  return index.defs.filter((x) => x.kind !== 'variable').map((x) => ({
    name: x.name, detail: x.text, kind: SYMBOL_KIND[x.kind],
    range: rangeOf({ line: x.line, col: 1, endCol: Math.max(x.endCol, x.text.length + 1) }), selectionRange: rangeOf(x),
  }));
}
