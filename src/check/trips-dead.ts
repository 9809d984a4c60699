/**
 * Which mbarrier keys an agent may still wait on, under every trip count (the all-trip-counts check,
 * trips.ts): the key of its first search forgets the phase a waiter last observed on a barrier it
 * never waits on again (trips-normal.ts), so that such an entry (FlashAttention-3's second
 * warpgroup, which waits on the K stages only at a tile's first block) does not hold its barrier's
 * relative phase until it falls far behind.
 *
 * The agent's code is run abstractly from its position: every variable is a known value or unknown;
 * a `jz` whose condition is known takes its one branch, an unknown one both; the trip parameter,
 * the trip-loop counters, the values shifted with them (trips-shift.ts), anything computed from
 * those and every operation's result are unknown from the start, so the answer holds for the
 * kernel with the huge trip count and for every count a state of its first search goes on with.
 * A wait whose barrier index (or CTA) is unknown may wait on every barrier of its array (or of the
 * cluster). Joins at a pc keep the values all paths agree on; each pc's values only lose
 * knowledge, so the run ends.
 */
import type { Expr, BarRef } from '../kernel/ir.js';
import { evalExpr } from '../kernel/expr.js';
import type { MachineState } from '../machine/machine.js';
import type { Program } from '../machine/program.js';
import { mentions, type TripLoop } from './trips-loops.js';
import type { ShiftPlan } from './trips-shift.js';

/** Most cached positions per agent (distinct pc and known values); past it an answer is computed each time. */
const CACHE_MAX = 4096;

/** An unknown value in the abstract run. */
const UNKNOWN = undefined;
type Val = number | undefined;

/** Thrown by a variable lookup that finds an unknown value (caught by {@link WaitReach}). */
class Unknown extends Error {}

/**
 * The barrier keys agents of `p` (the kernel with the huge trip count `param`) may still wait on
 * (`mbarrier.wait`, parity or token), from their position in a state, under any trip count.
 */
export class WaitReach {
  /** Per role: the slots whose values are unknown at the start of a run (see the module comment). */
  private readonly unknownAtStart: Uint8Array[];
  /** Per role: slot index by name. */
  private readonly slotIx: Map<string, number>[];
  /** Per agent: position key → the keys it may still wait on. */
  private readonly cache: Map<string, Set<number>>[];

  constructor(private readonly p: Program, private readonly param: string, loops: readonly (readonly TripLoop[])[], plan: ShiftPlan) {
    this.unknownAtStart = p.roles.map((rc, r) => tainted(rc.code, rc.slots.length, param, loops[r]!, plan.delta[r]!, rc.slots));
    this.slotIx = p.roles.map((rc) => new Map(rc.slots.map((n, i) => [n, i])));
    this.cache = p.agents.map(() => new Map());
  }

  /** Whether agent `a` of `s` can never again execute a wait on barrier key `bar`. */
  neverWaits(s: MachineState, a: number, bar: number): boolean {
    const ag = s.agents[a]!;
    if (ag.status !== 'run') return true;
    const unk = this.unknownAtStart[this.p.agents[a]!.role]!;
    let key = String(ag.pc);
    for (let j = 0; j < ag.frame.length; j++) if (!unk[j]) key += `,${ag.frame[j]}`;
    const c = this.cache[a]!;
    let keys = c.get(key);
    if (!keys) {
      keys = this.run(a, ag.pc, ag.frame.map((v, j) => (unk[j] ? UNKNOWN : v)));
      if (c.size < CACHE_MAX) c.set(key, keys);
    }
    return !keys.has(bar);
  }

  /** The abstract run of agent `a` from `pc0` with values `f0`: every barrier key a wait may name. */
  private run(a: number, pc0: number, f0: Val[]): Set<number> {
    const code = this.p.roles[this.p.agents[a]!.role]!.code;
    const out = new Set<number>();
    const at: (Val[] | null)[] = new Array(code.length).fill(null);
    const todo: number[] = [];
    const visit = (pc: number, f: Val[]) => {
      if (pc < 0 || pc >= code.length) return;
      const had = at[pc];
      if (!had) {
        at[pc] = f;
        todo.push(pc);
        return;
      }
      let changed = false;
      for (let j = 0; j < had.length; j++) {
        if (had[j] !== UNKNOWN && had[j] !== f[j]) {
          had[j] = UNKNOWN;
          changed = true;
        }
      }
      if (changed) todo.push(pc);
    };
    visit(pc0, f0);
    while (todo.length) {
      const pc = todo.pop()!;
      const f = at[pc]!;
      const ins = code[pc]!;
      switch (ins.i) {
        case 'end':
          break;
        case 'jmp':
          visit(ins.to, f.slice());
          break;
        case 'jz': {
          const c = ins.src ? this.value(a, ins.src, f) : UNKNOWN;
          if (c === UNKNOWN || c !== 0) visit(pc + 1, f.slice());
          if (c === UNKNOWN || c === 0) visit(ins.to, f.slice());
          break;
        }
        case 'set': {
          const g = f.slice();
          g[ins.slot] = ins.src ? this.value(a, ins.src, f) : UNKNOWN;
          visit(pc + 1, g);
          break;
        }
        case 'op': {
          if (ins.op.op === 'exit') break;
          if (ins.op.op === 'mbarrier.wait') for (const k of this.refKeys(a, ins.op.bar, f)) out.add(k);
          const g = f.slice();
          if (ins.dest !== undefined) g[ins.dest] = UNKNOWN;
          if (ins.token !== undefined && ins.op.op === 'mbarrier.arrive') g[ins.token] = UNKNOWN;
          visit(pc + 1, g);
          break;
        }
      }
    }
    return out;
  }

  /** The value of `e` under `f` for agent `a`, or unknown (an unknown variable, the trip parameter, a fault). */
  private value(a: number, e: Expr, f: Val[]): Val {
    const ix = this.slotIx[this.p.agents[a]!.role]!;
    try {
      return evalExpr(e, (n) => {
        const j = ix.get(n);
        if (j !== undefined) {
          const v = f[j];
          if (v === UNKNOWN) throw new Unknown();
          return v;
        }
        if (n === this.param) throw new Unknown();
        return this.p.params[n];
      });
    } catch {
      return UNKNOWN;
    }
  }

  /** Every key `ref` may name for agent `a` under `f`: known parts resolved, unknown ones widened. */
  private refKeys(a: number, ref: BarRef, f: Val[]): number[] {
    const p = this.p;
    const info = p.barriers.find((b) => b.name === ref.name);
    if (!info) return [];
    const me = p.agents[a]!;
    const base = me.cluster * p.clusterSize;
    const idx = this.value(a, ref.index, f);
    const rank = ref.cta ? this.value(a, ref.cta, f) : me.cta - base;
    const ranks = rank === UNKNOWN ? Array.from({ length: p.clusterSize }, (_, i) => i) : [rank];
    const idxs = idx === UNKNOWN ? Array.from({ length: info.length }, (_, i) => i) : [idx];
    const keys: number[] = [];
    for (const c of ranks) for (const i of idxs) if (c >= 0 && c < p.clusterSize && i >= 0 && i < info.length) keys.push((base + c) * p.barriersPerCta + info.offset + i);
    return keys;
  }
}

/**
 * The slots of one role whose values a run starts without: the trip-loop counters, the slots the
 * period shifts, every operation's result (`dest`, an arrive's token), a `set` with no one
 * expression, and (to a fixpoint) every slot set from an expression naming the trip parameter or
 * such a slot. 1 marks one.
 */
function tainted(code: readonly Program['roles'][number]['code'][number][], n: number, param: string, loops: readonly TripLoop[], delta: ReadonlyMap<number, number>, slots: readonly string[]): Uint8Array {
  const t = new Uint8Array(n);
  for (const l of loops) t[l.slot] = 1;
  for (const s of delta.keys()) t[s] = 1;
  for (const ins of code) {
    if (ins.i === 'set' && !ins.src) t[ins.slot] = 1;
    if (ins.i === 'op') {
      if (ins.dest !== undefined) t[ins.dest] = 1;
      if (ins.token !== undefined && ins.op.op === 'mbarrier.arrive') t[ins.token] = 1;
    }
  }
  const names = (e: Expr) => mentions(e, param) || slots.some((name, j) => t[j] === 1 && mentions(e, name));
  for (let changed = true; changed;) {
    changed = false;
    for (const ins of code) {
      if (ins.i === 'set' && ins.src && !t[ins.slot] && names(ins.src)) {
        t[ins.slot] = 1;
        changed = true;
      }
    }
  }
  return t;
}
