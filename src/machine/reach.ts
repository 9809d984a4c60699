/**
 * What an agent can still signal from where it stands: the barriers its remaining code (the
 * instructions reachable from its pc) arrives on or moves the tx-count of, the named barriers it
 * can still join, and whether it can still arrive on the cluster barrier. The wait-for analysis
 * (`hang.ts`) uses it to name the agents that could release a blocked waiter, by barrier key (CTA
 * resolved), so a cycle is claimed only between agents that really signal one another.
 *
 * Two ways, the first when it applies: (1) the agent's code is run alone from its current frame,
 * every operation completing at once (waits pass) — exact when control flow depends only on
 * parameters and loop variables; (2) otherwise (a branch on a wait result, a step bound) every
 * instruction reachable in the control-flow graph counts, with each reference resolved from the
 * IR: a constant index or CTA rank names one barrier; a dynamic one, every barrier of the array
 * (any index, any CTA of the cluster).
 */
import { evalExpr } from '../kernel/expr.js';
import type { BarRef, Expr } from '../kernel/ir.js';
import { maskRanks } from './cta-mask.js';
import type { MachineState } from './machine.js';
import { BUILTINS, perThreads, type Instr, type OpInstr, type Program } from './program.js';

/** Signals agent `a` may still give, as barrier keys (flat, global) and named-barrier ids. */
export interface Reach {
  /** Barriers it may still arrive on (`mbarrier.arrive…`, `tcgen05.commit`, `cp.async.mbarrier.arrive`). */
  arrive: Set<number>;
  /** Barriers it may still credit bytes to (copies completing on them, `complete_tx`). */
  credit: Set<number>;
  /** Barriers it may still raise the tx-count of (`expect_tx`, `arrive.expect_tx`). */
  expect: Set<number>;
  /**
   * Bytes it would still credit minus bytes it would still expect, per barrier (exact runs only;
   * multiplicity as `per` says: every thread, one per warp, one). A barrier missing `n` bytes can
   * get them from this agent only if this is positive.
   */
  net: Map<number, number>;
  /** Named barrier ids (of its CTA) it may still join with `bar.sync` / `bar.arrive`; null: any id. */
  named: Set<number> | null;
  /** Whether it may still execute `barrier.cluster.arrive`. */
  cluster: boolean;
  /** True when found by running the code alone (exact), false for the control-flow over-approximation. */
  exact: boolean;
}

const STEP_LIMIT = 200_000;

function empty(exact: boolean): Reach {
  return { arrive: new Set(), credit: new Set(), expect: new Set(), net: new Map(), named: new Set(), cluster: false, exact };
}

/** The signals agent `a` of `s` may still give (see the module comment). */
export function remainingSignals(p: Program, s: MachineState, a: number): Reach {
  const ag = s.agents[a]!;
  if (ag.status !== 'run') return empty(true);
  return solo(p, a, ag.frame, ag.pc) ?? graph(p, a, ag.frame, ag.pc);
}

/**
 * Destination barrier keys of a copy or commit at `key` with multicast `mask` (undefined: no
 * `multicast=`, the unicast form), as the machine sends them (cta-mask.ts); none for a mask that
 * selects no CTA (the machine stops the agent there).
 */
function targets(p: Program, a: number, key: number, mask: number | undefined): number[] {
  if (mask === undefined) return [key];
  const sel = maskRanks(mask, p.clusterSize);
  if (!Array.isArray(sel)) return [];
  const rank = Math.floor(key / p.barriersPerCta) - p.agents[a]!.cluster * p.clusterSize;
  return sel.map((r) => key + (r - rank) * p.barriersPerCta);
}

function add(r: Reach, op: OpInstr, keys: number[], bytes = 0): void {
  const o = op.op;
  const net = (k: number, by: number) => r.net.set(k, (r.net.get(k) ?? 0) + by);
  for (const k of keys) {
    if (k < 0) continue;
    switch (o.op) {
      case 'mbarrier.arrive':
        r.arrive.add(k);
        if (o.expectTx) {
          r.expect.add(k);
          net(k, -bytes);
        }
        break;
      case 'tcgen05.commit':
      case 'cp.async.mbarrier.arrive':
        r.arrive.add(k);
        break;
      case 'mbarrier.expect_tx':
        r.expect.add(k);
        net(k, -bytes);
        break;
      case 'mbarrier.complete_tx':
      case 'cp.async.bulk':
      case 'st.async':
      case 'cp.async.bulk.shared::cluster':
        r.credit.add(k);
        net(k, bytes);
        break;
      case 'clc.try_cancel': // its response's complete_tx(16)
        r.credit.add(k);
        net(k, 16);
        break;
      default:
        break;
    }
  }
}

/** Runs the agent's code alone from `pc`; null when its control flow depends on a run-time result. */
function solo(p: Program, a: number, frame: number[], pc0: number): Reach | null {
  const code = p.roles[p.agents[a]!.role]!.code;
  const f = frame.slice();
  const r = empty(true);
  let pc = pc0;
  try {
    for (let steps = 0; steps < STEP_LIMIT; steps++) {
      const ins = code[pc]!;
      if (ins.i === 'end') return r;
      if (ins.i === 'set') { f[ins.slot] = ins.e(f); pc++; continue; }
      if (ins.i === 'jmp') { pc = ins.to; continue; }
      if (ins.i === 'jz') { pc = ins.e(f) ? pc + 1 : ins.to; continue; }
      if (ins.dest !== undefined) return null;
      const o = ins.op.op;
      if (o === 'exit') return r;
      if (o === 'bar.sync' || o === 'bar.arrive') r.named!.add(ins.ints.id!(f));
      else if (o === 'barrier.cluster.arrive') r.cluster = true;
      else if (ins.bar) {
        const key = ins.bar(f);
        const mask = (o === 'cp.async.bulk' || o === 'tcgen05.commit') && ins.ints.multicast ? ins.ints.multicast(f) : undefined;
        const info = p.agents[a]!;
        const mult = perThreads(ins.per, info);
        const bytes = ins.ints.bytes ? ins.ints.bytes(f) : ins.ints.expectTx ? ins.ints.expectTx(f) : 0;
        add(r, ins, key < 0 ? [] : targets(p, a, key, mask), bytes * mult);
      }
      pc++;
    }
  } catch {
    return r; // the agent would stop on this expression: what it signalled before counts
  }
  return null;
}

/** Value of `e` if it depends only on parameters and the agent's builtins, else null. */
function constant(p: Program, e: Expr, frame: number[]): number | null {
  try {
    const v = evalExpr(e, (n) => {
      const b = (BUILTINS as readonly string[]).indexOf(n);
      if (b >= 0) return frame[b];
      return p.params[n];
    });
    return Number.isFinite(v) ? v : null;
  } catch {
    return null;
  }
}

/** Every key `ref` may name for agent `a`: constant parts resolved, dynamic ones widened. */
function refKeys(p: Program, a: number, frame: number[], ref: BarRef, anyCta: boolean): number[] {
  const info = p.barriers.find((b) => b.name === ref.name);
  if (!info) return [];
  const me = p.agents[a]!;
  const base = me.cluster * p.clusterSize;
  const idx = constant(p, ref.index, frame);
  const rank = anyCta ? null : ref.cta ? constant(p, ref.cta, frame) : me.cta - base;
  const ranks = rank === null ? Array.from({ length: p.clusterSize }, (_, i) => i) : [rank];
  const idxs = idx === null ? Array.from({ length: info.length }, (_, i) => i) : [idx];
  const out: number[] = [];
  for (const c of ranks) for (const i of idxs) if (c >= 0 && c < p.clusterSize && i >= 0 && i < info.length) out.push((base + c) * p.barriersPerCta + info.offset + i);
  return out;
}

/** Every instruction reachable from `pc0` in the control-flow graph. */
function graph(p: Program, a: number, frame: number[], pc0: number): Reach {
  const code: Instr[] = p.roles[p.agents[a]!.role]!.code;
  const r = empty(false);
  const seen = new Set<number>();
  const todo = [pc0];
  while (todo.length) {
    const pc = todo.pop()!;
    if (seen.has(pc) || pc < 0 || pc >= code.length) continue;
    seen.add(pc);
    const ins = code[pc]!;
    if (ins.i === 'end') continue;
    if (ins.i === 'jmp') { todo.push(ins.to); continue; }
    if (ins.i === 'jz') { todo.push(pc + 1, ins.to); continue; }
    todo.push(pc + 1);
    if (ins.i !== 'op') continue;
    const o = ins.op;
    if (o.op === 'exit') { todo.pop(); continue; }
    if (o.op === 'bar.sync' || o.op === 'bar.arrive') {
      const id = constant(p, o.id, frame);
      if (id === null) r.named = null;
      else r.named?.add(id);
    } else if (o.op === 'barrier.cluster.arrive') r.cluster = true;
    else if ('bar' in o && o.bar) {
      const multicast = (o.op === 'cp.async.bulk' || o.op === 'tcgen05.commit') && o.multicast !== undefined;
      add(r, ins, refKeys(p, a, frame, o.bar, multicast));
    }
  }
  return r;
}
