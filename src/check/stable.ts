/**
 * Stable waits, for the partial-order reduction: a blocking `mbarrier.try_wait.parity` of agent A
 * that passes now and whose barrier's current phase cannot complete before A moves. Such a wait
 * commutes with every step the other agents and asynchronous operations can take until A moves
 * (it only reads the barrier, and the one kind of step that could disable it, the completion of
 * the barrier's current phase, cannot happen first), so taking it alone (a single-step persistent
 * set) keeps every reachable hazard, deadlock and final state (docs/CHECK.md, "Stable waits").
 *
 * "Cannot complete before A moves" is decided by an over-approximation of what the rest of the
 * kernel can still signal while A stays where it is. Start with every barrier *gated* (its current
 * phase frozen); a barrier stops being gated when an operation in flight targets it, or when some
 * other agent, run forward from its current position on its own frame, signals it before it
 * blocks. An agent run forward blocks only where it certainly would while A stays put: at a wait
 * on a gated barrier whose frozen phase does not pass it, at a `wgmma.wait_group` that needs an MMA
 * of A's warpgroup that A has not issued (a wgmma completes only once every warp of its warpgroup
 * issued it), or at its end. Everything else it is assumed to pass (more signals: conservative).
 * The gated set shrinks to a fixpoint; the wait is stable when its barrier is still gated and
 * nothing (no arrival, bytes, init or inval, from an agent or in flight) can reach it first. An
 * agent whose control flow depends on a value the forward run cannot know (a `test_wait` result,
 * a pending count, a token) or that runs longer than a step budget makes the answer "not stable".
 */
import { testParity } from '../model/mbarrier.js';
import type { MachineState } from '../machine/machine.js';
import { perThreads, type Instr, type OpInstr, type Program } from '../machine/program.js';
import { OPC } from '../machine/ops/index.js';

/** Most instructions one agent is run forward per question (then the wait counts as not stable). */
export const FORWARD_BUDGET = 20_000;
/** Most instructions all forward runs of one question take together (then the wait counts as not stable). */
export const TOTAL_BUDGET = 200_000;

const GIVE_UP = -1;
const OPC_ST_ASYNC = OPC['st.async'];
const OPC_CHOOSE = OPC['choose'];
const OPC_TRY_CANCEL = OPC['clc.try_cancel'];
const OPC_DSMEM = OPC['cp.async.bulk.shared::cluster'];

/**
 * True when agent `a`'s wait on barrier key `bar` with parity `parity` is stable in `s` (see the
 * module comment). `codes[x]`: agent x's role code. The wait must be a parity wait on a barrier of
 * `a`'s own CTA that passes in `s`.
 */
export function stableWait(p: Program, codes: readonly Instr[][], s: MachineState, a: number, bar: number, parity: number): boolean {
  const b = s.bars[bar];
  if (!b || b.status !== 'valid' || !testParity(b, parity)) return false;
  const n = s.bars.length;
  const gated = new Uint8Array(n).fill(1);
  const arrivals = new Float64Array(n);
  const tx = new Uint8Array(n);
  const reset = new Uint8Array(n);
  const signal: Signal = (key, count, bytes, init) => {
    if (key < 0 || key >= n) return;
    arrivals[key] += count;
    if (bytes) tx[key] = 1;
    if (init) reset[key] = 1;
  };
  // A phase can complete when the arrivals it still misses can all come, and, when it misses
  // only bytes, when some copy or complete_tx can still bring them (tx-counts are not bounded
  // here: more bytes than missing only over-approximates). An init or inval changes it anyway.
  const completable = (key: number) => {
    const x = s.bars[key]!;
    if (x.status !== 'valid' || reset[key]) return true;
    if (arrivals[key] < x.pending) return false;
    return x.pending > 0 || arrivals[key] > 0 || x.tx <= 0 || tx[key] === 1;
  };
  // Only the waiter's cluster can signal its barrier or the barriers its cluster's agents wait on.
  const cl = p.agents[a]!.cluster;
  const budget = { left: TOTAL_BUDGET };
  for (let round = 0; round < 64; round++) {
    arrivals.fill(0);
    tx.fill(0);
    reset.fill(0);
    for (const o of s.inflight) {
      const count = o.kind === 'remote' ? (o.remote === 'arrive' || o.remote === 'arrive.expect_tx' || o.remote === 'arrive_drop' ? o.count : 0) : o.kind === 'cpa.arrive' ? o.count : o.kind === 'tc.commit' ? 1 : 0;
      const bytes = o.kind === 'tma' || o.kind === 'st.async' || o.kind === 'dsmem' || o.kind === 'clc' || (o.kind === 'pick' && o.bar >= 0) || (o.kind === 'remote' && o.remote === 'complete_tx');
      if (o.bar >= 0) signal(o.bar, count, bytes, false);
      if (o.targets) for (const t of o.targets) signal(t, count, bytes, false);
      if (o.kind === 'pick' && o.bar >= 0 && o.bytes === 1) { // a multicast try_cancel: every CTA's barrier
        const off = o.bar % p.barriersPerCta;
        const first = Math.floor(o.bar / p.barriersPerCta) - (Math.floor(o.bar / p.barriersPerCta) % p.clusterSize);
        for (let c = first; c < first + p.clusterSize; c++) signal(c * p.barriersPerCta + off, 0, true, false);
      }
    }
    for (let x = 0; x < s.agents.length; x++) {
      if (x === a || s.agents[x]!.status !== 'run' || p.agents[x]!.cluster !== cl) continue;
      if (runForward(p, codes[x]!, s, x, a, gated, signal, budget) === GIVE_UP) return false;
    }
    let changed = false;
    for (let key = 0; key < n; key++) {
      if (gated[key] && completable(key)) {
        gated[key] = 0;
        changed = true;
      }
    }
    if (!gated[bar]) return false;
    // Nothing at all may reach the barrier first: the hazard checks on a passing wait read its
    // tx-count and pending count too (a copy's bytes beginning the next phase make a second pass
    // of a fresh barrier's parity 1 a phase alias), so a wait is stable only if it sees the same
    // barrier whenever it is taken.
    if (arrivals[bar]! > 0 || tx[bar] || reset[bar]) return false;
    if (!changed) return true;
  }
  return false;
}

/** What a step may contribute to barrier `key`: `count` arrivals, bytes (a tx source), or an init / inval. */
type Signal = (key: number, count: number, bytes: boolean, init: boolean) => void;

/**
 * Runs agent `x` forward from its position without changing `s`, calling `signal` with every
 * barrier key it signals before it certainly blocks (see the module comment). Returns 0, or
 * {@link GIVE_UP}.
 */
function runForward(p: Program, code: readonly Instr[], s: MachineState, x: number, a: number, gated: Uint8Array, signal: Signal, budget: { left: number }): number {
  const ag = s.agents[x]!;
  const f = ag.frame.slice();
  const infoX = p.agents[x]!;
  const infoA = p.agents[a]!;
  const sameWarpgroup = infoX.wgLeader === infoA.wgLeader;
  const aGroups = s.agents[a]!.wgGroup;
  const aIssued = s.agents[a]!.wgIssued;
  let issued = ag.wgIssued;
  let group = ag.wgGroup;
  /** Highest wgmma sequence number in each group committed during the run. */
  const groupTop = new Map<number, number>();
  let pc = ag.pc;
  try {
    for (let steps = 0; steps < FORWARD_BUDGET; steps++) {
      if (--budget.left < 0) return GIVE_UP;
      const ins = code[pc]!;
      switch (ins.i) {
        case 'set': f[ins.slot] = ins.e(f); pc++; continue;
        case 'jmp': pc = ins.to; continue;
        case 'jz': pc = ins.e(f) ? pc + 1 : ins.to; continue;
        case 'end': return 0;
        default: break;
      }
      const op = ins as OpInstr;
      switch (op.opc) {
        case 5: { // mbarrier.wait
          const w = op.op as Extract<OpInstr['op'], { op: 'mbarrier.wait' }>;
          if (w.dest !== undefined || w.token !== undefined || !op.ints.parity) return GIVE_UP;
          const key = op.bar!(f);
          if (key < 0) return 0; // faults when executed
          const bk = s.bars[key]!;
          if (gated[key] && bk.status === 'valid' && !testParity(bk, op.ints.parity(f))) return 0; // blocked while A stays
          break;
        }
        case 6: // mbarrier.pending_count: a value the run cannot know
          return GIVE_UP;
        case 25: // ld.shared: a value it reads (machine/values.ts) is one the run cannot know
          if (op.dest !== undefined) return GIVE_UP;
          break;
        case OPC_TRY_CANCEL: { // its response brings 16 bytes to its barrier (every CTA's with multicast)
          const key = op.bar!(f);
          if (key < 0) break;
          const off = key % p.barriersPerCta;
          const base = Math.floor(key / p.barriersPerCta);
          const all = (op.op as { multicast?: boolean }).multicast === true;
          const first = all ? base - (base % p.clusterSize) : base;
          for (let c = first; c < (all ? first + p.clusterSize : base + 1); c++) signal(c * p.barriersPerCta + off, 0, true, false);
          break;
        }
        case 0: case 1: case 2: case 3: case 4: case 7: case 12: case 18: { // init, inval, arrive, expect_tx, complete_tx, TMA, commit, cp.async arrive
          const key = op.bar!(f);
          if (key < 0) break;
          const lanes = perThreads(op.per, infoX);
          const count = op.opc === 2 ? (op.ints.count ? op.ints.count(f) : 1) * lanes : op.opc === 12 ? 1 : op.opc === 18 ? infoX.threads : 0;
          const bytes = op.opc === 4 || op.opc === 7 || (op.opc === 2 && !!op.ints.expectTx);
          signal(key, count, bytes, op.opc <= 1);
          // A multicast copy or commit signals the same barrier in the other CTAs of the cluster.
          if ((op.opc === 7 || op.opc === 12) && op.ints.multicast) {
            const off = key % p.barriersPerCta;
            const cl = Math.floor(Math.floor(key / p.barriersPerCta) / p.clusterSize);
            for (let r = 0; r < p.clusterSize; r++) {
              const k = (cl * p.clusterSize + r) * p.barriersPerCta + off;
              if (k !== key) signal(k, count, bytes, false);
            }
          }
          break;
        }
        case 14: // wgmma.mma_async
          issued++;
          break;
        case 15: // wgmma.commit_group
          groupTop.set(group, issued - 1);
          group++;
          break;
        case 16: { // wgmma.wait_group
          if (!sameWarpgroup) break;
          const limit = group - op.ints.n!(f);
          // A leader that stays put commits no more groups: a warp waiting for a later one blocks.
          if (infoA.wgLeader === a && aGroups < limit) return 0;
          // An MMA of a needed group that A has not issued cannot complete while A stays.
          for (const o of s.inflight) if (o.kind === 'wgmma' && o.agent === infoA.wgLeader && o.group < limit && o.seq >= aIssued) return 0;
          for (const [g, top] of groupTop) if (g < limit && top >= aIssued) return 0;
          break;
        }
        case 28: // exit
          return 0;
        case OPC_ST_ASYNC: case OPC_DSMEM: { // st.async / red.async, cp.async.bulk.shared::cluster: bytes on their barrier
          const key = op.bar!(f);
          if (key >= 0) signal(key, 0, true, false);
          break;
        }
        default:
          // choose, global loads / atomics / spins, launch-control queries: values and waits the run cannot know.
          if (op.opc >= OPC_CHOOSE) return GIVE_UP;
          break;
      }
      pc++;
    }
  } catch {
    return GIVE_UP; // an expression that faults: the machine reports it when the agent gets there
  }
  return GIVE_UP;
}
