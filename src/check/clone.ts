/**
 * Copy-on-write successors for the search: {@link cloneFor} copies only what one step can mutate,
 * and {@link freezeShared} (tests, `verifyHash`) freezes the rest so a missed copy throws.
 */
import type { MachineState } from '../machine/machine.js';

/**
 * Copy of `s` for a step whose actor (the agent, or the issuer of the asynchronous operation) is
 * `who`: `apply` mutates only the actor's agent record (an async step: only the stream counters of
 * a tcgen05 / wgmma issuer, never the frame), the barrier `bar` (from `Machine.barTouched` (src/machine/machine.ts):
 * a key, -1 for none, -2 for all), named barriers (bar.sync / bar.arrive, only when the program
 * uses them), cluster rounds (agent steps only, and only when `cluster`: some role executes
 * barrier.cluster.arrive, else no round ever completes), the in-flight list (push, removal) and the
 * progressing operation itself (`opIdx`, or -1 for an agent step; only a TMA copy changes in
 * place). Everything else is
 * shared with `s`, which is never mutated after it was reached (the `verifyHash` option of
 * `explore` (./explore.ts) freezes the shared parts, so a missed copy throws in the tests).
 */
export function cloneFor(s: MachineState, who: number, opIdx: number, named: boolean, bar = -2, cluster = true): MachineState {
  let agents = s.agents;
  const o = opIdx >= 0 ? s.inflight[opIdx]! : null;
  // An async step changes its issuer's record only when a tcgen05 / wgmma op completes (its
  // counters), and never the frame; an agent step may change the frame.
  // A pick of a `choose` writes its issuer's frame (ops/values.ts).
  const pick = o !== null && o.kind === 'pick' && o.bar < 0;
  if (!o || pick || o.kind === 'tc.mma' || o.kind === 'tc.commit' || o.kind === 'tc.cp' || o.kind === 'tc.shift' || o.kind === 'wgmma') {
    agents = s.agents.slice();
    const a = agents[who]!;
    agents[who] = {
      pc: a.pc, frame: o && !pick ? a.frame : a.frame.slice(), status: a.status, sub: a.sub, tokens: a.tokens, wgGroup: a.wgGroup, bulkGroup: a.bulkGroup, cpGroup: a.cpGroup,
      clusterRound: a.clusterRound, tcIssued: a.tcIssued, tcDone: a.tcDone, wgIssued: a.wgIssued, wgDone: a.wgDone, lastArrive: a.lastArrive,
      tmemHeld: a.tmemHeld, tmemFreed: a.tmemFreed, tmemRelinquished: a.tmemRelinquished, tcLdUnwaited: a.tcLdUnwaited,
    };
  }
  const sb = s.bars;
  let bars = sb;
  if (bar === -2) {
    bars = new Array(sb.length);
    for (let i = 0; i < sb.length; i++) {
      const b = sb[i]!;
      bars[i] = { status: b.status, phase: b.phase, pending: b.pending, expected: b.expected, tx: b.tx };
    }
  } else if (bar >= 0 && bar < sb.length) {
    bars = sb.slice();
    const b = sb[bar]!;
    bars[bar] = { status: b.status, phase: b.phase, pending: b.pending, expected: b.expected, tx: b.tx };
  }
  const inflight = s.inflight.slice();
  // Only a TMA copy is changed in place (its partial credits); other ops only leave the list.
  if (o && o.kind === 'tma') {
    inflight[opIdx] = {
      id: o.id, kind: o.kind, agent: o.agent, cta: o.cta, bar: o.bar, buf: o.buf, reads: o.reads, bytes: o.bytes, left: o.left, chunks: o.chunks,
      group: o.group, count: o.count, remote: o.remote, targets: o.targets, issued: o.issued, seq: o.seq, loc: o.loc,
    };
  }
  return {
    now: s.now, agents, bars, named: named ? s.named.map((n) => ({ arrived: n.arrived, gen: n.gen, count: n.count, site: n.site, asite: n.asite })) : s.named,
    clusterDone: o || !cluster ? s.clusterDone : s.clusterDone.slice(), inflight, nextId: s.nextId, trapped: s.trapped, events: s.events,
    mem: s.mem.length ? s.mem.slice() : s.mem,
  };
}

/** Freezes the parts of `s` that successors share (tests: a step that mutates one of them throws). */
export function freezeShared(s: MachineState): void {
  if (Object.isFrozen(s.bars)) return;
  for (const a of s.agents) {
    Object.freeze(a.frame);
    if (a.tokens) {
      for (const k of Object.keys(a.tokens)) Object.freeze(a.tokens[Number(k)]);
      Object.freeze(a.tokens);
    }
    Object.freeze(a);
  }
  Object.freeze(s.agents);
  for (const b of s.bars) Object.freeze(b);
  Object.freeze(s.bars);
  for (const n of s.named) Object.freeze(n);
  Object.freeze(s.named);
  Object.freeze(s.clusterDone);
  for (const o of s.inflight) Object.freeze(o);
  Object.freeze(s.inflight);
  Object.freeze(s.mem);
}
