/**
 * Hazard detector on terminal states where some agent still runs (`hang`): why each blocked agent
 * can never proceed (machine/hang.ts, with the phases each waiter observed from `Extra.hist`), a
 * wait-for cycle among them (`cycle`), and a blocked wait whose phase can never reach a tx-count
 * of 0 (`tx-mismatch`, late).
 */
import { waiterGroups } from '../report/hang-groups.js';
import type { MachineState } from '../machine/machine.js';
import { explainHang, type BlockedWaiter } from '../machine/hang.js';
import type { Extra } from './codec.js';
import { copySites, txSites } from './por.js';
import type { SearchCtx } from './search-ctx.js';
import { locKey } from './search-facts.js';
import { lastObserved } from './wait-hist.js';

/** The hang detector of search `ctx`: the terminal state `s` (stored as `id`, checker data `x`). */
export function hangDetector(ctx: SearchCtx): (s: MachineState, id: number, x: Extra) => void {
  const { m, an, sink } = ctx;
  const txLate = txMismatchLate(ctx);
  return (s, id, x) => {
    const hinted: BlockedWaiter[] = [];
    const hr = explainHang(m, s, (a, bar) => {
      const slot = an.waitSlots[a]!.get(bar);
      return slot !== undefined && lastObserved(x.hist, slot) !== null;
    }, (a, bar) => {
      const slot = an.waitSlots[a]!.get(bar);
      return slot === undefined ? null : lastObserved(x.hist, slot);
    }, undefined, (w) => hinted.push(w));
    // In the key (agents in index order), a member of a symmetry group stands for its group, so
    // hangs that differ only by which interchangeable warps or instances are blocked are one.
    const waiters = [...hr.waiters].sort((u, v) => u.agent - v.agent);
    // Waiters blocked the same way (the warps of a warpgroup in one wait) are one entry.
    const groups = waiterGroups(hr.waiters);
    const blocked = groups.map((g) => `${g.label} in ${g.op}`).join('; ');
    // The hang's subject: a barrier whose tx-count no copy in flight can bring to 0 (the phase can
    // never complete, whatever the other agents do: the root of the hang), else the first waiter's.
    const first = hr.waiters.find((w) => txStuck(s, w)) ?? hr.waiters[0];
    // The first waiter (in the report's order) that the producer-start parity explains: the cause check.ts names.
    const sp = hinted.find((w) => w.barName !== undefined);
    const sk = hr.waiters.find((w) => w.skipped && w.barName !== undefined);
    const symId = (a: number) => (an.groupOf[a]! >= 0 ? `g${an.groupOf[a]}` : String(a));
    sink.error({
      kind: 'hang', severity: 'error', key: [...new Set(waiters.map((w) => `${symId(w.agent)}:${locKey(w.loc)}`))].sort().join(','),
      message: `no agent or asynchronous unit can make progress: ${blocked}`,
      subject: first?.subject ?? null, state: id, extra: [],
      details: [...groups.map((g) => `${g.label} blocked in ${g.op} (line ${g.line}): ${g.reasons.join('; ')}`), ...(hr.cycle ? [`wait-for cycle: ${hr.cycle.join(' → ')}`] : [])],
      locs: [...(first ? [first] : []), ...hr.waiters.filter((w) => w !== first)].map((w) => w.loc),
      waitBarriers: hr.waiters.flatMap((w) => (w.barName !== undefined ? [w.barName] : [])),
      ...(sp ? { startParity: { waiter: sp.name, barrier: sp.barName!, loc: sp.loc } } : {}),
      ...(sk ? { skippedPhase: { waiter: sk.name, barrier: sk.barName!, loc: sk.loc, observed: sk.skipped!.observed, phase: sk.skipped!.phase, parity: sk.parity ?? 0 } } : {}),
    });
    if (hr.cycle) {
      // The hang is a wait-for cycle: each agent waits for a signal that only the next can give.
      const inCycle = hr.waiters.filter((w) => hr.cycle!.includes(w.name));
      const start = inCycle.find((w) => w.subject) ?? inCycle[0];
      sink.report({
        kind: 'cycle', severity: 'error', key: hr.cycle.slice().sort().join(','),
        message: `wait-for cycle: ${hr.cycle.join(' → ')}: ${inCycle.map((w) => `${w.name} waits in ${w.op}${w.barName && !w.source ? ` on ${w.barName}` : ''}`).join('; ')}, and each signal it waits for comes only from the next agent in the cycle`,
        subject: start?.subject ?? null, state: id, extra: [], details: [], locs: inCycle.map((w) => w.loc),
      });
    }
    for (const w of hr.waiters) txLate(s, w, id);
  };
}

type Waiter = ReturnType<typeof explainHang>['waiters'][number];

/** Whether `w` waits on a phase whose tx-count the TMA copies in flight cannot bring to 0 (bytes). */
function txStuck(s: MachineState, w: Waiter): boolean {
  if (w.kind !== 'mbarrier' || !w.state || w.state.tx === 0) return false;
  const inflightBytes = s.inflight.filter((o) => o.kind === 'tma' && o.bar === w.bar).reduce((n, o) => n + o.left, 0);
  return !(w.state.tx > 0 && inflightBytes >= w.state.tx);
}

/** A waiter blocked on a phase whose tx-count the copies in flight cannot bring to 0. */
function txMismatchLate(ctx: SearchCtx): (s: MachineState, w: Waiter, id: number) => void {
  const { p, sink } = ctx;
  const { barCta } = ctx.f;
  return (s, w, id) => {
    if (!txStuck(s, w) || !w.state) return;
    sink.report({
      kind: 'tx-mismatch', severity: 'error', key: `${w.barName}|late`,
      message: w.state.tx > 0
        ? `phase ${w.state.phase} of ${w.barName} expects ${w.state.tx} more bytes than any copy in flight will deliver: expect_tx registered more bytes than the copies issued for this phase carry, so the phase can never complete`
        : `phase ${w.state.phase} of ${w.barName} received ${-w.state.tx} bytes more than it expected (tx-count ${w.state.tx}): the phase needs a tx-count of exactly 0`,
      subject: w.barName ?? null, state: id, extra: [],
      details: [
        ...txSites(p, w.bar!).map((x) => `bytes registered at line ${x.loc.line}: ${x.text}`),
        ...copySites(p, w.bar!).map((x) => `copies completing on ${p.barrierOf(w.bar!).info.name} at line ${x.loc.line}: ${x.text}${x.text.includes('multicast') ? ` (its multicast mask must include CTA rank ${barCta(w.bar!) % p.clusterSize} for these bytes to reach ${w.barName})` : ''}`),
      ],
      locs: [...txSites(p, w.bar!).map((x) => x.loc), w.loc],
    });
  };
}
