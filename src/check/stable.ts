/**
 * Stable waits, for the partial-order reduction: a blocking `mbarrier.try_wait.parity` of agent A
 * that passes now and whose barrier's current phase cannot complete before A moves. Such a wait
 * commutes with every step the other agents and asynchronous operations can take until A moves
 * (it only reads the barrier, and the one kind of step that could disable it, the completion of
 * the barrier's current phase, cannot happen first), so taking it alone (a single-step persistent
 * set) keeps every reachable hazard, deadlock and final state (docs/CHECK.md, "Stable waits").
 *
 * "Cannot complete before A moves" is decided by an over-approximation of what the rest of the
 * kernel can still signal while A stays where it is. Start with every barrier *gated* (no phase
 * of it can complete); each barrier gets a number of completions the others can bring: none while
 * the arrivals that operations in flight and the other agents (each run forward from its current
 * position on its own frame until it blocks) can signal to it are fewer than its pending count,
 * else one, plus one for each further expected count of arrivals (each later phase needs its
 * arrivals again; bytes are not bounded). An agent run forward blocks only where it certainly
 * would while A stays put: at a wait whose phase needs one more completion of its barrier than
 * the others can bring (a run counts the completions its passed waits relied on: a wait for the
 * parity the barrier has after them needs another), at a `wgmma.wait_group` that needs an MMA of
 * A's warpgroup that A has not issued (a wgmma completes only once every warp of its warpgroup
 * issued it), or at its end. Everything else it is assumed to pass (more signals: conservative).
 * The counts only grow, to a fixpoint; the wait is stable when its barrier is still gated and
 * nothing (no arrival, bytes, init or inval, from an agent or in flight) can reach it first. An
 * agent whose control flow depends on a value the forward run cannot know (a `test_wait` result,
 * a pending count, a token) or that runs longer than a step budget makes the answer "not stable".
 */
import { testParity } from '../model/mbarrier.js';
import type { AsyncOp, MachineState } from '../machine/machine.js';
import type { Instr, Program } from '../machine/program.js';
import { FORWARD_BUDGET, GIVE_UP, runForward, type Cont, type Forward, type Signal } from './forward-run.js';
import { currentScratch, namedGenerations, scratchFor, type Frozen } from './stable-scratch.js';

export type { Frozen };

export { FORWARD_BUDGET };
/** Most instructions all forward runs of one question take together (then the wait counts as not stable). */
export const TOTAL_BUDGET = 200_000;

/**
 * True when agent `a`'s wait on barrier key `bar` with parity `parity` is stable in `s` (see the
 * module comment). `codes[x]`: agent x's role code. The wait must be a parity wait on a barrier of
 * `a`'s own CTA that passes in `s`.
 */
export function stableWait(p: Program, codes: readonly Instr[][], s: MachineState, a: number, bar: number, parity: number): boolean {
  const b = s.bars[bar];
  if (!b || b.status !== 'valid' || !testParity(b, parity)) return false;
  // Nothing at all may reach the barrier first: the hazard checks on a passing wait read its
  // tx-count and pending count too (a copy's bytes beginning the next phase make a second pass
  // of a fresh barrier's parity 1 a phase alias), so a wait is stable only if it sees the same
  // barrier whenever it is taken.
  return frozenFixpoint(p, codes, s, a, bar, (f) => f.arrivals[bar]! === 0 && !f.tx[bar] && !f.reset[bar]);
}

/**
 * Stable arrives, for the partial-order reduction: agent `a`'s next operation is a plain arrive
 * (no `.expect_tx`, no drop, no `.noComplete`, no token) of `count` arrivals on barrier key `bar`
 * of its own CTA that does not complete the phase (`count` < pending), and nothing the rest of the
 * kernel can do before `a` moves can complete that phase or read its pending count: the other
 * agents and the operations in flight, run forward as for {@link stableWait}, bring at most
 * pending − `count` arrivals to it (so the phase still needs `a`'s arrival), no tx-count change,
 * no init or inval, and no other agent passes a wait on it (a passing wait's phase-alias checks
 * read the pending count).
 * Then the arrive commutes with every step the others can take until `a` moves: two arrivals on
 * one phase that together do not exceed its pending count reach the same barrier in either order
 * (PTX ISA §9.7.13.15.1: the phase completes when the pending count reaches zero and the tx-count
 * is zero, whichever arrival or complete_tx comes last), and the arrive neither enables nor
 * disables any other step (only a phase completion does). Taking it alone keeps every reachable
 * hazard, deadlock and final state (docs/CHECK.md, "Stable arrives").
 */
export function stableArrive(p: Program, codes: readonly Instr[][], s: MachineState, a: number, bar: number, count: number): boolean {
  const b = s.bars[bar];
  if (!b || b.status !== 'valid' || !(count >= 1) || count >= b.pending) return false;
  const room = b.pending - count;
  // No tx-count change either: with `a`'s arrival taken first, the others' arrivals can bring the
  // pending count to 0, so the tx-count at that moment decides whether the phase completes there or
  // a later arrival over-arrives (a complete_tx between them was the difference, found by a soak).
  return frozenFixpoint(p, codes, s, a, bar, (f) => f.arrivals[bar]! <= room && !f.tx[bar] && !f.reset[bar] && !f.passed[bar]);
}

/** The tx-count's range (PTX ISA §9.7.13.15.1: -(2^20 - 1) … 2^20 - 1). */
const TX_MAX = (1 << 20) - 1;

/**
 * Stable `arrive.expect_tx`: agent `a`'s next operation registers `raise` > 0 bytes and brings
 * `count` arrivals to barrier key `bar` of its own CTA (at most the pending count), without
 * completing the phase (arrivals still missing after it, or a tx-count other than 0), and before
 * `a` moves the rest of the kernel (run forward as for {@link stableWait}) brings no arrival to the
 * barrier, registers no bytes, does not init or inval it, passes no wait on it, and cannot credit
 * as many bytes as the tx-count would then miss (so the phase cannot complete before `a` moves,
 * in either order) nor drive the tx-count out of its range. Then the arrive commutes with every
 * step the others can take until `a` moves: the others' steps on the barrier only credit bytes,
 * and crediting bytes and registering bytes with an arrival add up to the same barrier in either
 * order when no completion comes between; it enables and disables nothing. Taking it alone keeps
 * every reachable hazard, deadlock and final state (docs/CHECK.md, "Stable arrives").
 */
export function stableExpectArrive(p: Program, codes: readonly Instr[][], s: MachineState, a: number, bar: number, count: number, raise: number): boolean {
  const b = s.bars[bar];
  if (!b || b.status !== 'valid' || !(count >= 1) || count > b.pending || !(raise > 0)) return false;
  const after = b.tx + raise;
  if (after > TX_MAX || (count === b.pending && after === 0)) return false;
  return frozenFixpoint(p, codes, s, a, bar, (f) => f.arrivals[bar]! === 0 && !f.txUp[bar] && !f.reset[bar] && !f.passed[bar]
    && f.delivered[bar]! < after && b.tx - f.delivered[bar]! > -TX_MAX);
}

/**
 * Stable named-barrier arrivals: agent `a`'s next operation arrives with `threads` threads on
 * named barrier `key` (cta × 16 + id; a `bar.sync`'s first step or a `bar.arrive`) whose generation
 * needs `count` threads, and the threads the others can bring before `a` moves (run forward as for
 * {@link stableWait}) do not complete it, with `a`'s arrival or without it. Arrivals on one
 * generation that together stay within its count reach the same barrier in either order, and an
 * arrival disables nothing; the one that completes the generation (the others can bring no thread
 * before it) enables only the steps of the threads waiting in that generation, which nothing else
 * can enable. So taking it alone keeps every reachable hazard, deadlock and final state
 * (docs/CHECK.md, "Stable arrives").
 */
export function stableNamedArrive(p: Program, codes: readonly Instr[][], s: MachineState, a: number, key: number, threads: number, count: number): boolean {
  const nb = s.named[key];
  if (!nb || (nb.arrived > 0 && nb.count !== count) || nb.arrived + threads > count) return false;
  const room = count - nb.arrived - threads;
  // The first arrival of a generation sets the count it needs (machine/ops/barriers.ts): when the
  // others may arrive first naming another count, the order decides when it completes.
  return frozenFixpoint(p, codes, s, a, -1, (f) => f.named[key]! <= room && (f.namedCount[key] === 0 || f.namedCount[key] === count), key);
}

/**
 * The fixpoint of the module comment for a question about barrier `bar` and agent `a`: starts
 * with every barrier gated, runs the other agents of `a`'s cluster forward and ungates the
 * barriers they (or operations in flight) can complete, until nothing changes. `ok` decides the
 * question from the signals of a round; the answer is true only when `bar` stays gated and `ok`
 * holds at the fixpoint. False when a run gives up or the rounds run out (1,024: a pipeline of
 * n iterations can take about n rounds, one more completion each; a later round only resumes the
 * runs that blocked, and the question's budget bounds the work).
 */
export function frozenFixpoint(p: Program, codes: readonly Instr[][], s: MachineState, a: number, bar: number, ok: (f: Frozen) => boolean, named = -1, touch: Forward['touch'] = null, begin: Forward['begin'] = null): boolean {
  if (shared.left <= 0) return false;
  const budget = { left: Math.min(TOTAL_BUDGET, shared.left) };
  const start = budget.left;
  try {
    return fixpointWithin(p, codes, s, a, p.agents[a]!.cluster, null, bar, ok, named, touch, begin, null, budget);
  } finally {
    shared.left -= start - Math.max(0, budget.left);
  }
}

/** The work left to the questions of one forced-step search ({@link resetQuestionBudget}). */
const shared = { left: Infinity };

/** Most forward-run steps (instructions run, agents visited) all questions of one forced-step search take together. */
export const FORCED_STEP_BUDGET = 2_000_000;

/**
 * Starts the shared budget of one forced-step search: its questions together run at most
 * {@link FORCED_STEP_BUDGET} steps forward (then each further question answers "not stable",
 * which only explores more). Bounds the cost of a forced step on launches of many agents.
 */
export function resetQuestionBudget(): void {
  shared.left = FORCED_STEP_BUDGET;
}

/**
 * {@link frozenFixpoint} within the shared budget, for a question about operations in flight
 * (stable-landing.ts, stable-group.ts): no agent stays put, the agents of cluster `cl` run
 * forward, and every operation in flight signals except those `skip` names (the ones asked
 * about). `ended(x)` hears of each agent whose run reaches its end. `wgHeld`: a wgmma or bulk
 * store that stays in flight (the wait_groups that need it block). `held`: the remote arrives the
 * runs issue whose landings stay in flight too (not signalled).
 */
export function inflightFixpoint(p: Program, codes: readonly Instr[][], s: MachineState, skip: (o: AsyncOp) => boolean, cl: number, bar: number, ok: (f: Frozen) => boolean,
  touch: Forward['touch'], begin: Forward['begin'], ended: ((x: number) => void) | null, wgHeld: AsyncOp | null = null, held: Forward['held'] = null): boolean {
  if (shared.left <= 0) return false;
  const budget = { left: Math.min(TOTAL_BUDGET, shared.left) };
  const start = budget.left;
  try {
    return fixpointWithin(p, codes, s, -1, cl, skip, bar, ok, -1, touch, begin, ended, budget, wgHeld, held);
  } finally {
    shared.left -= start - Math.max(0, budget.left);
  }
}

/**
 * {@link frozenFixpoint} within `budget` (decremented per instruction run and per agent visited):
 * agent `a` stays put (-1: none), the agents of cluster `cl` run forward, and the operations in
 * flight signal, except those `skip` names (null: none).
 */
function fixpointWithin(p: Program, codes: readonly Instr[][], s: MachineState, a: number, cl: number, skip: ((o: AsyncOp) => boolean) | null, bar: number, ok: (f: Frozen) => boolean, named: number,
  touch: Forward['touch'], begin: Forward['begin'], ended: ((x: number) => void) | null, budget: { left: number }, wgHeld: AsyncOp | null = null, held: Forward['held'] = null): boolean {
  const n = s.bars.length;
  const nn = s.named.length;
  const sc = scratchFor(n, nn);
  const { gated, comps, namedGated, namedComps } = sc;
  gated.fill(1, 0, n);
  comps.fill(0, 0, n);
  namedGated.fill(1, 0, nn);
  namedComps.fill(0, 0, nn);
  const f: Frozen = sc.f;
  const { arrivals, tx, reset, passed } = f;
  /** Smallest thread count an arrival of the run names per named barrier (what its generation may need). */
  const need = sc.need;
  // The signals of a round only grow while it runs, and from round to round (the gated set only
  // shrinks, so the runs go further): once `ok` fails it fails at the fixpoint too, and the run
  // stops there (`run.failed`) instead of finishing the round.
  const { raiseMin } = sc;
  const { delivered, txUp } = f;
  const signal: Signal = (key, count, bytes, init, raise = 0, deliver = 0) => {
    if (key < 0 || key >= n) return;
    arrivals[key] += count;
    if (count > 0 && raise < raiseMin[key]!) raiseMin[key] = raise;
    delivered[key] += deliver;
    if (bytes && !(deliver > 0)) txUp[key] = 1;
    if (bytes) tx[key] = 1;
    if (init) reset[key] = 1;
    if (!ok(f)) run.failed = true;
  };
  const pass = (key: number, relied: number) => {
    if (key >= 0 && key < n) {
      passed[key] = 1;
      if (relied === 0) f.passedNow[key] = 1;
    }
    if (!ok(f)) run.failed = true;
  };
  const arriveNamed = (key: number, threads: number, count: number) => {
    f.named[key] += threads;
    const c = f.namedCount[key]!;
    if (c === 0) f.namedCount[key] = count;
    else if (c !== count) f.namedCount[key] = -1;
    if (!(need[key]! <= count)) need[key] = count;
    if (!ok(f)) run.failed = true;
  };
  // A named barrier's generation can complete when the threads it still misses can all arrive
  // (the count of a generation no thread joined yet is the smallest any arrival names); each
  // later one needs at least that smallest count again, so the threads that can arrive bound how
  // many generations complete.
  const namedCompletions = (key: number): number => namedGenerations(s.named[key]!, f.named[key]!, need[key]!);
  const run: Forward = { gated, comps, namedGated, namedComps, signal, pass, arriveNamed, budget, failed: false, touch, begin, ended, wgHeld, held };
  // A phase can complete when the arrivals it still misses can all come, and, when it misses
  // only bytes, when some copy or complete_tx can still bring them (tx-counts are not bounded
  // here: more bytes than missing only over-approximates). An init or inval changes it anyway.
  // Each later phase needs its expected count of arrivals again (and bytes, not bounded here), so
  // the arrivals beyond the current phase's pending count bound how many more can complete: the
  // forward runs let a wait pass only on a completion within that number (forward-run.ts).
  // Bytes bound it too: the phase needs its tx-count credited, plus what its missing arrivals
  // register (each at least the fewest any arrival source registers), and each later phase
  // `expected` such arrivals' bytes again; all the bytes the sources can credit bound that.
  const completions = (key: number): number => {
    const x = s.bars[key]!;
    if (x.status !== 'valid' || reset[key]) return Infinity;
    if (arrivals[key] < x.pending) return 0;
    if (!(x.pending > 0 || arrivals[key] > 0 || x.tx <= 0 || tx[key] === 1)) return 0;
    let c = x.expected > 0 ? 1 + Math.floor((arrivals[key]! - x.pending) / x.expected) : Infinity;
    const e = raiseMin[key]! === Infinity ? 0 : raiseMin[key]!;
    const first = x.tx + x.pending * e;
    if (first > 0 && delivered[key]! < first) return 0;
    if (e > 0 && x.expected > 0) c = Math.min(c, 1 + Math.floor((delivered[key]! - Math.max(0, first)) / (x.expected * e)));
    return c;
  };
  // A run is the same up to where it blocked in every later round (the completions only grow), so
  // the runs are resumed there once what they wait for can complete, and the signals accumulate
  // across rounds. A question that watches each run from its beginning (`begin`, called once per
  // agent at its first run) keeps what it tracks per agent, so a resumed run goes on with it.
  const nA = s.agents.length;
  const conts = contsFor(nA);
  // Only the waiter's cluster (`cl`) can signal its barrier or the barriers its cluster's agents wait on.
  for (let round = 0; round < 1024; round++) {
    if (round > 0) {
      if (!resumeRound(p, codes, s, a, run, conts, nA, budget)) return false;
    } else if (!firstRound(p, codes, s, a, cl, skip, run, conts, nA, budget)) return false;
    if (run.failed) return false; // signals of operations in flight alone
    let changed = false;
    for (let key = 0; key < n; key++) {
      const c = completions(key);
      if (c > comps[key]!) {
        comps[key] = c;
        gated[key] = 0;
        changed = true;
      }
    }
    for (let key = 0; key < nn; key++) {
      const c = namedCompletions(key);
      if (c > namedComps[key]!) {
        namedComps[key] = c;
        namedGated[key] = 0;
        changed = true;
      }
    }
    if ((bar >= 0 && !gated[bar]) || (named >= 0 && !namedGated[named]) || !ok(f)) return false;
    if (!changed) return true;
  }
  return false;
}

/** Per agent: where its run of the current question blocked, or null (reused; a question fills what it reads). */
let contScratch: (Cont | null)[] = [];
function contsFor(n: number): (Cont | null)[] {
  if (contScratch.length < n) contScratch = new Array<Cont | null>(n).fill(null);
  return contScratch;
}

/**
 * A round of {@link fixpointWithin} from scratch: clears the signals, lets the operations in
 * flight (except those `skip` names) signal, and runs every agent of cluster `cl` but `a` from its
 * position, noting in `conts` where each blocked. False when a run gives up.
 */
function firstRound(p: Program, codes: readonly Instr[][], s: MachineState, a: number, cl: number, skip: ((o: AsyncOp) => boolean) | null, run: Forward, conts: (Cont | null)[], nA: number, budget: { left: number }): boolean {
  const f = currentScratch().f;
  const n = s.bars.length;
  const nn = s.named.length;
  const { arrivals, tx, reset, passed } = f;
  const need = currentScratch().need;
  const signal = run.signal;
  arrivals.fill(0, 0, n);
  tx.fill(0, 0, n);
  reset.fill(0, 0, n);
  passed.fill(0, 0, n);
  f.passedNow.fill(0, 0, n);
  f.named.fill(0, 0, nn);
  f.namedCount.fill(0, 0, nn);
  need.fill(Infinity, 0, nn);
  currentScratch().raiseMin.fill(Infinity, 0, n);
  f.delivered.fill(0, 0, n);
  f.txUp.fill(0, 0, n);
  for (const o of s.inflight) {
    if (skip && skip(o)) continue;
    const count = o.kind === 'remote' ? (o.remote === 'arrive' || o.remote === 'arrive.expect_tx' || o.remote === 'arrive_drop' ? o.count : 0) : o.kind === 'cpa.arrive' ? o.count : o.kind === 'tc.commit' ? 1 : 0;
    // Bytes: a tx-count change of either sign (a landing's complete_tx, or a remote expect_tx
    // that raises it: a passing wait's checks read the tx-count, see stableWait).
    const bytes = o.kind === 'tma' || o.kind === 'st.async' || o.kind === 'dsmem' || o.kind === 'clc' || (o.kind === 'pick' && o.bar >= 0)
      || (o.kind === 'remote' && (o.remote === 'complete_tx' || o.remote === 'expect_tx' || o.remote === 'arrive.expect_tx'));
    // Bytes credited: what a copy has left, an st.async's or DSMEM copy's, a remote complete_tx's;
    // a remote expect_tx credits none (it raises the tx-count: `txUp`).
    const deliver = o.kind === 'tma' ? o.left : o.kind === 'st.async' || o.kind === 'dsmem' || (o.kind === 'remote' && o.remote === 'complete_tx') ? o.bytes
      : o.kind === 'clc' || o.kind === 'pick' ? 16 : o.kind === 'remote' ? 0 : bytes ? Infinity : 0;
    // (A remote arrive.expect_tx's share of bytes per arrival is not worked out: 0, no bound.)
    if (o.bar >= 0) signal(o.bar, count, bytes, false, 0, deliver);
    if (o.targets) for (const t of o.targets) signal(t, count, bytes, false, 0, deliver);
    if (o.kind === 'pick' && o.bar >= 0 && o.bytes === 1) { // a multicast try_cancel: every CTA's barrier
      const off = o.bar % p.barriersPerCta;
      const first = Math.floor(o.bar / p.barriersPerCta) - (Math.floor(o.bar / p.barriersPerCta) % p.clusterSize);
      for (let c = first; c < first + p.clusterSize; c++) signal(c * p.barriersPerCta + off, 0, true, false, 0, 16);
    }
  }
  for (let x = 0; x < nA; x++) {
    conts[x] = null;
    if (--budget.left < 0) return false;
    if (x === a || s.agents[x]!.status !== 'run' || p.agents[x]!.cluster !== cl) continue;
    if (runForward(p, codes[x]!, s, x, a, run) === GIVE_UP || run.failed) return false;
    conts[x] = run.blocked ?? null;
  }
  return true;
}

/** A later round of {@link fixpointWithin}: resumes the runs whose barrier can now complete (see there). False when a run gives up. */
function resumeRound(p: Program, codes: readonly Instr[][], s: MachineState, a: number, run: Forward, conts: (Cont | null)[], nA: number, budget: { left: number }): boolean {
  for (let x = 0; x < nA; x++) {
    const c = conts[x];
    if (!c || (c.bar >= 0 ? !(run.comps[c.bar]! >= c.need) : !(run.namedComps[c.named]! >= c.need))) continue;
    if (--budget.left < 0) return false;
    if (runForward(p, codes[x]!, s, x, a, run, c) === GIVE_UP || run.failed) return false;
    conts[x] = run.blocked ?? null;
  }
  return true;
}
