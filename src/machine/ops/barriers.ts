/**
 * Named barriers (PTX ISA §9.7.13.1: `bar.sync` / `barrier.sync`, `bar.arrive`; 16 per CTA, counted
 * in whole warps, generations) and cluster barriers (§9.7.13.3: `barrier.cluster.arrive` /
 * `barrier.cluster.wait`, rounds over the running agents of a cluster).
 */
import { diagnostic } from '../../model/mbarrier.js';
import { DIAG } from '../../model/diagnostics.js';
import type { OpInstr, Program } from '../program.js';
import { clusterArrivals, NAMED_PER_CTA, type MachineState, type NamedBarrier, type StepOut } from '../state.js';
import type { OpCtx, OpDef, OpK } from './types.js';

/**
 * Completes every cluster-barrier round of cluster `cl` that all its running agents have arrived
 * in (an agent that finished no longer counts; a round needs at least one running agent).
 */
export function checkCluster(m: OpCtx, s: MachineState, cl: number, out: StepOut): void {
  const members = m.clusterAgents[cl]!;
  for (;;) {
    const next = s.clusterDone[cl]! + 1;
    let all = true;
    let any = false;
    for (const a of members) {
      const ag = s.agents[a]!;
      if (ag.status !== 'run') continue;
      if (clusterArrivals(ag) < next) {
        all = false;
        break;
      }
      any = true;
    }
    if (!all || !any) return;
    s.clusterDone[cl] = next;
    out.other = true;
    { m.emitted(s); if (out.events && !out.sparse) out.events.push({ e: 'sync', t: s.now, agent: -1, kind: 'cluster.done', id: next, cluster: cl }); }
  }
}

const MULTI = new WeakMap<Program, boolean[]>();
/** Per role × 2 (+0 bar.sync, +1 bar.arrive): whether the role's code has two or more aligned instructions of that kind. */
function multiSite(p: Program): boolean[] {
  let r = MULTI.get(p);
  if (!r) {
    r = p.roles.flatMap((rc) => (['bar.sync', 'bar.arrive'] as const).map((k) => rc.code.filter((i) => i.i === 'op' && i.op.op === k && i.op.aligned !== false).length > 1));
    MULTI.set(p, r);
  }
  return r;
}

/**
 * An aligned `bar.sync` / `bar.arrive` (`barrier.sync.aligned`) arriving in generation `nb`: every
 * thread of an aligned barrier executes the same instruction (PTX ISA §9.7.13.1), so a second
 * site of the same kind from the same role in one generation is the `aligned-barrier` diagnostic
 * (the divergent `__syncthreads()`); warps of different roles are different branches of a
 * warp-specialized kernel, each warp uniform, as the ISA's own producer / consumer example is.
 */
function alignedSite(m: OpCtx, s: MachineState, a: number, ins: OpInstr, out: StepOut, nb: NamedBarrier, id: number): void {
  const info = m.program.agents[a]!;
  // Only roles with two or more aligned sites of this kind can diverge: the others record nothing,
  // so their states (and the checker's state counts) do not depend on which site came first.
  if (!multiSite(m.program)[info.role * 2 + (ins.op.op === 'bar.sync' ? 0 : 1)]) return;
  const site = info.role * 65536 + ins.uid + 1;
  const sync = ins.op.op === 'bar.sync';
  const cur = sync ? nb.site : nb.asite;
  if (cur === 0) {
    if (sync) nb.site = site;
    else nb.asite = site;
    return;
  }
  if (cur === site || Math.floor((cur - 1) / 65536) !== info.role) return;
  const uid = (cur - 1) % 65536;
  const other = m.program.roles[info.role]!.code.find((i) => i.i === 'op' && i.uid === uid) as OpInstr | undefined;
  const where = other ? `line ${other.loc.line} (${other.text})` : 'another instruction';
  const d = diagnostic(DIAG.alignedBarrier, `${info.name} reaches named barrier ${id} through ${ins.text} at line ${ins.loc.line} while other threads of role ${m.program.roles[info.role]!.name} are in the same generation through ${where}: all threads of an aligned barrier must execute the same instruction; write barrier.sync (not aligned) or one ${ins.op.op} on both paths`);
  m.diag(s, out, d, a, -1, -1, ins.loc);
}

/**
 * `bar.sync` (two steps: arrive, then proceed once the generation completed) and `bar.arrive`
 * (one step). Each warp of the agent performing it adds 32 threads.
 */
function execNamed(m: OpCtx, s: MachineState, a: number, ins: OpInstr, out: StepOut): boolean {
  const info = m.program.agents[a]!;
  const ag = s.agents[a]!;
  const f = ag.frame;
  const loc = ins.loc;
  const op = ins.op;
  const opc = ins.opc;
  if (ag.sub < 0) {
    // PTX ISA §9.7.13.1: ids 0..15; the thread count a positive multiple of the warp size.
    const id = ins.ints.id!(f);
    const n = ins.ints.threads ? ins.ints.threads(f) : 32;
    if (id < 0 || id > 15 || n < 32 || n % 32 !== 0) {
      const what = id < 0 || id > 15 ? `id ${id} is outside 0..15` : `thread count ${n} is not a positive multiple of 32`;
      return m.fault(s, a, out, diagnostic(DIAG.namedBarrier, `${ins.text}: the named barrier ${what}`), loc, -1), false;
    }
  }
  const nk = m.namedKey(a, ins, ag);
  const nb = s.named[nk]!;
  if (op.op === 'bar.sync' && ag.sub >= 0) {
    // Second half of bar.sync: the generation this agent arrived in has completed.
    ag.sub = -1;
    { m.emitted(s); if (out.events && !out.sparse) out.events.push({ e: 'sync', t: s.now, agent: a, kind: 'bar.sync.done', id: nk % NAMED_PER_CTA, loc }); }
    return true;
  }
  const count = ins.ints.threads ? ins.ints.threads(f) : m.ctaThreads[info.cta]!;
  nb.count = count;
  const warps = ins.per === 'one' ? 1 : info.warps;
  let gen = nb.gen;
  if (opc === 20) {
    // A non-blocking arrive that lands in the generation this agent's previous arrive landed in:
    // its threads count twice toward one generation (bug pattern B03).
    const idn = nk % NAMED_PER_CTA;
    if (ag.lastArrive === nb.gen * NAMED_PER_CTA + idn) {
      const d = diagnostic(DIAG.lapping, `${info.name} arrives on named barrier ${idn} again while the generation its previous bar.arrive joined (${nb.arrived} of ${count} threads) has not completed: its threads count twice toward one generation`);
      m.diag(s, out, d, a, -1, -1, loc);
    }
  }
  if ((op as OpK<'bar.sync' | 'bar.arrive'>).aligned !== false) alignedSite(m, s, a, ins, out, nb, nk % NAMED_PER_CTA);
  // Barriers count whole warps (PTX ISA §9.7.13.1): each warp adds 32 threads.
  for (let w = 0; w < warps; w++) {
    gen = nb.gen;
    nb.arrived += 32;
    if (nb.arrived >= count) {
      nb.arrived -= count;
      nb.gen++;
      nb.site = 0;
      nb.asite = 0;
      out.other = true;
      const id = nk % NAMED_PER_CTA;
      { m.emitted(s); if (out.events && !out.sparse) out.events.push({ e: 'sync', t: s.now, agent: a, kind: 'named.done', id, loc }); }
    }
  }
  const id = nk % NAMED_PER_CTA;
  if (opc === 20) ag.lastArrive = gen * NAMED_PER_CTA + id;
  { m.emitted(s); if (out.events && !out.sparse) out.events.push({ e: 'sync', t: s.now, agent: a, kind: (op as OpK<'bar.sync' | 'bar.arrive'>).op, id, loc }); }
  if (op.op === 'bar.sync') {
    // Completes in a second step once generation `gen` is done (also when our own arrival
    // completed it: keeps steps uniform).
    ag.sub = gen;
    return false;
  }
  return true;
}

const F = 'barriers';

/** The operations of the named- and cluster-barrier family. */
export const BARRIER_OPS: readonly OpDef[] = [
  {
    op: 'bar.sync', family: F, por: 'sync', sync: 'barrier', timing: 'bar.sync', exec: execNamed,
    enabled: (m, s, a, ins, ag) => ag.sub < 0 || s.named[m.namedKey(a, ins, ag)]!.gen > ag.sub,
    opEvent: 'first',
    text: (op, t) => `${op.aligned === false ? 'barrier.sync' : 'bar.sync'} ${t.expr(op.id)}${op.threads ? `, ${t.expr(op.threads)}` : ''}`,
  } satisfies OpDef<'bar.sync'>,
  {
    op: 'bar.arrive', family: F, por: 'sync', sync: 'release', timing: 'bar.arrive', exec: execNamed,
    text: (op, t) => `${op.aligned === false ? 'barrier.arrive' : 'bar.arrive'} ${t.expr(op.id)}, ${t.expr(op.threads)}`,
  } satisfies OpDef<'bar.arrive'>,
  {
    op: 'barrier.cluster.arrive', family: F, por: 'sync', sync: 'release', timing: 'barrier.cluster.arrive',
    // The arrive releases the agent's earlier memory operations at cluster scope, remote
    // mbarrier signals included (PTX ISA §9.7.13.3, §8.9.4): they land before it takes effect.
    enabled(_m, s, a) {
      for (const o of s.inflight) if (o.agent === a && o.kind === 'remote') return false;
      return true;
    },
    exec(m, s, a, ins, out) {
      const info = m.program.agents[a]!;
      // Inside `elect:` (a role whose default is not per=one): one thread of a warp of 32 arrives,
      // and the others never do in this round (PTX ISA §9.7.13.3).
      if (ins.per === 'one' && m.program.roles[info.role]!.decl.per !== 'one' && info.threads > 1) {
        return m.fault(s, a, out, diagnostic(DIAG.clusterArrivePartial,
          `${ins.text} inside elect: only the elected thread of ${info.name} arrives; its other ${info.threads - 1} threads do not, and barrier.cluster.wait waits for every thread of the cluster that has not exited${ins.op.op === 'barrier.cluster.arrive' && ins.op.aligned ? ' (.aligned: every thread of the warp must execute it)' : ''}`), ins.loc, -1), false;
      }
      const ag = s.agents[a]!;
      // Arrived in this round and not waited since: one arrival per thread and round (PTX ISA §9.7.13.3).
      if ((ag.clusterRound & 1) === 1) {
        return m.fault(s, a, out, diagnostic(DIAG.clusterArriveTwice,
          `${ins.text}: ${info.name} arrives on the cluster barrier a second time without a barrier.cluster.wait since its last arrive; each thread arrives once per round, and the wait completes its round`), ins.loc, -1), false;
      }
      ag.clusterRound = ((clusterArrivals(ag) + 1) << 1) | 1;
      { m.emitted(s); if (out.events && !out.sparse) out.events.push({ e: 'sync', t: s.now, agent: a, kind: 'cluster.arrive', id: 0, loc: ins.loc }); }
      checkCluster(m, s, m.program.agents[a]!.cluster, out);
      return true;
    },
    text: (op) => `${op.op}${op.sem ? `.${op.sem}` : ''}${op.aligned ? '.aligned' : ''}`,
  } satisfies OpDef<'barrier.cluster.arrive'>,
  {
    op: 'barrier.cluster.wait', family: F, por: 'sync', sync: 'barrier', timing: 'barrier.cluster.wait',
    // Waits for the round of the agent's latest arrival; with no arrival since its last wait, for
    // its own next one, which never comes (a hang).
    enabled: (m, s, a, _ins, ag) => (ag.clusterRound & 1) === 1 && s.clusterDone[m.program.agents[a]!.cluster]! >= clusterArrivals(ag),
    exec(m, s, a, ins, out) {
      s.agents[a]!.clusterRound &= ~1;
      { m.emitted(s); if (out.events && !out.sparse) out.events.push({ e: 'sync', t: s.now, agent: a, kind: 'cluster.wait', id: 0, loc: ins.loc }); }
      return true;
    },
    text: (op) => `${op.op}${op.aligned ? '.aligned' : ''}`,
  } satisfies OpDef<'barrier.cluster.wait'>,
] as OpDef[];
