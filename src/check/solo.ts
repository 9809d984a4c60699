/**
 * Solo runs for the static checks (static.ts): one agent's code run alone from its initial
 * position, every operation taken as completing at once (waits pass, nothing blocks), counting what
 * it does on each barrier: arrivals and arrivers, waits and the parity of the first, inits, the
 * operations that name a barrier or carry tx bytes, named-barrier uses and the instructions run.
 */
import { EvalFault } from '../kernel/expr.js';
import { maskRanks } from '../machine/cta-mask.js';
import { perThreads, type OpInstr, type Program } from '../machine/program.js';
import type { SrcLoc } from '../kernel/ir.js';
import type { Governor } from '../machine/governor.js';

/** What the solo runs of all agents saw, gathered into one record. */
export interface Solo {
  /** Arrivals per barrier key. */
  arrivals: Map<number, number>;
  /** The agents that arrive on each barrier key. */
  arrivers: Map<number, Set<number>>;
  /** Arrive operations per barrier key and arriving agent (an operation may bring several arrivals). */
  arriveOpsBy: Map<number, Map<number, number>>;
  /** Waits per barrier key; parity-0 waits separately. */
  waits: Map<number, number>;
  /** Barrier keys that a wait with parity 0 names (it needs a phase to complete). */
  needs: Set<number>;
  /** Barrier keys named by any operation other than init. */
  used: Set<number>;
  /** Barrier keys whose arrival count cannot be known statically (arrive_drop, cp.async arrive, re-init). */
  unknown: Set<number>;
  /** Per barrier key: the count of its last init, how many inits ran, the first one's location. */
  inits: Map<number, { count: number; n: number; loc: SrcLoc }>;
  /** Named barriers: key cta × 16 + id → counts seen, `agent:op` pairs, first location. */
  named: Map<number, { counts: Set<number>; kinds: Set<string>; loc: SrcLoc }>;
  /** The first wait and the first arrival on each barrier key. */
  waitLocs: Map<number, SrcLoc>;
  arriveLocs: Map<number, SrcLoc>;
  /** Instructions executed, as `role:pc`. */
  ran: Set<string>;
  /** Barrier keys that an operation carrying tx bytes names (a copy's completion, expect_tx, complete_tx). */
  tx: Set<number>;
}

/** The most steps one solo run takes before it is deemed not to finish. */
const LIMIT = 2_000_000;

function addArriver(out: Solo, k: number, a: number): void {
  let set = out.arrivers.get(k);
  if (!set) out.arrivers.set(k, (set = new Set()));
  set.add(a);
  let by = out.arriveOpsBy.get(k);
  if (!by) out.arriveOpsBy.set(k, (by = new Map()));
  by.set(a, (by.get(a) ?? 0) + 1);
}

/** An empty {@link Solo} record for the solo runs to fill. */
export function emptySolo(): Solo {
  return {
    arrivals: new Map(), arrivers: new Map(), arriveOpsBy: new Map(), waits: new Map(), needs: new Set(), used: new Set(), unknown: new Set(), inits: new Map(), named: new Map(),
    waitLocs: new Map(), arriveLocs: new Map(), ran: new Set(), tx: new Set(),
  };
}

/**
 * Runs agent `a` of `p` alone from `frame0` / `pc0`, every operation completing at once, adding
 * what it does to `out`, its waits per barrier key to `perAgentWaits` and the parity of its first
 * wait on each key to `firstParity` (`ctaThreads`: a `bar.sync` without a thread count counts
 * the CTA's). Returns false when its control flow depends on a run-time result (a wait's
 * destination), an expression faults, it runs past the step bound or `gov` stops it.
 */
export function solo(p: Program, a: number, frame0: number[], pc0: number, out: Solo, perAgentWaits: Map<number, number>, firstParity: Map<number, number>, ctaThreads: number, gov: Governor): boolean {
  try {
    return soloUnguarded(p, a, frame0, pc0, out, perAgentWaits, firstParity, ctaThreads, gov);
  } catch (err) {
    // An expression that faults (division by zero, overflow): not decidable alone; the search reports it.
    if (err instanceof EvalFault) return false;
    throw err;
  }
}

/** {@link solo} without the guard for faulting expressions. */
function soloUnguarded(p: Program, a: number, frame0: number[], pc0: number, out: Solo, perAgentWaits: Map<number, number>, firstParity: Map<number, number>, ctaThreads: number, gov: Governor): boolean {
  const info = p.agents[a]!;
  const code = p.roles[info.role]!.code;
  const f = frame0.slice();
  let pc = pc0;
  const bump = (map: Map<number, number>, k: number, by: number) => map.set(k, (map.get(k) ?? 0) + by);
  for (let steps = 0; steps < LIMIT; steps++) {
    // A bound (time, memory) stops the solo runs: the static findings are left out.
    if (gov.tick() !== null) return false;
    const ins = code[pc]!;
    switch (ins.i) {
      case 'set':
        f[ins.slot] = ins.e(f);
        pc++;
        continue;
      case 'jmp':
        pc = ins.to;
        continue;
      case 'jz':
        pc = ins.e(f) ? pc + 1 : ins.to;
        continue;
      case 'end':
        return true;
      case 'op':
        break;
    }
    const op = ins as OpInstr;
    if (op.dest !== undefined) return false;
    out.ran.add(`${info.role}:${pc}`);
    const mult = perThreads(op.per, info);
    const k = op.bar ? op.bar(f) : -1;
    switch (op.op.op) {
      case 'mbarrier.init': {
        if (k < 0) break;
        const count = op.ints.count ? op.ints.count(f) : p.barrierOf(k).info.count;
        const prev = out.inits.get(k);
        out.inits.set(k, { count, n: (prev?.n ?? 0) + 1, loc: op.loc });
        if (prev) out.unknown.add(k);
        break;
      }
      case 'mbarrier.arrive': {
        if (k < 0) break;
        out.used.add(k);
        const o = op.op;
        if (o.drop) out.unknown.add(k);
        if (o.expectTx) out.tx.add(k);
        bump(out.arrivals, k, mult * (op.ints.count ? op.ints.count(f) : 1));
        addArriver(out, k, a);
        if (!out.arriveLocs.has(k)) out.arriveLocs.set(k, op.loc);
        break;
      }
      case 'tcgen05.commit': {
        if (k < 0) break;
        const targets: number[] = [];
        if (op.ints.multicast) {
          const sel = maskRanks(op.ints.multicast(f), p.clusterSize);
          if (!Array.isArray(sel)) return false; // the machine stops the agent here
          const rank = Math.floor(k / p.barriersPerCta) - info.cluster * p.clusterSize;
          for (const r of sel) targets.push(k + (r - rank) * p.barriersPerCta);
        } else targets.push(k);
        for (const t of targets) {
          out.used.add(t);
          bump(out.arrivals, t, 1);
          addArriver(out, t, a);
          if (!out.arriveLocs.has(t)) out.arriveLocs.set(t, op.loc);
        }
        break;
      }
      case 'st.async':
      case 'cp.async.bulk.shared::cluster':
        if (k >= 0) { out.used.add(k); out.tx.add(k); }
        break;
      case 'cp.async.mbarrier.arrive':
        if (k >= 0) {
          out.used.add(k);
          out.unknown.add(k);
        }
        break;
      case 'cp.async.bulk': {
        if (k < 0) break;
        out.used.add(k);
        out.tx.add(k);
        if (op.ints.multicast) {
          const sel = maskRanks(op.ints.multicast(f), p.clusterSize);
          if (!Array.isArray(sel)) return false; // the machine stops the agent here
          const rank = Math.floor(k / p.barriersPerCta) - info.cluster * p.clusterSize;
          for (const r of sel) { out.used.add(k + (r - rank) * p.barriersPerCta); out.tx.add(k + (r - rank) * p.barriersPerCta); }
        }
        break;
      }
      case 'mbarrier.wait':
        if (k < 0) break;
        out.used.add(k);
        if (!perAgentWaits.has(k)) firstParity.set(k, op.ints.parity ? op.ints.parity(f) & 1 : 0);
        bump(perAgentWaits, k, 1);
        if (!op.ints.parity || op.ints.parity(f) === 0) out.needs.add(k);
        if (!out.waitLocs.has(k)) out.waitLocs.set(k, op.loc);
        break;
      case 'mbarrier.expect_tx':
      case 'mbarrier.complete_tx':
        if (k >= 0) { out.used.add(k); out.tx.add(k); }
        break;
      case 'mbarrier.inval':
      case 'mbarrier.pending_count':
        if (k >= 0) out.used.add(k);
        break;
      case 'bar.sync':
      case 'bar.arrive': {
        const id = op.ints.id!(f) & 15;
        const nk = info.cta * 16 + id;
        const count = op.ints.threads ? op.ints.threads(f) : ctaThreads;
        let e = out.named.get(nk);
        if (!e) out.named.set(nk, (e = { counts: new Set(), kinds: new Set(), loc: op.loc }));
        e.counts.add(count);
        e.kinds.add(`${a}:${op.op.op}`);
        break;
      }
      case 'exit':
        return true;
      default:
        break;
    }
    pc++;
  }
  return false;
}
