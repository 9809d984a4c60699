/**
 * The shape of the client's params, checked before a handler reads them. vscode-languageserver
 * passes params through as the client sent them: `textDocument/hover` with `{}` answered
 * "Cannot read properties of undefined (reading 'uri')", and a `didChange` whose range ends before
 * it starts replaced the whole document. Here a request with malformed params is answered with
 * JSON-RPC's InvalidParams and one line naming the method and the field; a malformed notification
 * is dropped with that line in the client's log (a notification has no answer).
 */
import { ErrorCodes, ResponseError, type Connection } from 'vscode-languageserver/node';

/** What a method's params must hold besides `textDocument.uri`. */
export interface ParamsNeed {
  /** `position`: a `{ line, character }` of non-negative integers. */
  position?: boolean;
  /** `context.includeDeclaration`: a boolean (textDocument/references). */
  context?: boolean;
  /** `textDocument.text` (a string) and `textDocument.version` (an integer): didOpen. */
  open?: boolean;
  /** `textDocument.version` and `contentChanges`, each `{ text, range? }` with an ordered range: didChange. */
  change?: boolean;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isIndex = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;

/** Why `p` is not a position (`field` names it), or null. */
function positionProblem(p: unknown, field: string): string | null {
  if (!isObject(p) || !isIndex(p.line) || !isIndex(p.character)) return `${field} must be { line, character } of non-negative integers`;
  return null;
}

/** Why `c` is not a content change of didChange (`field` names it), or null. */
function changeProblem(c: unknown, field: string): string | null {
  if (!isObject(c) || typeof c.text !== 'string') return `${field} must be { text } or { range, text } with a string text`;
  if (c.range === undefined) return null;
  const r = c.range;
  if (!isObject(r)) return `${field}.range must be { start, end }`;
  const bad = positionProblem(r.start, `${field}.range.start`) ?? positionProblem(r.end, `${field}.range.end`);
  if (bad) return bad;
  const s = r.start as { line: number; character: number };
  const e = r.end as { line: number; character: number };
  if (e.line < s.line || (e.line === s.line && e.character < s.character)) return `${field}.range ends before it starts`;
  return null;
}

/** Why `p` are not params of `method` as `need` asks (one line naming the field), or null. */
export function paramsProblem(method: string, p: unknown, need: ParamsNeed = {}): string | null {
  const why = ((): string | null => {
    if (!isObject(p)) return 'params must be an object';
    const td = p.textDocument;
    if (!isObject(td) || typeof td.uri !== 'string') return 'params.textDocument.uri must be a string';
    if ((need.open || need.change) && !Number.isSafeInteger(td.version)) return 'params.textDocument.version must be an integer';
    if (need.open && typeof td.text !== 'string') return 'params.textDocument.text must be a string';
    if (need.position) {
      const bad = positionProblem(p.position, 'params.position');
      if (bad) return bad;
    }
    if (need.context && (!isObject(p.context) || typeof p.context.includeDeclaration !== 'boolean')) return 'params.context.includeDeclaration must be a boolean';
    if (need.change) {
      if (!Array.isArray(p.contentChanges)) return 'params.contentChanges must be an array';
      for (let i = 0; i < p.contentChanges.length; i++) {
        const bad = changeProblem(p.contentChanges[i], `params.contentChanges[${i}]`);
        if (bad) return bad;
      }
    }
    return null;
  })();
  return why === null ? null : `${method}: ${why}`;
}

/**
 * `handler` behind the check of its params: malformed ones are answered with InvalidParams and
 * the line of {@link paramsProblem}, the handler is not called.
 */
export function checkedRequest<P, R>(method: string, need: ParamsNeed, handler: (p: P) => R): (p: P) => R | ResponseError<void> {
  return (p: P) => {
    const why = paramsProblem(method, p, need);
    return why === null ? handler(p) : new ResponseError<void>(ErrorCodes.InvalidParams, why);
  };
}

/** The document notifications {@link TextDocuments.listen} registers, and the params each needs. */
const NOTIFICATIONS: [keyof Connection, string, ParamsNeed][] = [
  ['onDidOpenTextDocument', 'textDocument/didOpen', { open: true }],
  ['onDidChangeTextDocument', 'textDocument/didChange', { change: true }],
  ['onDidCloseTextDocument', 'textDocument/didClose', {}],
  ['onDidSaveTextDocument', 'textDocument/didSave', {}],
  ['onWillSaveTextDocument', 'textDocument/willSave', {}],
];

/**
 * `conn` for `TextDocuments.listen`: its document notifications reach the handler only with
 * well-formed params; the others are dropped with one line in the client's log (window/logMessage).
 */
export function checkedDocumentEvents(conn: Connection): Connection {
  const guarded = Object.create(conn) as Connection;
  for (const [on, method, need] of NOTIFICATIONS) {
    const register = (conn[on] as (h: (p: unknown) => unknown) => unknown).bind(conn);
    Object.defineProperty(guarded, on, {
      value: (handler: (p: unknown) => unknown) => register((p: unknown) => {
        const why = paramsProblem(method, p, need);
        if (why === null) return handler(p);
        conn.console.error(`mbsim: ignored ${why}`);
        return undefined;
      }),
    });
  }
  return guarded;
}
