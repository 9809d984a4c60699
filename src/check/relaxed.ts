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
 * false reports in the patterns the tests cover): only generic accesses are published; a release
 * (an arrive, a release store, a named barrier) marks the agent's accesses released on that
 * location only, so a later `.relaxed` arrive on another barrier publishes them unreleased, and on
 * the same barrier released (a release followed by a strong write on one location is a release
 * pattern, PTX ISA §8.8); they are forgotten at a release after which no relaxed arrive or weak
 * store can run; a waiter that acquired such an access through its release (an ACQ entry, by
 * publisher, buffer and the access's age, Work.ageAccess) does not inherit that access, or an older
 * one, again as unreleased from the other barrier (ages saturate at 7); a named barrier
 * (`bar.sync`, `bar.arrive`) passes each participant's accesses that no fence or mbarrier / flag
 * release covers, and what it inherited, to the participants leaving its `bar.sync` (the barrier
 * orders them, PTX ISA §9.7.13.1, but is no release or acquire pattern of an mbarrier, §8.8); a
 * generation that completes again before a participant leaves passes it nothing, and the inherited
 * entries a participant received are not passed on again and are forgotten at its next
 * `bar.sync`; its own inherited
 * entries are forgotten at the agent's next `barrier.cluster.wait`; a remote arrive
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
import {
  ACQ, FLAG, G_RELAXED, G_SCOPE, INH, OWN, P_BITS, P_CROSS, P_CROSS_K, P_CTA, P_LOCAL, P_LOCAL_K, P_NAMED, P_NONE, P_TAGS, Q_LOCAL, Q_WIDE, REL, U_CTA, U_NONE, U_WIDE,
  flagSemantics, PASSED, pAge, pTag, locKey, relaxedAhead, relaxedSize, relaxedUse, ru, ruCode, ruKind, ruTag, withEntry, Work, type Enc,
} from './relaxed-data.js';

export { flagSemantics, relaxedUse } from './relaxed-data.js';

/**
 * The check's refusal to judge the memory model of `p`, an error finding (`not-modelled`, at the
 * kernel's first relaxed or `.cta`-scoped operation), when the kernel has such operations and the
 * detector's records do not fit the checker's 32-bit words (relaxed-data.ts `relaxedSize`); null
 * otherwise. The search then runs without the detector: a race that only the memory model shows
 * would go unreported, so the verdict says that the check could not look for it.
 */
export function relaxedRefusal(p: Program): RawHazard | null {
  const use = relaxedUse(p);
  if (!use.refused) return null;
  const z = relaxedSize(p);
  const n = (x: number) => x.toLocaleString('en-US');
  return {
    kind: 'not-modelled', severity: 'error', key: 'relaxed|size', subject: null, state: 0, extra: [],
    message: `the memory-model detector cannot track this launch: its records need ${n(z.slots + 1)} publication slots × 2 stages × ${n(z.agents + 1)} publishers × ${n(z.codes)} access codes × ${P_BITS} tags (${z.words > Number.MAX_SAFE_INTEGER ? 'more than 2^53' : n(z.words)} values) in 32-bit words that hold at most 2^31, so the relaxed and .cta-scoped operations of this kernel are not checked and the check gives no verdict on them`,
    details: [
      'the other hazards are searched for as usual; a race that only the memory model shows (PTX ISA §8.8: a relaxed arrive or wait, a .cta-scoped acquire of another CTA\'s release, a relaxed global flag) is not looked for',
      'fewer CTAs, warps, barriers, buffer elements or global memory cells bring the records under the bound',
    ],
    locs: use.site ? [use.site] : [],
  };
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
    rp: (slot, stage, agent, code, tag) => (((slot * 2 + stage) * A1 + agent) * C + code) * P_BITS + tag,
    code: (v) => Math.floor(v / P_BITS) % C,
    agent: (v) => Math.floor(Math.floor(v / P_BITS) / C) % A1,
    stage: (v) => Math.floor(Math.floor(Math.floor(v / P_BITS) / C) / A1) % 2,
    slot: (v) => Math.floor(Math.floor(Math.floor(v / P_BITS) / C) / A1 / 2),
    STAGE: P_BITS * C * A1,
    MARK,
    rel: (slot, code) => REL * 2 ** 28 + slot * C + code,
    relCode: (v) => (v - REL * 2 ** 28) % C,
    acq: (publisher, code, age) => ACQ * 2 ** 28 + (age * A1 + publisher) * C + code,
    acqAge: (v) => Math.floor((v - ACQ * 2 ** 28) / (A1 * C)),
    acqBase: (v) => v - Math.floor((v - ACQ * 2 ** 28) / (A1 * C)) * A1 * C,
  };
  /** The release location of a named barrier (`bar.sync`, `bar.arrive`): after every slot; no relaxed arrive is ever on it. */
  const NAMED = nBars + p.grid + (p.values ? p.values.init.length : 0);
  const ahead = relaxedAhead(p);
  /** Whether agent `a`, at its pc in `t`, can still publish accesses unreleased (keep its released ones marked). */
  const keepAfter = (t: MachineState, a: number) => ahead[p.agents[a]!.role]![t.agents[a]!.pc] ?? true;
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
        w.access(a, code);
      }
    } else if (op.op === 'fence') {
      const wide = op.scope !== 'cta';
      const l = w.own[a];
      if (l) {
        const next: number[] = [];
        for (const v of l) {
          if (ruKind(v) === REL || ruKind(v) === ACQ) next.push(v);
          else if (ruKind(v) === OWN) next.push(op.sem === 'acquire' ? v : ru(OWN, Math.max(ruTag(v), wide ? U_WIDE : U_CTA), ruCode(v)));
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
          // An earlier release arrive on this barrier covers what preceded it (a release pattern).
          w.publish(a, k, (u, rel) => (!rel && (u === U_NONE || (u === U_CTA && cross)) ? P_NONE : needRel ? (cross ? P_CROSS : P_LOCAL) : -1));
        } else {
          const keep = keepAfter(t, a);
          if (needRel || keep) w.publish(a, k, () => (cross ? (keep ? P_CROSS_K : P_CROSS) : keep ? P_LOCAL_K : P_LOCAL));
          if (needRel && cross) w.pub = withEntry(w.pub, rp(k, 0, a, MARK, P_CROSS));
          w.release(a, k, keep);
        }
      }
    } else if (op.op === 'barrier.cluster.arrive') {
      if (op.sem === 'relaxed') w.publish(a, nBars + info.cluster, (u, rel) => (rel || u === U_WIDE ? -1 : P_NONE));
      else {
        const keep = keepAfter(t, a);
        if (keep) w.publish(a, nBars + info.cluster, () => P_LOCAL_K);
        w.release(a, nBars + info.cluster, keep);
      }
    } else if (op.op === 'bar.sync' || op.op === 'bar.arrive') {
      const nk = m.namedKey(a, ins, ag);
      const slot = NAMED + 1 + nk;
      if (op.op === 'bar.sync' && ag.sub >= 0) {
        // Its second half: the generation it arrived in completed (and is still the last one).
        namedReceive(w, a, slot, needRel || keepAfter(t, a), t.named[nk]!.gen === ag.sub + 1);
      } else {
        namedArrive(w, a, slot);
        w.release(a, NAMED, keepAfter(t, a));
        if (t.named[nk]!.gen !== s.named[nk]!.gen) w.complete(slot);
      }
    } else if (op.op === 'barrier.cluster.wait') {
      w.clear(a, INH);
      w.inherit(a, nBars + info.cluster, (ptag) => (ptag === P_NONE ? G_RELAXED : -1));
    } else if (op.op === 'mbarrier.wait') {
      wait = op;
    }
    // A strong global operation synchronizes (or not) through its location.
    const fl = flagSemantics(op);
    if (fl) flagStep(w, s, t, a, ins.buf!, op.op === 'spin.global', fl, keepAfter(t, a));
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
   * Agent `a` arrives on a named barrier (`bar.sync`'s first half, `bar.arrive`), whose slot is
   * `slot`: the barrier orders its accesses so far before the other participants' accesses after
   * the barrier (PTX ISA §9.7.13.1: morally strong at CTA scope), so they enter those agents'
   * histories, and a release (an arrive, or a release fence then a relaxed arrive) that one of them
   * performs after the barrier publishes them too (cumulativity, §8.9); one it performs without
   * such a release publishes them unreleased. Passed on: its accesses that no release fence covers
   * and no release on an mbarrier, cluster barrier or flag marks (those it may have published
   * itself; silence), and what it inherited unordered (a relaxed wait with no acquire fence yet:
   * the barrier is no acquire pattern, §8.8, so the others are not ordered after that phase's
   * releases either).
   */
  function namedArrive(w: Work, a: number, slot: number): void {
    const l = w.own[a];
    if (!l) return;
    for (const v of l) {
      const code = ruCode(v);
      if (ruKind(v) === INH) {
        if (ruTag(v) < PASSED) w.pub = withEntry(w.pub, rp(slot, 0, a, code, ruTag(v) * P_TAGS + P_NAMED));
      } else if (ruKind(v) === OWN && ruTag(v) === U_NONE && !l.some((x) => ruKind(x) === REL && x !== enc.rel(NAMED, code) && enc.relCode(x) === code)) {
        w.pub = withEntry(w.pub, rp(slot, 0, a, code, P_LOCAL));
      }
    }
  }

  /**
   * Agent `a` leaves a `bar.sync` (with `fresh`: whose generation is still the last completed): the
   * other participants' accesses it passed on become its own (with `own`: when it can still publish
   * them), not yet covered by any release fence of its own, and what they inherited unordered it
   * inherits, marked {@link PASSED}: it does not pass those on again, and forgets them at its next
   * `bar.sync` (silence; the states stay finite: no entry circulates among the participants).
   */
  function namedReceive(w: Work, a: number, slot: number, own: boolean, fresh: boolean): void {
    const old = w.own[a];
    if (old && old.some((v) => ruKind(v) === INH && ruTag(v) >= PASSED)) w.setOwn(a, old.filter((v) => !(ruKind(v) === INH && ruTag(v) >= PASSED)));
    if (!w.pub || !fresh) return;
    const seen = w.pub.filter((v) => enc.slot(v) === slot && enc.stage(v) === 1 && enc.agent(v) !== a);
    if (own) for (const v of seen) if (pTag(v) !== P_NAMED) w.access(a, enc.code(v));
    let l = w.own[a] ?? null;
    for (const v of seen) if (pTag(v) === P_NAMED) l = withEntry(l, ru(INH, pAge(v) + PASSED, enc.code(v)));
    if (l !== w.own[a]) w.setOwn(a, l);
  }

  /**
   * A global operation of agent `a` on its location's slot (after the barriers and the cluster
   * rounds): a read observes the last store's publications (the value it reads is that store's),
   * acquiring them, or with a plain or `.relaxed` load needing an acquire fence after it; a store
   * publishes the agent's own accesses, released (and forgotten) when it is `.release`, else only
   * what a release fence covered. A `.cta`-scoped release or acquire does not synchronize with
   * another CTA's thread (PTX ISA §8.7: morally strong needs each scope to include the other).
   */
  function flagStep(w: Work, s: MachineState, t: MachineState, a: number, bufOf: (f: number[]) => number,
    spin: boolean, fl: NonNullable<ReturnType<typeof flagSemantics>>, keep: boolean): void {
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
        w.release(a, slot, keep);
      } else w.publish(a, slot, (u, rel) => (rel ? (fl.cta ? P_CTA : P_LOCAL) : u === U_NONE ? P_NONE : u === U_CTA ? P_CTA : P_LOCAL));
      w.complete(slot, fl.rmw);
    }
  }

  /** Reports a memory-model race of agent `a`'s access (or of an operation it issued) with an inherited entry of tag `tag`. */
  function raceFound(stateId: number, a: number, loc: SrcLoc, text: string, buf: number, otherW: number, tag: number, write = text.startsWith('st.')) {
    tag %= PASSED;
    const bufName = p.bufferName(buf);
    const what = `${name(a)} ${write ? 'writes' : 'reads'} ${bufName} (${text})`;
    const other = otherW ? 'write' : 'read';
    if (tag >= FLAG) return flagRace(stateId, a, loc, what, bufName, buf, other, tag - FLAG);
    const why = tag === G_RELAXED
      ? `the ${other} of ${bufName} by another agent reached this agent's wait only through a .relaxed arrive, and no release fence before that arrive covers it (an access carried to the arriving warp by a bar.sync is covered only by a fence after the bar.sync): a relaxed arrive releases nothing`
      : tag === G_SCOPE
        ? `the ${other} of ${bufName} in another CTA was released to a phase this agent observed with an explicit .cta-scoped wait, which does not synchronize with another CTA's release`
        : `this agent (or a warp whose bar.sync it then passed) observed the phase that released the ${other} of ${bufName} with a .relaxed wait and no acquire fence${tag === Q_WIDE ? ' of cluster scope' : ''} (fence.acq_rel${tag === Q_WIDE ? '.cluster' : ''}) followed it (before that bar.sync): a relaxed wait acquires nothing`;
    const fix = tag === G_RELAXED
      ? 'make the arrive .release, or put fence.acq_rel (at a scope that includes the waiter) before the relaxed arrive.'
      : tag === G_SCOPE ? 'wait with .acquire.cluster (or without a scope).' : `make the wait .acquire, or put fence.acq_rel.${tag === Q_WIDE ? 'cluster' : 'cta'} after it.`;
    report({
      kind: 'race', severity: 'error', key: `${p.bufferOf(buf).info.name}|${locKey(loc)}|relaxed${tag}`,
      message: `${what}, but ${why}`, reason: why,
      subject: bufName, state: stateId, extra, details: ['PTX ISA §8.8 (release and acquire patterns), §9.7.13.3, §9.7.13.4, §9.7.13.15.16.', `fix: ${fix}`], fix,
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
      ? 'store the flag with st.release (or atom/red .release), or put fence.acq_rel.gpu before the relaxed store.'
      : tag === G_SCOPE ? 'use .gpu (or .cluster within a cluster) scope on both the store and the load of the flag.' : 'load the flag with ld.acquire (or spin.acquire), or put fence.acq_rel.gpu after the relaxed load.';
    report({
      kind: 'race', severity: 'error', key: `${p.bufferOf(buf).info.name}|${locKey(loc)}|flag${tag}`,
      message: `${what}, but ${why}`, reason: why,
      subject: bufName, state: stateId, extra, details: ['PTX ISA §8.7 (morally strong), §8.8 (release and acquire patterns), §9.7.9.8, §9.7.9.11, §9.7.13.5.', `fix: ${fix}`], fix,
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

