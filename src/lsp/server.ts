/**
 * `mbsim lsp`: a Language Server (LSP 3.17, JSON-RPC over stdio, vscode-languageserver) for
 * sketch files (`.mbk`, docs/LANGUAGE.md). docs/EDITOR.md describes what it offers:
 *
 * - diagnostics as you type: every `parseSketch` diagnostic with its stable code and span;
 * - the checker's hazards on open and on save, and after a pause in typing: `mbsim check` within
 *   small bounds (src/lsp/hazards.ts), each with its related locations;
 * - hover: an operation's PTX meaning and ISA section, a name's declaration, a builtin;
 * - go to definition and find references for parameters, barriers, buffers, roles and variables;
 *   the document's declarations as its outline.
 *
 * The check runs in a worker thread (`check-thread.ts`): the server keeps answering meanwhile, a
 * newer edit replaces a check still waiting, a result for an outdated version is dropped, and a
 * check that overruns its bounds is stopped from outside.
 */
import { fileURLToPath } from 'node:url';
import {
  createConnection, ProposedFeatures, TextDocuments, TextDocumentSyncKind,
  type Connection, type DocumentSymbol, type InitializeResult, type Location,
} from 'vscode-languageserver/node';
import { TextDocument } from 'vscode-languageserver-textdocument';
import type { Kernel } from '../kernel/ir.js';
import { CheckThread } from './check-thread.js';
import { definitionAt, hoverAt, locationOf, rangeOf, sketchDiagnostics } from './features.js';
import { DEFAULT_HAZARD_BOUNDS, type HazardBounds } from './hazards.js';
import { definitionOf, indexSymbols, referencesOf, wordAt, type SymbolIndex } from './symbols.js';

/** Options of {@link startLanguageServer}. */
export interface LspOptions {
  /** The client's messages (default: stdin). */
  input?: NodeJS.ReadableStream;
  /** Where the server writes (default: stdout). */
  output?: NodeJS.WritableStream;
  /** Bounds of each check (default {@link DEFAULT_HAZARD_BOUNDS}). */
  bounds?: HazardBounds;
  /** Milliseconds without an edit before the check runs on the new text; null: only on open and save (default 1000). */
  checkDelayMs?: number | null;
}

/** Client settings the server reads from `initializationOptions` (all optional). */
interface InitOptions {
  checkOnChange?: boolean;
  checkDelayMs?: number;
  checkTimeoutMs?: number;
  maxStates?: number;
}

/** What the server keeps per open document. */
interface DocState {
  version: number;
  index: SymbolIndex;
  kernel?: Kernel;
  timer?: NodeJS.Timeout;
  /** The version the last check ran on (hazards published for it). */
  checked?: number;
}

/** The file name a document's diagnostics and locations use: its path for `file:` URIs. */
function fileOf(uri: string): string {
  try {
    return uri.startsWith('file:') ? fileURLToPath(uri) : uri;
  } catch {
    return uri;
  }
}

const positive = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v > 0;

/** Starts the server on `input` / `output`; resolves when the connection closes. */
export function startLanguageServer(opts: LspOptions = {}): Promise<void> {
  const conn: Connection = createConnection(ProposedFeatures.all, opts.input ?? process.stdin, opts.output ?? process.stdout);
  const docs = new TextDocuments(TextDocument);
  const state = new Map<string, DocState>();
  const thread = new CheckThread((msg) => conn.console.log(msg));
  let bounds: HazardBounds = { ...(opts.bounds ?? DEFAULT_HAZARD_BOUNDS) };
  let delay: number | null = opts.checkDelayMs === undefined ? 1000 : opts.checkDelayMs;

  conn.onInitialize((params): InitializeResult => {
    const o = (params.initializationOptions ?? {}) as InitOptions;
    if (o.checkOnChange === false) delay = null;
    if (positive(o.checkDelayMs)) delay = o.checkDelayMs;
    if (positive(o.checkTimeoutMs)) bounds = { ...bounds, timeoutMs: o.checkTimeoutMs };
    if (positive(o.maxStates)) bounds = { ...bounds, maxStates: Math.floor(o.maxStates) };
    return {
      capabilities: {
        textDocumentSync: { openClose: true, change: TextDocumentSyncKind.Incremental, save: { includeText: false } },
        hoverProvider: true,
        definitionProvider: true,
        referencesProvider: true,
        documentSymbolProvider: true,
      },
      serverInfo: { name: 'mbsim' },
    };
  });

  /** Parses the document, publishes its diagnostics and remembers its kernel and names. */
  const analyze = (doc: TextDocument): DocState => {
    const old = state.get(doc.uri);
    if (old?.timer) clearTimeout(old.timer);
    const text = doc.getText();
    const { result, diagnostics } = sketchDiagnostics(text, fileOf(doc.uri));
    const s: DocState = { version: doc.version, index: indexSymbols(text) };
    if (result.kernel && !result.diagnostics.length) s.kernel = result.kernel;
    state.set(doc.uri, s);
    void conn.sendDiagnostics({ uri: doc.uri, version: doc.version, diagnostics });
    return s;
  };

  /** Runs the check on the document's current version (if it parsed) and publishes its hazards, unless the text changed meanwhile. */
  const runCheck = async (uri: string) => {
    const s = state.get(uri);
    const doc = docs.get(uri);
    if (!s || !doc || !s.kernel || s.version !== doc.version || s.checked === s.version) return;
    s.timer = undefined;
    s.checked = s.version;
    const version = s.version;
    const diagnostics = await thread.run({ text: doc.getText(), file: fileOf(uri), uri, bounds });
    if (diagnostics === null || state.get(uri)?.version !== version) return;
    void conn.sendDiagnostics({ uri, version, diagnostics });
  };

  const schedule = (uri: string, ms: number) => {
    const s = state.get(uri);
    if (!s?.kernel) return;
    if (s.timer) clearTimeout(s.timer);
    s.timer = setTimeout(() => void runCheck(uri), ms);
  };

  docs.onDidOpen((e) => {
    analyze(e.document);
    schedule(e.document.uri, 0);
  });
  docs.onDidChangeContent((e) => {
    // onDidOpen already analyzed the first version.
    if (state.get(e.document.uri)?.version === e.document.version) return;
    analyze(e.document);
    if (delay !== null) schedule(e.document.uri, delay);
  });
  docs.onDidSave((e) => {
    const s = state.get(e.document.uri);
    if (!s || s.version !== e.document.version) analyze(e.document);
    schedule(e.document.uri, 0);
  });
  docs.onDidClose((e) => {
    const s = state.get(e.document.uri);
    if (s?.timer) clearTimeout(s.timer);
    state.delete(e.document.uri);
    void conn.sendDiagnostics({ uri: e.document.uri, diagnostics: [] });
  });

  const indexOf = (uri: string): { text: string; index: SymbolIndex } | null => {
    const doc = docs.get(uri);
    if (!doc) return null;
    const s = state.get(uri);
    const text = doc.getText();
    return { text, index: s && s.version === doc.version ? s.index : indexSymbols(text) };
  };

  conn.onHover((p) => {
    const d = indexOf(p.textDocument.uri);
    return d ? hoverAt(d.text, p.position, d.index) : null;
  });
  conn.onDefinition((p) => {
    const d = indexOf(p.textDocument.uri);
    return d ? definitionAt(d.text, p.textDocument.uri, p.position, d.index) : null;
  });
  conn.onReferences((p): Location[] => {
    const d = indexOf(p.textDocument.uri);
    const w = d && wordAt(d.index, p.position.line + 1, p.position.character + 1);
    const def = d && w ? definitionOf(d.index, w) : undefined;
    if (!d || !def) return [];
    return referencesOf(d.index, def)
      .filter((r) => p.context.includeDeclaration || r.line !== def.line || r.col !== def.col)
      .map((r) => locationOf(p.textDocument.uri, r));
  });
  conn.onDocumentSymbol((p): DocumentSymbol[] => {
    const d = indexOf(p.textDocument.uri);
    if (!d) return [];
    // LSP SymbolKind numbers: Variable 13, Constant 14, Class 5, Module 2, Function 12, Field 8.
    const kind = { param: 14, barrier: 13, smem: 8, tmem: 8, role: 12, kernel: 2, variable: 13 } as const;
    return d.index.defs.filter((x) => x.kind !== 'variable').map((x) => ({
      name: x.name, detail: x.text, kind: kind[x.kind], range: rangeOf({ line: x.line, col: 1, endCol: x.text.length + 1 }), selectionRange: rangeOf(x),
    }));
  });

  docs.listen(conn);
  return new Promise<void>((done) => {
    conn.onExit(() => {
      thread.close();
      done();
    });
    conn.listen();
  });
}
