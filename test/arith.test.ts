import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { applyBin, div, EvalFault, MAX_EXACT, parseInteger, shl } from '../src/kernel/arith.js';
import { compileExpr, evalExpr, parseExpr, showExpr } from '../src/kernel/expr.js';
import type { Expr } from '../src/kernel/ir.js';
import type { MachineEvent } from '../src/machine/events.js';
import { check } from '../src/check/check.js';
import { instantiate } from '../src/machine/program.js';
import { parseSketch } from '../src/lang/index.js';
import { simulate } from '../src/sim/simulate.js';
import { main } from '../src/cli/main.js';

/** Exact integer arithmetic: every evaluator goes through src/kernel/arith.ts; no result is ever rounded or wrapped. */
const ev = (src: string, vars: Record<string, number> = {}) => {
  const names = Object.keys(vars);
  const fn = compileExpr(parseExpr(src), (n) => names.indexOf(n));
  return fn(names.map((n) => vars[n]!));
};
const fault = (f: () => unknown): string => {
  try {
    f();
  } catch (err) {
    if (err instanceof EvalFault) return err.message;
    throw err;
  }
  return 'no fault';
};

describe('the arithmetic names the real cause', () => {
  test('overflow beyond ±(2^53 − 1), in every operator and evaluator', () => {
    const BIG = MAX_EXACT;
    expect(fault(() => ev('x + 2', { x: BIG }))).toBe('integer overflow: 9007199254740991 + 2 exceeds 2^53 − 1');
    expect(fault(() => ev('x - 2', { x: -BIG }))).toBe('integer overflow: -9007199254740991 - 2 is below −(2^53 − 1)');
    expect(fault(() => ev('x * 3', { x: 2 ** 52 }))).toBe('integer overflow: 4503599627370496 * 3 exceeds 2^53 − 1');
    expect(fault(() => ev('~x', { x: -BIG }))).toBe('no fault');
    expect(fault(() => ev('~x', { x: BIG }))).toBe('integer overflow: ~9007199254740991 is below −(2^53 − 1)');
    expect(fault(() => evalExpr(parseExpr('x + 2'), () => BIG))).toBe('integer overflow: 9007199254740991 + 2 exceeds 2^53 − 1');
    expect(fault(() => applyBin('+', BIG, 2))).toBe('integer overflow: 9007199254740991 + 2 exceeds 2^53 − 1');
    // At the edge, exact.
    expect(ev('x + 1', { x: BIG - 1 })).toBe(BIG);
    expect(ev('x - y', { x: BIG, y: BIG })).toBe(0);
  });
  test('division, remainder and shifts each say what went wrong', () => {
    expect(fault(() => ev('4 / x', { x: 0 }))).toBe('division by zero: 4 / 0');
    expect(fault(() => ev('4 % x', { x: 0 }))).toBe('remainder by zero: 4 % 0');
    expect(fault(() => ev('1 << x', { x: 70 }))).toBe('shift count 70 out of range 0..63 in 1 << 70');
    expect(fault(() => ev('1 >> x', { x: -1 }))).toBe('shift count -1 out of range 0..63 in 1 >> -1');
    expect(fault(() => shl(3, 52))).toBe('integer overflow: 3 << 52 exceeds 2^53 − 1');
  });
  test('division is exact (C truncation) beyond 32 bits, where the double quotient could round', () => {
    const big = fc.integer({ min: -MAX_EXACT, max: MAX_EXACT });
    fc.assert(fc.property(big, big, (a, b) => {
      fc.pre(b !== 0);
      expect(div(a, b)).toBe(Number(BigInt(a) / BigInt(b)));
      expect(applyBin('%', a, b)).toBe(Number(BigInt(a) % BigInt(b)));
    }));
    expect(div(MAX_EXACT, 2 ** 52)).toBe(1);
    expect(div(-7, 2)).toBe(-3);
  });
  test('+ - * agree with BigInt wherever the exact result is in range, and fault wherever it is not', () => {
    const big = fc.integer({ min: -MAX_EXACT, max: MAX_EXACT });
    const small = fc.integer({ min: -(2 ** 27), max: 2 ** 27 });
    fc.assert(fc.property(big, fc.oneof(big, small), fc.constantFrom('+', '-', '*') as fc.Arbitrary<'+' | '-' | '*'>, (a, b, op) => {
      const x = BigInt(a);
      const y = BigInt(b);
      const exact = op === '+' ? x + y : op === '-' ? x - y : x * y;
      const fits = exact <= BigInt(MAX_EXACT) && exact >= -BigInt(MAX_EXACT);
      if (fits) expect(ev(`a ${op} b`, { a, b })).toBe(Number(exact));
      else expect(fault(() => ev(`a ${op} b`, { a, b }))).toMatch(/^integer overflow: /);
    }));
  });
  test('&& and || short-circuit as in C: the right operand is not evaluated', () => {
    expect(ev('d != 0 && n / d > 1', { d: 0, n: 4 })).toBe(0);
    expect(ev('d == 0 || n / d > 1', { d: 0, n: 4 })).toBe(1);
    expect(fault(() => ev('d == 0 && n / d > 1', { d: 0, n: 4 }))).toBe('division by zero: 4 / 0');
  });
  test('literals are exact or rejected, never rounded', () => {
    expect(parseInteger('9007199254740991')).toEqual({ value: MAX_EXACT });
    expect(parseInteger('-0x1F_FFFF_FFFF_FFFF')).toEqual({ value: -MAX_EXACT });
    expect(parseInteger('0b101')).toEqual({ value: 5 });
    expect(parseInteger('9007199254740993')).toEqual({ error: 'integer 9007199254740993 is outside the exact range ±(2^53 − 1)' });
    expect(parseInteger('1e3')).toEqual({ error: "'1e3' is not an integer" });
    expect(() => parseExpr('x + 99999999999999999999')).toThrow('integer 99999999999999999999 is outside the exact range ±(2^53 − 1)');
  });
});

describe('long chains are evaluated with loops, not recursion as deep as the chain', () => {
  const chain = (n: number, op: string, leaf: (i: number) => Expr): Expr => {
    let e = leaf(0);
    for (let i = 1; i < n; i++) e = { k: 'bin', op: op as '+', a: e, b: leaf(i) };
    return e;
  };
  test('a 30,000-term left-deep sum compiles, runs, evaluates and prints', () => {
    const e = chain(30_000, '+', () => ({ k: 'var', name: 'x' }));
    const fn = compileExpr(e, () => 0);
    expect(fn([3])).toBe(90_000);
    expect(evalExpr(e, () => 2)).toBe(60_000);
    expect(showExpr(e).length).toBeGreaterThan(150_000);
    // Left-associative: the overflow happens where C would see it.
    const s = chain(3, '-', (i) => ({ k: 'num', v: i === 0 ? MAX_EXACT : i === 1 ? -1 : 1 }));
    expect(fault(() => compileExpr(s, () => 0)([]))).toBe('integer overflow: 9007199254740991 - -1 exceeds 2^53 − 1');
    const and = chain(50, '&&', (i) => (i === 10 ? { k: 'num', v: 0 } : i === 11 ? parseExpr('1 / 0') : { k: 'num', v: 1 }));
    expect(compileExpr(and, () => 0)([])).toBe(0);
  });
});

function diagOf(sim: { events: MachineEvent[] | null }): string | undefined {
  const d = sim.events?.find((e) => e.e === 'diag');
  return d?.e === 'diag' ? d.diag.message : undefined;
}

const BIG_SKETCH = `kernel big arch=sm_100a
param BIG = 9007199254740991
barrier b count=1
role r warps=1 per=one:
    x = BIG + 2
    if x - BIG == 2:
        mbarrier.arrive b
    mbarrier.try_wait.parity b, 0
`;

describe('inexact arithmetic never gives a wrong verdict', () => {
  test('BIG + 2 is an arith trap at its line in the simulator and the checker (it was a HANG)', () => {
    const k = parseSketch(BIG_SKETCH, 'big.mbk').kernel!;
    const sim = simulate(instantiate(k));
    expect(sim.verdict).toBe('trap');
    expect(diagOf(sim)).toBe('integer overflow: 9007199254740991 + 2 exceeds 2^53 − 1 in an expression of r');
    const r = check(instantiate(k));
    expect(r.hazards.map((h) => `${h.kind} ${h.locations[0]?.line}`)).toContain('arith 5');
    expect(r.hazards.map((h) => h.kind)).not.toContain('hang');
  });
  test('the checker keeps frame values beyond 32 bits exact (its state encoding used to truncate them)', () => {
    const src = `kernel wide arch=sm_100a
barrier b count=1
role r warps=1 per=one:
    x = 3000000000
    y = -5000000000
    mbarrier.try_wait.parity b, 1
    if x == 3000000000 and y == -5000000000 and x * 3000 == 9000000000000:
        mbarrier.arrive b
    mbarrier.try_wait.parity b, 0
`;
    const k = parseSketch(src, 'wide.mbk').kernel!;
    expect(simulate(instantiate(k)).verdict).toBe('ok');
    const r = check(instantiate(k));
    expect(r.verdict).toBe('ok');
    expect(r.hazards.filter((h) => h.severity === 'error')).toEqual([]);
  });
  test('a loop step that overflows the counter is an arith fault, not a rounded counter', () => {
    const src = `kernel loop arch=sm_100a
param HALF = 4503599627370496
param TOP = 9007199254740991
barrier b count=1
role r warps=1 per=one:
    for i in range(0, TOP, HALF + 1):
        work 1
    mbarrier.arrive b
`;
    const sim = simulate(instantiate(parseSketch(src, 'loop.mbk').kernel!));
    expect(sim.verdict).toBe('trap');
    expect(diagOf(sim)).toBe('integer overflow: 4503599627370497 + 4503599627370497 exceeds 2^53 − 1 in an expression of r');
  });
});

async function cli(args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (s) => out.push(s), err: (s) => err.push(s), color: false });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('mbsim: exact arithmetic on the command line', () => {
  test('run and check report arith at line 5 with the cause; the note names no other cause', async () => {
    const { mkdtempSync, writeFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const file = join(mkdtempSync(join(tmpdir(), 'mbsim-arith-')), 'big.mbk');
    writeFileSync(file, BIG_SKETCH);
    const run = await cli(['run', file]);
    expect(run.out).toContain('verdict: trap');
    expect(run.out).toContain(`error[arith] ${file}:5: r: integer overflow: 9007199254740991 + 2 exceeds 2^53 − 1 in an expression of r`);
    expect(run.out).not.toContain('integer division by zero');
    const chk = await cli(['check', file]);
    expect(chk.out).toContain('verdict: ARITH');
    expect(chk.out).toContain('integer overflow: 9007199254740991 + 2 exceeds 2^53 − 1');
    expect(chk.out).toContain(`at ${file}:5`);
    expect(chk.out).not.toContain('HANG');
  });
  test('--set takes exact integers only', async () => {
    const r = await cli(['run', 'pipeline', '--set', 'K=9007199254740993']);
    expect(r.code).toBe(2);
    expect(r.err).toContain('--set K: integer 9007199254740993 is outside the exact range ±(2^53 − 1)');
    const ok = await cli(['run', 'pipeline', '--set', 'K=0x4', '--json']);
    expect(ok.code).toBe(0);
  });
});

describe('check: an expression that faults during the search is an arith hazard, never an internal error', () => {
  const sketch = (line: string) => `kernel ar arch=sm_90a
barrier b[2] count=1
role p warps=1 per=one:
    for i in range(0, 2):
        mbarrier.arrive b[0]
        ${line}
`;
  for (const line of ['x = 5 / (i - i)', 'x = 1 << 64', 'x = 9007199254740991 + 1', 'mbarrier.arrive b[1 / (i - i)]', 'mbarrier.try_wait.parity b[1 % (i - i)], 0']) {
    test(line, () => {
      const k = parseSketch(sketch(line), 'ar.mbk').kernel!;
      for (const opts of [{}, { por: false, symmetry: false }]) {
        const r = check(instantiate(k), opts);
        expect(r.verdict).toBe('arith');
        expect(r.hazards[0]!.locations[0]?.line).toBe(6);
      }
    });
  }
});
