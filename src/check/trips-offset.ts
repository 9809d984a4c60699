/**
 * Trip-parameter offsets of the all-trip-counts check (trips.ts, docs/CHECK.md "Every trip
 * count"): role code may use the trip parameter K before its trip loops end in values such as
 * `i = t * K + k` (pingpong: `t` starts at the warpgroup index), as long as such values reach the
 * protocol only through what a move of K by a multiple of a modulus P leaves unchanged: `x % m`,
 * `(x / d) & 1` with m·den and 2d·den dividing P, comparisons of two values that move alike, and
 * comparisons with a constant once K is past a least value. Then the kernel with K = n and the
 * kernel with K = H + r (H a huge multiple of P, r = n mod P) take the same steps up to the first
 * end of a trip loop; their states differ only in the frame slots holding such values, by an
 * amount this module computes ({@link rebase}), so a state of the second is turned into the
 * first's exactly.
 *
 * A value's move is linear: when K moves by Δ (a multiple of P), `t * K` moves by t0·Δ, where t0
 * is the counter t's value (its start: t is the counter of an enclosing `for` loop, which does not
 * step before the first trip loop ends), and K by Δ; a value moves by (a·t0 + b)·Δ / den. The
 * counter t must not be negative (checked on every state of the first search, {@link negativeT}).
 */
import type { Expr, SrcLoc } from '../kernel/ir.js';
import type { Instr, Program } from '../machine/program.js';
import { mentions, operandExprs, type TripLoop } from './trips-loops.js';
import { constOf } from './trips-shift.js';
import { kWeight, mustAssigned, touchedFrom } from './trips-offset-flow.js';

/** A value's move when K moves by Δ (a multiple of P): (a·t0 + b)·Δ / den. */
export interface Form {
  a: number;
  b: number;
  den: number;
}

/** One role's offsets. */
export interface RoleOffset {
  /** The pcs the first search runs: below this (the end of the role's first trip loop; the code's length without one). */
  end: number;
  /** The counter whose value multiplies K (an enclosing loop's, starting at a value other than 0), or null. */
  t: { slot: number; head: number; end: number } | null;
  /** Slot → the move of the values assigned to it (moving ones only). */
  forms: Map<number, Form>;
  /** Per pc: the moving slots assigned on every path to it (those of `forms` the state holds). */
  assigned: (Set<number> | null)[];
  /** Per pc: 1 where a path from the role's start to it runs an instruction with a moving value (an agent there may have computed one). */
  touched: Uint8Array;
  /** The pcs whose instruction computes a moving value. */
  moving: Set<number>;
  /** Whether a value moves with K itself (not only with t * K): then it moves whatever t is. */
  direct: boolean;
}

/** Where K reaches the state before the first trip loop ends. */
export interface OffsetPlan {
  /** K matters only modulo P before the first trip-loop end (1: not at all). */
  P: number;
  /** The least K from which that holds (every comparison with a constant, every dividend non-negative). */
  min: number;
  roles: RoleOffset[];
}

/** Why the trip parameter's uses cannot be taken, with the place. */
export interface OffsetRefusal {
  why: string;
  loc?: SrcLoc;
}

const ZERO: Form = { a: 0, b: 0, den: 1 };
const isZero = (f: Form) => f.a === 0 && f.b === 0;
const gcd = (x: number, y: number): number => (y === 0 ? Math.abs(x) : gcd(y, x % y));
const lcm = (x: number, y: number) => (x / gcd(x, y)) * y;
const norm = (f: Form): Form => {
  if (isZero(f)) return ZERO;
  const g = gcd(gcd(Math.abs(f.a), Math.abs(f.b)), f.den);
  return { a: f.a / g, b: f.b / g, den: f.den / g };
};
const same = (x: Form, y: Form) => {
  const p = norm(x);
  const q = norm(y);
  return p.a === q.a && p.b === q.b && p.den === q.den;
};
const isPow2 = (x: number) => x > 0 && (x & (x - 1)) === 0;
const locOf = (ins: Instr | undefined): SrcLoc | undefined => (ins && 'loc' in ins ? ins.loc : undefined);

/** The most residues of K searched (one first search each). */
export const MAX_RESIDUES = 64;

/**
 * The offset plan of `p` (the kernel with any value of `param`), or why its uses of `param` cannot
 * be taken. `loops`: per role, the trip loops; `ends`: per role, the end of the first unguarded
 * trip loop (Infinity without one), from trips-scope.ts.
 */
export function offsetPlan(p: Program, param: string, loops: readonly (readonly TripLoop[])[], ends: readonly number[]): OffsetPlan | OffsetRefusal {
  const reqs: number[] = [];
  let min = 0;
  const roles: RoleOffset[] = [];
  for (let r = 0; r < p.roles.length; r++) {
    const res = roleOffset(p, r, param, loops[r]!, ends[r]!, reqs, (m) => (min = Math.max(min, m)));
    if ('why' in res) return res;
    roles.push(res);
  }
  let P = 1;
  for (const q of reqs) P = lcm(P, q);
  if (P > MAX_RESIDUES) return { why: `${param} is used modulo ${P} before its loops end: more than ${MAX_RESIDUES} residues to search` };
  return { P, min, roles };
}

function roleOffset(p: Program, r: number, param: string, loops: readonly TripLoop[], firstEnd: number, reqs: number[], need: (min: number) => void): RoleOffset | OffsetRefusal {
  const rc = p.roles[r]!;
  const code = rc.code;
  const end = Math.min(firstEnd, code.length);
  const used = (why: string, ins: Instr | undefined): OffsetRefusal => ({ why: `role ${rc.name}: ${param} is used here before its loops end (${why})`, loc: locOf(ins) });
  const heads = new Set(loops.map((l) => l.head));
  const first = loops.find((l) => l.end === firstEnd);
  // Counters of the `for` loops around the first trip loop: constant before it ends.
  const zeroOuter = new Set<number>();
  const outer = new Map<number, { head: number; end: number; from: Expr }>();
  if (first) {
    code.forEach((ins, j) => {
      if (ins.i !== 'jz' || !ins.loop || j >= first.head || ins.to < first.end) return;
      if (ins.loop.from.k === 'num' && ins.loop.from.v === 0) zeroOuter.add(ins.loop.slot);
      else outer.set(ins.loop.slot, { head: j, end: ins.to, from: ins.loop.from });
    });
  }
  // A counter is constant only where nothing but its loop's initialisation assigns it.
  for (let pc = 0; pc < end; pc++) {
    const ins = code[pc]!;
    if (ins.i !== 'set' && !(ins.i === 'op' && (ins.dest !== undefined || ins.token !== undefined))) continue;
    const slots = ins.i === 'set' ? [ins.slot] : [ins.dest, ins.token].filter((x): x is number => x !== undefined);
    for (const s of slots) {
      const init = ins.i === 'set' && code[pc + 1]?.i === 'jz' && (code[pc + 1] as { loop?: { slot: number } }).loop?.slot === s;
      if (init) continue;
      zeroOuter.delete(s);
      outer.delete(s);
    }
  }
  let tSlot = -1;
  let tPc = -1;
  const forms = new Map<number, Form>();
  let pcNow = 0;
  /** The move of `e` at pc `pcNow`, or why it cannot be placed. */
  const dOf = (e: Expr): Form | { fail: string } => {
    switch (e.k) {
      case 'num':
        return ZERO;
      case 'var': {
        if (e.name === param) return { a: 0, b: 1, den: 1 };
        const s = rc.slots.indexOf(e.name);
        return s < 0 ? ZERO : forms.get(s) ?? ZERO;
      }
      case 'un': {
        const a = dOf(e.a);
        if ('fail' in a || isZero(a)) return a;
        return e.op === '-' ? { a: -a.a, b: -a.b, den: a.den } : { fail: `${e.op} of a value that moves with ${param}` };
      }
      case 'bin':
        return binForm(e);
    }
  };
  const counterOf = (x: Expr): number => (x.k === 'var' ? rc.slots.indexOf(x.name) : -1);
  /** A value c·t + d that does not move with K (t: an enclosing loop's counter from a value other than 0, c and d constants), or null. */
  const tLinear = (x: Expr): { c: number; d: number } | { fail: string } | null => {
    const k = constOf(x, p.params, param);
    if (k !== null) return { c: 0, d: k };
    if (x.k === 'var') {
      const t = counterOf(x);
      if (zeroOuter.has(t)) return { c: 0, d: 0 }; // 0 until the trip loop inside its loop ends
      const o = outer.get(t);
      if (!o) return null;
      if (pcNow <= o.head || pcNow >= o.end) return { fail: `${rc.slots[t]} times ${param} outside ${rc.slots[t]}'s loop` };
      if (tSlot >= 0 && tSlot !== t) return { fail: `two counters, ${rc.slots[tSlot]} and ${rc.slots[t]}, multiply ${param}` };
      tSlot = t;
      tPc = pcNow;
      return { c: 1, d: 0 };
    }
    if (x.k === 'un' && x.op === '-') {
      const a = tLinear(x.a);
      return a && !('fail' in a) ? { c: -a.c, d: -a.d } : a;
    }
    if (x.k !== 'bin') return null;
    const a = tLinear(x.a);
    if (!a || 'fail' in a) return a;
    const b = tLinear(x.b);
    if (!b || 'fail' in b) return b;
    if (x.op === '+') return { c: a.c + b.c, d: a.d + b.d };
    if (x.op === '-') return { c: a.c - b.c, d: a.d - b.d };
    if (x.op === '*' && a.c === 0) return { c: a.d * b.c, d: a.d * b.d };
    if (x.op === '*' && b.c === 0) return { c: b.d * a.c, d: b.d * a.d };
    return null;
  };
  const binForm = (e: Expr & { k: 'bin' }): Form | { fail: string } => {
    const x = dOf(e.a);
    if ('fail' in x) return x;
    const y = dOf(e.b);
    if ('fail' in y) return y;
    if (isZero(x) && isZero(y)) return ZERO;
    const cA = constOf(e.a, p.params, param);
    const cB = constOf(e.b, p.params, param);
    switch (e.op) {
      case '+':
      case '-': {
        const den = lcm(x.den, y.den);
        const sg = e.op === '+' ? 1 : -1;
        return norm({ a: (x.a * den) / x.den + sg * ((y.a * den) / y.den), b: (x.b * den) / x.den + sg * ((y.b * den) / y.den), den });
      }
      case '*': {
        if (isZero(x) && cA !== null) return norm({ a: cA * y.a, b: cA * y.b, den: y.den });
        if (isZero(y) && cB !== null) return norm({ a: cB * x.a, b: cB * x.b, den: x.den });
        // K (times a constant) times c·t + d, t an enclosing loop's counter: (c·t0 + d)·b.
        const other = isZero(x) ? e.a : e.b;
        const f = isZero(x) ? y : x;
        const lin = f.a === 0 ? tLinear(other) : null;
        if (!lin || 'fail' in lin) return { fail: lin?.fail ?? `${param} times something other than a constant or an enclosing loop's counter` };
        return norm({ a: lin.c * f.b, b: lin.d * f.b, den: f.den });
      }
      case '%':
      case '/':
      case '&': {
        const m = e.op === '&' ? (cB !== null && cB >= 0 && isPow2(cB + 1) ? cB + 1 : null) : cB !== null && cB > 0 ? cB : null;
        if (m === null || !isZero(y)) return { fail: `a value that moves with ${param} under ${e.op} by something other than a positive constant${e.op === '&' ? ' 2^j - 1' : ''}` };
        if (x.a < 0 || x.b < 0) return { fail: `a value that decreases with ${param} under ${e.op}` };
        const w = kWeight(e.a, p.params, param);
        if (!w) return { fail: `a value that moves with ${param} less a variable, under ${e.op}` };
        need(w.abs * w.div); // a non-negative dividend
        reqs.push(m * x.den);
        return e.op === '/' ? norm({ a: x.a, b: x.b, den: x.den * m }) : ZERO;
      }
      case '|':
      case '^':
      case '<<':
      case '>>':
      case '&&':
      case '||':
        return { fail: `a value that moves with ${param} under ${e.op}` };
      default: {
        // Comparisons.
        if (same(x, y)) return ZERO;
        const c = isZero(x) ? cA : isZero(y) ? cB : null;
        if (c === null) return { fail: `a value that moves with ${param} compared with one that is neither a constant nor moves alike` };
        const f = isZero(x) ? y : x;
        if (f.a < 0 || f.b < 0) return { fail: `a comparison with a value that decreases with ${param}` };
        const w = kWeight(isZero(x) ? e.b : e.a, p.params, param);
        if (!w) return { fail: `a value that moves with ${param} less a variable, compared with a constant` };
        need((Math.abs(c) + w.abs + 1) * w.div);
        return ZERO;
      }
    }
  };
  // The forms of the assigned slots (a few rounds: a value computed from another).
  for (let round = 0; round < 4; round++) {
    for (let pc = 0; pc < end; pc++) {
      const ins = code[pc]!;
      if (ins.i !== 'set' || !ins.src) continue;
      pcNow = pc;
      const d = dOf(ins.src);
      if ('fail' in d) return used(d.fail, ins);
      if (!isZero(d)) {
        const had = forms.get(ins.slot);
        if (had && !same(had, d)) return used(`${rc.slots[ins.slot]} moves by different amounts with ${param}`, ins);
        forms.set(ins.slot, norm(d));
      }
    }
  }
  const moving = new Set<number>();
  let direct = false;
  /** Whether a subexpression of `e` moves with K (its value differs between residues). */
  const moves = (e: Expr): boolean => {
    const d = dOf(e);
    if ('fail' in d || d.b !== 0) direct = true;
    if ('fail' in d || !isZero(d)) return true;
    return e.k === 'bin' ? moves(e.a) || moves(e.b) : e.k === 'un' ? moves(e.a) : false;
  };
  const zeroE = (e: Expr | undefined, ins: Instr, what: string): OffsetRefusal | null => {
    if (!e) return null;
    if (moves(e)) moving.add(pcNow);
    const d = dOf(e);
    if ('fail' in d) return used(d.fail, ins);
    return isZero(d) ? null : used(`${what} moves with ${param}`, ins);
  };
  for (let pc = 0; pc < end; pc++) {
    const ins = code[pc]!;
    pcNow = pc;
    if (heads.has(pc)) continue; // a trip loop's test: its bound
    // The initialisation of a trip loop's counter: a value of the other parameters (trips-scope.ts).
    if (ins.i === 'set' && heads.has(pc + 1)) continue;
    if (ins.i === 'set') {
      if (ins.src && moves(ins.src)) moving.add(pc);
      const d = ins.src ? dOf(ins.src) : ZERO;
      if ('fail' in d) return used(d.fail, ins);
      const had = forms.get(ins.slot) ?? ZERO;
      if (!same(d, had)) return used(`${rc.slots[ins.slot]} moves by different amounts with ${param}`, ins);
    } else if (ins.i === 'jz') {
      const bad = zeroE(ins.src, ins, 'a condition') ?? (ins.loop ? zeroE(ins.loop.from, ins, 'a loop bound') ?? zeroE(ins.loop.to, ins, 'a loop bound') ?? zeroE(ins.loop.step, ins, 'a loop step') : null);
      if (bad) return bad;
      if (ins.loop && forms.has(ins.loop.slot) && !ins.src) return used(`a loop with a step over a value that moves with ${param}`, ins);
    } else if (ins.i === 'op') {
      for (const e of operandExprs(ins.op)) {
        const bad = zeroE(e, ins, `an operand of ${ins.op.op}`);
        if (bad) return bad;
      }
      for (const s of [ins.dest, ins.token]) if (s !== undefined && forms.has(s)) return used(`${rc.slots[s]} is both computed from ${param} and written by ${ins.op.op}`, ins);
    }
  }
  if (tSlot >= 0) {
    // The counter's start is a value of the other parameters and of values that do not move with K.
    const o = outer.get(tSlot)!;
    pcNow = o.head;
    const d = dOf(o.from);
    if ('fail' in d || !isZero(d) || mentions(o.from, param)) return used(`${rc.slots[tSlot]} starts at a value that moves with ${param}`, code[tPc]);
  }
  const assigned = mustAssigned(code, end, forms);
  if ('pc' in assigned) return used(`${rc.slots[assigned.slot]}, computed from ${param}, is assigned on some paths to here and not on others`, code[assigned.pc]);
  const t = tSlot >= 0 ? { slot: tSlot, head: outer.get(tSlot)!.head, end: outer.get(tSlot)!.end } : null;
  return { end, t, forms, assigned: assigned.at, touched: touchedFrom(code, end, moving), moving, direct };
}
