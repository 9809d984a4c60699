/**
 * Hazard detector on phase completions: a data barrier whose phase completes while no thread of
 * its CTA ever waits on it (`missing-wait`), and a phase that completes while copies in flight
 * still carry bytes for it (`tx-mismatch`, early). A completion also orders what was waiting for
 * it: the commit ghosts and pending commits on that barrier, and the TMA landings taken early on
 * it, are dropped from the checker data.
 */
import type { MachineState } from '../machine/machine.js';
import type { MachineEvent } from '../machine/events.js';
import type { SrcLoc } from '../kernel/ir.js';
import { txSites } from './por.js';
import type { ExtraDraft, SearchCtx } from './search-ctx.js';
import { LAZY } from './search-hazards.js';

/** The phase detector of search `ctx`: the completion `e` of the step to `t`, updating `d`. */
export function phaseDetector(ctx: SearchCtx): (e: Extract<MachineEvent, { e: 'phase' }>, t: MachineState, d: ExtraDraft, stateId: number) => void {
  const { p, an, sink } = ctx;
  const { waitedKey } = ctx.f;
  return (e, t, d, stateId) => {
    if (!waitedKey[e.bar] && an.dataBarriers.has(p.barrierOf(e.bar).info.name)) {
      const bname = p.barrierName(e.bar);
      const copies = txSites(p, e.bar);
      sink.error({
        kind: 'missing-wait', severity: 'error', key: `${bname}|never`,
        message: `phase ${e.completed} of ${bname} completed, but no thread of its CTA ever waits on ${bname}: the data its copies deliver is never acquired, so nothing orders a reader after them`,
        subject: bname, state: stateId, extra: LAZY, details: ['compute-sanitizer synccheck reports this as "missing wait".', ...copies.map((x) => `bytes registered at line ${x.loc.line}: ${x.text}`)],
        locs: copies.map((x) => x.loc),
      });
    }
    if (d.tghosts) {
      const tghosts = d.tghosts;
      const keep: number[] = [];
      for (let i = 0; i < tghosts.length; i += 2) if (tghosts[i] !== e.bar) keep.push(tghosts[i]!, tghosts[i + 1]!);
      d.tghosts = keep.length ? keep : null;
    }
    // Commit landings the reduction took early on this (commit-only) barrier may be what let
    // another commit complete this phase: in the schedule where they are still in flight it is
    // open. Their ghosts then stay until a wait observes a completed phase (retireObserved).
    if (d.cghosts !== null && !landedEarlyOn(d, e.bar)) dropCommitted(d, e.bar);
    let left = 0;
    for (const o of t.inflight) if (o.kind === 'tma' && o.bar === e.bar && o.left > 0) left += o.left;
    if (left > 0) {
      const locs: SrcLoc[] = [];
      for (const o of t.inflight) if (o.kind === 'tma' && o.bar === e.bar && o.left > 0) locs.push(o.loc);
      const bname = p.barrierName(e.bar);
      const sites = txSites(p, e.bar);
      sink.error({
        kind: 'tx-mismatch', severity: 'error', key: `${bname}|early`,
        message: `phase ${e.completed} of ${bname} completed while copies in flight still carry ${left} bytes for it: the phase expected fewer bytes than its copies deliver, and the rest will be charged to phase ${e.completed + 1}`,
        subject: bname, state: stateId, extra: LAZY, details: sites.map((x) => `bytes registered at line ${x.loc.line}: ${x.text}`), locs: [...sites.map((x) => x.loc), ...locs],
      });
    }
  };
}

/**
 * Whether `d` holds a commit landing the reduction took early on barrier `bar` (`pcm`: its phase
 * had not completed when it was taken). Only commit-only barriers have them: every signal there is
 * one commit's arrival, so the phase a completion starts changes nothing but what waits see, and
 * keeping the ghost until a wait observes the completion is exact (docs/CHECK.md).
 */
export function landedEarlyOn(d: ExtraDraft, bar: number): boolean {
  for (const l of d.pcm) if (l && l.includes(bar)) return true;
  return false;
}

/**
 * A passing wait `e` (step to `t`) that observed a completed phase of its barrier, while no arrival
 * of the barrier's current phase has come yet, orders every commit landing taken early on it: all
 * of them belong to completed phases, and the phase it observed (the latest) could not complete
 * before they landed. Their ghosts (pending commits, and the MMA accesses they cover) are dropped
 * then (the completion itself left them, see {@link phaseDetector}). A wait with something already
 * in the current phase leaves them (conservative: a ghost of the open phase is not told apart
 * from older ones).
 */
export function retireObserved(e: Extract<MachineEvent, { e: 'wait' }>, t: MachineState, d: ExtraDraft): void {
  if (e.pass && untouchedSinceCompletion(t, e.bar)) dropCommitted(d, e.bar);
}

/**
 * Whether barrier `bar` in `t` has completed a phase and nothing (no arrival, no byte) has come in
 * its current one: every commit on it then belongs to a completed phase.
 */
export function untouchedSinceCompletion(t: MachineState, bar: number): boolean {
  const b = t.bars[bar];
  return !!b && b.status === 'valid' && b.phase >= 1 && b.pending === b.expected && b.tx === 0;
}

/** The completion of a phase of barrier `bar` orders the commit ghosts on it and the pending commits into it. */
export function dropCommitted(d: ExtraDraft, bar: number): void {
  const x = d.x;
  for (let g = 0; g < d.cghosts.length; g++) {
    const cl = d.cghosts[g];
    if (!cl) continue;
    let hit = false;
    for (let i = 0; i < cl.length; i += 2) if (cl[i] === bar) hit = true;
    if (!hit) continue;
    const keep: number[] = [];
    for (let i = 0; i < cl.length; i += 2) if (cl[i] !== bar) keep.push(cl[i]!, cl[i + 1]!);
    if (d.cghosts === x.cghosts) d.cghosts = d.cghosts.slice();
    d.cghosts[g] = keep.length ? keep : null;
  }
  for (let g = 0; g < d.pcm.length; g++) {
    const l = d.pcm[g];
    if (!l || !l.includes(bar)) continue;
    if (d.pcm === x.pcm) d.pcm = d.pcm.slice();
    const keep = l.filter((b) => b !== bar);
    d.pcm[g] = keep.length ? keep : null;
  }
}
