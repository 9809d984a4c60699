/**
 * The memory-model detector of the search: races that no interleaving shows, because the
 * synchronization that orders two accesses in time orders nothing in memory (PTX ISA §8.8,
 * §9.7.13.3, §9.7.13.4, §9.7.13.15.16; docs/CHECK.md, "Memory model"):
 *
 * - a `.relaxed` arrive (`mbarrier.arrive.relaxed`, `barrier.cluster.arrive.relaxed`) releases
 *   nothing: the arriving agent's earlier accesses reach the waiters only through a release fence
 *   (`fence.acq_rel` / `fence.sc` / `fence.release`) before it, whose scope includes them;
 * - a `.relaxed` wait acquires nothing: the accesses after it are ordered after the phase's
 *   releases only once an acquire fence of a wide enough scope follows it (fence-fence when both
 *   sides are relaxed);
 * - an explicit `.cta`-scoped acquire is not morally strong with a release by another CTA's thread
 *   (a remote arrive), so it does not synchronize with it (`scope`).
 *
 * The checker data it keeps (in {@link Extra}): per agent `ru`, its generic accesses since its last
 * release (with the scope of the release fence that covered them, if any) and the accesses it must
 * not conflict with (inherited from relaxed phases); and `rp`, per barrier phase (open, last
 * completed) and per cluster-barrier round, the accesses published into it with how they were
 * released. Active only when the kernel has a relaxed arrive or wait or an explicit `.cta` wait, so
 * other kernels pay nothing. Conflicts are checked for the agent's own generic accesses and for
 * the accesses of the asynchronous operations it issues. Approximations (false negatives, never
 * false reports in the patterns the tests cover): only generic accesses are published; an agent's
 * accesses are forgotten at its next release of any kind; inherited
 * entries are forgotten at the agent's next `bar.sync` or `barrier.cluster.wait`; a remote arrive
 * publishes into the phase open at its issue; asynchronous units' signals (TMA complete_tx,
 * tcgen05.commit) count as releases of the barrier's own CTA.
 */
import type { Choice, Machine, MachineState } from '../machine/machine.js';
import type { MachineEvent } from '../machine/events.js';
import type { Op, SrcLoc } from '../kernel/ir.js';
import type { Program } from '../machine/program.js';
import { accessesOf, pointAccess } from '../machine/ops/index.js';
import { kindLabel } from './ghosts.js';
import type { Extra } from './codec.js';
import { keyOf, type RawHazard } from './engine.js';

/** What a kernel needs of the detector: `track` (anything at all), `needRel` (released accesses matter: relaxed or `.cta` waits). */
export function relaxedUse(p: Program): { track: boolean; needRel: boolean } {
  let relaxedArrive = false;
  let needRel = false;
  for (const rc of p.roles) for (const ins of rc.code) {
    if (ins.i !== 'op') continue;
    const op = ins.op;
    if ((op.op === 'mbarrier.arrive' || op.op === 'barrier.cluster.arrive') && op.sem === 'relaxed') relaxedArrive = true;
    if (op.op === 'mbarrier.wait' && (op.sem === 'relaxed' || op.scope === 'cta')) needRel = true;
    if (flagSemantics(op)?.weak) needRel = true;
  }
  const slots = p.ctas * p.barriersPerCta + p.grid + (p.values ? p.values.init.length : 0);
  const codes = 2 * p.ctas * p.buffersPerCta + 1;
  // The checker data must fit in 32-bit words (codec.ts); larger kernels go untracked.
  if (slots * 2 * (p.agents.length + 1) * codes * 4 >= 2 ** 31 || codes >= 1 << 24) return { track: false, needRel: false };
  return { track: relaxedArrive || needRel, needRel };
}

// ru entries: (kind << 28) | (tag << 24) | code, code = buffer key × 2 + (write ? 1 : 0).
const OWN = 0;
const INH = 1;
/** Own-access tags: not covered by a release fence, covered at cta scope, covered at a wider scope. */
const U_NONE = 0;
const U_CTA = 1;
const U_WIDE = 2;
/** Inherited tags: unordered (a relaxed arrive's), needs an acquire fence (any scope / cluster scope), unordered (a `.cta` acquire of another CTA's release). */
const G_RELAXED = 0;
const Q_LOCAL = 1;
const Q_WIDE = 2;
const G_SCOPE = 3;
/** The same four for a global flag (a store → the loads that read its value): tags + 4. */
const FLAG = 4;
/** rp tags: published without release, released by the barrier's CTA, released by another CTA, released at `.cta` scope (a flag store). */
const P_NONE = 0;
const P_LOCAL = 1;
const P_CROSS = 2;
const P_CTA = 3;

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

const ruKind = (v: number) => v >>> 28;
const ruTag = (v: number) => (v >>> 24) & 15;
const ruCode = (v: number) => v & 0xffffff;
const ru = (kind: number, tag: number, code: number) => (kind << 28) | (tag << 24) | code;

/** A sorted list with `v` (null-safe, never mutates `l`). */
function withEntry(l: number[] | null, v: number): number[] {
  if (l && l.includes(v)) return l;
  const r = l ? [...l, v] : [v];
  return r.sort((a, b) => a - b);
}

const locKey = (l?: SrcLoc) => (l ? `${l.file ?? ''}:${l.line}:${l.col}` : '-');

/** The checker data one transition updates (copied on first write). */
class Work {
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
  /** Publishes agent `a`'s own accesses into slot `slot`'s open stage, each tag mapped by `tagOf` (-1: not published). */
  publish(a: number, slot: number, tagOf: (u: number) => number): void {
    const l = this.own[a];
    if (!l) return;
    for (const v of l) {
      if (ruKind(v) !== OWN) continue;
      const tag = tagOf(ruTag(v));
      if (tag >= 0) this.pub = withEntry(this.pub, this.enc.rp(slot, 0, a, ruCode(v), tag));
    }
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
  /** Agent `a` observes the last completed stage of `slot`: tag `P_*` → inherited tag (or -1: nothing). Returns whether a remote release's marker was there. */
  inherit(a: number, slot: number, tagOf: (ptag: number, publisher: number) => number): boolean {
    let marked = false;
    if (!this.pub) return marked;
    const e = this.enc;
    let l: number[] | null = this.own[a]!;
    for (const v of this.pub) {
      if (e.slot(v) !== slot || e.stage(v) !== 1 || e.agent(v) === a) continue; // its own accesses: program order
      const code = e.code(v);
      if (code === e.MARK) {
        marked = true;
        continue;
      }
      const tag = tagOf(v & 3, e.agent(v));
      if (tag >= 0) l = withEntry(l, ru(INH, tag, code));
    }
    if (l !== this.own[a]) this.setOwn(a, l);
    return marked;
  }
}

/** The rp encoding of one program (see {@link relaxedDetector}). */
interface Enc {
  rp(slot: number, stage: number, agent: number, code: number, tag: number): number;
  slot(v: number): number;
  stage(v: number): number;
  agent(v: number): number;
  code(v: number): number;
  STAGE: number;
  MARK: number;
}

/**
 * The detector for program `p` driving machine `m`: a function from one transition (pre-state
 * `s`, post-state `t`, choice `c`, the step's events) and the checker data `x` to the updated
 * data, reporting each race and scope hazard it finds through `report` (`extra`: the lazy trace
 * marker of the search). Returns null when the kernel needs no tracking.
 */
export function relaxedDetector(
  p: Program, m: Machine, report: (h: RawHazard) => void, extra: Choice[],
): ((s: MachineState, t: MachineState, c: Choice, events: readonly MachineEvent[], x: Extra, stateId: number) => Extra) | null {
  const use = relaxedUse(p);
  if (!use.track) return null;
  const needRel = use.needRel;
  const nBars = p.ctas * p.barriersPerCta;
  const C = 2 * p.ctas * p.buffersPerCta + 1;
  /** Code of the marker a remote release leaves in a phase (the `scope` check of `.cta` waits). */
  const MARK = C - 1;
  /** rp entry: slot, stage (0 open, 1 last completed), publishing agent (A1 − 1: an asynchronous unit), code, tag. */
  const A1 = p.agents.length + 1;
  const enc: Enc = {
    rp: (slot, stage, agent, code, tag) => (((slot * 2 + stage) * A1 + agent) * C + code) * 4 + tag,
    code: (v) => Math.floor(v / 4) % C,
    agent: (v) => Math.floor(Math.floor(v / 4) / C) % A1,
    stage: (v) => Math.floor(Math.floor(Math.floor(v / 4) / C) / A1) % 2,
    slot: (v) => Math.floor(Math.floor(Math.floor(v / 4) / C) / A1 / 2),
    STAGE: 4 * C * A1,
    MARK,
  };
  const rp = enc.rp;

  const barCta = (k: number) => Math.floor(k / p.barriersPerCta);
  const name = (a: number) => p.agents[a]!.name;
  /** Lines of the relaxed arrives and waits (related locations of the reports). */
  const sites = (pred: (op: Op) => boolean): SrcLoc[] => {
    const out: SrcLoc[] = [];
    for (const rc of p.roles) for (const ins of rc.code) if (ins.i === 'op' && pred(ins.op)) out.push(ins.loc);
    return out;
  };
  const relaxedArrives = sites((op) => (op.op === 'mbarrier.arrive' || op.op === 'barrier.cluster.arrive') && op.sem === 'relaxed');
  const relaxedWaits = sites((op) => op.op === 'mbarrier.wait' && op.sem === 'relaxed');
  const ctaWaits = sites((op) => op.op === 'mbarrier.wait' && op.scope === 'cta');
  const flagSites = sites((op) => flagSemantics(op)?.weak === true);

  /** An agent's step: its accesses, fences, arrives, barriers and the operations it issues; returns the wait it executed, if any. */
  const agentStep = (w: Work, s: MachineState, t: MachineState, a: number, stateId: number): Extract<Op, { op: 'mbarrier.wait' }> | null => {
    const ins = m.nextOp(s, a);
    if (!ins) return null;
    let wait: Extract<Op, { op: 'mbarrier.wait' }> | null = null;
    const op = ins.op;
    const ag = s.agents[a]!;
    const info = p.agents[a]!;
    const acc = pointAccess(ins.opc);
    if (acc !== undefined) {
      const buf = keyOf(ins.buf!, ag.frame);
      if (buf >= 0) {
        const code = buf * 2 + (acc === 'w' ? 1 : 0);
        for (const v of w.own[a] ?? []) {
          if (ruKind(v) !== INH || ruCode(v) >> 1 !== buf || (acc === 'r' && (ruCode(v) & 1) === 0)) continue;
          raceFound(stateId, a, ins.loc, ins.text, buf, ruCode(v) & 1, ruTag(v));
        }
        const l = w.own[a];
        const cur = l?.find((v) => ruKind(v) === OWN && ruCode(v) === code);
        if (cur === undefined || ruTag(cur) !== U_NONE) w.setOwn(a, withEntry(cur === undefined ? l ?? null : l!.filter((v) => v !== cur), ru(OWN, U_NONE, code)));
      }
    } else if (op.op === 'fence') {
      const wide = op.scope !== 'cta';
      const l = w.own[a];
      if (l) {
        const next: number[] = [];
        for (const v of l) {
          if (ruKind(v) === OWN) next.push(op.sem === 'acquire' ? v : ru(OWN, Math.max(ruTag(v), wide ? U_WIDE : U_CTA), ruCode(v)));
          else if (op.sem === 'release' || !((ruTag(v) & 3) === Q_LOCAL || ((ruTag(v) & 3) === Q_WIDE && wide))) next.push(v);
        }
        next.sort((u, w) => u - w);
        if (next.length !== l.length || next.some((v, i) => v !== l[i])) w.setOwn(a, next);
      }
    } else if (op.op === 'mbarrier.arrive') {
      const k = keyOf(ins.bar!, ag.frame);
      if (k >= 0 && k < nBars) {
        const cross = barCta(k) !== info.cta;
        if (op.sem === 'relaxed') {
          // Only what a release fence covered is released, and a cta-scope fence not to another CTA.
          w.publish(a, k, (u) => (u === U_NONE || (u === U_CTA && cross) ? P_NONE : needRel ? (cross ? P_CROSS : P_LOCAL) : -1));
        } else {
          if (needRel) {
            w.publish(a, k, () => (cross ? P_CROSS : P_LOCAL));
            if (cross) w.pub = withEntry(w.pub, rp(k, 0, a, MARK, P_CROSS));
          }
          w.clear(a, OWN);
        }
      }
    } else if (op.op === 'barrier.cluster.arrive') {
      if (op.sem === 'relaxed') w.publish(a, nBars + info.cluster, (u) => (u === U_WIDE ? -1 : P_NONE));
      else w.clear(a, OWN);
    } else if (op.op === 'bar.sync') {
      if (ag.sub < 0) w.clear(a, OWN);
      else w.clear(a, INH);
    } else if (op.op === 'bar.arrive') {
      w.clear(a, OWN);
    } else if (op.op === 'barrier.cluster.wait') {
      w.clear(a, INH);
      w.inherit(a, nBars + info.cluster, (ptag) => (ptag === P_NONE ? G_RELAXED : -1));
    } else if (op.op === 'mbarrier.wait') {
      wait = op;
    }
    // A strong global operation synchronizes (or not) through its location.
    const fl = flagSemantics(op);
    if (fl) flagStep(w, s, t, a, ins.buf!, op.op === 'spin.global', fl);
    // Asynchronous operations this step issued (a TMA overwrite, MMA operand reads) start their
    // accesses here, ordered after what the issuer acquired, and no more.
    if (w.own[a]) for (const o of t.inflight) {
      if (o.agent !== a || s.inflight.some((x) => x.id === o.id)) continue;
      for (const x of accessesOf(o)) for (const v of w.own[a] ?? []) {
        if (ruKind(v) !== INH || ruCode(v) >> 1 !== x.buf || (x.rw === 'r' && (ruCode(v) & 1) === 0)) continue;
        raceFound(stateId, a, o.loc, `${kindLabel(o.kind)} ${x.rw === 'w' ? 'writing' : 'reading'} it`, x.buf, ruCode(v) & 1, ruTag(v), x.rw === 'w');
      }
    }
    return wait;
  };

  /**
   * A global operation of agent `a` on its location's slot (after the barriers and the cluster
   * rounds): a read observes the last store's publications (the value it reads is that store's),
   * acquiring them, or with a plain or `.relaxed` load needing an acquire fence after it; a store
   * publishes the agent's own accesses, released (and forgotten) when it is `.release`, else only
   * what a release fence covered. A `.cta`-scoped release or acquire does not synchronize with
   * another CTA's thread (PTX ISA §8.7: morally strong needs each scope to include the other).
   */
  function flagStep(w: Work, s: MachineState, t: MachineState, a: number, bufOf: (f: number[]) => number,
    spin: boolean, fl: NonNullable<ReturnType<typeof flagSemantics>>): void {
    const ag = s.agents[a]!;
    if (spin && t.agents[a]!.pc === ag.pc) return; // still spinning: the failed loads observe nothing
    const key = keyOf(bufOf, ag.frame);
    if (key < 0) return;
    const slot = nBars + p.grid + key;
    const mine = p.agents[a]!.cta;
    if (fl.read) {
      w.inherit(a, slot, (ptag, publisher) => {
        const cross = publisher >= p.agents.length || p.agents[publisher]!.cta !== mine;
        if (ptag === P_NONE) return FLAG + G_RELAXED;
        if (cross && (ptag === P_CTA || fl.cta)) return FLAG + G_SCOPE;
        if (fl.acquire) return -1;
        return FLAG + (cross ? Q_WIDE : Q_LOCAL);
      });
    }
    if (fl.write) {
      if (fl.release) {
        w.publish(a, slot, () => (fl.cta ? P_CTA : P_LOCAL));
        w.clear(a, OWN);
      } else w.publish(a, slot, (u) => (u === U_NONE ? P_NONE : u === U_CTA ? P_CTA : P_LOCAL));
      w.complete(slot, fl.rmw);
    }
  }

  /** Reports a memory-model race of agent `a`'s access (or of an operation it issued) with an inherited entry of tag `tag`. */
  function raceFound(stateId: number, a: number, loc: SrcLoc, text: string, buf: number, otherW: number, tag: number, write = text.startsWith('st.')) {
    const bufName = p.bufferName(buf);
    const what = `${name(a)} ${write ? 'writes' : 'reads'} ${bufName} (${text})`;
    const other = otherW ? 'write' : 'read';
    if (tag >= FLAG) return flagRace(stateId, a, loc, what, bufName, buf, other, tag - FLAG);
    const why = tag === G_RELAXED
      ? `the ${other} of ${bufName} by another agent reached this agent's wait only through a .relaxed arrive, and no release fence before that arrive covers it: a relaxed arrive releases nothing`
      : tag === G_SCOPE
        ? `the ${other} of ${bufName} in another CTA was released to a phase this agent observed with an explicit .cta-scoped wait, which does not synchronize with another CTA's release`
        : `this agent observed the phase that released the ${other} of ${bufName} with a .relaxed wait and no acquire fence${tag === Q_WIDE ? ' of cluster scope' : ''} (fence.acq_rel${tag === Q_WIDE ? '.cluster' : ''}) followed it: a relaxed wait acquires nothing`;
    const fix = tag === G_RELAXED
      ? 'fix: make the arrive .release, or put fence.acq_rel (at a scope that includes the waiter) before the relaxed arrive.'
      : tag === G_SCOPE ? 'fix: wait with .acquire.cluster (or without a scope).' : `fix: make the wait .acquire, or put fence.acq_rel.${tag === Q_WIDE ? 'cluster' : 'cta'} after it.`;
    report({
      kind: 'race', severity: 'error', key: `${p.bufferOf(buf).info.name}|${locKey(loc)}|relaxed${tag}`,
      message: `${what}, but ${why}`,
      subject: bufName, state: stateId, extra, details: ['PTX ISA §8.8 (release and acquire patterns), §9.7.13.3, §9.7.13.4, §9.7.13.15.16.', fix],
      locs: [loc, ...(tag === G_RELAXED ? relaxedArrives : tag === G_SCOPE ? ctaWaits : relaxedWaits)],
    });
  }

  /** {@link raceFound} for an access ordered after another agent's only through a global flag. */
  function flagRace(stateId: number, a: number, loc: SrcLoc, what: string, bufName: string, buf: number, other: string, tag: number) {
    const why = tag === G_RELAXED
      ? `the ${other} of ${bufName} by another agent reached this agent only through a global store that releases nothing (a .relaxed st, red or atom, with no release fence before it covering the ${other})`
      : tag === G_SCOPE
        ? `the ${other} of ${bufName} in another CTA reached this agent through a global flag stored or loaded at .cta scope, which does not synchronize threads of two CTAs`
        : `this agent read the global flag that released the ${other} of ${bufName} with a .relaxed load and no acquire fence${tag === Q_WIDE ? ' of .gpu scope' : ''} followed it: a relaxed load acquires nothing`;
    const fix = tag === G_RELAXED
      ? 'fix: store the flag with st.release (or atom/red .release), or put fence.acq_rel.gpu before the relaxed store.'
      : tag === G_SCOPE ? 'fix: use .gpu (or .cluster within a cluster) scope on both the store and the load of the flag.' : 'fix: load the flag with ld.acquire (or spin.acquire), or put fence.acq_rel.gpu after the relaxed load.';
    report({
      kind: 'race', severity: 'error', key: `${p.bufferOf(buf).info.name}|${locKey(loc)}|flag${tag}`,
      message: `${what}, but ${why}`,
      subject: bufName, state: stateId, extra, details: ['PTX ISA §8.7 (morally strong), §8.8 (release and acquire patterns), §9.7.9.8, §9.7.9.11, §9.7.13.5.', fix],
      locs: [loc, ...flagSites],
    });
  }

  return (s, t, c, events, x, stateId) => {
    const w = new Work(x, enc);
    let wait: Extract<Op, { op: 'mbarrier.wait' }> | null = null;
    if (c.kind === 'agent') {
      wait = agentStep(w, s, t, c.agent, stateId);
    } else if (needRel) {
      // A TMA landing publishes its write, released by the barrier's CTA (complete_tx at cluster scope).
      const o = m.findAsync(s, c.id);
      if (o && o.kind === 'tma' && o.buf >= 0 && o.bar >= 0) w.pub = withEntry(w.pub, rp(o.bar, 0, A1 - 1, o.buf * 2 + 1, P_LOCAL));
    }
    for (const e of events) {
      if (e.e === 'wait' && e.pass && wait && c.kind === 'agent' && e.agent === c.agent) {
        const observed = e.phase - 1 - ((e.phase - 1 - e.parity) & 1);
        if (observed < 0 || observed !== t.bars[e.bar]!.phase - 1) continue;
        const relaxed = wait.sem === 'relaxed';
        const ctaScope = wait.scope === 'cta';
        const marked = w.inherit(e.agent, e.bar, (ptag) => {
          if (ptag === P_NONE) return G_RELAXED;
          if (ptag === P_CROSS && ctaScope) return G_SCOPE;
          if (!relaxed) return -1;
          return ptag === P_LOCAL ? Q_LOCAL : Q_WIDE;
        });
        if (marked && ctaScope) {
          const bname = p.barrierName(e.bar);
          report({
            kind: 'scope', severity: 'error', key: `${bname}|${locKey(e.loc)}|acquire`,
            message: `${name(e.agent)} passed a .cta-scoped wait on ${bname} whose phase another CTA's thread released (a remote arrive): a .cta acquire does not include that thread, so the two are not morally strong and the wait orders nothing after that release`,
            subject: bname, state: stateId, extra, details: ['PTX ISA §8.7 (morally strong: each operation\'s scope includes the other thread), §9.7.13.15.16; write .acquire.cluster (or no scope) on the wait.'],
            locs: [e.loc],
          });
        }
      } else if (e.e === 'phase') {
        w.complete(e.bar);
      }
    }
    for (let cl = 0; cl < t.clusterDone.length; cl++) if (t.clusterDone[cl] !== s.clusterDone[cl]) w.complete(nBars + cl);
    return w.own === x.ru && w.pub === x.rp ? x : { ...x, ru: w.own, rp: w.pub };
  };
}
