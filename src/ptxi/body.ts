/**
 * The PTX front end's emission of an entry's body: its basic blocks as IR statements, one
 * instruction at a time (insn.ts, alu.ts), with the branch, divergence and reconvergence protocol of
 * lane-varying branches (docs/PTX.md). translate.ts builds the environment and the kernel around it.
 */
import { descriptorLow } from './desc.js';
import type { SrcLoc, Stmt } from '../kernel/ir.js';
import type { Module } from '../ptx/ast.js';
import { isLibraryPath } from '../ptx/inlined.js';
import { cudaLocation, cudaOrigin, type CudaLocation } from '../ptx/resolve.js';
import { aluStmts, isAlu } from './alu.js';
import { destsOf, type Facts } from './analysis.js';
import { unknownMnemonic } from './mnemonics.js';
import { bin, MissingParam, num, NotModelled, Opaque, predMask, setMask, v, FULL, LANES } from './emit.js';
import { branchTarget, type Cfg, type Flat, type FlatIns } from './flat.js';
import { insStmts, type InsEnv } from './insn.js';
import { globalSpin, isSpinTest } from './spin.js';
import { neededRegs } from './needed.js';

/** Opcodes (first word) with an effect beyond their destination registers: never left out. */
const EFFECTS = new Set(['ld', 'st', 'mbarrier', 'cp', 'bar', 'barrier', 'wgmma', 'tcgen05', 'fence', 'membar', 'atom', 'red', 'call', 'ret', 'exit', 'trap', 'brkpt', 'clusterlaunchcontrol', 'multimem', 'mapa']);

/**
 * The statements of an entry's body: the registers it needs declared, then each basic block's
 * instructions (those nothing modelled reads are left out; one the model cannot run becomes a
 * `trap` there), with the branch and reconvergence protocol of lane-varying branches (docs/PTX.md).
 */
export function emitBody(m: Module, flat: Flat, cfg: Cfg, facts: Facts, env: InsEnv, at: (p: { line: number; col: number }) => SrcLoc, file: string): Stmt[] {
  const roots = (it: FlatIns): string[] => it.ins.operands.slice(1, 3).flatMap((o) => {
    if (o.kind !== 'name') return [];
    const low = descriptorLow(facts, it.name(o.name));
    if (low) return [low];
    try { return [env.descRoot(it, it.name(o.name))]; } catch { return []; }
  });
  const regs = neededRegs(flat, roots, (it) => env.isFlag(it), env.values);
  env.needed = regs;
  const loc0: SrcLoc = { file, line: 1, col: 1 };
  const out: Stmt[] = [];
  for (const r of regs) {
    if (facts.opaque(r) || !flat.regType(r)) continue;
    out.push({ s: 'let', name: r, value: num(0), loc: loc0 });
    if (facts.kind(r) !== 'U') for (let l = 0; l < LANES; l++) out.push({ s: 'let', name: `${r}@${l}`, value: num(0), loc: loc0 });
  }
  for (const b of facts.varyingBranch) for (const x of ['div', 'pend', 'save', 'T']) out.push({ s: 'let', name: `%${x}#${b}`, value: num(0), loc: loc0 });
  out.push({ s: 'let', name: '%lanes', value: num(0), loc: loc0 });
  out.push(...setMask(num(FULL), loc0));
  const sitesAt = new Map<number, number[]>();
  for (const b of facts.varyingBranch) { const j = cfg.ipdom[b]!; if (j >= 0) (sitesAt.get(j) ?? sitesAt.set(j, []).get(j)!).push(b); }
  const blockLabel = (b: number) => `B${b}`;
  cfg.blocks.forEach((blk, bi) => {
    out.push({ s: 'label', name: blockLabel(bi), loc: loc0 });
    for (const b of (sitesAt.get(bi) ?? []).sort((x, y) => y - x)) out.push(...reconverge(b, bi, loc0));
    const divergent = facts.divergent.has(bi);
    for (let i = blk.from; i < blk.to; i++) {
      const it = flat.items[i]!;
      if ('label' in it) continue;
      const dests = destsOf(it);
      // A definition nothing modelled reads (floating point, global addresses) is left out, whatever its opcode.
      if (dests.length && dests.every((d) => !regs.has(d) || facts.opaque(d)) && !EFFECTS.has(it.ins.base)) continue;
      const loc = withCuda(m, it, at(it.ins.pos));
      if (it.ins.base === 'bra') { out.push(...branch(env, cfg, it, bi, loc, facts.varyingBranch.has(bi))); continue; }
      try {
        const guard = it.ins.guard ? predMask(env, it.name(it.ins.guard.pred), it.ins.guard.negated) : undefined;
        env.pre = [];
        const ss = isAlu(it) ? aluStmts(env, it, loc, divergent, guard) : insStmts(env, it, loc, divergent, guard, isSpinTest(flat, i), globalSpin(flat, i));
        out.push(...env.pre.map((p) => ({ ...p, loc })), ...(env.guardMixed?.(ss) ?? ss));
      } catch (err) {
        if (!(err instanceof Opaque || err instanceof NotModelled)) throw err;
        const unknown = unknownMnemonic(it.ins);
        // An instruction mbsim does not know at all (a typo ptxas rejects): said so, with no claim about the hardware.
        const why = unknown !== undefined ? `unknown instruction: mbsim does not know '${unknown}' (not a PTX instruction it recognizes; ptxas would likely reject it)` : err instanceof Opaque ? err.message : `not modelled yet: ${err.message}`;
        out.push({ s: 'op', op: { op: 'trap', message: `${it.ins.opcode}: ${why}`, ...(err instanceof MissingParam ? { missingParams: err.names } : {}) }, loc });
      }
    }
  });
  return out;
}

/**
 * The PTX location with the CUDA line of its `.loc` (-lineinfo) and its inlined-at call sites as
 * `origin` (ptx/inlined.ts). An instruction of a library function kept as a `.func` (`-G`: every
 * `cuda::ptx` wrapper is one, called with `call.uni`) whose `.loc` names only the toolkit's or
 * CCCL's headers cites the innermost call site in the user's code instead, as inlined code does.
 */
function withCuda(m: Module, it: FlatIns, loc: SrcLoc): SrcLoc {
  let c = cudaLocation(m, it.ins);
  if (it.calls && (!c || libraryOnly(c))) {
    for (const site of it.calls) {
      const s = cudaLocation(m, site);
      if (s && !libraryOnly(s)) { c = s; break; }
    }
  }
  const origin = cudaOrigin(c);
  return origin ? { ...loc, origin } : loc;
}

/** Whether every frame of a CUDA location (and the call sites it was inlined at) is a library header's. */
function libraryOnly(c: CudaLocation): boolean {
  for (let f: CudaLocation | undefined = c; f; f = f.inlinedAt) if (!isLibraryPath(f.path)) return false;
  return true;
}

/** A branch at the end of block `bi`: a goto, or the divergence protocol of a lane-varying predicate (docs/PTX.md). */
function branch(env: InsEnv, cfg: Cfg, it: FlatIns, bi: number, loc: SrcLoc, varying: boolean): Stmt[] {
  const target = branchTarget(it)!;
  const tb = cfg.labelBlock.get(target);
  if (tb === undefined) return [{ s: 'op', op: { op: 'trap', message: `bra ${target}: no such label` }, loc }];
  const to = `B${tb}`;
  const g = it.ins.guard;
  if (!g) return [{ s: 'goto', label: to, loc }];
  const p = it.name(g.pred);
  if (env.facts.opaque(p)) return [{ s: 'op', op: { op: 'trap', message: `${it.ins.opcode}: ${new Opaque(p, env.facts.opaqueCause?.(p)).message}` }, loc }];
  if (!varying) return [{ s: 'goto', label: to, cond: g.negated ? bin('==', v(p), num(0)) : bin('!=', v(p), num(0)), loc }];
  const T = `%T#${bi}`;
  const fall = `B${bi + 1}`;
  const out: Stmt[] = [
    { s: 'let', name: T, value: bin('&', v('%mask'), predMask(env, p, g.negated)), loc },
    { s: 'goto', label: to, cond: bin('==', v(T), v('%mask')), loc },
    { s: 'goto', label: fall, cond: bin('==', v(T), num(0)), loc },
  ];
  if (cfg.ipdom[bi]! < 0) {
    out.push({ s: 'op', op: { op: 'trap', message: `${it.ins.opcode}: the lanes of a warp diverge here and their paths never meet again before the kernel ends: not modelled yet` }, loc });
    return out;
  }
  out.push(
    { s: 'if', cond: bin('==', v(`%div#${bi}`), num(0)), then: [{ s: 'let', name: `%save#${bi}`, value: v('%mask'), loc }], loc },
    { s: 'let', name: `%div#${bi}`, value: num(1), loc },
    { s: 'let', name: `%pend#${bi}`, value: bin('|', v(`%pend#${bi}`), bin('&', v('%mask'), { k: 'un', op: '~', a: v(T) })), loc },
    ...setMask(v(T), loc),
    { s: 'goto', label: to, loc },
  );
  return out;
}

/** Reconvergence of branch site `b` at its immediate post-dominator: run the pending lanes, then restore the mask. */
function reconverge(b: number, j: number, loc: SrcLoc): Stmt[] {
  const skip = `R${b}@${j}.skip`;
  const pend = `R${b}@${j}.pend`;
  return [
    { s: 'goto', label: skip, cond: bin('==', v(`%div#${b}`), num(0)), loc },
    { s: 'goto', label: pend, cond: bin('!=', v(`%pend#${b}`), num(0)), loc },
    ...setMask(v(`%save#${b}`), loc),
    { s: 'let', name: `%div#${b}`, value: num(0), loc },
    { s: 'goto', label: skip, loc },
    { s: 'label', name: pend, loc },
    ...setMask(v(`%pend#${b}`), loc),
    { s: 'let', name: `%pend#${b}`, value: num(0), loc },
    { s: 'goto', label: `B${b + 1}`, loc },
    { s: 'label', name: skip, loc },
  ];
}
