/**
 * The checker data of the memory-model detector (check/relaxed.ts) and its encoding: per agent, its
 * own accesses (with the release fences and the release locations that cover them) and the
 * accesses it inherited unordered; per synchronization location, the accesses published into it
 * (PTX ISA §8.8, §8.9).
 */
import type { Op, SrcLoc } from '../kernel/ir.js';
import type { Program } from '../machine/program.js';
import type { Extra } from './codec.js';
import { NAMED_PER_CTA } from '../machine/state.js';

/**
 * What a kernel needs of the detector: `track` (anything at all), `needRel` (released accesses
 * matter: relaxed or `.cta` waits). `refused`: the kernel has relaxed or `.cta`-scoped operations
 * but its records do not fit ({@link relaxedSize}): nothing is tracked, and the check reports
 * that it gives no verdict on them (check/relaxed.ts `relaxedRefusal`); `site` is the first such
 * operation (null when there is none).
 */
export function relaxedUse(p: Program): { track: boolean; needRel: boolean; refused: boolean; site: SrcLoc | null } {
  let relaxedArrive = false;
  let needRel = false;
  let site: SrcLoc | null = null;
  for (const rc of p.roles) for (const ins of rc.code) {
    if (ins.i !== 'op') continue;
    const op = ins.op;
    const arrive = (op.op === 'mbarrier.arrive' || op.op === 'barrier.cluster.arrive') && op.sem === 'relaxed';
    const rel = (op.op === 'mbarrier.wait' && (op.sem === 'relaxed' || op.scope === 'cta')) || flagSemantics(op)?.weak === true;
    if (arrive) relaxedArrive = true;
    if (rel) needRel = true;
    if ((arrive || rel) && (!site || ins.loc.line < site.line || (ins.loc.line === site.line && ins.loc.col < site.col))) site = ins.loc;
  }
  if (!relaxedSize(p).fits) return { track: false, needRel: false, refused: relaxedArrive || needRel, site };
  return { track: relaxedArrive || needRel, needRel, refused: false, site };
}

/**
 * The largest value plus one that a word of the checker data holds: the words are stored as int32
 * (codec.ts, state-decode.ts), so every entry must stay at most 2^31 − 1.
 */
export const RELAXED_WORD_LIMIT = 2 ** 31;

/**
 * The sizes of the detector's records for `p`: `slots` publication slots (every barrier key, one
 * per cluster round, one per memory cell of values, the named-barrier release location and one per
 * CTA and named-barrier id when the kernel uses named barriers: slot indices 0 .. `slots`),
 * `agents` publishers (and one more: an asynchronous unit), `codes` access codes (buffer key × 2 +
 * write, and the remote-release marker), and `words`, one more than the largest rp entry,
 * (`slots` + 1) × 2 stages × (`agents` + 1) × `codes` × {@link P_BITS} tags and ages (relaxed.ts
 * `enc.rp`). `fits`: `words` ≤ {@link RELAXED_WORD_LIMIT} and `codes` fits the 24 code bits of an
 * ru entry (then the REL and ACQ entries, below 2^28 after their kind, fit too). `words` is
 * computed in doubles: exact up to 2^53 and, past that, rounded upwards of 2^31 all the same, so
 * `fits` is exact at every size.
 */
export function relaxedSize(p: Program): { slots: number; agents: number; codes: number; words: number; fits: boolean } {
  const slots = p.ctas * p.barriersPerCta + p.grid + (p.values ? p.values.init.length : 0) + namedSlots(p);
  const codes = 2 * p.ctas * p.buffersPerCta + 1;
  const agents = p.agents.length;
  const words = (slots + 1) * 2 * (agents + 1) * codes * P_BITS;
  return { slots, agents, codes, words, fits: words <= RELAXED_WORD_LIMIT && codes <= 1 << 24 };
}

/**
 * The publication slots of the named barriers (`bar.sync`, `bar.arrive`, `barrier.sync`), one per
 * CTA and barrier id, after the release location NAMED: none when the kernel has no named barrier.
 */
export function namedSlots(p: Program): number {
  const has = p.roles.some((rc) => rc.code.some((ins) => ins.i === 'op' && (ins.op.op === 'bar.sync' || ins.op.op === 'bar.arrive')));
  return has ? p.ctas * NAMED_PER_CTA : 0;
}

// ru entries: (kind << 28) | (tag << 24) | code, code = buffer key × 2 + (write ? 1 : 0);
// REL entries: (REL << 28) | (slot × C + code) (see {@link Work.release}).
export const OWN = 0;
export const INH = 1;
export const REL = 2;
/** ACQ entries: (ACQ << 28) | (publisher × C + code): the agent acquired that publisher's access of `code` through a release it observed (see {@link Work.inherit}). */
export const ACQ = 3;
/** Own-access tags: not covered by a release fence, covered at cta scope, covered at a wider scope. */
export const U_NONE = 0;
export const U_CTA = 1;
export const U_WIDE = 2;
/** Inherited tags: unordered (a relaxed arrive's), needs an acquire fence (any scope / cluster scope), unordered (a `.cta` acquire of another CTA's release). */
export const G_RELAXED = 0;
export const Q_LOCAL = 1;
export const Q_WIDE = 2;
export const G_SCOPE = 3;
/** The same four for a global flag (a store → the loads that read its value): tags + 4. */
export const FLAG = 4;
/** Any of those eight + 8: received from another participant of a named barrier (relaxed.ts `namedReceive`). */
export const PASSED = 8;
/** rp tags: published without release, released by the barrier's CTA, released by another CTA, released at `.cta` scope (a flag store). */
export const P_NONE = 0;
export const P_LOCAL = 1;
export const P_CROSS = 2;
export const P_CTA = 3;
/** Published by a relaxed arrive without release there, but released on another location (a waiter that acquired that release has it ordered). */
export const P_ELSEWHERE = 4;
/** P_LOCAL / P_CROSS of an agent that may still publish the same accesses as P_ELSEWHERE: a waiter acquiring them records it (ACQ). */
export const P_LOCAL_K = 5;
export const P_CROSS_K = 6;
/**
 * In a named barrier's slot: an inherited entry a participant passes to the others, its inherited
 * tag in the age bits (any other tag there: an access it passes on, see relaxed.ts `namedArrive`).
 */
export const P_NAMED = 7;
/** rp tags take 3 bits; above them, the age of a P_ELSEWHERE / P_*_K entry (see {@link Work.ageAccess}). */
export const P_TAGS = 8;
/** Ages 0 (the publisher's current access of the code) to P_AGES − 1 (that many accesses older, or more). */
export const P_AGES = 8;
export const P_BITS = P_TAGS * P_AGES;
/** An rp entry's tag, and its age. */
export const pTag = (v: number) => v % P_TAGS;
export const pAge = (v: number) => Math.floor(v / P_TAGS) % P_AGES;
/** The rp tags that name one access of their publisher (a waiter's ACQ entry compares their ages). */
const AGED = (tag: number) => tag === P_ELSEWHERE || tag === P_LOCAL_K || tag === P_CROSS_K;

/**
 * What a strong global operation does in the memory model (PTX ISA §8.4, §8.7-§8.8): whether it
 * reads the location (and acquires), writes it (and releases), at which scope; `weak`: `.relaxed`
 * (it reads without acquiring or writes without releasing). Null for other operations, plain
 * `ld.global` / `st.global` included: those are data accesses, ordered by the synchronization
 * around them, never a synchronization themselves.
 */
export function flagSemantics(op: Op): { read: boolean; write: boolean; acquire: boolean; release: boolean; cta: boolean; rmw: boolean; weak: boolean } | null {
  let r: { read: boolean; write: boolean; acquire: boolean; release: boolean; cta: boolean; rmw: boolean };
  switch (op.op) {
    case 'ld.strong': case 'spin.global': r = { read: true, write: false, acquire: op.sem === 'acquire', release: false, cta: op.scope === 'cta', rmw: false }; break;
    case 'st.strong': r = { read: false, write: true, acquire: false, release: op.sem === 'release', cta: op.scope === 'cta', rmw: false }; break;
    case 'atom.global': r = { read: !op.red, write: true, acquire: op.sem === 'acquire' || op.sem === 'acq_rel', release: op.sem === 'release' || op.sem === 'acq_rel', cta: op.scope === 'cta', rmw: true }; break;
    default: return null;
  }
  return { ...r, weak: (r.read && !r.acquire) || (r.write && !r.release) };
}

export const ruKind = (v: number) => v >>> 28;
export const ruTag = (v: number) => (v >>> 24) & 15;
export const ruCode = (v: number) => v & 0xffffff;
export const ru = (kind: number, tag: number, code: number) => (kind << 28) | (tag << 24) | code;

/** A sorted list with `v` (null-safe, never mutates `l`). */
export function withEntry(l: number[] | null, v: number): number[] {
  if (l && l.includes(v)) return l;
  const r = l ? [...l, v] : [v];
  return r.sort((a, b) => a - b);
}

export const locKey = (l?: SrcLoc) => (l ? `${l.file ?? ''}:${l.line}:${l.col}` : '-');

/** The checker data one transition updates (copied on first write). */
export class Work {
  own: (number[] | null)[];
  pub: number[] | null;
  constructor(readonly x: Extra, private readonly enc: Enc) {
    this.own = x.ru;
    this.pub = x.rp;
  }
  setOwn(a: number, l: number[] | null): void {
    if (this.own === this.x.ru) this.own = this.own.slice();
    this.own[a] = l && l.length ? l : null;
  }
  /**
   * Publishes agent `a`'s own accesses into slot `slot`'s open stage, each tag mapped by `tagOf`
   * (-1: not published) from its fence tag and whether an earlier release on this same slot covers
   * it (a release followed by a strong write on the same location is a release pattern, PTX ISA §8.8).
   */
  publish(a: number, slot: number, tagOf: (u: number, rel: boolean) => number): void {
    const l = this.own[a];
    if (!l) return;
    const e = this.enc;
    for (const v of l) {
      if (ruKind(v) !== OWN) continue;
      const code = ruCode(v);
      let tag = tagOf(ruTag(v), l.includes(e.rel(slot, code)));
      // Unreleased here, but released on another location: its waiters may have it ordered.
      if (tag === P_NONE && l.some((x) => ruKind(x) === REL && e.relCode(x) === code)) tag = P_ELSEWHERE;
      if (tag >= 0) this.pub = withEntry(this.pub, e.rp(slot, 0, a, code, tag));
    }
  }
  /** Agent `a` accesses `code`: its newest access of it, covered by no fence and released nowhere yet. */
  access(a: number, code: number): void {
    const l = this.own[a];
    const cur = l?.find((v) => ruKind(v) === OWN && ruCode(v) === code);
    const stale = l?.some((v) => ruKind(v) === REL && this.enc.relCode(v) === code);
    if (cur !== undefined && ruTag(cur) === U_NONE && !stale) return;
    const rest = l ? l.filter((v) => v !== cur && !(ruKind(v) === REL && this.enc.relCode(v) === code)) : null;
    this.setOwn(a, withEntry(rest, ru(OWN, U_NONE, code)));
    this.ageAccess(a, code);
  }
  /**
   * Agent `a` starts a new access of `code` (its previous one was released or fenced): every record
   * of its earlier accesses of `code` grows one access older (saturating at P_AGES − 1), so that a
   * waiter's ACQ entry (the access it acquired) is compared with the access a P_ELSEWHERE entry
   * publishes, not merely with the publisher and the buffer (PTX ISA §8.8: a release orders only
   * the accesses before it). An ACQ entry older than every entry left of that access is dropped:
   * the entries published later are newer than it, so it can never order one of them.
   */
  private ageAccess(a: number, code: number): void {
    const e = this.enc;
    let live = -1;
    if (this.pub) {
      let next: number[] | null = null;
      for (let i = 0; i < this.pub.length; i++) {
        const v = this.pub[i]!;
        if (e.agent(v) !== a || e.code(v) !== code || !AGED(pTag(v))) continue;
        const age = Math.min(pAge(v) + 1, P_AGES - 1);
        live = Math.max(live, age);
        if (age === pAge(v)) continue;
        next ??= this.pub.slice();
        next[i] = v + P_TAGS;
      }
      if (next) this.pub = [...new Set(next)].sort((x, y) => x - y);
    }
    const base = e.acq(a, code, 0);
    for (let b = 0; b < this.own.length; b++) {
      const l = this.own[b];
      if (!l || !l.some((v) => ruKind(v) === ACQ && e.acqBase(v) === base)) continue;
      const next: number[] = [];
      for (const v of l) {
        if (ruKind(v) !== ACQ || e.acqBase(v) !== base) next.push(v);
        else if (Math.min(e.acqAge(v) + 1, P_AGES - 1) <= live) next.push(e.acq(a, code, Math.min(e.acqAge(v) + 1, P_AGES - 1)));
      }
      this.setOwn(b, next.sort((x, y) => x - y));
    }
  }
  /**
   * Agent `a` releases on slot `slot` (a release arrive, a cluster arrive, a release store of a
   * flag; the slot `NAMED` of ./relaxed.ts for a named barrier): its accesses so far are ordered before what
   * synchronizes with that location, and only that. With `keep` (a relaxed arrive or store may
   * follow), each stays, marked released on `slot`; without, they are forgotten (nothing that could
   * publish them unreleased remains).
   */
  release(a: number, slot: number, keep: boolean): void {
    const l = this.own[a];
    if (!l) return;
    if (!keep) {
      if (l.some((v) => ruKind(v) === OWN || ruKind(v) === REL)) this.setOwn(a, l.filter((v) => ruKind(v) === INH || ruKind(v) === ACQ));
      return;
    }
    let next: number[] = l;
    for (const v of l) if (ruKind(v) === OWN) next = withEntry(next, this.enc.rel(slot, ruCode(v)));
    if (next !== l) this.setOwn(a, next);
  }
  /** Drops agent `a`'s entries of kind `kind` (its own accesses at a release, the inherited ones at a full acquire). */
  clear(a: number, kind: number): void {
    const l = this.own[a];
    if (l && l.some((v) => ruKind(v) === kind)) this.setOwn(a, l.filter((v) => ruKind(v) !== kind));
  }
  /**
   * The open stage of `slot` becomes its last completed one; the older one is dropped, or with
   * `merge` kept (an atomic read-modify-write continues the release sequence of the store it
   * read, PTX ISA §8.8).
   */
  complete(slot: number, merge = false): void {
    if (!this.pub) return;
    const e = this.enc;
    const keep: number[] = [];
    for (const v of this.pub) {
      if (e.slot(v) !== slot) keep.push(v);
      else if (e.stage(v) === 0) keep.push(v + e.STAGE);
      else if (merge && !this.pub.includes(v - e.STAGE)) keep.push(v);
    }
    keep.sort((a, b) => a - b);
    this.pub = keep.length ? keep : null;
  }
  /**
   * Agent `a` observes the last completed stage of `slot`: tag `P_*` → inherited tag (or -1:
   * nothing). A release it acquires (-1 for a `P_*_K` entry) is recorded as ACQ, and an access it
   * has acquired that way is not inherited again as unreleased from a relaxed arrive on another
   * barrier (`P_ELSEWHERE`): it is ordered, through the first release, before what follows the
   * acquire (PTX ISA §8.9, causality order). Returns whether a remote release's marker was there.
   */
  inherit(a: number, slot: number, tagOf: (ptag: number, publisher: number) => number): boolean {
    let marked = false;
    if (!this.pub) return marked;
    const e = this.enc;
    let l: number[] | null = this.own[a]!;
    const seen = this.pub.filter((v) => e.slot(v) === slot && e.stage(v) === 1 && e.agent(v) !== a); // its own accesses: program order
    // First the releases it acquires (an unreleased copy inherited by an earlier wait, a relaxed
    // arrive observed first, is ordered now), then what it inherits from this phase.
    for (const v of seen) {
      const ptag = pTag(v);
      if (e.code(v) === e.MARK || (ptag !== P_LOCAL_K && ptag !== P_CROSS_K)) continue;
      if (tagOf(ptag === P_LOCAL_K ? P_LOCAL : P_CROSS, e.agent(v)) >= 0) continue;
      const code = e.code(v);
      const stale = (x: number) => ruKind(x) === INH && ruTag(x) % PASSED === G_RELAXED && ruCode(x) === code;
      if (l?.some(stale)) l = l.filter((x) => !stale(x));
      // The access it acquired, by its age: one ACQ entry per publisher and code, the newest.
      const acq = e.acq(e.agent(v), code, pAge(v));
      const base = e.acqBase(acq);
      if (l?.some((x) => ruKind(x) === ACQ && e.acqBase(x) === base && e.acqAge(x) <= pAge(v))) continue;
      l = withEntry(l ? l.filter((x) => !(ruKind(x) === ACQ && e.acqBase(x) === base)) : null, acq);
    }
    for (const v of seen) {
      const code = e.code(v);
      if (code === e.MARK) {
        marked = true;
        continue;
      }
      const ptag = pTag(v);
      const pa = e.agent(v);
      // Ordered when it acquired this access, or a newer one of the same publisher (program order).
      const base = e.acq(pa, code, 0);
      if (ptag === P_ELSEWHERE && l?.some((x) => ruKind(x) === ACQ && e.acqBase(x) === base && e.acqAge(x) <= pAge(v))) continue;
      const tag = tagOf(ptag === P_ELSEWHERE ? P_NONE : ptag === P_LOCAL_K ? P_LOCAL : ptag === P_CROSS_K ? P_CROSS : ptag, pa);
      if (tag >= 0) l = withEntry(l, ru(INH, tag, code));
    }
    if (l !== this.own[a]) this.setOwn(a, l);
    return marked;
  }
}

/** The rp encoding of one program (see `relaxedDetector` of ./relaxed.ts). */
export interface Enc {
  rp(slot: number, stage: number, agent: number, code: number, tag: number): number;
  slot(v: number): number;
  stage(v: number): number;
  agent(v: number): number;
  code(v: number): number;
  STAGE: number;
  MARK: number;
  /** The REL entry of `code` released on `slot`, and the code of a REL entry. */
  rel(slot: number, code: number): number;
  relCode(v: number): number;
  /** The ACQ entry of `publisher`'s access of `code` that is `age` accesses older than its current one; an ACQ entry's age, and its entry of age 0. */
  acq(publisher: number, code: number, age: number): number;
  acqAge(v: number): number;
  acqBase(v: number): number;
}
/** Whether `op` can publish accesses that no release covers: a `.relaxed` arrive or a weak store of a flag (PTX ISA §8.8). */
function publishesUnreleased(op: Op): boolean {
  if ((op.op === 'mbarrier.arrive' || op.op === 'barrier.cluster.arrive') && op.sem === 'relaxed') return true;
  const fl = flagSemantics(op);
  return fl !== null && fl.write && !fl.release;
}

/**
 * Per role, per instruction: whether a `.relaxed` arrive or a weak flag store can still run from
 * there (a backward fixpoint over the role's jumps). After a release with none ahead, the agent's
 * accesses can reach others only through releases, so {@link Work.release} forgets them, as
 * before the per-location marks (the states of kernels that use relaxed arrives only at their
 * start stay as they were).
 */
export function relaxedAhead(p: Program): boolean[][] {
  return p.roles.map((rc) => {
    const n = rc.code.length;
    const ahead = new Array<boolean>(n + 1).fill(false);
    for (let changed = true; changed;) {
      changed = false;
      for (let pc = n - 1; pc >= 0; pc--) {
        const ins = rc.code[pc]!;
        let v = ins.i === 'op' && publishesUnreleased(ins.op);
        if (ins.i === 'jmp') v = ahead[ins.to]!;
        else if (ins.i === 'jz') v = ahead[pc + 1]! || ahead[ins.to]!;
        else if (ins.i !== 'end') v ||= ahead[pc + 1]!;
        if (v && !ahead[pc]) {
          ahead[pc] = true;
          changed = true;
        }
      }
    }
    return ahead;
  });
}
