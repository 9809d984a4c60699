/**
 * Global flags and semaphores (PTX ISA §9.7.13.5 atom, §9.7.13.6 red, §9.7.9.8 ld, §9.7.9.11 st,
 * §8.4 memory operation strength): the machine keeps the values of global memory reached through
 * a pointer parameter that an `atom`, a `red` or a strong (`.acquire` / `.release` / `.relaxed` /
 * `.volatile`) load or store addresses. Each such parameter is one IR `gmem` array, named like
 * the parameter (`param_3[i]`: its 4-byte word i, the first 256 words, 0 when the launch
 * starts); its plain `ld.global` / `st.global` are the machine's weak accesses (which can race);
 * every other global access stays out of the model. Each instruction is the machine's operation
 * of the same name (machine/ops/values.ts).
 */
import type { AtomOp, Expr, MemScope, Op, SrcLoc, Stmt } from '../kernel/ir.js';
import type { Instruction, Operand } from '../ptx/ast.js';
import { destsOf, globalValue, regsOf, type Facts } from './analysis.js';
import { NotModelled, once, value } from './emit.js';
import type { Flat, FlatIns } from './flat.js';
import type { InsEnv } from './insn.js';
import type { GlobalSpin } from './spin.js';

/** Words of a flag parameter's array. */
export const GMEM_WORDS = 256;

const AOPS: readonly AtomOp[] = ['add', 'exch', 'min', 'max', 'inc', 'dec', 'and', 'or', 'xor', 'cas'];

/** Whether `ins` is an access whose strength or atomicity makes its parameter a flag array. */
function flagAccess(ins: Instruction): boolean {
  if (ins.mods.some((m) => m.startsWith('shared') || m === 'param' || m === 'local' || m === 'async')) return false;
  if (ins.base === 'atom' || ins.base === 'red') return true;
  if (ins.base === 'ld') return globalValue(ins);
  return ins.base === 'st' && ins.mods.some((m) => m === 'release' || m === 'relaxed' || m === 'volatile');
}

/** The address operand of a global ld / st / atom / red. */
function addressOf(ins: Instruction): Operand | undefined {
  return ins.base === 'st' || ins.base === 'red' ? ins.operands[0] : ins.operands[1];
}

/** The pointer parameters whose memory the kernel uses as flags (see the module comment). */
export function flagParams(flat: Flat, facts: Facts, params: ReadonlySet<string>): Set<string> {
  const out = new Set<string>();
  for (const it of flat.items) {
    if ('label' in it || !flagAccess(it.ins)) continue;
    const a = addressOf(it.ins);
    if (a) for (const r of regsOf(a, it)) for (const s of facts.prov(r)) if (params.has(s)) out.add(s);
  }
  return out;
}

/** The flag parameter a global access goes through, or undefined (then it is not modelled). */
export function flagOf(it: FlatIns, facts: Facts, flags: ReadonlySet<string>): string | undefined {
  const ins = it.ins;
  if (!['ld', 'st', 'atom', 'red'].includes(ins.base) || ins.mods.some((m) => m.startsWith('shared') || m === 'param' || m === 'local' || m === 'async')) return undefined;
  const a = addressOf(ins);
  if (!a) return undefined;
  const ps = new Set(regsOf(a, it).flatMap((r) => [...facts.prov(r)].filter((s) => flags.has(s))));
  return ps.size === 1 ? [...ps][0] : undefined;
}

function semOf(mods: string[]): 'relaxed' | 'acquire' | 'release' | 'acq_rel' | undefined {
  return mods.includes('acq_rel') ? 'acq_rel' : mods.includes('acquire') ? 'acquire' : mods.includes('release') ? 'release' : mods.includes('relaxed') ? 'relaxed' : undefined;
}
function scopeOf(mods: string[]): MemScope | undefined {
  return mods.includes('cta') ? 'cta' : mods.includes('cluster') ? 'cluster' : mods.includes('gpu') ? 'gpu' : mods.includes('sys') ? 'sys' : undefined;
}

/**
 * Statements of a global access through a flag parameter. One operation for the warp: a load or
 * store whose lanes share the address; an atom / red executed by exactly one lane (several lanes'
 * atomics are `not-modelled`, never one counted for all).
 */
export function gmemStmts(env: InsEnv, it: FlatIns, loc: SrcLoc, divergent: boolean, guard: Expr | undefined, spin?: GlobalSpin): Stmt[] {
  const ins = it.ins;
  const m = ins.mods;
  const a = addressOf(ins)!;
  const buf = env.gbuf(it, a);
  const lead = (o: Operand): Expr => value(env, it, o, 'lead');
  const [d] = destsOf(it);
  const dest = d && !env.facts.opaque(d) ? uniform(env, d, ins.opcode) : undefined;
  const scope = scopeOf(m);
  const sem = semOf(m);
  const strong = sem !== undefined || m.includes('volatile');
  let op: Op;
  if (ins.base === 'ld' && spin && strong) {
    // The loop's load: the machine's spin.global, blocking until the value ends the loop (spin.ts).
    op = { op: 'spin.global', buf, cmp: spin.cmp, target: lead(spin.target), sem: sem === 'acquire' ? 'acquire' : 'relaxed', ...(scope ? { scope } : m.includes('volatile') ? { scope: 'sys' as const } : {}), ...(dest ? { dest } : {}) };
  } else if (ins.base === 'ld') {
    op = strong ? { op: 'ld.strong', buf, sem: sem === 'acquire' ? 'acquire' : 'relaxed', ...(scope ? { scope } : m.includes('volatile') ? { scope: 'sys' as const } : {}), ...(dest ? { dest } : {}) } : { op: 'ld.global', buf };
  } else if (ins.base === 'st') {
    const v = lead(ins.operands[1]!);
    op = strong ? { op: 'st.strong', buf, sem: sem === 'release' ? 'release' : 'relaxed', ...(scope ? { scope } : m.includes('volatile') ? { scope: 'sys' as const } : {}), value: v } : { op: 'st.global', buf, value: v };
  } else {
    const aop = AOPS.find((x) => m.includes(x));
    if (!aop) throw new NotModelled(`${ins.opcode} (the operations add, exch, min, max, inc, dec, and, or, xor, cas are modelled)`);
    const red = ins.base === 'red';
    const srcs = ins.operands.slice(red ? 1 : 2);
    const [b, c] = srcs;
    op = {
      op: 'atom.global', buf, red, aop, sem: sem ?? 'relaxed', ...(scope ? { scope } : {}),
      ...(aop === 'cas' ? { compare: lead(b!), value: lead(c!) } : { value: lead(b!) }),
      ...(dest ? { dest } : {}),
    };
    return oneLane(op, ins.opcode, loc, divergent, guard);
  }
  return once(op, loc, divergent, guard);
}

/** `dest` when it is one value for the warp, else NotModelled. */
function uniform(env: InsEnv, d: string, what: string): string {
  if (env.facts.kind(d) !== 'U') throw new NotModelled(`${what} whose result differs between the lanes of a warp`);
  return d;
}

/** An atomic executed by exactly one active lane; several (or all 32 of uniform code) are a trap. */
function oneLane(op: Op, what: string, loc: SrcLoc, divergent: boolean, guard: Expr | undefined): Stmt[] {
  const trap: Stmt = { s: 'op', op: { op: 'trap', message: `${what} executed by several lanes of a warp: not modelled yet (mbsim models a global atomic executed by one lane)` }, loc };
  if (!divergent && !guard) return [trap];
  const mask: Expr = guard ? { k: 'bin', op: '&', a: { k: 'var', name: '%mask' }, b: guard } : { k: 'var', name: '%mask' };
  const cnt: Expr = Array.from({ length: 32 }, (_, l): Expr => ({ k: 'bin', op: '&', a: { k: 'bin', op: '>>', a: mask, b: { k: 'num', v: l } }, b: { k: 'num', v: 1 } })).reduce((x, y) => ({ k: 'bin', op: '+', a: x, b: y }));
  return [{ s: 'if', cond: { k: 'bin', op: '==', a: cnt, b: { k: 'num', v: 1 } }, then: [{ s: 'op', op, loc }], else: [{ s: 'if', cond: { k: 'bin', op: '!=', a: cnt, b: { k: 'num', v: 0 } }, then: [trap], loc }], loc }];
}
