/**
 * `run --json` / `check --json` / `check --format json` print an `mbsim.error/1` document on stdout
 * when the input is bad (exit 2), so that a tool reading stdout as JSON always gets a document.
 */
import { describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { errorDocument, wantsJson } from '../src/cli/error-json.js';
import { IncompleteError, UsageError } from '../src/cli/errors.js';

async function runCli(args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (s) => out.push(s), err: (s) => err.push(s), color: false });
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

describe('input errors as JSON', () => {
  it('a sketch with two errors: one located diagnostic each, with code, place and hint; stderr keeps the text', async () => {
    const r = await runCli(['check', 'test/cli/fixtures/typo.mbk', '--json']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/typo\.mbk:4:5: error\[/);
    const doc = JSON.parse(r.stdout);
    expect(doc.schema).toBe('mbsim.error/1');
    expect(doc.command).toBe('check');
    expect(doc.exitCode).toBe(2);
    expect(doc.diagnostics.length).toBe(2);
    expect(doc.diagnostics[0]).toMatchObject({ severity: 'error', file: 'test/cli/fixtures/typo.mbk', line: 4, col: 5 });
    expect(doc.diagnostics[0].code).toMatch(/^E-/);
    expect(doc.diagnostics[1]).toMatchObject({ line: 5 });
    expect(doc.message).toBe(`test/cli/fixtures/typo.mbk:4:5: error[${doc.diagnostics[0].code}]: ${doc.diagnostics[0].message}`);
  });

  it('PTX syntax errors, `run --json`', async () => {
    const r = await runCli(['run', 'test/cli/fixtures/bad.ptx', '--json']);
    expect(r.code).toBe(2);
    const doc = JSON.parse(r.stdout);
    expect(doc.command).toBe('run');
    expect(doc.diagnostics[0].file).toBe('test/cli/fixtures/bad.ptx');
    expect(doc.diagnostics[0].line).toBeGreaterThan(0);
    expect(doc.diagnostics[0].code).toMatch(/ptx/);
  });

  it('an unlocated error (missing file, bad flag value, unknown option) is one diagnostic without a place', async () => {
    for (const args of [['check', 'no-such-file.mbk', '--format', 'json'], ['run', 'pipeline', '--json', '--set', 'K=x'], ['check', 'pipeline', '--json', '--bogus']]) {
      const r = await runCli(args);
      expect(r.code, args.join(' ')).toBe(2);
      const doc = JSON.parse(r.stdout);
      expect(doc.diagnostics).toHaveLength(1);
      expect(doc.diagnostics[0].file).toBeUndefined();
      expect(doc.message).not.toMatch(/^(mbsim: )?error: /);
    }
  });

  it('without --json stdout stays empty', async () => {
    const r = await runCli(['check', 'test/cli/fixtures/typo.mbk']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
  });

  it('wantsJson: only run and check, options before `--`', () => {
    expect(wantsJson(['check', 'x', '--json'])).toBe(true);
    expect(wantsJson(['check', 'x', '--format', 'json'])).toBe(true);
    expect(wantsJson(['check', 'x', '--format=json'])).toBe(true);
    expect(wantsJson(['run', 'x', '--format', 'json'])).toBe(false);
    expect(wantsJson(['serve', 'x', '--json'])).toBe(false);
    expect(wantsJson(['check', '--', '--json'])).toBe(false);
    expect(wantsJson(['check', 'x', '--json', '--format', 'short'])).toBe(false);
    expect(wantsJson(['check', 'x', '--format=text', '--json'])).toBe(false);
  });

  it('errorDocument: exit 3 for an incomplete parse; a hint attaches to the diagnostic before it', () => {
    const e = new UsageError('a.mbk:3:7: error[E-x]: bad thing\n  line\n  ^\nhint: do this\nb.mbk:1:1: warning: other');
    const d = errorDocument(e, 'check');
    expect(d.diagnostics).toEqual([
      { severity: 'error', code: 'E-x', message: 'bad thing', file: 'a.mbk', line: 3, col: 7, hint: 'do this' },
      { severity: 'warning', message: 'other', file: 'b.mbk', line: 1, col: 1 },
    ]);
    expect(d.exitCode).toBe(2);
    expect(errorDocument(new IncompleteError('mbsim: incomplete: stopped by --max-memory 300 before parsing a.ptx'), 'run').exitCode).toBe(3);
  });
});
