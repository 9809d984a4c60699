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
import { NAMED_PER_CTA } from '../machine/state.js';
import { maskRanks } from '../machine/cta-mask.js';
import { perThreads, type Instr, type OpInstr, type Program } from '../machine/program.js';
import { OPC, OPS, accessesOf, pointAccess } from '../machine/ops/index.js';
import { sliceSiblings } from '../machine/roles.js';

/** Most instructions one agent is run forward per question (then the wait counts as not stable). */
export const FORWARD_BUDGET = 20_000;
/** Most instructions all forward runs of one question take together (then the wait counts as not stable). */
export const TOTAL_BUDGET = 200_000;

const GIVE_UP = -1;
const OPC_ST_ASYNC = OPC['st.async'];
const OPC_CHOOSE = OPC['choose'];
const OPC_TRY_CANCEL = OPC['clc.try_cancel'];
const OPC_DSMEM = OPC['cp.async.bulk.shared::cluster'];
const OPC_BAR_SYNC = OPC['bar.sync'];
const OPC_BAR_ARRIVE = OPC['bar.arrive'];
const OPC_FENCE_PROXY = OPC['fence.proxy.async'];

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
 * Stable accesses: agent `a`'s next operation is a generic access (`ld.shared` / `st.shared`,
 * mode `rw`) of shared-memory buffer key `key` in its own CTA, no operation in flight accesses
 * bytes it overlaps in a conflicting mode (one of the two writes), and no other agent, run forward
 * as for {@link stableWait} while `a` stays put, reaches an operation that accesses those bytes:
 * a generic access in a conflicting mode (except a slice sibling's at the same instruction: each
 * warp its own slice, never a race), or any operation that issues an asynchronous access or reads
 * through the async proxy (whose order against a generic access decides the proxy findings).
 * Then the access commutes with every step the others can take until `a` moves: it changes only
 * `a`'s position and `a`'s own checker records (its accesses, its dirty set for the proxy
 * fences, which only `a`'s own releases publish), it enables or disables no other step, and no
 * access it could race with can come before it (so every race it is part of is found from the
 * states where it is taken: the conflicting operations in flight or ghosts there only retire
 * later). Kernels with memory values are excluded by the caller (a write there can steer a
 * reader's control flow). Taking it alone keeps every reachable hazard, deadlock and final state
 * (docs/CHECK.md, "Stable accesses").
 */
export function stableAccess(p: Program, codes: readonly Instr[][], s: MachineState, a: number, ins: OpInstr, key: number, rw: 'r' | 'w'): boolean {
  const per = p.buffersPerCta;
  for (const o of s.inflight) {
    for (const acc of accessesOf(o)) if ((acc.rw === 'w' || rw === 'w') && p.buffersOverlap(acc.buf, key)) return false;
  }
  const own = key % per;
  const touch = (x: number, op: OpInstr, f: number[]): boolean => {
    if (!op.buf && !op.reads) return false;
    const mode = pointAccess(op.opc);
    if (mode !== undefined && op.buf) {
      // A generic access: exact bytes (its key names its CTA).
      if (mode === 'r' && rw === 'r') return false;
      const k = op.buf(f);
      if (k < 0) return true;
      return p.buffersOverlap(k, key) && !(op === ins && sliceSiblings(p, a, x));
    }
    // Anything else that names buffers (copies, stores, MMAs, tcgen05): its keys, and where it
    // can reach other CTAs (a multicast copy, tcgen05 with its CTA pair) the same offsets in any
    // CTA of the cluster.
    const anyCta = op.ints.multicast !== undefined || op.op.op.startsWith('tcgen05');
    const keys: number[] = [];
    if (op.buf) keys.push(op.buf(f));
    if (op.reads) for (const r of op.reads) keys.push(r(f));
    for (const k of keys) {
      if (k < 0) return true;
      if (anyCta ? p.buffersOverlap(k % per, own) : p.buffersOverlap(k, key)) return true;
    }
    return false;
  };
  return frozenFixpoint(p, codes, s, a, -1, () => true, -1, touch);
}

/**
 * Stable proxy fences: agent `a`'s next operation is `fence.proxy.async`, no generic access is
 * published without a fence now (`escaped` is false: the checker's `esc` set is empty), and no other
 * agent, run forward as for {@link stableWait} while `a` stays put, reaches a release (an operation
 * of sync class release, or `bar.sync`) while it holds generic accesses to async-proxy buffers not
 * followed by its own fence (`dirty(x)` now, or an `ld.shared` / `st.shared` of such a buffer on
 * the way, `tracked(key)`). The checker's fence rule (detect-fences.ts) clears the fencing agent's
 * own unfenced accesses, read only by its own later releases and issues, and every published one,
 * of which there are none before `a` moves in any order: so the fence commutes with every step
 * the others can take until `a` moves, and taking it alone keeps every reachable hazard. Only for
 * a launch of one cluster (the published set spans the grid).
 */
export function stableProxyFence(p: Program, codes: readonly Instr[][], s: MachineState, a: number, escaped: boolean,
  dirty: (x: number) => boolean, tracked: (key: number) => boolean): boolean {
  if (escaped || p.grid !== 1) return false;
  let held = false;
  const begin = (x: number) => { held = dirty(x); };
  const touch = (_x: number, op: OpInstr, f: number[]): boolean => {
    if (op.opc === OPC_FENCE_PROXY) held = false;
    else if (pointAccess(op.opc) !== undefined && op.buf) {
      const k = op.buf(f);
      if (k < 0 || tracked(k)) held = true;
    } else if (held && (OPS[op.opc]!.sync === 'release' || op.opc === OPC_BAR_SYNC)) return true;
    return false;
  };
  return frozenFixpoint(p, codes, s, a, -1, () => true, -1, touch, begin);
}

/** What the others can bring to each barrier while agent `a` stays put (see {@link frozenFixpoint}). */
interface Frozen {
  arrivals: Float64Array;
  tx: Uint8Array;
  reset: Uint8Array;
  /** A wait on the barrier that some other agent passes. */
  passed: Uint8Array;
  /** Threads arriving on each named barrier (key cta × 16 + id). */
  named: Float64Array;
  /** Per named barrier: the thread count the others' arrivals name (0: none), or -1 when they name several. */
  namedCount: Float64Array;
}

/** The arrays of one {@link frozenFixpoint} question, at least as long as the state's barriers and named barriers. */
interface Scratch {
  gated: Uint8Array;
  namedGated: Uint8Array;
  f: Frozen;
  need: Float64Array;
}
let scratch: Scratch | null = null;

/**
 * The scratch arrays for a question about `n` barriers and `nn` named barriers: allocated once and
 * grown as needed (allocating five typed arrays per question was most of the question's cost). A
 * question runs to its end before the next one starts (no re-entry), so one set serves them all;
 * each question fills the first `n` / `nn` entries it reads.
 */
function scratchFor(n: number, nn: number): Scratch {
  if (!scratch || scratch.gated.length < n || scratch.namedGated.length < nn) {
    const cn = Math.max(n, scratch?.gated.length ?? 0, 16);
    const cnn = Math.max(nn, scratch?.namedGated.length ?? 0, 16);
    scratch = {
      gated: new Uint8Array(cn), namedGated: new Uint8Array(cnn), need: new Float64Array(cnn),
      f: { arrivals: new Float64Array(cn), tx: new Uint8Array(cn), reset: new Uint8Array(cn), passed: new Uint8Array(cn), named: new Float64Array(cnn), namedCount: new Float64Array(cnn) },
    };
  }
  return scratch;
}

/**
 * The fixpoint of the module comment for a question about barrier `bar` and agent `a`: starts
 * with every barrier gated, runs the other agents of `a`'s cluster forward and ungates the
 * barriers they (or operations in flight) can complete, until nothing changes. `ok` decides the
 * question from the signals of a round; the answer is true only when `bar` stays gated and `ok`
 * holds at the fixpoint. False when a run gives up or the rounds run out.
 */
function frozenFixpoint(p: Program, codes: readonly Instr[][], s: MachineState, a: number, bar: number, ok: (f: Frozen) => boolean, named = -1, touch: Forward['touch'] = null, begin: Forward['begin'] = null): boolean {
  if (shared.left <= 0) return false;
  const budget = { left: Math.min(TOTAL_BUDGET, shared.left) };
  const start = budget.left;
  try {
    return fixpointWithin(p, codes, s, a, bar, ok, named, touch, begin, budget);
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

/** {@link frozenFixpoint} within `budget` (decremented per instruction run and per agent visited). */
function fixpointWithin(p: Program, codes: readonly Instr[][], s: MachineState, a: number, bar: number, ok: (f: Frozen) => boolean, named: number,
  touch: Forward['touch'], begin: Forward['begin'], budget: { left: number }): boolean {
  const n = s.bars.length;
  const nn = s.named.length;
  const sc = scratchFor(n, nn);
  const { gated, namedGated } = sc;
  gated.fill(1, 0, n);
  namedGated.fill(1, 0, nn);
  const f: Frozen = sc.f;
  const { arrivals, tx, reset, passed } = f;
  /** Smallest thread count an arrival of the run names per named barrier (what its generation may need). */
  const need = sc.need;
  // The signals of a round only grow while it runs, and from round to round (the gated set only
  // shrinks, so the runs go further): once `ok` fails it fails at the fixpoint too, and the run
  // stops there (`run.failed`) instead of finishing the round.
  const signal: Signal = (key, count, bytes, init) => {
    if (key < 0 || key >= n) return;
    arrivals[key] += count;
    if (bytes) tx[key] = 1;
    if (init) reset[key] = 1;
    if (!ok(f)) run.failed = true;
  };
  const pass = (key: number) => {
    if (key >= 0 && key < n) passed[key] = 1;
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
  // (the count of a generation no thread joined yet is the smallest any arrival names).
  const namedCompletable = (key: number) => {
    const nb = s.named[key]!;
    const count = nb.arrived > 0 ? nb.count : need[key]!;
    return f.named[key]! > 0 && nb.arrived + f.named[key]! >= count;
  };
  const run: Forward = { gated, namedGated, signal, pass, arriveNamed, budget, failed: false, touch, begin };
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
  for (let round = 0; round < 64; round++) {
    arrivals.fill(0, 0, n);
    tx.fill(0, 0, n);
    reset.fill(0, 0, n);
    passed.fill(0, 0, n);
    f.named.fill(0, 0, nn);
    f.namedCount.fill(0, 0, nn);
    need.fill(Infinity, 0, nn);
    for (const o of s.inflight) {
      const count = o.kind === 'remote' ? (o.remote === 'arrive' || o.remote === 'arrive.expect_tx' || o.remote === 'arrive_drop' ? o.count : 0) : o.kind === 'cpa.arrive' ? o.count : o.kind === 'tc.commit' ? 1 : 0;
      // Bytes: a tx-count change of either sign (a landing's complete_tx, or a remote expect_tx
      // that raises it: a passing wait's checks read the tx-count, see stableWait).
      const bytes = o.kind === 'tma' || o.kind === 'st.async' || o.kind === 'dsmem' || o.kind === 'clc' || (o.kind === 'pick' && o.bar >= 0)
        || (o.kind === 'remote' && (o.remote === 'complete_tx' || o.remote === 'expect_tx' || o.remote === 'arrive.expect_tx'));
      if (o.bar >= 0) signal(o.bar, count, bytes, false);
      if (o.targets) for (const t of o.targets) signal(t, count, bytes, false);
      if (o.kind === 'pick' && o.bar >= 0 && o.bytes === 1) { // a multicast try_cancel: every CTA's barrier
        const off = o.bar % p.barriersPerCta;
        const first = Math.floor(o.bar / p.barriersPerCta) - (Math.floor(o.bar / p.barriersPerCta) % p.clusterSize);
        for (let c = first; c < first + p.clusterSize; c++) signal(c * p.barriersPerCta + off, 0, true, false);
      }
    }
    for (let x = 0; x < s.agents.length; x++) {
      if (--budget.left < 0) return false;
      if (x === a || s.agents[x]!.status !== 'run' || p.agents[x]!.cluster !== cl) continue;
      if (runForward(p, codes[x]!, s, x, a, run) === GIVE_UP || run.failed) return false;
    }
    if (run.failed) return false; // signals of operations in flight alone
    let changed = false;
    for (let key = 0; key < n; key++) {
      if (gated[key] && completable(key)) {
        gated[key] = 0;
        changed = true;
      }
    }
    for (let key = 0; key < nn; key++) {
      if (namedGated[key] && namedCompletable(key)) {
        namedGated[key] = 0;
        changed = true;
      }
    }
    if ((bar >= 0 && !gated[bar]) || (named >= 0 && !namedGated[named]) || !ok(f)) return false;
    if (!changed) return true;
  }
  return false;
}

/** What a step may contribute to barrier `key`: `count` arrivals, bytes (a tx source), or an init / inval. */
type Signal = (key: number, count: number, bytes: boolean, init: boolean) => void;

/** What a forward run reads and reports to (see {@link runForward}). */
interface Forward {
  gated: Uint8Array;
  /** Named barriers whose current generation cannot complete while A stays put. */
  namedGated: Uint8Array;
  signal: Signal;
  pass: (key: number) => void;
  /** `threads` arrive on named barrier `key`, whose instruction names `count` threads. */
  arriveNamed: (key: number, threads: number, count: number) => void;
  budget: { left: number };
  /** Set by the callbacks once the question's answer is certainly false: the runs stop. */
  failed: boolean;
  /** Called with every operation agent `x` reaches (the stable-access question); true: a conflict. */
  touch: ((x: number, op: OpInstr, f: number[]) => boolean) | null;
  /** Called when agent `x`'s forward run begins (before its first `touch`). */
  begin: ((x: number) => void) | null;
}

const CTA_THREADS = new WeakMap<Program, number[]>();
/** Threads of each CTA (the default thread count of `bar.sync`). */
function ctaThreads(p: Program, cta: number): number {
  let t = CTA_THREADS.get(p);
  if (!t) {
    t = new Array<number>(p.ctas).fill(0);
    for (const ag of p.agents) t[ag.cta]! += ag.threads;
    CTA_THREADS.set(p, t);
  }
  return t[cta]!;
}

let frameScratch: number[] = [];
/**
 * A copy of `frame` in one reused array (a forward run writes its locals there, never into the
 * state's frame; runs do not overlap). Entries past `frame.length` are stale and never read: a
 * role's code reads only its own slots.
 */
function frameCopy(frame: readonly number[]): number[] {
  if (frameScratch.length < frame.length) frameScratch = new Array<number>(frame.length).fill(0);
  for (let i = 0; i < frame.length; i++) frameScratch[i] = frame[i]!;
  return frameScratch;
}

/**
 * Runs agent `x` forward from its position without changing `s`, calling `signal` with every
 * barrier key it signals before it certainly blocks, and `pass` with every barrier key whose wait
 * it passes (see the module comment). Returns 0, or {@link GIVE_UP}.
 */
function runForward(p: Program, code: readonly Instr[], s: MachineState, x: number, a: number, run: Forward): number {
  const { gated, namedGated, signal, pass, arriveNamed, budget } = run;
  run.begin?.(x);
  const ag = s.agents[x]!;
  const f = frameCopy(ag.frame);
  const infoX = p.agents[x]!;
  const infoA = p.agents[a]!;
  const sameWarpgroup = infoX.wgLeader === infoA.wgLeader;
  const aGroups = s.agents[a]!.wgGroup;
  const aIssued = s.agents[a]!.wgIssued;
  let issued = ag.wgIssued;
  let group = ag.wgGroup;
  /** Highest wgmma sequence number in each group committed during the run (made at the first commit). */
  let groupTop: Map<number, number> | null = null;
  let pc = ag.pc;
  if (ag.sub >= 0 && code[pc]!.i === 'op' && (code[pc] as OpInstr).opc === OPC_BAR_SYNC) {
    // Waiting in a bar.sync it already arrived at: it stays while its generation cannot complete.
    const key = infoX.cta * NAMED_PER_CTA + ((code[pc] as OpInstr).ints.id!(f) & (NAMED_PER_CTA - 1));
    if (s.named[key]!.gen <= ag.sub && namedGated[key]) return 0;
    pc++;
  }
  try {
    for (let steps = 0; steps < FORWARD_BUDGET; steps++) {
      if (--budget.left < 0 || run.failed) return GIVE_UP;
      const ins = code[pc]!;
      switch (ins.i) {
        case 'set': f[ins.slot] = ins.e(f); pc++; continue;
        case 'jmp': pc = ins.to; continue;
        case 'jz': pc = ins.e(f) ? pc + 1 : ins.to; continue;
        case 'end': return 0;
        default: break;
      }
      const op = ins as OpInstr;
      if (run.touch && run.touch(x, op, f)) {
        run.failed = true;
        return GIVE_UP;
      }
      switch (op.opc) {
        case 5: { // mbarrier.wait
          const w = op.op as Extract<OpInstr['op'], { op: 'mbarrier.wait' }>;
          if (w.dest !== undefined || w.token !== undefined || !op.ints.parity) return GIVE_UP;
          const key = op.bar!(f);
          if (key < 0) return 0; // faults when executed
          const bk = s.bars[key]!;
          if (gated[key] && bk.status === 'valid' && !testParity(bk, op.ints.parity(f))) return 0; // blocked while A stays
          pass(key);
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
          // Bytes: any change of the tx-count, an expect_tx's raise included (it begins the phase a
          // passing wait's checks see, stableWait), not only the complete_tx that lowers it.
          const bytes = op.opc === 3 || op.opc === 4 || op.opc === 7 || (op.opc === 2 && !!op.ints.expectTx);
          // A multicast copy or commit signals the barrier at the same offset in each CTA its mask
          // selects (machine/cta-mask.ts; offsets relative to the named barrier's rank, as ops/bulk.ts
          // and ops/tcgen05.ts place them); a mask selecting none faults when executed.
          if ((op.opc === 7 || op.opc === 12) && op.ints.multicast) {
            const sel = maskRanks(op.ints.multicast(f), p.clusterSize);
            if (!Array.isArray(sel)) break;
            const from = Math.floor(key / p.barriersPerCta) % p.clusterSize;
            for (const r of sel) signal(key + (r - from) * p.barriersPerCta, count, bytes, false);
          } else signal(key, count, bytes, op.opc <= 1);
          break;
        }
        case 14: // wgmma.mma_async
          issued++;
          break;
        case 15: // wgmma.commit_group
          (groupTop ??= new Map()).set(group, issued - 1);
          group++;
          break;
        case 16: { // wgmma.wait_group
          if (!sameWarpgroup) break;
          const limit = group - op.ints.n!(f);
          // A leader that stays put commits no more groups: a warp waiting for a later one blocks.
          if (infoA.wgLeader === a && aGroups < limit) return 0;
          // An MMA of a needed group that A has not issued cannot complete while A stays.
          for (const o of s.inflight) if (o.kind === 'wgmma' && o.agent === infoA.wgLeader && o.group < limit && o.seq >= aIssued) return 0;
          if (groupTop) for (const [g, top] of groupTop) if (g < limit && top >= aIssued) return 0;
          break;
        }
        case 28: // exit
          return 0;
        case OPC_BAR_SYNC: case OPC_BAR_ARRIVE: { // named barriers: whole warps arrive (barriers.ts)
          const key = infoX.cta * NAMED_PER_CTA + (op.ints.id!(f) & (NAMED_PER_CTA - 1));
          const count = op.ints.threads ? op.ints.threads(f) : ctaThreads(p, infoX.cta);
          arriveNamed(key, 32 * (op.per === 'one' ? 1 : infoX.warps), count);
          if (op.opc === OPC_BAR_SYNC && namedGated[key]) return 0; // arrived, and stays while A stays
          break;
        }
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
