/**
 * What every view shows at step `k` of a replayed counterexample: the step's detail for the Check
 * tab (the step, its notes and source line, each barrier's state after it, and at the last step
 * of a hang who is blocked and why, waiters blocked the same way as one entry), the replay bar's headline, and the barrier the mechanism view
 * shows (the hazard's barrier, else the one the step touched, else the last one shown). Pure.
 */
import type { Hazard } from '../check/check.js';
import type { MBarrier } from '../model/mbarrier.js';
import { waiterGroups } from '../report/hang-groups.js';
import { barStateAt, type BarState, type RunModel } from './model.js';
import type { StepDetail } from './views/check.js';

/** A barrier's state in words. */
export const stateText = (st: BarState) =>
  st.valid ? `phase ${st.phase} (parity ${st.phase & 1}) · pending ${st.pending} of ${st.expected} · tx-count ${st.tx} B` : 'not initialized';

/** The views' content at step `k` (0: before the first) of counterexample `index`. `lines`: the sketch's source lines. */
export function replayStep(tm: RunModel, hz: Hazard, index: number, k: number, lines: readonly string[], subject: string | null, lastBar: string | null):
  { detail: StepDetail; headline: string; barrier: string | null; mech: { state: MBarrier; caption: string } | null } {
  const t = k > 0 ? hz.trace[k - 1] : undefined;
  const ev = k === 0 ? -1 : tm.trace!.stepEnd[k]!;
  const touched = new Set((t?.barriers ?? []).map((b) => b.name));
  const bars = tm.barLanes.slice(0, 64).map((l) => ({ name: l.label, text: stateText(barStateAt(l, ev)), hot: touched.has(l.label) || l.label === subject }));
  const line = t?.loc?.line ?? 0;
  const src = line > 0 ? lines[line - 1] : undefined;
  const blocked = k === hz.trace.length && tm.sim.hang
    ? waiterGroups(tm.sim.hang.waiters).map((g) => `${g.label} ${g.count > 1 ? 'are' : 'is'} blocked in ${g.op}${g.line ? ` (line ${g.line}${g.origin ? `, ${g.origin}` : ''})` : ''}: ${g.reasons.join(' ')}`)
    : [];
  const detail: StepDetail = {
    head: t ? `${t.n}. ${t.actor}: ${t.op}` : 'Before the first step: every barrier as initialized.',
    notes: t?.notes ?? [],
    source: line > 0 ? `line ${line}${src !== undefined ? `:  ${src.trim()}` : ' (TypeScript builder)'}` : '',
    bars, blocked,
  };
  const headline = `Replaying counterexample ${index + 1} (${hz.kind}${hz.subject ? ` on ${hz.subject.name}` : ''}): step ${k} of ${hz.trace.length}${t ? ` — ${t.actor}: ${t.op.replace(/\s+\[.*$/, '')}` : ''}`;
  const barrier = subject ?? t?.barriers[0]?.name ?? lastBar ?? tm.barLanes[0]?.label ?? null;
  const lane = tm.barLanes.find((l) => l.label === barrier);
  let mech: { state: MBarrier; caption: string } | null = null;
  if (lane) {
    const st = barStateAt(lane, ev);
    mech = {
      state: { status: st.valid ? 'valid' : 'uninit', phase: st.phase, pending: st.pending, expected: st.expected, tx: st.tx },
      caption: `${lane.label} ${k === 0 ? 'before the first step' : `after step ${k}`} of counterexample ${index + 1} (${hz.kind})`,
    };
  }
  return { detail, headline, barrier, mech };
}
