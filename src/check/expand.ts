/**
 * The expansion of one stored state: its enabled choices (a terminal state goes to the hang and
 * end-of-execution checks instead), the symmetry reduction's skipped agents, the postponed
 * landings taken last, and for each successor its chain of forced steps closed and the state
 * reached stored once (claimed in the visited set first), within the bounds.
 */
import type { Choice, MachineState } from '../machine/machine.js';
import type { Governor } from '../machine/governor.js';
import type { Codec, Extra, StateBuf } from './codec.js';
import { stopOf, type ExploreResult, type HashSet } from './engine.js';
import type { ForcedStep } from './forced.js';
import type { Postponed } from './postpone.js';
import { interchangeableLandings } from './landing-order.js';
import type { SearchCtx } from './search-ctx.js';
import type { Successors } from './successor.js';
import type { TransitionCheck } from './transition.js';

/** What an expansion needs from the search. */
/** A successor copying at least this many bytes asks the governor first (fresh reading). */
const BIG_CLONE = 1 << 20;

export interface ExpandDeps {
  ctx: SearchCtx;
  codec: Codec;
  visited: HashSet;
  gov: Governor;
  usePor: boolean;
  useSym: boolean;
  verifyHash: boolean;
  sx: Successors;
  check: TransitionCheck;
  forced: ForcedStep;
  postponed: Postponed;
  /** Co-enabled conflicting accesses in a state (co-enabled.ts). */
  coEnabled(s: MachineState, id: number, prefix: Choice[]): void;
  /** A terminal state where some agent still runs (detect-hang.ts). */
  hang(s: MachineState, id: number, x: Extra): void;
  /** A terminal state's stale waits (detect-waits.ts). */
  staleAtEnd(s: MachineState, x: Extra, id: number): void;
  onTerminal?: (s: MachineState) => void;
  /** Records a new stored state (reached from `parentId` by `chain`); returns its id. */
  store(parentId: number, chain: Choice[]): number;
  /** Updates the governor's estimate of the search's bytes (`next`: the frontier being filled). */
  estimate(next: StateBuf): void;
  /** A visited-set key other than the codec's hash (ExploreOptions.hooks.key). */
  key?: ((s: MachineState, x: Extra, out: Uint32Array) => void) | undefined;
}

/** The expansion of one search, with its counters and the bound it stopped at. */
export interface Expander {
  /** The record hashes of the state being expanded (decoded with it). */
  readonly rhCur: Int32Array;
  /** Expands state `s` (checker data `x`, stored as `id`) into the frontier `next`. */
  expand(s: MachineState, x: Extra, id: number, next: StateBuf): void;
  /** Terminal states where every agent exited, and states passed through by forced steps. */
  readonly stats: { terminalOk: number; intermediates: number };
  /** The bound a long forced chain or an expansion ran into, or null. */
  abortBy(): ExploreResult['stoppedBy'];
  /**
   * A random run from state `s` (stored as `id`): up to `maxSteps` steps, each a choice drawn by
   * `rand` (0 ≤ rand() < 1) among the enabled ones, through the same transition and state checks
   * as an expansion, each state reached stored (`store`) but not claimed in the visited set. Stops
   * at a terminal state, a trap, an error found or a bound; returns the steps taken.
   */
  dive(s: MachineState, x: Extra, id: number, rand: () => number, maxSteps: number): number;
}

/** The counters of an expansion and the bound it stopped at (shared by its parts). */
interface ExpandState {
  terminalOk: number;
  intermediates: number;
  /** The bound a long forced chain ran into (checked inside chains and between expansions), or null. */
  abortBy: ExploreResult['stoppedBy'];
}

/** The expander of a search. */
export function expander(dep: ExpandDeps): Expander {
  const { ctx, codec, sx, gov } = dep;
  const { p, m, an } = ctx;
  // The arrays a successor copies: the barriers, the agents and the checker's per-agent records
  // (successor.ts, clone.ts, the Extra of codec.ts): about what one leaves behind (measured: some
  // 500 bytes per agent on a launch of 33,792 warps).
  const cloneBytes = (p.ctas * p.barriersPerCta + 64 * p.agents.length) * 8;
  const st: ExpandState = { terminalOk: 0, intermediates: 0, abortBy: null };
  const stats = {
    get terminalOk() { return st.terminalOk; },
    get intermediates() { return st.intermediates; },
  };
  const rhCur = new Int32Array(codec.rhLength());
  const rhSucc = new Int32Array(codec.rhLength());
  const skip = new Uint8Array(p.agents.length);
  const closeAndStore = chainCloser(dep, st);
  /** Remote arrives in flight whose landings are interchangeable with an earlier one (landing-order.ts): not explored. */
  const sameLanding = dep.usePor ? interchangeableLandings(ctx) : null;
  let twin = new Uint8Array(16);
  /** Symmetry: of interchangeable agents whose records are equal, only the first is expanded (`skip`). */
  const markSymmetric = () => {
    // The others' successors are permutations of its successors, which hash to the same states.
    for (const g of an.groups) {
      const ags = g.agents;
      for (let i = 0; i < ags.length; i++) {
        const a = ags[i]!;
        skip[a] = 0;
        for (let j = 0; j < i; j++) {
          const b = ags[j]!;
          if (rhCur[2 * a] === rhCur[2 * b] && rhCur[2 * a + 1] === rhCur[2 * b + 1]) {
            skip[a] = 1;
            break;
          }
        }
      }
    }
  };
  /** The end-of-execution checks of a terminal state; `count`: a state of the search (not of a random run). */
  const terminal = (s: MachineState, x: Extra, id: number, count = true) => {
    if (count) dep.onTerminal?.(s);
    dep.staleAtEnd(s, x, id);
    let running = false;
    for (const a of s.agents) if (a.status === 'run') running = true;
    if (running) dep.hang(s, id, x);
    else if (count) st.terminalOk++;
  };

  const expand = (s: MachineState, x: Extra, id: number, next: StateBuf) => {
    const ch = m.enabled(s);
    if (ch.length === 0) return terminal(s, x, id);
    dep.coEnabled(s, id, []);
    // rhCur: the record hashes stored with the state (decode).
    if (dep.verifyHash) sx.verify(s, x, rhCur);
    if (dep.useSym) markSymmetric();
    // Postponed landings: marked first, taken after the other steps only where one conflicts.
    const post = dep.postponed;
    const nPost = dep.usePor && s.inflight.length && ch.length > 1 ? post.mark(s, ch) : 0;
    if (twin.length < ch.length) twin = new Uint8Array(2 * ch.length);
    const nTwin = sameLanding && s.inflight.length > 1 ? sameLanding(s, ch, twin) : 0;
    const step = (c: Choice) => {
      if (st.abortBy) return; // a bound stopped the search: the remaining successors are not computed
      const who = sx.actorOf(s, c);
      if (skip[who]) return;
      // A successor of the largest launches copies MBs of records (collected later): asked first.
      if (cloneBytes >= BIG_CLONE && !gov.allow(cloneBytes, true)) {
        st.abortBy = 'max-memory';
        return;
      }
      const t = sx.succ(s, c, who);
      const nx = dep.check(s, t, c, ctx.out.events!, x, id, []);
      if (nPost) post.note(s, t, c, ch.length);
      if (t.trapped) return;
      const rh = rhSucc; // closeAndStore keeps no reference to it
      rh.set(rhCur);
      sx.rehash(s, t, x, nx, who, rh);
      closeAndStore(t, nx, rh, id, [c], next);
    };
    for (let i = 0; i < ch.length; i++) if ((!nPost || post.bar[i]! < 0) && !(nTwin && twin[i])) step(ch[i]!);
    if (nPost) for (let i = 0; i < ch.length; i++) if (post.bar[i]! >= 0 && post.hit[i] && !(nTwin && twin[i])) step(ch[i]!);
  };
  const dive = (s: MachineState, x: Extra, id: number, rand: () => number, maxSteps: number): number => {
    const sink = ctx.sink;
    for (let n = 0; n < maxSteps; n++) {
      if (st.abortBy || sink.errorFound) return n;
      if ((n & 63) === 63) {
        const b = gov.tick();
        if (b !== null) {
          st.abortBy = stopOf(b);
          return n;
        }
      }
      const ch = m.enabled(s);
      if (ch.length === 0) {
        terminal(s, x, id, false);
        return n;
      }
      dep.coEnabled(s, id, []);
      const c = ch[Math.floor(rand() * ch.length)]!;
      const t = sx.succ(s, c, sx.actorOf(s, c));
      const nx = dep.check(s, t, c, ctx.out.events!, x, id, []);
      if (t.trapped) return n + 1;
      id = dep.store(id, [c]);
      s = t;
      x = nx;
    }
    return maxSteps;
  };
  return { rhCur, expand, stats, abortBy: () => st.abortBy, dive };
}

/**
 * Applies forced steps to `t` until none is left, then stores the state reached (chain from
 * `parentId`). `rh` holds `t`'s record hashes and is owned by the call.
 */
function chainCloser(dep: ExpandDeps, st: ExpandState): (t: MachineState, nx: Extra, rh: Int32Array, parentId: number, chain: Choice[], next: StateBuf) => void {
  const { codec, visited, gov, sx } = dep;
  const hbuf = new Uint32Array(2);
  const boundHit = (next: StateBuf): boolean => {
    dep.estimate(next);
    // Table growths ask the governor first (growthGuard); here the clock, memory and the other workers' stop.
    const b = gov.check();
    if (b !== null) st.abortBy = stopOf(b);
    return st.abortBy !== null;
  };
  return (t, nx, rh, parentId, chain, next) => {
    if (st.abortBy) return;
    // One expansion can have thousands of large successors: the clock and memory are checked here too.
    const b = gov.tick();
    if (b !== null) {
      st.abortBy = stopOf(b);
      return;
    }
    for (let guard = 0; ; guard++) {
      // A long chain (a loop without synchronization) fills the visited table on its own: keep to the bounds.
      if ((guard & 4095) === 4095 && (boundHit(next) || st.abortBy)) return;
      // Each forced step can cost a scan of every agent (and stable-wait questions): the clock is
      // consulted through the governor's adaptive tick inside long chains too.
      if (guard > 0) {
        const gb = gov.tick();
        if (gb !== null) {
          st.abortBy = stopOf(gb);
          return;
        }
      }
      if (dep.verifyHash) sx.verify(t, nx, rh);
      codec.combine(t, nx, rh, hbuf);
      if (dep.key) dep.key(t, nx, hbuf);
      // Claimed before its successors are computed (one probe; in a parallel search exactly one
      // worker goes on from it); false: reached before (as a stored or an intermediate state).
      if (!visited.add(hbuf[0]!, hbuf[1]!)) return;
      const f = dep.usePor && guard < 100_000 ? dep.forced(t, nx, parentId, chain, rh) : null;
      if (!f) break;
      // Intermediate state: remembered (so other paths stop here) but never stored or expanded.
      st.intermediates++;
      dep.coEnabled(t, parentId, chain);
      if (f.t.trapped) return; // the diagnostic was reported; the kernel stops
      const px = nx;
      const pt = t;
      t = f.t;
      nx = f.nx;
      chain.push(f.c);
      sx.rehash(pt, t, px, nx, f.who, rh);
    }
    const nid = dep.store(parentId, chain);
    codec.encode(t, nx, next, nid, rh);
  };
}
