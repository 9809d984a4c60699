/**
 * The full/empty protocol as data: which barrier arrays play `full` (data ready) and `empty`
 * (buffer free), who produces and who consumes (from the run's own waits and arrivals), and for a
 * cursor position each stage's barrier phases, whether a TMA copy is filling it and who holds it.
 * Pure; no DOM.
 */
import type { RunModel } from './model.js';
import { barStateAt, firstGE, lastLE } from './model.js';
import { warpRuns } from '../machine/warp-runs.js';

export interface RingPair {
  full: string;
  empty: string | null;
  stages: number;
  /**
   * Roles that arrive on `full` (producers) and wait on it (consumers), joined with ", "; a role
   * on both sides (one role whose warps specialize by index, as a PTX kernel's) is named by its
   * warps on each side (`k.w0`, `k.w1–w3`).
   */
  producer: string;
  consumer: string;
  /** Each agent's side, by agent index (null: neither). */
  agentSide: ('producer' | 'consumer' | null)[];
}

/** Guesses the full/empty arrays of a kernel: by name first, else the first two arrays of equal length. */
export function detectPair(m: RunModel): RingPair | null {
  const arrays = m.program.barriers;
  if (arrays.length === 0) return null;
  const byName = (re: RegExp) => arrays.find((b) => re.test(b.name));
  let full = byName(/full|tma|ready|load/i);
  let empty = byName(/empty|free|release/i);
  if (full && empty && full.length !== empty.length) empty = undefined;
  if (!full) {
    for (let i = 0; i < arrays.length && !full; i++)
      for (let j = i + 1; j < arrays.length; j++)
        if (arrays[i]!.length === arrays[j]!.length && arrays[i]!.length > 1) {
          full = arrays[i];
          empty = arrays[j];
          break;
        }
  }
  full ??= arrays.reduce((a, b) => (b.length > a.length ? b : a));
  return { full: full.name, empty: empty?.name ?? null, stages: full.length, ...roles(m, full.name) };
}

/**
 * Who arrives on `full` (the producers) and who waits on it (the consumers), from the run's
 * events: by role, or by warp for a role on both sides.
 */
function roles(m: RunModel, full: string): Pick<RingPair, 'producer' | 'consumer' | 'agentSide'> {
  const agents = m.program.agents;
  const arrives = new Set<number>(), waits = new Set<number>();
  const asyncIssuer = new Map<number, number>();
  for (const e of m.events) {
    if (e.e === 'async') asyncIssuer.set(e.id, e.agent);
    if (e.e !== 'arrive' && e.e !== 'wait') continue;
    if (m.program.barrierOf(e.bar).info.name !== full) continue;
    const a = e.agent >= 0 ? e.agent : e.e === 'arrive' ? asyncIssuer.get(e.async) ?? -1 : -1;
    if (a >= 0) (e.e === 'wait' ? waits : arrives).add(a);
  }
  const rolesOf = (set: Set<number>) => [...new Set([...set].sort((x, y) => x - y).map((a) => agents[a]!.roleName))];
  const prod = rolesOf(arrives), cons = rolesOf(waits);
  // A role is told apart by warp when some of its agents only arrive and others only wait.
  const onlyIn = (x: Set<number>, y: Set<number>) => new Set([...x].filter((a) => !y.has(a)).map((a) => agents[a]!.roleName));
  const onlyArrive = onlyIn(arrives, waits), onlyWait = onlyIn(waits, arrives);
  const both = new Set(prod.filter((r) => cons.includes(r) && onlyArrive.has(r) && onlyWait.has(r)));
  const agentSide = agents.map((a, i): 'producer' | 'consumer' | null => {
    if (both.has(a.roleName)) return arrives.has(i) ? 'producer' : waits.has(i) ? 'consumer' : null;
    return prod.includes(a.roleName) ? 'producer' : cons.includes(a.roleName) ? 'consumer' : null;
  });
  // A split role's warps by name, in one CTA's words (every CTA runs the same code).
  const names = (rs: string[], side: 'producer' | 'consumer') => rs.flatMap((r) => (both.has(r)
    ? warpRuns([...new Set(agents.flatMap((a, i) => (a.roleName === r && agentSide[i] === side ? [a.name.replace(/@c\d+$/, '')] : [])))])
    : [r])).join(', ');
  return { producer: names(prod, 'producer') || 'producer', consumer: names(cons, 'consumer') || 'consumer', agentSide };
}

/** Who holds a stage's buffer. */
export type Holder = 'producer' | 'tma' | 'consumer';

export interface StageState {
  stage: number;
  fullKey: number;
  emptyKey: number;
  fullPhase: number;
  emptyPhase: number;
  fullPending: number;
  fullTx: number;
  holder: Holder;
  /** TMA copies into this stage in flight at the cursor. */
  inflight: number;
}

/** Where a side of the protocol (producer or consumer) is at the cursor: its last step on the ring. */
export interface RolePlace {
  stage: number;
  /** What it did there, e.g. `waits on empty[2]` (blocked), `passed full[1]`, `arrived on empty[0]`. */
  what: string;
  blocked: boolean;
}

/** A handoff: a full or empty barrier of a stage completed a phase. */
export interface Handoff {
  ev: number;
  stage: number;
  kind: 'full' | 'empty';
  phase: number;
}

/**
 * Per-stage in-flight TMA intervals (event index of issue and completion), for a CTA, precomputed
 * once per run.
 */
export interface RingIndex {
  pair: RingPair;
  cta: number;
  fullKeys: number[];
  emptyKeys: number[];
  /** Per stage: sorted issue event indices and matching done event indices (Infinity if never). */
  issue: number[][];
  done: number[][];
  /** The producer's and the consumer's steps on the ring (event index, stage, what), in order. */
  places: { producer: { ev: number[]; at: RolePlace[] }; consumer: { ev: number[]; at: RolePlace[] } };
  /** Every handoff, in order. */
  handoffs: Handoff[];
}

export function ringIndex(m: RunModel, pair: RingPair, cta: number): RingIndex {
  const p = m.program;
  const info = p.barriers.find((b) => b.name === pair.full)!;
  const einfo = pair.empty ? p.barriers.find((b) => b.name === pair.empty) : undefined;
  const keyOf = (off: number, s: number) => cta * p.barriersPerCta + off + s;
  const fullKeys = Array.from({ length: pair.stages }, (_, s) => keyOf(info.offset, s));
  const emptyKeys = Array.from({ length: pair.stages }, (_, s) => (einfo ? keyOf(einfo.offset, s) : -1));
  const stageOfFull = new Map(fullKeys.map((k, s) => [k, s]));
  const stageOfEmpty = new Map(emptyKeys.filter((k) => k >= 0).map((k, s) => [k, s]));
  const issue: number[][] = fullKeys.map(() => []), done: number[][] = fullKeys.map(() => []);
  const open = new Map<number, { s: number; j: number }>();
  let places = { producer: { ev: [] as number[], at: [] as RolePlace[] }, consumer: { ev: [] as number[], at: [] as RolePlace[] } };
  const handoffs: Handoff[] = [];
  const side = (agent: number): 'producer' | 'consumer' | null => {
    const a = agent >= 0 ? p.agents[agent] : undefined;
    if (!a || a.cta !== cta) return null;
    return pair.agentSide[agent] ?? null;
  };
  const place = (who: 'producer' | 'consumer' | null, i: number, stage: number, what: string, blocked = false) => {
    if (!who) return;
    places[who].ev.push(i);
    places[who].at.push({ stage, what, blocked });
  };
  const issuerOf = new Map<number, { agent: number; kind: string }>();
  /** Each agent's passing waits (time, barrier), for the stalls below. */
  const waits = new Map<number, { t: number[]; bar: number[] }>();
  m.events.forEach((e, i) => {
    if (e.e === 'wait' && e.pass) {
      let w = waits.get(e.agent);
      if (!w) waits.set(e.agent, (w = { t: [], bar: [] }));
      w.t.push(e.t);
      w.bar.push(e.bar);
    }
    if (e.e === 'async') issuerOf.set(e.id, { agent: e.agent, kind: e.kind });
    if (e.e === 'wait' || e.e === 'arrive' || e.e === 'phase') {
      const fs = stageOfFull.get(e.bar), es = stageOfEmpty.get(e.bar);
      const st = fs ?? es;
      if (st !== undefined) {
        const name = `${fs !== undefined ? pair.full : pair.empty}[${st}]`;
        if (e.e === 'phase') handoffs.push({ ev: i, stage: st, kind: fs !== undefined ? 'full' : 'empty', phase: e.completed });
        else if (e.e === 'wait') place(side(e.agent), i, st, e.pass ? `passed its wait on ${name}` : `waits on ${name}`, !e.pass);
        else if (e.agent >= 0) place(side(e.agent), i, st, `${e.expectTx ? 'arrive.expect_tx' : 'arrived'} on ${name}`);
        else {
          // An asynchronous arrive (tcgen05.commit, cp.async.mbarrier.arrive): its issuer's doing.
          const iss = issuerOf.get(e.async);
          if (iss !== undefined && iss.kind !== 'tma') place(side(iss.agent), i, st, `${iss.kind === 'tc.commit' ? 'tcgen05.commit arrived' : 'arrived'} on ${name}`);
        }
      }
    }
    if (e.e === 'async' && e.kind === 'tma') {
      const s0 = stageOfFull.get(e.bar);
      if (s0 !== undefined) place(side(e.agent), i, s0, 'issued a TMA copy');
    }
    if (e.e === 'async' && e.kind === 'tma') {
      const s = stageOfFull.get(e.bar);
      if (s === undefined) return;
      open.set(e.id, { s, j: issue[s]!.length });
      issue[s]!.push(i);
      done[s]!.push(Infinity);
    } else if (e.e === 'async.done') {
      const o = open.get(e.id);
      if (o) {
        done[o.s]![o.j] = i;
        open.delete(e.id);
      }
    }
  });
  // The simulator reports a blocked wait as a stall span (its pass comes later, as a wait event):
  // the stall says where a role is waiting. Its stage is that of the wait that ends it (or, for a
  // hang's waiter, of the barrier the hang report names).
  const extra: { who: 'producer' | 'consumer'; ev: number; at: RolePlace }[] = [];
  for (const sp of m.spans) {
    if ((sp.kind !== 'stall' && sp.kind !== 'blocked') || !/^\d+$/.test(sp.lane)) continue;
    const a = Number(sp.lane);
    const who = side(a);
    if (!who) continue;
    let bar = -1;
    if (sp.kind === 'blocked') bar = m.sim.hang?.waiters.find((w) => w.agent === a)?.bar ?? -1;
    else {
      const w = waits.get(a);
      const j = w ? firstGE(w.t, sp.t1) : 0;
      if (w && j < w.t.length) bar = w.bar[j]!;
    }
    const fs = stageOfFull.get(bar), es = stageOfEmpty.get(bar);
    const st = fs ?? es;
    if (st === undefined) continue;
    const name = `${fs !== undefined ? pair.full : pair.empty}[${st}]`;
    extra.push({ who, ev: Math.max(0, lastLE(m.evT, sp.t0)), at: { stage: st, what: `waits on ${name}${sp.kind === 'blocked' ? ' (forever: the run hangs)' : ''}`, blocked: true } });
  }
  if (extra.length) {
    for (const x of extra) {
      places[x.who].ev.push(x.ev);
      places[x.who].at.push(x.at);
    }
    for (const who of ['producer', 'consumer'] as const) {
      const P = places[who];
      // Stable: a stall filed under an event comes after that event's own step.
      const order = P.ev.map((_, i) => i).sort((i, j) => P.ev[i]! - P.ev[j]! || i - j);
      places[who] = { ev: order.map((i) => P.ev[i]!), at: order.map((i) => P.at[i]!) };
    }
  }
  return { pair, cta, fullKeys, emptyKeys, issue, done, places, handoffs };
}

/** Where the producer and the consumer are after event `ev` (null: not on the ring yet). */
export function placesAt(r: RingIndex, ev: number): { producer: RolePlace | null; consumer: RolePlace | null } {
  const at = (x: { ev: number[]; at: RolePlace[] }) => {
    const j = lastLE(x.ev, ev);
    return j >= 0 ? x.at[j]! : null;
  };
  return { producer: at(r.places.producer), consumer: at(r.places.consumer) };
}

/** The last handoff at or before event `ev`, or null. */
export function lastHandoff(r: RingIndex, ev: number): Handoff | null {
  let lo = 0, hi = r.handoffs.length - 1, best = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (r.handoffs[mid]!.ev <= ev) {
      best = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return best >= 0 ? r.handoffs[best]! : null;
}

/** The stages' states after event `ev`. */
export function stagesAt(m: RunModel, r: RingIndex, ev: number): StageState[] {
  return r.fullKeys.map((fk, s) => {
    const fl = m.barLaneByKey.get(fk);
    const el = m.barLaneByKey.get(r.emptyKeys[s]!);
    const f = fl ? barStateAt(fl, ev) : { phase: 0, pending: 0, tx: 0 };
    const e = el ? barStateAt(el, ev) : { phase: 0 };
    // Copies issued at or before ev and not yet done.
    const iss = r.issue[s]!, dn = r.done[s]!;
    const upto = lastLE(iss, ev);
    let inflight = 0;
    for (let j = upto; j >= 0 && j >= upto - 64; j--) if (dn[j]! > ev) inflight++;
    // "TMA filling" once a copy into the stage is in flight; an armed tx-count (expect_tx) alone is
    // still the producer's turn.
    const holder: Holder = f.phase > e.phase ? 'consumer' : inflight > 0 ? 'tma' : 'producer';
    return { stage: s, fullKey: fk, emptyKey: r.emptyKeys[s]!, fullPhase: f.phase, emptyPhase: e.phase, fullPending: f.pending, fullTx: f.tx, holder, inflight };
  });
}
