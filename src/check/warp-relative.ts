/**
 * Warp-relative symmetry (docs/CHECK.md, "Warp-relative symmetry"): which warps of a role run as
 * written (the PTX front end's roles, `RoleDecl.asWritten`) are interchangeable although their
 * code reads the warp index (`%tid.x` is `32 · warp + lane`), and which frame slots a warp's record
 * hash may leave out because their value is known from its position or never read again.
 *
 * For each warp, a value-set propagation over the role's flat code (machine/compile-role.ts, each
 * `set` / `jz` with the IR expression `src` its closure computes) with the warp's builtins known:
 * at every position each frame slot holds one of at most {@link MAX_SET} values (one: known) or
 * any value (⊤). Every slot starts known (the machine's initial frame: the builtins, 0
 * elsewhere); an operation's `dest` / `token` becomes ⊤; a `jz` whose condition is non-zero on
 * every value (or zero on every value) follows one edge only, so branches on the warp index (and the
 * active-mask bookkeeping of lanes that differ by thread index) resolve per warp. A backward
 * liveness over the same code tells which slots may be read before they are written again (an
 * operation's `dest` / `token` never counts as a write there: stable.ts runs code forward without
 * writing them).
 *
 * Then each step is evaluated symbolically: from the last position where the warp rested (or the
 * last block entry) each slot is known, a *free* value `$j` (the slot's value there, when it is
 * unknown and live), or dead; a `set` substitutes its operands, so every value is an expression over
 * the free values. Such an expression is compared between warps by its *form*: its value when
 * known; its table of values over every combination of its free values' value sets (at most
 * {@link MAX_TABLE} rows: `buf[(stage · 16384 + 4 · tid − base) / 16384]` is the same table for
 * every consumer warp of `tma_pipeline.ptx` although the expression differs); or else its text.
 *
 * The warp's *signature* lists, in code order over the positions it can reach: at each block
 * entry, which slots are free; at each `set`, `K` when its value is known, which rows of its table
 * fault when it has one, else its text (the values of intermediate registers are not compared:
 * only where they are read); at each `jz`, the edge taken (or the condition's form); at each
 * operation, the forms of all its operands, the slots its record keeps (unknown and live, and its
 * own results) and the form of each of those whose value changed since the last rest; on each edge
 * into a block entry, the forms of the slots free at the entry whose value changed. Two warps with
 * equal signatures, in states whose records agree in the kept slots, take the same steps with the
 * same operand values and reach such records again: the record hash reads only the kept slots of
 * the warp's position ({@link WarpRelative.live}); a dead slot's value is never read again.
 *
 * No recursion: expressions are folded with an explicit stack (`foldExpr`), and a role with an
 * expression nested deeper than {@link MAX_EXPR_DEPTH} (or a symbolic value larger than
 * {@link MAX_NODES}) is not analysed at all, so the result does not depend on the thread's stack
 * size (the main thread and the parallel workers form the same groups). Deterministic: the
 * fixpoints are unique, and the signature is written in code order.
 */
import { exprDepth, opExprs, opOperands, type OperandKind } from './op-operands.js';
import type { Expr } from '../kernel/ir.js';
import { BUILTINS, type AgentInfo, type OpInstr, type Program, type RoleCode } from '../machine/program.js';
import { decide, evalSet, form, formTable, GiveUp, substitute, type FormTable, type Sym, type VSet } from './warp-values.js';
import { context, fixpoint, has, initialFrame } from './warp-flow.js';
import type { SlotFacts } from './dead-slots.js';

export { MAX_NODES, MAX_SET, MAX_TABLE } from './warp-values.js';
export { exprDepth, opExprs, opOperands, type OperandKind } from './op-operands.js';
export { MAX_FIXPOINT_VISITS, MAX_FIXPOINT_WORK } from './warp-flow.js';

/** Expressions nested deeper than this leave the role unanalysed (its warps get no relative symmetry). */
export const MAX_EXPR_DEPTH = 256;

/** What the analysis tells about one warp. */
export interface WarpRelative {
  /** Equal for two warps of one role instance and CTA when they are interchangeable (see the module comment). */
  sig: string;
  /**
   * Per pc where the warp can rest (an operation or `end`, reachable): the frame slots its record
   * keeps there (not known, and live or the operation's own result), ascending; undefined elsewhere.
   * The record hash reads only these slots.
   */
  live: (Int32Array | undefined)[];
  /**
   * Per pc where the warp can rest: its frame there with the known slots' values (NaN at the kept
   * ones, 0 at the dead ones); the stored encoding of a state keeps only the kept slots and restores
   * the others from this.
   */
  known: (number[] | undefined)[];
  /** Per pc where the warp can rest: the slots neither known nor live there (their value is never read again; restored as 0). */
  dead: (Int32Array | undefined)[];
  /** Per pc of a `jz` the warp reaches: bit 0 when it can fall through, bit 1 when it can jump (0 elsewhere). */
  taken: Uint8Array;
  /**
   * {@link sig} with the form of every operand that selects a CTA (a reference's `@cta`, a
   * multicast mask), a buffer element (a buffer reference's index) or a byte offset inside it (a
   * buffer reference's offset) replaced by `§i`, its index in {@link sels}: CTA symmetry
   * (cta-relative.ts) compares these as they are and the selectors through the CTA permutation
   * (and the permutation of buffer elements paired with it); the offsets as they are, their tables
   * bounding the byte ranges the references name (cta-elements.ts).
   */
  ctaSig: string;
  /** The selecting operands' values in code order: a known value or a table (`table` null where the form is text), and the form. */
  sels: { kind: Exclude<OperandKind, null>; table: FormTable | null; form: string }[];
}

/** Most known-slot entries (rest positions × slots, summed over the agents) warp-relative symmetry tabulates for one program. */
export const MAX_KNOWN_ENTRIES = 2 ** 24;

/** Positions where an agent of `rc` can rest (operations and `end`). */
export function restPositions(rc: RoleCode): number {
  let n = 0;
  for (const ins of rc.code) if (ins.i === 'op' || ins.i === 'end') n++;
  return n;
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
 * The warp-relative signature, kept and known slots of agent `a` of role `rc` (see the module
 * comment); null when the role's code is not analysed ({@link whyUnanalysable}, or too large).
 */
export function warpRelative(p: Program, rc: RoleCode, a: AgentInfo): WarpRelative | null {
  if (whyUnanalysable(rc) !== null) return null;
  try {
    return analyseWarp(p, rc, a);
  } catch (err) {
    if (err instanceof GiveUp) return null;
    throw err;
  }
}

function analyseWarp(p: Program, rc: RoleCode, a: AgentInfo): WarpRelative {
  const { c, live: liveIn } = context(p, rc);
  const at = fixpoint(c, initialFrame(p, rc, a));
  const out: string[] = [];
  const live: (Int32Array | undefined)[] = new Array(c.code.length);
  const known: (number[] | undefined)[] = new Array(c.code.length);
  const dead: (Int32Array | undefined)[] = new Array(c.code.length);
  const taken = new Uint8Array(c.code.length);
  const sels: WarpRelative['sels'] = [];
  /** Lines of the signature whose CTA-selecting operands ctaSig writes as `§i`. */
  const ctaLines = new Map<number, string>();
  const n = c.nslots;
  for (let pc0 = 0; pc0 < c.code.length; pc0++) {
    const entry = at[pc0];
    if (!entry) continue;
    const vals = entry.slice();
    const sym: Sym[] = new Array(n);
    const sets = new Map<string, VSet>();
    /** Starts a segment at `pc` (a block entry or a rest): known slots are values, live unknown ones free, the others dead. */
    const base = (pc: number, keep: ReadonlySet<number> = new Set()): number[] => {
      sets.clear();
      const free: number[] = [];
      for (let j = 0; j < n; j++) {
        const s = vals[j]!;
        if (s && s.length === 1) sym[j] = s[0]!;
        else if (has(liveIn[pc]!, j) || keep.has(j)) {
          sym[j] = { k: 'var', name: `$${j}` };
          sets.set(`$${j}`, s);
          free.push(j);
        } else sym[j] = { k: 'var', name: `†${j}` };
      }
      return free;
    };
    /** The forms of the slots of `slots` whose value is not their free value of the segment. */
    const changed = (slots: readonly number[]) => slots.filter((j) => !(typeof sym[j] === 'object' && (sym[j] as Expr).k === 'var' && (sym[j] as { name: string }).name === `$${j}`)).map((j) => `${j}=${form(sym[j]!, sets)}`).join(',');
    const edge = (from: number, to: number) => {
      const dst = at[to]!;
      const moved = [];
      for (let j = 0; j < n; j++) {
        const s = dst[j];
        if (!(s && s.length === 1) && has(liveIn[to]!, j)) moved.push(j);
      }
      const ch = changed(moved);
      if (ch) out.push(`${from}>${to}:${ch}`);
    };
    out.push(`L${pc0}:${base(pc0).join('.')}`);
    for (let pc = pc0; ;) {
      const ins = c.code[pc]!;
      if (ins.i === 'set') {
        const v = substitute(ins.src!, sym, c.slotOf, c.params);
        vals[ins.slot] = evalSet(ins.src!, vals, c.slotOf, c.params);
        const s = vals[ins.slot];
        // Not its values (compared where they are read), but which rows fault.
        out.push(`${pc}=${form(v, sets, false)}`);
        sym[ins.slot] = s && s.length === 1 ? s[0]! : v;
      } else if (ins.i === 'op' || ins.i === 'end') {
        const own = ins.i === 'op' ? [ins.dest, ins.token].filter((x): x is number => x !== undefined) : [];
        const operands = ins.i === 'op' ? opOperands((ins as OpInstr).op).map(([e, kind]) => [substitute(e, sym, c.slotOf, c.params), kind] as const) : [];
        const forms = operands.map(([v]) => form(v, sets));
        const ops = forms.join(',');
        const opsC = operands.some(([, kind]) => kind) ? operands.map(([v, kind], i) => (kind ? `§${sels.push({ kind, table: formTable(v, sets), form: forms[i]! }) - 1}` : forms[i]!)).join(',') : ops;
        const kept: number[] = [];
        const gone: number[] = [];
        const kn: number[] = new Array(n);
        for (let j = 0; j < n; j++) {
          const s = vals[j]!;
          const isOwn = own.includes(j);
          if (s && s.length === 1 && !isOwn) kn[j] = s[0]!;
          else if (has(liveIn[pc]!, j) || isOwn) { kept.push(j); kn[j] = NaN; }
          else { gone.push(j); kn[j] = 0; }
        }
        const tail = `@${kept.join('.')}:${changed(kept)}`;
        if (opsC !== ops) ctaLines.set(out.length, `${pc}!${opsC}${tail}`);
        out.push(`${pc}!${ops}${tail}`);
        live[pc] = Int32Array.from(kept);
        dead[pc] = Int32Array.from(gone);
        known[pc] = kn;
        if (ins.i === 'end') break;
        base(pc, new Set(own));
        for (const j of own) { vals[j] = null; sym[j] = { k: 'var', name: `$${j}` }; sets.set(`$${j}`, null); }
      } else if (ins.i === 'jmp') {
        edge(pc, ins.to);
        break;
      } else {
        const cond = evalSet(ins.src!, vals, c.slotOf, c.params);
        const t = decide(cond);
        taken[pc] = t;
        // The edge taken, or the condition's form; a decided condition may still fault on some rows.
        out.push(`${pc}?${t}:${form(substitute(ins.src!, sym, c.slotOf, c.params), sets, t === 3)}`);
        if (t & 1) edge(pc, pc + 1);
        if (t & 2) edge(pc, ins.to);
        break;
      }
      pc++;
      if (c.leader[pc]) {
        edge(pc - 1, pc);
        break;
      }
    }
  }
  const ctaSig = ctaLines.size ? out.map((l, i) => ctaLines.get(i) ?? l).join('\n') : out.join('\n');
  return { sig: out.join('\n'), live, known, dead, taken, ctaSig, sels };
}

/**
 * Where warp-relative facts `rel` (Analysis.rel, per agent) disagree with state `s` of `p`: an
 * agent resting at a position its analysis found unreachable, or a slot it calls known holding
 * another value; null when they agree. Checked on every state under `verifyHash` (tests): the stored
 * encoding restores those slots from the analysis (dead slots, never read again, are not compared;
 * with dead-slots.ts's facts, only the builtins are known).
 */
export function knownMismatch(p: Program, rel: readonly (SlotFacts | null)[], s: { agents: readonly { pc: number; frame: readonly number[] }[] }): string | null {
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
    const skip = new Set([...r.live[ag.pc]!, ...(r.dead?.[ag.pc] ?? [])]);
    const upTo = r.knownUpTo ?? kn.length;
    for (let j = 0; j < upTo; j++) if (!skip.has(j) && kn[j] !== ag.frame[j]) return `agent ${a} at pc ${ag.pc}: slot ${j} is ${ag.frame[j]}, the analysis says ${kn[j]}`;
  }
  return null;
}
