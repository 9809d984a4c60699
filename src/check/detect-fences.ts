/**
 * Hazard detector on transitions: proxy fences (`missing-fence`, and under `strict` the cross-proxy
 * WAR `race`) and barrier-initialization publication (`missing-init-fence`, `uninit-use`)
 * (docs/CHECK.md, "Fences"). Its checker data in {@link Extra}: `dirty` (each agent's generic
 * accesses to buffers the async proxy also accesses, not yet followed by fence.proxy.async), `esc`
 * (such accesses a release published without a proxy fence) and `pub` (per manual barrier: who
 * initialized it and how far the initialization was published).
 */
import type { Choice, MachineState } from '../machine/machine.js';
import type { OpInstr } from '../machine/program.js';
import type { SrcLoc } from '../kernel/ir.js';
import type { Extra } from './codec.js';
import { keyOf } from './engine.js';
import { hasAccess, kindLabel, opAccesses } from './ghosts.js';
import type { SearchCtx } from './search-ctx.js';
import { locKey } from './search-facts.js';
import { LAZY } from './search-hazards.js';

/** `l` with `v` added (sorted; `l` itself when it holds `v`). */
const sortedWith = (l: number[] | null, v: number): number[] => {
  if (l && l.includes(v)) return l;
  const r = l ? [...l, v] : [v];
  return r.sort((u, w) => u - w);
};
/** Operations that release (with bar.sync's first step). */
const RELEASES = new Set(['mbarrier.arrive', 'bar.arrive', 'barrier.cluster.arrive']);

/**
 * Whether operation `op` (its agent at sub-step `sub`) is a release, which publishes the agent's
 * unfenced generic accesses: an mbarrier arrive (local or remote), `bar.arrive`,
 * `barrier.cluster.arrive`, or the first step of `bar.sync`.
 */
export function publishes(op: string, sub: number): boolean {
  return RELEASES.has(op) || (op === 'bar.sync' && sub < 0);
}

/** The fence data of one transition, copied on first write. */
interface FenceDraft {
  x: Extra;
  dirty: Extra['dirty'];
  esc: Extra['esc'];
  pub: Extra['pub'];
}

const setDirty = (d: FenceDraft, a: number, l: number[] | null): void => {
  if (d.dirty === d.x.dirty) d.dirty = d.dirty.slice();
  d.dirty[a] = l && l.length ? l : null;
};
const setPub = (d: FenceDraft, slot: number, v: number): void => {
  if (d.pub[slot] === v) return;
  if (d.pub === d.x.pub) d.pub = d.pub.slice();
  d.pub[slot] = v;
};

/**
 * The detector of search `ctx`: for the step `c` from `s` to `t` (checker data `x`, found from
 * stored state `stateId`), reports the fence hazards and returns the updated checker data.
 */
export function fenceDetector(ctx: SearchCtx): (s: MachineState, t: MachineState, c: Choice, x: Extra, stateId: number) => Extra {
  const { m, an } = ctx;
  const generic = genericAccess(ctx);
  const initUse = initPublication(ctx);
  const asyncAccess = asyncProxyAccess(ctx);
  return (s, t, c, x, stateId) => {
    const d: FenceDraft = { x, dirty: x.dirty, esc: x.esc, pub: x.pub };
    if (c.kind === 'agent') {
      const a = c.agent;
      const ins = m.nextOp(s, a);
      if (ins) {
        const op = ins.op.op;
        const release = publishes(op, s.agents[a]!.sub);
        if (an.trackProxy) generic(d, s, a, ins, release);
        if (an.manualCount) initUse(d, s, t, a, ins, release, stateId);
      }
    }
    if (an.trackProxy) asyncAccess(d, stateId);
    return d.dirty === x.dirty && d.esc === x.esc && d.pub === x.pub ? x : { ...x, dirty: d.dirty, esc: d.esc, pub: d.pub };
  };
}

/**
 * A generic access of agent `a` to a buffer the async proxy accesses is remembered (`dirty`);
 * fence.proxy.async forgets them, a release publishes them (`esc`). Reads only under `strict`.
 */
function genericAccess(ctx: SearchCtx): (d: FenceDraft, s: MachineState, a: number, ins: OpInstr, release: boolean) => void {
  const { an, strict } = ctx;
  return (d, s, a, ins, release) => {
    const op = ins.op.op;
    const f = s.agents[a]!.frame;
    // Generic reads matter only to the strict rule (an async-proxy write over them, cross-proxy
    // WAR): without it they are not kept, so the orders of fences and releases around them are one.
    if (op === 'ld.shared' && !strict) return;
    if (op === 'ld.shared' || op === 'st.shared') {
      const b = keyOf(ins.buf!, f);
      if (b >= 0 && an.proxyKey[b]) {
        const v = b * 2 + (op === 'st.shared' ? 1 : 0);
        setDirty(d, a, sortedWith(d.dirty[a]!, v));
        if (d.esc && d.esc.includes(v)) {
          const r = d.esc.filter((w) => w !== v);
          d.esc = r.length ? r : null;
        }
      }
    } else if (op === 'fence.proxy.async') {
      if (d.dirty[a]) setDirty(d, a, null);
      d.esc = null;
    } else if (release && d.dirty[a]) {
      let e = d.esc;
      for (const v of d.dirty[a]!) e = sortedWith(e, v);
      d.esc = e;
      setDirty(d, a, null);
    }
  };
}

/** A use of a barrier or a signal to it by the step's asynchronous operations. */
interface BarrierUse { k: number; remote: boolean; same: boolean; loc: SrcLoc }

/**
 * Uses of a manual barrier before its initialization was published to the user
 * (`missing-init-fence`, `uninit-use`), then the publication the step makes (mbarrier.init,
 * fence.mbarrier_init, a release).
 */
function initPublication(ctx: SearchCtx): (d: FenceDraft, s: MachineState, t: MachineState, a: number, ins: OpInstr, release: boolean, stateId: number) => void {
  const { p, an, out, sink } = ctx;
  const { barCta, agentName } = ctx.f;
  return (d, s, t, a, ins, release, stateId) => {
    const op = ins.op.op;
    const info = p.agents[a]!;
    const bk = ins.bar ? keyOf(ins.bar, s.agents[a]!.frame) : -1;
    // Uses: the barrier the operation names, and the barriers its asynchronous operations signal.
    const uses: BarrierUse[] = [];
    const same = (init: number) => init === a && (ins.per === 'one' || info.threads === 1 || (ins.per === 'warp' && info.warps === 1));
    if (bk >= 0 && op !== 'mbarrier.init' && op !== 'cp.async.bulk' && op !== 'tcgen05.commit' && !(op === 'mbarrier.arrive' && barCta(bk) !== info.cta)) {
      uses.push({ k: bk, remote: barCta(bk) !== info.cta, same: false, loc: ins.loc });
    }
    for (const o of out.issued) {
      for (const k of o.targets ?? (o.bar >= 0 ? [o.bar] : [])) uses.push({ k, remote: barCta(k) !== info.cta, same: false, loc: o.loc });
    }
    for (const u of uses) {
      const slot = an.manualSlot[u.k]!;
      if (slot < 0) continue;
      const v = d.pub[slot]!;
      if (v === 0) continue; // not initialized: the machine reports the use
      const init = (v >> 3) - 1;
      const bname = p.barrierName(u.k);
      const initName = p.agents[init]!.name;
      if (u.remote) {
        if (v & 4) continue;
        sink.error({
          kind: 'missing-init-fence', severity: 'error', key: `${bname}|${locKey(u.loc)}`,
          message: `${agentName(a)} signals ${bname} from another CTA, but the initialization of ${bname} by ${initName} has not been published to the cluster: its thread must execute fence.mbarrier_init.release.cluster after the init and then barrier.cluster.arrive, and this CTA barrier.cluster.wait, before the first remote use${v & 1 ? '' : ' (no fence.mbarrier_init after the init)'}`,
          subject: bname, state: stateId, extra: LAZY, details: ['PTX ISA §9.7.13.4 (fence.mbarrier_init), §9.7.13.15.16 example 4'], locs: [u.loc],
        });
      } else if (!(v & 6) && !same(init)) {
        sink.errorFound = true;
        const who = init === a ? `the other threads of ${agentName(a)} (not the one that ran mbarrier.init)` : agentName(a);
        const use = init === a ? 'use' : 'uses';
        sink.report({
          kind: 'missing-init-fence', severity: 'error', key: `${bname}|${locKey(u.loc)}`,
          message: `${who} ${use} ${bname} (${ins.text}) before the initialization by ${initName} was published: the initializing thread must synchronize with the users after mbarrier.init (bar.sync, or a release/acquire chain; fence.mbarrier_init + barrier.cluster for cluster use)`,
          subject: bname, state: stateId, extra: LAZY, details: ['PTX ISA §9.7.13.15.9 examples; CUDA Programming Guide §10.26.3'], locs: [u.loc],
        });
        sink.report({
          kind: 'uninit-use', severity: 'error', key: `${bname}|${locKey(u.loc)}`,
          message: `${who} may operate on ${bname} while it is still uninitialized for them (${ins.text}): nothing orders this use after mbarrier.init by ${initName}`,
          subject: bname, state: stateId, extra: LAZY, details: [], locs: [u.loc],
        });
      }
    }
    if (op === 'mbarrier.init' && bk >= 0 && an.manualSlot[bk]! >= 0 && t.bars[bk]!.status === 'valid') setPub(d, an.manualSlot[bk]!, (a + 1) * 8);
    else if (op === 'fence.mbarrier_init' || release) {
      for (let slot = 0; slot < d.pub.length; slot++) {
        const v = d.pub[slot]!;
        if (v === 0 || (v >> 3) - 1 !== a) continue;
        if (op === 'fence.mbarrier_init') setPub(d, slot, v | 1);
        else setPub(d, slot, v | 2 | (op === 'barrier.cluster.arrive' && v & 1 ? 4 : 0));
      }
    }
  };
}

/**
 * Asynchronous-proxy accesses begun by the step: a read after an unfenced generic write is
 * `missing-fence`; under `strict`, a write after unfenced generic accesses is a `race` (and a
 * `missing-fence` warning).
 */
function asyncProxyAccess(ctx: SearchCtx): (d: FenceDraft, stateId: number) => void {
  const { p, an, out, sink, strict } = ctx;
  const { conf, agentName, accessText } = ctx.f;
  return (d, stateId) => {
    for (const o of out.issued) {
      for (const acc of opAccesses(o)) {
        if (!an.proxyKey[acc.buf]) continue;
        const own = d.dirty[o.agent];
        const esc = d.esc;
        if (acc.rw === 'r') {
          const v = acc.buf * 2 + 1;
          if (!(hasAccess(esc, v, conf) || hasAccess(own, v, conf))) continue;
          const bufName = p.bufferName(acc.buf);
          sink.error({
            kind: 'missing-fence', severity: 'error', key: `${bufName}|${locKey(o.loc)}`,
            message: `${kindLabel(o.kind)} issued by ${agentName(o.agent)} reads ${bufName} through the async proxy after a generic write to it (st.shared) with no fence.proxy.async between the write and the synchronization that let this operation proceed: the async proxy may read stale data`,
            subject: bufName, state: stateId, extra: LAZY, details: ['PTX ISA §8.6, §9.7.15.7.1 (fence.proxy.async.shared::cta after generic writes, before the release)'], locs: [o.loc],
          });
        } else if (strict) {
          const hit = [acc.buf * 2, acc.buf * 2 + 1].filter((v) => hasAccess(esc, v, conf) || hasAccess(own, v, conf));
          if (!hit.length) continue;
          const bufName = p.bufferName(acc.buf);
          // Under the strict rule the generic accesses and the async-proxy write are unordered: a race.
          sink.error({
            kind: 'race', severity: 'error', key: `${bufName}|${locKey(o.loc)}|proxy`,
            message: `${kindLabel(o.kind)} issued by ${agentName(o.agent)} writes ${bufName} through the async proxy while the earlier generic ${hit.map(accessText).join(' and ')} ${hit.length > 1 ? 'are' : 'is'} ordered before it only by an mbarrier hand-off: without fence.proxy.async on that chain the async proxy may write before the generic accesses are done (cross-proxy WAR, strict rule)`,
            subject: bufName, state: stateId, extra: LAZY,
            details: ['PTX ISA §8.6; DeepEP, https://github.com/deepseek-ai/DeepEP/pull/642: wrong results at scale until a proxy fence was added between the wait and the TMA load.'], locs: [o.loc],
          });
          sink.report({
            kind: 'missing-fence', severity: 'warning', key: `${bufName}|${locKey(o.loc)}|war`,
            message: `${kindLabel(o.kind)} issued by ${agentName(o.agent)} overwrites ${bufName} through the async proxy after a generic ${hit.map(accessText).join(' and ')} with only an mbarrier hand-off between them and no fence.proxy.async (cross-proxy WAR; strict rule)`,
            subject: bufName, state: stateId, extra: LAZY,
            details: ['PTX ISA §8.6: accesses through different proxies need a proxy fence; practice often relies on the mbarrier release/acquire alone, so this is a warning (--strict). Fix: fence.proxy.async by the readers before their release, or by the issuer after its wait.'], locs: [o.loc],
          });
        }
      }
    }
  };
}
