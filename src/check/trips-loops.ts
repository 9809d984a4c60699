/**
 * The trip loops of the all-trip-counts check (trips.ts): the `for` loops whose bounds name the
 * trip parameter, which steps may leave one (an agent's step runs its operation and then the
 * control flow up to its next operation), and which trip counts a state is consistent with (every
 * agent inside a trip loop entered its body under that trip count).
 */
import type { MachineState } from '../machine/machine.js';
import type { Expr } from '../kernel/ir.js';
import type { Instr, Program } from '../machine/program.js';

/** A `for` loop whose bounds name the trip parameter: its head (the `jz`), the end of its body, its counter slot and its step (1 when none). */
export interface TripLoop {
  head: number;
  end: number;
  slot: number;
  step: number;
}

/** Whether expression `e` names variable or parameter `name`. */
export function mentions(e: Expr | undefined, name: string): boolean {
  if (!e) return false;
  switch (e.k) {
    case 'num':
      return false;
    case 'var':
      return e.name === name;
    case 'un':
      return mentions(e.a, name);
    case 'bin':
      return mentions(e.a, name) || mentions(e.b, name);
  }
}

/** The trip loops of role code `code` (`param`: the trip parameter; `params`: the values of the others, for steps). */
export function tripLoopsOf(code: readonly Instr[], param: string, evalParam: (e: Expr) => number | null): TripLoop[] {
  const loops: TripLoop[] = [];
  code.forEach((ins, pc) => {
    if (ins.i !== 'jz' || !ins.loop) return;
    if (!mentions(ins.loop.to, param) && !mentions(ins.loop.from, param)) return;
    const step = ins.loop.step ? evalParam(ins.loop.step) : 1;
    loops.push({ head: pc, end: ins.to, slot: ins.loop.slot, step: step === null ? 0 : step });
  });
  return loops;
}

/**
 * Per pc of `code`: whether the control flow after the operation at that pc (up to the next
 * operation or the end) may pass the head of one of `loops`: the agent's step from there may leave
 * a trip loop (or enter one), so the step is one where the trip count can make a difference.
 */
export function crossesTripHead(code: readonly Instr[], loops: readonly TripLoop[]): Uint8Array {
  const heads = new Set(loops.map((l) => l.head));
  const out = new Uint8Array(code.length);
  /** Whether control flow starting at `pc` reaches a trip-loop head before an operation. */
  const memo = new Int8Array(code.length).fill(-1);
  const reach = (pc: number, seen: Set<number>): boolean => {
    if (pc < 0 || pc >= code.length) return false;
    if (memo[pc]! >= 0) return memo[pc] === 1;
    if (seen.has(pc)) return false;
    seen.add(pc);
    const ins = code[pc]!;
    let r: boolean;
    if (heads.has(pc)) r = true;
    else if (ins.i === 'op' || ins.i === 'end') r = false;
    else if (ins.i === 'jmp') r = reach(ins.to, seen);
    else if (ins.i === 'jz') r = reach(pc + 1, seen) || reach(ins.to, seen);
    else r = reach(pc + 1, seen);
    memo[pc] = r ? 1 : 0;
    return r;
  };
  for (let pc = 0; pc < code.length; pc++) if (code[pc]!.i === 'op') out[pc] = reach(pc + 1, new Set()) ? 1 : 0;
  return out;
}

/**
 * Whether agent `a`'s next step in `s` can end (or skip) its trip loop under program `pn`: it may
 * pass a trip loop's head (`crosses`), and either it is inside no trip loop yet, or its counter
 * one step on fails the loop's test under `pn`. Over-approximates: a step that stays in an inner
 * loop counts as one that may reach the head.
 */
export function mayEndLoop(pn: Program, s: MachineState, a: number, loops: readonly (readonly TripLoop[])[], crosses: readonly Uint8Array[]): boolean {
  const ag = s.agents[a]!;
  const role = pn.agents[a]!.role;
  if (ag.status !== 'run' || crosses[role]![ag.pc] !== 1) return false;
  const l = loops[role]!.find((x) => ag.pc > x.head && ag.pc < x.end);
  if (!l) return true;
  const head = pn.roles[role]!.code[l.head]!;
  if (head.i !== 'jz') return true;
  const f = ag.frame.slice();
  f[l.slot] = f[l.slot]! + l.step;
  return head.e(f) === 0;
}

/**
 * The least trip count from `n0` that state `s` is consistent with ({@link consistentWith}), by
 * bisection (consistency grows with the trip count for loops bounded by a·N + b, a > 0), or -1.
 */
export function leastConsistent(at: (n: number) => Program, s: MachineState, loops: readonly (readonly TripLoop[])[], n0: number): number {
  let top = n0;
  for (let a = 0; a < s.agents.length; a++) {
    const ls = loops[at(n0).agents[a]!.role]!;
    for (const l of ls) top = Math.max(top, Math.abs(s.agents[a]!.frame[l.slot]!) + 2);
  }
  if (consistentWith(at(n0), s, loops)) return n0;
  let hi = top;
  while (!consistentWith(at(hi), s, loops)) {
    if (hi > 4 * top + 64) return -1;
    hi *= 2;
  }
  let lo = n0;
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (consistentWith(at(mid), s, loops)) hi = mid;
    else lo = mid;
  }
  return hi;
}

/**
 * Whether state `s` is one that program `pn` (the kernel with one trip count) reaches by the same
 * steps that the kernel with the huge trip count took: every agent (running or trapped) inside the body of a
 * trip loop passes that loop's test under `pn` with its current counter. `loops`: per role.
 */
export function consistentWith(pn: Program, s: MachineState, loops: readonly (readonly TripLoop[])[]): boolean {
  for (let a = 0; a < s.agents.length; a++) {
    const ag = s.agents[a]!;
    // A trapped agent stopped where it was: its counters still say which trips it entered.
    if (ag.status === 'done') continue;
    const role = pn.agents[a]!.role;
    const code = pn.roles[role]!.code;
    for (const l of loops[role]!) {
      if (ag.pc <= l.head || ag.pc >= l.end) continue;
      const head = code[l.head]!;
      if (head.i !== 'jz' || head.e(ag.frame) === 0) return false;
    }
  }
  return true;
}

/** The expressions among an operation's fields (its operands and the indices of its references). */
export function operandExprs(op: object): Expr[] {
  const out: Expr[] = [];
  const visit = (v: unknown) => {
    if (!v || typeof v !== 'object') return;
    if (Array.isArray(v)) return v.forEach(visit);
    const o = v as Record<string, unknown>;
    if (typeof o.k === 'string' && ['num', 'var', 'bin', 'un'].includes(o.k)) {
      out.push(o as unknown as Expr);
      return;
    }
    for (const [k, x] of Object.entries(o)) if (k !== 'loc' && k !== 'op') visit(x);
  };
  visit(op);
  return out;
}
