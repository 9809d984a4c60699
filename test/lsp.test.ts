/**
 * `mbsim lsp` driven over stdio as an editor drives it: initialize, open documents, edit, save,
 * hover, go to definition, references; the diagnostics it publishes (the sketch language's and
 * the checker's, with related locations) and its answers are checked against the sketches.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { main } from '../src/cli/main.js';
import { LspClient, type RpcMessage } from './support/lsp-client.js';

const REPO = join(__dirname, '..');

interface Diag {
  range: { start: { line: number; character: number }; end: { line: number; character: number } };
  severity: number;
  code: string;
  source: string;
  message: string;
  relatedInformation?: { location: { uri: string; range: Diag['range'] }; message: string }[];
}
interface Published { uri: string; version?: number; diagnostics: Diag[] }

const published = (uri: string, test: (p: Published) => boolean) => (m: RpcMessage) =>
  m.method === 'textDocument/publishDiagnostics' && (m.params as Published).uri === uri && test(m.params as Published);

const uriOf = (rel: string) => pathToFileURL(join(REPO, rel)).href;
const B15 = uriOf('examples/bugs/B15.mbk');
const B01 = uriOf('examples/bugs/B01.mbk');
const SCRATCH = uriOf('scratch/typing.mbk');

let lsp: LspClient;

beforeAll(async () => {
  lsp = new LspClient(process.execPath, ['--import', './test/support/ts-register.mjs', 'src/cli/bin.ts', 'lsp', '--stdio', '--check-timeout', '20'], REPO);
  const init = await lsp.request<{ capabilities: Record<string, unknown>; serverInfo: { name: string } }>('initialize', {
    processId: process.pid, rootUri: pathToFileURL(REPO).href, capabilities: {}, initializationOptions: { checkDelayMs: 50 },
  });
  expect(init.serverInfo.name).toBe('mbsim');
  expect(init.capabilities).toMatchObject({ hoverProvider: true, definitionProvider: true, referencesProvider: true, documentSymbolProvider: true, completionProvider: { triggerCharacters: ['.'] } });
  lsp.notify('initialized', {});
  for (const uri of [B15, B01]) {
    const text = readFileSync(new URL(uri), 'utf8');
    lsp.notify('textDocument/didOpen', { textDocument: { uri, languageId: 'mbk', version: 1, text } });
  }
}, 120_000);

afterAll(async () => {
  if (!lsp) return;
  await lsp.request('shutdown', null);
  lsp.notify('exit', null);
  expect(await lsp.exited).toBe(0);
});

describe('mbsim lsp over stdio', () => {
  test('diagnostics as you type: the sketch language\'s codes and spans, cleared once fixed', async () => {
    const bad = 'kernel k\nbarrier full[1] count=1\nrole p warps=1 per=one:\n    mbarrier.arrive fulll[0]\n';
    lsp.notify('textDocument/didOpen', { textDocument: { uri: SCRATCH, languageId: 'mbk', version: 1, text: bad } });
    const first = (await lsp.waitFor(published(SCRATCH, (p) => p.version === 1), 'parse diagnostics')).params as Published;
    expect(first.diagnostics).toHaveLength(1);
    const d = first.diagnostics[0]!;
    expect(d.code).toBe('E-unknown-name');
    expect(d.source).toBe('mbsim');
    expect(d.severity).toBe(1);
    // The reference `fulll[0]` on line 4 (0-based 3), columns 21..28 (0-based 20..27, end exclusive 28).
    expect(d.range).toEqual({ start: { line: 3, character: 20 }, end: { line: 3, character: 28 } });
    expect(d.message).toMatch(/fulll/);
    expect(d.message).toMatch(/hint: .*full/);
    // An incremental edit deletes the extra `l`.
    lsp.notify('textDocument/didChange', {
      textDocument: { uri: SCRATCH, version: 2 },
      contentChanges: [{ range: { start: { line: 3, character: 24 }, end: { line: 3, character: 25 } }, text: '' }],
    });
    const second = (await lsp.waitFor(published(SCRATCH, (p) => p.version === 2), 'diagnostics of the fixed text')).params as Published;
    expect(second.diagnostics.filter((x) => x.source === 'mbsim')).toEqual([]);
  }, 60_000);

  test('a burst of changes is parsed once: diagnostics for the last version only', async () => {
    const uri = uriOf('scratch/burst.mbk');
    const text = (n: number) => `kernel k\nbarrier full[1] count=1\nrole p warps=1 per=one:\n    mbarrier.arrive full${'l'.repeat(n)}[0]\n`;
    lsp.notify('textDocument/didOpen', { textDocument: { uri, languageId: 'mbk', version: 1, text: text(1) } });
    await lsp.waitFor(published(uri, (p) => p.version === 1), 'diagnostics of the opened text');
    // 20 full-text changes written at once (versions 2..21), as an editor sends them while a parse is slow.
    for (let v = 2; v <= 21; v++) lsp.notify('textDocument/didChange', { textDocument: { uri, version: v }, contentChanges: [{ text: text(v % 3) }] });
    const last = (await lsp.waitFor(published(uri, (p) => p.version === 21), 'diagnostics of version 21')).params as Published;
    expect(last.diagnostics.filter((d) => d.source === 'mbsim').map((d) => d.code)).toEqual([]); // 21 % 3 = 0: `full`, no error
    const versions = lsp.notifications.filter(published(uri, (p) => p.version !== undefined)).map((m) => (m.params as Published).version);
    // Versions 2..20 were never parsed; 21 may come twice (its parse, then its check's hazards).
    expect([...new Set(versions)]).toEqual([1, 21]);
  }, 60_000);

  test('a race with the release site and the wait site as related locations', async () => {
    const m = await lsp.waitFor(published(B15, (p) => p.diagnostics.some((d) => d.code === 'race')), 'the race of B15');
    const race = (m.params as Published).diagnostics.find((d) => d.code === 'race')!;
    expect(race.source).toBe('mbsim check');
    expect(race.severity).toBe(1);
    // The TMA write of line 19 is the later access.
    expect(race.range.start).toEqual({ line: 18, character: 8 });
    expect(race.message).toMatch(/^buffer A\[0\]: TMA copy issued by producer writes A\[0\] while the wgmma/);
    expect(race.message).toMatch(/fix: wait_group depth/);
    const rel = race.relatedInformation!.map((r) => ({ line: r.location.range.start.line + 1, uri: r.location.uri, what: r.message.split(':')[0] }));
    expect(rel).toContainEqual({ line: 29, uri: B15, what: 'the release' });
    expect(rel).toContainEqual({ line: 17, uri: B15, what: 'the wait that observed that release' });
    expect(rel).toContainEqual({ line: 26, uri: B15, what: 'the other access of the race' });
  }, 60_000);

  test('a hang with its static root cause as a related location', async () => {
    const m = await lsp.waitFor(published(B01, (p) => p.diagnostics.some((d) => d.code === 'hang')), 'the hang of B01');
    const diags = (m.params as Published).diagnostics;
    const hang = diags.find((d) => d.code === 'hang')!;
    expect(hang.range.start).toEqual({ line: 23, character: 8 });
    expect(hang.message).toMatch(/root cause \(static count-mismatch\)/);
    expect(hang.relatedInformation).toContainEqual(expect.objectContaining({
      location: { uri: B01, range: { start: { line: 12, character: 0 }, end: { line: 12, character: 23 } } },
      message: expect.stringMatching(/^root cause \(static count-mismatch\): full\[0\] expects 1 arrival/),
    }));
    // The static finding itself is a warning.
    expect(diags.find((d) => d.code === 'count-mismatch')?.severity).toBe(2);
  }, 60_000);

  test('an edit withdraws the hazards; the check after a pause in typing finds them on the new lines', async () => {
    await lsp.waitFor(published(B01, (p) => p.diagnostics.some((d) => d.code === 'hang')), 'the hang of B01');
    const from = lsp.notifications.length;
    lsp.notify('textDocument/didChange', {
      textDocument: { uri: B01, version: 2 },
      contentChanges: [{ range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, text: '# a new first line\n' }],
    });
    const hang = await lsp.waitFor(published(B01, (p) => p.version === 2 && p.diagnostics.some((d) => d.code === 'hang')), 'the hang after the edit');
    const v2 = lsp.notifications.slice(from).filter(published(B01, (p) => p.version === 2)).map((m) => (m.params as Published).diagnostics);
    // First the parse (no diagnostics: the old hazards are gone), then the check's.
    expect(v2[0]).toEqual([]);
    expect((hang.params as Published).diagnostics.find((d) => d.code === 'hang')!.range.start).toEqual({ line: 24, character: 8 });
  }, 60_000);

  test('hover: an operation\'s PTX meaning, a name\'s declaration, a builtin', async () => {
    type H = { contents: { kind: string; value: string }; range: Diag['range'] } | null;
    // Line 18: `        mbarrier.arrive.expect_tx full[s], BYTES`
    const op = await lsp.request<H>('textDocument/hover', { textDocument: { uri: B15 }, position: { line: 17, character: 15 } });
    expect(op!.contents.kind).toBe('markdown');
    expect(op!.contents.value).toMatch(/^\*\*mbarrier\.arrive\.expect_tx\*\* `BAR, BYTES\[, COUNT\]`/);
    expect(op!.contents.value).toMatch(/First adds BYTES to the phase's tx-count, then arrives/);
    expect(op!.contents.value).toMatch(/PTX ISA §9\.7\.13\.15\.13/);
    expect(op!.range).toEqual({ start: { line: 17, character: 8 }, end: { line: 17, character: 33 } });
    const wait = await lsp.request<H>('textDocument/hover', { textDocument: { uri: B15 }, position: { line: 27, character: 10 } });
    expect(wait!.contents.value).toMatch(/\*\*wgmma\.wait_group\*\* `N` \(sm_90a only\)/);
    expect(wait!.contents.value).toMatch(/§9\.7\.15\.7\.3/);
    const name = await lsp.request<H>('textDocument/hover', { textDocument: { uri: B15 }, position: { line: 17, character: 35 } });
    expect(name!.contents.value).toMatch(/\*\*full\*\*: barrier array .*declared at line 10/);
    expect(name!.contents.value).toContain('barrier full[2] count=1');
    const none = await lsp.request<H>('textDocument/hover', { textDocument: { uri: B15 }, position: { line: 5, character: 0 } });
    expect(none).toBeNull();
    // Completion in the operands of line 18: the declared names and the producer's variables.
    const items = await lsp.request<{ label: string }[]>('textDocument/completion', { textDocument: { uri: B15 }, position: { line: 17, character: 34 } });
    expect(items.map((c) => c.label).slice(0, 8)).toEqual(['K', 'BYTES', 'A', 'full', 'empty', 'k', 's', 'ph']);
  }, 60_000);

  test('go to definition: barriers, buffers, parameters, variables; references', async () => {
    type L = { uri: string; range: Diag['range'] } | null;
    const def = (line: number, character: number) => lsp.request<L>('textDocument/definition', { textDocument: { uri: B15 }, position: { line, character } });
    // `full` in line 18 -> `barrier full[2]` (line 10, column 9).
    expect(await def(17, 35)).toEqual({ uri: B15, range: { start: { line: 9, character: 8 }, end: { line: 9, character: 12 } } });
    // `A` in line 19 -> `smem A[2]` (line 9).
    expect((await def(18, 29))!.range.start).toEqual({ line: 8, character: 5 });
    // `BYTES` in line 18 -> `param BYTES` (line 7).
    expect((await def(17, 44))!.range.start).toEqual({ line: 6, character: 6 });
    // `s` in the consumer's line 24 -> its first assignment in the consumer (line 23), not the producer's.
    expect((await def(24, 38))!.range.start).toEqual({ line: 22, character: 8 });
    // A builtin or an option key has no declaration.
    expect(await def(20, 15)).toBeNull();
    const refs = await lsp.request<{ range: Diag['range'] }[]>('textDocument/references', { textDocument: { uri: B15 }, position: { line: 9, character: 9 }, context: { includeDeclaration: false } });
    expect(refs.map((r) => r.range.start.line + 1)).toEqual([18, 19, 25]);
    const outline = await lsp.request<{ name: string; kind: number; range: Diag['range'] }[]>('textDocument/documentSymbol', { textDocument: { uri: B15 } });
    expect(outline.map((x) => `${x.name}@${x.range.start.line + 1}`)).toEqual(['wgmma_early_release@4', 'K@6', 'BYTES@7', 'A@9', 'full@10', 'empty@11', 'producer@13', 'consumer@21']);
  }, 60_000);

  test('the server answers while a check runs: the check is in its own thread', async () => {
    // The pipeline with 64 k-steps and 8 tiles: a check of some 44,000 states, seconds of work.
    const text = readFileSync(join(REPO, 'examples/pipeline.mbk'), 'utf8').replace('param K = 16', 'param K = 64').replace('param TILES = 2', 'param TILES = 8');
    const uri = uriOf('scratch/big-pipeline.mbk');
    lsp.notify('textDocument/didOpen', { textDocument: { uri, languageId: 'mbk', version: 1, text } });
    const parsed = await lsp.waitFor(published(uri, (p) => p.version === 1), 'the parse of the big pipeline');
    const line = text.split('\n').findIndex((l) => l.includes('mbarrier.arrive.expect_tx'));
    const hover = await lsp.request<{ contents: { value: string } } | null>('textDocument/hover', { textDocument: { uri }, position: { line, character: 12 } });
    expect(hover!.contents.value).toMatch(/^\*\*mbarrier\.arrive\.expect_tx\*\*/);
    // Answered before the check's diagnostics came.
    const checked = lsp.notifications.filter(published(uri, () => true));
    expect(checked).toHaveLength(1);
    const done = await lsp.waitFor((m) => m !== parsed && published(uri, () => true)(m), 'the big check');
    expect((done.params as Published).diagnostics.filter((d) => d.severity === 1)).toEqual([]);
    expect(lsp.notifications.filter((m) => m.method === 'window/logMessage').map((m) => (m.params as { message: string }).message)).toEqual([]);
  }, 120_000);
});

describe('mbsim lsp on the command line', () => {
  const run = async (...argv: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await main(argv, { out: (x) => out.push(x), err: (x) => err.push(x), color: false });
    return { code, out: out.join(''), err: err.join('') };
  };
  test('--help lists its bounds; a bad bound is one line and exit 2, before any server starts', async () => {
    const h = await run('lsp', '--help');
    expect(h.code).toBe(0);
    expect(h.out).toMatch(/--check-timeout <SECONDS>[\s\S]*--max-states <N>[\s\S]*--no-check-on-change/);
    const bad = await run('lsp', '--check-timeout', 'soon');
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/--check-timeout expects a positive number of seconds, got 'soon'/);
  });
  test('--max-memory below what the server holds once started: exit 2, before any server starts', async () => {
    const low = await run('lsp', '--max-memory', '1');
    expect(low.code).toBe(2);
    expect(low.out).toBe('');
    expect(low.err).toMatch(/^mbsim: error: --max-memory 1 MB is below what the server holds once started \(\d+ MB\): every check would stop at once; give more \(the default is 1024\)\n?$/);
    expect((await run('lsp', '--max-memory', '0')).err).toMatch(/--max-memory expects a positive integer, got '0'/);
  });
});
