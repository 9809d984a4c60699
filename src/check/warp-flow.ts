/**
 * The flow facts of a role's flat code that warp-relative symmetry (warp-relative.ts) reads: the
 * slot table and block entries of the role (`context`, shared by its warps), a backward liveness
 * of frame slots (`liveness`: which slots may be read before a `set` writes them again), and the
 * forward value-set fixpoint of one warp from its initial frame (`fixpoint`, `initialFrame`), each
 * slot one of at most MAX_SET values or any value. Bounded: a fixpoint past
 * {@link MAX_FIXPOINT_VISITS} block visits or {@link MAX_FIXPOINT_WORK} work throws `GiveUp`, and the
 * role's warps get no relative symmetry (sound).
 */
import { foldExpr } from '../kernel/expr.js';
import { opExprs } from './op-operands.js';
import type { Expr } from '../kernel/ir.js';
import { BUILTINS, type AgentInfo, type Instr, type Program, type RoleCode } from '../machine/program.js';
import { decide, evalSet, GiveUp, toSet, type VSet } from './warp-values.js';

/**
 * Most block visits of one warp's value-set fixpoint: beyond it the role is left unanalysed (no
 * relative symmetry for its warps, which is sound). The fixtures need at most about 100; a loop
 * over lane-varying counters (32 slots per register, each set growing one value per pass up to
 * MAX_SET) under an outer loop took 125,000 visits and 20 s per warp.
 */
export const MAX_FIXPOINT_VISITS = 5_000;

/**
 * Most block visits times frame slots (each visit copies and joins the whole frame) of one warp's
 * fixpoint: a large role gives up sooner. The reference kernels' analyses take at most about
 * 230,000 (`hw/kernels/tcgen05.ptx`); a consumer warp reading a tile at lane-varying addresses
 * under a tile loop (976 slots) gave up only at 5,000 visits, 1-2 s per warp, in a search of 18 states.
 */
export const MAX_FIXPOINT_WORK = 1 << 20;

// ---------------------------------------------------------------------------------------------
// Liveness

/** Slot sets as bitsets ({@link has} tests slot `j`). */
export type Bits = Uint32Array;
/** Whether slot `j` is in `b`. */
export const has = (b: Bits, j: number) => ((b[j >> 5]! >>> (j & 31)) & 1) === 1;

/**
 * Per pc: the slots that may be read from there on before a `set` writes them (live on entry to
 * the instruction). Operations read their operands, `dest` and `token` and write nothing here.
 */
export function liveness(code: readonly Instr[], slotOf: ReadonlyMap<string, number>, nslots: number): Bits[] {
  const words = (nslots + 31) >> 5;
  const reads = (es: Expr[], extra: (number | undefined)[] = []) => {
    const m = new Uint32Array(words);
    for (const e of es) foldExpr<0>(e, (x) => {
      if (x.k === 'var') { const s = slotOf.get(x.name); if (s !== undefined) m[s >> 5]! |= 1 << (s & 31); }
      return 0;
    }, () => 0);
    for (const s of extra) if (s !== undefined) m[s >> 5]! |= 1 << (s & 31);
    return m;
  };
  const gen = code.map((ins) => (ins.i === 'set' || ins.i === 'jz' ? reads([ins.src!]) : ins.i === 'op' ? reads(opExprs(ins.op), [ins.dest, ins.token]) : new Uint32Array(words)));
  const live = code.map(() => new Uint32Array(words));
  for (let changed = true; changed;) {
    changed = false;
    for (let pc = code.length - 1; pc >= 0; pc--) {
      const ins = code[pc]!;
      const succ = ins.i === 'end' ? [] : ins.i === 'jmp' ? [ins.to] : ins.i === 'jz' ? [pc + 1, ins.to] : [pc + 1];
      const out = new Uint32Array(words);
      for (const q of succ) { const l = live[q]; if (l) for (let w = 0; w < words; w++) out[w]! |= l[w]!; }
      if (ins.i === 'set') out[ins.slot >> 5]! &= ~(1 << (ins.slot & 31));
      const cur = live[pc]!;
      for (let w = 0; w < words; w++) {
        const x = (out[w]! | gen[pc]![w]!) >>> 0;
        if (x !== cur[w]) { cur[w] = x; changed = true; }
      }
    }
  }
  return live;
}

// ---------------------------------------------------------------------------------------------
// The analysis

/** The role's code with its slot table, for warp-relative.ts `warpRelative`. */
export interface Ctx {
  code: readonly Instr[];
  slotOf: Map<string, number>;
  params: Readonly<Record<string, number>>;
  leader: Uint8Array;
  nslots: number;
}

/** The block entries' value sets at the fixpoint (null: not reachable). */
export function fixpoint(c: Ctx, init: VSet[]): (VSet[] | null)[] {
  const at: (VSet[] | null)[] = new Array(c.code.length).fill(null);
  const todo: number[] = [0];
  const queued = new Uint8Array(c.code.length);
  at[0] = init;
  queued[0] = 1;
  const edge = (to: number, env: VSet[]) => {
    const cur = at[to];
    let changed = false;
    if (!cur) {
      at[to] = env.slice();
      changed = true;
    } else {
      for (let j = 0; j < env.length; j++) {
        const x = cur[j];
        if (x === null) continue;
        const y = env[j]!;
        if (y === null) { cur[j] = null; changed = true; continue; }
        if (y.every((z) => x.includes(z))) continue;
        cur[j] = toSet([...x, ...y]);
        changed = true;
      }
    }
    if (changed && !queued[to]) {
      queued[to] = 1;
      todo.push(to);
    }
  };
  let visits = 0;
  while (todo.length) {
    if (++visits > MAX_FIXPOINT_VISITS || visits * c.nslots > MAX_FIXPOINT_WORK) throw new GiveUp();
    const pc0 = todo.pop()!;
    queued[pc0] = 0;
    const env = at[pc0]!.slice();
    for (let pc = pc0; ;) {
      const ins = c.code[pc]!;
      if (ins.i === 'set') env[ins.slot] = evalSet(ins.src!, env, c.slotOf, c.params);
      else if (ins.i === 'op') {
        if (ins.dest !== undefined) env[ins.dest] = null;
        if (ins.token !== undefined) env[ins.token] = null;
      } else if (ins.i === 'end') break;
      else if (ins.i === 'jmp') { edge(ins.to, env); break; }
      else {
        const t = decide(evalSet(ins.src!, env, c.slotOf, c.params));
        if (t & 1) edge(pc + 1, env);
        if (t & 2) edge(ins.to, env);
        break;
      }
      pc++;
      if (c.leader[pc]) { edge(pc, env); break; }
    }
  }
  return at;
}

/** Per role: the slot table, block entries and liveness (shared by its warps). */
const contexts = new WeakMap<RoleCode, { c: Ctx; live: Bits[] }>();
export function context(p: Program, rc: RoleCode): { c: Ctx; live: Bits[] } {
  const hit = contexts.get(rc);
  if (hit && hit.c.params === p.params) return hit;
  const slotOf = new Map<string, number>();
  rc.slots.forEach((n, i) => slotOf.set(n, i));
  const leader = new Uint8Array(rc.code.length + 1);
  leader[0] = 1;
  rc.code.forEach((ins, pc) => {
    if (ins.i === 'jmp' || ins.i === 'jz') {
      leader[ins.to] = 1;
      leader[pc + 1] = 1;
    }
  });
  const c: Ctx = { code: rc.code, slotOf, params: p.params, leader, nslots: rc.slots.length };
  const out = { c, live: liveness(rc.code, slotOf, rc.slots.length) };
  contexts.set(rc, out);
  return out;
}

/** The machine's initial frame of agent `a` (machine.ts `initial`: the builtins, then 0). */
export function initialFrame(p: Program, rc: RoleCode, a: AgentInfo): VSet[] {
  const f: VSet[] = new Array(rc.slots.length).fill(null).map(() => [0]);
  const b: Record<(typeof BUILTINS)[number], number> = {
    cta: a.rank, instance: a.instance, ncta: p.clusterSize, clusterid: a.cluster, nthreads: rc.threads, nwarps: rc.warps, warp: a.warp, warpgroup: a.warp >> 2,
  };
  BUILTINS.forEach((n, i) => (f[i] = [b[n]]));
  return f;
}
