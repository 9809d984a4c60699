/**
 * The exhaustive explorer: breadth-first over every interleaving of agents and asynchronous
 * completions, driving the machine's own `apply`. States are deduplicated by a canonical 64-bit
 * hash (see codec.ts, which also does the symmetry reduction).
 *
 * Partial-order reduction: from every successor, forced steps (single-transition ample sets) are
 * applied in a chain until none is left; intermediate states are hashed into the visited set (so
 * other paths stop there) but never stored or expanded. A forced step is
 *   - an agent's `local` step (work, fences, commit_group) or `issue` step (TMA, bulk store, MMA,
 *     commit, cp.async, remote arrive: only starts an async op), unless it ends the agent;
 *   - a tcgen05.mma completion (its accesses stay visible as a ghost until a later commit of its
 *     issuer lands);
 *   - a TMA landing that cannot complete its phase (pending 0, bytes left after it, no direct
 *     expect_tx/complete_tx on that barrier array, no remote signal to it in flight); its write
 *     stays visible as a ghost until the phase completes.
 * Forced steps commute with every other transition (C1), and are invisible to the hazards (C2):
 * accesses they start or end stay visible (in flight or as ghosts). Chains are finite (C3).
 * docs/CHECK.md states the argument in full.
 *
 * Hazards are detected on transitions (diagnostics, accesses against in-flight intervals and
 * ghosts, passing waits, phase completions, exits) and on states (hang, co-enabled conflicting
 * generic accesses), so detection does not depend on the path that reached a state.
 */
import { Machine, cloneState, newStepOut, type AsyncOp, type Choice, type MachineState } from '../machine/machine.js';
import type { MachineEvent } from '../machine/events.js';
import { explainHang } from '../machine/hang.js';
import type { OpInstr, Program } from '../machine/program.js';
import type { Severity } from '../model/diagnostics.js';
import type { SrcLoc } from '../kernel/ir.js';
import { analyse, type Analysis } from './analysis.js';
import { Codec, StateBuf, Visited, type Extra } from './codec.js';

/** Options of the exhaustive search. */
export interface ExploreOptions {
  maxStates?: number;
  /** Estimated bytes; the search stops (incomplete) above it. */
  maxMemory?: number;
  timeoutMs?: number;
  /** Explore everything even after an error hazard (default: stop at the end of the depth where the first error was found). */
  all?: boolean;
  /** Partial-order reduction (default true). */
  por?: boolean;
  /** Symmetry reduction (default true). */
  symmetry?: boolean;
  /** Called every ~0.25 s with progress figures. */
  onProgress?: (p: Progress) => void;
}

/** Progress and coverage figures. */
export interface Progress {
  states: number;
  transitions: number;
  depth: number;
  frontier: number;
  memory: number;
  elapsedMs: number;
}

/** A hazard as found by the explorer: where its trace ends, before the trace is rebuilt. */
export interface RawHazard {
  kind: string;
  severity: Severity;
  key: string;
  message: string;
  subject: string | null;
  /** State id the trace reaches; then `extra` choices are applied. */
  state: number;
  extra: Choice[];
  details: string[];
  locs: SrcLoc[];
}

/** What the search produced. */
export interface ExploreResult {
  machine: Machine;
  analysis: Analysis;
  hazards: RawHazard[];
  complete: boolean;
  stoppedBy: 'max-states' | 'max-memory' | 'timeout' | 'hazard' | null;
  states: number;
  transitions: number;
  depth: number;
  peakFrontier: number;
  memory: number;
  elapsedMs: number;
  /** Parent id per state id, and the choices leading from the parent (chainData[chainOff[id]] = length, then codes). */
  parent: Int32Array;
  chainOff: Int32Array;
  chainData: Int32Array;
  terminalOk: number;
  /** States passed through by forced (reduced) steps: hashed, never stored or expanded. */
  intermediates: number;
}

/** Choice ↔ integer code: agent a → a; async op id → −(id + 1). */
export function encodeChoice(c: Choice): number {
  return c.kind === 'agent' ? c.agent : -(c.id + 1);
}
export function decodeChoice(x: number): Choice {
  return x >= 0 ? { kind: 'agent', agent: x } : { kind: 'async', id: -x - 1 };
}

function grow(a: Int32Array<ArrayBuffer>, n: number): Int32Array<ArrayBuffer> {
  if (n <= a.length) return a;
  let size = a.length * 2;
  while (size < n) size *= 2;
  const b = new Int32Array(size);
  b.set(a);
  return b;
}

/** Buffers an in-flight op accesses, with the mode. */
export function opAccesses(o: AsyncOp): { buf: number; rw: 'r' | 'w' }[] {
  const out: { buf: number; rw: 'r' | 'w' }[] = [];
  switch (o.kind) {
    case 'tma':
    case 'cp.async':
      if (o.buf >= 0) out.push({ buf: o.buf, rw: 'w' });
      break;
    case 'bulk.store':
      if (o.buf >= 0) out.push({ buf: o.buf, rw: 'r' });
      break;
    case 'tc.mma':
      if (o.buf >= 0) out.push({ buf: o.buf, rw: 'w' });
      if (o.reads) for (const r of o.reads) out.push({ buf: r, rw: 'r' });
      break;
    case 'wgmma':
      if (o.reads) for (const r of o.reads) out.push({ buf: r, rw: 'r' });
      break;
    default:
      break;
  }
  return out;
}

const KIND_LABEL: Record<string, string> = {
  tma: 'TMA copy', 'bulk.store': 'bulk store', 'tc.mma': 'tcgen05.mma', 'tc.commit': 'tcgen05.commit', wgmma: 'wgmma',
  'cp.async': 'cp.async', 'cpa.arrive': 'cp.async.mbarrier.arrive', remote: 'remote signal',
};

/** Runs the exhaustive search. */
export function explore(program: Program, opts: ExploreOptions = {}): ExploreResult {
  const t0 = Date.now();
  const m = new Machine(program);
  const an = analyse(program);
  if (opts.symmetry === false) {
    an.groups = [];
    an.groupOf.fill(-1);
  }
  const usePor = opts.por !== false;
  const maxStates = opts.maxStates ?? 5_000_000;
  const maxMemory = opts.maxMemory ?? 2 * 1024 ** 3;
  const timeoutMs = opts.timeoutMs ?? 60_000;
  const s0 = m.initial();
  const codec = new Codec(program, an, s0);
  const visited = new Visited(1 << 14);
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
  const ctaAgents: number[][] = Array.from({ length: p.ctas }, () => []);
  for (const a of p.agents) ctaAgents[a.cta]!.push(a.id);

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

  const report = (h: Omit<RawHazard, 'key'> & { key: string }) => {
    const key = `${h.kind}|${h.key}`;
    if (hazards.has(key) || hazards.size >= 64) return;
    hazards.set(key, { ...h, key });
  };
  const locKey = (l?: SrcLoc) => (l ? `${l.file ?? ''}:${l.line}:${l.col}` : '-');
  const agentName = (a: number) => p.agents[a]!.name;

  // ---- initial state
  const x0: Extra = { hist: new Int32Array(an.histLen).fill(-2), ghosts: new Array(p.agents.length).fill(null), tghosts: null };
  codec.hash(s0, x0, hbuf);
  const id0 = addState(-1, []);
  visited.addOrGet(hbuf[0]!, hbuf[1]!, id0);
  let cur = new StateBuf();
  codec.encode(s0, x0, cur, id0);
  const levelStart: number[] = [0];
  let depth = 0;
  let peakFrontier = 1;
  let stoppedBy: ExploreResult['stoppedBy'] = null;
  let errorFound = false;
  const out = newStepOut(true);
  let lastProgress = t0;
  let memEst = 0;


  /** Generic access (buffer, mode) of an agent's next operation, or null. */
  const nextAccess = (s: MachineState, a: number): { buf: number; rw: 'r' | 'w'; ins: OpInstr } | null => {
    const ins = m.nextOp(s, a);
    if (!ins) return null;
    const o = ins.op.op;
    if (o !== 'ld.shared' && o !== 'st.shared' && o !== 'tcgen05.ld') return null;
    const buf = ins.buf!(s.agents[a]!.frame);
    if (buf < 0) return null;
    return { buf, rw: o === 'st.shared' ? 'w' : 'r', ins };
  };

  /** Checks one transition (pre-state `s`, post-state `t`, events in `out`) and updates the history copy. */
  const checkTransition = (s: MachineState, t: MachineState, c: Choice, events: MachineEvent[], x: Extra, stateId: number, prefix: Choice[]): Extra => {
    const hist = x.hist;
    let h = hist;
    const extra = prefix.length ? [...prefix, c] : [c];
    let ghosts = x.ghosts;
    let tghosts = x.tghosts;
    if (tghosts) {
      // Landed copies whose phase has not completed: nothing orders an access after them yet.
      for (const e of events) {
        if (e.e !== 'access' || e.edge === 'end') continue;
        for (let i = 0; i < tghosts.length; i += 2) {
          if (tghosts[i + 1] !== e.buf) continue;
          const newOp = e.async >= 0 ? out.issued.find((o) => o.id === e.async) : undefined;
          const who = e.agent >= 0 ? agentName(e.agent) : newOp ? `${KIND_LABEL[newOp.kind]} issued by ${agentName(newOp.agent)}` : 'an async unit';
          const bufName = p.bufferName(e.buf);
          const bname = p.barrierName(tghosts[i]!);
          errorFound = true;
          report({
            kind: 'race', severity: 'error', key: `${p.bufferOf(e.buf).info.name}|${locKey(e.loc)}|tma`,
            message: `${who} ${e.rw === 'w' ? 'writes' : 'reads'} ${bufName} after a TMA copy wrote it but before the phase of ${bname} that copy credits has completed: nothing orders this access after the copy`,
            subject: bufName, state: stateId, extra, details: [], locs: e.loc ? [e.loc] : [],
          });
        }
      }
    }
    for (const e of events) {
      switch (e.e) {
        case 'diag': {
          const d = e.diag;
          const subject = e.bar >= 0 ? p.barrierName(e.bar) : null;
          if (d.severity === 'error') errorFound = true;
          report({
            kind: d.code, severity: d.severity, key: `${subject ?? ''}|${locKey(e.loc)}`, message: d.message, subject,
            state: stateId, extra, details: [`H200: ${d.h200}`], locs: e.loc ? [e.loc] : [],
          });
          break;
        }
        case 'access': {
          if (e.edge === 'end') break;
          const newOp = e.async >= 0 ? out.issued.find((o) => o.id === e.async) : undefined;
          for (let g = 0; g < ghosts.length; g++) {
            const gl = ghosts[g];
            if (!gl) continue;
            if (newOp && newOp.agent === g && newOp.kind === 'tc.mma') continue;
            for (const gx of gl) {
              if (gx >> 1 !== e.buf || ((gx & 1) === 0 && e.rw === 'r')) continue;
              const who = e.agent >= 0 ? agentName(e.agent) : newOp ? `${KIND_LABEL[newOp.kind]} issued by ${agentName(newOp.agent)}` : 'an async unit';
              const bufName = p.bufferName(e.buf);
              errorFound = true;
              report({
                kind: 'race', severity: 'error', key: `${p.bufferOf(e.buf).info.name}|${locKey(e.loc)}|ghost${g}`,
                message: `${who} ${e.rw === 'w' ? 'writes' : 'reads'} ${bufName}, which a tcgen05.mma issued by ${agentName(g)} was ${(gx & 1) ? 'writing' : 'reading'}; that MMA has finished, but no tcgen05.commit after it has signalled a barrier yet, so nothing orders this access after the MMA`,
                subject: bufName, state: stateId, extra, details: [], locs: e.loc ? [e.loc] : [],
              });
            }
          }
          for (const o of s.inflight) {
            if (o.id === e.async) continue;
            for (const x of opAccesses(o)) {
              if (x.buf !== e.buf || (x.rw === 'r' && e.rw === 'r')) continue;
              if (newOp && newOp.agent === o.agent && newOp.kind === o.kind && (o.kind === 'tc.mma' || o.kind === 'wgmma')) continue;
              const who = e.agent >= 0 ? agentName(e.agent) : newOp ? `${KIND_LABEL[newOp.kind]} issued by ${agentName(newOp.agent)}` : 'an async unit';
              const what = e.rw === 'w' ? 'writes' : 'reads';
              const other = `${KIND_LABEL[o.kind]} issued by ${agentName(o.agent)} (line ${o.loc.line})`;
              const otherWhat = x.rw === 'w' ? 'writing' : 'reading';
              const bufName = p.bufferName(e.buf);
              const sig = o.bar >= 0 ? `; its completion signals ${p.barrierName(o.bar)}, and nothing orders this access after that signal` : o.targets ? `; its completion signals ${o.targets.map((k) => p.barrierName(k)).join(', ')}` : '';
              errorFound = true;
              report({
                kind: 'race', severity: 'error', key: `${p.bufferOf(e.buf).info.name}|${locKey(e.loc)}|${locKey(o.loc)}`,
                message: `${who} ${what} ${bufName} while the ${other} is still ${otherWhat} it${sig}`,
                subject: bufName, state: stateId, extra, details: [], locs: [...(e.loc ? [e.loc] : []), o.loc],
              });
            }
          }
          break;
        }
        case 'wait': {
          if (!e.pass) break;
          const slot = an.waitSlots[e.agent]!.get(e.bar);
          if (slot === undefined) break;
          const observed = e.phase - 1 - ((e.phase - 1 - e.parity) & 1);
          const last = h[slot]!;
          const intent = last === -2 ? 0 : last + 1;
          const bname = p.barrierName(e.bar);
          if (observed < 0) {
            const info = p.barrierOf(e.bar).info;
            if (an.dataBarriers.has(info.name)) {
              report({
                kind: 'vacuous-wait', severity: 'warning', key: `${bname}|${locKey(e.loc)}`,
                message: `${agentName(e.agent)} passed wait(${bname}, parity ${e.parity}) without any phase completing: a fresh barrier passes parity 1 at once, but ${info.name} carries transaction bytes, so this wait was meant to wait for data`,
                subject: bname, state: stateId, extra, details: ['The producer-start idiom (parity 1 on a fresh empty barrier) is not reported: it is only reported on barriers that receive tx bytes.'], locs: [e.loc],
              });
            }
          } else if (Math.abs(observed - intent) >= 2) {
            errorFound = true;
            const msg = observed < intent
              ? `${agentName(e.agent)} passed wait(${bname}, parity ${e.parity}) on phase ${observed}, ${intent - observed} phases behind the phase ${intent} it was due to wait for (its previous pass saw phase ${last}): the parity matched an old phase, so the wait returned without the phase it needed`
              : `${agentName(e.agent)} passed wait(${bname}, parity ${e.parity}) on phase ${observed} while it was due to wait for phase ${intent}: the barrier completed ${observed - intent} phase(s) it never observed (parity aliasing)`;
            report({ kind: 'phase-alias', severity: 'error', key: `${bname}|${locKey(e.loc)}`, message: msg, subject: bname, state: stateId, extra, details: [], locs: [e.loc] });
          }
          if (h === hist) h = hist.slice();
          h[slot] = observed;
          break;
        }
        case 'phase': {
          if (tghosts) {
            const keep: number[] = [];
            for (let i = 0; i < tghosts.length; i += 2) if (tghosts[i] !== e.bar) keep.push(tghosts[i]!, tghosts[i + 1]!);
            tghosts = keep.length ? keep : null;
          }
          let left = 0;
          let locs: SrcLoc[] = [];
          for (const o of t.inflight) if (o.kind === 'tma' && o.bar === e.bar && o.left > 0) {
            left += o.left;
            locs.push(o.loc);
          }
          if (left > 0) {
            const bname = p.barrierName(e.bar);
            errorFound = true;
            report({
              kind: 'tx-mismatch', severity: 'error', key: `${bname}|early`,
              message: `phase ${e.completed} of ${bname} completed while copies in flight still carry ${left} bytes for it: the phase expected fewer bytes than its copies deliver, and the rest will be charged to phase ${e.completed + 1}`,
              subject: bname, state: stateId, extra, details: [], locs,
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
      if (o && o.kind === 'tc.mma' && !t.inflight.some((y) => y.id === o.id)) {
        const add: number[] = [];
        for (const ac of opAccesses(o)) add.push(ac.buf * 2 + (ac.rw === 'w' ? 1 : 0));
        const old = ghosts[o.agent];
        const merged = old ? [...old] : [];
        for (const v of add) if (!merged.includes(v)) merged.push(v);
        merged.sort((u, v) => u - v);
        ghosts = ghosts.slice();
        ghosts[o.agent] = merged;
      } else if (o && o.kind === 'tma' && tmaGhost === o.id && !t.inflight.some((y) => y.id === o.id)) {
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
      } else if (o && o.kind === 'tc.commit' && ghosts[o.agent] && !t.inflight.some((y) => y.id === o.id)) {
        ghosts = ghosts.slice();
        ghosts[o.agent] = null;
      }
    }
    // inflight-at-exit: a CTA whose agents all stopped running with operations in flight into it.
    const mayExit = c.kind === 'agent' && (t.agents[c.agent]!.status !== 'run' || out.issued.length > 0);
    if (mayExit) for (let cta = 0; cta < p.ctas; cta++) {
      const ags = ctaAgents[cta]!;
      if (!ags.length) continue;
      const wasLive = ags.some((a) => s.agents[a]!.status === 'run');
      const live = ags.some((a) => t.agents[a]!.status === 'run');
      if (live) continue;
      const fresh = !wasLive ? out.issued : t.inflight;
      if (!wasLive && !fresh.length) continue;
      for (const o of fresh) {
        const hit = (o.bar >= 0 && barCta(o.bar) === cta) || (o.buf >= 0 && bufCta(o.buf) === cta) || (o.kind === 'tma' && o.cta === cta)
          || (o.reads?.some((r) => bufCta(r) === cta) ?? false) || (o.targets?.some((k) => barCta(k) === cta) ?? false);
        if (!hit) continue;
        errorFound = true;
        const ctaName = p.ctas > 1 ? `CTA ${cta % p.clusterSize}${p.grid > 1 ? ` of cluster ${Math.floor(cta / p.clusterSize)}` : ''}` : 'the CTA';
        const target = o.bar >= 0 ? p.barrierName(o.bar) : o.buf >= 0 ? p.bufferName(o.buf) : o.targets ? o.targets.map((k) => p.barrierName(k)).join(', ') : '';
        report({
          kind: 'inflight-at-exit', severity: 'error', key: `${cta}|${o.agent}`,
          message: `every agent of ${ctaName} has exited while a ${KIND_LABEL[o.kind]} issued by ${agentName(o.agent)} (line ${o.loc.line}) into ${target} is still in flight: it lands in shared memory of a CTA that no longer exists`,
          subject: target || null, state: stateId, extra, details: [], locs: [o.loc],
        });
      }
      for (let g = 0; g < ghosts.length; g++) {
        const gl = ghosts[g];
        if (!gl || !wasLive) continue;
        const bufs = gl.filter((v) => bufCta(v >> 1) === cta).map((v) => p.bufferName(v >> 1));
        if (!bufs.length) continue;
        errorFound = true;
        const ctaName = p.ctas > 1 ? `CTA ${cta % p.clusterSize}` : 'the CTA';
        report({
          kind: 'inflight-at-exit', severity: 'error', key: `${cta}|${g}`,
          message: `every agent of ${ctaName} has exited while no tcgen05.commit has signalled the completion of a tcgen05.mma issued by ${agentName(g)} on ${[...new Set(bufs)].join(', ')}: in some schedule that MMA is still reading or writing the CTA's memory`,
          subject: bufs[0]!, state: stateId, extra, details: [], locs: [],
        });
      }
    }
    return h === hist && ghosts === x.ghosts && tghosts === x.tghosts ? x : { hist: h, ghosts, tghosts };
  };

  /** Id of the TMA op whose landing the reduction is taking alone (its write becomes a ghost), or -1. */
  let tmaGhost = -1;

  const hangCheck = (s: MachineState, id: number) => {
    const hr = explainHang(m, s);
    errorFound = true;
    const blocked = hr.waiters.map((w) => `${w.name} in ${w.op}`).join('; ');
    const first = hr.waiters[0];
    report({
      kind: 'hang', severity: 'error', key: hr.waiters.map((w) => `${w.agent}:${locKey(w.loc)}`).join(','),
      message: `no agent or asynchronous unit can make progress: ${blocked}`,
      subject: first?.barName ?? null, state: id, extra: [],
      details: [...hr.waiters.map((w) => `${w.name} blocked in ${w.op} (line ${w.loc.line}): ${w.reasons.join('; ')}`), ...(hr.cycle ? [`wait-for cycle: ${hr.cycle.join(' → ')}`] : [])],
      locs: hr.waiters.map((w) => w.loc),
    });
    for (const w of hr.waiters) {
      if (w.kind !== 'mbarrier' || !w.state || w.state.tx === 0) continue;
      const inflightBytes = s.inflight.filter((o) => o.kind === 'tma' && o.bar === w.bar).reduce((n, o) => n + o.left, 0);
      if (w.state.tx > 0 && inflightBytes >= w.state.tx) continue;
      report({
        kind: 'tx-mismatch', severity: 'error', key: `${w.barName}|late`,
        message: w.state.tx > 0
          ? `phase ${w.state.phase} of ${w.barName} expects ${w.state.tx} more bytes than any copy in flight will deliver: expect_tx registered more bytes than the copies issued for this phase carry, so the phase can never complete`
          : `phase ${w.state.phase} of ${w.barName} received ${-w.state.tx} bytes more than it expected (tx-count ${w.state.tx}): the phase needs a tx-count of exactly 0`,
        subject: w.barName ?? null, state: id, extra: [], details: [], locs: [w.loc],
      });
    }
  };

  /** Co-enabled conflicting generic accesses in state `s` (reached from `id` by `prefix`). */
  const coEnabled = (s: MachineState, ch: Choice[], id: number, prefix: Choice[]) => {
    let acc: { a: number; buf: number; rw: 'r' | 'w'; ins: OpInstr }[] | null = null;
    for (const c of ch) {
      if (c.kind !== 'agent') continue;
      const x = nextAccess(s, c.agent);
      if (x) (acc ??= []).push({ a: c.agent, ...x });
    }
    if (!acc || acc.length < 2) return;
    for (let i = 0; i < acc.length; i++) for (let j = i + 1; j < acc.length; j++) {
      const x = acc[i]!;
      const y = acc[j]!;
      if (x.buf !== y.buf || (x.rw === 'r' && y.rw === 'r')) continue;
      const bufName = p.bufferName(x.buf);
      errorFound = true;
      const w = x.rw === 'w' ? x : y;
      const o = w === x ? y : x;
      report({
        kind: 'race', severity: 'error', key: `${p.bufferOf(x.buf).info.name}|${locKey(w.ins.loc)}|${locKey(o.ins.loc)}`,
        message: `${agentName(w.a)} writes ${bufName} (${w.ins.text}) and ${agentName(o.a)} ${o.rw === 'w' ? 'writes' : 'reads'} it (${o.ins.text}) with nothing ordering them: both are enabled in the same state, so either may go first`,
        subject: bufName, state: id, extra: [...prefix, { kind: 'agent', agent: w.a }, { kind: 'agent', agent: o.a }], details: [], locs: [w.ins.loc, o.ins.loc],
      });
    }
  };

  /**
   * The reduction's single forced step from `s`, if any: an agent's local or issue step (not ending
   * the agent), a tcgen05.mma completion, or a TMA landing that cannot complete its phase.
   */
  const forced = (s: MachineState, ch: Choice[], x: Extra, id: number, prefix: Choice[]): { t: MachineState; nx: Extra; c: Choice } | null => {
    for (const c of ch) {
      if (c.kind === 'agent') {
        const a = c.agent;
        const ins = m.nextOp(s, a)!;
        let cls = an.por[p.agents[a]!.role]![s.agents[a]!.pc]!;
        if (cls === 'sync' && ins.op.op === 'mbarrier.arrive') {
          const key = ins.bar!(s.agents[a]!.frame);
          if (key >= 0 && barCta(key) !== p.agents[a]!.cta) cls = 'issue';
        }
        if (cls === 'sync') continue;
      } else {
        const o = m.findAsync(s, c.id);
        if (!o) continue;
        if (o.kind === 'tma') {
          // A landing that cannot complete its phase (all arrivals in, bytes still missing after it, and
          // only copies can change the tx-count) commutes with everything; its write stays visible as a ghost.
          const b = s.bars[o.bar];
          if (!b || b.status !== 'valid' || b.pending !== 0 || an.directTx.has(p.barrierOf(o.bar).info.name)) continue;
          const chunk = o.chunks <= 1 ? o.left : Math.max(16, Math.floor(o.left / o.chunks / 16) * 16);
          if (b.tx - chunk <= 0) continue;
          if (s.inflight.some((y) => y.kind === 'remote' && y.bar === o.bar)) continue;
          tmaGhost = o.id;
        } else if (o.kind !== 'tc.mma') continue;
      }
      const t = cloneState(s);
      m.apply(t, c, out);
      transitions++;
      if (c.kind === 'agent' && t.agents[c.agent]!.status !== 'run') continue; // exits are visible
      const nx = checkTransition(s, t, c, out.events!, x, id, prefix);
      tmaGhost = -1;
      return { t, nx, c };
    }
    return null;
  };

  /** Applies forced steps to `t` until none is left, then stores the state reached (chain from `parentId`). */
  const closeAndStore = (t: MachineState, nx: Extra, parentId: number, chain: Choice[], next: StateBuf) => {
    for (let guard = 0; ; guard++) {
      codec.hash(t, nx, hbuf);
      if (visited.has(hbuf[0]!, hbuf[1]!)) return; // reached before (as a stored or an intermediate state)
      let f: ReturnType<typeof forced> = null;
      let ch: Choice[] | null = null;
      if (usePor && guard < 100_000) {
        ch = m.enabled(t);
        if (ch.length) f = forced(t, ch, nx, parentId, chain);
      }
      if (!f) break;
      // Intermediate state: remembered (so other paths stop here) but never stored or expanded.
      visited.addOrGet(hbuf[0]!, hbuf[1]!, -2);
      intermediates++;
      coEnabled(t, ch!, parentId, chain);
      if (f.t.trapped) return; // the diagnostic was reported; the kernel stops
      t = f.t;
      nx = f.nx;
      chain.push(f.c);
    }
    const nid = nStates;
    visited.addOrGet(hbuf[0]!, hbuf[1]!, nid);
    addState(parentId, chain);
    codec.encode(t, nx, next, nid);
  };

  const expand = (s: MachineState, x: Extra, id: number, next: StateBuf) => {
    const ch = m.enabled(s);
    if (ch.length === 0) {
      if (s.agents.some((a) => a.status === 'run')) hangCheck(s, id);
      else terminalOk++;
      return;
    }
    coEnabled(s, ch, id, []);
    for (const c of ch) {
      const t = cloneState(s);
      m.apply(t, c, out);
      transitions++;
      const nx = checkTransition(s, t, c, out.events!, x, id, []);
      if (t.trapped) continue;
      closeAndStore(t, nx, id, [c], next);
    }
  };

  let spare = new StateBuf();
  outer: while (cur.count > 0) {
    const next = spare;
    next.reset();
    levelStart.push(nStates);
    const n = cur.count;
    for (let i = 0; i < n; i++) {
      const { s, x } = codec.decode(cur, i);
      expand(s, x, cur.ids[i]!, next);
      if ((i & 255) === 0) {
        const now = Date.now();
        memEst = visited.bytes + parent.byteLength + chainOff.byteLength + chainData.byteLength + cur.bytes + next.bytes;
        if (nStates >= maxStates) {
          stoppedBy = 'max-states';
          break outer;
        }
        if (memEst > maxMemory) {
          stoppedBy = 'max-memory';
          break outer;
        }
        if (now - t0 > timeoutMs) {
          stoppedBy = 'timeout';
          break outer;
        }
        if (opts.onProgress && now - lastProgress > 250) {
          lastProgress = now;
          opts.onProgress({ states: nStates, transitions, depth, frontier: n - i + next.count, memory: memEst, elapsedMs: now - t0 });
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
  if (stoppedBy === null && nStates > maxStates) stoppedBy = 'max-states';
  const order = [...hazards.values()];
  return {
    machine: m, analysis: an, hazards: order, complete: stoppedBy === null, stoppedBy, states: nStates, transitions, depth,
    peakFrontier, memory: memEst, elapsedMs: Date.now() - t0, parent, chainOff, chainData, terminalOk, intermediates,
  };
}
