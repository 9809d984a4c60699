/**
 * The image of a checker state under a CTA permutation (cta-symmetry.ts): every agent's record
 * moves to its image agent (with that agent's builtins), barriers and named barriers to their
 * image CTA, and every barrier key, buffer key, CTA index and agent id the state or the checker's
 * {@link Extra} holds is renamed: in-flight operations (issuer, CTA, barrier, buffer, reads,
 * commit targets), tokens, ghosts, TMA ghosts, dirty and escaped accesses, init publication,
 * commit ghosts and pending commits. The codec hashes the images and keeps the least hash, so the
 * states of one orbit are one state (codec.ts, {@link Codec.combine}).
 */
import type { Token } from '../model/mbarrier.js';
import type { AgentState, AsyncOp, MachineState, NamedBarrier } from '../machine/machine.js';
import { BUILTINS } from '../machine/program.js';
import { NAMED_PER_CTA } from '../machine/state.js';
import type { Analysis } from './analysis.js';
import type { Extra } from './codec.js';
import type { CtaPerm } from './cta-symmetry.js';
import { EG, EG_ACC, EG_MB } from './ghosts.js';

const NB = BUILTINS.length;
const asc = (a: number, b: number) => a - b;

/** Access codes (buffer key × 2 + write) renamed and sorted again. */
function codes(l: number[] | null, buf: Int32Array): number[] | null {
  if (!l) return null;
  return l.map((x) => buf[x >> 1]! * 2 + (x & 1)).sort(asc);
}

/**
 * An agent's ghosts (ghosts.ts) renamed and sorted again, as the search keeps them: a tcgen05.mma
 * ghost is an access code; an elected-thread ghost keeps its tag bits (EG, kind, elect) over an
 * access code, or over a barrier key when it is a passed wait (EG_MB).
 */
function ghostCodes(l: number[] | null, bar: Int32Array, buf: Int32Array): number[] | null {
  if (!l) return null;
  const r = l.map((v) => {
    if (!(v & EG)) return buf[v >> 1]! * 2 + (v & 1);
    const tag = v & ~EG_ACC;
    const low = v & EG_ACC;
    return tag | (v & EG_MB ? bar[low]! : buf[low >> 1]! * 2 + (low & 1));
  });
  return r.sort(asc);
}

/** Pairs (barrier key, second) renamed, sorted by pair. */
function pairs(l: number[] | null, bar: Int32Array, second: (x: number) => number): number[] | null {
  if (!l) return null;
  const ps: [number, number][] = [];
  for (let i = 0; i < l.length; i += 2) ps.push([bar[l[i]!]!, second(l[i + 1]!)]);
  ps.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  return ps.flat();
}

/** Agent `a`'s checker lists as they are in the image under `perm` (renamed; the sorted ones sorted again). */
export function imageLists(perm: CtaPerm, x: Extra, a: number): { ghosts: number[] | null; dirty: number[] | null; cghosts: number[] | null; pcm: number[] | null } {
  const { bar, buf } = perm;
  const pc = x.pcm[a];
  return {
    ghosts: ghostCodes(x.ghosts[a] ?? null, bar, buf),
    dirty: codes(x.dirty[a] ?? null, buf),
    cghosts: pairs(x.cghosts[a] ?? null, bar, (c) => buf[c >> 1]! * 2 + (c & 1)),
    pcm: pc ? pc.map((k) => bar[k]!).sort(asc) : null,
  };
}

/** What agent `a`'s record becomes in the image under `perm` (the record of agent perm.agent[a] there). */
export function imageRecord(perm: CtaPerm, s: MachineState, x: Extra, a: number): {
  ag: AgentState; ghosts: number[] | null; dirty: number[] | null; cghosts: number[] | null; pcm: number[] | null; ops: AsyncOp[];
} {
  const { agent: am, bar, buf, cta } = perm;
  const b = am[a]!;
  const src = s.agents[a]!;
  const frame = src.frame.slice();
  const own = s.agents[b]!.frame;
  for (let j = 0; j < NB; j++) frame[j] = own[j]!;
  let tokens: Record<number, Token> | null = null;
  if (src.tokens) {
    tokens = {};
    for (const [k, t] of Object.entries(src.tokens)) tokens[Number(k)] = { ...t, barrier: bar[t.barrier] ?? t.barrier };
  }
  const ops: AsyncOp[] = [];
  for (const o of s.inflight) {
    if (o.agent !== a) continue;
    ops.push({
      ...o,
      agent: b,
      cta: o.cta >= 0 ? cta[o.cta]! : o.cta,
      bar: o.bar >= 0 ? bar[o.bar]! : o.bar,
      buf: o.buf >= 0 ? buf[o.buf]! : o.buf,
      reads: o.reads ? o.reads.map((k) => (k >= 0 ? buf[k]! : k)) : null,
      targets: o.targets ? o.targets.map((k) => bar[k]!) : null,
    });
  }
  return { ag: { ...src, frame, tokens }, ...imageLists(perm, x, a), ops };
}

/** The image under `perm` of what the state hash takes besides the agents' records and the barriers. */
export function imageTail(an: Analysis, perm: CtaPerm, s: MachineState, x: Extra): { named: NamedBarrier[]; tghosts: number[] | null; esc: number[] | null; pub: number[] } {
  const { agent: am, bar, buf, cta } = perm;
  let named = s.named;
  if (an.usesNamed) {
    named = new Array<NamedBarrier>(s.named.length);
    for (let k = 0; k < s.named.length; k++) named[cta[Math.floor(k / NAMED_PER_CTA)]! * NAMED_PER_CTA + (k % NAMED_PER_CTA)] = s.named[k]!;
  }
  let pub = x.pub;
  if (an.manualCount) {
    pub = x.pub.slice();
    for (let k = 0; k < an.manualSlot.length; k++) {
      const from = an.manualSlot[k]!;
      if (from < 0) continue;
      const v = x.pub[from]!;
      pub[an.manualSlot[bar[k]!]!] = v === 0 ? 0 : (am[(v >> 3) - 1]! + 1) * 8 + (v & 7);
    }
  }
  return { named, tghosts: pairs(x.tghosts, bar, (k) => buf[k]!), esc: codes(x.esc, buf), pub };
}

/** The image of (s, x) under `perm` as a state (tests: final states up to the CTA permutations). */
export function permuteState(an: Analysis, perm: CtaPerm, s: MachineState, x: Extra): { s: MachineState; x: Extra } {
  const nA = s.agents.length;
  const agents = new Array<AgentState>(nA);
  const hist = new Array<number>(x.hist.length);
  const ghosts = new Array<number[] | null>(nA);
  const dirty = new Array<number[] | null>(nA);
  const cghosts = new Array<number[] | null>(nA);
  const pcm = new Array<number[] | null>(nA);
  const ru = new Array<number[] | null>(nA);
  let inflight: AsyncOp[] = [];
  for (let a = 0; a < nA; a++) {
    const b = perm.agent[a]!;
    const im = imageRecord(perm, s, x, a);
    agents[b] = im.ag;
    ghosts[b] = im.ghosts;
    dirty[b] = im.dirty;
    cghosts[b] = im.cghosts;
    pcm[b] = im.pcm;
    ru[b] = x.ru[a] ?? null;
    inflight = inflight.concat(im.ops);
    for (let j = 0; j < an.histCount[a]!; j++) hist[an.histBase[b]! + j] = x.hist[an.histBase[a]! + j]!;
  }
  const bars = new Array<MachineState['bars'][number]>(s.bars.length);
  for (let k = 0; k < s.bars.length; k++) bars[perm.bar[k]!] = s.bars[k]!;
  const t = imageTail(an, perm, s, x);
  return { s: { ...s, agents, bars, named: t.named, inflight }, x: { ...x, hist, ghosts, tghosts: t.tghosts, dirty, esc: t.esc, pub: t.pub, cghosts, pcm, ru } };
}
