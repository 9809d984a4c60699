/**
 * The synchronization, memory and warp instructions of PTX mapped onto the machine's operations
 * (kernel/ir.ts): nothing here decides what an operation does, only which IR operation, on which
 * barrier or buffer, with which operands and multiplicity (emit.ts `counted`). PTX ISA sections:
 * §9.7.13.15 mbarrier, §9.7.9.25 cp.async.bulk(.tensor), §9.7.15 wgmma, §9.7.13.1 bar / barrier,
 * §9.7.13.4 fence, §9.7.13.10 elect.sync, §9.7.8.6 shfl.sync.
 */
import { wgmmaStmts, type DescRead } from './desc.js';
import type { BarRef, BufRef, Expr, Op, Per, SrcLoc, Stmt } from '../kernel/ir.js';
import type { Operand } from '../ptx/ast.js';
import { destsOf, regsOf, sourcesOf } from './analysis.js';
import { address, assign, bin, bit, counted, num, NotModelled, once, v, value, LANES, type Lane, type ValueEnv } from './emit.js';
import type { FlatIns } from './flat.js';
import { GLOBAL_BASE } from './generic.js';
import { accessBytes, CLUSTER_STRIDE, PARAM_BASE } from './layout.js';
import { LOCAL_BASE } from './local.js';
import { tcgen05Stmts } from './tcgen.js';
import { clcStmts, cpAsyncStmts, reduction, stAsyncStmts } from './asyncops.js';
import { gmemStmts } from './gmem.js';
import type { GlobalSpin } from './spin.js';
import { mbarrierStmts } from './insn-mbarrier.js';
import { valueAccessStmts } from './smem-value-ops.js';
import type { ValueArrays } from './smem-values.js';

/** What the instruction translation asks of the kernel being built. */
export interface InsEnv extends ValueEnv {
  /** The barrier an address operand names in `lane` (default: the lead lane's; throws NotModelled / Opaque). */
  bar(it: FlatIns, o: Operand, lane?: Lane): BarRef;
  /** The buffer element an address operand names. */
  buf(it: FlatIns, o: Operand, lane?: Lane): BufRef;
  /** The buffer element an address operand names with the byte offset inside it (refs.ts `SharedRefs.range`). */
  range(it: FlatIns, o: Operand, lane?: Lane): BufRef;
  /** Bytes one `cp.async.bulk.tensor` through tensor-map operand `o` delivers. */
  tensorBytes(it: FlatIns, o: Operand): number;
  /** The register holding the shared-memory address a wgmma descriptor register was built from. */
  descRoot(it: FlatIns, reg: string): string;
  /**
   * The buffer elements a wgmma descriptor register may read, decoded from its value (desc.ts;
   * each under a condition when several arrays may hold it), else the element of its provenance root.
   */
  descReads(it: FlatIns, reg: string): DescRead[];
  /**
   * The register an arrive wrote the token operand `o` holds (through copies): the machine's
   * token variable. Throws NotModelled when it is not one warp-uniform arrive result.
   */
  tokenRoot(it: FlatIns, o: Operand): string;
  /**
   * Checks that the kernel's Tensor Memory is one allocation the tcgen05 operations can name
   * (tcgen.ts `TMEM`); throws NotModelled otherwise.
   */
  tmem(it: FlatIns, cols?: Operand): void;
  /** The value of `o` when it is a constant (an immediate, or a register whose one definition moves one in). */
  staticInt(it: FlatIns, o: Operand | undefined): number | undefined;
  /** The kernel parameter (PTX name) and byte offset that `ld.param [base+offset]` reads (defs.ts `paramAddress`). */
  paramAt(it: FlatIns, base: string, offset: number): { param: string; offset: number } | undefined;
  /** The buffer a `query_cancel`'s b128 operand was loaded from (`ld.shared.b128` of the try_cancel response). */
  responseOf(it: FlatIns, o: Operand): BufRef;
  /** Whether `it` is a global access through a flag parameter (gmem.ts). */
  isFlag(it: FlatIns): boolean;
  /** The registers the translation computes (needed.ts), once known: an arrive's token no one reads is not kept. */
  needed?: ReadonlySet<string>;
  /** The `gmem` word a global address operand names (throws NotModelled when not through a flag parameter). */
  gbuf(it: FlatIns, o: Operand): BufRef;
  /** The arrays whose integer values shared memory carries (smem-values.ts). */
  values?: ValueArrays;
  /** An instruction's statements with the run-time checks of mixed arrays' references around their operations (mixed.ts). */
  guardMixed?(stmts: Stmt[]): Stmt[];
}

const NO_EFFECT = new Set(['nanosleep', 'prefetch', 'prefetchu', 'setmaxnreg', 'griddepcontrol', 'pmevent', 'discard', 'applypriority', 'createpolicy']);

/** Statements of a non-ALU instruction; `spin`: a `try_wait` that is the test of a recognized spin loop. */
export function insStmts(env: InsEnv, it: FlatIns, loc: SrcLoc, divergent: boolean, guard: Expr | undefined, spin: boolean, gspin?: GlobalSpin): Stmt[] {
  const ins = it.ins;
  const srcs = sourcesOf(it);
  const m0 = ins.mods[0] ?? '';
  const lead = (o: Operand): Expr => value(env, it, o, 'lead');
  if (env.isFlag(it)) return gmemStmts(env, it, loc, divergent, guard, gspin);
  switch (ins.base) {
    case 'ld': return ld(env, it, loc, divergent, guard);
    case 'st': if (ins.mods[0] === 'async') return stAsyncStmts(env, it, loc, divergent, guard); return ins.mods.includes('shared') || ins.mods.some((m) => m.startsWith('shared')) ? sharedAccess(env, it, ins.operands[0]!, 'st.shared', loc, divergent, guard) : [];
    case 'stmatrix': return sharedAccess(env, it, ins.operands[0]!, 'st.shared', loc, divergent, guard, matrixLanes(ins.mods) - 1);
    case 'mbarrier': return mbarrierStmts(env, it, srcs, loc, divergent, guard, spin);
    case 'fence':
      if (m0 === 'mbarrier_init') return once({ op: 'fence.mbarrier_init' }, loc, divergent, guard);
      if (m0.startsWith('proxy')) return ins.mods.some((m) => m.startsWith('async')) ? once({ op: 'fence.proxy.async' }, loc, divergent, guard) : [];
      return once({ op: 'fence', sem: ins.mods.includes('sc') ? 'sc' : 'acq_rel', scope: scopeOf(ins.mods) }, loc, divergent, guard);
    case 'membar': return once({ op: 'fence', sem: 'sc', scope: m0 === 'cta' ? 'cta' : m0 === 'sys' ? 'sys' : 'gpu' }, loc, divergent, guard);
    case 'bar': case 'barrier': return barrier(env, it, lead, loc, divergent, guard);
    case 'cp': return cp(env, it, loc, divergent, guard);
    case 'wgmma': return wgmmaStmts(env, it, lead, loc, divergent, guard);
    case 'tcgen05': return tcgen05Stmts(env, it, loc, divergent, guard);
    case 'clusterlaunchcontrol': return clcStmts(env, it, loc, divergent, guard);
    case 'red': if (ins.mods[0] === 'async') return stAsyncStmts(env, it, loc, divergent, guard); throw new NotModelled(`${ins.opcode} (a global reduction through an address mbsim does not track)`);
    case 'atom': throw new NotModelled(`${ins.opcode} (an atomic through an address that is not a pointer parameter's)`);
    case 'elect': {
      const [r, p] = destsOf(it);
      const out: Stmt[] = [];
      if (r) out.push(...assign(env, r, () => v('%lead'), loc, divergent));
      if (p) out.push(...assign(env, p, (l) => (l === 'lead' ? num(1) : bin('==', v('%lead'), num(l))), loc, divergent));
      return out;
    }
    case 'shfl': return shfl(env, it, srcs, loc, divergent, guard);
    case 'isspacep': return isspacep(env, it, srcs, loc, divergent, guard);
    case 'mapa': {
      // A peer CTA's shared::cluster address: the CTA-local address plus (rank + 1) · 2^24 (layout.ts CLUSTER_STRIDE).
      const [d] = destsOf(it);
      // A peer address nothing modelled reads (a generic store left out of the model) is left out
      // too: its source may be a register the translation does not compute.
      if (d && env.needed && !env.needed.has(d)) return [];
      return d ? assign(env, d, (l) => bin('+', value(env, it, srcs[0]!, l), bin('*', bin('+', value(env, it, srcs[1]!, l), num(1)), num(CLUSTER_STRIDE))), loc, divergent, guard) : [];
    }
    case 'activemask': return assign(env, destsOf(it)[0]!, () => v('%mask'), loc, divergent, guard);
    case 'ret': case 'exit': return once({ op: 'exit' }, loc, divergent, guard);
    case 'trap': case 'brkpt': return once({ op: 'trap', message: `${ins.opcode}: the kernel traps here` }, loc, divergent, guard);
    case 'call': {
      const f = ins.operands.find((o) => o.kind === 'name');
      throw new NotModelled(f && f.kind === 'name' && f.name === '__assertfail' ? 'call __assertfail (a failed device assertion)' : `call ${f && f.kind === 'name' ? f.name : ''}`);
    }
    default:
      if (NO_EFFECT.has(ins.base)) return [];
      throw new NotModelled(ins.opcode);
  }
}

/** Value of register operand `a` in lane `srcLane` (an expression): the sum over lanes of (lane == srcLane) · a@lane. */
/**
 * `shfl.sync.idx.b32 d[|p], a, b, c, membermask` (PTX ISA §9.7.8.6; also without `.sync`) with
 * `c` = 31, the whole-warp shuffle `__shfl_sync(mask, v, lane)` writes: `d` is lane `b & 31`'s `a`
 * (a uniform `a` is its own value), `p` (the source lane is in range) is 1. Another `c` (a width
 * below 32: segments of the warp) is a `not-modelled` trap where it runs; the other modes
 * (`up`, `down`, `bfly`) are not modelled.
 */
function shfl(env: InsEnv, it: FlatIns, srcs: Operand[], loc: SrcLoc, divergent: boolean, guard?: Expr): Stmt[] {
  const ins = it.ins;
  if (!ins.mods.includes('idx')) throw new NotModelled(`${ins.opcode} (only shfl.sync.idx, a whole-warp shuffle from one source lane, is modelled)`);
  const [a, b, c] = srcs;
  if (!a || !b || !c) throw new NotModelled(`${ins.opcode}: missing operands`);
  const [d, p] = destsOf(it);
  const srcLane = bin('&', value(env, it, b, 'lead'), num(31));
  const uniform = a.kind !== 'name' || env.facts.kind(it.name(a.name)) === 'U';
  const out: Stmt[] = [];
  if (!(c.kind === 'int' && Number(c.value) === 31)) {
    const trap = once({ op: 'trap', message: `${ins.opcode}: a clamp/segment operand other than 31 (a width below 32) is not modelled yet` }, loc, divergent, guard);
    out.push({ s: 'if', cond: bin('!=', value(env, it, c, 'lead'), num(31)), then: trap, loc });
  }
  if (d) out.push(...assign(env, d, () => (uniform ? value(env, it, a, 'lead') : pick(env, it, a, srcLane)), loc, divergent, guard));
  if (p) out.push(...assign(env, p, () => num(1), loc, divergent, guard));
  return out;
}

/**
 * `isspacep.SPACE p, a` (PTX ISA §9.7.9.18): whether generic address `a` falls in the window the
 * translation gives that space (layout.ts, local.ts, generic.ts): shared::cta below 2^24, a
 * cluster's shared memory below (cluster + 1) · 2^24, local depots from `LOCAL_BASE`, global memory
 * (pointer parameters' values, `.global` variables) from `PARAM_BASE` outside the local window.
 * libcu++'s `-G` code tests a barrier's address this way (`__isShared`). `.param` and `.const` are
 * not modelled.
 */
function isspacep(env: InsEnv, it: FlatIns, srcs: Operand[], loc: SrcLoc, divergent: boolean, guard?: Expr): Stmt[] {
  const space = it.ins.mods[0] ?? '';
  const [d] = destsOf(it);
  const a = srcs[0];
  if (!d || !a) return [];
  const within = (x: Expr, lo: number, hi: number) => bin('&&', bin('>=', x, num(lo)), bin('<', x, num(hi)));
  const test: ((x: Expr) => Expr) | undefined =
    space === 'shared' || space === 'shared::cta' ? (x) => within(x, 0, CLUSTER_STRIDE)
    : space === 'shared::cluster' ? (x) => within(x, 0, PARAM_BASE)
    : space === 'local' ? (x) => within(x, LOCAL_BASE, GLOBAL_BASE)
    : space === 'global' ? (x) => bin('||', within(x, PARAM_BASE, LOCAL_BASE), bin('>=', x, num(GLOBAL_BASE)))
    : undefined;
  if (!test) throw new NotModelled(`${it.ins.opcode} (the ${space} window is not modelled)`);
  return assign(env, d, (l) => test(value(env, it, a, l)), loc, divergent, guard);
}

function pick(env: ValueEnv, it: FlatIns, a: Operand, srcLane: Expr): Expr {
  const terms: Expr[] = [];
  for (let l = 0; l < LANES; l++) terms.push(bin('*', bin('==', srcLane, num(l)), value(env, it, a, l)));
  return terms.reduce((x, y) => bin('+', x, y));
}

function scopeOf(mods: string[]): 'cta' | 'cluster' | 'gpu' | 'sys' {
  return mods.includes('cta') ? 'cta' : mods.includes('cluster') ? 'cluster' : mods.includes('sys') ? 'sys' : 'gpu';
}

function ld(env: InsEnv, it: FlatIns, loc: SrcLoc, divergent: boolean, guard?: Expr): Stmt[] {
  const ins = it.ins;
  const [d] = destsOf(it);
  const src = ins.operands[1]!;
  if (ins.mods.includes('param')) {
    if (!d || src.kind !== 'address' || !src.base) return [];
    const at = env.paramAt(it, src.base, Number(src.offset));
    if (!at) throw new NotModelled(`ld.param through ${src.base}, whose address is not a kernel parameter's plus a constant`);
    // A vector load (`ld.param.v2.u32 {%r1, %r2}, [P+8]`) reads consecutive fields.
    const bytes = Number(/^[bsuf](8|16|32|64)$/.exec(ins.mods.find((m) => /^[bsuf](8|16|32|64)$/.test(m)) ?? 'b32')![1]) / 8;
    return destsOf(it).flatMap((dk, k) => assign(env, dk, () => {
      const p = env.special(`param:${at.param}+${at.offset + k * bytes}`, 'lead');
      if (!p) throw new NotModelled(`ld.param of ${src.base}`);
      return p;
    }, loc, divergent, guard));
  }
  if (ins.mods.some((m) => m.startsWith('shared'))) return sharedAccess(env, it, src, 'ld.shared', loc, divergent, guard);
  return [];
}

/**
 * The lanes whose addresses a `stmatrix` uses (PTX ISA §9.7.14.5.16): 8 row addresses per 8 × 8
 * matrix, `.x1` lanes 0-7, `.x2` 0-15, `.x4` all 32.
 */
function matrixLanes(mods: string[]): number {
  return mods.includes('x1') ? 8 : mods.includes('x2') ? 16 : LANES;
}

/**
 * A warp's `ld.shared` / `st.shared` (and `stmatrix`, a warp's store of 8 × 8 matrices through its
 * lanes' row addresses): the buffer element of its lead lane's address and, when the address
 * varies between lanes, also lane `lastLane`'s element (31; a `stmatrix .x2` uses lanes 0-15) where
 * that lane is active and its element differs (a warp's contiguous access spans at most two
 * elements of one warp's bytes, layout.ts). A value array's scalar load or store carries its
 * integer value (smem-value-ops.ts).
 */
function sharedAccess(env: InsEnv, it: FlatIns, o: Operand, op: 'ld.shared' | 'st.shared', loc: SrcLoc, divergent: boolean, guard: Expr | undefined, lastLane = LANES - 1): Stmt[] {
  const carried = it.ins.base === 'stmatrix' ? undefined : valueAccessStmts(env, it, loc, divergent, guard);
  if (carried) return carried;
  const varying = o.kind === 'address' && regsOf({ ...o, rest: [] }, it).some((r) => env.facts.kind(r) !== 'U');
  // One address for the warp (`ld.shared.u32` of a value every lane reads): its own bytes, from
  // their offset in the element; lanes of different addresses: their elements, whole.
  const size = varying || it.ins.base === 'stmatrix' ? undefined : accessBytes(it.ins.mods);
  if (size !== undefined) return once({ op, buf: env.range(it, o), bytes: num(size) }, loc, divergent, guard);
  const first = env.buf(it, o);
  const stmts = once({ op, buf: first }, loc, divergent, guard);
  if (!varying) return stmts;
  const last = env.buf(it, o, lastLane);
  if (last.index.k === 'num' && first.index.k === 'num' && last.index.v === first.index.v) return stmts;
  const differ = bin('!=', last.index, first.index);
  if (!divergent && !guard) return [...stmts, { s: 'if', cond: differ, then: [{ s: 'op', op: { op, buf: last }, loc }], loc }];
  const active = bin('!=', bin('&', guard ? bin('&', v('%mask'), guard) : v('%mask'), num(2 ** lastLane)), num(0));
  return [...stmts, { s: 'if', cond: bin('&&', active, differ), then: [{ s: 'op', op: { op, buf: last }, loc }], loc }];
}

function barrier(env: InsEnv, it: FlatIns, lead: (o: Operand) => Expr, loc: SrcLoc, divergent: boolean, guard?: Expr): Stmt[] {
  const ins = it.ins;
  const m = ins.mods;
  const ops = ins.operands;
  if (m[0] === 'cluster') {
    if (m[1] === 'arrive') return once({ op: 'barrier.cluster.arrive', ...(m.includes('relaxed') ? { sem: 'relaxed' as const } : {}), aligned: m.includes('aligned') }, loc, divergent, guard);
    if (m[1] === 'wait') return once({ op: 'barrier.cluster.wait', aligned: m.includes('aligned') }, loc, divergent, guard);
  }
  if (m[0] === 'warp') return [];
  const aligned = ins.base === 'bar' || m.includes('aligned');
  const id = lead(ops[0]!);
  const threads = ops[1] ? lead(ops[1]) : undefined;
  if (m[0] === 'sync' || m[0] === undefined || m[0] === 'aligned') return once({ op: 'bar.sync', id, ...(threads ? { threads } : {}), aligned }, loc, divergent, guard);
  if (m[0] === 'arrive' && threads) return once({ op: 'bar.arrive', id, threads, aligned }, loc, divergent, guard);
  throw new NotModelled(ins.opcode);
}

function cp(env: InsEnv, it: FlatIns, loc: SrcLoc, divergent: boolean, guard?: Expr): Stmt[] {
  const ins = it.ins;
  const m = ins.mods;
  const ops = ins.operands;
  const lead = (o: Operand): Expr => value(env, it, o, 'lead');
  const what = ins.opcode;
  if (m[0] === 'async' && m[1] !== 'bulk') return cpAsyncStmts(env, it, loc, divergent, guard);
  const store = bulkStore(env, it, lead, loc, divergent, guard);
  if (store) return store;
  if (m[0] !== 'async' || m[1] !== 'bulk') throw new NotModelled(what);
  if (m[2] === 'commit_group') return once({ op: 'cp.async.bulk.commit_group' }, loc, divergent, guard);
  if (m[2] === 'wait_group') return once({ op: 'cp.async.bulk.wait_group', n: lead(ops[0]!), read: m.includes('read') }, loc, divergent, guard);
  if (!m.some((x) => x.startsWith('mbarrier::complete_tx')) || !m.includes('global') || !m.some((x) => x.startsWith('shared'))) throw new NotModelled(`${what} (only global → shared loads that complete_tx on a barrier are modelled)`);
  const multicast = m.some((x) => x.startsWith('multicast')) ? { multicast: lead(ops[3]!) } : {};
  if (m[2] === 'tensor') {
    const bytes = env.tensorBytes(it, ops[1]!);
    return counted((per) => ({ op: 'cp.async.bulk', tensor: true, dst: env.range(it, ops[0]!), bytes: num(bytes), bar: env.bar(it, ops[2]!), ...multicast, per }), what, loc, divergent, guard);
  }
  // A size known before running is a number, so that the machine enumerates the copy's byte range (views.ts).
  const size = env.staticInt(it, ops[2]);
  const bytes = size !== undefined ? num(size) : lead(ops[2]!);
  return counted((per) => ({ op: 'cp.async.bulk', tensor: false, dst: env.range(it, ops[0]!), bytes, bar: env.bar(it, ops[3]!), ...multicast, per }), what, loc, divergent, guard);
}

/**
 * A bulk store or reduction from shared memory, tracked by bulk async-groups (PTX ISA
 * §9.7.9.25.4.1, §9.7.9.27.1.2-3): `cp.async.bulk.global.shared::cta.bulk_group [g], [s], n`, its
 * tensor form `cp.async.bulk.tensor.Nd.global.shared::cta.bulk_group [tmap, {…}], [s]` (the box's
 * bytes, --tensor-map) and `cp.reduce.async.bulk(.tensor)…` of the same operands; null for others.
 */
function bulkStore(env: InsEnv, it: FlatIns, lead: (o: Operand) => Expr, loc: SrcLoc, divergent: boolean, guard?: Expr): Stmt[] | null {
  const m = it.ins.mods;
  const reduce = m[0] === 'reduce';
  const r = reduce ? m.slice(1) : m;
  if (r[0] !== 'async' || r[1] !== 'bulk') return null;
  const g = r.indexOf('global');
  const sh = r.findIndex((x) => x.startsWith('shared'));
  if (g < 0 || sh < 0 || g > sh || !r.includes('bulk_group')) return null;
  const ops = it.ins.operands;
  const tensor = r[2] === 'tensor';
  const fields = reduce ? reduction(it, tensor ? 'cp.reduce.async.bulk.tensor' : 'cp.reduce.async.bulk', loc) : {};
  const mk = (per: Per, lane: Lane): Op => {
    const bytes = tensor ? num(env.tensorBytes(it, ops[0]!)) : lane === 'lead' ? lead(ops[2]!) : value(env, it, ops[2]!, lane);
    const src = env.range(it, ops[1]!, lane === 'lead' ? undefined : lane);
    return reduce ? { op: 'cp.reduce.async.bulk', tensor, src, bytes, ...fields, per } : { op: 'cp.async.bulk.store', src, bytes, per };
  };
  return eachLane(counted((per) => mk(per, 'lead'), it.ins.opcode, loc, divergent, guard), (l) => mk('warp', l), loc, guard);
}

/**
 * An operation that each active lane issues with its own operands (a bulk store: one thread's
 * copy of its own shared-memory source): `counted`'s statements for all 32 lanes of uniform code
 * and for one lane, and where 2 to 31 lanes are active (its trap), one operation per active lane,
 * `per: 'warp'` (one thread) with that lane's operands, in lane order. A TMA store of a tile's
 * column blocks by the first lanes of a warp (`if (threadIdx.x < BLOCK_N / TMA_D_BLOCK_N)`) is one.
 */
function eachLane(stmts: Stmt[], mk: (lane: number) => Op, loc: SrcLoc, guard?: Expr): Stmt[] {
  const m = guard ? bin('&', v('%mask'), guard) : v('%mask');
  const lanes: Stmt[] = Array.from({ length: LANES }, (_, l) => ({ s: 'if', cond: bit(m, l), then: [{ s: 'op', op: mk(l), loc }], loc }) as Stmt);
  const swap = (ss: Stmt[]): Stmt[] => ss.map((st) => {
    if (st.s !== 'if') return st;
    const then = st.then.length === 1 && st.then[0]!.s === 'op' && st.then[0]!.op.op === 'trap' ? lanes : swap(st.then);
    return { ...st, then, ...(st.else ? { else: swap(st.else) } : {}) };
  });
  return swap(stmts);
}


/** A lane's bit of `mask` as a condition (used by the translator for guards). */
export function laneOn(mask: Expr, l: Lane): Expr {
  return l === 'lead' ? bin('!=', mask, num(0)) : bit(mask, l);
}

void address;
