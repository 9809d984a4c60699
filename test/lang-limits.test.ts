import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { main } from '../src/cli/main.js';
import { caretExcerpt, formatDiagnostic } from '../src/lang/diagnostics.js';
import { LIMITS, parseSketch } from '../src/lang/index.js';

/**
 * Input limits of the sketch language: large or malformed files are answered quickly with one
 * E-limit diagnostic where the limit is crossed (docs/LANGUAGE.md §1 Limits). Each case is timed:
 * generous bounds for a loaded 2-core machine, far below what the same inputs used to take
 * (minutes, or out of memory).
 */
const HEAD = 'kernel k arch=sm_100a\nbarrier b count=1\n';
const ROLE = 'role r warps=1 per=one:\n';

function timed<T>(f: () => T): { value: T; ms: number } {
  const t = performance.now();
  const value = f();
  return { value, ms: performance.now() - t };
}
const where = (src: string) => {
  const { value: r, ms } = timed(() => parseSketch(src, 't.mbk'));
  return { r, ms, first: r.diagnostics[0] ? `${r.diagnostics[0].code} ${r.diagnostics[0].line}:${r.diagnostics[0].col} ${r.diagnostics[0].message}` : 'none' };
};

describe('limits checked before parsing, reported where they are crossed', () => {
  test('50 MB of `param = = =` lines: the file-size limit at the line and column of its 1,048,577th character', () => {
    const src = 'param = = =\n'.repeat(Math.ceil(50e6 / 12));
    const { r, first } = where(src);
    // 1,048,576 = 87,381 lines of 12 characters + 4: line 87,382, column 5.
    expect(first).toBe('E-limit 87382:5 the file is larger than the limit of 1 MiB (1,048,576 characters)');
    expect(r.diagnostics).toHaveLength(1);
  });
  test('a 10 MB `1+1+…` expression on one line: the line-length limit at column 65,537', () => {
    const src = `${HEAD}param P = ${'1+'.repeat(5e6)}1\n`;
    const { first } = where(src);
    expect(first).toBe('E-limit 3:65537 this line is longer than the limit of 65,536 characters');
  });
  test('a flat sum of 10,000 terms parses (a loop, not recursion) and evaluates exactly', () => {
    const { r } = where(`${HEAD}param P = ${Array(10_000).fill('1').join(' + ')}\n${ROLE}    x = ${Array(2_000).fill('P').join(' - ')}\n    mbarrier.arrive b\n`);
    expect(r.diagnostics).toEqual([]);
    expect(r.kernel?.params).toEqual([expect.objectContaining({ name: 'P', value: 10_000 })]);
  });
  test('a sum over continuation lines longer than the statement limit: E-limit at its 50,001st token', () => {
    // 25,001 terms = 50,001 tokens inside parentheses, 100 terms per line.
    const terms = Array.from({ length: 250 }, () => Array(100).fill('1').join(' + ')).join(' +\n    ');
    const src = `${HEAD}param P = (${terms} + 1)\n`;
    const { r, first } = where(src);
    expect(r.diagnostics).toHaveLength(1);
    // Token 50,001 of the statement: 'param', 'P', '=', '(' and 49,997 tokens of the sum later.
    expect(first).toMatch(/^E-limit \d+:\d+ this statement is longer than the limit of 50,000 tokens$/);
    const d = r.diagnostics[0]!;
    const line = src.split('\n')[d.line - 1]!;
    expect(line.slice(d.col - 1, d.col)).toMatch(/[1+]/);
  });
  test('parentheses and prefix operators nested deeper than 32 levels', () => {
    const parens = where(`${HEAD}${ROLE}    x = ${'('.repeat(30_000)}1${')'.repeat(30_000)}\n`);
    expect(parens.first).toBe('E-limit 4:41 this expression is nested deeper than the limit of 32 levels (parentheses, brackets and prefix operators)');
    const prefix = where(`${HEAD}${ROLE}    x = ${'- '.repeat(40)}1\n`);
    expect(prefix.first).toBe('E-limit 4:73 this expression is nested deeper than the limit of 32 levels (parentheses, brackets and prefix operators)');
    // A prefix operator's level ends with its operand: many in a row side by side are fine.
    expect(where(`${HEAD}${ROLE}    x = ${Array(200).fill('-1').join(' + ')}\n    mbarrier.arrive b\n`).r.diagnostics).toEqual([]);
    expect(where(`${HEAD}${ROLE}    x = ${'-('.repeat(16)}1${')'.repeat(16)}\n    mbarrier.arrive b\n`).r.diagnostics).toEqual([]);
  });
  test('block nesting counts indentation levels, whatever their width (1-space indents included)', () => {
    const nest = (n: number, w: number) => {
      let s = `${HEAD}${ROLE}`;
      for (let i = 1; i < n; i++) s += `${' '.repeat(4 + (i - 1) * w)}if 1:\n`;
      return `${s}${' '.repeat(4 + (n - 1) * w)}mbarrier.arrive b\n`;
    };
    expect(where(nest(32, 1)).r.diagnostics).toEqual([]);
    expect(where(nest(33, 1)).first).toBe('E-limit 36:37 this line is nested deeper than the limit of 32 blocks');
    expect(where(nest(33, 4)).first).toBe('E-limit 36:133 this line is nested deeper than the limit of 32 blocks');
    const huge = where(nest(1_000, 1));
    expect(huge.first).toBe('E-limit 36:37 this line is nested deeper than the limit of 32 blocks');
  });
  test('an if with more than 256 elif clauses', () => {
    let s = `${HEAD}${ROLE}    x = 1\n    if x == 0:\n        pass\n`;
    for (let i = 1; i <= 300; i++) s += `    elif x == ${i}:\n        mbarrier.arrive b\n`;
    expect(where(s).first).toBe('E-limit 519:5 this if statement has more elif clauses than the limit of 256');
    let ok = `${HEAD}${ROLE}    x = 1\n    if x == 0:\n        pass\n`;
    for (let i = 1; i <= 256; i++) ok += `    elif x == ${i}:\n        mbarrier.arrive b\n`;
    expect(where(ok).r.diagnostics).toEqual([]);
  });
});

describe('errors are bounded', () => {
  test('the parser stops after 50 errors: 1 MB of malformed lines', () => {
    const src = 'param = = =\n'.repeat(Math.floor(LIMITS.fileChars / 12));
    const { r } = where(src);
    expect(r.diagnostics).toHaveLength(51);
    expect(r.diagnostics.slice(0, 50).every((d) => d.code === 'E-syntax')).toBe(true);
    expect(r.diagnostics[50]).toMatchObject({ code: 'E-limit', message: 'too many errors: stopped after 50 (the limit is 50 errors per file)', line: 50 });
  });
  test('lexical errors are capped too', () => {
    const { r } = where(`${HEAD}${`${'$ '.repeat(50)}\n`.repeat(5000)}`);
    expect(r.diagnostics).toHaveLength(51);
    expect(r.diagnostics[50]!.code).toBe('E-limit');
  });
  test('the lowering stops after 50 errors (unknown names on 20,000 lines)', () => {
    const body = Array.from({ length: 20_000 }, (_, i) => `    x${i} = y${i}\n`).join('');
    const { r } = where(`${HEAD}${ROLE}${body}`);
    expect(r.diagnostics).toHaveLength(51);
    expect(r.diagnostics[0]!.code).toBe('E-unknown-name');
    expect(r.diagnostics[50]!.message).toBe('too many errors: stopped after 50 (the limit is 50 errors per file)');
  });
});

describe('diagnostics never echo a huge line', () => {
  test('the source line is cut to 120 columns around the caret, with ellipses', () => {
    const text = `${'a'.repeat(5000)}@${'b'.repeat(5000)}`;
    const [line, caret] = caretExcerpt(text, 5001, 5002);
    expect(line).toBe(`…${'a'.repeat(40)}@${'b'.repeat(79)}…`);
    expect(caret).toBe(`${' '.repeat(41)}^`);
    expect(caretExcerpt('x = 1', 5, 6)).toEqual(['x = 1', '    ^']);
    expect(caretExcerpt('\tx = yy', 6, 8)).toEqual(['\tx = yy', '\t    ^~']);
    // A span longer than the excerpt is underlined to its edge.
    const [, wide] = caretExcerpt('c'.repeat(1000), 1, 1001);
    expect(wide).toBe(`^${'~'.repeat(119)}`);
  });
  test('a multi-megabyte line and a giant name in a message stay short', () => {
    const name = 'n'.repeat(60_000);
    const src = `${HEAD}${ROLE}    x = ${name}\n`;
    const r = parseSketch(src, 't.mbk');
    const text = formatDiagnostic(r.diagnostics[0]!, src);
    expect(text.length).toBeLessThan(600);
    expect(text).toContain(`unknown name '${'n'.repeat(39)}…`);
  });
});

async function cli(args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (s) => out.push(s), err: (s) => err.push(s), color: false });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('mbsim on hostile files', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mbsim-limits-'));
  test('a 50 MB file: exit 2, one E-limit with a caret, in about a second; nothing long printed', async () => {
    const file = join(dir, 'big.mbk');
    writeFileSync(file, 'param = = =\n'.repeat(Math.ceil(50e6 / 12)));
    const t = performance.now();
    const r = await cli(['check', file]);
    expect(performance.now() - t).toBeLessThan(2500);
    expect(r.code).toBe(2);
    expect(r.err).toBe([
      `${file}:87382:5: error[E-limit]: the file is larger than the limit of 1 MiB (1,048,576 characters)`,
      '  param = = =',
      '      ^',
      'hint: a sketch describes the synchronization of one kernel; split generated code or use parameters and loops',
    ].join('\n'));
  });
  test('a 3 MB line of bad characters: exit 2, the excerpt around the caret only', async () => {
    const file = join(dir, 'line.mbk');
    writeFileSync(file, `${HEAD}param P = 1 ${'@'.repeat(3e6)}\n`);
    const r = await cli(['run', file]);
    expect(r.code).toBe(2);
    expect(r.err.length).toBeLessThan(600);
    expect(r.err).toContain(`${file}:3:65537: error[E-limit]: this line is longer than the limit of 65,536 characters`);
  });
});
