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
 * - `wgmma.wait_group n` / `cp.async.bulk.wait_group n`: the waiter acquires the ops of that kind
 *   it issued (wgmma: its warpgroup's leader issued) in groups older than its n most recent
 *   committed groups (the resolved n of the event);
 * - named barriers: every arrival of a generation → each `bar.sync` of that generation (acquired at
 *   the second half of the bar.sync, the machine's `bar.sync.done` event);
 * - cluster barriers: every arrive of a round → `barrier.cluster.wait` of that round.
 *
 * Used to confirm and explain races found by the explorer, and available to any driver (the
 * simulator's single schedule also predicts races of other schedules through it).
 */
import type { SrcLoc } from '../kernel/ir.js';
import type { AsyncKind, MachineEvent } from '../machine/events.js';
import { sliceSiblings, type Program } from '../machine/program.js';

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

function join(a: VC, b: VC | undefined): void {
  if (!b) return;
  for (let i = 0; i < b.length; i++) if (b[i]! > a[i]!) a[i] = b[i]!;
}

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
  const phaseAcc = new Map<string, VC>();
  const phaseDone = new Map<string, VC>();
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
    kind === 'tc.mma' || kind === 'tc.commit' ? `tc:${agent}` : kind === 'wgmma' ? `wg:${agent}` : kind === 'cp.async' || kind === 'cpa.arrive' ? `cpa:${agent}` : null;

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
          if (e.op === 'wgmma.commit_group' || e.op === 'cp.async.bulk.commit_group') {
            const ck = `${e.op === 'wgmma.commit_group' ? 'wgmma' : 'bulk.store'}:${e.agent}`;
            committed.set(ck, (committed.get(ck) ?? 0) + 1);
          }
          if (e.op === 'wgmma.wait_group' || e.op === 'cp.async.bulk.wait_group') {
            const kind: AsyncKind = e.op === 'wgmma.wait_group' ? 'wgmma' : 'bulk.store';
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
        const v = vc[e.agent]!.slice();
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
          release(phaseAcc, `${e.bar}:${e.phase}`, vc[e.agent]!);
        } else if (e.async >= 0) release(phaseAcc, `${e.bar}:${e.phase}`, opClock(e.async));
        break;
      case 'expect_tx':
        if (e.agent >= 0) agentEvent(e.agent);
        break;
      case 'phase': {
        const k = `${e.bar}:${e.completed}`;
        phaseDone.set(k, (phaseAcc.get(k) ?? zero()).slice());
        break;
      }
      case 'wait': {
        agentEvent(e.agent);
        if (e.pass) {
          const observed = e.phase - 1 - ((e.phase - 1 - e.parity) & 1);
          if (observed >= 0) join(vc[e.agent]!, phaseDone.get(`${e.bar}:${observed}`));
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
          release(clusterAcc, `${p.agents[a]!.cluster}:${clusterRound[a]}`, vc[a]!);
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
        if (x.async < 0 && y.async < 0 && sameLoc(x.loc, y.loc) && sliceSiblings(p, x.agent, y.agent)) continue; // each warp its own slice
        if (x.async >= 0 && y.async >= 0 && x.issuer === y.issuer && x.asyncKind === y.asyncKind && (x.asyncKind === 'tc.mma' || x.asyncKind === 'wgmma')) continue;
        if (x.vc[x.comp]! <= y.vc[x.comp]!) continue;
        races.push({ first: x, second: y });
      }
    }
  }
  return { accesses, races, exitVc, opVc };
}
