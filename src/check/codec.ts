/**
 * Compact integer encodings of machine states for the checker: a concrete encoding (exact, for the
 * breadth-first frontier; decoded back to a {@link MachineState}) and a canonical 64-bit hash (for
 * the visited set) that ignores what does not affect the future: the clock, the event count,
 * asynchronous operation ids and issue times (only each issuer's order of its own operations is
 * kept) and, for interchangeable agents, which of them is which (symmetry reduction: the members'
 * records — agent state, history, ghosts and in-flight operations — are sorted).
 *
 * The checker's own per-state data travels with the state ({@link Extra}): the last phase each
 * waiter observed on each barrier (phase-alias detection) and "ghost" accesses: accesses of
 * tcgen05.mma operations that have completed but whose completion no commit has yet signalled.
 *
 * The encodings list the machine's fields explicitly (speed); the constructor and the first
 * in-flight operation are checked against the known field sets, so a new machine field fails loudly
 * instead of being silently ignored.
 */
import type { AgentState, AsyncOp, MachineState, NamedBarrier } from '../machine/machine.js';
import { BUILTINS, type Program } from '../machine/program.js';
import type { Analysis } from './analysis.js';
import { barHash, H, mix1, mix2, mixRange, sortByRecord } from './hash-mix.js';
import { imageLists, imageTail } from './cta-permute.js';
import { decodeState } from './state-decode.js';
import { AGENT_FIELDS, checkFields, STATE_FIELDS, StateBuf, type Extra } from './state-buf.js';
import { RecordWords } from './record-words.js';
import { putWide } from './state-decode.js';
import { HIST_WORDS, putHistSlot } from './wait-hist.js';

export { StateBuf, type Extra } from './state-buf.js';

/**
 * The checker's encodings of one program's states: {@link encode} / {@link decode} (concrete), and
 * the canonical hash from per-agent record hashes ({@link record}, {@link records}, {@link barSum},
 * {@link combine}; {@link hash} from scratch). The record words come from {@link RecordWords}.
 */
export class Codec extends RecordWords {
  /** The frozen named-barrier array of programs without named barriers (state-decode.ts). */
  private readonly idle: { named: NamedBarrier[] | null } = { named: null };
  /** Scratch for the hash of a CTA permutation's image ({@link combine}). */
  private imageOut = new Uint32Array(2);
  /** Each agent's builtins (the first frame slots; constant for the whole run). */
  private readonly builtins: number[][];

  constructor(readonly p: Program, an: Analysis, initial: MachineState) {
    super(an);
    this.builtins = initial.agents.map((a) => a.frame.slice(0, BUILTINS.length));
    checkFields('state', initial, STATE_FIELDS);
    for (const a of initial.agents) checkFields('agent state', a, AGENT_FIELDS);
  }

  /**
   * Appends the concrete encoding of (state, extra) to `buf` under state id `id`, with the agents'
   * record hashes `rh` when given (then {@link decode} returns them).
   */
  encode(s: MachineState, x: Extra, buf: StateBuf, id: number, rh?: Int32Array): void {
    this.n = 0;
    for (let a = 0; a < s.agents.length; a++) this.putAgent(s.agents[a]!, false, this.an.rel[a]?.live ?? null);
    {
      const bars = s.bars;
      const sc = this.room(7 * bars.length);
      let n = this.n;
      for (let j = 0; j < bars.length; j++) {
        const b = bars[j]!;
        sc[n++] = b.status === 'uninit' ? 0 : b.status === 'valid' ? 1 : 2; // BSTATUS
        n = putWide(sc, n, b.phase); // phases are unbounded exact integers
        sc[n++] = b.pending;
        sc[n++] = b.expected;
        sc[n++] = b.tx;
      }
      this.n = n;
    }
    if (this.an.usesNamed) for (const nb of s.named) {
      this.put(nb.arrived);
      this.put(nb.gen);
      this.put(nb.count);
      this.put(nb.site);
      this.put(nb.asite);
    }
    for (const c of s.clusterDone) this.put(c);
    this.putMem(s.mem);
    this.put(s.nextId);
    this.put(s.inflight.length);
    for (const o of s.inflight) this.putOp(o, true, null);
    {
      // Observed phases are exact at any count (wait-hist.ts): wide words beyond int32.
      const sc = this.room(4 * x.hist.length);
      let n = this.n;
      for (let i = 0; i < x.hist.length; i += HIST_WORDS) n = putHistSlot(sc, n, x.hist, i);
      this.n = n;
    }
    for (const g of x.ghosts) this.putGhosts(g, null);
    this.putGhosts(x.tghosts, null);
    if (this.an.trackProxy) {
      for (const g of x.dirty) this.putGhosts(g, null);
      this.putGhosts(x.esc, null);
    }
    for (let j = 0; j < x.pub.length; j++) this.put(x.pub[j]!);
    if (this.an.commitOnly) {
      for (const g of x.cghosts) this.putPairs(g, null);
      for (const g of x.pcm) this.putGhosts(g, null);
    }
    if (this.an.trackRelaxed) {
      for (const g of x.ru) this.putRelaxed(g, null);
      this.putRelaxed(x.rp, null);
    }
    buf.reserve(this.n);
    if (rh) {
      const i = buf.offs.length;
      buf.rhLen = rh.length;
      if ((i + 1) * rh.length > buf.rh.length) {
        buf.guard?.(4 * Math.max(1024, 2 * (i + 1) * rh.length));
        const d = new Int32Array(Math.max(1024, 2 * (i + 1) * rh.length));
        d.set(buf.rh);
        buf.rh = d;
      }
      buf.rh.set(rh, i * rh.length);
    }
    buf.offs.push(buf.len);
    buf.ids.push(id);
    buf.data.set(this.scratch.subarray(0, this.n), buf.len);
    buf.len += this.n;
  }

  /**
   * Decodes the state at position `i` of `buf`; copies its record hashes into `rh` when given (the
   * encoder must have been given them).
   */
  decode(buf: StateBuf, i: number, rh?: Int32Array): { s: MachineState; x: Extra } {
    return decodeState(this.p, this.an, this.idle, buf, i, rh);
  }

  /** Per agent: its private buffer keys (symmetry groups), or null. */
  private privOf: (number[] | null)[] | null = null;
  /** Scratch for sorting a group's record hashes. */
  private gidx = new Int32Array(16);

  private priv(a: number): number[] | null {
    if (!this.privOf) {
      const an = this.an;
      const po: (number[] | null)[] = new Array(this.p.agents.length).fill(null);
      for (const g of an.groups) g.agents.forEach((id, i) => (po[id] = g.privateBufs[i]!.length ? g.privateBufs[i]! : null));
      this.privOf = po;
    }
    return this.privOf[a]!;
  }

  /**
   * The record hash of agent `a` (its state, history slots, ghosts and in-flight operations in
   * issue order, without ids or issue times; for members of a symmetry group, with `instance` and
   * private buffers abstracted) into `rh[2a]`, `rh[2a + 1]`. A step changes only the record of its
   * actor (the agent, or the issuer of the asynchronous operation), so the explorer recomputes one
   * record per step and {@link combine}s.
   */
  record(s: MachineState, x: Extra, a: number, rh: Int32Array): void {
    const an = this.an;
    this.recordOf(a, s.agents[a]!, x.hist, an.histBase[a]!, x.ghosts[a]!, x.dirty[a]!, x.cghosts[a]!, x.pcm[a]!, x.ru[a]!, s.inflight, a);
    rh[2 * a] = H[0]!;
    rh[2 * a + 1] = H[1]!;
    // CTA symmetry: the record agent a has in each permutation's image is that of its image agent.
    const perms = an.cta.perms;
    for (let k = 0; k < perms.length; k++) {
      const perm = perms[k]!;
      const b = perm.agent[a]!;
      const im = imageLists(perm, x, a);
      this.ren = perm;
      this.renOwn = this.builtins[b]!;
      try {
        this.recordOf(b, s.agents[a]!, x.hist, an.histBase[a]!, im.ghosts, im.dirty, im.cghosts, im.pcm, x.ru[a]!, s.inflight, a);
      } finally {
        this.ren = null;
        this.renOwn = null;
      }
      const off = (k + 1) * this.section;
      rh[off + 2 * b] = H[0]!;
      rh[off + 2 * b + 1] = H[1]!;
    }
  }

  /** Hashes one agent record into H: agent `a`'s slot (`ops` of issuer `who`, every op when −1). */
  private recordOf(a: number, ag: AgentState, hist: number[], base: number, ghosts: number[] | null, dirty: number[] | null,
    cghosts: number[] | null, pcm: number[] | null, ru: number[] | null, ops: AsyncOp[], who: number): void {
    const an = this.an;
    this.n = 0;
    const sym = an.groupOf[a]! >= 0;
    const priv = sym ? this.priv(a) : null;
    this.putAgent(ag, sym, an.rel[a]?.live ?? null);
    const hc = an.histCount[a]!;
    const sc = this.room(4 * hc);
    let n = this.n;
    for (let j = 0; j < hc; j += HIST_WORDS) n = putHistSlot(sc, n, hist, base + j);
    this.n = n;
    this.putGhosts(ghosts, priv);
    if (an.trackProxy) this.putGhosts(dirty, priv);
    if (an.commitOnly) {
      this.putPairs(cghosts, priv);
      this.putGhosts(pcm, null);
    }
    if (an.trackRelaxed) this.putRelaxed(ru, priv);
    for (let j = 0; j < ops.length; j++) {
      const o = ops[j]!;
      if (who < 0 || o.agent === who) this.putOp(o, false, priv);
    }
    mixRange(this.scratch, 0, this.n, 0x2545f491, 0x9e3779b9);
  }

  /** Entries of one section of the record-hash array: two per agent, two for the barrier sum. */
  private get section(): number {
    return 2 * this.p.agents.length + 2;
  }

  /**
   * Every agent's record hash (see {@link record}), and the barrier sum (see {@link barSum}):
   * `rh` has {@link rhLength} entries.
   */
  records(s: MachineState, x: Extra, rh: Int32Array): void {
    const nA = s.agents.length;
    for (let a = 0; a < nA; a++) this.record(s, x, a, rh);
    const perms = this.an.cta.perms;
    for (let k = 0; k <= perms.length; k++) {
      const bm = k ? perms[k - 1]!.bar : null;
      let h1 = 0;
      let h2 = 0;
      const bars = s.bars;
      for (let j = 0; j < bars.length; j++) {
        barHash(bm ? bm[j]! : j, bars[j]!);
        h1 = (h1 + H[0]!) | 0;
        h2 = (h2 + H[1]!) | 0;
      }
      rh[k * this.section + 2 * nA] = h1;
      rh[k * this.section + 2 * nA + 1] = h2;
    }
  }

  /**
   * Length of the record-hash array of a state: two per agent, two for the barrier sum; under CTA
   * symmetry one such section more per CTA permutation (the records and barrier sum of its image).
   */
  rhLength(): number {
    return this.section * (1 + this.an.cta.perms.length);
  }

  /**
   * Updates the barrier sums in `rh` (the last two entries of each section) from state `s` to its
   * successor `t`: the sum over barriers of a 64-bit hash of (key, barrier) changes only for the
   * barriers the step copied (successors share the barriers they leave unchanged, see `cloneFor`).
   */
  barSum(s: MachineState, t: MachineState, rh: Int32Array): void {
    const sb = s.bars;
    const tb = t.bars;
    if (sb === tb) return;
    const perms = this.an.cta.perms;
    for (let k = 0; k <= perms.length; k++) {
      const bm = k ? perms[k - 1]!.bar : null;
      const i = (k + 1) * this.section - 2;
      let h1 = rh[i]!;
      let h2 = rh[i + 1]!;
      for (let j = 0; j < tb.length; j++) {
        const a = sb[j]!;
        const b = tb[j]!;
        if (a === b) continue;
        const key = bm ? bm[j]! : j;
        barHash(key, a);
        h1 = (h1 - H[0]!) | 0;
        h2 = (h2 - H[1]!) | 0;
        barHash(key, b);
        h1 = (h1 + H[0]!) | 0;
        h2 = (h2 + H[1]!) | 0;
      }
      rh[i] = h1;
      rh[i + 1] = h2;
    }
  }

  /**
   * Canonical 64-bit hash of (state, extra) from the agents' record hashes `rh`, as two uint32 in
   * `out`. Equal for states that differ only in async ids and issue times, the interleaving of
   * different issuers' operations in the in-flight list, the identities of interchangeable
   * agents (a group's record hashes are sorted) and, under CTA symmetry, a permutation of the
   * cluster's CTA ranks (the least of the images' hashes, each from its section of `rh`).
   */
  combine(s: MachineState, x: Extra, rh: Int32Array, out: Uint32Array): void {
    this.combineAt(s.named, s.clusterDone, s.mem, x.tghosts, x.esc, x.pub, x.rp, rh, 0, out);
    const perms = this.an.cta.perms;
    const io = this.imageOut;
    for (let k = 0; k < perms.length; k++) {
      const t = imageTail(this.an, perms[k]!, s, x);
      this.combineAt(t.named, s.clusterDone, s.mem, t.tghosts, t.esc, t.pub, x.rp, rh, (k + 1) * this.section, io);
      if (io[0]! < out[0]! || (io[0] === out[0] && io[1]! < out[1]!)) {
        out[0] = io[0]!;
        out[1] = io[1]!;
      }
    }
  }

  /** {@link combine} of one section (`off`) of `rh` with the state's shared tail as given. */
  private combineAt(named: NamedBarrier[], clusterDone: number[], mem: number[], tghosts: number[] | null, esc: number[] | null,
    pub: number[], rp: number[] | null, rh: Int32Array, off: number, out: Uint32Array): void {
    const an = this.an;
    const nA = this.p.agents.length;
    const r = off ? rh.subarray(off) : rh;
    let h1 = 0x6a09e667 | 0;
    let h2 = 0xbb67ae85 | 0;
    for (let a = 0; a < nA; a++) {
      if (an.groupOf[a]! >= 0) continue;
      h1 = mix1(h1, r[2 * a]!);
      h2 = mix2(h2, r[2 * a + 1]!);
    }
    const groups = an.groups;
    for (let gi = 0; gi < groups.length; gi++) {
      const ag = groups[gi]!.agents;
      if (this.gidx.length < ag.length) this.gidx = new Int32Array(2 * ag.length);
      const idx = this.gidx;
      sortByRecord(ag, r, idx, 0);
      for (let i = 0; i < ag.length; i++) {
        const v = idx[i]!;
        h1 = mix1(h1, r[2 * v]!);
        h2 = mix2(h2, r[2 * v + 1]!);
      }
      h1 = (h1 + 0x3c6ef372) | 0; // group separator
    }
    this.n = 0;
    // The barriers, as the order-independent sum of per-barrier hashes (incremental, see barSum).
    this.put(r[2 * nA]!);
    this.put(r[2 * nA + 1]!);
    if (an.usesNamed) for (const nb of named) {
      this.put(nb.arrived);
      this.put(nb.gen);
      this.put(nb.count);
      this.put(nb.site);
      this.put(nb.asite);
    }
    for (const c of clusterDone) this.put(c);
    this.putMem(mem);
    this.putGhosts(tghosts, null);
    if (an.trackProxy) this.putGhosts(esc, null);
    for (let j = 0; j < pub.length; j++) this.put(pub[j]!);
    if (an.trackRelaxed) this.putRelaxed(rp, null);
    mixRange(this.scratch, 0, this.n, h1, h2);
    h1 = H[0]! ^ this.n;
    h2 = H[1]!;
    h1 ^= h1 >>> 16;
    h1 = Math.imul(h1, 0x85ebca6b);
    h1 ^= h1 >>> 13;
    h1 = Math.imul(h1, 0xc2b2ae35);
    h1 ^= h1 >>> 16;
    h2 ^= h2 >>> 15;
    h2 = Math.imul(h2, 0x2c1b3c6d);
    h2 ^= h2 >>> 12;
    h2 = Math.imul(h2, 0x297a2d39);
    h2 ^= h2 >>> 15;
    out[0] = h1 >>> 0;
    out[1] = (h2 >>> 0) || 1;
  }

  /** Canonical 64-bit hash of (state, extra) computed from scratch (see {@link combine}); `rh` receives the records. */
  hash(s: MachineState, x: Extra, out: Uint32Array, rh: Int32Array = new Int32Array(this.rhLength())): void {
    this.records(s, x, rh);
    this.combine(s, x, rh, out);
  }
}

export { Visited } from './visited.js';
export { sortByRecord } from './hash-mix.js';
