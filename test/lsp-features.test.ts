/**
 * The language server's answers as functions (src/lsp/): every operation has its PTX meaning, the
 * names of a sketch with errors are still found, and a check that a bound stops says so.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { OPS, parseSketch } from '../src/lang/index.js';
import { CheckThread, completionsAt, definitionAt, hazardDiagnostics, hoverAt, indexSymbols, opHover, opText } from '../src/lsp/index.js';

const REPO = join(__dirname, '..');

describe('hover text', () => {
  test('every operation of the language has its PTX instruction, meaning and ISA section', () => {
    const missing = OPS.map((o) => o.name).filter((n) => !opText(n));
    expect(missing).toEqual([]);
    for (const o of OPS) {
      const t = opText(o.name)!;
      expect(t.meaning.length, o.name).toBeGreaterThan(20);
      if (o.name !== 'work') expect(t.sections, o.name).toMatch(/^§\d/);
    }
  });

  test('PTX spellings and qualifiers resolve to their operation', () => {
    expect(opHover('mbarrier.arrive.release.cluster')).toMatch(/^\*\*mbarrier\.arrive\*\*[\s\S]*Written: \.release \.cluster/);
    expect(opHover('mbarrier.try_wait.parity.relaxed.cluster.shared::cta.b64')).toMatch(/^\*\*mbarrier\.try_wait\.parity\*\*[\s\S]*Written: \.relaxed \.cluster/);
    expect(opHover('fence.sc.gpu')).toMatch(/^\*\*fence\*\*/);
    expect(opHover('barrier.sync.aligned')).toMatch(/^\*\*bar\.sync\*\* `ID\[, THREADS\]`/);
    expect(opHover('mbarrier.arrive_drop.noComplete')).toMatch(/lowers the expected count[\s\S]*must not complete the phase[\s\S]*§9\.7\.13\.15\.14/);
    expect(opHover('mbarrier.arive')).toBeNull();
  });
});

describe('names', () => {
  test('a sketch with a syntax error still has its declarations and definitions', () => {
    const text = 'kernel k\nparam N = 2\nbarrier bar[N] count=1\nrole p warps=1:\n    for i in range(0, N\n        mbarrier.arrive bar[i]\n';
    expect(parseSketch(text, 'x.mbk').diagnostics.map((d) => d.code)).toContain('E-syntax');
    const idx = indexSymbols(text);
    expect(idx.defs.map((d) => `${d.kind} ${d.name}`)).toEqual(['kernel k', 'param N', 'barrier bar', 'role p', 'variable i']);
    // `bar` in `mbarrier.arrive bar[i]` (line 6) -> line 3; `N` in `range(0, N` -> line 2.
    expect(definitionAt(text, 'u', { line: 5, character: 25 })?.range.start).toEqual({ line: 2, character: 8 });
    expect(definitionAt(text, 'u', { line: 4, character: 22 })?.range.start).toEqual({ line: 1, character: 6 });
    expect(hoverAt(text, { line: 5, character: 28 })?.contents).toMatchObject({ value: expect.stringMatching(/^\*\*i\*\*: variable, of role `p`, first assigned at line 5/) });
  });

  test('option keys and builtins are not names with declarations', () => {
    const text = 'kernel k\nparam count = 3\nbarrier b[1] count=count\nrole p warps=1 per=one:\n    mbarrier.arrive b[cta]\n';
    // The `count=` key (line 3, column 14) is not the parameter; its value (column 20) is.
    expect(definitionAt(text, 'u', { line: 2, character: 14 })).toBeNull();
    expect(definitionAt(text, 'u', { line: 2, character: 20 })?.range.start).toEqual({ line: 1, character: 6 });
    expect(hoverAt(text, { line: 4, character: 23 })?.contents).toMatchObject({ value: expect.stringMatching(/^builtin: the CTA's rank/) });
  });
});

describe('hazards in the editor', () => {
  test('a check stopped by its state bound says how far it got', () => {
    const text = readFileSync(join(REPO, 'examples/pipeline.mbk'), 'utf8');
    const kernel = parseSketch(text, 'pipeline.mbk').kernel!;
    const r = hazardDiagnostics(kernel, 'file:///pipeline.mbk', { timeoutMs: 60_000, maxStates: 10, maxMemory: 4 * 1024 ** 3 });
    expect(r.result?.complete).toBe(false);
    expect(r.result?.stoppedBy).toBe('max-states');
    const info = r.diagnostics.find((d) => d.code === 'incomplete')!;
    expect(info.severity).toBe(3);
    expect(info.message).toMatch(/^the editor's check stopped by max-states after \d+ states/);
    // On the kernel line.
    expect(info.range.start.line).toBe(text.split('\n').findIndex((l) => l.startsWith('kernel ')));
  });

  test('a correct kernel checked in full gives no error', () => {
    const text = readFileSync(join(REPO, 'examples/mechanism.mbk'), 'utf8');
    const r = hazardDiagnostics(parseSketch(text, 'mechanism.mbk').kernel!, 'file:///mechanism.mbk');
    expect(r.result?.complete).toBe(true);
    expect(r.diagnostics.filter((d) => d.severity === 1)).toEqual([]);
  });
});

describe('completion', () => {
  const text = 'kernel k\nparam N = 2\nbarrier bar[N] count=1\nsmem tile bytes=64\nrole p warps=1 per=one:\n    for i in range(0, N):\n        mbarrier.arrive bar[i]\nrole q warps=1 per=one:\n    only_q = 1\n    ok = mbarrier.test_wait.parity bar[0], 0  # done\n';
  const at = (line: number, character: number) => completionsAt(text, { line, character }, indexSymbols(text));
  const labels = (line: number, character: number) => at(line, character).map((c) => c.label);

  test('the start of a top-level line: declarations', () => {
    expect(labels(1, 0)).toEqual(['kernel', 'param', 'barrier', 'smem', 'tmem', 'gmem', 'role']);
  });

  test('the start of a statement: statement keywords and every operation, replacing the whole mnemonic', () => {
    const items = at(6, 12);
    expect(items.slice(0, 6).map((c) => c.label)).toEqual(['for', 'if', 'elif', 'else', 'elect', 'pass']);
    const arrive = items.find((c) => c.label === 'mbarrier.arrive.expect_tx')!;
    expect(arrive.detail).toBe('BAR, BYTES[, COUNT]');
    expect((arrive.documentation as { value: string }).value).toMatch(/tx-count/);
    // The edit covers `mbarrier.arrive` (columns 8..23 of line 7), not only the part before the cursor.
    expect(arrive.textEdit).toEqual({ range: { start: { line: 6, character: 8 }, end: { line: 6, character: 23 } }, newText: 'mbarrier.arrive.expect_tx' });
    expect(items.map((c) => c.label)).toContain('barrier.sync.aligned');
  });

  test('after `NAME = `: operations only', () => {
    const l = labels(9, 9);
    expect(l).toContain('mbarrier.test_wait.parity');
    expect(l).not.toContain('for');
  });

  test('in operands: the declared names, the role\'s own variables and the builtins; nothing in a comment', () => {
    expect(labels(6, 24)).toEqual(['N', 'bar', 'tile', 'i', 'cta', 'ncta', 'instance', 'clusterid', 'nthreads', 'nwarps']);
    expect(labels(9, 38)).toEqual(['N', 'bar', 'tile', 'only_q', 'ok', 'cta', 'ncta', 'instance', 'clusterid', 'nthreads', 'nwarps']);
    expect(labels(9, 50)).toEqual([]);
  });
});

describe('the check thread', () => {
  test('one job at a time; a waiting job is replaced by a newer one for the same document', async () => {
    const b15 = readFileSync(join(REPO, 'examples/bugs/B15.mbk'), 'utf8');
    const b01 = readFileSync(join(REPO, 'examples/bugs/B01.mbk'), 'utf8');
    const logs: string[] = [];
    const thread = new CheckThread((m) => logs.push(m));
    const bounds = { timeoutMs: 30_000, maxStates: 200_000, maxMemory: 4 * 1024 ** 3 };
    try {
      const first = thread.run({ text: b15, file: 'B15.mbk', uri: 'u:15', bounds });
      const replaced = thread.run({ text: b15, file: 'B01.mbk', uri: 'u:01', bounds });
      const newer = thread.run({ text: b01, file: 'B01.mbk', uri: 'u:01', bounds });
      const [a, b, c] = await Promise.all([first, replaced, newer]);
      expect(a!.map((d) => d.code)).toContain('race');
      expect(b).toBeNull();
      expect(c!.map((d) => d.code)).toContain('hang');
      // Related locations name the document of the job.
      expect(c!.find((d) => d.code === 'hang')!.relatedInformation![0]!.location.uri).toBe('u:01');
      expect(logs).toEqual([]);
    } finally {
      thread.close();
    }
  }, 120_000);
});
