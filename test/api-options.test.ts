import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { check, checkSarif, explainWord, findExample, instantiate, parsePtx, parseSketch, simulate } from '../src/index.js';

/** Options bags refuse keys they do not have: a misspelt bound would otherwise be no bound at all. */
describe('unknown option keys', () => {
  const program = instantiate(findExample('mechanism')!.build());

  test('check: simulate\'s timeoutMs is refused with check\'s own name for it', () => {
    expect(() => check(program, { timeoutMs: 10 } as never)).toThrow(TypeError);
    expect(() => check(program, { timeoutMs: 10 } as never)).toThrow(/check: options has no option "timeoutMs" \(did you mean "timeout"\?\); its options are maxStates, maxMemory, timeout,/);
    expect(() => check(program, { maxstates: 10 } as never)).toThrow(/did you mean "maxStates"/);
    expect(() => check(program, { frobnicate: true } as never)).toThrow(/has no option "frobnicate"; its options are/);
  });

  test('simulate: check\'s timeout is refused with simulate\'s name for it', () => {
    expect(() => simulate(program, { timeout: 10 } as never)).toThrow(/simulate: options has no option "timeout" \(did you mean "timeoutMs"\?\)/);
    expect(() => simulate(program, { maxStep: 10 } as never)).toThrow(/did you mean "maxSteps"/);
  });

  test('instantiate and checkSarif: the same rule', () => {
    expect(() => instantiate(findExample('mechanism')!.build(), {}, { lockStep: true } as never)).toThrow(/instantiate: options has no option "lockStep" \(did you mean "lockstep"\?\)/);
    const r = check(program);
    expect(() => checkSarif(r, { repository: 'x' } as never)).toThrow(/checkSarif: options has no option "repository"/);
  });

  test('every option check and simulate take (as their errors list them) is documented in docs/API.md, with its default', () => {
    const api = readFileSync(join(__dirname, '..', 'docs', 'API.md'), 'utf8');
    const listed = (f: () => unknown): string[] => {
      try {
        f();
      } catch (e) {
        return /its options are (.*)$/.exec((e as Error).message)![1]!.split(', ');
      }
      throw new Error('no error');
    };
    const opts = [...listed(() => check(program, { zz: 1 } as never)), ...listed(() => simulate(program, { zz: 1 } as never))];
    expect(opts).toEqual(expect.arrayContaining(['stableWaits', 'stableLandings', 'verifyHash', 'onTerminal', 'maxSteps']));
    expect(opts.filter((o) => !new RegExp(`\\b${o}\\b`).test(api))).toEqual([]);
    for (const o of ['stableWaits', 'stableLandings', 'verifyHash', 'onTerminal']) expect(api).toMatch(new RegExp(`^- \`${o}\` \\(default `, 'm'));
    // The two defaults of maxSteps, and why they differ.
    expect(api).toMatch(/maxSteps \(default 50,000,000; `mbsim run --max-steps` defaults to 500,000/);
    expect(api).toMatch(/`--max-steps` defaults to 500,000, so a spinning kernel/);
  });

  test('explainWord: text of up to 8 hex digits is a token, 9 to 16 a word; a number or bigint is always the word (docs/API.md)', () => {
    expect(explainWord('7fffd800').kind).toBe('token');
    expect(explainWord('0x7fffd800').kind).toBe('token');
    expect(explainWord('00007fffd800').kind).toBe('word');
    expect(explainWord(0x7fffd800).kind).toBe('word');
    expect(explainWord(0x7fffd800n).kind).toBe('word');
    expect(explainWord(0x7fffd800).input).toBe('0x000000007fffd800');
    const api = readFileSync(join(__dirname, '..', 'docs', 'API.md'), 'utf8');
    expect(api).toContain("assert.equal(explainWord('7fffd800').kind, 'token');");
    expect(api).toContain("assert.equal(explainWord(0x7fffd800).kind, 'word');");
  });

  test('every documented option is still taken', () => {
    const r = check(program, { maxStates: 1000, maxMemory: 1 << 30, timeout: 10_000, all: false, por: true, symmetry: true, ctaSymmetry: true, stableWaits: true, stableLandings: true, strict: false, randomRuns: false, onProgress: () => {}, onTerminal: () => {} });
    expect(r.verdict).toBe('ok');
    const s = simulate(program, { seed: 1, recordEvents: true, recordSpans: true, maxSteps: 1_000_000, maxMemory: 1 << 30, timeoutMs: 10_000, onStep: () => {} });
    expect(s.verdict).toBe('ok');
    expect(JSON.stringify(checkSarif(r, { toolVersion: '1', srcRoot: '/' })).length).toBeGreaterThan(100);
  });
});

/** The two front ends' parsers: a mistake in the text is a diagnostic, a non-string argument a TypeError (docs/API.md "Errors"). */
describe('parseSketch and parsePtx: API misuse throws, text never does', () => {
  test('a source that is not a string is a TypeError naming the argument, for both', () => {
    expect(() => parseSketch(5 as never, 'k.mbk')).toThrow(new TypeError('parseSketch: source must be a string, got a number (5)'));
    expect(() => parsePtx(3 as never, 'k.ptx')).toThrow(new TypeError('parsePtx: src must be a string, got a number (3)'));
    expect(() => parseSketch(null as never, 'k.mbk')).toThrow(new TypeError('parseSketch: source must be a string, got null'));
    expect(() => parsePtx([] as never, 'k.ptx')).toThrow(new TypeError('parsePtx: src must be a string, got an array'));
    expect(() => parseSketch('kernel k arch=sm_90a\n', 7 as never)).toThrow(new TypeError('parseSketch: file must be a string, got a number (7)'));
    expect(() => parsePtx('.version 8.0\n', 7 as never)).toThrow(new TypeError('parsePtx: file must be a string, got a number (7)'));
  });

  test('a syntax error in a string is a located diagnostic, for both', () => {
    const s = parseSketch('kernel k arch=sm_90a\nparam = 3\nrole r warps=1 per=one:\n    work 1\n', 'k.mbk');
    expect(s.kernel).toBeUndefined();
    expect(s.diagnostics).toEqual([expect.objectContaining({ code: 'E-syntax', file: 'k.mbk', line: 2, col: 7 })]);
    const p = parsePtx('.version 8.0\n.target sm_90a\n.entry k( {\n', 'k.ptx');
    expect(p.ok).toBe(false);
    expect(p.ok ? null : p.diagnostic).toMatchObject({ code: 'E-ptx-syntax', file: 'k.ptx', line: 3, col: 11 });
  });
});
