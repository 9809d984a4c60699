/**
 * A role's statements compiled to the machine's flat code: `set` / `jmp` / `jz` / operation
 * instructions with closures over the agent's variable frame, barrier and buffer references
 * resolved to flat keys, `label` / `goto` pointed at their positions. Called by `instantiate`
 * (program.ts) once per role; errors are {@link KernelError}s with the statement's location.
 */
import { add, nonZeroStep } from '../kernel/arith.js';
import { compileExpr, evalExpr, exprNames, foldExpr, showExpr, type CompiledExpr } from '../kernel/expr.js';
import { opText } from './optext.js';
import { memorySpaceProblem } from './values.js';
import { operandProblem } from '../kernel/op-limits.js';
import type { BarRef, BufRef, Expr, Op, RoleDecl, SrcLoc, Stmt } from '../kernel/ir.js';
import { OPC } from './ops/index.js';
import { rangedKey, type BufferSpace } from './views.js';
import { roleSplits } from './roles.js';
import { BUILTINS, KernelError, SINGLE_THREAD_OPS, WARP_SLOT, type BarrierInfo, type BufferInfo, type Instr, type KeyFn, type OpInstr, type RoleCode } from './program.js';

/** Compiles role `r` (see the module comment). */
export function compileRole(
  r: RoleDecl,
  params: Record<string, number>,
  clusterSize: number,
  barByName: Map<string, BarrierInfo>,
  bufByName: Map<string, BufferInfo>,
  barriersPerCta: number,
  space: BufferSpace,
  uids: { next: number },
  lockstep: boolean,
): RoleCode {
  const slots: string[] = [...BUILTINS];
  const scalars = new Set([...barByName.values(), ...bufByName.values()].filter((x) => x.scalar).map((x) => x.name));
  const threads = r.threads ?? r.warps * 32;
  if (threads > r.warps * 32 || threads < 1) {
    throw new KernelError(`role ${r.name} has ${threads} threads in ${r.warps} warp${r.warps === 1 ? '' : 's'}: a warp holds 1 to 32 threads`, r.loc, 'threads');
  }
  const split = !lockstep && roleSplits(r);
  const code: Instr[] = [];
  const declared = new Set<string>(BUILTINS);
  const slotOf = (name: string, loc?: SrcLoc): number | { const: number } => {
    const i = slots.indexOf(name);
    if (i >= 0) return i;
    if (name in params) return { const: params[name]! };
    throw new KernelError(`unknown name '${name}' in role ${r.name}`, loc, 'unknown-name');
  };
  /** The value of an expression of parameters only (null: it reads a variable, or faults: reported where it runs). */
  const constOf = (e: Expr): number | null => {
    for (const n of exprNames(e)) if (declared.has(n) || !(n in params)) return null;
    try {
      return evalExpr(e, (n) => params[n]);
    } catch {
      return null;
    }
  };
  const cx = (e: Expr, loc: SrcLoc): CompiledExpr => {
    for (const n of exprNames(e)) {
      if (!declared.has(n) && !(n in params)) {
        const vloc = findVarLoc(e, n) ?? loc;
        throw new KernelError(`unknown name '${n}' in role ${r.name}`, vloc, 'unknown-name');
      }
    }
    const fn = compileExpr(e, (n) => slotOf(n, loc));
    // An expression of parameters only is a constant: evaluate it once (unless it faults, which
    // must then happen at run time, where the machine reports it).
    let constant = true;
    for (const n of exprNames(e)) if (typeof slotOf(n, loc) === 'number') constant = false;
    if (constant && e.k !== 'num') {
      try {
        const v = fn([]);
        return () => v;
      } catch {
        return fn;
      }
    }
    return fn;
  };
  const declare = (name: string, loc?: SrcLoc): number => {
    if (name in params) throw new KernelError(`'${name}' is a parameter and cannot be assigned`, loc, 'assign-param');
    let i = slots.indexOf(name);
    if (i < 0) {
      slots.push(name);
      i = slots.length - 1;
    }
    declared.add(name);
    return i;
  };
  const ctaOf = (ref: { cta?: Expr }, loc: SrcLoc): CompiledExpr | null => (ref.cta ? cx(ref.cta, loc) : null);
  /** Key function of a barrier or buffer reference: flat key, or -1 when out of range at run time. */
  const refKey = (what: 'barrier' | 'buffer', ref: BarRef | BufRef, loc: SrcLoc): KeyFn => {
    const [own, other, perCta] = what === 'barrier' ? [barByName, bufByName, barriersPerCta] as const : [bufByName, barByName, space.perCta] as const;
    const info = own.get(ref.name);
    if (!info) {
      const hint = other.has(ref.name) ? ` ('${ref.name}' is a ${what === 'barrier' ? 'buffer' : 'barrier'})` : '';
      throw new KernelError(`unknown ${what} '${ref.name}'${hint}`, loc, `unknown-${what}`);
    }
    const idx = cx(ref.index, loc);
    const cta = ctaOf(ref, loc);
    if (ref.index.k === 'num' && (ref.index.v < 0 || ref.index.v >= info.length)) {
      throw new KernelError(`index ${ref.index.v} is out of range for ${what} array ${info.name}[${info.length}]`, loc, 'index-range');
    }
    const len = info.length;
    const o = info.offset;
    const global = (info as BufferInfo).space === 'gmem'; // one location per launch: CTA 0's key block
    const fn: KeyFn = (f) => {
      const i = idx(f);
      const rank = cta ? cta(f) : f[0]!;
      if (i < 0 || i >= len || rank < 0 || rank >= clusterSize) return -1;
      return global ? o + i : (f[3]! * clusterSize + rank) * perCta + o + i;
    };
    fn.describe = (f) => {
      const i = idx(f);
      const rank = cta ? cta(f) : f[0]!;
      const parts: string[] = [];
      if (i < 0 || i >= len) parts.push(`index ${ref.index.k === 'num' ? '' : `${showExpr(ref.index)} = `}${i} is outside ${info.name}[${len}] (0..${len - 1})`);
      if (rank < 0 || rank >= clusterSize) parts.push(`CTA rank ${ref.cta ? `${showExpr(ref.cta)} = ` : ''}${rank} is outside the cluster of ${clusterSize} (0..${clusterSize - 1})`);
      return parts.join('; ') || 'in range';
    };
    return fn;
  };
  const barKey = (ref: BarRef, loc: SrcLoc): KeyFn => refKey('barrier', ref, loc);
  /** Key function of a buffer reference; `bytes`: the operation's byte count (the range's length). */
  const bufKey = (ref: BufRef, loc: SrcLoc, bytes?: Expr): KeyFn => {
    const whole = refKey('buffer', ref, loc);
    const info = bufByName.get(ref.name)!;
    if (!info.ranged && info.ctaOnly < 0) return whole;
    return rangedKey(ref, info, whole, ref.offset ? cx(ref.offset, loc) : null, info.ranged && bytes ? cx(bytes, loc) : null, space, clusterSize);
  };

  /**
   * `warpScoped`: the operation sits under an `if` whose condition reads `warp` or `warpgroup`
   * (directly or through a variable computed from them): the sketch has chosen the warps that run
   * it, so one thread's operation is the elected lane of each warp that reaches it, as PTX's
   * `if (warp_idx == k && elect_one_sync())`, not warp 0's alone.
   */
  const emitOp = (op: Op, loc: SrcLoc, inElect: boolean, warpScoped: boolean) => {
    const written = 'per' in op ? op.per : undefined;
    if (inElect && written && written !== 'one') {
      throw new KernelError(`role ${r.name}: ${op.op} per=${written} inside elect: only the elected thread runs the block, so the operation would be one thread's`, loc, 'per-in-elect');
    }
    const spaceWhy = memorySpaceProblem(op, (n) => bufByName.get(n)?.space);
    if (spaceWhy) throw new KernelError(spaceWhy, loc, 'memory-space');
    const bad = operandProblem(op, constOf, (n) => bufByName.get(n)?.bytes);
    if (bad) throw new KernelError(bad.message, loc, bad.code);
    const ints: Record<string, CompiledExpr> = {};
    const ins: OpInstr = { i: 'op', op, per: inElect ? 'one' : ('per' in op && op.per) || r.per, loc, ints, text: opText(op, scalars), opc: OPC[op.op], uid: uids.next++ };
    for (const key of ['count', 'expectTx', 'bytes', 'parity', 'n', 'id', 'threads', 'cycles', 'multicast', 'chunks', 'value', 'lo', 'hi', 'target', 'compare'] as const) {
      const e = (op as Record<string, unknown>)[key];
      if (e && typeof e === 'object') ints[key] = cx(e as Expr, loc);
    }
    if ('bar' in op) ins.bar = barKey(op.bar, loc);
    const opBytes = 'bytes' in op ? op.bytes : undefined;
    if ('dst' in op) ins.buf = bufKey(op.dst, loc, opBytes);
    if ('src' in op) {
      // A copy between two buffers (tcgen05.cp: shared memory → TMEM; shared::cta → shared::cluster): `buf` is its destination, `reads` its source.
      if ('dst' in op) ins.reads = [bufKey(op.src, loc, opBytes)];
      else ins.buf = bufKey(op.src, loc, opBytes);
    }
    if ((op.op === 'tcgen05.mma' || op.op === 'tcgen05.alloc' || op.op === 'tcgen05.dealloc' || op.op === 'tcgen05.relinquish_alloc_permit') && op.pair && clusterSize % 2 !== 0) {
      const launch = clusterSize === 1 ? '; this launch is not a cluster launch' : '';
      throw new KernelError(`${op.op}.cta_group::2 runs on a CTA pair: the cluster has ${clusterSize} CTA${clusterSize === 1 ? '' : 's'}, it needs an even number (ranks 2p and 2p + 1 of a cluster form a pair${launch}; write cluster=2 on the kernel line)`, loc, 'cta-pair');
    }
    if ((op.op === 'tcgen05.alloc' || op.op === 'tcgen05.dealloc') && bufByName.get(op.buf.name)?.cols === undefined) {
      throw new KernelError(`${op.op} ${op.buf.name}: only a TMEM buffer declared with cols=N is allocated (tmem ${op.buf.name}[...] bytes=... cols=N)`, loc, 'tmem-cols');
    }
    if ('buf' in op) ins.buf = bufKey(op.buf, loc, opBytes);
    if ('acc' in op) ins.buf = bufKey(op.acc, loc);
    if ('reads' in op) ins.reads = op.reads.map((x) => bufKey(x, loc));
    if ('token' in op && op.token !== undefined) {
      if (op.op === 'mbarrier.arrive') ins.token = declare(op.token, loc);
      else {
        if (!declared.has(op.token)) throw new KernelError(`token variable '${op.token}' is used before an arrive sets it`, loc, 'unknown-name');
        ins.token = slots.indexOf(op.token);
      }
    }
    if ('dest' in op && op.dest !== undefined) ins.dest = declare(op.dest, loc);
    if (op.op === 'mbarrier.wait' && op.parity === undefined && op.token === undefined) {
      throw new KernelError('a wait needs a phase parity or a token', loc, 'wait-operand');
    }
    // In a role that runs one agent per warp, one thread of the role is warp 0's elected lane:
    // the other warps step over the operation (unless the role's code is run as written, or a
    // condition on the warp chose the warps that reach it).
    const guard: Instr | null = split && !r.asWritten && !warpScoped && (ins.per === 'one' || SINGLE_THREAD_OPS.has(op.op))
      ? { i: 'jz', e: (f) => (f[WARP_SLOT] === 0 ? 1 : 0), to: -1, loc, src: { k: 'bin', op: '==', a: { k: 'var', name: 'warp' }, b: { k: 'num', v: 0 } } }
      : null;
    if (guard) code.push(guard);
    code.push(ins);
    if (guard) (guard as { to: number }).to = code.length;
  };

  /** Variables whose value depends on the warp (computed from `warp`, `warpgroup` or another of them). */
  const warpVars = new Set(['warp', 'warpgroup']);
  const readsWarp = (e: Expr | undefined) => e !== undefined && [...exprNames(e)].some((n) => warpVars.has(n));
  const walk = (stmts: Stmt[], inElect: boolean, warpScoped: boolean) => {
    for (const st of stmts) {
      switch (st.s) {
        case 'let': {
          if (readsWarp(st.value)) warpVars.add(st.name);
          const e = cx(st.value, st.loc);
          code.push({ i: 'set', slot: declare(st.name, st.loc), e, loc: st.loc, src: st.value });
          break;
        }
        case 'for': {
          const from = cx(st.from, st.loc);
          const to = cx(st.to, st.loc);
          const v = declare(st.var, st.loc);
          const step = st.step ? cx(st.step, st.loc) : null;
          code.push({ i: 'set', slot: v, e: from, loc: st.loc, src: st.from });
          const head = code.length;
          const loop = { slot: v, from: st.from, to: st.to, ...(st.step ? { step: st.step } : {}) };
          const jz: Instr = step
            ? { i: 'jz', e: (f) => { const s = nonZeroStep(step(f)); return s > 0 ? (f[v]! < to(f) ? 1 : 0) : (f[v]! > to(f) ? 1 : 0); }, to: -1, loc: st.loc, loop }
            : { i: 'jz', e: (f) => (f[v]! < to(f) ? 1 : 0), to: -1, loc: st.loc, src: { k: 'bin', op: '<', a: { k: 'var', name: st.var }, b: st.to }, loop };
          code.push(jz);
          if (readsWarp(st.from) || readsWarp(st.to) || readsWarp(st.step)) warpVars.add(st.var);
          walk(st.body, inElect, warpScoped);
          // i + 1 ≤ to: exact
          code.push(step ? { i: 'set', slot: v, e: (f) => add(f[v]!, step(f)), loc: st.loc, src: { k: 'bin', op: '+', a: { k: 'var', name: st.var }, b: st.step! } } : { i: 'set', slot: v, e: (f) => f[v]! + 1, loc: st.loc, src: { k: 'bin', op: '+', a: { k: 'var', name: st.var }, b: { k: 'num', v: 1 } } });
          code.push({ i: 'jmp', to: head });
          jz.to = code.length;
          break;
        }
        case 'if': {
          const jz: Instr = { i: 'jz', e: cx(st.cond, st.loc), to: -1, loc: st.loc, src: st.cond };
          code.push(jz);
          const scoped = warpScoped || readsWarp(st.cond);
          walk(st.then, inElect, scoped);
          if (st.else && st.else.length) {
            const j: Instr = { i: 'jmp', to: -1 };
            code.push(j);
            jz.to = code.length;
            walk(st.else, inElect, scoped);
            j.to = code.length;
          } else jz.to = code.length;
          break;
        }
        case 'elect':
          walk(st.body, true, warpScoped);
          break;
        case 'op':
          emitOp(st.op, st.loc, inElect, warpScoped);
          break;
        case 'label':
        case 'goto':
          gotoStmt(st, code, labels, cx);
          break;
      }
    }
  };
  const labels: Labels = { at: new Map(), fix: [] };
  // A role's `per` is its operations' default; an operation's own `per=` overrides it (only an
  // `elect:` block makes its body one thread's, whatever the operation says).
  walk(r.body, false, false);
  code.push({ i: 'end' });
  resolveGotos(labels, r.name);
  return { name: r.name, decl: r, code, slots, threads, warps: r.warps, split };
}

/** Label positions of a role's code and the jumps still to be pointed at them. */
interface Labels { at: Map<string, number>; fix: { ins: { to: number }; label: string; loc: SrcLoc }[] }

/** Compiles a `label` (records the position) or a `goto` (a `jmp`, or a `jz` on the negated condition). */
function gotoStmt(st: Extract<Stmt, { s: 'label' | 'goto' }>, code: Instr[], labels: Labels, cx: (e: Expr, loc: SrcLoc) => CompiledExpr): void {
  if (st.s === 'label') {
    if (labels.at.has(st.name)) throw new KernelError(`label ${st.name} is defined twice`, st.loc, 'duplicate');
    labels.at.set(st.name, code.length);
    return;
  }
  let ins: Instr & { to: number };
  if (st.cond) {
    const c = cx(st.cond, st.loc);
    ins = { i: 'jz', e: (f) => (c(f) ? 0 : 1), to: -1, loc: st.loc, src: { k: 'un', op: '!', a: st.cond } };
  } else ins = { i: 'jmp', to: -1 };
  code.push(ins);
  labels.fix.push({ ins, label: st.label, loc: st.loc });
}

/** Points every `goto` at its label; an unknown label is a {@link KernelError} at the goto. */
function resolveGotos(labels: Labels, role: string): void {
  for (const f of labels.fix) {
    const to = labels.at.get(f.label);
    if (to === undefined) throw new KernelError(`role ${role}: goto ${f.label}: no such label`, f.loc, 'unknown-name');
    f.ins.to = to;
  }
}

/** Where variable `name` is first written in `e`, for messages. */
function findVarLoc(e: Expr, name: string): SrcLoc | undefined {
  return foldExpr<SrcLoc | undefined>(e, (x) => (x.k === 'var' && x.name === name ? x.loc : undefined), (_x, a, b) => a ?? b);
}
