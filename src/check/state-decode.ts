/**
 * The word layout of a stored state (check/codec.ts encodes it): the indices of async-op kinds,
 * remote-signal kinds and agent and barrier statuses, the three-word form of values outside int32,
 * and {@link decodeState}, which rebuilds a machine state and its checker data from the words.
 */
import type { Token } from '../model/mbarrier.js';
import type { AsyncKind } from '../machine/events.js';
import type { AgentState, AsyncOp, MachineState, NamedBarrier } from '../machine/machine.js';
import type { Program } from '../machine/program.js';
import type { Analysis } from './analysis.js';
import type { Extra, StateBuf } from './state-buf.js';
import { getWide, WIDE, wideAt } from './wide-words.js';
import { getHistSlot, HIST_WORDS } from './wait-hist.js';

export const KINDS: AsyncKind[] = ['tma', 'bulk.store', 'tc.mma', 'tc.commit', 'wgmma', 'cp.async', 'cpa.arrive', 'remote', 'tc.ld', 'tc.st', 'tc.cp', 'tc.shift', 'st.async', 'dsmem', 'pick', 'clc'];
export function kindIx(k: AsyncKind): number {
  switch (k) {
    case 'tma': return 0;
    case 'bulk.store': return 1;
    case 'tc.mma': return 2;
    case 'tc.commit': return 3;
    case 'wgmma': return 4;
    case 'cp.async': return 5;
    case 'cpa.arrive': return 6;
    case 'tc.ld': return 8;
    case 'tc.st': return 9;
    case 'tc.cp': return 10;
    case 'tc.shift': return 11;
    case 'st.async': return 12;
    case 'dsmem': return 13;
    case 'pick': return 14;
    case 'clc': return 15;
    default: return 7;
  }
}
export const REMOTES: AsyncOp['remote'][] = [null, 'arrive', 'arrive.expect_tx', 'arrive_drop', 'expect_tx', 'complete_tx'];
export const REMOTE_IX = new Map(REMOTES.map((k, i) => [k, i]));
export const STATUS = ['run', 'done', 'trap'] as const;
export { getWide, putWide, WIDE, wideAt } from './wide-words.js';
export const BSTATUS = ['uninit', 'valid', 'inval'] as const;

/**
 * Decodes the state at position `i` of `buf` for program `p` with analysis `an`; copies its record
 * hashes into `rh` when given (the encoder must have been given them). `idle.named` caches the one
 * frozen named-barrier array of programs without bar.sync / bar.arrive.
 */
export function decodeState(p: Program, an: Analysis, idle: { named: NamedBarrier[] | null }, buf: StateBuf, i: number, rh?: Int32Array): { s: MachineState; x: Extra } {
  if (rh) {
    const src = buf.rh;
    const n = buf.rhLen;
    for (let j = 0, o = i * n; j < n; j++) rh[j] = src[o + j]!;
  }
  const d = buf.data;
  let k = buf.offs[i]!;
  
  const agents: AgentState[] = new Array(p.agents.length);
  for (let a = 0; a < p.agents.length; a++) {
    const pc = d[k++]!;
    const status = STATUS[d[k++]!]!;
    const sub = d[k++]!;
    const wgGroup = d[k++]!;
    const bulkGroup = d[k++]!;
    const cpGroup = d[k++]!;
    const clusterRound = d[k++]!;
    const tcIssued = d[k++]!;
    const tcDone = d[k++]!;
    const wgIssued = d[k++]!;
    const wgDone = d[k++]!;
    const lastArrive = d[k++]!;
    const tmemHeld = d[k++]!;
    const tmemFreed = d[k++]!;
    const tmemRelinquished = d[k++]!;
    const tcLdUnwaited = d[k++]!;
    const n = d[k++]!;
    const rel = an.rel[a];
    const lv = rel ? rel.live[pc] : undefined;
    let frame: number[];
    if (lv) {
      // Warp-relative encoding: the live slots; the others are known at this pc (warp-relative.ts).
      frame = rel!.known[pc]!.slice();
      for (let j = 0; j < lv.length; j++) {
        const w = d[k++]!;
        if (w !== WIDE) frame[lv[j]!] = w;
        else {
          frame[lv[j]!] = wideAt(d, k);
          k += 2;
        }
      }
    } else {
      frame = new Array<number>(n);
      for (let j = 0; j < n; j++) {
        const w = d[k++]!;
        if (w !== WIDE) frame[j] = w;
        else {
          frame[j] = wideAt(d, k);
          k += 2;
        }
      }
    }
    const nt = d[k++]!;
    let tokens: Record<number, Token> | null = null;
    if (nt >= 0) {
      tokens = {};
      for (let j = 0; j < nt; j++) {
        const slot = d[k++]!;
        const barrier = d[k++]!;
        let phase = d[k++]!;
        if (phase === WIDE) {
          phase = wideAt(d, k);
          k += 2;
        }
        tokens[slot] = { barrier, phase, pendingBefore: d[k++]!, txBefore: d[k++]!, noComplete: d[k++]! === 1 };
      }
    }
    agents[a] = { pc, frame, status, sub, tokens, wgGroup, bulkGroup, cpGroup, clusterRound, tcIssued, tcDone, wgIssued, wgDone, lastArrive, tmemHeld, tmemFreed, tmemRelinquished, tcLdUnwaited };
  }
  const nb = p.ctas * p.barriersPerCta;
  const bars = new Array(nb);
  for (let j = 0; j < nb; j++) {
    const status = BSTATUS[d[k++]!]!;
    let phase = d[k++]!;
    if (phase === WIDE) {
      phase = wideAt(d, k);
      k += 2;
    }
    bars[j] = { status, phase, pending: d[k++]!, expected: d[k++]!, tx: d[k++]! };
  }
  let named: NamedBarrier[];
  if (an.usesNamed) {
    named = new Array(p.ctas * 16);
    for (let j = 0; j < named.length; j++) named[j] = { arrived: d[k++]!, gen: d[k++]!, count: d[k++]!, site: d[k++]!, asite: d[k++]! };
  } else {
    // Never touched by a program without bar.sync / bar.arrive: one frozen array for every state.
    named = idle.named ??= Object.freeze(Array.from({ length: p.ctas * 16 }, () => Object.freeze({ arrived: 0, gen: 0, count: 0, site: 0, asite: 0 }))) as NamedBarrier[];
  }
  const clusterDone = new Array<number>(p.grid);
  for (let j = 0; j < p.grid; j++) clusterDone[j] = d[k++]!;
  const nm = p.values ? p.values.size : 0;
  const mem = new Array<number>(nm);
  for (let j = 0; j < nm; j++) {
    const w = d[k++]!;
    if (w !== WIDE) mem[j] = w;
    else {
      mem[j] = wideAt(d, k);
      k += 2;
    }
  }
  const nextId = d[k++]!;
  const ni = d[k++]!;
  const inflight: AsyncOp[] = new Array(ni);
  for (let j = 0; j < ni; j++) {
    const id = d[k++]!;
    const agent = d[k++]!;
    const issued = d[k++]!;
    const kind = KINDS[d[k++]!]!;
    const bufk = d[k++]!;
    const cta = d[k++]!;
    const bar = d[k++]!;
    let bytes = d[k++]!;
    if (bytes === WIDE) {
      bytes = wideAt(d, k);
      k += 2;
    }
    let left = d[k++]!;
    if (left === WIDE) {
      left = wideAt(d, k);
      k += 2;
    }
    const chunks = d[k++]!;
    const group = d[k++]!;
    const count = d[k++]!;
    const seq = d[k++]!;
    const remote = REMOTES[d[k++]!]!;
    const li = d[k++]!;
    const nr = d[k++]!;
    let reads: number[] | null = null;
    if (nr >= 0) {
      reads = new Array(nr);
      for (let r = 0; r < nr; r++) reads[r] = d[k++]!;
    }
    const nt = d[k++]!;
    let targets: number[] | null = null;
    if (nt >= 0) {
      targets = new Array(nt);
      for (let r = 0; r < nt; r++) targets[r] = d[k++]!;
    }
    inflight[j] = { id, kind, agent, cta, bar, buf: bufk, reads, bytes, left, chunks, group, count, remote, targets, issued, seq, loc: an.locs[li] ?? { line: 0, col: 0 } };
  }
  const hist: number[] = [];
  for (let j = 0; j < an.histLen; j += HIST_WORDS) k = getHistSlot(d, k, hist);
  const ghosts: (number[] | null)[] = new Array(p.agents.length);
  for (let a = 0; a < p.agents.length; a++) {
    const ng = d[k++]!;
    if (ng === 0) ghosts[a] = null;
    else {
      const g = new Array<number>(ng);
      for (let j = 0; j < ng; j++) g[j] = d[k++]!;
      ghosts[a] = g;
    }
  }
  const ntg = d[k++]!;
  let tghosts: number[] | null = null;
  if (ntg) {
    tghosts = new Array<number>(ntg);
    for (let j = 0; j < ntg; j++) tghosts[j] = d[k++]!;
  }
  const list = (): number[] | null => {
    const ng = d[k++]!;
    if (ng === 0) return null;
    const g = new Array<number>(ng);
    for (let j = 0; j < ng; j++) g[j] = d[k++]!;
    return g;
  };
  const dirty: (number[] | null)[] = new Array(p.agents.length).fill(null);
  let esc: number[] | null = null;
  if (an.trackProxy) {
    for (let a = 0; a < p.agents.length; a++) dirty[a] = list();
    esc = list();
  }
  const pub: number[] = [];
  for (let j = 0; j < an.manualCount; j++) pub.push(d[k++]!);
  const cghosts: (number[] | null)[] = new Array(p.agents.length).fill(null);
  const pcm: (number[] | null)[] = new Array(p.agents.length).fill(null);
  if (an.commitOnly) {
    for (let a = 0; a < p.agents.length; a++) cghosts[a] = list();
    for (let a = 0; a < p.agents.length; a++) pcm[a] = list();
  }
  const ru: (number[] | null)[] = new Array(p.agents.length).fill(null);
  let rp: number[] | null = null;
  if (an.trackRelaxed) {
    for (let a = 0; a < p.agents.length; a++) ru[a] = list();
    rp = list();
  }
  const s: MachineState = { now: 0, agents, bars, named, clusterDone, inflight, nextId, trapped: null, events: 0, mem };
  return { s, x: { hist, ghosts, tghosts, dirty, esc, pub, cghosts, pcm, ru, rp } };
}
