import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Lexer, type TokenType } from 'chevrotain';
import { describe, expect, test } from 'vitest';
import { lex } from '../src/lang/lexer.js';
import { ALL_TOKENS, Newline } from '../src/lang/tokens.js';
import { freezeGrammar, freezeProduction } from '../src/lang/grammar-cache.js';
import { GRAMMAR } from '../src/lang/grammar-data.js';
import { parseTokens, SketchParser } from '../src/lang/parser.js';

/**
 * What the sketch front end does to start fast (src/lang/lexer.ts, src/lang/parser.ts) changes no
 * token, position, diagnostic or tree: the token types say which of them span a line break instead
 * of Chevrotain finding out from their regular expressions, and the parser builds each lookahead
 * function when it first needs it.
 */
const root = join(import.meta.dirname, '..', 'examples');

function sketches(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sketches(join(dir, e.name)) : e.name.endsWith('.mbk') ? [join(dir, e.name)] : []));
}

/** Texts with every kind of line break in and around tokens, bad characters and unterminated strings. */
const EDGES = [
  'kernel k\r\nbarrier b count=1\rrole r warps=1:\n    mbarrier.arrive b\r\n',
  'kernel k # comment\r\n\r\n  # indented comment\r\nparam N = 3\n',
  'kernel k "a string\nrole r warps=1:\r    x = (1 +\r\n 2)\n',
  'kernel k\n"bad \\"\r\n"ok\\\\" 0x1_f 0b10 12x34x56 ~!@#$%\u00e9\u2028\n\t\tpass\n',
  'role r warps=1:\n    if a >= 1 and b != 2 or not c:\n        cp.async.bulk.tensor.2d t, 4096, full\n    elif x << 2 >> 1 <= 3:\n        tcgen05.ld.sync.aligned.16x32bx2 t\n',
];

const options = { positionTracking: 'full', ensureOptimizations: false, skipValidations: true, safeMode: true } as const;

/** A parser's analysed grammar: its rules (GAST) and follow sets, as data. */
function analysis(p: SketchParser) {
  const q = p as unknown as { gastProductionsCache: Record<string, object>; resyncFollows: Record<string, TokenType[]> };
  return freezeGrammar(q.gastProductionsCache, q.resyncFollows);
}

function tokens(lexer: Lexer, text: string) {
  const r = lexer.tokenize(text);
  return {
    tokens: r.tokens.map((t) => [t.tokenType.name, t.image, t.startOffset, t.endOffset, t.startLine, t.endLine, t.startColumn, t.endColumn]),
    errors: r.errors.map((e) => [e.offset, e.length, e.line, e.column]),
  };
}

describe('the sketch front end starts fast without changing what it reads', () => {
  test('only Newline is declared to span a line break, and a lexer that finds out itself lexes every example and edge case the same', () => {
    const types = ALL_TOKENS.filter((t) => t.PATTERN !== Lexer.NA);
    expect(types.filter((t) => t.LINE_BREAKS !== false).map((t) => t.name)).toEqual([Newline.name]);
    const declared = new Lexer(types, options);
    // The same token types left to Chevrotain's own analysis of their patterns.
    const saved = new Map<TokenType, boolean | undefined>(types.map((t) => [t, t.LINE_BREAKS]));
    for (const t of types) if (t !== Newline) delete t.LINE_BREAKS;
    let analysed: Lexer;
    try {
      analysed = new Lexer(types, options);
    } finally {
      for (const [t, v] of saved) t.LINE_BREAKS = v;
    }
    const files = sketches(root);
    expect(files.length).toBeGreaterThan(40);
    for (const text of [...files.map((f) => readFileSync(f, 'utf8')), ...EDGES]) {
      expect(tokens(declared, text)).toEqual(tokens(analysed, text));
    }
  });

  test('the parser, whose lookahead functions are built when first needed, parses every example and edge case as one with Chevrotain\'s eager build', () => {
    const texts = [...sketches(root).map((f) => readFileSync(f, 'utf8')), ...EDGES, 'kernel k\nrole r warps=1:\nelse:\n  x = = 1\n  mbarrier.arrive b, count=\n  for i in range(:\n'];
    const eager = new SketchParser(true);
    const show = (x: unknown) => JSON.stringify(x, (k, v: unknown) => (k === 'tokenType' ? (v as TokenType).name : v));
    for (const text of texts) {
      const toks = lex(text, 'x.mbk').tokens;
      const lazy = parseTokens(toks);
      eager.start(toks);
      const cst = (eager as unknown as { file: () => unknown }).file();
      expect(show({ cst: lazy.cst, errors: lazy.errors })).toBe(show({ cst, errors: eager.errors.map((e) => ({ message: e.message, token: e.token })) }));
    }
  });

  test('the frozen grammar (src/lang/grammar-data.ts) is what Chevrotain records and computes from parser.ts today', () => {
    const reference = analysis(new SketchParser(true));
    // Stale after a change of the grammar: `npm run build && node scripts/grammar-data.mjs`.
    expect(GRAMMAR).toEqual(reference);
    // The parser built from it holds the same rules (with their references resolved) and follow sets.
    parseTokens(lex('kernel k\n', 'x.mbk').tokens);
    const built = new SketchParser();
    expect((built as unknown as { frozen?: unknown }).frozen).toBe(GRAMMAR);
    expect(analysis(built)).toEqual(reference);
    const rules = (built as unknown as { gastProductionsCache: Record<string, object> }).gastProductionsCache;
    const refs: string[] = [];
    const walk = (p: { definition?: object[]; referencedRule?: { name: string }; nonTerminalName?: string }) => {
      if (p.nonTerminalName !== undefined) refs.push(`${p.nonTerminalName}=${p.referencedRule?.name}`);
      else for (const c of p.definition ?? []) walk(c);
    };
    for (const r of Object.values(rules)) walk(r);
    expect(refs.length).toBeGreaterThan(20);
    for (const r of refs) expect(r.split('=')[0]).toBe(r.split('=')[1]);
    expect(freezeProduction(rules.file!)).toEqual(GRAMMAR.rules.file);
  });
});
