/**
 * The half-period shift of the all-trip-counts check (trips.ts, docs/CHECK.md "Half a period"):
 * where the period L of trips-shift.ts is twice a stage count only because a parity `(i / S) & 1`
 * repeats every 2S iterations, moving every counter back by L / 2 periods' worth of iterations
 * flips that parity, and moving the phase of each barrier it is waited on with back by one flips
 * the barrier's parity alike: the two states behave the same. {@link halfPlan} proves that from the
 * role code (or gives null); trips-normal.ts applies it in the visited-set key.
 */
import type { Expr } from '../kernel/ir.js';
import type { Instr, Program } from '../machine/program.js';
import { operandExprs, type TripLoop } from './trips-loops.js';
import { constOf, type ShiftPlan } from './trips-shift.js';

/** The half-period shift: per role, each shifted slot's move for half a period, and the barriers whose phases move by one with it. */
export interface HalfPlan {
  /** Per role: slot → its shift for half a period (exactly half of the full plan's). */
  delta: Map<number, number>[];
  /** Barrier keys whose phase moves back by one with each half period (every parity they are waited on with flips). */
  flip: Set<number>;
}

/** A value's move under the half shift: `d` added, and with `f` its low bit flipped (a parity). */
type H = { d: number; f: boolean } | null;

/**
 * The half-period plan of `pH` (the kernel with the huge trip count `param`) for the full plan
 * `plan`, or null when it cannot be proved. With every trip-loop counter moved by half its
 * period's shift and the trip count N by the matching ΔN (each trip loop is bounded by a · N + b
 * and moves by a · ΔN), the whole role code must read moving values only as the full plan allows
 * (`x % m` with m dividing the move, `x / d` with d dividing it, comparisons of values that move
 * alike) or as a parity `(x / d) & 1` whose move x / d is odd (optionally `^ c`), and such a flipping
 * parity only as the parity operand of `mbarrier.wait` on barrier arrays every other parity wait
 * on which also flips; those arrays' barriers are `flip`. Waits before a role's first trip loop are
 * not counted when that loop runs once per agent (every enclosing loop runs once): the key moves
 * no state with an agent there. Every assignment of a slot moves it alike, none under an `if`.
 */
export function halfPlan(pH: Program, param: string, loops: readonly (readonly TripLoop[])[], rates: readonly number[], plan: ShiftPlan): HalfPlan | null {
  if (plan.L % 2 !== 0) return null;
  let dN: number | null = null;
  for (let r = 0; r < pH.roles.length; r++) {
    for (const l of loops[r]!) {
      const head = pH.roles[r]!.code[l.head]!;
      if (head.i !== 'jz' || !head.loop) return null;
      const a = slopeOf(head.loop.to, pH.params, param);
      const move = (plan.L / 2) * (rates[r] || 1) * l.step;
      if (a === null || move % a !== 0 || (dN !== null && dN !== move / a)) return null;
      dN = move / a;
    }
  }
  if (dN === null) return null;
  const flipNames = new Set<string>();
  const fixedNames = new Set<string>();
  const delta: Map<number, number>[] = [];
  for (let r = 0; r < pH.roles.length; r++) {
    const d = roleHalf(pH, r, param, loops[r]!, dN, plan.T, plan.delta[r]!, flipNames, fixedNames);
    if (!d) return null;
    delta.push(d);
  }
  if (!flipNames.size || [...flipNames].some((n) => fixedNames.has(n))) return null;
  const flip = new Set<number>();
  for (let k = 0; k < pH.barriersPerCta * pH.ctas; k++) if (flipNames.has(pH.barrierOf(k).info.name)) flip.add(k);
  return { delta, flip };
}

/** The half shift of one role's slots (null: not provable), adding the barrier arrays its parity waits flip or keep. */
function roleHalf(pH: Program, r: number, param: string, loops: readonly TripLoop[], dN: number, T: number, full: Map<number, number>, flipNames: Set<string>, fixedNames: Set<string>): Map<number, number> | null {
  const rc = pH.roles[r]!;
  const code = rc.code;
  const delta = new Map<number, number>();
  const counters = new Set(loops.map((l) => l.slot));
  for (const [slot, d] of full) {
    if (d % 2 !== 0) return null;
    delta.set(slot, d / 2);
  }
  // A role without trip loops may be anywhere: each of its waits counts.
  const firstHead = loops.length ? Math.min(...loops.map((l) => l.head)) : -1;
  // Loops around a pc: heads of `for` loops whose body holds it.
  const enclosing = (pc: number) => code.flatMap((ins, j) => (ins.i === 'jz' && ins.loop && j < pc && pc < ins.to ? [j] : []));
  const pinned = pinnedSlots(pH, code, rc.slots, param);
  // Every trip loop runs once per agent: each loop around it is pinned.
  if (!loops.every((l) => enclosing(l.head).every((h) => pinned.has((code[h] as { loop: { slot: number } }).loop.slot)))) return null;
  const slotOf = (name: string) => rc.slots.indexOf(name);
  const cOf = (e: Expr): number | null => {
    if (e.k === 'var' && pinned.has(slotOf(e.name))) return pinned.get(slotOf(e.name))!;
    if (e.k === 'bin') {
      const a = cOf(e.a);
      const b = cOf(e.b);
      if (a !== null && b !== null) return constOf({ k: 'bin', op: e.op, a: { k: 'num', v: a }, b: { k: 'num', v: b } } as Expr, {}, param);
    }
    return constOf(e, pH.params, param);
  };
  // A moving dividend stays non-negative in both states: there every counter and N are at least T
  // (the key moves no counter below it, and N is above each counter), other variables non-negative.
  const lowOf = (v: string) => (v === param || delta.has(slotOf(v)) ? T : pinned.get(slotOf(v)) ?? (Object.hasOwn(pH.params, v) ? pH.params[v]! : 0));
  const low = (e: Expr) => (lowerBound(e, lowOf, (x) => (x.k === 'num' || (x.k === 'var' && x.name !== param && Object.hasOwn(pH.params, x.name)) ? cOf(x) : null)) ?? -1) >= 0;
  const hOf = (e: Expr): H => {
    switch (e.k) {
      case 'num':
        return { d: 0, f: false };
      case 'var': {
        if (e.name === param) return { d: dN, f: false };
        const s = slotOf(e.name);
        return { d: s < 0 || pinned.has(s) ? 0 : delta.get(s) ?? 0, f: false };
      }
      case 'un': {
        const a = hOf(e.a);
        if (!a || a.f) return null;
        if (e.op === '-') return { d: -a.d, f: false };
        return a.d === 0 ? a : null;
      }
      case 'bin':
        return binHalf(e, hOf, cOf, low);
    }
  };
  const guarded = (pc: number) => code.some((ins, j) => j < pc && ((ins.i === 'jz' && !ins.loop && pc < ins.to) || (ins.i === 'jmp' && ins.to > j && pc < ins.to)));
  for (let round = 0; round < 3; round++) {
    for (let pc = 0; pc < code.length; pc++) {
      const ins = code[pc]!;
      if (ins.i !== 'set' || !ins.src || counters.has(ins.slot) || pinned.has(ins.slot)) continue;
      const h = hOf(ins.src);
      if (!h || h.f) return null;
      if (h.d !== 0) {
        if (guarded(pc) && loops.some((l) => pc > l.head && pc < l.end)) return null;
        const had = delta.get(ins.slot);
        if (had !== undefined && had !== h.d) return null;
        delta.set(ins.slot, h.d);
      }
    }
  }
  const skip = (slot: number) => counters.has(slot) || pinned.has(slot);
  if (!usesHold(code, new Set(loops.map((l) => l.head)), firstHead, skip, delta, hOf, guarded, flipNames, fixedNames)) return null;
  for (const [slot, d] of full) if (delta.get(slot) !== d / 2) return null;
  for (const slot of delta.keys()) if (!full.has(slot)) return null;
  return delta;
}

/**
 * Whether every use of a moving value in `code` is one the half shift leaves alike (docs/CHECK.md,
 * "Half a period"): assignments move their slot by its `delta` (none under an `if`), conditions other
 * than the trip-loop heads `heads` and operands do not move, a flipping parity is only a wait's
 * parity operand; each parity wait from `firstHead` on adds its barrier array to `flipNames` or
 * `fixedNames`. `skip`: slots not checked (trip-loop counters, pinned counters).
 */
function usesHold(code: readonly Instr[], heads: ReadonlySet<number>, firstHead: number, skip: (slot: number) => boolean, delta: ReadonlyMap<number, number>, hOf: (e: Expr) => H, guarded: (pc: number) => boolean, flipNames: Set<string>, fixedNames: Set<string>): boolean {
  for (let pc = 0; pc < code.length; pc++) {
    const ins: Instr = code[pc]!;
    if (ins.i === 'set') {
      if (skip(ins.slot)) continue;
      if (!ins.src) return false;
      const h = hOf(ins.src);
      if (!h || h.f || h.d !== (delta.get(ins.slot) ?? 0)) return false;
      if (h.d !== 0 && guarded(pc)) return false;
    } else if (ins.i === 'jz' && !heads.has(pc)) {
      if (!ins.src) return false;
      const h = hOf(ins.src);
      if (!h || h.f || h.d !== 0) return false;
    } else if (ins.i === 'op') {
      const op = ins.op as { op: string; bar?: { name: string }; parity?: Expr };
      const parity = op.op === 'mbarrier.wait' ? op.parity : undefined;
      for (const e of operandExprs(ins.op)) {
        const h = hOf(e);
        if (!h) return false;
        if (e === parity) {
          if (h.d !== 0) return false;
          // A wait before the first trip loop is never met again by a state the key moves.
          if (pc < firstHead) continue;
          (h.f ? flipNames : fixedNames).add(op.bar!.name);
        } else if (h.f || h.d !== 0) return false;
      }
      if (ins.dest !== undefined && delta.has(ins.dest)) return false;
    }
  }
  return true;
}

/** The half shift of a binary expression (null: not provable). */
function binHalf(e: Expr & { k: 'bin' }, hOf: (e: Expr) => H, cOf: (e: Expr) => number | null, low: (e: Expr) => boolean): H {
  const a = hOf(e.a);
  const b = hOf(e.b);
  if (!a || !b) return null;
  const cB = cOf(e.b);
  const cA = cOf(e.a);
  if (e.op === '^' && !b.f && b.d === 0 && a.d === 0 && cB !== null) return a;
  if (a.f || b.f) return null;
  if ((e.op === '%' || e.op === '/' || e.op === '&') && a.d !== 0 && !low(e.a)) return null;
  switch (e.op) {
    case '+':
      return { d: a.d + b.d, f: false };
    case '-':
      return { d: a.d - b.d, f: false };
    case '*':
      if (a.d === 0 && b.d === 0) return a;
      if (a.d === 0 && cA !== null && cA >= 0) return { d: cA * b.d, f: false };
      if (b.d === 0 && cB !== null && cB >= 0) return { d: cB * a.d, f: false };
      return null;
    case '%':
      if (a.d === 0 && b.d === 0) return a;
      return b.d === 0 && cB !== null && cB > 0 && a.d > 0 && a.d % cB === 0 ? { d: 0, f: false } : null;
    case '/':
      if (a.d === 0 && b.d === 0) return a;
      return b.d === 0 && cB !== null && cB > 0 && a.d > 0 && a.d % cB === 0 ? { d: a.d / cB, f: false } : null;
    case '&':
      if (a.d === 0 && b.d === 0) return a;
      if (b.d !== 0 || cB === null || cB < 0 || a.d < 0 || !isPow2(cB + 1)) return null;
      if (a.d % (cB + 1) === 0) return { d: 0, f: false };
      return cB === 1 ? { d: 0, f: true } : null;
    case '|':
    case '^':
    case '<<':
    case '>>':
    case '&&':
    case '||':
      return a.d === 0 && b.d === 0 ? a : null;
    default:
      // Comparisons: of values that move alike.
      return a.d === b.d ? { d: 0, f: false } : null;
  }
}

/**
 * Counters of `for` loops that run at most once with constant bounds (FA3's tile loop with
 * TILES = 1), read only inside their body and assigned only by the loop: each is its start value there.
 */
function pinnedSlots(pH: Program, code: readonly Instr[], slots: readonly string[], param: string): Map<number, number> {
  const out = new Map<number, number>();
  code.forEach((ins, h) => {
    if (ins.i !== 'jz' || !ins.loop) return;
    const from = constOf(ins.loop.from, pH.params, param);
    const to = constOf(ins.loop.to, pH.params, param);
    const step = ins.loop.step ? constOf(ins.loop.step, pH.params, param) : 1;
    if (from === null || to === null || step === null || step <= 0 || to - from > step) return;
    const name = slots[ins.loop.slot]!;
    const readOutside = code.some((x, pc) => (pc < h || pc >= ins.to) && x.i !== 'jmp' && x.i !== 'end' && readsName(x, name, ins.loop!.slot));
    // Set by its loop's start and step only (no other loop of that name, no assignment in the body).
    const sets = code.filter((x) => x.i === 'set' && x.slot === ins.loop!.slot).length;
    if (!readOutside && sets === 2) out.set(ins.loop.slot, from);
  });
  return out;
}

/** Whether instruction `x` reads variable `name` (other than its own loop's increment of slot `slot`). */
function readsName(x: Instr, name: string, slot: number): boolean {
  const exprs = x.i === 'op' ? operandExprs(x.op) : x.i === 'set' || x.i === 'jz' ? (x.src ? [x.src] : []) : [];
  if (x.i === 'set' && x.slot === slot) return false;
  return exprs.some((e) => mentionsName(e, name));
}

/** Whether expression `e` names `name`. */
function mentionsName(e: Expr, name: string): boolean {
  if (e.k === 'var') return e.name === name;
  if (e.k === 'un') return mentionsName(e.a, name);
  if (e.k === 'bin') return mentionsName(e.a, name) || mentionsName(e.b, name);
  return false;
}

/**
 * A lower bound of `e` given a lower bound of each name (`low`), or null where none is known
 * (a difference with a variable, a product with a negative factor, another operator).
 */
function lowerBound(e: Expr, low: (name: string) => number, exact: (e: Expr) => number | null): number | null {
  switch (e.k) {
    case 'num':
      return e.v;
    case 'var':
      return low(e.name);
    case 'un':
      return null;
    case 'bin': {
      const a = lowerBound(e.a, low, exact);
      const b = lowerBound(e.b, low, exact);
      if (a === null || b === null) return null;
      switch (e.op) {
        case '+':
          return a + b;
        case '-':
          return exact(e.b) !== null ? a - b : null;
        case '*':
          return a >= 0 && b >= 0 ? a * b : null;
        case '/':
          return a >= 0 && exact(e.b) !== null && b > 0 ? Math.floor(a / b) : null;
        case '%':
        case '&':
          return a >= 0 && b >= 0 ? 0 : null;
        default:
          return null;
      }
    }
  }
}

/** The slope a of a bound a · N + b (parameters only), or null. */
function slopeOf(to: Expr, params: Record<string, number>, param: string): number | null {
  const at = (n: number) => constOf(to, { ...params, [param]: n }, '');
  const h = 2 ** 30;
  const t1 = at(h);
  const t2 = at(2 * h);
  if (t1 === null || t2 === null) return null;
  const a = (t2 - t1) / h;
  return Number.isInteger(a) && a >= 1 ? a : null;
}

const isPow2 = (x: number) => x > 0 && (x & (x - 1)) === 0;
