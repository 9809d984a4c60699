/**
 * A PTX kernel parameter without a value (src/cli/missing-param.ts) is one located input error in
 * every path of the CLI, spawned from source: the single check and `run` print its file:line:col,
 * the source line and a caret; `--format short` the located line alone; `--json` carries the place
 * as the diagnostic's `file` / `line` / `col`; each `--sweep` row names file:line:col, and the
 * sweep's JSON rows carry them as fields.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LATE } from './support/ptx-scalars.js';

const root = join(__dirname, '..');

/** `mbsim ARGS` from the TypeScript sources. */
function mbsim(...args: string[]): { code: number; out: string; err: string } {
  const r = spawnSync(process.execPath, ['--import', './test/support/ts-register.mjs', 'src/cli/bin.ts', ...args], { cwd: root, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
  return { code: r.status ?? -1, out: r.stdout, err: r.stderr };
}

// LATE reads param_2 at line 19 (`ld.param.u32 %r3, [_Z7scalarsiii_param_2];`), indented here
// with a tab: the caret starts under the operation, at column 2.
const file = join(mkdtempSync(join(tmpdir(), 'mbsim-missing-loc-')), 'late.ptx');
writeFileSync(file, LATE.replace(/^ld\.param\.u32 %r3/m, '\tld.param.u32 %r3'));
const given = ['--param', 'param_0=64', '--param', 'param_1=1'];
const line = `${file}:19:2: error: kernel parameter param_2 has no value, and a branch, an address or a count of the kernel depends on it here: give --param param_2=VALUE`;
const excerpt = '  \tld.param.u32 %r3, [_Z7scalarsiii_param_2];\n  \t^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~';

describe('the missing parameter\'s place in every path', () => {
  it('check and run: the located line, the source line and a caret; --format short: the line alone', () => {
    const one = mbsim('check', file, ...given);
    expect([one.code, one.out, one.err]).toEqual([2, '', `${line}\n${excerpt}\n`]);
    const run = mbsim('run', file, ...given);
    expect([run.code, run.err]).toEqual([2, `${line}\n${excerpt}\n`]);
    const short = mbsim('check', file, ...given, '--format', 'short');
    expect([short.code, short.err]).toEqual([2, `${line}\n`]);
  }, 300_000);

  it('--json: the diagnostic carries file, line and col', () => {
    for (const verb of ['check', 'run']) {
      const r = mbsim(verb, file, ...given, '--json');
      expect(r.code).toBe(2);
      const doc = JSON.parse(r.out) as { message: string; diagnostics: object[] };
      expect(doc.message).toBe(line);
      expect(doc.diagnostics).toEqual([{ severity: 'error', code: 'E-ptx-param-missing', message: line.slice(line.indexOf('error: ') + 7), file, line: 19, col: 2 }]);
    }
  }, 300_000);

  it('--sweep: each row names file:line:col; its JSON rows carry them as fields', () => {
    const text = mbsim('check', file, '--param', 'param_0=64', '--sweep', 'param_1=1..2');
    expect(text.code).toBe(2);
    const rows = text.out.split('\n').filter((l) => /^[12] +bad-input /.test(l));
    expect(rows.map((r) => r.replace(/^(\d) +bad-input +\d+ +/, '$1 '))).toEqual([`1 ${line}`, `2 ${line}`]);
    const json = mbsim('check', file, '--param', 'param_0=64', '--sweep', 'param_1=1..1', '--json');
    expect(json.code).toBe(2);
    const doc = JSON.parse(json.out) as { rows: object[] };
    expect(doc.rows).toEqual([{ params: { param_1: 1 }, verdict: 'bad-input', exit: 2, error: line, file, line: 19, col: 2 }]);
  }, 300_000);
});
