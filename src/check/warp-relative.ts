/**
 * Warp-relative symmetry (docs/CHECK.md, "Warp-relative symmetry"): which warps of a role run as
 * written (the PTX front end's roles, `RoleDecl.asWritten`) are interchangeable although their
 * code reads the warp index (`%tid.x` is `32 · warp + lane`), and which frame slots a warp's record
 * hash may leave out because their value is known from its position.
 *
 * For each warp, a constant propagation over the role's flat code (machine/compile-role.ts, each
 * `set` / `jz` with the IR expression `src` its closure computes) with the warp's builtins known:
 * at every position each frame slot is a known integer or unknown (⊤). Every slot starts known
 * (the machine's initial frame: the builtins, 0 elsewhere); an operation's `dest` / `token`
 * becomes unknown; a `jz` whose condition is known follows one edge only, so branches on the warp
 * index (and the active-mask bookkeeping of lanes that differ by thread index) resolve per warp.
 * Then each expression is evaluated partially (known slots substituted, closed subterms computed
 * with the kernel's one arithmetic) into a known value or a residual text over unknown slots.
 *
 * The warp's *signature* lists, in code order over the positions it can reach: at each block
 * entry, which slots are known; at each `set`, the residual (or `K` when known); at each `jz`, the
 * edge taken (or the residual); at each operation, the residuals of all its operands and which
 * slots are known where it rests; on each edge into a block entry, the values of the slots known
 * on the edge but unknown at the entry (their values flow on). Two warps with equal signatures,
 * in states whose records agree in everything but the known slots, take the same steps with the
 * same operand values and reach such records again: the record hash reads only the unknown slots
 * of the warp's position ({@link WarpRelative.live}).
 *
 * No recursion: expressions are folded with an explicit stack (`foldExpr`), and a role with an
 * expression nested deeper than {@link MAX_EXPR_DEPTH} is not analysed at all, so the result does
 * not depend on the thread's stack size (the main thread and the parallel workers form the same
 * groups). Deterministic: the fixpoint is unique, and the signature is written in code order.
 */
import { evalExpr, EvalFault, foldExpr } from '../kernel/expr.js';
import type { Expr } from '../kernel/ir.js';
import { BUILTINS, type AgentInfo, type Instr, type OpInstr, type Program, type RoleCode } from '../machine/program.js';

/** Expressions nested deeper than this leave the role unanalysed (its warps get no relative symmetry). */
export const MAX_EXPR_DEPTH = 256;

/** What the analysis tells about one warp. */
export interface WarpRelative {
  /** Equal for two warps of one role instance and CTA when they are interchangeable (see the module comment). */
  sig: string;
  /**
   * Per pc where the warp can rest (an operation or `end`, reachable): the frame slots whose value
   * is not known there, ascending; undefined elsewhere. The record hash reads only these slots.
   */
  live: (Int32Array | undefined)[];
  /**
   * Per pc where the warp can rest: its frame there with the known slots' values (NaN at the live
   * ones); the stored encoding of a state keeps only the live slots and restores the others from this.
   */
  known: (number[] | undefined)[];
  /** Per pc of a `jz` the warp reaches: bit 0 when it can fall through, bit 1 when it can jump (0 elsewhere). */
  taken: Uint8Array;
}

/** Most known-slot entries (rest positions × slots, summed over the agents) warp-relative symmetry tabulates for one program. */
export const MAX_KNOWN_ENTRIES = 2 ** 24;

/** Positions where an agent of `rc` can rest (operations and `end`). */
export function restPositions(rc: RoleCode): number {
  let n = 0;
  for (const ins of rc.code) if (ins.i === 'op' || ins.i === 'end') n++;
  return n;
}

/** A partial value: a known integer, or the residual expression's text over unknown slots (`$slot`). */
type Val = number | string;

const isExpr = (e: unknown): e is Expr => {
  const k = (e as { k?: unknown } | null | undefined)?.k;
  return k === 'num' || k === 'var' || k === 'bin' || k === 'un';
};

/** Nesting depth of `e` (a number or variable is 1), computed without recursion. */
export function exprDepth(e: Expr): number {
  return foldExpr(e, () => 1, (_x, a, b) => 1 + Math.max(a, b ?? 0));
}

/** The expressions an operation reads (its operands, references' indices, CTAs and offsets), in field order, without recursion. */
export function opExprs(op: object): Expr[] {
  const out: Expr[] = [];
  const todo: unknown[] = [op];
  while (todo.length) {
    const v = todo.pop();
    if (!v || typeof v !== 'object') continue;
    if (isExpr(v)) out.push(v);
    else if (Array.isArray(v)) for (let i = v.length - 1; i >= 0; i--) todo.push(v[i]);
    else { const xs = Object.values(v); for (let i = xs.length - 1; i >= 0; i--) todo.push(xs[i]); }
  }
  return out;
}

/**
 * Why the code of `rc` is not analysed, or null: a `set` / `jz` without its expression (a `for`
 * with a step), a builtin assigned, or an expression nested deeper than {@link MAX_EXPR_DEPTH}.
 */
export function whyUnanalysable(rc: RoleCode): string | null {
  const deep = (e: Expr) => exprDepth(e) > MAX_EXPR_DEPTH;
  for (const ins of rc.code) {
    if (ins.i === 'set' || ins.i === 'jz') {
      if (!ins.src) return 'a loop with a step';
      if (ins.i === 'set' && ins.slot < BUILTINS.length) return 'a builtin is assigned';
      if (deep(ins.src)) return `an expression nested more than ${MAX_EXPR_DEPTH} levels`;
    } else if (ins.i === 'op') {
      if ((ins.dest ?? BUILTINS.length) < BUILTINS.length || (ins.token ?? BUILTINS.length) < BUILTINS.length) return 'a builtin is assigned';
      if (opExprs(ins.op).some(deep)) return `an expression nested more than ${MAX_EXPR_DEPTH} levels`;
    }
  }
  return null;
}

/**
 * The value of `e`, an operator applied to known operands, with the machine's arithmetic
 * (`evalExpr`); where it faults (`EvalFault`), a residual of its own naming the operation.
 */
function closed(e: Expr, text: () => string): Val {
  try {
    return evalExpr(e, () => undefined);
  } catch (err) {
    if (err instanceof EvalFault) return `!F(${text()})`;
    throw err;
  }
}

const num = (v: number): Expr => ({ k: 'num', v });

/**
 * Partial evaluation of `e` in `env` (NaN: unknown): a known integer, or the residual's text. `&&`
 * and `||` short-circuit as compiled (a known left operand decides without the right one).
 */
export function partial(e: Expr, env: Float64Array, slotOf: ReadonlyMap<string, number>, params: Readonly<Record<string, number>>): Val {
  return foldExpr<Val>(e, (x) => {
    if (x.k === 'num') return x.v;
    const s = slotOf.get(x.name);
    if (s === undefined) return Object.hasOwn(params, x.name) ? params[x.name]! : `?${x.name}`;
    const v = env[s]!;
    return Number.isNaN(v) ? `$${s}` : v;
  }, (x, a, b) => {
    if (x.k === 'un') return typeof a === 'number' ? closed({ k: 'un', op: x.op, a: num(a) }, () => `${x.op} ${a}`) : `(${x.op} ${a})`;
    if ((x.op === '&&' || x.op === '||') && typeof a === 'number') {
      if ((x.op === '&&') === (a === 0)) return x.op === '&&' ? 0 : 1;
      return typeof b === 'number' ? (b ? 1 : 0) : `(${x.op} ${a ? 1 : 0} ${b})`;
    }
    if (typeof a === 'number' && typeof b === 'number') return closed({ k: 'bin', op: x.op, a: num(a), b: num(b) }, () => `${x.op} ${a} ${b}`);
    return `(${x.op} ${a} ${b})`;
  });
}

/** The known slots of `env` as a hex bitmask (bit j: slot j known). */
function knownMask(env: Float64Array): string {
  let s = '';
  for (let j = 0; j < env.length; j += 4) {
    let d = 0;
    for (let k = 0; k < 4 && j + k < env.length; k++) if (!Number.isNaN(env[j + k]!)) d |= 1 << k;
    s += d.toString(16);
  }
  return s;
}

/** The unknown slots of `env` where an agent rests at `ins` (an operation's own results included: a pick writes them while it rests). */
function liveSlots(env: Float64Array, ins: Instr): Int32Array {
  const out: number[] = [];
  for (let j = 0; j < env.length; j++) if (Number.isNaN(env[j]!) || (ins.i === 'op' && (j === ins.dest || j === ins.token))) out.push(j);
  return Int32Array.from(out);
}

/** The role's code with its slot table, for {@link warpRelative}. */
interface Ctx {
  code: readonly Instr[];
  slotOf: Map<string, number>;
  params: Readonly<Record<string, number>>;
  leader: Uint8Array;
}

/** Observer of one block's walk (the second pass). */
interface Visit {
  set(pc: number, v: Val): void;
  jz(pc: number, v: Val): void;
  rest(pc: number, env: Float64Array): void;
  edge(from: number, to: number, env: Float64Array): void;
}

/** Walks the block from `pc` on `env` (mutated) to its end; `edge` gets each edge out of it. */
function walkBlock(c: Ctx, start: number, env: Float64Array, edge: (from: number, to: number, env: Float64Array) => void, visit?: Visit): void {
  for (let pc = start; ;) {
    const ins = c.code[pc]!;
    if (ins.i === 'set') {
      const v = partial(ins.src!, env, c.slotOf, c.params);
      visit?.set(pc, v);
      env[ins.slot] = typeof v === 'number' ? v : NaN;
    } else if (ins.i === 'op') {
      visit?.rest(pc, env);
      if (ins.dest !== undefined) env[ins.dest] = NaN;
      if (ins.token !== undefined) env[ins.token] = NaN;
    } else if (ins.i === 'end') {
      visit?.rest(pc, env);
      return;
    } else if (ins.i === 'jmp') {
      edge(pc, ins.to, env);
      return;
    } else {
      const v = partial(ins.src!, env, c.slotOf, c.params);
      visit?.jz(pc, v);
      if (typeof v === 'number') edge(pc, v ? pc + 1 : ins.to, env);
      else {
        edge(pc, pc + 1, env);
        edge(pc, ins.to, env);
      }
      return;
    }
    pc++;
    if (c.leader[pc]) {
      edge(pc - 1, pc, env);
      return;
    }
  }
}

/** The block entries' environments at the fixpoint (null: not reachable). */
function fixpoint(c: Ctx, init: Float64Array): (Float64Array | null)[] {
  const at: (Float64Array | null)[] = new Array(c.code.length).fill(null);
  const todo: number[] = [0];
  const queued = new Uint8Array(c.code.length);
  at[0] = init;
  queued[0] = 1;
  const edge = (_from: number, to: number, env: Float64Array) => {
    const cur = at[to];
    let changed = false;
    if (!cur) {
      at[to] = env.slice();
      changed = true;
    } else {
      for (let j = 0; j < env.length; j++) {
        const x = cur[j]!;
        if (!Number.isNaN(x) && x !== env[j]) {
          cur[j] = NaN;
          changed = true;
        }
      }
    }
    if (changed && !queued[to]) {
      queued[to] = 1;
      todo.push(to);
    }
  };
  while (todo.length) {
    const pc = todo.pop()!;
    queued[pc] = 0;
    walkBlock(c, pc, at[pc]!.slice(), edge);
  }
  return at;
}

/** Per role: the slot table and block entries (shared by its warps). */
function context(p: Program, rc: RoleCode): Ctx {
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
  return { code: rc.code, slotOf, params: p.params, leader };
}

/** The machine's initial frame of agent `a` (machine.ts `initial`: the builtins, then 0). */
function initialFrame(p: Program, rc: RoleCode, a: AgentInfo): Float64Array {
  const f = new Float64Array(rc.slots.length);
  const b: Record<(typeof BUILTINS)[number], number> = {
    cta: a.rank, instance: a.instance, ncta: p.clusterSize, clusterid: a.cluster, nthreads: rc.threads, nwarps: rc.warps, warp: a.warp, warpgroup: a.warp >> 2,
  };
  BUILTINS.forEach((n, i) => (f[i] = b[n]));
  return f;
}

/**
 * The warp-relative signature and live slots of agent `a` of role `rc` (see the module comment);
 * null when the role's code is not analysed ({@link whyUnanalysable}).
 */
export function warpRelative(p: Program, rc: RoleCode, a: AgentInfo): WarpRelative | null {
  if (whyUnanalysable(rc) !== null) return null;
  const c = context(p, rc);
  const at = fixpoint(c, initialFrame(p, rc, a));
  const out: string[] = [];
  const live: (Int32Array | undefined)[] = new Array(c.code.length);
  const known: (number[] | undefined)[] = new Array(c.code.length);
  const taken = new Uint8Array(c.code.length);
  const visit: Visit = {
    set: (pc, v) => out.push(typeof v === 'number' ? `${pc}=K` : `${pc}=${v}`),
    jz: (pc, v) => {
      taken[pc] = typeof v === 'number' ? (v ? 1 : 2) : 3;
      out.push(typeof v === 'number' ? `${pc}?${v ? 1 : 0}` : `${pc}?${v}`);
    },
    rest: (pc, env) => {
      const ins = c.code[pc]!;
      const ops = ins.i === 'op' ? opExprs((ins as OpInstr).op).map((e) => partial(e, env, c.slotOf, c.params)).join(',') : '';
      out.push(`${pc}!${ops}@${knownMask(env)}`);
      live[pc] = liveSlots(env, ins);
      known[pc] = Array.from(env);
    },
    edge: (from, to, env) => {
      const dst = at[to]!;
      for (let j = 0; j < env.length; j++) if (!Number.isNaN(env[j]!) && Number.isNaN(dst[j]!)) out.push(`${from}>${to}:${j}=${env[j]}`);
    },
  };
  for (let pc = 0; pc < c.code.length; pc++) {
    const env = at[pc];
    if (!env) continue;
    out.push(`L${pc}:${knownMask(env)}`);
    walkBlock(c, pc, env.slice(), visit.edge, visit);
  }
  return { sig: out.join('\n'), live, known, taken };
}

/**
 * Where warp-relative facts `rel` (Analysis.rel, per agent) disagree with state `s` of `p`: an
 * agent resting at a position its analysis found unreachable, or a slot it calls known holding
 * another value; null when they agree. Checked on every state under `verifyHash` (tests): the stored
 * encoding restores those slots from the analysis.
 */
export function knownMismatch(p: Program, rel: readonly (Pick<WarpRelative, 'live' | 'known'> | null)[], s: { agents: readonly { pc: number; frame: readonly number[] }[] }): string | null {
  for (let a = 0; a < s.agents.length; a++) {
    const r = rel[a];
    if (!r) continue;
    const ag = s.agents[a]!;
    const ins = p.roles[p.agents[a]!.role]!.code[ag.pc]!;
    const kn = r.known[ag.pc];
    if (!kn) {
      if (ins.i === 'op' || ins.i === 'end') return `agent ${a} rests at pc ${ag.pc}, which the warp-relative analysis found unreachable`;
      continue;
    }
    const live = new Set(r.live[ag.pc]!);
    for (let j = 0; j < kn.length; j++) if (!live.has(j) && kn[j] !== ag.frame[j]) return `agent ${a} at pc ${ag.pc}: slot ${j} is ${ag.frame[j]}, the analysis says ${kn[j]}`;
  }
  return null;
}
