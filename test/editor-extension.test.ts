/**
 * The VS Code extension folder (editors/vscode/): a manifest vsce accepts (language, grammar,
 * entry point, engines), a client that starts `mbsim lsp` over stdio, and a TextMate grammar whose
 * rules give the sketch language's keywords, operations, declarations, options and numbers their
 * scopes. The grammar is run here by a small TextMate-style scanner (earliest match wins, ties go
 * to the first rule), which is how an editor applies these single-line rules.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import Module, { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { ALL_TOKENS } from '../src/lang/tokens.js';

const DIR = join(__dirname, '..', 'editors', 'vscode');
const json = (f: string) => JSON.parse(readFileSync(join(DIR, f), 'utf8'));

interface Rule { name?: string; match?: string; include?: string; patterns?: Rule[]; captures?: Record<string, { name: string }> }
const grammar = json('syntaxes/mbk.tmLanguage.json') as { scopeName: string; patterns: Rule[]; repository: Record<string, Rule> };

/** The grammar's match rules in the order an editor tries them. */
function flatten(rules: Rule[]): Rule[] {
  return rules.flatMap((r) => (r.include ? flatten([grammar.repository[r.include.slice(1)]!]) : r.patterns ? flatten(r.patterns) : [r]));
}
const RULES = flatten(grammar.patterns).map((r) => ({ rule: r, re: new RegExp(r.match!, 'g') }));

/** Scopes of one line: `[text, scope]` for each token the rules match (captures split a match). */
function scopes(line: string): [string, string][] {
  const out: [string, string][] = [];
  for (let p = 0; p < line.length;) {
    let best: { m: RegExpExecArray; rule: Rule } | null = null;
    for (const { rule, re } of RULES) {
      re.lastIndex = p;
      const m = re.exec(line);
      if (m && m[0].length && (!best || m.index < best.m.index)) best = { m, rule };
    }
    if (!best) break;
    const { m, rule } = best;
    if (rule.captures) {
      for (let g = 1; g < m.length; g++) if (m[g] !== undefined && rule.captures[String(g)]) out.push([m[g]!, rule.captures[String(g)]!.name]);
    } else out.push([m[0].trim(), rule.name!]);
    p = m.index + m[0].length;
  }
  return out;
}

describe('the VS Code extension folder', () => {
  test('the manifest contributes the .mbk language and its grammar, and names files that exist', () => {
    const pkg = json('package.json');
    expect(pkg.engines.vscode).toMatch(/^\^1\.\d+\.\d+$/);
    expect(pkg.publisher).toBeTruthy();
    expect(pkg.activationEvents).toContain('onLanguage:mbk');
    expect(pkg.contributes.languages[0]).toMatchObject({ id: 'mbk', extensions: ['.mbk'] });
    expect(pkg.contributes.grammars[0]).toMatchObject({ language: 'mbk', scopeName: grammar.scopeName });
    for (const f of [pkg.main, pkg.contributes.grammars[0].path, pkg.contributes.languages[0].configuration, 'README.md']) expect(existsSync(join(DIR, f)), f).toBe(true);
    expect(Object.keys(pkg.dependencies)).toEqual(['vscode-languageclient']);
    // Nothing installed is committed.
    const tracked = execFileSync('git', ['ls-files', 'editors/vscode'], { cwd: join(__dirname, '..'), encoding: 'utf8' });
    expect(tracked).not.toMatch(/node_modules|\.vsix/);
  });

  test('the client starts `mbsim lsp` over stdio with the settings, preferring the workspace\'s mbsim', async () => {
    // extension.js run against stand-ins of the `vscode` and `vscode-languageclient/node` modules.
    const ws = mkdtempSync(join(tmpdir(), 'mbsim-ext-'));
    mkdirSync(join(ws, 'node_modules', '.bin'), { recursive: true });
    writeFileSync(join(ws, 'node_modules', '.bin', 'mbsim'), '');
    const made: { args: unknown[]; started: boolean; stopped: boolean }[] = [];
    const settings: Record<string, unknown> = { path: '', checkOnChange: false, checkDelayMs: 500, checkTimeoutMs: 3000, maxStates: 1234 };
    let changed: ((e: { affectsConfiguration: (s: string) => boolean }) => Promise<void>) | undefined;
    const fakes: Record<string, unknown> = {
      vscode: {
        workspace: {
          getConfiguration: () => ({ get: (k: string) => settings[k] }),
          workspaceFolders: [{ uri: { fsPath: ws } }],
          onDidChangeConfiguration: (f: typeof changed) => ((changed = f), { dispose: () => undefined }),
        },
      },
      'vscode-languageclient/node': {
        TransportKind: { stdio: 0, ipc: 1 },
        LanguageClient: class {
          rec = { args: [] as unknown[], started: false, stopped: false };
          constructor(...args: unknown[]) { this.rec.args = args; made.push(this.rec); }
          async start() { this.rec.started = true; }
          async stop() { this.rec.stopped = true; }
        },
      },
    };
    const M = Module as unknown as { _load: (req: string, ...rest: unknown[]) => unknown };
    const load = M._load;
    M._load = (req, ...rest) => (req in fakes ? fakes[req] : load(req, ...rest));
    try {
      const ext = createRequire(__filename)(join(DIR, 'extension.js')) as { activate: (c: unknown) => Promise<void>; deactivate: () => unknown };
      const subscriptions: unknown[] = [];
      await ext.activate({ subscriptions });
      expect(made).toHaveLength(1);
      const [id, , server, client] = made[0]!.args as [string, string, { run: Record<string, unknown> }, Record<string, unknown>];
      expect(id).toBe('mbsim');
      expect(server.run).toMatchObject({ command: join(ws, 'node_modules', '.bin', 'mbsim'), args: ['lsp'], transport: 0 });
      expect(client.documentSelector).toContainEqual({ scheme: 'file', language: 'mbk' });
      expect(client.initializationOptions).toEqual({ checkOnChange: false, checkDelayMs: 500, checkTimeoutMs: 3000, maxStates: 1234 });
      expect(made[0]!.started).toBe(true);
      // A change of another extension's settings leaves the server alone; a change of mbsim's
      // restarts it with the new settings (they were read only at activation).
      await changed!({ affectsConfiguration: (sec) => sec === 'editor' });
      expect(made).toHaveLength(1);
      settings.maxStates = 99;
      settings.path = '/opt/mbsim/bin/mbsim';
      await changed!({ affectsConfiguration: (sec) => sec === 'mbsim' });
      expect(made).toHaveLength(2);
      expect(made[0]!.stopped).toBe(true);
      expect(made[1]!.started).toBe(true);
      const [, , server2, client2] = made[1]!.args as [string, string, { run: Record<string, unknown> }, Record<string, unknown>];
      expect(server2.run).toMatchObject({ command: '/opt/mbsim/bin/mbsim', args: ['lsp'] });
      expect(client2.initializationOptions).toMatchObject({ maxStates: 99 });
      await ext.deactivate();
      expect(made[1]!.stopped).toBe(true);
    } finally {
      M._load = load;
      rmSync(ws, { recursive: true, force: true });
    }
  });

  test('every keyword of the sketch lexer has a scope in the grammar', () => {
    const words = ALL_TOKENS.filter((t) => /^Kw/.test(t.name)).map((t) => t.name.slice(2).toLowerCase());
    expect(words.length).toBeGreaterThan(10);
    // `kernel`, `param`, … are declaration keywords at the start of a line, the others inside a block.
    const scoped = (w: string) => [`${w} x`, `    ${w} x`].some((line) => scopes(line).some(([text, scope]) => text === w && /^keyword\./.test(scope)));
    expect(words.filter((w) => !scoped(w))).toEqual([]);
  });

  test('a sketch\'s lines get the scopes of their parts', () => {
    // Plain names in expressions (`S`) and brackets have no scope of their own.
    expect(scopes('barrier full[S] count=1   # one arrival')).toEqual([
      ['barrier', 'keyword.declaration.barrier.mbk'], ['full', 'entity.name.type.barrier.mbk'],
      ['count', 'variable.parameter.option.mbk'], ['=', 'keyword.operator.assignment.mbk'], ['1', 'constant.numeric.decimal.mbk'],
      ['#', 'punctuation.definition.comment.mbk'],
    ]);
    expect(scopes('        mbarrier.arrive.expect_tx full[s]@(1 - cta), TILE_A')).toEqual([
      ['mbarrier.arrive.expect_tx', 'support.function.ptx.mbk'], ['@', 'keyword.operator.cta.mbk'], ['1', 'constant.numeric.decimal.mbk'],
      ['-', 'keyword.operator.mbk'], ['cta', 'variable.language.builtin.mbk'],
    ]);
    expect(scopes('        tcgen05.mma acc[0], A[s], B[s] shape=128x128x64')).toEqual([
      ['tcgen05.mma', 'support.function.ptx.mbk'], ['0', 'constant.numeric.decimal.mbk'], ['shape', 'variable.parameter.option.mbk'],
      ['=', 'keyword.operator.assignment.mbk'], ['128x128x64', 'constant.numeric.shape.mbk'],
    ]);
    expect(scopes('    for i in range(0, 0x10):')).toEqual([
      ['for', 'keyword.control.mbk'], ['in', 'keyword.control.mbk'], ['range', 'keyword.control.mbk'],
      ['0', 'constant.numeric.decimal.mbk'], ['0x10', 'constant.numeric.hex.mbk'],
    ]);
    expect(scopes('kernel "phase-tracking" arch=sm_100a')[1]).toEqual(['"phase-tracking"', 'entity.name.namespace.kernel.mbk']);
    expect(scopes('# expect: race buffer=A[0]')[1]).toEqual(['expect:', 'keyword.other.expect.mbk']);
    expect(scopes('        work 200')[0]).toEqual(['work', 'support.function.ptx.mbk']);
  });
});
