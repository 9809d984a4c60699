/**
 * A JSON reader that keeps where every value and key is (1-based line and column, `endCol` one
 * past the end), for messages that point at the offending part of a launch sidecar with a caret.
 * Standard JSON (RFC 8259) only: no comments, no trailing commas.
 */

/** A position in the text: 1-based line and column, `endCol` one past the end on that line. */
export interface JsonPos {
  line: number;
  col: number;
  endCol: number;
}

/** A JSON value with its span; an object keeps its entries in order with the key's span. */
export type JsonNode = JsonPos & (
  | { kind: 'object'; entries: { key: string; keyPos: JsonPos; value: JsonNode }[] }
  | { kind: 'array'; items: JsonNode[] }
  | { kind: 'string'; value: string }
  | { kind: 'number'; value: number; text: string }
  | { kind: 'boolean'; value: boolean }
  | { kind: 'null' }
);

/**
 * The deepest nesting of objects and arrays {@link parseJsonPos} reads (a launch is 2 levels deep):
 * the reader recurses once per level, and 100,000 `[` would overflow the stack.
 */
export const MAX_JSON_DEPTH = 64;

/** A syntax error at a position. */
export class JsonPosError extends Error {
  constructor(message: string, readonly pos: JsonPos) {
    super(message);
  }
}

/**
 * Parses `text` as one JSON value. `line0` / `col0`: the position of the text's first character
 * in its file (a JSON text embedded in a comment line starts mid-line). Throws {@link JsonPosError}.
 */
export function parseJsonPos(text: string, line0 = 1, col0 = 1): JsonNode {
  let i = 0;
  let line = line0;
  let lineStart = -(col0 - 1); // column of index k is k - lineStart + 1
  const pos = (from: number, to = from + 1): JsonPos => ({ line, col: from - lineStart + 1, endCol: to - lineStart + 1 });
  const fail = (msg: string, from = i, to = from + 1): never => {
    // At the end of the text: just past its last non-blank character, on that character's line
    // (a file's final newline would put the caret on an empty line after it).
    if (from >= text.length) {
      let k = text.length;
      while (k > 0 && /\s/.test(text[k - 1]!)) k--;
      const nl = text.lastIndexOf('\n', k - 1);
      const lines = text.slice(0, k).split('\n').length - 1;
      const col = nl < 0 ? k + col0 : k - nl;
      throw new JsonPosError(msg, { line: line0 + lines, col, endCol: col + 1 });
    }
    throw new JsonPosError(msg, pos(from, to));
  };
  const ws = () => {
    while (i < text.length) {
      const c = text[i]!;
      if (c === '\n') { line++; lineStart = i + 1; i++; } else if (c === ' ' || c === '\t' || c === '\r') i++; else break;
    }
  };
  const str = (): { value: string; p: JsonPos } => {
    const from = i;
    i++;
    while (i < text.length && text[i] !== '"') {
      if (text[i] === '\n') fail('unterminated string', from);
      i += text[i] === '\\' ? 2 : 1;
    }
    if (i >= text.length) fail('unterminated string', from);
    i++;
    try {
      return { value: JSON.parse(text.slice(from, i)) as string, p: pos(from, i) };
    } catch {
      return fail('invalid escape in string', from, i);
    }
  };
  let depth = 0;
  const number = /-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/y;
  const value = (): JsonNode => {
    ws();
    if (i >= text.length) fail('expected a value, got the end of the text');
    const c = text[i]!;
    const from = i;
    if ((c === '{' || c === '[') && depth >= MAX_JSON_DEPTH) fail(`objects and arrays nested deeper than ${MAX_JSON_DEPTH} levels`);
    if (c === '{' || c === '[') {
      depth++;
      try {
        return nested(c, from);
      } finally {
        depth--;
      }
    }
    if (c === '"') { const s = str(); return { kind: 'string', value: s.value, ...s.p }; }
    number.lastIndex = i;
    const m = number.exec(text);
    if (m) { i += m[0].length; return { kind: 'number', value: Number(m[0]), text: m[0], ...pos(from, i) }; }
    for (const [w, node] of [['true', { kind: 'boolean', value: true }], ['false', { kind: 'boolean', value: false }], ['null', { kind: 'null' }]] as const) {
      if (text.startsWith(w, i)) { i += w.length; return { ...node, ...pos(from, i) } as JsonNode; }
    }
    return fail(`expected a value, got ${near(text, i)}`);
  };
  const nested = (c: string, from: number): JsonNode => {
    if (c === '{') {
      const startLine = line;
      const startCol = from - lineStart + 1;
      i++;
      const entries: Extract<JsonNode, { kind: 'object' }>['entries'] = [];
      ws();
      if (text[i] === '}') { i++; return { kind: 'object', entries, line: startLine, col: startCol, endCol: startCol + 1 }; }
      for (;;) {
        ws();
        if (text[i] !== '"') fail(`expected a key in double quotes, got ${near(text, i)}`);
        const k = str();
        ws();
        if (text[i] !== ':') fail(`expected ':' after the key "${k.value}"`);
        i++;
        entries.push({ key: k.value, keyPos: k.p, value: value() });
        ws();
        if (text[i] === ',') { i++; continue; }
        if (text[i] === '}') { i++; break; }
        fail(`expected ',' or '}', got ${near(text, i)}`);
      }
      return { kind: 'object', entries, line: startLine, col: startCol, endCol: startCol + 1 };
    }
    if (c === '[') {
      const startLine = line;
      const startCol = from - lineStart + 1;
      i++;
      const items: JsonNode[] = [];
      ws();
      if (text[i] === ']') { i++; return { kind: 'array', items, line: startLine, col: startCol, endCol: startCol + 1 }; }
      for (;;) {
        items.push(value());
        ws();
        if (text[i] === ',') { i++; continue; }
        if (text[i] === ']') { i++; break; }
        fail(`expected ',' or ']', got ${near(text, i)}`);
      }
      return { kind: 'array', items, line: startLine, col: startCol, endCol: startCol + 1 };
    }
    return fail(`expected a value, got ${near(text, i)}`);
  };
  const v = value();
  ws();
  if (i < text.length) fail(`unexpected ${near(text, i)} after the JSON value`);
  return v;
}

/** The text at `i` for a message (`'x'`, or "the end of the text"). */
function near(text: string, i: number): string {
  if (i >= text.length) return 'the end of the text';
  const w = /^[^\s,:{}[\]]{1,20}/.exec(text.slice(i))?.[0] ?? text[i]!;
  return `'${w}'`;
}
