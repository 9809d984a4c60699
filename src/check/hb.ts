/**
 * Happens-before over a machine event stream, with vector clocks. Components: one per agent and one
 * per asynchronous operation of the stream. Edges:
 * - program order of each agent;
 * - release arrive / complete_tx (by an agent, or by an async op: TMA complete_tx, tcgen05.commit,
 *   remote and cp.async arrives) → completion of that phase → every passing wait that observes the
 *   phase (the latest completed phase with the wait's parity);
 * - async op issue → its accesses → its completion signal; FIFO chains (tcgen05.mma/commit of one
 *   issuer, wgmma of one issuer, cp.async → cp.async.mbarrier.arrive) order each op after the
 *   previous one's completion;
 * - `wgmma.wait_group n` / `cp.async.bulk.wait_group n` / `cp.async.wait_group n` (and
 *   `cp.async.wait_all`, a commit and a wait for 0): the waiter acquires the ops of that kind
 *   it issued (wgmma: its warpgroup's leader issued) in groups older than its n most recent
 *   committed groups (the resolved n of the event);
 * - named barriers: every arrival of a generation → each `bar.sync` of that generation (acquired at
 *   the second half of the bar.sync, the machine's `bar.sync.done` event);
 * - cluster barriers: every arrive of a round → `barrier.cluster.wait` of that round.
 *
 * Memory-model qualifiers (PTX ISA §8.8, §9.7.13.3, §9.7.13.15.16, §9.7.13.4): a `.relaxed`
 * arrive (mbarrier or cluster barrier) releases only what a release fence (`fence.acq_rel`,
 * `fence.sc`, `fence.release`) of the same thread before it ordered (a release pattern), at that
 * fence's scope; a `.relaxed` wait acquires nothing until an acquire fence after it (the
 * fence-fence pattern when both sides are relaxed); an explicit `.cta` acquire is not morally
 * strong with a release by another CTA's thread (a remote arrive), so it does not synchronize with it.
 *
 * Used to confirm and explain races found by the explorer, and available to any driver (the
 * simulator's single schedule also predicts races of other schedules through it).
 */
import type { Op, SrcLoc } from '../kernel/ir.js';
import type { AsyncKind, MachineEvent } from '../machine/events.js';
import { laneSiblings, sliceSharedAt, type Program } from '../machine/program.js';
import { PER_THREAD_ASYNC } from '../machine/roles.js';
import { sameStreamOrdered } from '../machine/ops/index.js';

/** One recorded access with its vector clock. */
export interface HbAccess {
  /** Index of the event in the stream. */
  at: number;
  buf: number;
  rw: 'r' | 'w';
  proxy: 'generic' | 'async';
  /** Agent index (generic access) or -1. */
  agent: number;
  /** Async op id, or -1. */
  async: number;
  asyncKind?: AsyncKind;
  /** Issuing agent of the async op, or the agent itself. */
  issuer: number;
  /** Barrier the async op signals, or -1. */
  signals: number;
  comp: number;
  vc: number[];
  loc?: SrcLoc;
}

/** Two conflicting accesses that happens-before does not order. */
export interface HbRace {
  first: HbAccess;
  second: HbAccess;
}

type VC = number[];

/** The asynchronous kind whose groups each commit / wait_group mnemonic counts (cp.async.wait_all commits too). */
const GROUP_KIND: Partial<Record<string, AsyncKind>> = {
  'wgmma.commit_group': 'wgmma', 'wgmma.wait_group': 'wgmma',
  'cp.async.bulk.commit_group': 'bulk.store', 'cp.async.bulk.wait_group': 'bulk.store',
  'cp.async.commit_group': 'cp.async', 'cp.async.wait_group': 'cp.async',
};

function join(a: VC, b: VC | undefined): void {
  if (!b) return;
  for (let i = 0; i < b.length; i++) if (b[i]! > a[i]!) a[i] = b[i]!;
}

/** A warp's TMEM lane access: an asynchronous tcgen05.ld / st, or an agent's own (synchronous) tcgen05.ld of TMEM. */
function laneAccess(p: Program, a: HbAccess): boolean {
  return a.asyncKind === 'tc.ld' || a.asyncKind === 'tc.st' || (a.async < 0 && p.bufferOf(a.buf).info.space === 'tmem');
}

/** Each operation of the program by its source location (file:line:col), for the qualifiers events do not carry. */
function opsByLoc(p: Program): Map<string, Op> {
  const m = new Map<string, Op>();
  for (const rc of p.roles) for (const ins of rc.code) if (ins.i === 'op') m.set(locKey(ins.loc), ins.op);
  return m;
}

function locKey(l: SrcLoc | undefined): string {
  return l ? `${l.file ?? ''}:${l.line}:${l.col}` : '';
}

/** Whether a fence scope reaches threads of other CTAs of the cluster. */
const WIDE_SCOPE = (scope: string): boolean => scope !== 'cta';

function sameLoc(a: SrcLoc | undefined, b: SrcLoc | undefined): boolean {
  return !!a && !!b && a.line === b.line && a.col === b.col && a.file === b.file;
}

/** Vector-clock analysis of an event stream (which must start at the beginning of a run). */
export function happensBefore(p: Program, events: readonly MachineEvent[]): { accesses: HbAccess[]; races: HbRace[]; exitVc: (VC | null)[]; opVc: Map<number, VC> } {
  const A = p.agents.length;
  const asyncIds: number[] = [];
  for (const e of events) if (e.e === 'async') asyncIds.push(e.id);
  const compOf = new Map<number, number>();
  asyncIds.forEach((id, i) => compOf.set(id, A + i));
  const N = A + asyncIds.length;
  const zero = (): VC => new Array<number>(N).fill(0);
  const vc: VC[] = Array.from({ length: A }, () => zero());
  const opVc = new Map<number, VC>();
  const opInfo = new Map<number, { kind: AsyncKind; agent: number; bar: number; chained: number; done: boolean; group: number }>();
  /** Groups committed per `kind:agent` (wgmma, bulk.store). */
  const committed = new Map<string, number>();
  const lastChain = new Map<string, number>(); // chain key -> last op id issued in it
  // Releases into a phase from the barrier's own CTA (agents there, asynchronous units) and from
  // other CTAs' agents (remote arrives): an explicit `.cta` acquire joins only the first.
  const phaseAcc = new Map<string, VC>();
  const phaseDone = new Map<string, VC>();
  const phaseAccX = new Map<string, VC>();
  const phaseDoneX = new Map<string, VC>();
  const opAt = opsByLoc(p);
  const opOf = (l: SrcLoc | undefined): Op | undefined => (l ? opAt.get(locKey(l)) : undefined);
  /** Per agent: its clock at its last release fence (and that fence's scope), or null. */
  const fenceRel: ({ vc: VC; wide: boolean } | null)[] = new Array(A).fill(null);
  /** Per agent: what its relaxed waits observed, not acquired until an acquire fence (local, other CTAs). */
  const pendAcq: (VC | null)[] = new Array(A).fill(null);
  const pendAcqX: (VC | null)[] = new Array(A).fill(null);
  /** Per agent and barrier (`a|bar`, `a|cN` for the cluster barrier): its clock at its last release arrive there. */
  const relOn = new Map<string, VC>();
  /**
   * The clock a relaxed arrive of agent `a` on `loc` releases to observers in another CTA (`cross`)
   * or its own: what a release fence before it ordered, and what its last release arrive on the
   * same barrier did (a release followed by a strong write on one location, PTX ISA §8.8).
   */
  const relaxedRelease = (a: number, cross: boolean, loc: string): VC => {
    const f = fenceRel[a];
    const v = f && (f.wide || !cross) ? f.vc.slice() : zero();
    join(v, relOn.get(`${a}|${loc}`));
    return v;
  };
  /** The clock agent `a` releases by an arrive on `loc`, relaxed or not (recorded for a later relaxed one). */
  const arriveClock = (a: number, cross: boolean, loc: string, relaxed: boolean): VC => {
    if (relaxed) return relaxedRelease(a, cross, loc);
    relOn.set(`${a}|${loc}`, vc[a]!.slice());
    return vc[a]!;
  };
  const barCtaOf = (bar: number) => Math.floor(bar / p.barriersPerCta);
  const namedAcc = new Map<string, VC>();
  const namedDone = new Map<string, VC>();
  const namedGen = new Map<number, number>();
  const pendingNamed: ({ key: number; gen: number } | null)[] = new Array(A).fill(null);
  const clusterRound = new Array<number>(A).fill(0);
  const clusterAcc = new Map<string, VC>();
  const clusterDone = new Map<string, VC>();
  const exitVc: (VC | null)[] = new Array(A).fill(null);
  const accesses: HbAccess[] = [];
  let namedCounted = -1;
  let lastAgent = -1;

  const chainKey = (kind: AsyncKind, agent: number): string | null =>
    kind === 'tc.mma' || kind === 'tc.commit' || kind === 'tc.cp' || kind === 'tc.shift' ? `tc:${agent}` : kind === 'wgmma' ? `wg:${agent}` : kind === 'cp.async' || kind === 'cpa.arrive' ? `cpa:${agent}` : null;

  const opClock = (id: number): VC => {
    let v = opVc.get(id);
    if (!v) {
      v = zero();
      opVc.set(id, v);
    }
    const info = opInfo.get(id);
    if (info && info.chained >= 0) {
      // FIFO: this op completes after the previous op of its chain.
      join(v, opVc.get(info.chained));
      info.chained = -1;
    }
    return v;
  };
  const agentEvent = (a: number) => {
    lastAgent = a;
    const pn = pendingNamed[a];
    if (pn) {
      const d = namedDone.get(`${pn.key}:${pn.gen}`);
      if (d) {
        join(vc[a]!, d);
        pendingNamed[a] = null;
      }
    }
    vc[a]![a]!++;
  };
  const release = (map: Map<string, VC>, key: string, v: VC) => {
    let acc = map.get(key);
    if (!acc) map.set(key, (acc = zero()));
    join(acc, v);
  };

  events.forEach((e, at) => {
    switch (e.e) {
      case 'op':
        if (e.agent >= 0) {
          agentEvent(e.agent);
          if (e.op === 'fence') {
            const f = opOf(e.loc) as Extract<Op, { op: 'fence' }> | undefined;
            const a = e.agent;
            if (f && f.sem !== 'acquire') fenceRel[a] = { vc: vc[a]!.slice(), wide: WIDE_SCOPE(f.scope) };
            if (f && f.sem !== 'release') {
              join(vc[a]!, pendAcq[a] ?? undefined);
              if (WIDE_SCOPE(f.scope)) join(vc[a]!, pendAcqX[a] ?? undefined);
              pendAcq[a] = null;
              if (WIDE_SCOPE(f.scope)) pendAcqX[a] = null;
            }
          }
          const waitAll = e.op === 'cp.async.wait_group' && e.text === 'cp.async.wait_all';
          if (e.op === 'wgmma.commit_group' || e.op === 'cp.async.bulk.commit_group' || e.op === 'cp.async.commit_group' || waitAll) {
            const ck = `${GROUP_KIND[e.op]}:${e.agent}`;
            committed.set(ck, (committed.get(ck) ?? 0) + 1);
          }
          if (e.op === 'tcgen05.wait::ld' || e.op === 'tcgen05.wait::st') {
            // The waiter acquires every tcgen05.ld / st it issued (all have completed).
            const kind: AsyncKind = e.op === 'tcgen05.wait::ld' ? 'tc.ld' : 'tc.st';
            for (const [id, info] of opInfo) if (info.agent === e.agent && info.kind === kind && info.done) join(vc[e.agent]!, opClock(id));
          }
          if (e.op === 'wgmma.wait_group' || e.op === 'cp.async.bulk.wait_group' || e.op === 'cp.async.wait_group') {
            const kind: AsyncKind = GROUP_KIND[e.op]!;
            // wait_group n returns once at most n of the most recent groups are pending: every op of
            // an older group has completed. Without the resolved n, every completed op (over-approximate).
            const limit = e.n !== undefined ? (committed.get(`${kind}:${e.agent}`) ?? 0) - e.n : Infinity;
            // A warp of a warpgroup acquires the wgmma ops its leader issued (AgentInfo.wgLeader).
            const issuer = kind === 'wgmma' ? p.agents[e.agent]!.wgLeader : e.agent;
            for (const [id, info] of opInfo) if (info.agent === issuer && info.kind === kind && info.done && info.group < limit) join(vc[e.agent]!, opClock(id));
          }
        }
        break;
      case 'async': {
        // A relaxed remote arrive carries only what a release fence before it ordered.
        const ro = e.kind === 'remote' ? opOf(e.loc) : undefined;
        const relaxed = ro?.op === 'mbarrier.arrive' && ro.sem === 'relaxed';
        const v = e.kind === 'remote' ? arriveClock(e.agent, true, String(e.bar), relaxed).slice() : vc[e.agent]!.slice();
        const comp = compOf.get(e.id)!;
        v[comp] = 1;
        opVc.set(e.id, v);
        const ck = chainKey(e.kind, e.agent);
        let chained = -1;
        if (ck) {
          // cp.async.mbarrier.arrive follows every earlier cp.async; tcgen05 and wgmma ops follow the previous one.
          chained = lastChain.get(ck) ?? -1;
          lastChain.set(ck, e.id);
        }
        opInfo.set(e.id, { kind: e.kind, agent: e.agent, bar: e.bar, chained, done: false, group: committed.get(`${e.kind}:${e.agent}`) ?? 0 });
        break;
      }
      case 'access': {
        if (e.edge === 'end') break;
        if (e.agent >= 0) {
          agentEvent(e.agent);
          accesses.push({ at, buf: e.buf, rw: e.rw, proxy: e.proxy, agent: e.agent, async: -1, issuer: e.agent, signals: -1, comp: e.agent, vc: vc[e.agent]!.slice(), ...(e.loc ? { loc: e.loc } : {}) });
        } else {
          const info = opInfo.get(e.async);
          const comp = compOf.get(e.async) ?? -1;
          const acc: HbAccess = { at, buf: e.buf, rw: e.rw, proxy: e.proxy, agent: -1, async: e.async, issuer: info?.agent ?? -1, signals: info?.bar ?? -1, comp, vc: (opVc.get(e.async) ?? zero()).slice() };
          if (info) acc.asyncKind = info.kind;
          if (e.loc) acc.loc = e.loc;
          accesses.push(acc);
        }
        break;
      }
      case 'arrive':
      case 'complete_tx':
        if (e.agent >= 0) {
          agentEvent(e.agent);
          const o = e.e === 'arrive' ? opOf(e.loc) : undefined;
          const relaxed = o?.op === 'mbarrier.arrive' && o.sem === 'relaxed';
          release(phaseAcc, `${e.bar}:${e.phase}`, e.e === 'arrive' ? arriveClock(e.agent, false, String(e.bar), relaxed) : vc[e.agent]!);
        } else if (e.async >= 0) {
          // Remote arrives come from another CTA's thread; the asynchronous units' signals count as the barrier's CTA's.
          const cross = opInfo.get(e.async)?.kind === 'remote' && barCtaOf(e.bar) !== p.agents[opInfo.get(e.async)!.agent]!.cta;
          release(cross ? phaseAccX : phaseAcc, `${e.bar}:${e.phase}`, opClock(e.async));
        }
        break;
      case 'expect_tx':
        if (e.agent >= 0) agentEvent(e.agent);
        break;
      case 'phase': {
        const k = `${e.bar}:${e.completed}`;
        phaseDone.set(k, (phaseAcc.get(k) ?? zero()).slice());
        phaseDoneX.set(k, (phaseAccX.get(k) ?? zero()).slice());
        break;
      }
      case 'wait': {
        const a = e.agent;
        agentEvent(a);
        if (e.pass) {
          const observed = e.phase - 1 - ((e.phase - 1 - e.parity) & 1);
          if (observed >= 0) {
            const o = opOf(e.loc);
            const w = o?.op === 'mbarrier.wait' ? o : undefined;
            const local = phaseDone.get(`${e.bar}:${observed}`);
            const cross = phaseDoneX.get(`${e.bar}:${observed}`);
            if (w?.sem === 'relaxed') {
              // Nothing acquired yet: an acquire fence later joins these (cross-CTA ones at cluster scope only).
              if (local) join((pendAcq[a] ??= zero()), local);
              if (cross && w.scope !== 'cta') join((pendAcqX[a] ??= zero()), cross);
            } else {
              join(vc[a]!, local);
              if (w?.scope !== 'cta') join(vc[a]!, cross);
            }
          }
        }
        break;
      }
      case 'async.done': {
        const info = opInfo.get(e.id);
        opClock(e.id);
        if (info) info.done = true;
        break;
      }
      case 'sync': {
        if (e.kind === 'named.done') {
          const a = e.agent;
          const key = p.agents[a]!.cta * 16 + e.id;
          const g = namedGen.get(key) ?? 0;
          agentEvent(a);
          release(namedAcc, `${key}:${g}`, vc[a]!);
          namedDone.set(`${key}:${g}`, namedAcc.get(`${key}:${g}`)!.slice());
          namedGen.set(key, g + 1);
          namedCounted = at;
          if (pendingNamed[a] === null) pendingNamed[a] = null;
        } else if (e.kind === 'bar.sync' || e.kind === 'bar.arrive') {
          const a = e.agent;
          const key = p.agents[a]!.cta * 16 + e.id;
          const counted = namedCounted >= 0 && events[at - 1]?.e === 'sync' && (events[at - 1] as { kind: string }).kind === 'named.done';
          if (!counted) {
            agentEvent(a);
            release(namedAcc, `${key}:${namedGen.get(key) ?? 0}`, vc[a]!);
          }
          if (e.kind === 'bar.sync') pendingNamed[a] = { key, gen: counted ? (namedGen.get(key) ?? 1) - 1 : namedGen.get(key) ?? 0 };
          namedCounted = -1;
        } else if (e.kind === 'cluster.arrive') {
          const a = e.agent;
          agentEvent(a);
          clusterRound[a]!++;
          const o = opOf(e.loc);
          const relaxed = o?.op === 'barrier.cluster.arrive' && o.sem === 'relaxed';
          // A relaxed cluster arrive releases what a cluster-scope release fence before it ordered.
          release(clusterAcc, `${p.agents[a]!.cluster}:${clusterRound[a]}`, arriveClock(a, true, `c${p.agents[a]!.cluster}`, relaxed));
        } else if (e.kind === 'bar.sync.done') {
          agentEvent(e.agent); // acquires the generation's arrivals (pendingNamed)
        } else if (e.kind === 'cluster.done') {
          const cl = e.cluster ?? (lastAgent >= 0 ? p.agents[lastAgent]!.cluster : 0);
          clusterDone.set(`${cl}:${e.id}`, (clusterAcc.get(`${cl}:${e.id}`) ?? zero()).slice());
        } else if (e.kind === 'cluster.wait') {
          const a = e.agent;
          agentEvent(a);
          join(vc[a]!, clusterDone.get(`${p.agents[a]!.cluster}:${clusterRound[a]}`));
        }
        break;
      }
      case 'exit':
        agentEvent(e.agent);
        exitVc[e.agent] = vc[e.agent]!.slice();
        break;
      default:
        break;
    }
  });

  const races: HbRace[] = [];
  // Grouped by allocation (one CTA's); within a group, two accesses conflict where their bytes overlap.
  const byBuf = new Map<number, HbAccess[]>();
  const ranged = p.bufferSpace.overlap !== null;
  for (const a of accesses) {
    const g = ranged ? p.bufferRange(a.buf).alloc : a.buf;
    let l = byBuf.get(g);
    if (!l) byBuf.set(g, (l = []));
    l.push(a);
  }
  for (const list of byBuf.values()) {
    for (let j = 0; j < list.length; j++) {
      const y = list[j]!;
      for (let i = 0; i < j; i++) {
        const x = list[i]!;
        if (x.rw === 'r' && y.rw === 'r') continue;
        if (ranged && !p.buffersOverlap(x.buf, y.buf)) continue;
        if (x.comp === y.comp) continue;
        if (x.async < 0 && y.async < 0 && sameLoc(x.loc, y.loc) && sliceSharedAt(p, x.agent, y.agent, x.loc!)) continue; // each warp its own slice
        if (x.async >= 0 && y.async >= 0 && x.issuer === y.issuer && x.asyncKind && y.asyncKind && sameStreamOrdered(x.asyncKind, y.asyncKind)) continue;
        if (x.async >= 0 && y.async >= 0 && x.asyncKind === y.asyncKind && PER_THREAD_ASYNC.has(x.asyncKind!) && sameLoc(x.loc, y.loc)
          && sliceSharedAt(p, x.issuer, y.issuer, x.loc!)) continue; // each warp its own slice
        if (laneAccess(p, x) && laneAccess(p, y) && laneSiblings(p, x.issuer, y.issuer)) continue; // each warp its own TMEM lanes
        if (x.vc[x.comp]! <= y.vc[x.comp]!) continue;
        races.push({ first: x, second: y });
      }
    }
  }
  return { accesses, races, exitVc, opVc };
}
