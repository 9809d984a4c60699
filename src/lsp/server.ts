/**
 * `mbsim lsp`: a Language Server (LSP 3.17, JSON-RPC over stdio, vscode-languageserver) for
 * sketch files (`.mbk`, docs/LANGUAGE.md). docs/EDITOR.md describes what it offers:
 *
 * - diagnostics as you type: every `parseSketch` diagnostic with its stable code and span;
 * - the checker's hazards on open and on save, and after a pause in typing: `mbsim check` within
 *   small bounds (src/lsp/hazards.ts), each with its related locations;
 * - hover: an operation's PTX meaning and ISA section, a name's declaration, a builtin;
 * - go to definition and find references for parameters, barriers, buffers, roles and variables;
 *   the document's declarations as its outline; completion of operations and names.
 *
 * The check runs in a worker thread (`check-thread.ts`): the server keeps answering meanwhile, a
 * newer edit replaces a check still waiting, a result for an outdated version is dropped, and a
 * check that overruns its bounds is stopped from outside.
 */
import { fileURLToPath } from 'node:url';
import {
  createConnection, ProposedFeatures, TextDocuments, TextDocumentSyncKind, type Connection, type DocumentSymbolParams, type InitializeResult,
  type ReferenceParams, type TextDocumentPositionParams,
} from 'vscode-languageserver/node';
import { TextDocument } from 'vscode-languageserver-textdocument';
import type { Kernel } from '../kernel/ir.js';
import { CheckThread } from './check-thread.js';
import { completionsAt } from './complete.js';
import { definitionAt, documentSymbols, hoverAt, referencesAt, sketchDiagnostics } from './features.js';
import { DEFAULT_HAZARD_BOUNDS, type HazardBounds } from './hazards.js';
import { checkedFraming } from './framing.js';
import { checkedDocumentEvents, checkedRequest } from './params.js';
import { indexSymbols, type SymbolIndex } from './symbols.js';

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
  /** Where the line about a malformed message goes before the server ends with 2 (default: stderr). */
  error?: (line: string) => void;
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

/** What the server offers (LSP 3.17 server capabilities). */
const CAPABILITIES: InitializeResult['capabilities'] = {
  textDocumentSync: { openClose: true, change: TextDocumentSyncKind.Incremental, save: { includeText: false } },
  hoverProvider: true,
  definitionProvider: true,
  referencesProvider: true,
  documentSymbolProvider: true,
  completionProvider: { triggerCharacters: ['.'] },
};

/**
 * Most milliseconds a client may ask for as the check's timeout or the typing pause (about 11.6
 * days, the CLI's --timeout limit): the thread's kill timer (twice the timeout plus 2 s) must stay
 * below 2^31 ms, what a timer holds. Past it Node set the timer to 1 ms and killed every check at once.
 */
export const MAX_CLIENT_MS = 1_000_000_000;

/** Why `v` is no positive number up to `max`, or null. */
function positiveProblem(v: unknown, max: number): string | null {
  if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) return 'is not a positive number';
  return v > max ? `is more than ${max.toLocaleString('en-US')}` : null;
}

/** Quiet time (ms) after a change before the document is parsed: a burst of changes costs one parse. */
export const PARSE_DEBOUNCE_MS = 50;

/** The open documents, their parses and the checks scheduled for them, publishing on `conn`. */
class Sketches {
  readonly docs = new TextDocuments(TextDocument);
  private readonly state = new Map<string, DocState>();
  /** Parses waiting for the end of a burst of changes, by document. */
  private readonly parsing = new Map<string, ReturnType<typeof setTimeout>>();
  readonly thread: CheckThread;
  bounds: HazardBounds;
  /** Pause before a check while typing (ms); null: check only on open and save. */
  delay: number | null;

  constructor(private readonly conn: Connection, opts: LspOptions) {
    this.thread = new CheckThread((msg) => conn.console.log(msg));
    this.bounds = { ...(opts.bounds ?? DEFAULT_HAZARD_BOUNDS) };
    this.delay = opts.checkDelayMs === undefined ? 1000 : opts.checkDelayMs;
  }

  /**
   * Applies the client's `initializationOptions`; a value out of its range is not used, with a
   * line in the client's log naming it.
   */
  configure(o: InitOptions): void {
    if (o.checkOnChange === false) this.delay = null;
    const take = (name: keyof InitOptions, max: number, use: (v: number) => void) => {
      const v = o[name];
      if (v === undefined) return;
      const why = positiveProblem(v, max);
      if (why === null) use(v as number);
      else this.conn.console.warn(`mbsim: initializationOptions.${name} ${why}: not used (${typeof v === 'number' ? v : JSON.stringify(v)?.slice(0, 40)})`);
    };
    take('checkDelayMs', MAX_CLIENT_MS, (v) => (this.delay = v));
    take('checkTimeoutMs', MAX_CLIENT_MS, (v) => (this.bounds = { ...this.bounds, timeoutMs: v }));
    take('maxStates', Number.MAX_SAFE_INTEGER, (v) => (this.bounds = { ...this.bounds, maxStates: Math.max(1, Math.floor(v)) }));
  }

  /** Parses the document, publishes its diagnostics (withdrawing its hazards) and remembers its kernel and names. */
  analyze(doc: TextDocument): void {
    const old = this.state.get(doc.uri);
    if (old?.timer) clearTimeout(old.timer);
    const text = doc.getText();
    const { result, diagnostics } = sketchDiagnostics(text, fileOf(doc.uri));
    const s: DocState = { version: doc.version, index: indexSymbols(text) };
    if (result.kernel && !result.diagnostics.length) s.kernel = result.kernel;
    this.state.set(doc.uri, s);
    void this.conn.sendDiagnostics({ uri: doc.uri, version: doc.version, diagnostics });
  }

  /** The text and names of an open document (re-indexed if its analysis is behind), or null. */
  indexOf(uri: string): { text: string; index: SymbolIndex } | null {
    const doc = this.docs.get(uri);
    if (!doc) return null;
    const s = this.state.get(uri);
    const text = doc.getText();
    return { text, index: s && s.version === doc.version ? s.index : indexSymbols(text) };
  }

  /** Checks the document `ms` milliseconds from now (a parsed version only; an earlier schedule is replaced). */
  schedule(uri: string, ms: number): void {
    const s = this.state.get(uri);
    if (!s?.kernel) return;
    if (s.timer) clearTimeout(s.timer);
    s.timer = setTimeout(() => void this.runCheck(uri), ms);
  }

  /** Runs the check on the document's current version and publishes its hazards, unless the text changed meanwhile. */
  private async runCheck(uri: string): Promise<void> {
    const s = this.state.get(uri);
    const doc = this.docs.get(uri);
    if (!s || !doc || !s.kernel || s.version !== doc.version || s.checked === s.version) return;
    s.timer = undefined;
    s.checked = s.version;
    const version = s.version;
    const diagnostics = await this.thread.run({ text: doc.getText(), file: fileOf(uri), uri, bounds: this.bounds });
    if (diagnostics === null || this.state.get(uri)?.version !== version) return;
    void this.conn.sendDiagnostics({ uri, version, diagnostics });
  }

  /**
   * Parses the document {@link PARSE_DEBOUNCE_MS} after the last of a burst of changes, its
   * latest version only (a ~1 MB sketch parses in seconds: a parse per keystroke would queue them
   * all); then schedules its check after the typing pause.
   */
  analyzeSoon(uri: string): void {
    const t = this.parsing.get(uri);
    if (t) clearTimeout(t);
    this.parsing.set(uri, setTimeout(() => {
      this.parsing.delete(uri);
      const doc = this.docs.get(uri);
      if (!doc || this.analyzed(uri, doc.version)) return;
      this.analyze(doc);
      if (this.delay !== null) this.schedule(uri, this.delay);
    }, PARSE_DEBOUNCE_MS));
  }

  /** Forgets a closed document and clears its diagnostics. */
  close(uri: string): void {
    const t = this.parsing.get(uri);
    if (t) clearTimeout(t);
    this.parsing.delete(uri);
    const s = this.state.get(uri);
    if (s?.timer) clearTimeout(s.timer);
    this.state.delete(uri);
    void this.conn.sendDiagnostics({ uri, diagnostics: [] });
  }

  /** Whether the document's version `v` is already analyzed. */
  analyzed(uri: string, v: number): boolean {
    return this.state.get(uri)?.version === v;
  }

  /** Wires the document events: parse on every change, check on open and save and after a pause. */
  listen(): void {
    const { docs } = this;
    docs.onDidOpen((e) => {
      this.analyze(e.document);
      this.schedule(e.document.uri, 0);
    });
    docs.onDidChangeContent((e) => {
      if (this.analyzed(e.document.uri, e.document.version)) return; // onDidOpen did the first version
      this.analyzeSoon(e.document.uri);
    });
    docs.onDidSave((e) => {
      if (!this.analyzed(e.document.uri, e.document.version)) this.analyze(e.document);
      this.schedule(e.document.uri, 0);
    });
    docs.onDidClose((e) => this.close(e.document.uri));
    docs.listen(checkedDocumentEvents(this.conn));
  }
}

/**
 * Starts the server on `input` / `output`; resolves at the client's `exit` notification with the
 * exit code the protocol asks for: 0 after a `shutdown` request, 1 without one.
 */
export function startLanguageServer(opts: LspOptions = {}): Promise<number> {
  let finish: (code: number) => void = () => undefined;
  // A message the base protocol cannot frame ends the server: one line, exit code 2 (framing.ts).
  // A body that is not JSON is answered as JSON-RPC says (ParseError, id null) and logged; the
  // server goes on with the next message.
  const output = opts.output ?? process.stdout;
  const framed = (opts.input ?? process.stdin).pipe(checkedFraming((line) => {
    (opts.error ?? ((t: string) => process.stderr.write(`${t}\n`)))(`mbsim lsp: error: ${line}`);
    finish(2);
  }, (line) => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: line } });
    output.write(`Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    conn.console.error(`mbsim: ignored ${line}`);
  }));
  const conn: Connection = createConnection(ProposedFeatures.all, framed, output);
  const sk = new Sketches(conn, opts);
  conn.onInitialize((params): InitializeResult => {
    sk.configure((params.initializationOptions ?? {}) as InitOptions);
    return { capabilities: CAPABILITIES, serverInfo: { name: 'mbsim' } };
  });
  // Registered by method name: the typed conn.onHover & co. read params.workDoneToken before
  // the handler runs (null params threw there).
  conn.onRequest('textDocument/hover', checkedRequest('textDocument/hover', { position: true }, (p: TextDocumentPositionParams) => {
    const d = sk.indexOf(p.textDocument.uri);
    return d ? hoverAt(d.text, p.position, d.index) : null;
  }));
  conn.onRequest('textDocument/definition', checkedRequest('textDocument/definition', { position: true }, (p: TextDocumentPositionParams) => {
    const d = sk.indexOf(p.textDocument.uri);
    return d ? definitionAt(d.text, p.textDocument.uri, p.position, d.index) : null;
  }));
  conn.onRequest('textDocument/references', checkedRequest('textDocument/references', { position: true, context: true }, (p: ReferenceParams) => {
    const d = sk.indexOf(p.textDocument.uri);
    return d ? referencesAt(d.text, p.textDocument.uri, p.position, p.context.includeDeclaration, d.index) : [];
  }));
  conn.onRequest('textDocument/completion', checkedRequest('textDocument/completion', { position: true }, (p: TextDocumentPositionParams) => {
    const d = sk.indexOf(p.textDocument.uri);
    return d ? completionsAt(d.text, p.position, d.index) : [];
  }));
  conn.onRequest('textDocument/documentSymbol', checkedRequest('textDocument/documentSymbol', {}, (p: DocumentSymbolParams) => {
    const d = sk.indexOf(p.textDocument.uri);
    return d ? documentSymbols(d.index) : [];
  }));
  sk.listen();
  let shutdown = false;
  conn.onShutdown(() => {
    shutdown = true;
  });
  return new Promise<number>((done) => {
    let ended = false;
    finish = (code) => {
      if (ended) return;
      ended = true;
      sk.thread.close();
      done(code);
    };
    conn.onExit(() => finish(shutdown ? 0 : 1));
    conn.listen();
  });
}
