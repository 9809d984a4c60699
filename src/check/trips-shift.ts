/**
 * The period shift of the all-trip-counts check (trips.ts, docs/CHECK.md "Every trip count"): with
 * the trip parameter N huge, no trip loop ends, and a state whose loop counters are all past a
 * threshold T behaves as the same state with every counter L·rate iterations back (and every value
 * computed from them moved with it), provided the code reads the counters only through what such
 * a shift leaves unchanged: `x % m` and `(x / d) & 1` with m | shift and 2d | shift, comparisons of
 * two shifted values, and comparisons with constants below T. {@link shiftPlan} proves that from
 * the role code (or says why not);  * (trips-normal.ts) identifies such states in the visited set.
 */
import type { Expr, SrcLoc } from '../kernel/ir.js';
import type { Instr, Program } from '../machine/program.js';
import { Machine } from '../machine/machine.js';
import { mulberry32 } from '../model/random.js';
import { operandExprs, type TripLoop } from './trips-loops.js';

/** The shift: per role, the shift (in counter units for one period) of each shifted slot; L and T. */
export interface ShiftPlan {
  /** Iterations of the slowest trip loop in one period. */
  L: number;
  /** Every shifted slot at or above T: the state is past the threshold. */
  T: number;
  /** Per role: slot → its shift for one period (non-zero). */
  delta: Map<number, number>[];
}

/** Why no shift applies, with the place. */
export interface NoShift {
  why: string;
  loc?: SrcLoc;
}

/**
 * Progress per period of each role's trip loop (iterations of the role's loop per iteration of the
 * slowest): measured on one schedule of the kernel with the huge trip count, drawn at random
 * (seeded), until the slowest loop has run `iters` iterations or `maxSteps` steps pass. Any rates
 * are sound (the shift is proved for the rates given); rates the protocol does not follow only
 * leave states unidentified.
 */
export function learnRates(pH: Program, loops: readonly (readonly TripLoop[])[], iters = 24, maxSteps = 200_000): number[] | null {
  const m = new Machine(pH);
  let s = m.initial();
  const rand = mulberry32(7);
  const start = new Map<number, number>();
  const progress = (): Map<number, number> => {
    const per = new Map<number, number>();
    s.agents.forEach((ag, a) => {
      const r = pH.agents[a]!.role;
      const l = loops[r]!.find((x) => ag.pc > x.head && ag.pc < x.end);
      if (!l) return;
      const key = a;
      if (!start.has(key)) start.set(key, ag.frame[l.slot]!);
      const d = Math.abs(ag.frame[l.slot]! - start.get(key)!) / Math.max(1, Math.abs(l.step));
      per.set(r, Math.min(per.get(r) ?? Infinity, d));
    });
    return per;
  };
  for (let n = 0; n < maxSteps; n++) {
    const ch = m.enabled(s);
    if (!ch.length) break;
    s = m.step(s, ch[Math.floor(rand() * ch.length)]!).state;
    if ((n & 63) === 0) {
      const per = progress();
      const min = Math.min(...per.values());
      if (per.size && min >= iters) break;
    }
  }
  const per = progress();
  const roles = loops.map((l, r) => (l.length ? r : -1)).filter((r) => r >= 0);
  if (!roles.length || roles.some((r) => !per.has(r) || per.get(r)! < 2)) return null;
  const min = Math.min(...roles.map((r) => per.get(r)!));
  return loops.map((l, r) => (l.length ? Math.max(1, Math.round(per.get(r)! / min)) : 0));
}

/** Shift of an expression per period, or a reason; `c`: the constants compared with shifted values. */
type D = { d: number } | { fail: string };

/**
 * The shift plan of `pH` (the kernel with the huge trip count `param`), or why there is none.
 * `rates`: from {@link learnRates}. The plan's L is the least period (a multiple of every modulus
 * and twice every divisor that shifted values meet) for which every check passes.
 */
export function shiftPlan(pH: Program, param: string, loops: readonly (readonly TripLoop[])[], rates: readonly number[]): ShiftPlan | NoShift {
  const mods = new Set<number>([2]);
  for (const rc of pH.roles) for (const ins of rc.code) for (const e of exprsOf(ins)) collectModuli(e, pH.params, mods);
  let L = 1;
  for (const m of mods) L = lcm(L, m);
  if (L > 1 << 16) return { why: `the loop counters meet moduli whose least common multiple is ${L}: too long a period` };
  const delta: Map<number, number>[] = [];
  let T = 0;
  for (let r = 0; r < pH.roles.length; r++) {
    const res = roleShift(pH, r, param, loops[r]!, L * (rates[r] || 1));
    if ('why' in res) return res;
    delta.push(res.delta);
    T = Math.max(T, res.T);
  }
  return { L, T: T + 1, delta };
}

/** The shift of one role's slots and the threshold its comparisons need. */
function roleShift(pH: Program, r: number, param: string, loops: readonly TripLoop[], period: number): { delta: Map<number, number>; T: number } | NoShift {
  const rc = pH.roles[r]!;
  const code = rc.code;
  const delta = new Map<number, number>();
  if (!loops.length) return { delta, T: 0 };
  for (const a of loops) for (const b of loops) {
    if (a !== b && a.head > b.head && a.end <= b.end) return { why: `role ${rc.name}: the trip parameter ${param} bounds two nested loops`, loc: locOf(code[a.head]) };
  }
  for (const l of loops) {
    if (l.step <= 0) return { why: `role ${rc.name}: a trip loop whose step is not a positive constant`, loc: locOf(code[l.head]) };
    delta.set(l.slot, period * l.step);
  }
  const slotOf = (name: string) => rc.slots.indexOf(name);
  let T = 0;
  const inBody = (pc: number) => loops.some((l) => pc > l.head && pc < l.end);
  // Regions inside a trip-loop body guarded by an `if` (a jz that is not a `for` head, or an else's jmp).
  const guarded = (pc: number): boolean => {
    for (let j = 0; j < pc; j++) {
      const ins = code[j]!;
      if (!inBody(j)) continue;
      if (ins.i === 'jz' && !ins.loop && pc > j && pc < ins.to) return true;
      if (ins.i === 'jmp' && ins.to > j && pc > j && pc < ins.to) return true;
    }
    return false;
  };
  const heads = new Set(loops.map((l) => l.head));
  /** The shift of `e` (null: a name this analysis cannot place). */
  const dOf = (e: Expr): D => {
    switch (e.k) {
      case 'num':
        return { d: 0 };
      case 'var': {
        if (e.name === param) return { d: 0 };
        const s = slotOf(e.name);
        if (s < 0) return { d: 0 }; // a parameter or a builtin
        return { d: delta.get(s) ?? 0 };
      }
      case 'un': {
        const a = dOf(e.a);
        if ('fail' in a) return a;
        if (e.op === '-') return { d: -a.d };
        return a.d === 0 ? a : { fail: `${e.op} of a loop counter` };
      }
      case 'bin':
        return binShift(e, dOf, pH.params, param, (need) => (T = Math.max(T, need)));
    }
  };
  for (let round = 0; round < 3; round++) {
    for (let pc = 0; pc < code.length; pc++) {
      const ins = code[pc]!;
      if (!inBody(pc) || ins.i !== 'set' || !ins.src) continue;
      if (loops.some((l) => l.slot === ins.slot)) continue;
      const d = dOf(ins.src);
      if ('fail' in d) return { why: `role ${rc.name}: ${d.fail}`, loc: ins.loc };
      if (d.d !== 0) {
        if (guarded(pc)) return { why: `role ${rc.name}: a value computed from the loop counter is assigned under an if`, loc: ins.loc };
        const had = delta.get(ins.slot);
        if (had !== undefined && had !== d.d) return { why: `role ${rc.name}: ${rc.slots[ins.slot]} moves by different amounts per period`, loc: ins.loc };
        delta.set(ins.slot, d.d);
      }
    }
  }
  for (let pc = 0; pc < code.length; pc++) {
    const ins = code[pc]!;
    if (!inBody(pc)) continue;
    if (ins.i === 'set' && !ins.src) return { why: `role ${rc.name}: a loop with a step expression inside the trip loop`, loc: ins.loc };
    if (ins.i === 'set' && ins.src) {
      const d = dOf(ins.src);
      if ('fail' in d) return { why: `role ${rc.name}: ${d.fail}`, loc: ins.loc };
      if (d.d !== (delta.get(ins.slot) ?? 0)) return { why: `role ${rc.name}: ${rc.slots[ins.slot]} moves by different amounts per period`, loc: ins.loc };
    }
    if (ins.i === 'jz' && !heads.has(pc)) {
      if (!ins.src) return { why: `role ${rc.name}: a loop with a step expression inside the trip loop`, loc: ins.loc };
      const d = dOf(ins.src);
      if ('fail' in d) return { why: `role ${rc.name}: ${d.fail}`, loc: ins.loc };
      if (d.d !== 0) return { why: `role ${rc.name}: a condition that moves with the loop counter`, loc: ins.loc };
    }
    if (ins.i === 'op') {
      for (const e of operandExprs(ins.op)) {
        const d = dOf(e);
        if ('fail' in d) return { why: `role ${rc.name}: ${d.fail}`, loc: ins.loc };
        if (d.d !== 0) return { why: `role ${rc.name}: an operand of ${ins.op.op} moves with the loop counter (a different barrier, buffer or count each iteration)`, loc: ins.loc };
      }
      if (ins.dest !== undefined && delta.has(ins.dest)) return { why: `role ${rc.name}: ${rc.slots[ins.dest]} is both computed from the loop counter and written by ${ins.op.op}`, loc: ins.loc };
    }
  }
  return { delta, T };
}

/** Shift of a binary expression; `need(T)`: a comparison with a constant needs shifted values at least T. */
function binShift(e: Expr & { k: 'bin' }, dOf: (e: Expr) => D, params: Record<string, number>, param: string, need: (t: number) => void): D {
  const a = dOf(e.a);
  if ('fail' in a) return a;
  const b = dOf(e.b);
  if ('fail' in b) return b;
  const cA = constOf(e.a, params, param);
  const cB = constOf(e.b, params, param);
  switch (e.op) {
    case '+':
      return { d: a.d + b.d };
    case '-':
      return { d: a.d - b.d };
    case '*':
      if (a.d === 0 && b.d === 0) return { d: 0 };
      if (a.d === 0 && cA !== null && cA >= 0) return { d: cA * b.d };
      if (b.d === 0 && cB !== null && cB >= 0) return { d: cB * a.d };
      return { fail: 'a loop counter multiplied by something other than a constant' };
    case '%':
      if (a.d === 0 && b.d === 0) return { d: 0 };
      if (b.d === 0 && cB !== null && cB > 0 && a.d > 0 && a.d % cB === 0) {
        need(floor(e.a, params, param)); // a positive dividend (C's % takes the dividend's sign)
        return { d: 0 };
      }
      return { fail: 'a loop counter taken modulo something the period does not divide' };
    case '/':
      if (a.d === 0 && b.d === 0) return { d: 0 };
      if (b.d === 0 && cB !== null && cB > 0 && a.d > 0 && a.d % cB === 0) {
        need(floor(e.a, params, param));
        return { d: a.d / cB };
      }
      return { fail: 'a loop counter divided by something the period does not divide' };
    case '&':
    case '|':
    case '^':
      if (a.d === 0 && b.d === 0) return { d: 0 };
      if (e.op === '&' && b.d === 0 && cB !== null && cB >= 0 && isPow2(cB + 1) && a.d > 0 && a.d % (cB + 1) === 0) {
        need(floor(e.a, params, param));
        return { d: 0 };
      }
      return { fail: `a loop counter combined bitwise (${e.op})` };
    case '<<':
    case '>>':
      return a.d === 0 && b.d === 0 ? { d: 0 } : { fail: 'a loop counter shifted bitwise' };
    case '&&':
    case '||':
      return a.d === 0 && b.d === 0 ? { d: 0 } : { fail: 'a loop counter used as a truth value' };
    default: {
      // Comparisons.
      if (a.d === b.d) return { d: 0 };
      const c = a.d === 0 ? cA : b.d === 0 ? cB : null;
      if (c === null || (a.d !== 0 && b.d !== 0)) return { fail: 'a loop counter compared with a value that is neither a constant nor shifted with it' };
      if ((a.d === 0 ? b.d : a.d) < 0) return { fail: 'a comparison with a value that decreases with the loop counter' };
      // Past T the shifted side stays above the constant, whatever its own offsets and divisors.
      need(floor(a.d === 0 ? e.b : e.a, params, param, Math.abs(c)));
      return { d: 0 };
    }
  }
}

/**
 * A threshold for the counters (all at least it) that keeps the shifted expression `e` above
 * `above`: its constants summed (an offset such as `i - 5`), times the divisors on the way (`i / 2`).
 */
function floor(e: Expr, params: Record<string, number>, param: string, above = 0): number {
  const w = weight(e, params, param);
  return (above + w.abs + 1) * w.div;
}

/** The constants of an expression summed in absolute value, and the product of its divisors. */
function weight(e: Expr, params: Record<string, number>, param: string): { abs: number; div: number } {
  switch (e.k) {
    case 'num':
      return { abs: Math.abs(e.v), div: 1 };
    case 'var':
      return { abs: e.name !== param && Object.hasOwn(params, e.name) ? Math.abs(params[e.name]!) : 0, div: 1 };
    case 'un':
      return weight(e.a, params, param);
    case 'bin': {
      const a = weight(e.a, params, param);
      const b = weight(e.b, params, param);
      const cA = constOf(e.a, params, param);
      const cB = constOf(e.b, params, param);
      if (e.op === '*') return cA !== null ? { abs: Math.abs(cA) * b.abs, div: b.div } : cB !== null ? { abs: a.abs * Math.abs(cB), div: a.div } : { abs: a.abs + b.abs, div: Math.max(a.div, b.div) };
      if (e.op === '/' && cB !== null) return { abs: a.abs, div: a.div * Math.max(1, Math.abs(cB)) };
      if ((e.op === '%' || e.op === '&') && cB !== null) return { abs: Math.abs(cB), div: 1 };
      return { abs: a.abs + b.abs, div: Math.max(a.div, b.div) };
    }
  }
}

/** The value of `e` when it names only parameters other than `param` (and numbers), else null. */
export function constOf(e: Expr, params: Record<string, number>, param: string): number | null {
  switch (e.k) {
    case 'num':
      return e.v;
    case 'var':
      return e.name !== param && Object.hasOwn(params, e.name) ? params[e.name]! : null;
    case 'un': {
      const a = constOf(e.a, params, param);
      return a === null ? null : e.op === '-' ? -a : e.op === '!' ? (a ? 0 : 1) : ~a;
    }
    case 'bin': {
      const a = constOf(e.a, params, param);
      const b = constOf(e.b, params, param);
      if (a === null || b === null) return null;
      switch (e.op) {
        case '+': return a + b;
        case '-': return a - b;
        case '*': return a * b;
        case '/': return b === 0 ? null : Math.trunc(a / b);
        case '%': return b === 0 ? null : a % b;
        default: return null;
      }
    }
  }
}

/**
 * Adds the moduli a period must be a multiple of: m of `x % m`, 2d of `x / d`, m + 1 of `x & m`,
 * where x is not a constant (a byte count such as `TILE / 2` moves with no counter, and its divisor
 * would only lengthen the period: FA3's halves of a V stage made it 12 iterations at S = 3, not 6).
 * A shifted dividend whose divisor the period misses is still refused by {@link binShift}.
 */
function collectModuli(e: Expr, params: Record<string, number>, out: Set<number>): void {
  if (e.k === 'un') return collectModuli(e.a, params, out);
  if (e.k !== 'bin') return;
  collectModuli(e.a, params, out);
  collectModuli(e.b, params, out);
  const c = constOf(e.b, params, '');
  if (c === null || c <= 0 || c > 1 << 12 || constOf(e.a, params, '') !== null) return;
  if (e.op === '%') out.add(c);
  else if (e.op === '/') out.add(2 * c);
  else if (e.op === '&' && isPow2(c + 1)) out.add(c + 1);
}

const isPow2 = (x: number) => x > 0 && (x & (x - 1)) === 0;
const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));
const lcm = (a: number, b: number) => (a / gcd(a, b)) * b;
const locOf = (ins: Instr | undefined): SrcLoc | undefined => (ins && 'loc' in ins ? ins.loc : undefined);

/** Every expression of an instruction. */
function exprsOf(ins: Instr): Expr[] {
  if (ins.i === 'set' || ins.i === 'jz') return ins.src ? [ins.src] : [];
  if (ins.i === 'op') return operandExprs(ins.op);
  return [];
}
