/**
 * Hazard detector on passing waits (`phase-alias`, `vacuous-wait`): each (agent, barrier) waiter
 * slot remembers in `Extra.hist` the last phase it observed and where, so a wait that skipped
 * phases, fell behind, or re-observed the phase it had already returned for is found on the
 * transition that passes it; and, at the end of an execution, a stale re-observation whose
 * barrier went on to complete the next phase.
 *
 * History: two words per slot (wait-hist.ts), the observed phase and the wait's position, exact
 * at any phase count.
 */
import type { Choice, MachineState } from '../machine/machine.js';
import type { MachineEvent } from '../machine/events.js';
import type { SrcLoc } from '../kernel/ir.js';
import type { RawHazard } from './engine.js';
import type { Extra } from './codec.js';
import type { ExtraDraft, SearchCtx } from './search-ctx.js';
import { locKey } from './search-facts.js';
import { LAZY } from './search-hazards.js';
import { lastObserved, lastPc, lastStale, samePass, setPass } from './wait-hist.js';

/** The wait detector of one search. */
export interface WaitDetector {
  /** A passing wait `e` of the step from `s` to `t`; updates the waiter's history in `d`. */
  wait(e: Extract<MachineEvent, { e: 'wait' }>, s: MachineState, t: MachineState, d: ExtraDraft, stateId: number): void;
  /**
   * At the end of an execution (or a hang): a wait that re-observed the phase it had already
   * returned for (stale history bit) while its barrier went on to complete the next phase, which the
   * waiter never observed (Triton, https://github.com/facebookexperimental/triton/pull/3420).
   */
  staleAtEnd(s: MachineState, x: Extra, id: number): void;
}

/** The wait detector of search `ctx`. */
export function waitDetector(ctx: SearchCtx): WaitDetector {
  const { p, an, sink } = ctx;
  const { slotOf, agentName, insAt } = ctx.f;
  const skippedForOther = otherConsumers(ctx);
  const staleAlias = staleAliasOf(ctx);

  const wait: WaitDetector['wait'] = (e, s, t, d, stateId) => {
    if (!e.pass) return;
    const slot = slotOf(e.agent, e.bar);
    if (slot < 0) return;
    const observed = e.phase - 1 - ((e.phase - 1 - e.parity) & 1);
    const last = lastObserved(d.hist, slot);
    const pc = s.agents[e.agent]!.pc;
    const stale = last !== null && observed === last && lastPc(d.hist, slot) === pc;
    const intent = last === null ? 0 : last + 1;
    if (observed < 0) {
      const bname = p.barrierName(e.bar);
      const info = p.barrierOf(e.bar).info;
      if (an.dataBarriers.has(info.name)) {
        sink.report({
          kind: 'vacuous-wait', severity: 'warning', key: `${bname}|${locKey(e.loc)}`,
          message: `${agentName(e.agent)} passed wait(${bname}, parity ${e.parity}) without any phase completing: a fresh barrier passes parity 1 at once, but ${info.name} carries transaction bytes, so this wait was meant to wait for data`,
          subject: bname, state: stateId, extra: LAZY, details: ['The producer-start idiom (parity 1 on a fresh empty barrier) is not reported: it is only reported on barriers that receive tx bytes.'], locs: [e.loc],
        });
      }
    } else if (Math.abs(observed - intent) >= 2 && !(observed > intent && skippedForOther(e.agent, e.bar, observed, d.hist))) {
      const bname = p.barrierName(e.bar);
      const msg = observed < intent
        ? `${agentName(e.agent)} passed wait(${bname}, parity ${e.parity}) on phase ${observed}, ${intent - observed} phases behind the phase ${intent} it was due to wait for (its previous pass saw phase ${last}): the parity matched an old phase, so the wait returned without the phase it needed`
        : `${agentName(e.agent)} passed wait(${bname}, parity ${e.parity}) on phase ${observed} while it was due to wait for phase ${intent}: the barrier completed ${observed - intent} phase(s) it never observed (parity aliasing)`;
      sink.error({ kind: 'phase-alias', severity: 'error', key: `${bname}|${locKey(e.loc)}`, message: msg, subject: bname, state: stateId, extra: LAZY, details: [], locs: [e.loc] });
    }
    if (stale) {
      // The same wait returned again on the phase it had consumed; if the barrier has already
      // begun its next phase (arrivals or bytes in), that next phase is what the wait was for.
      const b = t.bars[e.bar]!;
      if (b.status === 'valid' && (b.pending < b.expected || b.tx !== 0)) sink.error(staleAlias(e.agent, e.bar, observed, e.parity, e.loc, stateId, LAZY, false));
    }
    if (!samePass(d.hist, slot, observed, pc, stale)) {
      if (d.hist === d.x.hist) d.hist = d.hist.slice();
      setPass(d.hist, slot, observed, pc, stale);
    }
  };

  const staleAtEnd: WaitDetector['staleAtEnd'] = (s, x, id) => {
    for (let a = 0; a < p.agents.length; a++) {
      for (const [bar, slot] of an.waitSlots[a]!) {
        const observed = lastObserved(x.hist, slot);
        if (observed === null || !lastStale(x.hist, slot)) continue;
        if (s.bars[bar]!.phase <= observed + 1) continue;
        const ins = insAt(a, lastPc(x.hist, slot));
        if (!ins || ins.i !== 'op') continue;
        sink.error(staleAlias(a, bar, observed, observed & 1, ins.loc, id, [], true));
      }
    }
  };
  return { wait, staleAtEnd };
}

/**
 * The `phase-alias` of a wait that returned again on the phase it had already returned for (the
 * same instruction; its parity did not advance), while the barrier went on to phase `observed + 1`.
 */
function staleAliasOf(ctx: SearchCtx) {
  const { p } = ctx;
  const { agentName } = ctx.f;
  return (a: number, bar: number, observed: number, parity: number, loc: SrcLoc, stateId: number, extra: Choice[], later: boolean): RawHazard => {
    const bname = p.barrierName(bar);
    return {
      kind: 'phase-alias', severity: 'error', key: `${bname}|${locKey(loc)}|stale`,
      message: `${agentName(a)} passed wait(${bname}, parity ${parity}) at line ${loc.line} ${observed < 0 ? 'a second time on the fresh barrier (no phase completed), as it had already returned' : `on phase ${observed}, the phase this same wait had already returned for`}: its parity did not advance, ${later ? `and ${bname} went on to complete phase ${observed + 1}, which ${agentName(a)} never waited for` : `so it returned without waiting for phase ${observed + 1}, which ${bname} has already begun`}`,
      subject: bname, state: stateId, extra,
      details: ['The parity this wait computes did not advance between its passes: a phase counter restarted per persistent tile while the barrier\'s phase carries over (Triton, https://github.com/facebookexperimental/triton/pull/3420), or a parity computed from another loop counter than the stage index.'],
      locs: [loc],
    };
  };
}

/**
 * Whether a wait of agent `a` on barrier key `bar` that observed phase `observed`, two or more
 * past the phase it was due to observe, skipped only phases that another consumer took: some
 * waiter of another instance of the same role (the warps of one instance are one consumer; a
 * producer waiting on the barrier is not a consumer) has already observed phase
 * `observed - 1` or later (history `h`). Skipping
 * consumers (CUTLASS's pingpong math warpgroups on alternate tiles, FlashAttention-3's second
 * warpgroup) pass their waits on the phases after the ones the other consumer observed.
 */
function otherConsumers(ctx: SearchCtx): (a: number, bar: number, observed: number, h: number[]) => boolean {
  const { p, an } = ctx;
  const { nBars, slotOf } = ctx.f;
  /** The consumer agent `a` belongs to: its role instance in its CTA (its warps are one consumer). */
  const consumerOf = (a: number) => { const g = p.agents[a]!; return `${g.role}:${g.instance}:${g.cta}`; };
  /** Agents that may wait on barrier key k (a history slot), per key; built once. */
  const waitersOf = new Map<number, number[]>();
  an.waitSlots.forEach((ws, a) => ws.forEach((_slot, k) => {
    let l = waitersOf.get(k);
    if (!l) waitersOf.set(k, (l = []));
    l.push(a);
  }));
  const othersCache = new Map<number, Int32Array>();
  return (a, bar, observed, h) => {
    const ck = a * nBars + bar;
    let others = othersCache.get(ck);
    if (!others) {
      const me = consumerOf(a);
      const role = p.agents[a]!.role;
      others = Int32Array.from((waitersOf.get(bar) ?? []).filter((b) => p.agents[b]!.role === role && consumerOf(b) !== me));
      othersCache.set(ck, others);
    }
    for (let i = 0; i < others.length; i++) {
      const o = lastObserved(h, slotOf(others[i]!, bar));
      if (o !== null && o >= observed - 1) return true;
    }
    return false;
  };
}
