import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { applyBin, compileExpr, EvalFault, parseExpr } from '../src/kernel/expr.js';

/** Integer expressions of the kernel language: C 64-bit semantics, exact or a fault, never wrapped silently. */
const ev = (src: string, vars: Record<string, number> = {}) => {
  const names = Object.keys(vars);
  const fn = compileExpr(parseExpr(src), (n) => names.indexOf(n));
  return fn(names.map((n) => vars[n]!));
};

describe('bit operators beyond 32 bits', () => {
  test('shifts and masks are exact', () => {
    expect(ev('1 << 32')).toBe(4294967296);
    expect(ev('1 << 40')).toBe(2 ** 40);
    expect(ev('(1 << 32) | 1')).toBe(4294967297);
    expect(ev('((1 << 40) - 1) & (1 << 35)')).toBe(2 ** 35);
    expect(ev('(1 << 33) ^ (1 << 33)')).toBe(0);
    expect(ev('~0')).toBe(-1);
    expect(ev('-1 >> 1')).toBe(-1); // arithmetic shift
    expect(ev('x >> 4', { x: 2 ** 40 })).toBe(2 ** 36);
    expect(ev('(i / 2) & 1', { i: 6 })).toBe(1);
  });
  test('results JavaScript cannot hold exactly, and shift counts outside 0..63, are faults', () => {
    expect(() => ev('1 << 53')).toThrow(EvalFault);
    expect(() => ev('1 << 53')).toThrow('integer overflow: 1 << 53 exceeds 2^53 − 1');
    expect(() => ev('1 << 64')).toThrow('shift count 64 out of range 0..63 in 1 << 64');
    expect(() => ev('1 << x', { x: -1 })).toThrow(EvalFault);
  });
  test('on 32-bit operands they agree with JavaScript; on 53-bit ones with BigInt', () => {
    const i32 = fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 });
    fc.assert(fc.property(i32, i32, (a, b) => {
      expect(applyBin('&', a, b)).toBe(a & b);
      expect(applyBin('|', a, b)).toBe(a | b);
      expect(applyBin('^', a, b)).toBe(a ^ b);
    }));
    const big = fc.integer({ min: -(2 ** 52), max: 2 ** 52 });
    fc.assert(fc.property(big, big, (a, b) => {
      expect(applyBin('&', a, b)).toBe(Number(BigInt(a) & BigInt(b)));
      expect(applyBin('|', a, b)).toBe(Number(BigInt(a) | BigInt(b)));
    }));
  });
});
