/**
 * How a step changes the ghost records of the checker data (`Extra.ghosts`, `tghosts`, `cghosts`,
 * `pcm`; see ghosts.ts): a completed tcgen05.mma keeps its accesses until a later commit of its
 * issuer lands; a TMA landing the reduction took alone keeps its write until its phase completes;
 * a commit that lands on a phase still open keeps the MMA's accesses until that phase completes;
 * in an agent of several warps, completed bulk stores and wgmma (and mbarrier waits of the elected
 * thread alone) stay recorded until a wait_group or a barrier of the role retires them (B18).
 */
import type { Choice, MachineState } from '../machine/machine.js';
import type { MachineEvent } from '../machine/events.js';
import { OPC, OPS } from '../machine/ops/index.js';
import { keyOf } from './engine.js';
import { EG, EG_ELECT, EG_MB, EG_WG, insertPair, insertSorted, opAccesses } from './ghosts.js';
import type { ExtraDraft, SearchCtx } from './search-ctx.js';
import { dropCommitted, landedEarlyOn, untouchedSinceCompletion } from './detect-phase.js';

const OPC_CP_WAIT = OPC['cp.async.wait_group'];

/** The ghost update of search `ctx` for the step `c` from `s` to `t` (events `events`), applied to `d`. */
export function ghostStep(ctx: SearchCtx): (s: MachineState, t: MachineState, c: Choice, events: readonly MachineEvent[], d: ExtraDraft) => void {
  const { p } = ctx;
  const { anyMultiWarp, multiWarp, allThreadAccess } = ctx.f;
  const landed = asyncGhosts(ctx);
  const retire = agentGhosts(ctx);
  return (s, t, c, events, d) => {
    if (c.kind === 'async') landed(s, t, c.id, d);
    else if (anyMultiWarp && multiWarp[c.agent] && (d.ghosts[c.agent] || allThreadAccess[p.agents[c.agent]!.role])) retire(s, c.agent, events, d);
  };
}

/** The ghosts left by the completion of asynchronous operation `id` (from `s` to `t`). */
function asyncGhosts(ctx: SearchCtx): (s: MachineState, t: MachineState, id: number, d: ExtraDraft) => void {
  const { m, an } = ctx;
  const { multiWarp } = ctx.f;
  return (s, t, id, d) => {
    const x = d.x;
    const o = m.findAsync(s, id);
    const done = o !== undefined && m.findAsync(t, id) === undefined;
    if (o && o.kind === 'tc.mma' && done) {
      // Its accesses (opAccesses: the accumulator written, the operands read), merged into the sorted set.
      const old = d.ghosts[o.agent];
      const merged = old ? old.slice() : [];
      if (o.buf >= 0) insertSorted(merged, o.buf * 2 + 1);
      if (o.reads) for (let i = 0; i < o.reads.length; i++) insertSorted(merged, o.reads[i]! * 2);
      d.ghosts = d.ghosts.slice();
      d.ghosts[o.agent] = merged;
    } else if (o && o.kind === 'tma' && ctx.tmaGhost === o.id && done) {
      // A copy that landed under the reduction (its phase still open): keep its write visible.
      const sorted = withPair(d.tghosts, o.bar, o.buf);
      // If the landing itself completed the phase, the 'phase' event above already ran: no ghost then.
      if (t.bars[o.bar]!.phase === s.bars[o.bar]!.phase) d.tghosts = sorted;
    } else if (o && o.kind === 'tc.commit' && done) {
      const g = o.agent;
      const completed = o.targets !== null || t.bars[o.bar]!.phase !== s.bars[o.bar]!.phase;
      const mma = d.ghosts[g]?.filter((v) => !(v & EG));
      if (mma && mma.length) {
        if (!completed && an.commitOnly) {
          // The commit arrived but its phase is still open: the MMA's accesses stay unordered until it completes.
          let pairs = d.cghosts[g] ? d.cghosts[g]!.slice() : [];
          for (const v of mma) pairs = insertPair(pairs, o.bar, v);
          if (d.cghosts === x.cghosts) d.cghosts = d.cghosts.slice();
          d.cghosts[g] = pairs;
        }
        const keep = d.ghosts[g]!.filter((v) => v & EG);
        d.ghosts = d.ghosts.slice();
        d.ghosts[g] = keep.length ? keep : null;
      }
    }
    if (o && done && (o.kind === 'bulk.store' || o.kind === 'wgmma') && multiWarp[o.agent]) {
      // Completed, not yet retired by a wait_group of the issuer (see EG).
      const tag = EG | (o.kind === 'wgmma' ? EG_WG : 0);
      const merged = d.ghosts[o.agent] ? [...d.ghosts[o.agent]!] : [];
      for (const ac of opAccesses(o)) {
        const v = tag | (ac.buf * 2 + (ac.rw === 'w' ? 1 : 0));
        if (!merged.includes(v)) merged.push(v);
      }
      merged.sort((u, v) => u - v);
      if (d.ghosts === x.ghosts) d.ghosts = d.ghosts.slice();
      d.ghosts[o.agent] = merged;
    }
    // A forced commit landing stays postponable until its phase completes or a later commit of its
    // issuer lands as an explored step (commits land in issue order). A tcgen05.mma completion is
    // itself always taken alone (a ghost), so it proves nothing about the commits before it.
    if (o && o.kind === 'tc.commit' && done) {
      const g = o.agent;
      const l = d.pcm[g];
      if (ctx.commitGhost === o.id) {
        if (!l || !l.includes(o.bar)) {
          if (d.pcm === x.pcm) d.pcm = d.pcm.slice();
          d.pcm[g] = l ? [...l, o.bar].sort((u, v) => u - v) : [o.bar];
        }
      } else if (l) {
        if (d.pcm === x.pcm) d.pcm = d.pcm.slice();
        d.pcm[g] = null;
        // Every earlier commit of `g` has landed: a completion of one of their barriers that kept
        // the commit ghosts (detect-phase.ts, landedEarlyOn) is certain now, if nothing has come
        // in the barrier's current phase yet and no other issuer's landing taken early is on it.
        for (const b of l) if (!landedEarlyOn(d, b) && untouchedSinceCompletion(t, b)) dropCommitted(d, b);
      }
    }
  };
}

/** A new list of the pairs of `l` and (a, b), sorted, without duplicates. */
function withPair(l: readonly number[] | null, a: number, b: number): number[] {
  const pairs: number[] = [];
  if (l) for (let i = 0; i < l.length; i += 2) pairs.push(l[i]!, l[i + 1]!);
  pairs.push(a, b);
  const idx: number[] = [];
  for (let i = 0; i < pairs.length; i += 2) idx.push(i);
  idx.sort((u, v) => pairs[u]! - pairs[v]! || pairs[u + 1]! - pairs[v + 1]!);
  const sorted: number[] = [];
  for (const i of idx) if (!(sorted.length && sorted[sorted.length - 2] === pairs[i] && sorted[sorted.length - 1] === pairs[i + 1])) sorted.push(pairs[i]!, pairs[i + 1]!);
  return sorted;
}

/**
 * An agent of several warps: a wait of its elected thread alone leaves an EG_MB ghost (one of all
 * its threads drops it); wait_group retires the completed ops of its kind, for every thread or for
 * the elected one only; a barrier synchronizes the role's threads.
 */
function agentGhosts(ctx: SearchCtx): (s: MachineState, a: number, events: readonly MachineEvent[], d: ExtraDraft) => void {
  const { p, m } = ctx;
  const { allThreadAccess } = ctx.f;
  return (s, a, events, d) => {
    const x = d.x;
    const ins = m.nextOp(s, a);
    const cls = ins ? OPS[ins.opc]!.sync : null;
    if (cls === 'acquire' && allThreadAccess[p.agents[a]!.role]) {
      const k = keyOf(ins!.bar!, s.agents[a]!.frame);
      const passed = events.some((ev) => ev.e === 'wait' && ev.pass && ev.agent === a);
      if (k >= 0 && passed) {
        const v = EG | EG_ELECT | EG_MB | k;
        const old = d.ghosts[a] ?? [];
        const has = old.includes(v);
        if (ins!.per === 'one' ? !has : has) {
          const next = ins!.per === 'one' ? [...old, v].sort((u, w) => u - w) : old.filter((w) => w !== v);
          if (d.ghosts === x.ghosts) d.ghosts = d.ghosts.slice();
          d.ghosts[a] = next.length ? next : null;
        }
      }
    } else if (d.ghosts[a] && (cls === 'barrier' || (cls === 'group-wait' && ins!.opc !== OPC_CP_WAIT))) {
      // (cp.async.wait_group orders only cp.async, which leaves no ghosts.)
      // A group wait retires its own family's ghosts (wgmma or bulk stores); a barrier synchronizes the role's threads.
      const kind = OPS[ins!.opc]!.family === 'wgmma' ? EG_WG : 0;
      const next: number[] = [];
      for (const v of d.ghosts[a]!) {
        if (!(v & EG)) next.push(v);
        else if (v & EG_MB) {
          if (cls !== 'barrier') next.push(v);
        } else if (cls === 'barrier') {
          if (!(v & EG_ELECT)) next.push(v);
        } else if ((v & EG_WG) !== kind) next.push(v);
        else if (ins!.per === 'one') next.push(v | EG_ELECT);
      }
      next.sort((u, v) => u - v);
      for (let i = next.length - 1; i > 0; i--) if (next[i] === next[i - 1]) next.splice(i, 1);
      const old = d.ghosts[a]!;
      if (next.length !== old.length || next.some((v, i) => v !== old[i])) {
        if (d.ghosts === x.ghosts) d.ghosts = d.ghosts.slice();
        d.ghosts[a] = next.length ? next : null;
      }
    }
  };
}
