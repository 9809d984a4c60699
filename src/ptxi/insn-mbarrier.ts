/**
 * The mbarrier instruction family of PTX (PTX ISA §9.7.13.15: init, inval, arrive, arrive_drop,
 * expect_tx, complete_tx, pending_count, test_wait, try_wait) mapped onto the machine's mbarrier
 * operations (kernel/ir.ts): which barrier, which operands and which multiplicity (emit.ts
 * `counted`); the machine decides what each does.
 */
import type { Expr, Op, SrcLoc, Stmt } from '../kernel/ir.js';
import type { Operand } from '../ptx/ast.js';
import { destsOf, regsOf } from './analysis.js';
import { assign, bin, bit, counted, num, NotModelled, once, v, value, LANES } from './emit.js';
import type { FlatIns } from './flat.js';
import type { InsEnv } from './insn.js';

/**
 * The token variable of an arrive (its `state` destination when one value for the warp), or
 * undefined (the sink `_`, or a register no wait, `pending_count` or copy of a needed value reads:
 * a token nothing observes would only tell apart states that differ in the arrivals' order).
 */
function arriveToken(env: InsEnv, it: FlatIns): string | undefined {
  const o = it.ins.operands[0];
  if (!o || o.kind !== 'name') return undefined;
  const r = it.name(o.name);
  if (env.needed && !env.needed.has(r)) return undefined;
  return env.facts.kind(r) === 'U' ? r : undefined;
}

/**
 * Statements of one mbarrier instruction `it` (its source operands `srcs`); `spin`: a `try_wait`
 * that is the test of a recognized spin loop, which becomes the machine's blocking wait. Throws
 * NotModelled for a form the machine has no operation for.
 */
export function mbarrierStmts(env: InsEnv, it: FlatIns, srcs: Operand[], loc: SrcLoc, divergent: boolean, guard: Expr | undefined, spin: boolean): Stmt[] {
  const ins = it.ins;
  const kind = ins.mods[0] ?? '';
  const mods = ins.mods;
  const lead = (o: Operand): Expr => value(env, it, o, 'lead');
  const what = `${ins.opcode}`;
  // Whether every lane reads the same operands (then 2 to 31 lanes are one scaled operation).
  const shared = srcs.every((o) => regsOf(o, it).every((r) => env.facts.kind(r) === 'U'));
  switch (kind) {
    case 'init': {
      // Executed by whichever warp reaches it (the role runs as written): once for lanes that
      // share the operands, else each active lane its own (`if (tid < S) init(&full[tid], n)`).
      if (shared) return once({ op: 'mbarrier.init', bar: env.bar(it, srcs[0]!), count: lead(srcs[1]!) }, loc, divergent, guard);
      const m = guard ? bin('&', v('%mask'), guard) : v('%mask');
      return Array.from({ length: LANES }, (_, l): Stmt => ({ s: 'if', cond: bit(m, l), then: [{ s: 'op', op: { op: 'mbarrier.init', bar: env.bar(it, srcs[0]!, l), count: value(env, it, srcs[1]!, l) }, loc }], loc }));
    }
    case 'inval': return once({ op: 'mbarrier.inval', bar: env.bar(it, srcs[0]!) }, loc, divergent, guard);
    case 'expect_tx': case 'complete_tx': {
      const op = kind === 'expect_tx' ? 'mbarrier.expect_tx' as const : 'mbarrier.complete_tx' as const;
      const bar = env.bar(it, srcs[0]!);
      const bytes = lead(srcs[1]!);
      // n lanes sharing the operands: n times the bytes (one per lane, PTX ISA §9.7.13.15.11/12).
      return counted((per) => ({ op, bar, bytes, per }), what, loc, divergent, guard, shared ? (n) => ({ op, bar, bytes: bin('*', n, bytes), per: 'warp' }) : undefined);
    }
    case 'arrive': case 'arrive_drop': {
      const bar = env.bar(it, srcs[0]!);
      const third = srcs[1] ? lead(srcs[1]) : undefined;
      const expect = mods.includes('expect_tx');
      const sem = mods.includes('relaxed') ? 'relaxed' as const : 'release' as const;
      const scope = mods.includes('cluster') ? 'cluster' as const : mods.includes('cta') ? 'cta' as const : undefined;
      const token = arriveToken(env, it);
      const rest = {
        ...(kind === 'arrive_drop' ? { drop: true } : {}),
        ...(mods.includes('noComplete') ? { noComplete: true } : {}),
        ...(scope ? { scope } : {}),
        ...(token ? { token } : {}),
      };
      // n lanes sharing the operands: one arrive of n times the count (and of the bytes), as the
      // machine counts a warp's per-thread arrive (the sum over its lanes in one instruction).
      const scaled = shared ? (n: Expr): Op => ({
        op: 'mbarrier.arrive', bar, per: 'warp', sem, ...rest,
        ...(expect && third ? { expectTx: bin('*', n, third), count: n } : { count: third ? bin('*', n, third) : n }),
      }) : undefined;
      return counted((per) => ({
        op: 'mbarrier.arrive', bar, per, sem,
        ...(expect && third ? { expectTx: third } : third ? { count: third } : {}),
        ...rest,
      }), what, loc, divergent, guard, scaled);
    }
    case 'pending_count': {
      const [d] = destsOf(it);
      return d ? once({ op: 'mbarrier.pending_count', token: env.tokenRoot(it, srcs[0]!), dest: d }, loc, divergent, guard) : [];
    }
    case 'try_wait': case 'test_wait': {
      const bar = env.bar(it, srcs[0]!);
      // The token form waits for the phase the token's arrive observed: the machine's token wait.
      const phase = mods.includes('parity') ? { parity: lead(srcs[1]!) } : { token: env.tokenRoot(it, srcs[1]!) };
      const sem = mods.includes('relaxed') ? { sem: 'relaxed' as const } : {};
      const scope = mods.includes('cluster') ? { scope: 'cluster' as const } : mods.includes('cta') ? { scope: 'cta' as const } : {};
      const [d] = destsOf(it);
      if (spin) {
        // The spin loop's test: the machine's blocking wait, then the test's result is true.
        const out = once({ op: 'mbarrier.wait', form: 'try_wait', bar, ...phase, ...sem, ...scope }, loc, divergent, guard);
        if (d) out.push(...assign(env, d, () => num(1), loc, divergent, guard));
        return out;
      }
      if (!d) return [];
      if (env.facts.kind(d) !== 'U') throw new NotModelled(`${what} whose result differs between lanes outside a spin loop`);
      return once({ op: 'mbarrier.wait', form: kind === 'try_wait' ? 'try_wait' : 'test_wait', bar, ...phase, dest: d, ...sem, ...scope }, loc, divergent, guard);
    }
    default: throw new NotModelled(what);
  }
}
