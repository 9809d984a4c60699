/**
 * The static findings behind the checker's hazards (a count or trip-count mismatch behind a race,
 * an arrive never executed behind a hang) and the order in which hazards are reported (a cause
 * before the symptoms the same bug leads to). Race causes from the trace: cause.ts.
 */

/**
 * The static finding that explains a race: a count or trip-count mismatch on a barrier whose phase
 * released the later side (`bars`), or on a named barrier the trace synchronized on (`named`:
 * `bar.sync ID` names, with `@cN` in clusters). Arrivals that do not add up to a barrier's count
 * let a phase complete (or a named barrier's generation finish) before every side is done, which
 * is what the race then shows; null when none applies.
 */
export function staticRaceCauseOf<T extends { kind: string; subject: { name: string } | null }>(bars: readonly string[], named: readonly string[], statics: readonly T[]): T | null {
  for (const b of bars) {
    for (const kind of ['count-mismatch', 'trip-mismatch']) {
      const hit = statics.find((w) => w.kind === kind && w.subject && names(w.subject.name, b));
      if (hit) return hit;
    }
  }
  for (const n of named) {
    const hit = statics.find((w) => w.kind === 'count-mismatch' && w.subject && (w.subject.name === n || w.subject.name === n.replace(/@c\d+$/, '')));
    if (hit) return hit;
  }
  return null;
}

/**
 * Causes that come from the search, not from the static checks: `start-parity` (a hang's waiter
 * with parity 0 on a fresh barrier) and `vacuous-wait` (a race whose wait passed on the fresh
 * barrier with parity 1), both the wait's parity; `tx-mismatch` (a hang on a phase whose
 * expect_tx asks bytes that no copy delivers: the byte count); `skipped-phase` (a hang's waiter whose
 * parity skips a completed phase that no waiter observed: the parity did not advance).
 */
export const SEARCH_CAUSES: ReadonlySet<string> = new Set(['start-parity', 'vacuous-wait', 'tx-mismatch', 'skipped-phase']);

/** Kinds of static findings that can explain a hang. */
const EXPLAINS_HANG = new Set(['unreachable-arrive', 'trip-mismatch', 'count-mismatch']);

/** Whether static finding subject `s` (a barrier `full[0]`, or an array `full` for an arrive site) names barrier `name`. */
function names(s: string, name: string): boolean {
  const bare = name.replace(/@c\d+$/, '');
  return s === name || s === bare || name.startsWith(`${s}[`);
}

/**
 * The static finding (an arrive never executed, trip counts that differ between roles, arrivals
 * that do not add up to the count) that explains a hang whose waiters wait on `subject` or on
 * `waitBarriers` (its raw hazard's, first waiter first), or null.
 */
export function staticCauseOf<T extends { kind: string; subject: { name: string } | null }>(subject: string | null, waitBarriers: readonly string[], statics: readonly T[]): T | null {
  const bars = [...(subject ? [subject] : []), ...waitBarriers];
  for (const b of bars) {
    for (const kind of ['unreachable-arrive', 'trip-mismatch', 'count-mismatch']) {
      const hit = statics.find((w) => w.kind === kind && EXPLAINS_HANG.has(w.kind) && w.subject && names(w.subject.name, b));
      if (hit) return hit;
    }
  }
  return null;
}

/**
 * Rank of a hazard in the report (lower first; ties by trace length): a race in which an async copy
 * overwrites a buffer that a generic access read (the producer refilling a stage it was not given
 * back) is usually the symptom of an earlier consumer-side bug, so it comes after the other errors
 * when the report holds a race of rank 0 (the consumer-side race); without one the overwrite race
 * is the bug's own and keeps its place by trace length (check.ts). `overwrite`: the race's
 * `RaceBars` entry says so (check/race-report.ts, from the trace's events, not its text).
 */
export function causeRank(h: { kind: string }, overwrite: boolean | undefined): number {
  return h.kind === 'race' && overwrite === true ? 1 : 0;
}
