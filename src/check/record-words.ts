/**
 * The words of a machine state's records for the checker's encodings (codec.ts): an agent record
 * (position, status, group counters, TMEM, the frame's live slots, tokens), an in-flight operation
 * (with or without its id and issue time), the checker's per-agent lists (ghosts, dirty accesses,
 * commit pairs, the memory-model detector's entries) and the memory cells of values, written into
 * one growable scratch array. Members of a symmetry group have `instance`, `warp` and `warpgroup`
 * and their private buffers abstracted; while a CTA permutation's image is written, keys are renamed
 * by the permutation.
 */
import type { AgentState, AsyncOp } from '../machine/machine.js';
import { BUILTINS, WARP_SLOT, WARPGROUP_SLOT } from '../machine/program.js';
import type { SrcLoc } from '../kernel/ir.js';
import type { Analysis } from './analysis.js';
import type { CtaPerm } from './cta-symmetry.js';
import { kindIx, putWide, REMOTE_IX } from './state-decode.js';
import { checkFields, OP_FIELDS } from './state-buf.js';

/**
 * Writes records as int32 words into {@link scratch} (`n` words so far); the base of `Codec`, which
 * stores the words (concrete encoding) or hashes them (record hashes).
 */
export class RecordWords {
  protected scratch = new Int32Array(4096);
  protected n = 0;
  private opChecked = false;
  /** The location index {@link putOp} looked up last (ops of one instruction share their location). */
  private lastLoc: SrcLoc | null = null;
  private lastLocIx = -1;
  /** CTA symmetry (cta-symmetry.ts) is on: reads and commit targets are hashed as sets. */
  private readonly sets: boolean;
  /** While an image record is written: the permutation that renames keys, and the image agent's frame (builtins). */
  protected ren: CtaPerm | null = null;
  protected renOwn: number[] | null = null;

  constructor(readonly an: Analysis) {
    this.sets = an.cta.perms.length > 0;
  }

  protected put(x: number): void {
    if (this.n >= this.scratch.length) {
      const d = new Int32Array(this.scratch.length * 2);
      d.set(this.scratch);
      this.scratch = d;
    }
    this.scratch[this.n++] = x;
  }

  protected room(k: number): Int32Array {
    if (this.n + k > this.scratch.length) {
      let size = this.scratch.length * 2;
      while (size < this.n + k) size *= 2;
      const d = new Int32Array(size);
      d.set(this.scratch.subarray(0, this.n));
      this.scratch = d;
    }
    return this.scratch;
  }

  /** The memory cells of values (machine/values.ts), each one word or WIDE and two (nothing for a program without values). */
  protected putMem(mem: readonly number[]): void {
    if (!mem.length) return;
    const sc = this.room(3 * mem.length);
    let n = this.n;
    for (let j = 0; j < mem.length; j++) n = putWide(sc, n, mem[j]!);
    this.n = n;
  }

  /**
   * Writes agent record `ag`; `sym`: a member of a symmetry group (builtins left out); `live`: its
   * live slots per pc (Analysis.rel): only those frame slots of its pc are written (the others are
   * known from the pc and the warp, warp-relative.ts, or dead, dead-slots.ts; {@link decode} restores them).
   */
  protected putAgent(ag: AgentState, sym: boolean, live: readonly (Int32Array | undefined)[] | null): void {
    const f = ag.frame;
    const sc = this.room(18 + 3 * f.length);
    let n = this.n;
    sc[n++] = ag.pc;
    sc[n++] = ag.status === 'run' ? 0 : ag.status === 'done' ? 1 : 2;
    sc[n++] = ag.sub;
    sc[n++] = ag.wgGroup;
    sc[n++] = ag.bulkGroup;
    sc[n++] = ag.cpGroup;
    sc[n++] = ag.clusterRound;
    sc[n++] = ag.tcIssued;
    sc[n++] = ag.tcDone;
    sc[n++] = ag.wgIssued;
    sc[n++] = ag.wgDone;
    sc[n++] = ag.lastArrive;
    sc[n++] = ag.tmemHeld;
    sc[n++] = ag.tmemFreed;
    sc[n++] = ag.tmemRelinquished;
    sc[n++] = ag.tcLdUnwaited;
    sc[n++] = f.length;
    // Frame values are exact up to ±(2^53 − 1). Members of a symmetry group differ only in the
    // builtins `instance`, `warp` and `warpgroup`, which their code does not read (sym-groups.ts).
    // A CTA permutation's image (this.ren) carries its image agent's builtins (this.renOwn).
    const own = this.renOwn;
    const lv = live ? live[ag.pc] : undefined;
    if (lv) {
      // Builtins are kept only where dead-slots.ts found them live (warp-relative.ts knows them):
      // abstracted and renamed as in a whole frame.
      let j = 0;
      for (; j < lv.length && lv[j]! < BUILTINS.length; j++) {
        const x = lv[j]!;
        n = putWide(sc, n, sym && (x === 1 || x === WARP_SLOT || x === WARPGROUP_SLOT) ? 0 : own && x < own.length ? own[x]! : f[x]!);
      }
      for (; j < lv.length; j++) n = putWide(sc, n, f[lv[j]!]!);
    } else for (let j = 0; j < f.length; j++) n = putWide(sc, n, sym && (j === 1 || j === WARP_SLOT || j === WARPGROUP_SLOT) ? 0 : own && j < own.length ? own[j]! : f[j]!);
    if (!ag.tokens) {
      sc[n++] = -1;
      this.n = n;
      return;
    }
    this.n = n;
    const ks = Object.keys(ag.tokens);
    this.put(ks.length);
    for (const k of ks) {
      const t = ag.tokens[Number(k)]!;
      this.put(Number(k));
      this.put(this.ren ? this.ren.bar[t.barrier] ?? t.barrier : t.barrier);
      const sc = this.room(3);
      this.n = putWide(sc, this.n, t.phase);
      this.put(t.pendingBefore);
      this.put(t.txBefore);
      this.put(t.noComplete ? 1 : 0);
    }
  }

  protected putOp(o: AsyncOp, withId: boolean, priv: number[] | null): void {
    if (!this.opChecked) {
      checkFields('in-flight operation', o, OP_FIELDS);
      this.opChecked = true;
    }
    const sc = this.room(24 + (o.reads ? o.reads.length : 0) + (o.targets ? o.targets.length : 0));
    let n = this.n;
    if (withId) {
      sc[n++] = o.id;
      sc[n++] = o.agent;
      sc[n++] = o.issued;
    }
    sc[n++] = kindIx(o.kind);
    const ren = withId ? null : this.ren;
    const buf = ren && o.buf >= 0 ? ren.buf[o.buf]! : o.buf;
    sc[n++] = priv && priv.includes(buf) ? -2 : buf;
    sc[n++] = ren && o.cta >= 0 ? ren.cta[o.cta]! : o.cta;
    sc[n++] = ren && o.bar >= 0 ? ren.bar[o.bar]! : o.bar;
    n = putWide(sc, n, o.bytes); // a copy's size is an exact integer, possibly beyond int32
    n = putWide(sc, n, o.left);
    sc[n++] = o.chunks;
    sc[n++] = o.group;
    sc[n++] = o.count;
    sc[n++] = o.seq;
    sc[n++] = o.remote === null ? 0 : REMOTE_IX.get(o.remote)!;
    if (o.loc !== this.lastLoc) {
      this.lastLoc = o.loc;
      this.lastLocIx = this.an.locIndex.get(o.loc) ?? -1;
    }
    sc[n++] = this.lastLocIx;
    const reads = o.reads;
    // Under CTA symmetry a permutation reorders an operation's reads (σ of cta-symmetry.ts): the
    // record hash takes them, and a commit's targets, as sets (the concrete encoding keeps the order).
    const asSet = this.sets && !withId;
    if (reads) {
      sc[n++] = reads.length;
      const at = n;
      for (let j = 0; j < reads.length; j++) {
        const r = ren && reads[j]! >= 0 ? ren.buf[reads[j]!]! : reads[j]!;
        sc[n++] = priv && priv.includes(r) ? -2 : r;
      }
      if (asSet) sc.subarray(at, n).sort();
    } else sc[n++] = -1;
    const targets = o.targets;
    if (targets) {
      sc[n++] = targets.length;
      const at = n;
      for (let j = 0; j < targets.length; j++) sc[n++] = ren ? ren.bar[targets[j]!]! : targets[j]!;
      if (asSet) sc.subarray(at, n).sort();
    } else sc[n++] = -1;
    this.n = n;
  }

  protected putGhosts(g: number[] | null, priv: number[] | null): void {
    if (!g) {
      this.put(0);
      return;
    }
    this.put(g.length);
    for (const x of g) this.put(priv && priv.includes(x >> 1) ? -2 - (x & 1) : x);
  }

  /** A list of the memory-model detector: its entries' low 24 bits are buffer key × 2 + write (check/relaxed.ts); private buffers abstracted. */
  protected putRelaxed(g: number[] | null, priv: number[] | null): void {
    if (!g) {
      this.put(0);
      return;
    }
    this.put(g.length);
    // Only own and inherited entries name a buffer in their low bits (REL and ACQ entries name a slot or a publisher there).
    for (const x of g) this.put(priv && x >>> 28 <= 1 && priv.includes((x & 0xffffff) >> 1) ? -2 - ((x >>> 24) * 2 + (x & 1)) : x);
  }

  protected putPairs(g: number[] | null, priv: number[] | null): void {
    if (!g) {
      this.put(0);
      return;
    }
    this.put(g.length);
    for (let i = 0; i < g.length; i += 2) {
      this.put(g[i]!);
      const x = g[i + 1]!;
      this.put(priv && priv.includes(x >> 1) ? -2 - (x & 1) : x);
    }
  }
}
