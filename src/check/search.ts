/**
 * The sequential search: breadth-first over every interleaving of agents and asynchronous
 * completions, driving the machine's own `apply`, with the partial-order reduction of `por.ts`,
 * the symmetry reduction of `codec.ts` (canonical hashes), copy-on-write successors (`clone.ts`)
 * and the hazard detectors on transitions and states. With `par` it hands its internals to a
 * worker of the parallel search (`parallel.ts`) instead of running.
 */
import { Machine, newStepOut, type AsyncOp, type Choice, type MachineState, nextCredit } from '../machine/machine.js';
import type { MachineEvent } from '../machine/events.js';
import { explainHang } from '../machine/hang.js';
import { stableArrive, stableNamedArrive, stableWait } from './stable.js';
import { NAMED_PER_CTA } from '../machine/state.js';
import { perThreads, sliceSiblings, type OpInstr, type Program } from '../machine/program.js';
import type { SrcLoc } from '../kernel/ir.js';
import { BoundReached, Governor } from '../machine/governor.js';
import { analyse } from './analysis.js';
import { Codec, sortByRecord, StateBuf, Visited, type Extra } from './codec.js';
import { asyncDef, OPC, OPS, pointAccess, sameStreamOrdered } from '../machine/ops/index.js';
import { DEFAULT_BOUNDS, encodeChoice, grow, keyOf, MAX_HAZARDS, stopOf, growthGuard, type ExploreOptions, type ExploreResult, type HashSet, type ParHooks, type RawHazard, type SearchApi } from './engine.js';
import { copySites, landingsCommute, TX_FLOOR, txSites } from './por.js';
import { cloneFor, freezeShared } from './clone.js';
import { coEnabledDetector } from './co-enabled.js';
import { relaxedDetector } from './relaxed.js';
import { EG, EG_ACC, EG_ELECT, EG_MB, EG_WG, hasAccess, insertPair, insertSorted, kindLabel, opAccesses } from './ghosts.js';
import { keysOverlap } from '../machine/views.js';

const OPC_ARRIVE = OPC['mbarrier.arrive'];
const OPC_WAIT = OPC['mbarrier.wait'];
const OPC_BAR_SYNC = OPC['bar.sync'];
const OPC_BAR_ARRIVE = OPC['bar.arrive'];
const OPC_WG_WAIT = OPC['wgmma.wait_group'];
const OPC_BULK_WAIT = OPC['cp.async.bulk.wait_group'];
const OPC_CP_WAIT = OPC['cp.async.wait_group'];
const OPC_CLUSTER_ARRIVE = OPC['barrier.cluster.arrive'];

/** The search; with `par` (a worker of the parallel search), returns its internals instead of running it. */
export function search(program: Program, opts: ExploreOptions, par: ParHooks | null): ExploreResult | SearchApi {
  const t0 = Date.now();
  const m = new Machine(program);
  const an = analyse(program, { ctaSymmetry: opts.symmetry !== false && opts.ctaSymmetry !== false });
  if (opts.symmetry === false) {
    an.groups = [];
    an.groupOf.fill(-1);
  }
  const usePor = opts.por !== false;
  const useSym = opts.symmetry !== false;
  const strict = opts.strict === true;
  const verifyHash = opts.verifyHash === true;
  const maxStates = opts.maxStates ?? DEFAULT_BOUNDS.maxStates;
  const maxMemory = opts.maxMemory ?? DEFAULT_BOUNDS.maxMemory;
  const timeoutMs = opts.timeoutMs ?? DEFAULT_BOUNDS.timeoutMs;
  const initOut = newStepOut(true);
  const s0 = m.initial(initOut);
  const codec = new Codec(program, an, s0);
  const gov = par ? par.governor : new Governor({ maxMemory, deadline: t0 + timeoutMs }, { every: 64 });
  const guard = growthGuard(gov);
  const visited: HashSet = par ? par.visited : new Visited(1 << 14);
  if (visited instanceof Visited) visited.guard = guard;
  let parent = new Int32Array(1 << 14);
  let chainOff = new Int32Array(1 << 14);
  let chainData = new Int32Array(1 << 16);
  let chainLen = 0;
  let nStates = 0;
  let transitions = 0;
  let terminalOk = 0;
  let intermediates = 0;
  const hazards = new Map<string, RawHazard>();
  const hbuf = new Uint32Array(2);
  const p = program;
  const barCta = (k: number) => Math.floor(k / p.barriersPerCta);
  const bufCta = (k: number) => Math.floor(k / p.buffersPerCta);
  // Byte ranges: keys conflict when their bytes overlap; without ranges or aliases (ov null) only equal keys do.
  const ov = p.bufferSpace.overlap;
  const L = p.buffersPerCta;
  const conf = (a: number, b: number): boolean => a === b || (ov !== null && keysOverlap(ov, L, a, b));
  /**
   * The subject of a race between accesses to buffer keys `a` and `b`: with byte ranges the two may
   * differ, and the report must not depend on which came first (the lower key names it).
   */
  const raceBuf = (a: number, b: number): number => (a === b || b < 0 ? a : a < 0 ? b : Math.min(a, b));
  /** Whether a TMA copy completing on barrier `b` fills bytes of buffer `buf`. */
  const fedHas = (buf: number, b: number): boolean => {
    if (fedBy.get(buf)?.has(b)) return true;
    if (ov === null) return false;
    for (const [k, f] of fedBy) if (f.has(b) && conf(k, buf)) return true;
    return false;
  };
  const ctaAgents: number[][] = Array.from({ length: p.ctas }, () => []);
  for (const a of p.agents) ctaAgents[a.cta]!.push(a.id);
  /**
   * Per barrier array: the largest number of arrivals one arrive instruction makes on it at once
   * (its count, times the threads of a per-thread arrive; Infinity for a count that is not a
   * literal). Bounds the remote-arrive reduction.
   */
  const maxUnitByName = new Map<string, number>();
  for (const rc of p.roles) for (const ins of rc.code) {
    if (ins.i !== 'op') continue;
    const op = ins.op;
    if (op.op !== 'mbarrier.arrive' && op.op !== 'cp.async.mbarrier.arrive' && op.op !== 'tcgen05.commit') continue;
    const count = op.op === 'mbarrier.arrive' && op.count ? (op.count.k === 'num' ? op.count.v : Infinity) : 1;
    const unit = count * (ins.per === 'thread' ? rc.threads : ins.per === 'warp' ? rc.warps : 1);
    maxUnitByName.set(op.bar.name, Math.max(maxUnitByName.get(op.bar.name) ?? 1, unit));
  }
  const maxArriveUnit = (k: number) => maxUnitByName.get(p.barrierOf(k).info.name) ?? 1;
  /** Barrier keys some agent may wait on: a data barrier instance outside it is a `missing-wait`. */
  const waitedKey = new Uint8Array(p.ctas * p.barriersPerCta);
  for (const ws of an.waitSlots) for (const k of ws.keys()) waitedKey[k] = 1;
  /** Agents of more than one warp: a wait_group of their elected thread alone orders only it (B18). */
  const multiWarp = p.agents.map((a) => a.warps > 1);
  const anyMultiWarp = multiWarp.some(Boolean);
  /** Whether any arrive names another CTA's barrier (the `scope` checks run only then). */
  const remoteArrives = p.roles.some((rc) => rc.code.some((ins) => ins.i === 'op' && ins.op.op === 'mbarrier.arrive' && ins.op.bar.cta !== undefined));
  /** Roles whose threads other than the elected one access shared memory (EG_MB entries matter only there). */
  const allThreadAccess = p.roles.map((rc) => rc.code.some((ins) => ins.i === 'op' && ins.per !== 'one' && pointAccess(ins.opc) !== undefined));
  /** Per buffer key: the barrier keys TMA copies into it complete on (learnt as copies are issued). */
  const fedBy = new Map<number, Set<number>>();
  /** Each agent's role code, and its role's reduction class per pc (`an.por`). */
  const agentCode = p.agents.map((ag) => p.roles[ag.role]!.code);
  const agentPor = p.agents.map((ag) => an.por[ag.role]!);
  /** A CTA as reports name it: `the CTA`, `CTA 1`, or `CTA 1 of cluster 3`. */
  const ctaLabel = (cta: number) => (p.ctas > 1 ? `CTA ${cta % p.clusterSize}${p.grid > 1 ? ` of cluster ${Math.floor(cta / p.clusterSize)}` : ''}` : 'the CTA');
  /** The wait instruction at `pc` of agent `a` (for phase-alias reports). */
  const insAt = (a: number, pc: number) => p.roles[p.agents[a]!.role]!.code[pc];
  const nBars = p.ctas * p.barriersPerCta;
  /** Whether some role executes barrier.cluster.arrive (else cluster rounds never change). */
  const usesCluster = p.roles.some((rc) => rc.code.some((ins) => ins.i === 'op' && ins.op.op === 'barrier.cluster.arrive'));
  /**
   * History slot of (agent, barrier key), or -1: the analysis's `waitSlots` as one flat table
   * (agent × nBars + key) while that stays small, else looked up in them (a launch of 33,792 agents
   * and 262,144 barriers would need 35 GB flat).
   */
  const slotOf = flatWaitSlots(an.waitSlots, p.agents.length, nBars);
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
  /**
   * Whether a wait of agent `a` on barrier key `bar` that observed phase `observed`, two or more
   * past the phase it was due to observe, skipped only phases that another consumer took: some
   * waiter of another instance of the same role (the warps of one instance are one consumer; a
   * producer waiting on the barrier is not a consumer) has already observed phase
   * `observed - 1` or later (history `h`). Skipping
   * consumers (CUTLASS's pingpong math warpgroups on alternate tiles, FlashAttention-3's second
   * warpgroup) pass their waits on the phases after the ones the other consumer observed.
   */
  const skippedForOther = (a: number, bar: number, observed: number, h: number[]): boolean => {
    const ck = a * nBars + bar;
    let others = othersCache.get(ck);
    if (!others) {
      const me = consumerOf(a);
      const role = p.agents[a]!.role;
      others = Int32Array.from((waitersOf.get(bar) ?? []).filter((b) => p.agents[b]!.role === role && consumerOf(b) !== me));
      othersCache.set(ck, others);
    }
    for (let i = 0; i < others.length; i++) {
      const hv = h[slotOf(others[i]!, bar)]!;
      if (hv !== -2 && (hv >> 13) - 1 >= observed - 1) return true;
    }
    return false;
  };
  /** Per barrier key: 1 when its array receives direct expect_tx / complete_tx (the analysis's `directTx`). */
  const directTxKey = new Uint8Array(nBars);
  /** Per barrier key: 1 when its array is commit-only (the analysis's `commitOnly`). */
  const commitOnlyKey = new Uint8Array(nBars);
  /** Per barrier key: 1 when some cp.async.mbarrier.arrive names its array (landings on it are never postponed). */
  const cpaKey = new Uint8Array(nBars);
  const cpaArrays = new Set<string>();
  for (const rc of p.roles) for (const ins of rc.code) if (ins.i === 'op' && ins.op.op === 'cp.async.mbarrier.arrive') cpaArrays.add(ins.op.bar.name);
  for (let k = 0; k < nBars; k++) {
    const name = p.barrierOf(k).info.name;
    cpaKey[k] = cpaArrays.has(name) ? 1 : 0;
    directTxKey[k] = an.directTx.has(name) ? 1 : 0;
    commitOnlyKey[k] = an.commitOnly?.has(name) ? 1 : 0;
  }

  const addState = (par: number, chain: Choice[]): number => {
    const id = nStates++;
    parent = grow(parent, nStates);
    chainOff = grow(chainOff, nStates);
    chainData = grow(chainData, chainLen + chain.length + 1);
    parent[id] = par;
    chainOff[id] = chainLen;
    chainData[chainLen++] = chain.length;
    for (const c of chain) chainData[chainLen++] = encodeChoice(c);
    return id;
  };

  /** Trace suffix of hazards found on a transition: built only when one is reported. */
  const LAZY: Choice[] = [];
  let lazyPrefix: Choice[] = [];
  let lazyChoice: Choice = { kind: 'agent', agent: 0 };
  /** Parallel search: hazards found since the last {@link SearchApi.takeHazards} (no cap: the main thread keeps MAX_HAZARDS). */
  let fresh: RawHazard[] = [];
  const report = (h: Omit<RawHazard, 'key'> & { key: string }) => {
    // The subject is part of the key: `--all` lists every (kind, subject) reachable, whatever the
    // order the search met them in (the differential tests compare these sets across reductions).
    const key = `${h.kind}|${h.subject ?? ''}|${h.key}`;
    if (hazards.has(key) || (!par && hazards.size >= MAX_HAZARDS)) return;
    const extra = h.extra === LAZY ? [...lazyPrefix, lazyChoice] : h.extra;
    const raw = { ...h, extra, key };
    hazards.set(key, raw);
    if (par) fresh.push(raw);
  };
  const locKey = (l?: SrcLoc) => (l ? `${l.file ?? ''}:${l.line}:${l.col}` : '-');
  const agentName = (a: number) => p.agents[a]!.name;

  // ---- initial state
  const x0: Extra = {
    hist: new Array<number>(an.histLen).fill(-2), ghosts: new Array(p.agents.length).fill(null), tghosts: null,
    dirty: new Array(p.agents.length).fill(null), esc: null, pub: new Array<number>(an.manualCount).fill(0),
    cghosts: new Array(p.agents.length).fill(null), pcm: new Array<number[] | null>(p.agents.length).fill(null),
    ru: new Array(p.agents.length).fill(null), rp: null,
  };
  const rh0 = new Int32Array(codec.rhLength());
  codec.hash(s0, x0, hbuf, rh0);
  const hbuf0 = hbuf.slice();
  const id0 = addState(-1, []);
  visited.add(hbuf[0]!, hbuf[1]!);
  let cur = new StateBuf();
  codec.encode(s0, x0, cur, id0, rh0);
  cur.guard = guard; // the initial state is always held; growths after it ask the governor
  const levelStart: number[] = [0];
  let depth = 0;
  let peakFrontier = 1;
  let stoppedBy: ExploreResult['stoppedBy'] = null;
  let errorFound = false;
  // An agent can already stop before its first operation (e.g. a division by zero).
  for (const d of initOut.diags) {
    if (d.diag.severity === 'error') errorFound = true;
    report({
      kind: d.diag.code, severity: d.diag.severity, key: `init|${locKey(d.loc)}`, message: d.diag.message, subject: null,
      state: id0, extra: [], details: [`H200: ${d.diag.h200}`], locs: d.loc ? [d.loc] : [],
    });
  }
  const out = newStepOut(true);
  out.sparse = true; // checkTransition reads only diagnostics, phases, waits and access starts
  let lastProgress = t0;
  let memEst = 0;


  const sortedWith = (l: number[] | null, v: number): number[] => {
    if (l && l.includes(v)) return l;
    const r = l ? [...l, v] : [v];
    return r.sort((u, w) => u - w);
  };
  const RELEASES = new Set(['mbarrier.arrive', 'bar.arrive', 'barrier.cluster.arrive']);
  const accessText = (v: number) => `${v & 1 ? 'write' : 'read'} of ${p.bufferName(v >> 1)}`;

  /**
   * Proxy fences (`missing-fence`) and barrier-initialization publication (`missing-init-fence`,
   * `uninit-use`) for one transition; returns the updated checker data (docs/CHECK.md, "Fences").
   */
  const fences = (s: MachineState, t: MachineState, c: Choice, x: Extra, stateId: number): Extra => {
    let dirty = x.dirty;
    let esc = x.esc;
    let pub = x.pub;
    const setDirty = (a: number, l: number[] | null) => {
      if (dirty === x.dirty) dirty = dirty.slice();
      dirty[a] = l && l.length ? l : null;
    };
    const setPub = (slot: number, v: number) => {
      if (pub[slot] === v) return;
      if (pub === x.pub) pub = pub.slice();
      pub[slot] = v;
    };
    if (c.kind === 'agent') {
      const a = c.agent;
      const ins = m.nextOp(s, a);
      if (ins) {
        const op = ins.op.op;
        const ag = s.agents[a]!;
        const f = ag.frame;
        const release = RELEASES.has(op) || (op === 'bar.sync' && ag.sub < 0);
        if (an.trackProxy) {
          if (op === 'ld.shared' || op === 'st.shared') {
            const b = keyOf(ins.buf!, f);
            if (b >= 0 && an.proxyKey[b]) {
              const v = b * 2 + (op === 'st.shared' ? 1 : 0);
              setDirty(a, sortedWith(dirty[a]!, v));
              if (esc && esc.includes(v)) {
                const r = esc.filter((w) => w !== v);
                esc = r.length ? r : null;
              }
            }
          } else if (op === 'fence.proxy.async') {
            if (dirty[a]) setDirty(a, null);
            esc = null;
          } else if (release && dirty[a]) {
            let e = esc;
            for (const v of dirty[a]!) e = sortedWith(e, v);
            esc = e;
            setDirty(a, null);
          }
        }
        if (an.manualCount) {
          const info = p.agents[a]!;
          const bk = ins.bar ? keyOf(ins.bar, f) : -1;
          // Uses: the barrier the operation names, and the barriers its asynchronous operations signal.
          const uses: { k: number; remote: boolean; same: boolean; loc: SrcLoc }[] = [];
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
            const v = pub[slot]!;
            if (v === 0) continue; // not initialized: the machine reports the use
            const init = (v >> 3) - 1;
            const bname = p.barrierName(u.k);
            const initName = p.agents[init]!.name;
            if (u.remote) {
              if (v & 4) continue;
              errorFound = true;
              report({
                kind: 'missing-init-fence', severity: 'error', key: `${bname}|${locKey(u.loc)}`,
                message: `${agentName(a)} signals ${bname} from another CTA, but the initialization of ${bname} by ${initName} has not been published to the cluster: its thread must execute fence.mbarrier_init.release.cluster after the init and then barrier.cluster.arrive, and this CTA barrier.cluster.wait, before the first remote use${v & 1 ? '' : ' (no fence.mbarrier_init after the init)'}`,
                subject: bname, state: stateId, extra: LAZY, details: ['PTX ISA §9.7.13.4 (fence.mbarrier_init), §9.7.13.15.16 example 4'], locs: [u.loc],
              });
            } else if (!(v & 6) && !same(init)) {
              errorFound = true;
              const who = init === a ? `the other threads of ${agentName(a)} (not the one that ran mbarrier.init)` : agentName(a);
              const use = init === a ? 'use' : 'uses';
              report({
                kind: 'missing-init-fence', severity: 'error', key: `${bname}|${locKey(u.loc)}`,
                message: `${who} ${use} ${bname} (${ins.text}) before the initialization by ${initName} was published: the initializing thread must synchronize with the users after mbarrier.init (bar.sync, or a release/acquire chain; fence.mbarrier_init + barrier.cluster for cluster use)`,
                subject: bname, state: stateId, extra: LAZY, details: ['PTX ISA §9.7.13.15.9 examples; CUDA Programming Guide §10.26.3'], locs: [u.loc],
              });
              report({
                kind: 'uninit-use', severity: 'error', key: `${bname}|${locKey(u.loc)}`,
                message: `${who} may operate on ${bname} while it is still uninitialized for them (${ins.text}): nothing orders this use after mbarrier.init by ${initName}`,
                subject: bname, state: stateId, extra: LAZY, details: [], locs: [u.loc],
              });
            }
          }
          if (op === 'mbarrier.init' && bk >= 0 && an.manualSlot[bk]! >= 0 && t.bars[bk]!.status === 'valid') setPub(an.manualSlot[bk]!, (a + 1) * 8);
          else if (op === 'fence.mbarrier_init' || release) {
            for (let slot = 0; slot < pub.length; slot++) {
              const v = pub[slot]!;
              if (v === 0 || (v >> 3) - 1 !== a) continue;
              if (op === 'fence.mbarrier_init') setPub(slot, v | 1);
              else setPub(slot, v | 2 | (op === 'barrier.cluster.arrive' && v & 1 ? 4 : 0));
            }
          }
        }
      }
    }
    // Asynchronous-proxy accesses begun by this step.
    if (an.trackProxy) for (const o of out.issued) {
      for (const acc of opAccesses(o)) {
        if (!an.proxyKey[acc.buf]) continue;
        const own = dirty[o.agent];
        if (acc.rw === 'r') {
          const v = acc.buf * 2 + 1;
          if (!(hasAccess(esc, v, conf) || hasAccess(own, v, conf))) continue;
          errorFound = true;
          const bufName = p.bufferName(acc.buf);
          report({
            kind: 'missing-fence', severity: 'error', key: `${bufName}|${locKey(o.loc)}`,
            message: `${kindLabel(o.kind)} issued by ${agentName(o.agent)} reads ${bufName} through the async proxy after a generic write to it (st.shared) with no fence.proxy.async between the write and the synchronization that let this operation proceed: the async proxy may read stale data`,
            subject: bufName, state: stateId, extra: LAZY, details: ['PTX ISA §8.6, §9.7.15.7.1 (fence.proxy.async.shared::cta after generic writes, before the release)'], locs: [o.loc],
          });
        } else if (strict) {
          const hit = [acc.buf * 2, acc.buf * 2 + 1].filter((v) => hasAccess(esc, v, conf) || hasAccess(own, v, conf));
          if (!hit.length) continue;
          const bufName = p.bufferName(acc.buf);
          // Under the strict rule the generic accesses and the async-proxy write are unordered: a race.
          errorFound = true;
          report({
            kind: 'race', severity: 'error', key: `${bufName}|${locKey(o.loc)}|proxy`,
            message: `${kindLabel(o.kind)} issued by ${agentName(o.agent)} writes ${bufName} through the async proxy while the earlier generic ${hit.map(accessText).join(' and ')} ${hit.length > 1 ? 'are' : 'is'} ordered before it only by an mbarrier hand-off: without fence.proxy.async on that chain the async proxy may write before the generic accesses are done (cross-proxy WAR, strict rule)`,
            subject: bufName, state: stateId, extra: LAZY,
            details: ['PTX ISA §8.6; DeepEP, https://github.com/deepseek-ai/DeepEP/pull/642: wrong results at scale until a proxy fence was added between the wait and the TMA load.'], locs: [o.loc],
          });
          report({
            kind: 'missing-fence', severity: 'warning', key: `${bufName}|${locKey(o.loc)}|war`,
            message: `${kindLabel(o.kind)} issued by ${agentName(o.agent)} overwrites ${bufName} through the async proxy after a generic ${hit.map(accessText).join(' and ')} with only an mbarrier hand-off between them and no fence.proxy.async (cross-proxy WAR; strict rule)`,
            subject: bufName, state: stateId, extra: LAZY,
            details: ['PTX ISA §8.6: accesses through different proxies need a proxy fence; practice often relies on the mbarrier release/acquire alone, so this is a warning (--strict). Fix: fence.proxy.async by the readers before their release, or by the issuer after its wait.'], locs: [o.loc],
          });
        }
      }
    }
    return dirty === x.dirty && esc === x.esc && pub === x.pub ? x : { ...x, dirty, esc, pub };
  };

  /**
   * The `phase-alias` of a wait that returned again on the phase it had already returned for (the
   * same instruction; its parity did not advance), while the barrier went on to phase `observed + 1`.
   */
  const staleAlias = (a: number, bar: number, observed: number, parity: number, loc: SrcLoc, stateId: number, extra: Choice[], later: boolean): RawHazard => {
    const bname = p.barrierName(bar);
    return {
      kind: 'phase-alias', severity: 'error', key: `${bname}|${locKey(loc)}|stale`,
      message: `${agentName(a)} passed wait(${bname}, parity ${parity}) at line ${loc.line} ${observed < 0 ? 'a second time on the fresh barrier (no phase completed), as it had already returned' : `on phase ${observed}, the phase this same wait had already returned for`}: its parity did not advance, ${later ? `and ${bname} went on to complete phase ${observed + 1}, which ${agentName(a)} never waited for` : `so it returned without waiting for phase ${observed + 1}, which ${bname} has already begun`}`,
      subject: bname, state: stateId, extra,
      details: ['The parity this wait computes did not advance between its passes: a phase counter restarted per persistent tile while the barrier\'s phase carries over (Triton, https://github.com/facebookexperimental/triton/pull/3420), or a parity computed from another loop counter than the stage index.'],
      locs: [loc],
    };
  };

  /**
   * A bulk store (shared -> global) still reading its shared-memory source when every agent of its
   * CTA has exited. The PTX ISA does not say whether an exited CTA's shared memory stays allocated
   * until such reads are done (cp.async.bulk.wait_group.read, §9.7.9.27.2.2, only says when the
   * source may be reused); CUTLASS's epilogues (store_tail: tma_store_wait<0>) and
   * FlashAttention-3's (tma_store_wait<0> before barrier_O) always wait. A warning, an error under
   * `strict` (docs/CHECK.md, `inflight-at-exit`).
   */
  const storeAtExit = (o: AsyncOp, ctaName: string, target: string, stateId: number, extra: Choice[]): RawHazard => {
    if (strict) errorFound = true;
    return {
      kind: 'inflight-at-exit', severity: strict ? 'error' : 'warning', key: `${ctaName}|${o.agent}|store`,
      message: `every agent of ${ctaName} has exited while a bulk store issued by ${agentName(o.agent)} (line ${o.loc.line}) may still be reading ${target}: nothing waited for its reads of shared memory (cp.async.bulk.wait_group.read 0) before the exit`,
      subject: target || null, state: stateId, extra,
      details: ['The PTX ISA does not define whether an exited CTA\'s shared memory stays allocated until its bulk stores have read it (§9.7.9.27.2.2 only says when the source may be reused); CUTLASS (store_tail: tma_store_wait<0>) and FlashAttention-3 wait before exiting. A warning; an error with --strict.'],
      locs: [o.loc],
    };
  };

  /** The operation issued by the last step with id `id`, or undefined. */
  const issuedOp = (id: number): AsyncOp | undefined => {
    if (id < 0) return undefined;
    const l = out.issued;
    for (let i = 0; i < l.length; i++) if (l[i]!.id === id) return l[i];
    return undefined;
  };

  /**
   * Reports an access (event `e`, of the step that issued `newOp` if any) to a buffer that the
   * finished-but-unsignalled MMA of agent `g` touched (`gx`: buffer·2 + write). `bar`: -1 when no
   * commit of that MMA has arrived yet, else the barrier its commit arrived on.
   */
  /** Where agent `a`'s waits of the elected thread alone are (related locations of an elected-thread race): wait_group or mbarrier waits (op codes `opcs`) on barrier array `bar`. */
  const electSiteCache = new Map<string, SrcLoc[]>();
  const electWaitSites = (a: number, opcs: number[], barName: string | null): SrcLoc[] => {
    const key = `${p.agents[a]!.role}|${opcs.join(',')}|${barName ?? ''}`;
    let l = electSiteCache.get(key);
    if (l) return l;
    l = [];
    for (const ins of p.roles[p.agents[a]!.role]!.code) {
      if (ins.i !== 'op' || ins.per !== 'one' || !opcs.includes(ins.opc)) continue;
      if (barName !== null && !('bar' in ins.op && ins.op.bar.name === barName)) continue;
      l.push(ins.loc);
    }
    electSiteCache.set(key, l);
    return l;
  };

  /** Where agent `g`'s tcgen05.mma instructions touching the array of buffer `buf`, and its commits, are (related locations of a ghost race). */
  const mmaSiteCache = new Map<string, SrcLoc[]>();
  const mmaSites = (g: number, buf: number): SrcLoc[] => {
    const name = p.bufferOf(buf).info.name;
    const key = `${p.agents[g]!.role}|${name}`;
    let l = mmaSiteCache.get(key);
    if (!l) {
      l = [];
      for (const ins of p.roles[p.agents[g]!.role]!.code) {
        if (ins.i !== 'op') continue;
        const op = ins.op;
        if (op.op === 'tcgen05.mma' && (op.acc.name === name || op.reads.some((r) => r.name === name))) l.push(ins.loc);
        else if (op.op === 'tcgen05.commit') l.push(ins.loc);
      }
      mmaSiteCache.set(key, l);
    }
    return l;
  };

  const ghostRace = (e: Extract<MachineEvent, { e: 'access' }>, newOp: AsyncOp | undefined, g: number, gx: number, bar: number, stateId: number) => {
    if (!conf(gx >> 1, e.buf) || ((gx & 1) === 0 && e.rw === 'r')) return;
    const why = bar < 0 ? 'that MMA has finished, but no tcgen05.commit after it has signalled a barrier yet' : `its tcgen05.commit has arrived on ${p.barrierName(bar)}, but that phase has not completed`;
    const who = e.agent >= 0 ? agentName(e.agent) : newOp ? `${kindLabel(newOp.kind)} issued by ${agentName(newOp.agent)}` : 'an async unit';
    const rb = raceBuf(e.buf, gx >> 1);
    const bufName = p.bufferName(rb);
    errorFound = true;
    report({
      kind: 'race', severity: 'error', key: `${p.bufferOf(rb).info.name}|${locKey(e.loc)}|ghost${g}`,
      message: `${who} ${e.rw === 'w' ? 'writes' : 'reads'} ${bufName}, which a tcgen05.mma issued by ${agentName(g)} was ${(gx & 1) ? 'writing' : 'reading'}; ${why}, so nothing orders this access after the MMA`,
      subject: bufName, state: stateId, extra: LAZY, details: [], locs: [...(e.loc ? [e.loc] : []), ...mmaSites(g, e.buf)],
    });
  };

  /** Checks one transition (pre-state `s`, post-state `t`, events in `out`) and updates the history copy. */
  const checkTransition = (s: MachineState, t: MachineState, c: Choice, events: MachineEvent[], x: Extra, stateId: number, prefix: Choice[]): Extra => {
    const hist = x.hist;
    let h = hist;
    lazyPrefix = prefix;
    lazyChoice = c;
    const extra = LAZY;
    let ghosts = x.ghosts;
    let tghosts = x.tghosts;
    let cghosts = x.cghosts;
    let pcm = x.pcm;
    if (anyMultiWarp) for (const o of out.issued) {
      if (o.kind !== 'tma' || o.buf < 0 || o.bar < 0) continue;
      let f = fedBy.get(o.buf);
      if (!f) fedBy.set(o.buf, (f = new Set()));
      f.add(o.bar);
      if (o.targets) for (const k of o.targets) f.add(k);
    }
    if (tghosts) {
      // Landed copies whose phase has not completed: nothing orders an access after them yet.
      for (const e of events) {
        if (e.e !== 'access' || e.edge === 'end') continue;
        for (let i = 0; i < tghosts.length; i += 2) {
          if (!conf(tghosts[i + 1]!, e.buf)) continue;
          const newOp = issuedOp(e.async);
          const who = e.agent >= 0 ? agentName(e.agent) : newOp ? `${kindLabel(newOp.kind)} issued by ${agentName(newOp.agent)}` : 'an async unit';
          const rb = raceBuf(e.buf, tghosts[i + 1]!);
          const bufName = p.bufferName(rb);
          const bname = p.barrierName(tghosts[i]!);
          errorFound = true;
          report({
            kind: 'race', severity: 'error', key: `${p.bufferOf(rb).info.name}|${locKey(e.loc)}|tma`,
            message: `${who} ${e.rw === 'w' ? 'writes' : 'reads'} ${bufName} after a TMA copy wrote it but before the phase of ${bname} that copy credits has completed: nothing orders this access after the copy`,
            subject: bufName, state: stateId, extra, details: [], locs: e.loc ? [e.loc] : [],
          });
          // As for the copy still in flight (below): a reader that never waits on that barrier.
          const gb = tghosts[i]!;
          if (e.agent >= 0 && barCta(gb) === p.agents[e.agent]!.cta && an.waitSlots[e.agent]!.get(gb) === undefined) {
            report({
              kind: 'missing-wait', severity: 'error', key: `${bname}|${e.agent}`,
              message: `${agentName(e.agent)} ${e.rw === 'w' ? 'writes' : 'reads'} ${bufName}, which a TMA copy fills with its completion on ${bname}, but ${agentName(e.agent)} never waits on ${bname}: nothing orders its access after the copy`,
              subject: bname, state: stateId, extra, details: ['compute-sanitizer synccheck reports this as "missing wait".'], locs: e.loc ? [e.loc] : [],
            });
          }
        }
      }
    }
    for (const e of events) {
      switch (e.e) {
        case 'diag': {
          const d = e.diag;
          const subject = e.bar >= 0 ? p.barrierName(e.bar) : e.buf !== undefined && e.buf >= 0 ? p.bufferName(e.buf) : null;
          if (d.severity === 'error') errorFound = true;
          report({
            kind: d.code, severity: d.severity, key: `${subject ?? ''}|${locKey(e.loc)}`, message: d.message, subject,
            state: stateId, extra, details: [`H200: ${d.h200}`], locs: e.loc ? [e.loc] : [],
          });
          break;
        }
        case 'access': {
          if (e.edge === 'end') break;
          const newOp = issuedOp(e.async);
          // Ghost entries conflict when they name this buffer and one of the two accesses writes
          // (ghostRace's own test, inlined: most entries name other buffers).
          const eb2 = e.buf * 2;
          const eRead = e.rw === 'r';
          for (let g = 0; g < ghosts.length; g++) {
            const gl = ghosts[g];
            if (!gl) continue;
            if (newOp && newOp.agent === g && asyncDef(newOp.kind).stream === 'tc') continue; // ordered after its issuer's earlier tcgen05 ops
            for (let i = 0; i < gl.length; i++) {
              const gx = gl[i]!;
              if (gx & EG || ((gx & ~1) !== eb2 && (ov === null || !conf(gx >> 1, e.buf))) || ((gx & 1) === 0 && eRead)) continue;
              ghostRace(e, newOp, g, gx, -1, stateId);
            }
          }
          // The role's other warps after a wait_group of the elected thread alone (B18).
          if (anyMultiWarp && e.agent >= 0 && ghosts[e.agent]) {
            const ins = m.nextOp(s, e.agent);
            if (ins && ins.per !== 'one') for (const gx of ghosts[e.agent]!) {
              if (!(gx & EG) || !(gx & EG_ELECT)) continue;
              if (gx & EG_MB) {
                const b = gx & EG_ACC;
                if (!fedHas(e.buf, b)) continue;
                const bufName = p.bufferName(e.buf);
                const bname = p.barrierName(b);
                errorFound = true;
                report({
                  kind: 'race', severity: 'error', key: `${p.bufferOf(e.buf).info.name}|${locKey(e.loc)}|electwait`,
                  message: `the threads of ${agentName(e.agent)} other than the elected one ${e.rw === 'w' ? 'write' : 'read'} ${bufName} (${ins.text}), which TMA copies completing on ${bname} fill, but only the elected thread waited on ${bname} (inside elect: or per=one): no bar.sync over the role's threads, and no wait of their own, orders them after the copy`,
                  subject: bufName, state: stateId, extra,
                  details: ['Every thread that reads the data must be ordered after the phase: let all threads wait (as CUTLASS consumer_wait does), or follow the elected wait with a bar.sync of the role.'],
                  locs: [...(e.loc ? [e.loc] : []), ...electWaitSites(e.agent, [OPC['mbarrier.wait']], p.barrierOf(b).info.name)],
                });
                continue;
              }
              const acc = gx & EG_ACC;
              if (!conf(acc >> 1, e.buf) || ((acc & 1) === 0 && e.rw === 'r')) continue;
              const rb = raceBuf(e.buf, acc >> 1);
              const bufName = p.bufferName(rb);
              const unit = gx & EG_WG ? 'wgmma' : 'bulk store';
              errorFound = true;
              report({
                kind: 'race', severity: 'error', key: `${p.bufferOf(rb).info.name}|${locKey(e.loc)}|elect`,
                message: `the threads of ${agentName(e.agent)} other than the elected one ${e.rw === 'w' ? 'write' : 'read'} ${bufName} (${ins.text}) while a ${unit} issued by ${agentName(e.agent)} may still be ${(acc & 1) ? 'writing' : 'reading'} it: only the elected thread waited for it (${unit === 'wgmma' ? 'wgmma' : 'cp.async.bulk'}.wait_group inside elect: or per=one), and no bar.sync over the role's threads orders the other warps after that wait`,
                subject: bufName, state: stateId, extra,
                details: ['TileOPs, https://github.com/tile-ai/TileOPs/pull/1550: a warp-scoped or warpgroup-scoped bar.sync after the wait_group (before the buffer is refilled) orders every thread after the store.'],
                locs: [...(e.loc ? [e.loc] : []), ...electWaitSites(e.agent, [gx & EG_WG ? OPC['wgmma.wait_group'] : OPC['cp.async.bulk.wait_group']], null)],
              });
            }
          }
          for (let g = 0; g < cghosts.length; g++) {
            const cl = cghosts[g];
            if (!cl) continue;
            if (newOp && newOp.agent === g && asyncDef(newOp.kind).stream === 'tc') continue; // ordered after its issuer's earlier tcgen05 ops
            for (let i = 0; i < cl.length; i += 2) {
              const gx = cl[i + 1]!;
              if (((gx & ~1) !== eb2 && (ov === null || !conf(gx >> 1, e.buf))) || ((gx & 1) === 0 && eRead)) continue;
              ghostRace(e, newOp, g, gx, cl[i]!, stateId);
            }
          }
          const fl = s.inflight;
          for (let j = 0; j < fl.length; j++) {
            const o = fl[j]!;
            if (o.id === e.async) continue;
            if (o.buf !== e.buf && (ov === null || !conf(o.buf, e.buf))) {
              const rd = o.reads;
              if (!rd) continue;
              let hit = false;
              for (let r = 0; r < rd.length; r++) if (conf(rd[r]!, e.buf)) hit = true;
              if (!hit) continue;
            }
            for (const x of opAccesses(o)) {
              if (!conf(x.buf, e.buf) || (x.rw === 'r' && e.rw === 'r')) continue;
              if (newOp && newOp.agent === o.agent && sameStreamOrdered(newOp.kind, o.kind)) continue;
              // tcgen05.ld / st of two warps of one role instance: each warp reaches only its own 32 TMEM lanes.
              if ((o.kind === 'tc.ld' || o.kind === 'tc.st') && (newOp ? newOp.kind === 'tc.ld' || newOp.kind === 'tc.st' : e.agent >= 0 && p.bufferOf(e.buf).info.space === 'tmem')
                && sliceSiblings(p, newOp ? newOp.agent : e.agent, o.agent)) continue;
              const who = e.agent >= 0 ? agentName(e.agent) : newOp ? `${kindLabel(newOp.kind)} issued by ${agentName(newOp.agent)}` : 'an async unit';
              const what = e.rw === 'w' ? 'writes' : 'reads';
              const other = `${kindLabel(o.kind)} issued by ${agentName(o.agent)} (line ${o.loc.line})`;
              const otherWhat = x.rw === 'w' ? 'writing' : 'reading';
              const rb = raceBuf(e.buf, x.buf);
              const bufName = p.bufferName(rb);
              const sig = o.bar >= 0 ? `; its completion signals ${p.barrierName(o.bar)}, and nothing orders this access after that signal` : o.targets ? `; its completion signals ${o.targets.map((k) => p.barrierName(k)).join(', ')}` : '';
              errorFound = true;
              report({
                kind: 'race', severity: 'error', key: `${p.bufferOf(rb).info.name}|${locKey(e.loc)}|${locKey(o.loc)}`,
                message: `${who} ${what} ${p.bufferName(e.buf)} while the ${other} is still ${otherWhat} ${x.buf === e.buf ? 'it' : `${p.bufferName(x.buf)}, whose bytes overlap it`}${sig}`,
                subject: bufName, state: stateId, extra, details: [], locs: [...(e.loc ? [e.loc] : []), o.loc],
              });
              if (e.agent >= 0 && o.kind === 'tma' && o.bar >= 0 && barCta(o.bar) === p.agents[e.agent]!.cta && an.waitSlots[e.agent]!.get(o.bar) === undefined) {
                const bname = p.barrierName(o.bar);
                report({
                  kind: 'missing-wait', severity: 'error', key: `${bname}|${e.agent}`,
                  message: `${agentName(e.agent)} ${what} ${bufName}, which the TMA copy at line ${o.loc.line} fills with its completion on ${bname}, but ${agentName(e.agent)} never waits on ${bname}: nothing orders its access after the copy`,
                  subject: bname, state: stateId, extra, details: ['compute-sanitizer synccheck reports this as "missing wait".'], locs: [...(e.loc ? [e.loc] : []), o.loc],
                });
              }
            }
          }
          break;
        }
        case 'wait': {
          if (!e.pass) break;
          const slot = slotOf(e.agent, e.bar);
          if (slot < 0) break;
          const observed = e.phase - 1 - ((e.phase - 1 - e.parity) & 1);
          // History value: -2 (never passed), else ((observed + 1) << 13) | (pc << 1) | stale, where
          // stale marks a pass of the same wait instruction that re-observed the phase it saw last.
          const hv = h[slot]!;
          const last = hv === -2 ? -2 : (hv >> 13) - 1;
          const pc = s.agents[e.agent]!.pc & 0xfff;
          const stale = hv !== -2 && observed === last && ((hv >> 1) & 0xfff) === pc;
          const intent = last === -2 ? 0 : last + 1;
          if (observed < 0) {
            const bname = p.barrierName(e.bar);
            const info = p.barrierOf(e.bar).info;
            if (an.dataBarriers.has(info.name)) {
              report({
                kind: 'vacuous-wait', severity: 'warning', key: `${bname}|${locKey(e.loc)}`,
                message: `${agentName(e.agent)} passed wait(${bname}, parity ${e.parity}) without any phase completing: a fresh barrier passes parity 1 at once, but ${info.name} carries transaction bytes, so this wait was meant to wait for data`,
                subject: bname, state: stateId, extra, details: ['The producer-start idiom (parity 1 on a fresh empty barrier) is not reported: it is only reported on barriers that receive tx bytes.'], locs: [e.loc],
              });
            }
          } else if (Math.abs(observed - intent) >= 2 && !(observed > intent && skippedForOther(e.agent, e.bar, observed, h))) {
            errorFound = true;
            const bname = p.barrierName(e.bar);
            const msg = observed < intent
              ? `${agentName(e.agent)} passed wait(${bname}, parity ${e.parity}) on phase ${observed}, ${intent - observed} phases behind the phase ${intent} it was due to wait for (its previous pass saw phase ${last}): the parity matched an old phase, so the wait returned without the phase it needed`
              : `${agentName(e.agent)} passed wait(${bname}, parity ${e.parity}) on phase ${observed} while it was due to wait for phase ${intent}: the barrier completed ${observed - intent} phase(s) it never observed (parity aliasing)`;
            report({ kind: 'phase-alias', severity: 'error', key: `${bname}|${locKey(e.loc)}`, message: msg, subject: bname, state: stateId, extra, details: [], locs: [e.loc] });
          }
          if (stale) {
            // The same wait returned again on the phase it had consumed; if the barrier has already
            // begun its next phase (arrivals or bytes in), that next phase is what the wait was for.
            const b = t.bars[e.bar]!;
            if (b.status === 'valid' && (b.pending < b.expected || b.tx !== 0)) {
              errorFound = true;
              report(staleAlias(e.agent, e.bar, observed, e.parity, e.loc, stateId, extra, false));
            }
          }
          const hvNew = ((observed + 1) << 13) | (pc << 1) | (stale ? 1 : 0);
          if (h[slot] !== hvNew) {
            if (h === hist) h = hist.slice();
            h[slot] = hvNew;
          }
          break;
        }
        case 'phase': {
          if (!waitedKey[e.bar] && an.dataBarriers.has(p.barrierOf(e.bar).info.name)) {
            const bname = p.barrierName(e.bar);
            const copies = txSites(p, e.bar);
            errorFound = true;
            report({
              kind: 'missing-wait', severity: 'error', key: `${bname}|never`,
              message: `phase ${e.completed} of ${bname} completed, but no thread of its CTA ever waits on ${bname}: the data its copies deliver is never acquired, so nothing orders a reader after them`,
              subject: bname, state: stateId, extra, details: ['compute-sanitizer synccheck reports this as "missing wait".', ...copies.map((x) => `bytes registered at line ${x.loc.line}: ${x.text}`)],
              locs: copies.map((x) => x.loc),
            });
          }
          if (cghosts !== null) {
            for (let g = 0; g < cghosts.length; g++) {
              const cl = cghosts[g];
              if (!cl) continue;
              let hit = false;
              for (let i = 0; i < cl.length; i += 2) if (cl[i] === e.bar) hit = true;
              if (!hit) continue;
              const keep: number[] = [];
              for (let i = 0; i < cl.length; i += 2) if (cl[i] !== e.bar) keep.push(cl[i]!, cl[i + 1]!);
              if (cghosts === x.cghosts) cghosts = cghosts.slice();
              cghosts[g] = keep.length ? keep : null;
            }
            for (let g = 0; g < pcm.length; g++) {
              const l = pcm[g];
              if (!l || !l.includes(e.bar)) continue;
              if (pcm === x.pcm) pcm = pcm.slice();
              const keep = l.filter((b) => b !== e.bar);
              pcm[g] = keep.length ? keep : null;
            }
          }
          if (tghosts) {
            const keep: number[] = [];
            for (let i = 0; i < tghosts.length; i += 2) if (tghosts[i] !== e.bar) keep.push(tghosts[i]!, tghosts[i + 1]!);
            tghosts = keep.length ? keep : null;
          }
          let left = 0;
          for (const o of t.inflight) if (o.kind === 'tma' && o.bar === e.bar && o.left > 0) left += o.left;
          if (left > 0) {
            const locs: SrcLoc[] = [];
            for (const o of t.inflight) if (o.kind === 'tma' && o.bar === e.bar && o.left > 0) locs.push(o.loc);
            const bname = p.barrierName(e.bar);
            errorFound = true;
            const sites = txSites(p, e.bar);
            report({
              kind: 'tx-mismatch', severity: 'error', key: `${bname}|early`,
              message: `phase ${e.completed} of ${bname} completed while copies in flight still carry ${left} bytes for it: the phase expected fewer bytes than its copies deliver, and the rest will be charged to phase ${e.completed + 1}`,
              subject: bname, state: stateId, extra, details: sites.map((x) => `bytes registered at line ${x.loc.line}: ${x.text}`), locs: [...sites.map((x) => x.loc), ...locs],
            });
          }
          break;
        }
        default:
          break;
      }
    }
    // Ghosts: a completed tcgen05.mma keeps its accesses until a later commit of its issuer lands.
    if (c.kind === 'async') {
      const o = m.findAsync(s, c.id);
      const done = o !== undefined && m.findAsync(t, c.id) === undefined;
      if (o && o.kind === 'tc.mma' && done) {
        // Its accesses (opAccesses: the accumulator written, the operands read), merged into the sorted set.
        const old = ghosts[o.agent];
        const merged = old ? old.slice() : [];
        if (o.buf >= 0) insertSorted(merged, o.buf * 2 + 1);
        if (o.reads) for (let i = 0; i < o.reads.length; i++) insertSorted(merged, o.reads[i]! * 2);
        ghosts = ghosts.slice();
        ghosts[o.agent] = merged;
      } else if (o && o.kind === 'tma' && tmaGhost === o.id && done) {
        // A copy that landed under the reduction (its phase still open): keep its write visible.
        const pairs: number[] = [];
        if (tghosts) for (let i = 0; i < tghosts.length; i += 2) pairs.push(tghosts[i]!, tghosts[i + 1]!);
        pairs.push(o.bar, o.buf);
        const idx: number[] = [];
        for (let i = 0; i < pairs.length; i += 2) idx.push(i);
        idx.sort((u, v) => pairs[u]! - pairs[v]! || pairs[u + 1]! - pairs[v + 1]!);
        const sorted: number[] = [];
        for (const i of idx) if (!(sorted.length && sorted[sorted.length - 2] === pairs[i] && sorted[sorted.length - 1] === pairs[i + 1])) sorted.push(pairs[i]!, pairs[i + 1]!);
        // If the landing itself completed the phase, the 'phase' event above already ran: no ghost then.
        if (t.bars[o.bar]!.phase === s.bars[o.bar]!.phase) tghosts = sorted;
      } else if (o && o.kind === 'tc.commit' && done) {
        const g = o.agent;
        const completed = o.targets !== null || t.bars[o.bar]!.phase !== s.bars[o.bar]!.phase;
        const mma = ghosts[g]?.filter((v) => !(v & EG));
        if (mma && mma.length) {
          if (!completed && an.commitOnly) {
            // The commit arrived but its phase is still open: the MMA's accesses stay unordered until it completes.
            let pairs = cghosts[g] ? cghosts[g]!.slice() : [];
            for (const v of mma) pairs = insertPair(pairs, o.bar, v);
            if (cghosts === x.cghosts) cghosts = cghosts.slice();
            cghosts[g] = pairs;
          }
          const keep = ghosts[g]!.filter((v) => v & EG);
          ghosts = ghosts.slice();
          ghosts[g] = keep.length ? keep : null;
        }
      }
      if (o && done && (o.kind === 'bulk.store' || o.kind === 'wgmma') && multiWarp[o.agent]) {
        // Completed, not yet retired by a wait_group of the issuer (see EG).
        const tag = EG | (o.kind === 'wgmma' ? EG_WG : 0);
        const merged = ghosts[o.agent] ? [...ghosts[o.agent]!] : [];
        for (const ac of opAccesses(o)) {
          const v = tag | (ac.buf * 2 + (ac.rw === 'w' ? 1 : 0));
          if (!merged.includes(v)) merged.push(v);
        }
        merged.sort((u, v) => u - v);
        if (ghosts === x.ghosts) ghosts = ghosts.slice();
        ghosts[o.agent] = merged;
      }
      // A forced commit landing stays postponable until its phase completes or a later commit of its
      // issuer lands as an explored step (commits land in issue order). A tcgen05.mma completion is
      // itself always taken alone (a ghost), so it proves nothing about the commits before it.
      if (o && o.kind === 'tc.commit' && done) {
        const g = o.agent;
        const l = pcm[g];
        if (commitGhost === o.id) {
          if (!l || !l.includes(o.bar)) {
            if (pcm === x.pcm) pcm = pcm.slice();
            pcm[g] = l ? [...l, o.bar].sort((u, v) => u - v) : [o.bar];
          }
        } else if (l) {
          if (pcm === x.pcm) pcm = pcm.slice();
          pcm[g] = null;
        }
      }
    } else if (anyMultiWarp && multiWarp[c.agent] && (ghosts[c.agent] || allThreadAccess[p.agents[c.agent]!.role])) {
      // wait_group retires the completed ops of its kind: for every thread, or for the elected one only.
      const a = c.agent;
      const ins = m.nextOp(s, a);
      const cls = ins ? OPS[ins.opc]!.sync : null;
      if (cls === 'acquire' && allThreadAccess[p.agents[a]!.role]) {
        const k = keyOf(ins!.bar!, s.agents[a]!.frame);
        const passed = events.some((ev) => ev.e === 'wait' && ev.pass && ev.agent === a);
        if (k >= 0 && passed) {
          const v = EG | EG_ELECT | EG_MB | k;
          const old = ghosts[a] ?? [];
          const has = old.includes(v);
          if (ins!.per === 'one' ? !has : has) {
            const next = ins!.per === 'one' ? [...old, v].sort((u, w) => u - w) : old.filter((w) => w !== v);
            if (ghosts === x.ghosts) ghosts = ghosts.slice();
            ghosts[a] = next.length ? next : null;
          }
        }
      } else if (ghosts[a] && (cls === 'barrier' || (cls === 'group-wait' && ins!.opc !== OPC_CP_WAIT))) {
        // (cp.async.wait_group orders only cp.async, which leaves no ghosts.)
        // A group wait retires its own family's ghosts (wgmma or bulk stores); a barrier synchronizes the role's threads.
        const kind = OPS[ins!.opc]!.family === 'wgmma' ? EG_WG : 0;
        const next: number[] = [];
        for (const v of ghosts[a]!) {
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
        const old = ghosts[a]!;
        if (next.length !== old.length || next.some((v, i) => v !== old[i])) {
          if (ghosts === x.ghosts) ghosts = ghosts.slice();
          ghosts[a] = next.length ? next : null;
        }
      }
    }
    if (remoteArrives && c.kind === 'agent') {
      const ins = m.nextOp(s, c.agent);
      if (ins && ins.op.op === 'mbarrier.arrive' && ins.op.sem !== 'relaxed' && ins.op.scope !== 'cluster') {
        const k = keyOf(ins.bar!, s.agents[c.agent]!.frame);
        const info = p.agents[c.agent]!;
        if (k >= 0 && barCta(k) !== info.cta && (ins.op.scope === 'cta' || strict)) {
          const bname = p.barrierName(k);
          const explicit = ins.op.scope === 'cta';
          if (explicit) errorFound = true;
          report({
            kind: 'scope', severity: explicit ? 'error' : 'warning', key: `${bname}|${locKey(ins.loc)}`,
            message: explicit
              ? `${agentName(c.agent)} arrives on ${bname}, a barrier of another CTA, with .release.cta: a release at CTA scope does not order ${agentName(c.agent)}'s earlier memory accesses for the threads of the other CTA that wait on ${bname}; write mbarrier.arrive.release.cluster`
              : `${agentName(c.agent)} arrives on ${bname}, a barrier of another CTA, without a scope: PTX's default is .cta, which does not order its earlier memory accesses for the other CTA's waiters; write mbarrier.arrive.release.cluster (strict rule)`,
            subject: bname, state: stateId, extra,
            details: ['PTX ISA §9.7.13.15.13 (.scope defaults to .cta), §8.8–8.9 (morally strong release/acquire needs a scope that includes both threads); CUTLASS, https://github.com/NVIDIA/cutlass/issues/3643.'],
            locs: [ins.loc],
          });
        }
      }
    }
    // inflight-at-exit: a CTA whose agents all stopped running with operations in flight into it.
    const mayExit = c.kind === 'agent' && (t.agents[c.agent]!.status !== 'run' || out.issued.length > 0);
    if (mayExit) for (let cta = 0; cta < p.ctas; cta++) {
      const ags = ctaAgents[cta]!;
      if (!ags.length) continue;
      let live = false;
      for (let i = 0; i < ags.length && !live; i++) if (t.agents[ags[i]!]!.status === 'run') live = true;
      if (live) continue;
      let wasLive = false;
      for (let i = 0; i < ags.length; i++) if (s.agents[ags[i]!]!.status === 'run') wasLive = true;
      const fresh = !wasLive ? out.issued : t.inflight;
      if (!wasLive && !fresh.length) continue;
      for (const o of fresh) {
        const hit = (o.bar >= 0 && barCta(o.bar) === cta) || (o.buf >= 0 && bufCta(o.buf) === cta) || (o.kind === 'tma' && o.cta === cta)
          || (o.reads?.some((r) => bufCta(r) === cta) ?? false) || (o.targets?.some((k) => barCta(k) === cta) ?? false);
        if (!hit) continue;
        const ctaName = ctaLabel(cta);
        const target = o.bar >= 0 ? p.barrierName(o.bar) : o.buf >= 0 ? p.bufferName(o.buf) : o.targets ? o.targets.map((k) => p.barrierName(k)).join(', ') : '';
        if (o.kind === 'bulk.store') {
          report(storeAtExit(o, ctaName, target, stateId, extra));
          continue;
        }
        errorFound = true;
        report({
          kind: 'inflight-at-exit', severity: 'error', key: `${cta}|${o.agent}`,
          message: `every agent of ${ctaName} has exited while a ${kindLabel(o.kind)} issued by ${agentName(o.agent)} (line ${o.loc.line})${target ? ` into ${target}` : ''} is still in flight: it writes or signals memory of a CTA that no longer exists`,
          subject: target || null, state: stateId, extra, details: [], locs: [o.loc],
        });
      }
      // TMA landings the reduction took early whose phase is still open: in
      // the schedule where they land after this exit, they are in flight into a finished CTA.
      if (tghosts && wasLive) for (let i = 0; i < tghosts.length; i += 2) {
        const b = tghosts[i]!;
        if (barCta(b) !== cta) continue;
        errorFound = true;
        const ctaName = ctaLabel(cta);
        const bname = p.barrierName(b);
        const what = `a TMA copy into ${p.bufferName(tghosts[i + 1]!)}`;
        report({
          kind: 'inflight-at-exit', severity: 'error', key: `${cta}|ghost${b}`,
          message: `every agent of ${ctaName} has exited while the phase of ${bname} that ${what} signals has not completed: nothing waited for it, so in some schedule it is still in flight into a CTA that no longer exists`,
          subject: bname, state: stateId, extra, details: [], locs: [],
        });
      }
      for (let g = 0; g < pcm.length; g++) for (const b of pcm[g] ?? []) {
        if (barCta(b) !== cta || !wasLive) continue;
        errorFound = true;
        const ctaName = ctaLabel(cta);
        const bname = p.barrierName(b);
        report({
          kind: 'inflight-at-exit', severity: 'error', key: `${cta}|${g}|${b}`,
          message: `every agent of ${ctaName} has exited while a tcgen05.commit issued by ${agentName(g)} into ${bname} may still be in flight (nothing has waited for the phase it arrives in): it arrives on a barrier of a CTA that no longer exists`,
          subject: bname, state: stateId, extra, details: [], locs: [],
        });
        // In the schedule where that commit is still in flight, so are the MMAs it covers (they
        // complete before it): their accumulators, as for an MMA in flight at the exit.
        const cg = cghosts[g];
        if (cg) for (let i = 0; i < cg.length; i += 2) {
          if (cg[i] !== b || !(cg[i + 1]! & 1) || bufCta(cg[i + 1]! >> 1) !== cta) continue;
          const acc = p.bufferName(cg[i + 1]! >> 1);
          report({
            kind: 'inflight-at-exit', severity: 'error', key: `${cta}|${g}|${acc}`,
            message: `every agent of ${ctaName} has exited while a tcgen05.mma issued by ${agentName(g)} into ${acc} may still be in flight (the tcgen05.commit into ${bname} that covers it has not been waited for): in some schedule that MMA is still writing the CTA's memory`,
            subject: acc, state: stateId, extra, details: [], locs: [],
          });
        }
      }
      for (let g = 0; g < ghosts.length; g++) {
        const gl = ghosts[g];
        if (!gl || !wasLive) continue;
        const bufs = gl.filter((v) => !(v & EG) && bufCta(v >> 1) === cta).map((v) => p.bufferName(v >> 1));
        if (!bufs.length) continue;
        errorFound = true;
        const ctaName = ctaLabel(cta);
        // The subject is the accumulator each such MMA writes, as for an MMA still in flight.
        const accs = new Set(gl.filter((v) => !(v & EG) && v & 1).map((v) => p.bufferName(v >> 1)));
        for (const acc of accs.size ? accs : [bufs[0]!]) report({
          kind: 'inflight-at-exit', severity: 'error', key: `${cta}|${g}`,
          message: `every agent of ${ctaName} has exited while no tcgen05.commit has signalled the completion of a tcgen05.mma issued by ${agentName(g)} on ${[...new Set(bufs)].join(', ')}: in some schedule that MMA is still reading or writing the CTA's memory`,
          subject: acc, state: stateId, extra, details: [], locs: [],
        });
      }
    }
    const y = h === hist && ghosts === x.ghosts && tghosts === x.tghosts && cghosts === x.cghosts && pcm === x.pcm ? x : { ...x, hist: h, ghosts, tghosts, cghosts, pcm };
    const z = an.trackProxy || an.manualCount ? fences(s, t, c, y, stateId) : y;
    return relaxed ? relaxed(s, t, c, events, z, stateId) : z;
  };

  /** The memory-model detector (relaxed arrives and waits, scoped acquires), or null when the kernel has none. */
  const relaxed = relaxedDetector(p, m, (h) => {
    if (h.severity === 'error') errorFound = true;
    report(h);
  }, LAZY);

  /** Id of the TMA op whose landing the reduction is taking alone (its write becomes a ghost), or -1. */
  let tmaGhost = -1;
  /** Id of the tcgen05.commit whose landing the reduction is taking alone, or -1. */
  let commitGhost = -1;

  const hangCheck = (s: MachineState, id: number, x: Extra) => {
    const hr = explainHang(m, s, (a, bar) => {
      const slot = an.waitSlots[a]!.get(bar);
      return slot !== undefined && x.hist[slot] !== -2;
    }, (a, bar) => {
      const slot = an.waitSlots[a]!.get(bar);
      const v = slot === undefined ? -2 : x.hist[slot]!;
      return v === -2 ? null : (v >> 13) - 1;
    });
    errorFound = true;
    // In the key (agents in index order), a member of a symmetry group stands for its group, so
    // hangs that differ only by which interchangeable warps or instances are blocked are one.
    const waiters = [...hr.waiters].sort((u, v) => u.agent - v.agent);
    const blocked = hr.waiters.map((w) => `${w.name} in ${w.op}`).join('; ');
    const first = hr.waiters[0];
    const symId = (a: number) => (an.groupOf[a]! >= 0 ? `g${an.groupOf[a]}` : String(a));
    report({
      kind: 'hang', severity: 'error', key: [...new Set(waiters.map((w) => `${symId(w.agent)}:${locKey(w.loc)}`))].sort().join(','),
      message: `no agent or asynchronous unit can make progress: ${blocked}`,
      subject: first?.subject ?? null, state: id, extra: [],
      details: [...hr.waiters.map((w) => `${w.name} blocked in ${w.op} (line ${w.loc.line}): ${w.reasons.join('; ')}`), ...(hr.cycle ? [`wait-for cycle: ${hr.cycle.join(' → ')}`] : [])],
      locs: hr.waiters.map((w) => w.loc),
    });
    if (hr.cycle) {
      // The hang is a wait-for cycle: each agent waits for a signal that only the next can give.
      const inCycle = hr.waiters.filter((w) => hr.cycle!.includes(w.name));
      const start = inCycle.find((w) => w.subject) ?? inCycle[0];
      report({
        kind: 'cycle', severity: 'error', key: hr.cycle.slice().sort().join(','),
        message: `wait-for cycle: ${hr.cycle.join(' → ')}: ${inCycle.map((w) => `${w.name} waits in ${w.op}${w.barName ? ` on ${w.barName}` : ''}`).join('; ')}, and each signal it waits for comes only from the next agent in the cycle`,
        subject: start?.subject ?? null, state: id, extra: [], details: [], locs: inCycle.map((w) => w.loc),
      });
    }
    for (const w of hr.waiters) {
      if (w.kind !== 'mbarrier' || !w.state || w.state.tx === 0) continue;
      const inflightBytes = s.inflight.filter((o) => o.kind === 'tma' && o.bar === w.bar).reduce((n, o) => n + o.left, 0);
      if (w.state.tx > 0 && inflightBytes >= w.state.tx) continue;
      report({
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
    }
  };

  /**
   * At the end of an execution (or a hang): a wait that re-observed the phase it had already
   * returned for (stale history bit) while its barrier went on to complete the next phase, which the
   * waiter never observed (Triton, https://github.com/facebookexperimental/triton/pull/3420).
   */
  const staleAtEnd = (s: MachineState, x: Extra, id: number) => {
    for (let a = 0; a < p.agents.length; a++) {
      for (const [bar, slot] of an.waitSlots[a]!) {
        const v = x.hist[slot]!;
        if (v === -2 || !(v & 1)) continue;
        const observed = (v >> 13) - 1;
        if (s.bars[bar]!.phase <= observed + 1) continue;
        const ins = insAt(a, (v >> 1) & 0xfff);
        if (!ins || ins.i !== 'op') continue;
        errorFound = true;
        report(staleAlias(a, bar, observed, observed & 1, ins.loc, id, [], true));
      }
    }
  };

  /** Co-enabled conflicting generic accesses in a state (`race`): the detector of `co-enabled.ts`. */
  const coEnabled = coEnabledDetector(p, agentCode, (h) => {
    errorFound = true;
    report(h);
  });

  /** The actor of choice `c` in `s`: the agent, or the issuer of the asynchronous operation. */
  const actorOf = (s: MachineState, c: Choice): number => (c.kind === 'agent' ? c.agent : m.findAsync(s, c.id)!.agent);
  /** `s` after choice `c` (a fresh partial copy; `s` is left unchanged); `opIdx`: the index of `c`'s op in `s.inflight`, when known. */
  const succ = (s: MachineState, c: Choice, who: number, opIdx = -1): MachineState => {
    if (c.kind === 'async' && opIdx < 0) {
      const fl = s.inflight;
      for (let i = 0; i < fl.length; i++) if (fl[i]!.id === c.id) {
        opIdx = i;
        break;
      }
    }
    if (verifyHash) freezeShared(s);
    const t = cloneFor(s, who, opIdx, an.usesNamed, m.barTouched(s, c), usesCluster);
    m.apply(t, c, out, undefined, true);
    transitions++;
    return t;
  };

  /** Shared choice objects of the forced steps: agent a; async op id (small ids). */
  const agentChoice: Choice[] = p.agents.map((_, a) => Object.freeze({ kind: 'agent' as const, agent: a }));
  const asyncChoice: Choice[] = [];
  const asyncChoiceOf = (id: number): Choice => (id < 4096 ? (asyncChoice[id] ??= Object.freeze({ kind: 'async' as const, id })) : { kind: 'async', id });

  /**
   * The reduction's single forced step from `s`, if any: an agent's local or issue step (not ending
   * the agent), a tcgen05.mma completion, or a TMA landing that cannot complete its phase. The
   * candidates are tried in the order of {@link Machine.enabled} (agents by index, then in-flight
   * operations in issue order), scanning the state directly: a local or issue step is enabled
   * exactly when its agent runs, so the wait operands of the other agents are never evaluated.
   */
  /**
   * The agents in the state's canonical order: agents outside symmetry groups by index, then each
   * group's members by record hash (`rh`). A state and its permutations by symmetry hash alike; the
   * forced step must be chosen alike in them too, or the states stored would depend on which
   * representative the search met first.
   */
  const canonOrder = new Int32Array(p.agents.length);
  const plainAgents = p.agents.map((a) => a.id).filter((a) => an.groupOf[a]! < 0);
  const agentOrder = (rh: Int32Array | null): Int32Array => {
    let k = 0;
    for (const a of plainAgents) canonOrder[k++] = a;
    for (const g of an.groups) {
      if (rh) sortByRecord(g.agents, rh, canonOrder, k);
      else canonOrder.set(g.agents, k);
      k += g.agents.length;
    }
    return canonOrder;
  };

  /** Stable waits are forced steps (stable.ts); off with `stableWaits: false`. */
  const stableOn = opts.stableWaits !== false;
  const isStable = (s: MachineState, a: number, ins: OpInstr, f: number[]): boolean => {
    const w = ins.op as Extract<OpInstr['op'], { op: 'mbarrier.wait' }>;
    if (w.dest !== undefined || w.token !== undefined || !ins.ints.parity) return false;
    const key = keyOf(ins.bar!, f);
    if (key < 0 || barCta(key) !== p.agents[a]!.cta) return false;
    let par: number;
    try {
      par = ins.ints.parity(f);
    } catch {
      return false;
    }
    return stableWait(p, agentCode, s, a, key, par);
  };

  const isStableArrive = (s: MachineState, a: number, ins: OpInstr, key: number, f: number[]): boolean => {
    const op = ins.op as Extract<OpInstr['op'], { op: 'mbarrier.arrive' }>;
    if (op.expectTx || op.drop || op.noComplete || op.token !== undefined) return false;
    let count: number;
    try {
      count = (ins.ints.count ? ins.ints.count(f) : 1) * perThreads(ins.per, p.agents[a]!);
    } catch {
      return false;
    }
    return stableArrive(p, agentCode, s, a, key, count);
  };

  const isStableNamed = (s: MachineState, a: number, ins: OpInstr, f: number[]): boolean => {
    const info = p.agents[a]!;
    let key: number;
    let count: number;
    try {
      const id = ins.ints.id!(f);
      if (id < 0 || id > 15) return false;
      key = info.cta * NAMED_PER_CTA + id;
      count = ins.ints.threads ? ins.ints.threads(f) : m.ctaThreads[info.cta]!;
    } catch {
      return false;
    }
    if (!(count >= 32) || count % 32 !== 0) return false;
    return stableNamedArrive(p, agentCode, s, a, key, 32 * (ins.per === 'one' ? 1 : info.warps), count);
  };

  const forced = (s: MachineState, x: Extra, id: number, prefix: Choice[], rh: Int32Array | null = null): { t: MachineState; nx: Extra; c: Choice; who: number } | null => {
    if (s.trapped) return null;
    const ags = s.agents;
    const order = an.groups.length ? agentOrder(rh) : null;
    for (let k = 0; k < ags.length; k++) {
      const a = order ? order[k]! : k;
      const ag = ags[a]!;
      if (ag.status !== 'run') continue;
      const pc = ag.pc;
      const ins = agentCode[a]![pc]!;
      if (ins.i !== 'op') continue;
      if (m.gated && !m.agentEnabled(s, a)) continue; // a cluster not resident yet (machine/values.ts)
      if (agentPor[a]![pc] === 'sync') {
        // A sync step, except an arrive on another CTA's barrier (it only starts a remote signal)
        // and a stable wait (stable.ts: it passes, and nothing reaches its barrier before it moves).
        if (ins.opc === OPC_WAIT) {
          if (!stableOn || multiWarp[a] || !isStable(s, a, ins, ag.frame)) continue;
        } else if (ins.opc === OPC_WG_WAIT || ins.opc === OPC_BULK_WAIT || ins.opc === OPC_CP_WAIT) {
          // Once its groups are complete they stay complete: an enabled wait_group cannot be
          // disabled and only reads, so it commutes with every other step. (Not for an agent of
          // several warps in lockstep: its wait_group retires elected-thread ghosts, see EG.)
          if (!stableOn || multiWarp[a] || !m.agentEnabled(s, a)) continue;
        } else if (ins.opc === OPC_BAR_SYNC || ins.opc === OPC_BAR_ARRIVE) {
          // The second step of a bar.sync once its generation completed (it stays enabled and only
          // moves its agent), or a stable arrival (stable.ts).
          if (!stableOn || multiWarp[a]) continue;
          if (ins.opc === OPC_BAR_SYNC && ag.sub >= 0) {
            if (!m.agentEnabled(s, a)) continue;
          } else if (!isStableNamed(s, a, ins, ag.frame)) continue;
        } else {
          if (ins.opc !== OPC_ARRIVE) continue;
          const key = keyOf(ins.bar!, ag.frame);
          if (key < 0) continue;
          // A local arrive is forced when it is stable (stable.ts: the phase still needs it after
          // everything the others can bring first).
          if (barCta(key) === p.agents[a]!.cta && (!stableOn || multiWarp[a] || !isStableArrive(s, a, ins, key, ag.frame))) continue;
        }
      }
      const c = agentChoice[a]!;
      const t = succ(s, c, a);
      if (t.agents[a]!.status !== 'run') continue; // exits are visible
      const nx = checkTransition(s, t, c, out.events!, x, id, prefix);
      return { t, nx, c, who: a };
    }
    // In-flight ops by issuer, each issuer's in issue order: the canonical order of the state
    // encoding. (The list's order across issuers depends on the path that reached the state, and
    // the forced step taken must not: else the states stored would depend on the search order.)
    const fl = s.inflight;
    const nA = fl.length ? ags.length : 0;
    for (let k = 0; k < nA; k++) for (let i = 0; i < fl.length; i++) {
      const a = order ? order[k]! : k;
      const o = fl[i]!;
      if (o.agent !== a) continue;
      if (o.kind === 'tma') {
        // A landing that cannot complete its phase (all arrivals in, bytes still missing after it, and
        // only copies can change the tx-count) commutes with everything; its write stays visible as a ghost.
        const b = s.bars[o.bar];
        if (!b || b.status !== 'valid') continue;
        // Arrivals still missing: the landing is postponed instead (see postponable), never forced.
        if (b.pending > 0) continue;
        if (directTxKey[o.bar]) continue;
        const chunk = nextCredit(o);
        if (b.tx - chunk <= 0) continue;
        let remote = false;
        for (const y of fl) if (y.kind === 'remote' && y.bar === o.bar) remote = true;
        if (remote) continue;
        // The order of the landings on this barrier matters only if some of them, landing first,
        // can bring tx to exactly 0 (an early completion): then every order must be explored.
        if (!landingsCommute(s, o.bar, b.tx)) continue;
        tmaGhost = o.id;
      } else if (o.kind === 'tc.commit') {
        // A commit arriving on a commit-only barrier without completing its phase (see docs/CHECK.md).
        if (o.seq !== ags[o.agent]!.tcDone) continue; // not enabled: tcgen05 ops complete in issue order
        if (!an.commitOnly || o.targets || o.bar < 0) continue;
        const b = s.bars[o.bar]!;
        if (b.status !== 'valid' || b.pending < 2 || !commitOnlyKey[o.bar]) continue;
        commitGhost = o.id;
      } else if (o.kind === 'tc.mma') {
        if (o.seq !== ags[o.agent]!.tcDone) continue; // not enabled
        // With managed TMEM a dealloc may race the MMA: its completion is explored in every order.
        if (an.tmemManaged) continue;
      } else continue;
      const c = asyncChoiceOf(o.id);
      const t = succ(s, c, o.agent, i);
      const nx = checkTransition(s, t, c, out.events!, x, id, prefix);
      tmaGhost = -1;
      commitGhost = -1;
      return { t, nx, c, who: o.agent };
    }
    return null;
  };

  /**
   * Updates the record hashes after a step of `who` from `s` to `t` (checker data `px` to `nx`):
   * the actor's record, the records of agents whose commit ghosts or pending commits a phase
   * completion cleared, and the barrier sum.
   */
  const rehash = (s: MachineState, t: MachineState, px: Extra, nx: Extra, who: number, rh: Int32Array) => {
    codec.barSum(s, t, rh);
    codec.record(t, nx, who, rh);
    if (nx.cghosts === px.cghosts && nx.pcm === px.pcm && nx.ru === px.ru) return;
    for (let a = 0; a < p.agents.length; a++) if (a !== who && (nx.cghosts[a] !== px.cghosts[a] || nx.pcm[a] !== px.pcm[a] || nx.ru[a] !== px.ru[a])) codec.record(t, nx, a, rh);
  };

  /** Recomputes one record hash and checks it against the full hash (tests: `verifyHash`). */
  const verify = (t: MachineState, nx: Extra, rh: Int32Array) => {
    const full = new Int32Array(rh.length);
    codec.records(t, nx, full);
    for (let i = 0; i < rh.length; i++) if (full[i] !== rh[i]) throw new Error(`checker: incremental ${i < rh.length - 2 ? `record hash of agent ${i >> 1}` : 'barrier hash'} differs from the full hash`);
  };

  /**
   * Applies forced steps to `t` until none is left, then stores the state reached (chain from
   * `parentId`). `rh` holds `t`'s record hashes and is owned by this call.
   */
  const closeAndStore = (t: MachineState, nx: Extra, rh: Int32Array, parentId: number, chain: Choice[], next: StateBuf) => {
    if (abortBy) return;
    // One expansion can have thousands of large successors: the clock and memory are checked here too.
    const b = gov.tick();
    if (b !== null) {
      abortBy = stopOf(b);
      return;
    }
    for (let guard = 0; ; guard++) {
      // A long chain (a loop without synchronization) fills the visited table on its own: keep to the bounds.
      if ((guard & 4095) === 4095 && (boundHit(next) || abortBy)) return;
      // Each forced step can cost a scan of every agent (and stable-wait questions): the clock is
      // consulted through the governor's adaptive tick inside long chains too.
      if (guard > 0) {
        const gb = gov.tick();
        if (gb !== null) {
          abortBy = stopOf(gb);
          return;
        }
      }
      if (verifyHash) verify(t, nx, rh);
      codec.combine(t, nx, rh, hbuf);
      // Claimed before its successors are computed (one probe; in a parallel search exactly one
      // worker goes on from it); false: reached before (as a stored or an intermediate state).
      if (!visited.add(hbuf[0]!, hbuf[1]!)) return;
      const f = usePor && guard < 100_000 ? forced(t, nx, parentId, chain, rh) : null;
      if (!f) break;
      // Intermediate state: remembered (so other paths stop here) but never stored or expanded.
      intermediates++;
      coEnabled(t, parentId, chain);
      if (f.t.trapped) return; // the diagnostic was reported; the kernel stops
      const px = nx;
      const pt = t;
      t = f.t;
      nx = f.nx;
      chain.push(f.c);
      rehash(pt, t, px, nx, f.who, rh);
    }
    const nid = par ? par.store(parentId, chain) : addState(parentId, chain);
    codec.encode(t, nx, next, nid, rh);
  };

  /** The bound a long forced chain ran into (checked inside chains and between expansions), or null. */
  let abortBy: ExploreResult['stoppedBy'] = null;
  const boundHit = (next: StateBuf): boolean => {
    if (!par) gov.estimate = memEst = visited.bytes + parent.byteLength + chainOff.byteLength + chainData.byteLength + cur.bytes + next.bytes;
    // Table growths ask the governor first (growthGuard); here the clock, memory and the other workers' stop.
    const b = gov.check();
    if (b !== null) abortBy = stopOf(b);
    return abortBy !== null;
  };

  const rhCur = new Int32Array(codec.rhLength());
  const rhSucc = new Int32Array(codec.rhLength());
  const skip = new Uint8Array(p.agents.length);
  /**
   * Postponed landings (docs/CHECK.md, "Postponed landings"): a TMA landing on a barrier whose
   * phase still misses arrivals (pending > 0) is explored only after the other enabled steps, and
   * only if one of them completes that barrier's phase (or re-initializes it, or is a wait on it,
   * or brings its pending count to 0), or if nothing else is enabled. While pending > 0 no landing
   * completes the phase, so a landing moved later changes nothing a step observes except that its
   * bytes stay in flight longer (more overlap, never less): unless that step is the one that brings
   * pending to 0, which completes the phase in one order and not in the other, which is why both
   * orders are explored then. A landing that could underflow the tx range is never postponed, nor
   * one on a barrier that cp.async.mbarrier.arrive signals (conservative). A remote arrive is
   * postponed while it cannot complete the phase by itself, even with every other remote arrive in
   * flight to that barrier (pending > the sum of their counts). Returns the barrier key, or -1;
   * `postTh[i]` gets the pending count at or below which another step orders against the landing
   * of choice `i` (0 for a TMA landing, that sum for a remote arrive).
   */
  const postponedBar = (s: MachineState, c: Choice, i: number): number => {
    if (c.kind !== 'async') return -1;
    const o = m.findAsync(s, c.id);
    if (!o || o.bar < 0 || cpaKey[o.bar]) return -1;
    const b = s.bars[o.bar];
    if (b === undefined || b.status !== 'valid') return -1;
    if (o.kind === 'tma') {
      postTh[i] = 0;
      return b.pending > 0 && b.tx - nextCredit(o) > TX_FLOOR ? o.bar : -1;
    }
    if (o.kind === 'remote' && o.remote === 'arrive') {
      // Its issuer waiting at barrier.cluster.arrive (enabled once the issuer's remote signals have
      // landed): the landing enables that step, so it is not independent of the others: explored
      // in every order.
      const ag = s.agents[o.agent]!;
      if (ag.status === 'run') {
        const ins = agentCode[o.agent]![ag.pc]!;
        if (ins.i === 'op' && ins.opc === OPC_CLUSTER_ARRIVE) return -1;
      }
      // Every remote arrive in flight to the barrier together: while they cannot complete the
      // phase (or over-arrive) even all landing at once, none of them can.
      let sum = 0;
      for (const y of s.inflight) if (y.kind === 'remote' && y.remote === 'arrive' && y.bar === o.bar) sum += y.count;
      postTh[i] = sum;
      return b.pending > sum ? o.bar : -1;
    }
    return -1;
  };
  /** Per enabled choice of the state being expanded: the barrier its landing is postponed on, or -1. */
  let postBar = new Int32Array(16);
  /** Per enabled choice: the pending count of `postBar`'s barrier at or below which a step conflicts. */
  let postTh = new Int32Array(16);
  /** Per enabled choice: 1 when a step of the state being expanded conflicts with its postponed landing. */
  let postHit = new Uint8Array(16);
  /**
   * True when step `c` from `s` to `t` orders against a postponed landing on barrier `k` whose
   * conflict threshold is `th` (see postponedBar): it changes the phase or the status, leaves at
   * most `th` arrivals pending (in one order the landing completes the phase or over-arrives, in the
   * other the step does), or is a wait on `k` that passes now.
   */
  const conflictsWith = (s: MachineState, t: MachineState, c: Choice, k: number, th: number): boolean => {
    // A step that traps ends every schedule: a landing postponed past it would never be seen.
    if (t.trapped) return true;
    const a = s.bars[k]!;
    const b = t.bars[k]!;
    // The step that brings pending to the threshold completes the phase in one order of it and the
    // landing and not in the other (and its diagnostics, e.g. a .noComplete arrive that completes, differ).
    if (a.phase !== b.phase || a.status !== b.status || b.pending <= th) return true;
    if (c.kind !== 'agent') return false;
    // A wait passing now (on an older phase) observes whether the current phase has begun (phase-alias).
    const ag = s.agents[c.agent]!;
    const ins = agentCode[c.agent]![ag.pc]!;
    if (ins.i !== 'op' || OPS[ins.opc]!.sync !== 'acquire') return false;
    try {
      return ins.bar!(ag.frame) === k;
    } catch {
      return false; // the wait faults evaluating its operand (the step reports it)
    }
  };
  const expand = (s: MachineState, x: Extra, id: number, next: StateBuf) => {
    const ch = m.enabled(s);
    if (ch.length === 0) {
      opts.onTerminal?.(s);
      staleAtEnd(s, x, id);
      let running = false;
      for (const a of s.agents) if (a.status === 'run') running = true;
      if (running) hangCheck(s, id, x);
      else terminalOk++;
      return;
    }
    coEnabled(s, id, []);
    // rhCur: the record hashes stored with the state (decode).
    if (verifyHash) verify(s, x, rhCur);
    // Symmetry: of interchangeable agents whose records are equal, only the first is expanded (the
    // others' successors are permutations of its successors, which hash to the same states).
    if (useSym) for (const g of an.groups) {
      const ags = g.agents;
      for (let i = 0; i < ags.length; i++) {
        const a = ags[i]!;
        skip[a] = 0;
        for (let j = 0; j < i; j++) {
          const b = ags[j]!;
          if (rhCur[2 * a] === rhCur[2 * b] && rhCur[2 * a + 1] === rhCur[2 * b + 1]) {
            skip[a] = 1;
            break;
          }
        }
      }
    }
    // Postponed landings: marked first, taken after the other steps only where one conflicts.
    let nPost = 0;
    if (usePor && s.inflight.length && ch.length > 1) {
      if (postBar.length < ch.length) {
        postBar = new Int32Array(ch.length * 2);
        postTh = new Int32Array(ch.length * 2);
        postHit = new Uint8Array(ch.length * 2);
      }
      for (let i = 0; i < ch.length; i++) if ((postBar[i] = postponedBar(s, ch[i]!, i)) >= 0) nPost++;
      if (nPost === ch.length) nPost = 0; // nothing else is enabled: every landing is explored
      postHit.fill(0, 0, ch.length);
    }
    const step = (c: Choice) => {
      if (abortBy) return; // a bound stopped the search: the remaining successors are not computed
      const who = actorOf(s, c);
      if (skip[who]) return;
      const t = succ(s, c, who);
      const nx = checkTransition(s, t, c, out.events!, x, id, []);
      if (nPost) for (let i = 0; i < ch.length; i++) {
        const k = postBar[i]!;
        if (k >= 0 && !postHit[i] && conflictsWith(s, t, c, k, postTh[i]!)) postHit[i] = 1;
      }
      if (t.trapped) return;
      const rh = rhSucc; // closeAndStore keeps no reference to it
      rh.set(rhCur);
      rehash(s, t, x, nx, who, rh);
      closeAndStore(t, nx, rh, id, [c], next);
    };
    for (let i = 0; i < ch.length; i++) if (!nPost || postBar[i]! < 0) step(ch[i]!);
    if (nPost) for (let i = 0; i < ch.length; i++) if (postBar[i]! >= 0 && postHit[i]) step(ch[i]!);
  };

  if (par) {
    const api: SearchApi = {
      machine: m, analysis: an, codec, hash0: [hbuf0[0]!, hbuf0[1]!], initial: cur, initHazards: [...hazards.values()], initError: errorFound,
      expandAt: (buf, i, next) => {
        const { s, x } = codec.decode(buf, i, rhCur);
        expand(s, x, buf.ids[i]!, next);
      },
      takeHazards: () => {
        const r = fresh;
        fresh = [];
        return r;
      },
      takeError: () => {
        const r = errorFound;
        errorFound = false;
        return r;
      },
      counters: () => ({ transitions, terminalOk, intermediates }),
      abortBy: () => abortBy,
      fedBy: () => [...fedBy].map(([k, v]) => [k, [...v].sort((a, b) => a - b)]),
      addFedBy: (l) => {
        for (const [k, v] of l) {
          let f = fedBy.get(k);
          if (!f) fedBy.set(k, (f = new Set()));
          for (const b of v) f.add(b);
        }
      },
    };
    fresh = [];
    return api;
  }
  let spare = new StateBuf();
  spare.guard = guard;
  try {
    outer: while (cur.count > 0) {
      const next = spare;
      next.reset();
      levelStart.push(nStates);
      const n = cur.count;
      for (let i = 0; i < n; i++) {
        const { s, x } = codec.decode(cur, i, rhCur);
        expand(s, x, cur.ids[i]!, next);
        if (abortBy) {
          stoppedBy = abortBy;
          break outer;
        }
        if ((i & 15) === 0) {
          const now = Date.now();
          gov.estimate = memEst = visited.bytes + parent.byteLength + chainOff.byteLength + chainData.byteLength + cur.bytes + next.bytes;
          if (nStates >= maxStates) {
            stoppedBy = 'max-states';
            break outer;
          }
          const b = gov.check();
          if (b !== null) {
            stoppedBy = stopOf(b);
            break outer;
          }
          if (opts.onProgress && now - lastProgress > 250) {
            lastProgress = now;
            opts.onProgress({ states: nStates, transitions, depth, frontier: n - i + next.count, memory: gov.memory(), elapsedMs: now - t0 });
          }
        }
      }
      peakFrontier = Math.max(peakFrontier, next.count);
      memEst = Math.max(memEst, visited.bytes + parent.byteLength + chainOff.byteLength + chainData.byteLength + cur.bytes + next.bytes);
      spare = cur;
      cur = next;
      depth++;
      if (errorFound && !opts.all && next.count > 0) {
        stoppedBy = 'hazard';
        break;
      }
    }
  } catch (e) {
    // A table growth the governor refused: the search stops where it is.
    if (!(e instanceof BoundReached)) throw e;
    stoppedBy = stopOf(e.bound);
  }
  if (stoppedBy === null && nStates > maxStates) stoppedBy = 'max-states';
  const order = [...hazards.values()];
  gov.estimate = memEst;
  return {
    machine: m, analysis: an, hazards: order, complete: stoppedBy === null, stoppedBy, states: nStates, transitions, depth,
    peakFrontier, memory: Math.max(gov.peak, gov.memory()), elapsedMs: Date.now() - t0, parent, chainOff, chainData, terminalOk, intermediates,
  };
}

/** Cells of the flat (agent, barrier key) table of history slots at most (16 MiB of Int32). */
const FLAT_WAIT_SLOTS = 1 << 22;

/**
 * The history slot of (agent `a`, barrier key `k`) from per-agent maps `waitSlots`, or -1: a flat
 * Int32 table when `agents × nBars` is at most {@link FLAT_WAIT_SLOTS}, else the maps themselves.
 */
function flatWaitSlots(waitSlots: readonly Map<number, number>[], agents: number, nBars: number): (a: number, k: number) => number {
  if (agents * nBars > FLAT_WAIT_SLOTS) return (a, k) => waitSlots[a]?.get(k) ?? -1;
  const t = new Int32Array(agents * nBars).fill(-1);
  waitSlots.forEach((ws, a) => ws.forEach((slot, k) => {
    if (k >= 0 && k < nBars) t[a * nBars + k] = slot;
  }));
  return (a, k) => t[a * nBars + k]!;
}
