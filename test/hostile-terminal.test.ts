/**
 * Terminal escape injection: control and bidi characters from a sketch (its description, a source
 * line, a diagnostic) or from the command line reach the terminal only as visible escapes, on every
 * path (`run`, `check`, `decode`, errors); the CLI's own colors survive; JSON stays exact.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { main } from '../src/cli/main.js';
import { escapeControls, markPaint, terminalText } from '../src/cli/terminal.js';

/** Any character that must never reach a terminal raw (the CLI's own SGR colors aside). */
const RAW = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

async function cli(args: string[], color = false) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (s) => out.push(s), err: (s) => err.push(s), color });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

const ESC = '\u001b';
const BEL = '\u0007';
const RLO = '\u202e';
const dir = mkdtempSync(join(tmpdir(), 'mbsim-term-'));

/** A valid sketch that hangs, with ESC / BEL / U+202E / a C1 CSI in its description and in a comment. */
const hostile = join(dir, 'hostile.mbk');
writeFileSync(hostile, [
  `kernel evil arch=sm_90a description="clear${ESC}[2J bell${BEL} ${RLO}reversed c1\u009b31m"`,
  '',
  'barrier b[1] count=1',
  '',
  'role r warps=1 per=one:',
  `    mbarrier.try_wait.parity b[0], 0   # ${ESC}]0;title${BEL} ${RLO}`,
  '',
].join('\n'));

/** A sketch whose kernel name holds an OSC title sequence: a diagnostic that quotes the line. */
const badName = join(dir, 'badname.mbk');
writeFileSync(badName, `kernel evil${ESC}]0;pwned${BEL}${RLO} arch=sm_90a\n\nbarrier b[1] count=1\n\nrole r warps=1 per=one:\n    mbarrier.arrive b[0]\n`);

/** A sketch with an error on a line that carries the characters in a comment. */
const badLine = join(dir, 'badline.mbk');
writeFileSync(badLine, `kernel k arch=sm_90a\n\nbarrier b[1] count=1\n\nrole r warps=1 per=one:\n    mbarrier.arrive nothere[0]   # ${ESC}[2J${BEL}${RLO}\n`);

describe('terminalText', () => {
  test('escapes C0 (but \\n and \\t), DEL, C1 and bidi controls; keeps other text', () => {
    expect(terminalText(`a${ESC}[2J${BEL}\tb\nc\r${RLO}d\u007f\u0085\u2066\u200f\u061c é 中`))
      .toBe('a\\u001b[2J\\u0007\tb\nc\\u000d\\u202ed\\u007f\\u0085\\u2066\\u200f\\u061c é 中');
  });

  test('the CLI\'s colors become SGR; a forged marker does not', () => {
    expect(terminalText(markPaint.bold(`x${markPaint.red('y')}`))).toBe(`${ESC}[1mx${ESC}[31my${ESC}[39m${ESC}[22m`);
    expect(terminalText(markPaint.bold(markPaint.dim('z')))).toBe(`${ESC}[1m${ESC}[2mz${ESC}[22m${ESC}[1m${ESC}[22m`);
    expect(terminalText('\u00000000000000000000031m')).toBe('\\u00000000000000000000031m');
    expect(escapeControls(markPaint.red('r'))).not.toMatch(RAW);
  });

  test('JSON passed through it parses to the same value', () => {
    const v = { s: `${ESC}${BEL}${RLO}\u0085\u007f\\${RLO}`, n: [1, 'x\u2067'] };
    const out = terminalText(JSON.stringify(v));
    expect(out).not.toMatch(RAW);
    expect(JSON.parse(out)).toEqual(v);
  });
});

describe('every path of the CLI', () => {
  test('run: the description and the hang report are escaped', async () => {
    const r = await cli(['run', hostile]);
    expect(r.code).toBe(1);
    expect(r.out).toContain('clear\\u001b[2J bell\\u0007 \\u202ereversed c1\\u009b31m');
    expect(r.out).not.toMatch(RAW);
    expect(r.err).not.toMatch(RAW);
  });

  test('run with colors: the CLI\'s SGR colors survive, the sketch\'s escapes do not', async () => {
    const r = await cli(['run', hostile], true);
    expect(r.out).toContain(`${ESC}[1mmbsim run ${hostile}${ESC}[22m`);
    expect(r.out).toContain('clear\\u001b[2J');
    // Every ESC left is one of the CLI's own SGR sequences.
    expect(r.out.replace(/\u001b\[\d{1,2}m/g, '')).not.toMatch(RAW);
  });

  test('check (text, --json and a sweep)', async () => {
    const t = await cli(['check', hostile]);
    expect(t.code).toBe(1);
    expect(`${t.out}${t.err}`).not.toMatch(RAW);
    const j = await cli(['check', hostile, '--json']);
    expect(j.out).not.toMatch(RAW);
    expect(JSON.parse(j.out).verdict).toBe('hang');
    const s = await cli(['check', hostile, '--sweep', `X${ESC}=1..2`]);
    expect(s.code).toBe(2);
    expect(s.err).toContain('X\\u001b=1..2');
    expect(s.err).not.toMatch(RAW);
  });

  test('a kernel name with an OSC sequence: the diagnostic quotes the line escaped', async () => {
    for (const verb of ['run', 'check']) {
      const r = await cli([verb, badName]);
      expect(r.code).toBe(2);
      expect(r.err).toContain(`kernel evil\\u001b]0;pwned\\u0007\\u202e arch=sm_90a`);
      expect(r.err).not.toMatch(RAW);
      // Each caret still points at its column, the escapes before it counted at their printed width.
      const rows = r.err.split('\n');
      const checked = rows.flatMap((row, i) => {
        const m = /^\S+:1:(\d+): error\[([^\]]+)\]: (.*)$/.exec(row);
        if (!m) return [];
        const caretCol = rows[i + 2]!.indexOf('^');
        return [[m[2], rows[i + 1]!.slice(caretCol)] as const];
      });
      expect(checked).toContainEqual(['E-syntax', expect.stringMatching(/^\]0;pwned/)]);
      expect(checked).toContainEqual(['E-bad-char', expect.stringMatching(/^\\u0007/)]);
    }
  });

  test('a source line with ESC / BEL / U+202E in its comment, quoted under an error', async () => {
    for (const verb of ['run', 'check']) {
      const r = await cli([verb, badLine]);
      expect(r.code).toBe(2);
      expect(r.err).toContain('nothere');
      expect(r.err).toContain('# \\u001b[2J\\u0007\\u202e');
      expect(r.err).not.toMatch(RAW);
    }
  });

  test('errors that echo the command line: --set, an unknown flag, a file name, decode', async () => {
    const cases = [
      ['run', 'mechanism', '--set', `B${ESC}]0;x${BEL}=1`],
      ['run', 'mechanism', `--w${ESC}[2J`],
      ['run', `no${ESC}[2Jsuch${RLO}.mbk`],
      ['decode', `${ESC}[2J${RLO}`],
      ['check', 'mechanism', '--trace', join(dir, `missing${ESC}`, 'x.json')],
    ];
    for (const args of cases) {
      const r = await cli(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.err).toMatch(/\\u001b|\\u202e/);
      expect(r.err).not.toMatch(RAW);
      expect(r.out).not.toMatch(RAW);
    }
  });
});
