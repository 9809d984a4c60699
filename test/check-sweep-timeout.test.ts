/**
 * `check --sweep` and `--timeout`: the timeout bounds the whole sweep, counted from the command's
 * start, and the default (60 s) bounds it the same way. No timing is asserted: the bound is passed
 * already spent, so every row's verdict and message are known.
 */
import { describe, expect, test } from 'vitest';
import { EXAMPLES } from '../src/examples/index.js';
import { instantiate } from '../src/machine/program.js';
import { runCheckCli, runCheckSweepCli, sweepDeadline } from '../src/check/index.js';
import { checkVerb, type CheckOpts } from '../src/cli/check-verb.js';

const ex = EXAMPLES.find((e) => e.name === 'hopper')!;
const build = (params: Record<string, number>) => instantiate(ex.build(), { S: 2, ...params });
const ranges = [{ name: 'K', from: 2, to: 4 }];

describe('the sweep deadline', () => {
  test('--timeout: the time the command has left; none: the default 60 s', () => {
    expect(sweepDeadline({ timeoutMs: 1500 }, 1_000_000)).toBe(1_001_500);
    expect(sweepDeadline({ timeoutMs: 0 }, 1_000_000)).toBe(1_000_000);
    expect(sweepDeadline({}, 1_000_000)).toBe(1_060_000);
  });

  test('a spent timeout: every combination is incomplete, not checked (exit 3)', async () => {
    const out: string[] = [];
    const code = await runCheckSweepCli('hopper', ranges, build, { timeoutMs: 0, format: 'short' }, { out: (x) => out.push(x), err: () => {}, color: false });
    expect(code).toBe(3);
    const rows = out.join('\n').split('\n').filter((l) => /^\d+ {2}/.test(l));
    expect(rows).toEqual([2, 3, 4].map((k) => `${k}  incomplete  0       not checked: --timeout ran out`));
    expect(out.join('\n')).toContain('3 incomplete; exit 3');
  });

  test('one check with no time left: incomplete by the timeout (exit 3), not a RangeError of check()', async () => {
    const out: string[] = [];
    const code = await runCheckCli(build({ K: 2 }), { timeoutMs: 0, format: 'short' }, { out: (x) => out.push(x), err: () => {}, color: false });
    expect(code).toBe(3);
    expect(out.join('\n')).toMatch(/stopped by timeout|--timeout/);
  });

  test('without --timeout every combination is checked within the default bound', async () => {
    const out: string[] = [];
    const code = await runCheckSweepCli('hopper', ranges, build, { json: true }, { out: (x) => out.push(x), err: () => {}, color: false });
    const doc = JSON.parse(out.join('')) as { exit: number; rows: { params: { K: number }; verdict: string; exit: number }[] };
    expect(doc.rows.map((r) => [r.params.K, r.verdict])).toEqual([[2, 'ok'], [3, 'ok'], [4, 'ok']]);
    expect(doc.exit).toBe(0);
    expect(code).toBe(0);
  });
});

describe('mbsim check --sweep --timeout counts from the command\'s start', () => {
  const opts = (timeout: number): CheckOpts => ({ set: {}, sweep: ['K=2..3'], format: 'text', reduce: 'all', timeout });
  test('a command that has already used its --timeout checks no combination', async () => {
    const out: string[] = [];
    const io = { out: (s: string) => out.push(s), err: () => {}, color: false };
    const code = await checkVerb('examples/hopper.mbk', opts(1), io, Date.now() - 5000);
    expect(code).toBe(3);
    const text = out.join('\n');
    expect(text).toMatch(/^2\s+incomplete\s+0\s+not checked: --timeout ran out$/m);
    expect(text).toMatch(/^3\s+incomplete\s+0\s+not checked: --timeout ran out$/m);
    expect(text).toMatch(/2 incomplete; exit 3/);
  });
});
