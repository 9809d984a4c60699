import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { main } from '../src/cli/main.js';

/**
 * Literate CLI tests: every ```console block in test/cli/*.md holds `$ mbsim ARGS`, the expected
 * output (stdout and stderr, in order) and `[exit N]`. A line `...` matches any number of lines.
 * `UPDATE_LITERATE=1 npx vitest run test/literate.test.ts` rewrites the blocks without `...` to the
 * current output (review the diff before committing).
 */
interface Case { file: string; args: string[]; expected: string[]; exit: number; line: number }

function splitArgs(s: string): string[] {
  const out: string[] = [];
  for (const m of s.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)) out.push(m[1] ?? m[2] ?? m[3]!);
  return out;
}

function cases(): Case[] {
  const dir = join(__dirname, 'cli');
  const out: Case[] = [];
  for (const f of readdirSync(dir).filter((n) => n.endsWith('.md'))) {
    const lines = readFileSync(join(dir, f), 'utf8').split('\n');
    for (let i = 0; i < lines.length; i++) {
      if (lines[i]!.trim() !== '```console') continue;
      const cmd = lines[i + 1]!;
      if (!cmd.startsWith('$ mbsim')) throw new Error(`${f}:${i + 2}: a console block starts with '$ mbsim'`);
      const expected: string[] = [];
      let j = i + 2;
      let exit = -1;
      for (; j < lines.length && lines[j]!.trim() !== '```'; j++) {
        const m = /^\[exit (\d+)\]$/.exec(lines[j]!.trim());
        if (m) exit = Number(m[1]);
        else expected.push(lines[j]!);
      }
      out.push({ file: f, args: splitArgs(cmd.slice('$ mbsim'.length)), expected, exit, line: i + 2 });
      i = j;
    }
  }
  return out;
}

function matches(actual: string[], expected: string[]): boolean {
  const go = (a: number, e: number): boolean => {
    if (e === expected.length) return a === actual.length;
    if (expected[e] === '...') {
      for (let k = a; k <= actual.length; k++) if (go(k, e + 1)) return true;
      return false;
    }
    return a < actual.length && actual[a]!.trimEnd() === expected[e]!.trimEnd() && go(a + 1, e + 1);
  };
  return go(0, 0);
}

describe('literate CLI tests', () => {
  for (const c of cases()) {
    test(`${c.file}:${c.line} mbsim ${c.args.join(' ')}`, async () => {
      const lines: string[] = [];
      const push = (s: string) => lines.push(...s.replace(/\n$/, '').split('\n'));
      const code = await main(c.args, { out: push, err: push, color: false });
      if (process.env.UPDATE_LITERATE && !c.expected.includes('...') && !matches(lines, c.expected)) {
        const path = join(__dirname, 'cli', c.file);
        const text = readFileSync(path, 'utf8').split('\n');
        // Replace the block's body (after the command line, up to the closing fence).
        let end = c.line;
        while (text[end]!.trim() !== '```') end++;
        text.splice(c.line, end - c.line, ...lines, `[exit ${code}]`);
        writeFileSync(path, text.join('\n'));
        return;
      }
      if (!matches(lines, c.expected)) expect(lines.join('\n')).toBe(c.expected.join('\n'));
      expect(code).toBe(c.exit);
    });
  }
});
