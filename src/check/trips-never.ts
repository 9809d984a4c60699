/**
 * Waiters that never passed, for the relative phase key of the all-trip-counts check
 * (trips-normal.ts; docs/CHECK.md "Phases 0 and 1"). A waiter whose history slot says "never
 * passed" (wait-hist.ts) reads its barrier's phase absolutely: its first pass is due to observe
 * phase 0, so that pass is a `phase-alias` (detect-waits.ts) when it observes phase 2 or later and
 * no other consumer excuses the skip. Keying that barrier's phases relative to one another then
 * identifies a state where the first pass can still observe phase 0 or 1 with one where it cannot.
 *
 * Such a slot is *near* (its barrier's phase must be kept absolute) unless one of these holds in
 * the frame the key is taken in (phases `back` behind the state's own, half a period):
 * - the barrier's phase P is 4 or more: every later pass observes O ≥ P − 2 ≥ 2 (phases only grow,
 *   a parity names one of the last two), so it is an alias exactly when it is not excused, in
 *   every state the key identifies it with (those have phases at least as large);
 * - another consumer of the barrier (another instance of the waiter's role, the skip test's
 *   others) has observed phase 0 or later: the passes that observe phase 0 or 1 in this state are
 *   excused (o ≥ O − 1 with O ≤ 1), and their twins, the same distance past that consumer's
 *   entry, are excused alike; a pass observing 2 or more is judged alike in both. That entry stays
 *   at 0 or more: with the barrier past phase 0, no later pass observes phase −1;
 * - the waiter never waits on the barrier again (trips-dead.ts), so no rule reads its slot.
 */
import type { Program } from '../machine/program.js';
import type { MachineState } from '../machine/machine.js';
import type { Analysis } from './analysis.js';
import type { WaitReach } from './trips-dead.js';
import { lastObserved, NEVER } from './wait-hist.js';

/**
 * The history slots (wait-hist.ts) of `hist` whose waiter never passed, may still wait on the
 * barrier (`reach`; without it, every waiter may) and are near in the frame `back(bar)` phases
 * behind the barrier's phase in `bars` and the other entries of `hist` (see the module comment),
 * with their barrier keys. A barrier that is not valid counts as near (its phase is kept).
 */
export function nearNever(pH: Program, an: Analysis, s: MachineState, bars: readonly MachineState['bars'][number][], hist: readonly number[], back: (bar: number) => number, reach?: WaitReach): { slot: number; bar: number }[] {
  const out: { slot: number; bar: number }[] = [];
  an.waitSlots.forEach((m, a) => m.forEach((slot, bar) => {
    if (hist[slot] !== NEVER || hist[slot + 1] !== 0) return;
    const b = bars[bar]!;
    const d = back(bar);
    if (b.status === 'valid') {
      if (b.phase - d >= 4) return;
      for (const sc of othersOf(pH, an, a, bar)) {
        const o = lastObserved(hist, sc);
        if (o !== null && o - d >= 0) return;
      }
    }
    if (reach && reach.neverWaits(s, a, bar)) return;
    out.push({ slot, bar });
  }));
  return out;
}

/** The word a near slot's phase is written as in the key: no history word (wait-hist.ts) has it. */
export const NEAR_MARK = -4;

const others = new WeakMap<Analysis, Map<number, number[]>>();

/**
 * The history slots on barrier `bar` whose passes may excuse a skip of agent `a` (detect-waits.ts
 * `otherConsumers`: agents of the same role, another consumer: role instance and CTA).
 */
function othersOf(pH: Program, an: Analysis, a: number, bar: number): number[] {
  let byKey = others.get(an);
  if (!byKey) others.set(an, (byKey = new Map()));
  const k = a * 2 ** 18 + bar; // MAX_BARRIERS keys per launch
  let l = byKey.get(k);
  if (!l) {
    const me = pH.agents[a]!;
    l = [];
    an.waitSlots.forEach((m, c) => {
      const g = pH.agents[c]!;
      const sc = m.get(bar);
      if (sc === undefined || g.role !== me.role || (g.instance === me.instance && g.cta === me.cta)) return;
      l!.push(sc);
    });
    byKey.set(k, l);
  }
  return l;
}

/**
 * How far back (an even number of phases) the relative key moves barrier phase `phase` and every
 * phase that refers to it, `least` the least of them (a near waiter counting as −1). With
 * `monotone` (no `mbarrier.init` / `inval` in role code, so phases only grow) the least referred
 * phase goes down to 0 or 1 and the barrier's own phase stays 1 or more once it has completed a
 * phase: every rule reads phases relative to one another or by parity, but for phase = 0 (a parity-1
 * wait passes vacuously: `vacuous-wait`; detect-phase.ts `untouchedSinceCompletion` reads phase ≥ 1)
 * and a near waiter's first pass, kept absolute by its −1. Otherwise phases 0 to 3 stay as they
 * are (an `mbarrier.init` restarts a phase count at 0).
 */
export function baseOf(monotone: boolean, least: number, phase: number): number {
  if (!monotone) return least >= 4 ? 2 * Math.floor((least - 2) / 2) : 0;
  return Math.max(0, 2 * Math.floor(Math.min(least, phase - 1) / 2));
}

/**
 * Whether moving every barrier of `flip` one phase back (half a period, trips-half.ts) keeps every
 * rule that reads phases absolutely answering alike: with `monotone` each flipped barrier is valid,
 * in phase 2 or more (so it stays past phase 0), its least referred phase in `least` is 0 or more
 * (every phase stays −1 or more, the least a pass can observe), and no waiter of it that never
 * passed is near one phase back (`nearBack`: {@link nearNever} with those barriers one phase
 * back); otherwise each flipped barrier's least referred phase is 3 or more (it stays at 2 or more,
 * the old floor of {@link baseOf}).
 */
export function flipKeeps(flip: ReadonlySet<number>, monotone: boolean, bars: readonly MachineState['bars'][number][], least: readonly number[], nearBack: (back: (bar: number) => number) => readonly { bar: number }[]): boolean {
  if (!monotone) return [...flip].every((b) => least[b]! >= 3);
  for (const b of flip) if (bars[b]!.status !== 'valid' || bars[b]!.phase < 2 || least[b]! < 0) return false;
  return !nearBack((bar) => (flip.has(bar) ? 1 : 0)).some((n) => flip.has(n.bar));
}
