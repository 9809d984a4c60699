import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';

/**
 * The documents speak of the software alone and stand on their own: README.md and docs/*.md name
 * nothing outside the repository and say nothing of how the project was made; and no reader-facing
 * text (README, docs, the explorer's views) repeats the book chapter it follows: no run of 8 or
 * more words in common with it, the chapter's table column names excepted.
 */
const repo = join(__dirname, '..');
const docs = ['README.md', ...readdirSync(join(repo, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
const views = [
  ...readdirSync(join(repo, 'src', 'web', 'views')).filter((f) => f.endsWith('.ts')).map((f) => `src/web/views/${f}`),
  // The explorer's own modules hold reader-facing text too (captions, the run summary, the figure row).
  ...readdirSync(join(repo, 'src', 'web')).filter((f) => f.endsWith('.ts')).map((f) => `src/web/${f}`),
  // The language server's hover text and the editor extension's description.
  'src/lsp/optext.ts', 'src/lsp/features.ts', 'editors/vscode/README.md',
];
const text = (f: string) => readFileSync(join(repo, f), 'utf8');

/** Lines of `files` that match `re`, as `file:line: text`. */
function hits(files: string[], re: RegExp): string[] {
  return files.flatMap((f) => text(f).split('\n').flatMap((l, i) => (re.test(l) ? [`${f}:${i + 1}: ${l.trim()}`] : [])));
}

describe('documents name nothing outside the repository', () => {
  test('there are documents to check', () => {
    expect(docs).toEqual(expect.arrayContaining(['README.md', 'docs/API.md', 'docs/CHECK.md', 'docs/HARDWARE.md', 'docs/SEMANTICS.md']));
  });

  test('no path outside the checkout (../shared, absolute /work paths, home directories)', () => {
    expect(hits(docs, /\.\.\/shared|(^|[\s(`'"])\/(work|home|root)\/|~\//)).toEqual([]);
  });

  test('no notes that exist outside the repository (FINDINGS, the semantics digest, the bug-pattern list)', () => {
    expect(hits(docs, /FINDINGS|ptx-semantics\.md|bug-patterns\.md/)).toEqual([]);
  });

  test('nothing about how the project was made (sessions, helpers, issue numbers, work items)', () => {
    expect(hits(docs, /\bsessions?\b|\bhelpers?\b|\bissues?[- ]?#?\d+|\bwork items?\b|\bthe brief\b|\bprevious (bundle|version)\b|\bthis project's\b/i)).toEqual([]);
  });

  test('every repository path the documents name exists (generated outputs excepted)', () => {
    // Paths in backticks or plain text that start with one of the repository's folders.
    const re = /(?<![\w./-])((?:docs|src|examples|test|hw|bench|scripts|editors|conformance)\/[\w./-]*[\w])/g;
    // Written by a build, a bench or the hardware scripts, not kept in the repository.
    const generated = /^(hw\/out|docs\/api)(\/|$)/;
    const missing = docs.flatMap((f) => [...text(f).matchAll(re)]
      .map((m) => m[1]!)
      .filter((p) => !p.includes('*') && !generated.test(p) && !existsSync(join(repo, p)))
      .map((p) => `${f}: ${p}`));
    expect([...new Set(missing)]).toEqual([]);
  });

  test('the bug-pattern ranges the documents name (`M01`–`M08`) end at the last file of examples/bugs/', () => {
    const bugs = readdirSync(join(repo, 'examples', 'bugs')).filter((f) => /^[A-Z]\d\d\.mbk$/.test(f));
    const last = (letter: string) => bugs.filter((f) => f.startsWith(letter)).map((f) => f.slice(0, 3)).sort().at(-1);
    const wrong = docs.flatMap((f) => [...text(f).matchAll(/`([A-Z])01`–`([A-Z]\d\d)`/g)]
      .filter((m) => last(m[1]!) !== m[2])
      .map((m) => `${f}: ${m[0]} (examples/bugs/ ends at ${last(m[1]!) ?? 'nothing'})`));
    expect(wrong).toEqual([]);
  });

  test('the documents the package ships are the ones README.md lists, and the folders it ships are named in package.json', () => {
    const pkg = JSON.parse(text('package.json')) as { files: string[] };
    for (const f of ['dist/', 'dist-web/', 'examples/', 'docs/', 'README.md']) expect(pkg.files).toContain(f);
    const listed = [...text('README.md').matchAll(/^- `(docs\/[A-Z]+\.md)`/gm)].map((m) => m[1]!).sort();
    expect(listed).toEqual(docs.filter((d) => d.startsWith('docs/')).sort());
  });

  test('no source file names FINDINGS or a Markdown file that is not in the repository', () => {
    const walk = (d: string): string[] => readdirSync(join(repo, d)).flatMap((f) => {
      const p = `${d}/${f}`;
      return statSync(join(repo, p)).isDirectory() ? walk(p) : /\.(ts|tsx|js|mjs|cjs|html|css)$/.test(f) ? [p] : [];
    });
    const src = walk('src');
    expect(src.length).toBeGreaterThan(50);
    expect(hits(src, /FINDINGS(-\w+)?\.md|FINDINGS-tensor|FINDINGS [A-Z]{1,2}\d|ptx-semantics\.md|bug-patterns\.md/)).toEqual([]);
    // Every `x.md` path a source file names exists (README.md and docs/*.md, or a folder's README).
    const missing = src.flatMap((f) => [...text(f).matchAll(/(?<![\w./-])((?:[\w-]+\/)*[\w-]+\.md)\b/g)]
      .map((m) => m[1]!)
      .filter((p) => !existsSync(join(repo, p)) && !existsSync(join(repo, 'docs', p)))
      .map((p) => `${f}: ${p}`));
    expect([...new Set(missing)]).toEqual([]);
  });

  test('the document sections the model\'s notes cite (docs/HARDWARE.md, <heading>) exist', () => {
    const heads = (f: string) => new Set([...text(f).matchAll(/^#+ (.*)$/gm)].map((m) => m[1]!.trim()));
    const known = { 'docs/HARDWARE.md': heads('docs/HARDWARE.md'), 'docs/SEMANTICS.md': heads('docs/SEMANTICS.md') } as Record<string, Set<string>>;
    const files = ['src/model/mbarrier.ts', 'src/model/diagnostics.ts', 'src/model/encoding.ts', 'src/machine/hang.ts', 'src/machine/ops/bulk.ts', 'src/machine/state.ts'];
    const cited = files.flatMap((f) => [...text(f).matchAll(/(docs\/(?:HARDWARE|SEMANTICS)\.md), ([A-Z][\w -]*[\w])/g)].map((m) => [f, m[1]!, m[2]!] as const));
    expect(cited.length).toBeGreaterThan(10);
    expect(cited.filter(([, d, h]) => !known[d]!.has(h)).map(([f, d, h]) => `${f}: ${d}, ${h}`)).toEqual([]);
  });

  test('mbsim decode cites the repository\'s documents', () => {
    const decode = text('src/report/decode.ts');
    expect(decode).not.toMatch(/FINDINGS|\.\.\/shared/);
    expect(decode).toMatch(/docs\/HARDWARE\.md, Encoding/);
  });
});

// The chapter the explorer follows lives beside the checkout; every text file in that folder is
// read. MBSIM_CHAPTER names another folder (or one file). Absent (as in CI): the test is skipped.
const chapterDir = process.env.MBSIM_CHAPTER ?? join(repo, '..', 'shared', 'seed');
const chapterFiles = !existsSync(chapterDir) ? [] : statSync(chapterDir).isDirectory()
  ? readdirSync(chapterDir).filter((f) => /\.(txt|md)$/.test(f)).map((f) => join(chapterDir, f))
  : [chapterDir];

/** Lower-case words: runs of letters and digits (apostrophes, underscores and punctuation split words). */
const words = (s: string) => s.toLowerCase().match(/[a-z0-9]+/g) ?? [];

describe.skipIf(chapterFiles.length === 0)('reader-facing text is in the project\'s own words', () => {
  const chapter = chapterFiles.map((f) => readFileSync(f, 'utf8')).join('\n');
  const N = 8;
  const grams = new Set<string>();
  const cw = words(chapter);
  for (let i = 0; i + N <= cw.length; i++) grams.add(cw.slice(i, i + N).join(' '));
  // The chapter's tables (tab-separated lines): their column names may be used as they are.
  const tableWords = new Set(chapter.split('\n').filter((l) => l.includes('\t')).flatMap(words));

  /** Runs of ≥ N words that `s` shares with the chapter, each reported once (its longest extent). */
  function sharedRuns(s: string): string[] {
    const w = words(s);
    const out: string[] = [];
    for (let i = 0; i + N <= w.length; ) {
      const g = w.slice(i, i + N);
      if (!grams.has(g.join(' ')) || g.every((x) => tableWords.has(x))) {
        i++;
        continue;
      }
      let j = i + N;
      while (j < w.length && grams.has(w.slice(j - N + 1, j + 1).join(' '))) j++;
      out.push(w.slice(i, j).join(' '));
      i = j;
    }
    return out;
  }

  test('the check finds a copied sentence (it can fail)', () => {
    const sentence = chapter.split('\n').find((l) => words(l).length > 20)!;
    expect(sharedRuns(`intro ${sentence} outro`).length).toBe(1);
    expect(sharedRuns('iteration stage phase parity waited on barrier parity after completion phase_tma after iteration')).toEqual([]);
    // Case, punctuation and spacing do not hide a copy.
    const w = words(sentence);
    expect(sharedRuns(`x ${w.slice(0, 9).map((x) => x.toUpperCase()).join(' ,  ')} y`).length).toBe(1);
  });

  for (const f of [...docs, ...views]) {
    test(`${f} shares no run of ${N} words with the chapter`, () => {
      expect(sharedRuns(text(f))).toEqual([]);
    });
  }
});
