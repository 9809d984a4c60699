/**
 * The control-flow and value-bound facts the trip-parameter offsets (trips-offset.ts) rest on: which
 * moving slots are assigned on every path before the first trip loop ends, which pcs a moving value
 * can reach, and a bound on an expression's value past a least K.
 */
import type { Expr } from '../kernel/ir.js';
import type { Instr } from '../machine/program.js';
import type { Form } from './trips-offset.js';
import { constOf } from './trips-shift.js';

/** The successors of `pc` in `code` below `end` (edges into pcs at or past `end` dropped). */
function successors(code: readonly Instr[], end: number, pc: number): number[] {
  const ins = code[pc]!;
  const out = ins.i === 'jmp' ? [ins.to] : ins.i === 'jz' ? [pc + 1, ins.to] : ins.i === 'end' ? [] : [pc + 1];
  return out.filter((x) => x < end && x < code.length);
}

/**
 * Per pc below `end`: the slots of `forms` assigned on every path from the role's start (edges
 * into pcs at or past `end` dropped: the first search never runs them); at every operation (where
 * an agent stops) those assigned on some path must be assigned on all, else the place.
 */
export function mustAssigned(code: readonly Instr[], end: number, forms: Map<number, Form>): { at: (Set<number> | null)[] } | { pc: number; slot: number } {
  const slots = [...forms.keys()];
  const must: (Set<number> | null)[] = new Array(code.length).fill(null);
  const may: (Set<number> | null)[] = new Array(code.length).fill(null);
  if (!slots.length) return { at: must };
  const succ = (pc: number): number[] => successors(code, end, pc);
  must[0] = new Set();
  may[0] = new Set();
  const work = [0];
  while (work.length) {
    const pc = work.pop()!;
    const ins = code[pc]!;
    const mu = new Set(must[pc]!);
    const ma = new Set(may[pc]!);
    if (ins.i === 'set' && forms.has(ins.slot)) {
      mu.add(ins.slot);
      ma.add(ins.slot);
    }
    for (const q of succ(pc)) {
      let changed = false;
      if (must[q] === null) {
        must[q] = new Set(mu);
        may[q] = new Set(ma);
        changed = true;
      } else {
        for (const s of [...must[q]!]) if (!mu.has(s)) {
          must[q]!.delete(s);
          changed = true;
        }
        for (const s of ma) if (!may[q]!.has(s)) {
          may[q]!.add(s);
          changed = true;
        }
      }
      if (changed) work.push(q);
    }
  }
  for (let pc = 0; pc < Math.min(end, code.length); pc++) {
    if (must[pc] === null || (code[pc]!.i !== 'op' && code[pc]!.i !== 'end')) continue;
    for (const s of may[pc]!) if (!must[pc]!.has(s)) return { pc, slot: s };
  }
  return { at: must };
}

/** Per pc: 1 where a path of at least one step from a pc of `moving` reaches it (edges into pcs at or past `end` dropped). */
export function touchedFrom(code: readonly Instr[], end: number, moving: Set<number>): Uint8Array {
  const out = new Uint8Array(code.length);
  const work: number[] = [];
  const succ = (pc: number): number[] => successors(code, end, pc);
  for (const m of moving) work.push(...succ(m));
  while (work.length) {
    const pc = work.pop()!;
    if (out[pc]) continue;
    out[pc] = 1;
    work.push(...succ(pc));
  }
  return out;
}

/**
 * A bound for the value of `e` past a least K (`floor` of trips-shift.ts for K): its constants
 * summed in absolute value, times its divisors; null where the value could fall as a variable
 * grows (a variable subtracted, a negative factor). Variables other than K count as non-negative.
 */
export function kWeight(e: Expr, params: Record<string, number>, param: string): { abs: number; div: number } | null {
  switch (e.k) {
    case 'num':
      return { abs: Math.abs(e.v), div: 1 };
    case 'var':
      return { abs: e.name !== param && Object.hasOwn(params, e.name) ? Math.abs(params[e.name]!) : 0, div: 1 };
    case 'un': {
      const c = constOf(e, params, param);
      return c === null ? null : { abs: Math.abs(c), div: 1 };
    }
    case 'bin': {
      const cA = constOf(e.a, params, param);
      const cB = constOf(e.b, params, param);
      if (cA !== null && cB !== null) return { abs: Math.abs(constOf(e, params, param) ?? 0), div: 1 };
      const a = kWeight(e.a, params, param);
      const b = kWeight(e.b, params, param);
      switch (e.op) {
        case '+':
          return a && b ? { abs: a.abs + b.abs, div: Math.max(a.div, b.div) } : null;
        case '-':
          return a && cB !== null ? { abs: a.abs + Math.abs(cB), div: a.div } : null;
        case '*':
          if (cA !== null) return cA > 0 && b ? { abs: cA * b.abs, div: b.div } : null;
          if (cB !== null) return cB > 0 && a ? { abs: a.abs * cB, div: a.div } : null;
          return a && b ? { abs: a.abs + b.abs, div: Math.max(a.div, b.div) } : null;
        case '/':
          return a && cB !== null && cB > 0 ? { abs: a.abs, div: a.div * cB } : null;
        case '%':
        case '&':
          return cB !== null && cB >= 0 ? { abs: 0, div: 1 } : null;
        default:
          return null;
      }
    }
  }
}
