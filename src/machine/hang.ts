/**
 * Explains a state in which agents are blocked and nothing can progress: each blocked waiter, its
 * barrier's state, the missing arrivals (and which agents could still provide them), the expected
 * bytes no copy will deliver, and the wait-for cycle among blocked agents when there is one.
 * Used by the simulator (verdict `hang`) and the checker alike.
 */
import type { MBarrier } from '../model/mbarrier.js';
import type { SrcLoc } from '../kernel/ir.js';
import { pendingAsyncGroups, type Machine, type MachineState } from './machine.js';

/** One agent that can never proceed. */
export interface BlockedWaiter {
  agent: number;
  name: string;
  /** The operation it is blocked in, as source-like text. */
  op: string;
  loc: SrcLoc;
  kind: 'mbarrier' | 'bar.sync' | 'cluster' | 'wgmma' | 'bulk' | 'other';
  /** Barrier key and name (mbarrier waits). */
  bar?: number;
  barName?: string;
  state?: Pick<MBarrier, 'phase' | 'pending' | 'expected' | 'tx'>;
  parity?: number;
  /** Sentences in the field's words: why the wait cannot complete. */
  reasons: string[];
  /** Agents (by index) that could still signal what it waits for. */
  signallers: number[];
}

/** What is blocked and why. */
export interface HangReport {
  waiters: BlockedWaiter[];
  /** A wait-for cycle among blocked agents (names), when one exists. */
  cycle: string[] | null;
}

/** Operations that arrive on a barrier (count toward pending). */
const ARRIVE_OPS = new Set(['mbarrier.arrive', 'tcgen05.commit', 'cp.async.mbarrier.arrive']);
/** Operations that only move the tx-count. */
const TX_OPS = new Set(['mbarrier.complete_tx', 'mbarrier.expect_tx', 'cp.async.bulk']);

/**
 * Explains every running agent that is not enabled in `s`. Waiters come root causes first: a
 * barrier that expects bytes no copy in flight delivers, then waits no running agent can signal,
 * then the rest (waits on other blocked agents). `passedBefore(agent, barKey)`, when the driver
 * knows it (the checker's phase history), says whether that agent has passed a wait on that
 * barrier before: the producer-start parity hint is given only for a first wait.
 */
export function explainHang(m: Machine, s: MachineState, passedBefore?: (agent: number, bar: number) => boolean): HangReport {
  const p = m.program;
  const waiters: BlockedWaiter[] = [];
  const startHint = new Set<number>();
  const describe = (a: number): string => {
    const ag = s.agents[a]!;
    if (ag.status === 'done') return `${p.agents[a]!.name} (exited)`;
    if (ag.status === 'trap') return `${p.agents[a]!.name} (stopped)`;
    const ins = m.nextOp(s, a);
    return ins ? `${p.agents[a]!.name} (blocked in ${ins.text}, line ${ins.loc.line})` : p.agents[a]!.name;
  };
  for (let a = 0; a < s.agents.length; a++) {
    const ag = s.agents[a]!;
    if (ag.status !== 'run' || m.agentEnabled(s, a)) continue;
    const ins = m.nextOp(s, a);
    if (!ins) continue;
    const w: BlockedWaiter = { agent: a, name: p.agents[a]!.name, op: ins.text, loc: ins.loc, kind: 'other', reasons: [], signallers: [] };
    const op = ins.op;
    if (op.op === 'mbarrier.wait') {
      const key = ins.bar!(ag.frame);
      const b = s.bars[key]!;
      const barName = p.barrierName(key);
      const declName = p.barrierOf(key).info.name;
      w.kind = 'mbarrier';
      w.bar = key;
      w.barName = barName;
      w.state = { phase: b.phase, pending: b.pending, expected: b.expected, tx: b.tx };
      const raw = op.token !== undefined ? (ag.tokens?.[ins.token!]?.phase ?? 0) : ins.ints.parity!(ag.frame);
      const par = raw & 1;
      w.parity = par;
      w.reasons.push(`waits for phase ${b.phase} of ${barName} (parity ${par}) to complete`);
      if (op.token === undefined && raw !== 0 && raw !== 1) w.reasons.push(`its parity operand is ${raw}, not 0 or 1: only bit 0 is used (FINDINGS.md P1), so it waits on parity ${par}`);
      // Who could still signal this barrier: running agents whose program signals the same array, and operations in flight.
      const sig: number[] = [];
      const all: number[] = [];
      const txOnly: number[] = [];
      const touches = (o: number, ops: Set<string>) =>
        p.roles[p.agents[o]!.role]!.code.some((x) => x.i === 'op' && ops.has(x.op.op) && 'bar' in x.op && x.op.bar.name === declName);
      for (let o = 0; o < s.agents.length; o++) {
        if (!touches(o, ARRIVE_OPS)) {
          if (touches(o, TX_OPS)) txOnly.push(o);
          continue;
        }
        all.push(o);
        if (s.agents[o]!.status === 'run' && o !== a) sig.push(o);
      }
      w.signallers = b.pending > 0 ? sig : sig.concat(txOnly.filter((o) => s.agents[o]!.status === 'run' && o !== a));
      const inflight = s.inflight.filter((o) => o.bar === key || o.targets?.includes(key));
      if (b.pending > 0) {
        let who: string;
        if (sig.length) who = `; agents that arrive on ${declName}: ${sig.map(describe).join(', ')}`;
        else if (all.length) who = `; every agent that arrives on ${declName} has stopped: ${all.map(describe).join(', ')}`;
        else who = `; no agent arrives on ${declName} anywhere in the kernel${txOnly.length ? ` (${txOnly.map((o) => p.agents[o]!.name).join(', ')} only move${txOnly.length === 1 ? 's' : ''} its tx-count: expect_tx / copies without an arrive)` : ''}`;
        const inf = inflight.filter((o) => o.kind !== 'tma');
        w.reasons.push(`${b.pending} of ${b.expected} arrivals are missing${who}${inf.length ? `; ${inf.length} asynchronous arrive(s) still in flight` : ''}`);
      }
      if (b.tx > 0) {
        const bytes = inflight.filter((o) => o.kind === 'tma').reduce((n, o) => n + o.left, 0);
        if (bytes === 0) w.reasons.push(`${b.tx} bytes were expected (expect_tx) but no copy in flight will deliver them`);
        else if (bytes < b.tx) w.reasons.push(`${b.tx} bytes are expected but copies in flight deliver only ${bytes}`);
        else w.reasons.push(`${b.tx} bytes are expected and ${bytes} are in flight`);
      } else if (b.tx < 0) {
        w.reasons.push(`${-b.tx} more bytes were credited by complete_tx than expected (tx-count ${b.tx}); the phase needs pending 0 and tx-count exactly 0`);
      }
      if (b.pending === 0 && b.tx === 0) w.reasons.push('the phase is complete but the waiter tests the other parity');
      // A barrier that never receives bytes hands a buffer back (an "empty" barrier): waiting on its
      // first completion with parity 0 at the start is the classic producer-start bug.
      const getsBytes = s.agents.some((_, o) => touches(o, TX_OPS));
      if (b.phase === 0 && par === 0 && !getsBytes && sig.length > 0 && !passedBefore?.(a, key)) startHint.add(a);
    } else if (op.op === 'bar.sync') {
      w.kind = 'bar.sync';
      const id = ins.ints.id!(ag.frame);
      const nb = s.named[p.agents[a]!.cta * 16 + (id & 15)]!;
      w.reasons.push(`named barrier ${id}: ${nb.arrived} of ${nb.count} threads have arrived in generation ${nb.gen}, and no running agent can add the rest`);
      for (let o = 0; o < s.agents.length; o++) if (o !== a && s.agents[o]!.status === 'run' && p.agents[o]!.cta === p.agents[a]!.cta) w.signallers.push(o);
    } else if (op.op === 'barrier.cluster.wait') {
      w.kind = 'cluster';
      const missing = s.agents.map((x, i) => i).filter((i) => p.agents[i]!.cluster === p.agents[a]!.cluster && s.agents[i]!.status === 'run' && s.agents[i]!.clusterRound < ag.clusterRound);
      w.reasons.push(`barrier.cluster.wait: ${missing.map(describe).join(', ')} ha${missing.length === 1 ? 's' : 've'} not arrived`);
      w.signallers = missing;
    } else if (op.op === 'wgmma.wait_group' || op.op === 'cp.async.bulk.wait_group') {
      w.kind = op.op === 'wgmma.wait_group' ? 'wgmma' : 'bulk';
      const kind = op.op === 'wgmma.wait_group' ? 'wgmma' : 'bulk.store';
      const pending = pendingAsyncGroups(s, a, kind);
      const n = ins.ints.n!(ag.frame);
      const inflight = s.inflight.filter((o) => o.agent === a && o.kind === kind).length;
      w.reasons.push(`${op.op} ${n}: ${pending} committed group(s) of ${kind === 'wgmma' ? 'wgmma' : 'bulk stores'} still pending (it waits for at most ${n}), with ${inflight} operation(s) of them in flight`);
    }
    waiters.push(w);
  }
  const rank = (w: BlockedWaiter) =>
    w.reasons.some((r) => r.includes('no copy in flight will deliver') || r.includes('copies in flight deliver only')) ? 0 : w.signallers.length === 0 ? 1 : 2;
  waiters.sort((x, y) => rank(x) - rank(y));
  const cycle = findCycle(waiters, p.agents.map((x) => x.name));
  // Hint at the producer-start parity only for a waiter that is part of the wait-for cycle.
  for (const w of waiters) {
    if (startHint.has(w.agent) && cycle?.includes(w.name)) {
      w.reasons.push('hint: parity 0 on a barrier still in phase 0 waits for its first completion; a wait that means "the buffer is free" at the start (a producer on an empty barrier) uses parity 1, which passes on a fresh barrier');
    }
  }
  return { waiters, cycle };
}

function findCycle(waiters: BlockedWaiter[], names: string[]): string[] | null {
  const edges = new Map<number, number[]>();
  for (const w of waiters) edges.set(w.agent, w.signallers.filter((x) => waiters.some((y) => y.agent === x)));
  const state = new Map<number, number>();
  const stack: number[] = [];
  let found: number[] | null = null;
  const dfs = (v: number): void => {
    if (found) return;
    state.set(v, 1);
    stack.push(v);
    for (const u of edges.get(v) ?? []) {
      if (state.get(u) === 1) {
        found = stack.slice(stack.indexOf(u));
        return;
      }
      if (!state.has(u)) dfs(u);
      if (found) return;
    }
    stack.pop();
    state.set(v, 2);
  };
  for (const w of waiters) if (!state.has(w.agent)) dfs(w.agent);
  if (!found) return null;
  const cyc = found as number[];
  return [...cyc, cyc[0]!].map((i) => names[i]!);
}
