/**
 * The asynchronous copies beyond TMA and cluster launch control, mapped onto the machine's
 * operations (machine/ops/cpasync.ts, stasync.ts, clc.ts): Ampere `cp.async` (PTX ISA
 * §9.7.9.25.3: `.ca` / `.cg` copies, `commit_group`, `wait_group`, `wait_all`) and
 * `cp.async.mbarrier.arrive{.noinc}` (§9.7.13.15.15); `st.async` / `red.async` (§9.7.9.12,
 * §9.7.13.7) into a peer CTA's shared memory with complete_tx on its barrier;
 * `clusterlaunchcontrol.try_cancel` / `query_cancel` (§9.7.13.17, §9.7.13.18).
 */
import type { Expr, Op, RedOp, RedType, SrcLoc, Stmt } from '../kernel/ir.js';
import { RED_OPS, RED_SECTION, redTypeProblem, type RedForm } from '../kernel/reduction.js';
import { KernelError } from '../machine/program.js';
import { cpAsyncSizeProblem } from '../kernel/op-limits.js';
import type { Operand } from '../ptx/ast.js';
import { destsOf } from './analysis.js';
import { assign, bin, counted, num, NotModelled, once, v, value, type Lane } from './emit.js';
import type { FlatIns } from './flat.js';
import type { InsEnv } from './insn.js';

/** Bytes of one element of a PTX type qualifier (`b32` → 4), or undefined. */
function typeBytes(mods: string[]): number {
  const t = [...mods].reverse().find((x) => /^[bsuf](8|16|32|64|128)$/.test(x));
  const vec = mods.find((x) => /^v[248]$/.test(x));
  return (t ? Number(t.slice(1)) / 8 : 4) * (vec ? Number(vec.slice(1)) : 1);
}

/** `cp.async.{ca,cg}`, its groups and `cp.async.mbarrier.arrive` (the non-bulk forms of `cp.async`). */
export function cpAsyncStmts(env: InsEnv, it: FlatIns, loc: SrcLoc, divergent: boolean, guard: Expr | undefined): Stmt[] {
  const ins = it.ins;
  const m = ins.mods;
  const ops = ins.operands;
  const lead = (o: Operand): Expr => value(env, it, o, 'lead');
  if (m[1] === 'commit_group') return once({ op: 'cp.async.commit_group' }, loc, divergent, guard);
  if (m[1] === 'wait_group') return once({ op: 'cp.async.wait_group', n: lead(ops[0]!), all: false }, loc, divergent, guard);
  if (m[1] === 'wait_all') return once({ op: 'cp.async.wait_group', n: num(0), all: true }, loc, divergent, guard);
  if (m[1] === 'mbarrier') {
    if (m[2] !== 'arrive') throw new NotModelled(ins.opcode);
    const bar = env.bar(it, ops[0]!);
    const noinc = m.includes('noinc');
    return counted((per) => ({ op: 'cp.async.mbarrier.arrive', bar, noinc, per }), ins.opcode, loc, divergent, guard);
  }
  if (m[1] === 'ca' || m[1] === 'cg') {
    // Each lane copies cp-size bytes: one copy of the warp, as many bytes as its active lanes copy.
    const dst = env.buf(it, ops[0]!);
    const size = lead(ops[2]!);
    // cp-size is an immediate of 4, 8 or 16 (the kernel layer's rule, op-limits.ts).
    const why = size.k === 'num' ? cpAsyncSizeProblem(size.v) : null;
    if (why) throw new KernelError(`${ins.opcode}: ${why}`, loc, 'cp-size');
    const lanes = divergent || guard ? v('%cnt') : num(32);
    return once({ op: 'cp.async', dst, bytes: bin('*', size, lanes), lanes: true }, loc, divergent, guard);
  }
  throw new NotModelled(ins.opcode);
}

/** `st.async` / `red.async` `[remote], value, [remote_bar]` (the bytes: the type's width). */
export function stAsyncStmts(env: InsEnv, it: FlatIns, loc: SrcLoc, divergent: boolean, guard: Expr | undefined): Stmt[] {
  const ins = it.ins;
  const ops = ins.operands;
  if (!ins.mods.some((x) => x.startsWith('mbarrier::complete_tx'))) throw new NotModelled(ins.opcode);
  const red = ins.base === 'red';
  const fields = red ? reduction(it, 'red.async', loc) : {};
  const dst = env.buf(it, ops[0]!);
  const bar = env.bar(it, ops[2]!);
  const bytes = num(typeBytes(ins.mods));
  return counted((per) => ({ op: 'st.async', red, dst, bytes, bar, ...fields, per }), ins.opcode, loc, divergent, guard);
}

/**
 * The operator and element type of a reduction (`red.async….add.u32`, PTX ISA §9.7.13.7;
 * `cp.reduce.async.bulk….add.noftz.f16`, §9.7.9.25.4.2; the tensor form's operator only,
 * §9.7.9.27.1.3), checked against kernel/reduction.ts's table: a missing type or one the operator
 * does not take is a {@link KernelError} at the type in the opcode (ptxas refuses it too).
 */
export function reduction(it: FlatIns, form: RedForm, loc: SrcLoc): { redop?: RedOp; redType?: RedType } {
  const ins = it.ins;
  const i = ins.mods.findIndex((x) => (RED_OPS as readonly string[]).includes(x));
  if (i < 0) return {};
  const redop = ins.mods[i] as RedOp;
  if (form === 'cp.reduce.async.bulk.tensor') return { redop };
  const noftz = ins.mods[i + 1] === 'noftz';
  const t = i + (noftz ? 2 : 1);
  const type = ins.mods[t];
  // Columns of modifier k in the opcode as written (its words are adjacent: `red.async.….add.u32`).
  const colOf = (k: number) => (ins.opcodeCol ?? ins.pos.col) + ins.base.length + ins.mods.slice(0, k).reduce((n, w) => n + 1 + w.length, 0);
  const at = (k: number): SrcLoc => ({ ...loc, col: colOf(k), endCol: colOf(k) + 1 + ins.mods[k]!.length });
  if (type === undefined) throw new KernelError(`${ins.opcode}: the reduction needs an element type after .${redop}${noftz ? '.noftz' : ''} (PTX ISA ${RED_SECTION[form]})`, at(t - 1), 'ptx-reduction');
  const problem = t !== ins.mods.length - 1 ? `${form}.${ins.mods.slice(i).join('.')}: one type follows the operator (PTX ISA ${RED_SECTION[form]})` : redTypeProblem(form, redop, type, noftz);
  if (problem) throw new KernelError(problem, at(t), 'ptx-reduction');
  return { redop, redType: type as RedType };
}

/** `clusterlaunchcontrol.try_cancel` and `query_cancel` (the response read back with `ld.shared.b128`). */
export function clcStmts(env: InsEnv, it: FlatIns, loc: SrcLoc, divergent: boolean, guard: Expr | undefined): Stmt[] {
  const ins = it.ins;
  const ops = ins.operands;
  if (ins.mods[0] === 'try_cancel') {
    const op: Op = { op: 'clc.try_cancel', dst: env.buf(it, ops[0]!), bar: env.bar(it, ops[1]!), multicast: ins.mods.some((x) => x.startsWith('multicast')) };
    return once(op, loc, divergent, guard);
  }
  if (ins.mods[0] !== 'query_cancel') throw new NotModelled(ins.opcode);
  const what = ins.mods[1] === 'is_canceled' ? 'is_canceled' as const : ins.mods[1] === 'get_first_ctaid' ? 'first_ctaid' as const : undefined;
  if (!what) throw new NotModelled(ins.opcode);
  const [d, ...rest] = destsOf(it);
  if (!d) return [];
  if (env.facts.kind(d) !== 'U') throw new NotModelled(`${ins.opcode} whose result differs between lanes`);
  const src = env.responseOf(it, ops[ops.length - 1]!);
  const out = once({ op: 'clc.query', src, what, dest: d }, loc, divergent, guard);
  // get_first_ctaid.v4: x is the response's CTA; y and z are 0 (1-D grids).
  for (const r of rest.slice(0, 2)) out.push(...assign(env, r, (_l: Lane) => num(0), loc, divergent, guard));
  return out;
}
