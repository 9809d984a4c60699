/**
 * Hostile values on the command line and in files: `--sweep` ranges, `--set` names and values,
 * `--timing` keys, a negative `work`, SARIF of an incomplete search, `explainWord` of a number.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { main } from '../src/cli/main.js';
import { parseSweep } from '../src/check/index.js';
import { DecodeError, explainWord } from '../src/report/decode.js';

async function cli(args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (s) => out.push(s), err: (s) => err.push(s), color: false });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

const dir = mkdtempSync(join(tmpdir(), 'mbsim-input-'));

describe('--sweep ranges are validated like --set', () => {
  test('the integer forms of --set: 0x, 0b and _ separators', async () => {
    const { parseSweep } = await import('../src/check/index.js');
    expect(parseSweep('S=0x2..0b100')).toEqual({ name: 'S', from: 2, to: 4 });
    expect(parseSweep('S=1_000..1_002')).toEqual({ name: 'S', from: 1000, to: 1002 });
    expect(() => parseSweep('S=0x..2')).toThrow(/^--sweep expects NAME=A\.\.B/);
  });
  test('beyond 2^53: exit 2 at once (it used to loop until out of memory)', async () => {
    const t0 = Date.now();
    for (const spec of ['BYTES=9007199254740992', 'BYTES=1..9007199254740993', 'BYTES=-9007199254740993..0', `BYTES=${'9'.repeat(400)}`]) {
      const r = await cli(['check', 'mechanism', '--sweep', spec]);
      expect(r.code, spec).toBe(2);
      expect(r.err).toMatch(/^mbsim: error: --sweep BYTES: integer -?\d+…? is outside the exact range ±\(2\^53 − 1\)$/);
    }
    expect(Date.now() - t0).toBeLessThan(30_000);
  });

  test('more than 10,000 values in one range: exit 2', async () => {
    const r = await cli(['check', 'mechanism', '--sweep', 'BYTES=1..10001']);
    expect(r.code).toBe(2);
    expect(r.err).toBe('mbsim: error: --sweep BYTES: 10,001 values; at most 10,000');
    expect(parseSweep('BYTES=1..10000')).toEqual({ name: 'BYTES', from: 1, to: 10000 });
    expect(parseSweep('N=-9007199254740991')).toEqual({ name: 'N', from: -9007199254740991, to: -9007199254740991 });
  });
});

describe('--set names and values', () => {
  test('__proto__ and constructor are names like any other: unknown parameter, not "given twice"', async () => {
    for (const name of ['__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
      const r = await cli(['run', 'mechanism', '--set', `${name}=1`]);
      expect(r.code).toBe(2);
      expect(r.err).toBe(`mbsim: error: example 'mechanism': unknown parameter '${name}' (this kernel has: BYTES)`);
    }
    const twice = await cli(['run', 'mechanism', '--set', 'BYTES=1', '--set', 'BYTES=2']);
    expect(twice.err).toBe('mbsim: error: --set BYTES is given twice');
  });

  test('a value without a digit is rejected, not taken as 0', async () => {
    for (const v of ['_', '__', '-_', '0x_', '0b_', '0x', '']) {
      const r = await cli(['run', 'mechanism', '--set', `BYTES=${v}`]);
      expect(r.code, v).toBe(2);
      expect(r.err).toBe(`mbsim: error: --set expects NAME=INTEGER, got 'BYTES=${v}'`);
    }
    const ok = await cli(['run', 'mechanism', '--json', '--set', 'BYTES=1_024']);
    expect(JSON.parse(ok.out).params).toEqual({ BYTES: 1024 });
  });
});

describe('--timing keys are the timing parameters\' own names', () => {
  test('inherited names (toString, __proto__, constructor) are unknown parameters', async () => {
    for (const [json, name] of [['{"toString":1}', 'toString'], ['{"__proto__":1}', '__proto__'], ['{"constructor":{"value":2}}', 'constructor']]) {
      const f = join(dir, 'timing.json');
      writeFileSync(f, json!);
      const r = await cli(['run', 'mechanism', '--timing', f]);
      expect(r.code, json).toBe(2);
      expect(r.err.split('\n')[0]).toBe(`${f}:1:2: error[E-timing-unknown]: unknown timing parameter '${name}'`);
    }
  });
});

describe('work with a negative number of cycles', () => {
  test('a diagnostic with its location, for a literal and for a parameter default', async () => {
    const f = join(dir, 'work.mbk');
    writeFileSync(f, 'kernel k arch=sm_90a\nparam N = -3\nbarrier b[1] count=1\n\nrole r warps=1 per=one:\n    work -100\n    work N\n    work 5 - 2\n    mbarrier.arrive b[0]\n');
    const r = await cli(['run', f]);
    expect(r.code).toBe(2);
    expect(r.err).toBe([
      `${f}:6:10: error[E-work-cycles]: work of -100 cycles is negative`,
      '      work -100',
      '           ^~~~',
      'hint: work takes a non-negative number of cycles',
      `${f}:7:10: error[E-work-cycles]: work of -3 cycles is negative`,
      '      work N',
      '           ^',
    ].join('\n'));
  });
});

describe('SARIF of an incomplete search', () => {
  test('a notification in invocations[0].toolExecutionNotifications carries the reason', async () => {
    const f = join(dir, 'inc.sarif');
    const r = await cli(['check', 'pipeline', '--max-states', '10', '--sarif', f]);
    expect(r.code).toBe(3);
    const s = JSON.parse(readFileSync(f, 'utf8'));
    const inv = s.runs[0].invocations[0];
    expect(inv.executionSuccessful).toBe(true);
    expect(inv.toolExecutionNotifications).toHaveLength(1);
    const n = inv.toolExecutionNotifications[0];
    expect(n.level).toBe('warning');
    expect(n.descriptor.id).toBe('incomplete');
    expect(n.message.text).toMatch(/^the search is incomplete: stopped by --max-states after \d+ states; /);
    expect(n.properties.stoppedBy).toBe('max-states');
  });

  test('a complete search has none', async () => {
    const f = join(dir, 'ok.sarif');
    expect((await cli(['check', 'mechanism', '--sarif', f])).code).toBe(0);
    expect(JSON.parse(readFileSync(f, 'utf8')).runs[0].invocations[0].toolExecutionNotifications).toEqual([]);
  });
});

describe('explainWord of a number or bigint', () => {
  test('a number or bigint is the 64-bit word', () => {
    const text = explainWord('0x7ffff3fe001ffffa');
    expect(explainWord(0x7ffff3fe001ffffan).lines).toEqual(text.lines);
    expect(explainWord(123).lines).toEqual(explainWord('0x000000000000007b').lines);
    expect(explainWord(123).kind).toBe('word');
  });

  test('out of range, fractional, unsafe or not a number: DecodeError with a clear message', () => {
    const bad: [unknown, RegExp][] = [
      [-1, /outside a 64-bit mbarrier word/],
      [1n << 64n, /outside a 64-bit mbarrier word/],
      [1.5, /not an integer mbsim can take exactly/],
      [2 ** 60, /not an integer mbsim can take exactly/],
      [Number.NaN, /not an integer/],
      [null, /expects hex text, a number or a bigint, got null/],
      [{}, /got object/],
    ];
    for (const [v, msg] of bad) {
      expect(() => explainWord(v as string)).toThrow(DecodeError);
      expect(() => explainWord(v as string)).toThrow(msg);
    }
  });
});
