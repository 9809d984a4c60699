/**
 * The loads and stores of a value array (smem-values.ts) as the machine's value-carrying accesses
 * (machine/ops/smem.ts: `R = ld.shared B` reads element B's cell, `st.shared B value=E` writes
 * it). PTX ISA §9.7.9.8 `ld`, §9.7.9.11 `st`: a store of a w-byte type writes the low 8w bits of
 * its register, a load zero-extends (`.u`, `.b`) or sign-extends (`.s`) them into its destination.
 * A store whose active lanes hold different values (one address, several values) is a
 * `not-modelled` trap where it runs; an address that is not a multiple of the element size from
 * the array's start (a misaligned access) is one too. Nothing here decides what an access does.
 */
import type { Expr, SrcLoc, Stmt } from '../kernel/ir.js';
import { destsOf } from './analysis.js';
import { address, assign, bin, bit, num, once, value, v, LANES } from './emit.js';
import type { FlatIns } from './flat.js';
import type { InsEnv } from './insn.js';
import { shortName } from './layout.js';

/** The frame variable a lane-varying destination's loaded value passes through (0 between loads). */
const TMP = '%smem';

/** Whether the loads of array `arr` carry their values to a register the translation computes. */
function readByValue(env: InsEnv, arr: string): boolean {
  return (env.values?.loads.get(arr) ?? []).some((ld) => {
    const [d] = destsOf(ld);
    return d !== undefined && !env.facts.opaque(d) && (!env.needed || env.needed.has(d));
  });
}

/**
 * The statements of `ld.shared` / `st.shared` `it` when it is a value access of a value array (the
 * load's destination computed, the store's array read by such a load); undefined otherwise (the
 * plain access of insn.ts `sharedAccess`).
 */
export function valueAccessStmts(env: InsEnv, it: FlatIns, loc: SrcLoc, divergent: boolean, guard: Expr | undefined): Stmt[] | undefined {
  const values = env.values;
  const arr = values?.arrayOf(it);
  if (!values || arr === undefined) return undefined;
  const w = values.bytes.get(arr)!;
  const ins = it.ins;
  const load = ins.base === 'ld';
  const o = ins.operands[load ? 1 : 0]!;
  const [d] = load ? destsOf(it) : [];
  if (load && (d === undefined || env.facts.opaque(d) || (env.needed && !env.needed.has(d)))) return undefined;
  const src = ins.operands[1]!;
  if (!load && (!readByValue(env, arr) || (src.kind === 'name' && env.facts.opaque(it.name(src.name))))) return undefined;
  const name = shortName(arr);
  const misaligned = bin('!=', bin('%', bin('-', address(env, it, o, 'lead'), num(env.symbol(arr)!)), num(w)), num(0));
  const trap = (message: string): Stmt => ({ s: 'op', op: { op: 'trap', message: `${ins.opcode}: ${message}` }, loc });
  const mask = guard ? bin('&', v('%mask'), guard) : v('%mask');
  // The check runs where the access does (some lane active); then the access.
  const aligned = (then: Stmt[]): Stmt[] => [{
    s: 'if', cond: divergent || guard ? bin('&&', bin('!=', mask, num(0)), misaligned) : misaligned,
    then: [trap(`an address of ${name} that is not a multiple of its ${w}-byte elements: a value read at another offset than it was written is not modelled`)],
    else: then, loc,
  }];
  const buf = env.buf(it, o);
  if (d !== undefined) {
    const signed = ins.mods.some((m) => /^s(8|16)$/.test(m));
    // The low 8w bits sign-extended: x − ⌊(x + 2^(8w−1)) / 2^(8w)⌋ · 2^(8w).
    const ext = (x: Expr): Expr => (signed ? bin('-', x, bin('*', bin('>>', bin('+', x, num(2 ** (8 * w - 1))), num(8 * w)), num(2 ** (8 * w)))) : x);
    if (env.facts.kind(d) === 'U') {
      const st = once({ op: 'ld.shared', buf, dest: d }, loc, divergent, guard);
      return aligned(signed ? [...st, ...assign(env, d, () => ext(v(d)), loc, divergent, guard)] : st);
    }
    // Every active lane reads the one element: the value passes through TMP into each lane's variable.
    return aligned([
      ...once({ op: 'ld.shared', buf, dest: TMP }, loc, divergent, guard),
      ...assign(env, d, () => ext(v(TMP)), loc, divergent, guard),
      { s: 'let', name: TMP, value: num(0), loc },
    ]);
  }
  const lead = value(env, it, src, 'lead');
  const stored = w < 4 ? bin('&', lead, num(2 ** (8 * w) - 1)) : lead;
  const op = once({ op: 'st.shared', buf, value: stored }, loc, divergent, guard);
  if (src.kind !== 'name' || env.facts.kind(it.name(src.name)) === 'U') return aligned(op);
  // A lane-varying register: one value when the active lanes agree (one lane, `if (lane == 0)`), else a trap.
  const differ = Array.from({ length: LANES }, (_, l) => bin('*', bit(mask, l), bin('!=', value(env, it, src, l), lead))).reduce((a, b) => bin('+', a, b));
  return aligned([{
    s: 'if', cond: bin('!=', differ, num(0)),
    then: [trap(`lanes of a warp store different values to one element of ${name}: not modelled (a value stored by one lane, or by lanes that agree, is)`)],
    else: op, loc,
  }]);
}
