/**
 * A role's statements compiled to the machine's flat code: `set` / `jmp` / `jz` / operation
 * instructions with closures over the agent's variable frame, barrier and buffer references
 * resolved to flat keys, `label` / `goto` pointed at their positions. Called by `instantiate`
 * (program.ts) once per role; errors are {@link KernelError}s with the statement's location. The
 * frame and the expressions over it are role-frame.ts's, the references' key functions
 * ref-keys.ts's, an operation's instruction compile-op.ts's; this module compiles the control flow.
 */
import { add, nonZeroStep } from '../kernel/arith.js';
import { exprNames, type CompiledExpr } from '../kernel/expr.js';
import type { Expr, RoleDecl, SrcLoc, Stmt } from '../kernel/ir.js';
import type { BufferSpace } from './views.js';
import { roleSplits } from './roles.js';
import { KernelError, type BarrierInfo, type BufferInfo, type Instr, type RoleCode } from './program.js';
import { roleFrame } from './role-frame.js';
import { refKeys } from './ref-keys.js';
import { emitOp, type OpCompile } from './compile-op.js';

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
  const scalars = new Set([...barByName.values(), ...bufByName.values()].filter((x) => x.scalar).map((x) => x.name));
  const threads = r.threads ?? r.warps * 32;
  if (threads > r.warps * 32 || threads < 1) {
    throw new KernelError(`role ${r.name} has ${threads} threads in ${r.warps} warp${r.warps === 1 ? '' : 's'}: a warp holds 1 to 32 threads`, r.loc, 'threads');
  }
  const split = !lockstep && roleSplits(r);
  const code: Instr[] = [];
  const frame = roleFrame(r.name, params);
  const { cx, declare } = frame;
  const ops: OpCompile = { role: r, frame, keys: refKeys(frame, clusterSize, barByName, bufByName, barriersPerCta, space), bufByName, scalars, clusterSize, split, uids, code };

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
          emitOp(ops, st.op, st.loc, inElect, warpScoped);
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
  return { name: r.name, decl: r, code, slots: frame.slots, threads, warps: r.warps, split };
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
