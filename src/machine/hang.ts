/**
 * Explains a state in which agents are blocked and nothing can progress: each blocked waiter, its
 * barrier's state, the missing arrivals (and which agents could still provide them), the expected
 * bytes no copy will deliver, and the wait-for cycle among blocked agents when there is one.
 * Used by the simulator (verdict `hang`) and the checker alike.
 */
import { testParity, type MBarrier } from '../model/mbarrier.js';
import type { RoleDecl, SrcLoc } from '../kernel/ir.js';
import { clusterArrivals, pendingAsyncGroups, type Machine, type MachineState } from './machine.js';
import type { OpInstr } from './program.js';
import { remainingSignals, type Reach } from './reach.js';
import { stepText } from './step-text.js';
import { warpRuns } from './warp-runs.js';
import { explainAlloc, explainPair } from './ops/index.js';
import { explainValueWait } from './values.js';

/** One agent that can never proceed. */
export interface BlockedWaiter {
  agent: number;
  name: string;
  /**
   * The operation it is blocked in, as source-like text; in a role run as written, whose operands
   * are a front end's registers ({@link RoleDecl.asWritten}: PTX), an mbarrier wait names the barrier
   * and the parity (or token phase) it waits with in this state: `mbarrier.try_wait.parity empty[2], parity 1`.
   */
  op: string;
  /** The operation's text as written (`empty[(%r12 - 10240) / 8], %r11`) when {@link op} names resolved values instead. */
  source?: string;
  loc: SrcLoc;
  kind: 'mbarrier' | 'bar.sync' | 'cluster' | 'wgmma' | 'bulk' | 'other';
  /** Barrier key and name (mbarrier waits). */
  bar?: number;
  barName?: string;
  state?: Pick<MBarrier, 'phase' | 'pending' | 'expected' | 'tx'>;
  parity?: number;
  /** Sentences in the field's words: why the wait cannot complete. */
  reasons: string[];
  /**
   * Agents (by index) whose remaining code could still give what it waits for (by barrier key, CTA
   * resolved: `reach.ts`); empty when some part it needs (arrivals, bytes) has no one left to give it.
   */
  signallers: number[];
  /** What it waits on, as a hazard subject: `full[0]@c1`, `bar.sync 1`, `barrier.cluster`; null otherwise. */
  subject: string | null;
  /** True when its barrier expects bytes that neither a copy in flight nor any running agent can deliver. */
  bytesMissing: boolean;
  /**
   * An mbarrier waiter whose parity skips a completed phase that no waiter observed: its waits last
   * observed phase `observed`, phase `observed + 1` completed and no agent's wait has observed it
   * or a later one, and it now waits for phase `phase` (the parity it computes did not advance).
   * Known only when the driver gives each agent's last observed phase (the checker's history).
   */
  skipped?: { observed: number; phase: number };
}

/** What is blocked and why. */
export interface HangReport {
  waiters: BlockedWaiter[];
  /** A wait-for cycle among blocked agents (names), when one exists. */
  cycle: string[] | null;
  /**
   * Blocked agents left unexplained because the caller's `stop` said so (a bound of the run: the
   * explanation of a launch of tens of thousands of waiters takes long); absent when none.
   */
  unexplained?: number;
}

/** The most agents a reason names; the rest are counted (a list of 33,792 names per waiter is quadratic). */
export const NAMES_MAX = 32;

/** `shown` joined with ', ' (at most {@link NAMES_MAX}), then how many of `total` are left out. */
function nameList(shown: string[], total = shown.length): string {
  const head = shown.slice(0, NAMES_MAX).join(', ');
  return total <= NAMES_MAX ? head : `${head}, … and ${(total - NAMES_MAX).toLocaleString('en-US')} more`;
}

/**
 * The names (`describe`) of agents `as`, at most {@link NAMES_MAX} of them described; agents whose
 * descriptions agree but for the name (the warps of a warpgroup blocked in one wait) are one entry,
 * their names as warp ranges (`mma[0].w0–w3 (blocked in …, line 19)`, machine/warp-runs.ts).
 */
function describeList(as: number[], describe: (a: number) => string, nameOf: (a: number) => string): string {
  const groups = new Map<string, string[]>();
  for (const a of as.slice(0, NAMES_MAX)) {
    const name = nameOf(a);
    const text = describe(a);
    const rest = text.startsWith(name) ? text.slice(name.length) : `\u0000${text}`;
    const g = groups.get(rest);
    if (g) g.push(name);
    else groups.set(rest, [name]);
  }
  const shown = [...groups].map(([rest, names]) => (rest.startsWith('\u0000') ? rest.slice(1) : `${warpRuns(names).join(', ')}${rest}`));
  const left = as.length - Math.min(as.length, NAMES_MAX);
  return left > 0 ? `${shown.join(', ')}, … and ${left.toLocaleString('en-US')} more` : shown.join(', ');
}

/** What each agent's whole code signals (from its first instruction), per program: it does not depend on the state. */
const WHOLE = new WeakMap<object, Map<number, Reach>>();

/**
 * Explains every running agent that is not enabled in `s`. Waiters come root causes first: a
 * barrier that expects bytes no copy in flight delivers, then waits no running agent can signal,
 * then the rest (waits on other blocked agents). `passedBefore(agent, barKey)`, when the driver
 * knows it (the checker's phase history), says whether that agent has passed a wait on that
 * barrier before: the producer-start parity hint is given only for a first wait.
 * `lastObserved(agent, barKey)`, when known, is the last phase of that barrier the agent's waits
 * observed (null: none): a waiter that phases completed without is said to be that many behind.
 * `onStartParity`, when given, is told each waiter that gets the producer-start parity hint (its
 * last reason), in the report's order: a waiter of the wait-for cycle that waits with parity 0 for
 * the first completion of a fresh barrier that others can still arrive on and no byte count holds
 * up (the checker names that parity as the hang's cause; the report's data stays as it was).
 */
export function explainHang(
  m: Machine, s: MachineState, passedBefore?: (agent: number, bar: number) => boolean, lastObserved?: (agent: number, bar: number) => number | null,
  stop?: () => boolean, onStartParity?: (w: BlockedWaiter) => void,
): HangReport {
  const p = m.program;
  const waiters: BlockedWaiter[] = [];
  const startHint = new Set<number>();
  const nameOf = (a: number): string => p.agents[a]!.name;
  const describe = (a: number): string => {
    const ag = s.agents[a]!;
    if (ag.status === 'done') return `${p.agents[a]!.name} (exited)`;
    if (ag.status === 'trap') return `${p.agents[a]!.name} (stopped)`;
    const ins = m.nextOp(s, a);
    return ins ? `${p.agents[a]!.name} (blocked in ${blockedText(p, s, a, ins)}, line ${ins.loc.line})` : p.agents[a]!.name;
  };
  const reaches = new Map<number, Reach>();
  const reachOf = (o: number): Reach => {
    let r = reaches.get(o);
    if (!r) reaches.set(o, (r = remainingSignals(p, s, o)));
    return r;
  };
  // Whether agent o's code (anywhere, from its start) signals barrier `key`: for naming agents
  // that stopped or passed their last signal.
  let whole = WHOLE.get(p);
  if (!whole) WHOLE.set(p, (whole = new Map()));
  // One copy of the agents, agent o restarted in it while its code is run (a copy per agent was
  // quadratic: 33,792 agents made 1.1e9 element copies).
  let restarted: MachineState['agents'] | null = null;
  const wholeOf = (o: number): Reach => {
    let r = whole!.get(o);
    if (!r) {
      restarted ??= s.agents.slice();
      restarted[o] = { ...s.agents[o]!, status: 'run', pc: 0 };
      try {
        r = remainingSignals(p, { ...s, agents: restarted }, o);
      } finally {
        restarted[o] = s.agents[o]!;
      }
      whole!.set(o, r);
    }
    return r;
  };
  const codeSignals = (o: number, key: number) => wholeOf(o).arrive.has(key);
  const anyArrives = (key: number) => s.agents.some((_, o) => codeSignals(o, key));
  const touchesTx = (o: number, key: number) => wholeOf(o).credit.has(key);
  const ctx: Ctx = { p, s, describe, reachOf, wholeOf, codeSignals, anyArrives, touchesTx, startHint, passedBefore, lastObserved };
  let unexplained = 0;
  for (let a = 0; a < s.agents.length; a++) {
    const ag = s.agents[a]!;
    if (ag.status !== 'run' || m.agentEnabled(s, a)) continue;
    if (unexplained || stop?.()) {
      unexplained++;
      continue;
    }
    const ins = m.nextOp(s, a);
    if (!ins) continue;
    const text = blockedText(p, s, a, ins);
    const w: BlockedWaiter = { agent: a, name: p.agents[a]!.name, op: text, loc: ins.loc, kind: 'other', reasons: [], signallers: [], subject: null, bytesMissing: false };
    if (text !== ins.text) w.source = ins.text;
    const op = ins.op;
    if (explainValueWait(m, s, a, w, describe)) {
      // a cluster not resident yet, or a spin loop on a global location (values.ts)
    } else if (op.op === 'mbarrier.wait') {
      mbarrierWait(ctx, a, w, ins);
    } else if (op.op === 'bar.sync') {
      w.kind = 'bar.sync';
      const id = ins.ints.id!(ag.frame);
      const nb = s.named[p.agents[a]!.cta * 16 + (id & 15)]!;
      w.subject = `bar.sync ${id}${p.ctas > 1 ? `@c${p.agents[a]!.cta}` : ''}`;
      for (let o = 0; o < s.agents.length; o++) {
        if (o === a || s.agents[o]!.status !== 'run' || p.agents[o]!.cta !== p.agents[a]!.cta) continue;
        const named = reachOf(o).named;
        if (named === null || named.has(id)) w.signallers.push(o);
      }
      const who = w.signallers.length ? `; agents that can still join it: ${describeList(w.signallers, describe, nameOf)}` : '; no running agent of the CTA can still join it';
      w.reasons.push(`named barrier ${id}: ${nb.arrived} of ${nb.count} threads have arrived in generation ${nb.gen}${who}`);
    } else if (op.op === 'barrier.cluster.wait') {
      w.kind = 'cluster';
      w.subject = `barrier.cluster${p.grid > 1 ? ` (cluster ${p.agents[a]!.cluster})` : ''}`;
      if (!(ag.clusterRound & 1)) {
        w.reasons.push(`barrier.cluster.wait: ${describe(a)} has not arrived (no barrier.cluster.arrive since its last wait), so it waits for its own arrival`);
      }
      const missing = s.agents.map((x, i) => i).filter((i) => i !== a && p.agents[i]!.cluster === p.agents[a]!.cluster && s.agents[i]!.status === 'run' && clusterArrivals(s.agents[i]!) < clusterArrivals(ag));
      if (missing.length || ag.clusterRound & 1) w.reasons.push(`barrier.cluster.wait: ${describeList(missing, describe, nameOf)} ha${missing.length === 1 ? 's' : 've'} not arrived`);
      w.signallers = missing.filter((o) => reachOf(o).cluster);
    } else if (op.op === 'cp.async.wait_group') {
      const pending = pendingAsyncGroups(s, a, 'cp.async');
      const inflight = s.inflight.filter((o) => o.agent === a && o.kind === 'cp.async').length;
      w.reasons.push(`${ins.text}: ${pending} committed cp.async-group(s) still pending, with ${inflight} copy(ies) in flight`);
    } else if (op.op === 'wgmma.wait_group' || op.op === 'cp.async.bulk.wait_group') {
      w.kind = op.op === 'wgmma.wait_group' ? 'wgmma' : 'bulk';
      const kind = op.op === 'wgmma.wait_group' ? 'wgmma' : 'bulk.store';
      const leader = kind === 'wgmma' ? p.agents[a]!.wgLeader : a;
      const pending = pendingAsyncGroups(s, a, kind, leader);
      const n = ins.ints.n!(ag.frame);
      const inflight = s.inflight.filter((o) => o.agent === leader && o.kind === kind).length;
      w.reasons.push(`${op.op} ${n}: ${pending} committed group(s) of ${kind === 'wgmma' ? 'wgmma' : 'bulk stores'} still pending (it waits for at most ${n}), with ${inflight} operation(s) of them in flight`);
      if (kind === 'wgmma') {
        // A warpgroup's MMA starts once each of its four warps issued it (PTX ISA §9.7.15.5).
        const first = s.inflight.filter((o) => o.agent === leader && o.kind === 'wgmma').reduce((x, o) => Math.min(x, o.seq), Infinity);
        const behind = (m.wgPeers[leader] ?? []).filter((x) => s.agents[x]!.wgIssued <= first);
        if (first < Infinity && behind.length) w.reasons.push(`the oldest of them waits for ${describeList(behind, describe, nameOf)} of the warpgroup to issue its wgmma.mma_async (a warpgroup's MMA starts once all four warps issued it)`);
      }
    } else if (op.op === 'tcgen05.alloc' || (op.op === 'tcgen05.dealloc' && op.pair)) {
      const why = op.pair ? explainPair(m, s, a, ins) : explainAlloc(m, s, a, ins);
      w.subject = `tmem${p.ctas > 1 ? `@c${p.agents[a]!.cta}` : ''}`;
      w.reasons.push(...why.reasons);
      w.signallers = why.holders;
    }
    waiters.push(w);
  }
  const rank = (w: BlockedWaiter) => (w.bytesMissing ? 0 : w.signallers.length === 0 ? 1 : 2);
  waiters.sort((x, y) => rank(x) - rank(y));
  const cycle = findCycle(waiters, p.agents.map((x) => x.name));
  // Hint at the producer-start parity only for a waiter that is part of the wait-for cycle, and only
  // when no waiter of the cycle is stuck on bytes (a tx-count credited past 0, or bytes nobody can
  // deliver): that is a cause of its own, whatever the parity.
  const stuckOnBytes = waiters.some((w) => cycle?.includes(w.name) && (w.bytesMissing || (w.state?.tx ?? 0) < 0));
  for (const w of waiters) {
    if (startHint.has(w.agent) && cycle?.includes(w.name) && !stuckOnBytes) {
      onStartParity?.(w);
      w.reasons.push('hint: parity 0 on a barrier still in phase 0 waits for its first completion; a wait that means "the buffer is free" at the start (a producer on an empty barrier) uses parity 1, which passes on a fresh barrier');
    }
  }
  return unexplained ? { waiters, cycle, unexplained } : { waiters, cycle };
}

/**
 * The text of `ins`, the operation agent `a` rests on in `s`: {@link stepText}, the one rendering
 * that traces share. In a role run as written
 * (`RoleDecl.asWritten`: a front end's instructions, PTX, whose operands are its registers), whose text (`empty[(%r12 - 10240) / 8], %r11`) says nothing without
 * their values, every operand is its value there: an mbarrier wait is named by its mnemonic, the
 * barrier its operands resolve to and the parity (bit 0 of the operand, PTX ISA §9.7.13.15.16) or
 * the phase of its token; an operand out of range keeps its source-like text.
 */
export function blockedText(p: Machine['program'], s: MachineState, a: number, ins: OpInstr): string {
  return stepText(p, s, a, ins);
}

/** What {@link mbarrierWait} needs of {@link explainHang}'s state. */
interface Ctx {
  p: Machine['program'];
  s: MachineState;
  describe: (a: number) => string;
  reachOf: (o: number) => Reach;
  wholeOf: (o: number) => Reach;
  codeSignals: (o: number, key: number) => boolean;
  anyArrives: (key: number) => boolean;
  touchesTx: (o: number, key: number) => boolean;
  /** Waiters that get the producer-start parity hint (if they are in a cycle). */
  startHint: Set<number>;
  passedBefore: ((agent: number, bar: number) => boolean) | undefined;
  lastObserved: ((agent: number, bar: number) => number | null) | undefined;
}

/** Explains waiter `w` (agent `a`) blocked in the mbarrier wait `ins`: its barrier, what is missing, who can still give it. */
function mbarrierWait(c: Ctx, a: number, w: BlockedWaiter, ins: OpInstr): void {
  const { p, s, describe, reachOf, wholeOf, codeSignals, anyArrives, touchesTx, startHint, passedBefore, lastObserved } = c;
  const nameOf = (x: number): string => p.agents[x]!.name;
  const ag = s.agents[a]!;
  const op = ins.op as Extract<OpInstr['op'], { op: 'mbarrier.wait' }>;
    const key = ins.bar!(ag.frame);
    const b = s.bars[key]!;
    const barName = p.barrierName(key);
    w.kind = 'mbarrier';
    w.bar = key;
    w.barName = barName;
    w.subject = barName;
    w.state = { phase: b.phase, pending: b.pending, expected: b.expected, tx: b.tx };
    const raw = op.token !== undefined ? (ag.tokens?.[ins.token!]?.phase ?? 0) : ins.ints.parity!(ag.frame);
    const par = raw & 1;
    w.parity = par;
    w.reasons.push(`waits for phase ${b.phase} of ${barName} (parity ${par}) to complete`);
    if (op.token === undefined && raw !== 0 && raw !== 1) w.reasons.push(`its parity operand is ${raw}, not 0 or 1: only bit 0 is used (docs/HARDWARE.md, Conformance vectors), so it waits on parity ${par}`);
    // Who could still signal this barrier (this key, in this CTA): running agents whose remaining
    // code arrives on it or moves its tx-count, and operations in flight.
    const reach = (o: number) => reachOf(o);
    const others = s.agents.map((_, o) => o).filter((o) => o !== a && s.agents[o]!.status === 'run');
    const arrivers = others.filter((o) => reach(o).arrive.has(key));
    // An exact run tells whether the agent's remaining code credits more bytes than it expects.
    const crediters = others.filter((o) => reach(o).credit.has(key) && (!reach(o).exact || (reach(o).net.get(key) ?? 0) > 0));
    const expecters = others.filter((o) => reach(o).expect.has(key));
    const inflight = s.inflight.filter((o) => o.bar === key || o.targets?.includes(key));
    const asyncArrives = inflight.filter((o) => o.kind !== 'tma');
    const bytesInFlight = inflight.filter((o) => o.kind === 'tma').reduce((n, o) => n + o.left, 0);
    const exited = s.agents.map((_, o) => o).filter((o) => o !== a && s.agents[o]!.status !== 'run' && codeSignals(o, key));
    // The phase needs its missing arrivals and a tx-count of exactly 0; a waiter on the other
    // parity of a complete phase needs a whole next phase (arrivals).
    const needArrivals = b.pending > 0 || (b.pending === 0 && b.tx === 0);
    const missingBytes = b.tx > 0 ? Math.max(0, b.tx - bytesInFlight) : 0;
    const creditable = crediters.reduce((n, o) => n + (reach(o).exact ? reach(o).net.get(key)! : Infinity), 0);
    const arrOk = !needArrivals || arrivers.length > 0 || asyncArrives.length > 0;
    const txOk = b.tx > 0 ? missingBytes <= creditable : b.tx < 0 ? expecters.length > 0 : true;
    const providers = new Set<number>([...(needArrivals ? arrivers : []), ...(b.tx > 0 && missingBytes > 0 ? crediters : []), ...(b.tx < 0 ? expecters : [])]);
    w.signallers = arrOk && txOk ? [...providers].sort((x, y) => x - y) : [];
    if (b.status === 'uninit') {
      w.reasons.push(`${barName} was never initialized (no mbarrier.init ran on it): an H200 reads a zero word as phase 0, so a parity-0 wait never passes`);
    }
    if (b.pending > 0) {
      let who: string;
      if (arrivers.length) who = `; agents that can still arrive on ${barName}: ${describeList(arrivers, describe, nameOf)}`;
      else if (exited.length) who = `; no running agent's remaining code arrives on ${barName} (the agents that arrive on it have finished: ${describeList(exited, describe, nameOf)})`;
      else if (anyArrives(key)) who = `; no running agent's remaining code arrives on ${barName}: every arrive on it is behind the agents that run it`;
      else {
        const movers = s.agents.map((_, o) => o).filter((o) => wholeOf(o).credit.has(key) || wholeOf(o).expect.has(key));
        who = `; no agent arrives on ${barName} anywhere in the kernel${movers.length ? ` (${nameList(movers.map((o) => p.agents[o]!.name))} only move${movers.length === 1 ? 's' : ''} its tx-count: expect_tx / copies without an arrive)` : ''}`;
      }
      w.reasons.push(`${b.pending} of ${b.expected} arrivals are missing${who}${asyncArrives.length ? `; ${asyncArrives.length} asynchronous arrive(s) still in flight` : ''}`);
    }
    if (b.tx > 0) {
      const senders = crediters.length ? `; agents that can still send bytes to it: ${describeList(crediters, describe, nameOf)}` : '; no running agent\'s remaining code delivers more bytes to it than it expects';
      if (bytesInFlight === 0) w.reasons.push(`${b.tx} bytes were expected (expect_tx) but no copy in flight will deliver them${senders}`);
      else if (bytesInFlight < b.tx) w.reasons.push(`${b.tx} bytes are expected but copies in flight deliver only ${bytesInFlight}${senders}`);
      else w.reasons.push(`${b.tx} bytes are expected and ${bytesInFlight} are in flight`);
    } else if (b.tx < 0) {
      w.reasons.push(`${-b.tx} more bytes were credited by complete_tx than expected (tx-count ${b.tx}); the phase needs pending 0 and tx-count exactly 0`);
    }
    if (b.pending === 0 && b.tx === 0 && b.status === 'valid') w.reasons.push('the phase is complete but the waiter tests the other parity');
    if (lastObserved && b.status === 'valid') {
      const last = lastObserved(a, key);
      const missed = b.phase - 1 - (last ?? -1);
      // One phase completed without it, and no waiter has observed that phase or a later one:
      // nobody consumed it (a consumer that skips phases another consumer takes is no finding).
      const nobodySaw = (ph: number) => s.agents.every((_, o) => (lastObserved(o, key) ?? -1) < ph);
      if (missed === 1 && last !== null && nobodySaw(last + 1)) {
        w.skipped = { observed: last, phase: b.phase };
        w.reasons.splice(1, 0, `its waits last observed phase ${last} of ${barName}; phase ${last + 1} then completed and no wait observed it, and parity ${par} names phase ${b.phase}: the wait skips phase ${last + 1} (the parity it computes did not advance from its previous wait on ${barName})`);
      }
      if (missed >= 2) {
        w.reasons.splice(1, 0, `${w.name} is ${missed} phases behind: ${last === null ? 'its waits observed no phase of' : `its waits last observed phase ${last} of`} ${barName}, and phases ${(last ?? -1) + 1}..${b.phase - 1} completed without it, so parity ${par} now names phase ${b.phase} instead of the phase it meant (the phase or parity it computes is off by whole phases, or the signaller runs ahead unchecked)`);
      }
    }
    w.bytesMissing = b.tx > 0 && missingBytes > creditable;
    // A barrier that never receives bytes hands a buffer back (an "empty" barrier): waiting on its
    // first completion with parity 0 at the start is the classic producer-start bug.
    const getsBytes = s.agents.some((_, o) => touchesTx(o, key));
    // Only when the parity is what is wrong: the other parity passes now, and nobody has arrived in
    // phase 0 yet (an arrival there means the releasers run, and the waiter waits for the phase they
    // are completing: a release count short of the barrier's count, not the start parity).
    if (b.phase === 0 && par === 0 && b.status === 'valid' && b.pending === b.expected && testParity(b, par ^ 1) && !getsBytes && arrivers.length > 0 && !passedBefore?.(a, key)) startHint.add(a);
}

function findCycle(waiters: BlockedWaiter[], names: string[]): string[] | null {
  const edges = new Map<number, number[]>();
  const blocked = new Set(waiters.map((w) => w.agent));
  for (const w of waiters) edges.set(w.agent, w.signallers.filter((x) => blocked.has(x)));
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
