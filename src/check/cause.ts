/**
 * Root causes for the checker's reports: the release that let the later side of a race go and the
 * fix that applies, the static finding that explains a hang, and the order in which hazards are
 * reported (a cause before the symptoms the same bug leads to).
 *
 * Everything here reads what the checker already has: the replayed events of a hazard's trace
 * (`replay`), the vector-clock race (`hb.ts`) and the static warnings (`static.ts`). No machine rule
 * is re-implemented: phases, passes and completions are the machine's events.
 */
import type { SrcLoc } from '../kernel/ir.js';
import type { MachineEvent } from '../machine/events.js';
import type { OpInstr, Program } from '../machine/program.js';
import type { HbRace } from './hb.js';

/** The release that let the later access of a race go, and the fix that applies. */
export interface RaceCause {
  /** One sentence: which arrive / commit / landing completed the phase the later side's wait observed, with lines. */
  release: string | null;
  /** Which fix applies: arrival count, wait_group depth, a wait on the right barrier, a fence, … */
  fix: string;
  /** Source location of the release (the arrive or commit), when there is one. */
  loc?: SrcLoc;
  /** Source location of the wait that observed the release (the later side's, or its copy issuer's), when there is one. */
  waitLoc?: SrcLoc;
  /** Barriers whose phases let the later side go (the waits' barriers), for a static cause. */
  bars: string[];
  /**
   * Where the fix goes, when it is a line of the kernel: the `wait_group` whose depth leaves the
   * group in flight, or the release that a `fence.proxy.async` must precede.
   */
  fixLoc?: SrcLoc;
}

type Name = (agent: number, async: number) => string;

const line = (l?: SrcLoc) => (l ? ` (line ${l.line})` : '');

/** The op text of the instruction at `loc` of agent `a`'s role, if any. */
function opAt(p: Program, a: number, loc?: SrcLoc): string | null {
  if (!loc || a < 0) return null;
  const ins = p.roles[p.agents[a]!.role]!.code.find((x) => x.i === 'op' && x.loc.line === loc.line && x.loc.col === loc.col) as OpInstr | undefined;
  return ins ? ins.text : null;
}

interface Release {
  wait: Extract<MachineEvent, { e: 'wait' }>;
  bar: string;
  /** The phase the wait observed (-1: it passed on the fresh barrier). */
  observed: number;
  /** Index of that phase's completion event, or -1. */
  done: number;
  /** Who completed it: agent (or -1) and async op (or -1), and the source of the operation. */
  agent: number;
  async: number;
  loc?: SrcLoc;
  text: string | null;
}

/** Agent `a`'s last passing wait before event `upTo`, the phase it observed and the release that completed it; null without a wait. */
/** Asynchronous kinds retired by their issuer's wait_group (wgmma, bulk stores and reductions, cp.async). */
const GROUP_KINDS: ReadonlySet<string> = new Set(['bulk.store', 'wgmma', 'cp.async']);

/**
 * The fix of a race with an operation of a wait_group family issued by `xa.agent`: the depth of
 * that agent's last wait_group of the family before event `upTo` (`own`: the issuer touches the
 * buffer again, else it releases it).
 */
function groupFix(events: readonly MachineEvent[], xa: { kind: string; agent: number }, upTo: number, own: boolean, buf: string, who: Name): string {
  const wg = lastGroupWait(events, xa, upTo);
  const waitOp = xa.kind === 'wgmma' ? 'wgmma.wait_group' : xa.kind === 'cp.async' ? 'cp.async.wait_group' : 'cp.async.bulk.wait_group';
  const role = xa.kind === 'cp.async' ? 'writing' : 'reading';
  const n = wg?.n;
  return wg && n !== undefined
    ? `wait_group depth: ${who(xa.agent, -1)}'s ${wg.op} ${n}${line(wg.loc)} leaves ${n} group(s) in flight, and the one ${role} ${buf} is among them: wait for fewer (wait_group ${Math.max(0, n - 1)}) before ${own ? `touching ${buf}` : `releasing ${buf}`}`
    : `wait_group depth: nothing waits for the ${xa.kind === 'wgmma' ? 'wgmma' : xa.kind === 'cp.async' ? 'cp.async' : 'bulk-store'} group ${role} ${buf} before this access: a ${waitOp} that retires it`;
}

/** The issuer's last wait_group of `xa`'s family before event `upTo` (the one whose depth a group fix names), if any. */
function lastGroupWait(events: readonly MachineEvent[], xa: { kind: string; agent: number }, upTo: number): Extract<MachineEvent, { e: 'op' }> | undefined {
  const waitOp = xa.kind === 'wgmma' ? 'wgmma.wait_group' : xa.kind === 'cp.async' ? 'cp.async.wait_group' : 'cp.async.bulk.wait_group';
  let wg: Extract<MachineEvent, { e: 'op' }> | undefined;
  for (const e of events.slice(0, upTo)) if (e.e === 'op' && e.agent === xa.agent && e.op === waitOp) wg = e;
  return wg;
}

function releaseOf(p: Program, events: readonly MachineEvent[], asyncLoc: Map<number, { loc?: SrcLoc; kind: string; agent: number }>, who: Name, a: number, upTo: number): Release | null {
  let wait: Extract<MachineEvent, { e: 'wait' }> | null = null;
  for (let i = 0; i < upTo && i < events.length; i++) {
    const e = events[i]!;
    if (e.e === 'wait' && e.pass && e.agent === a) wait = e;
  }
  if (!wait) return null;
  const bar = p.barrierName(wait.bar);
  const observed = ((wait.phase - 1) & 1) === wait.parity ? wait.phase - 1 : wait.phase - 2;
  const done = events.findIndex((e) => e.e === 'phase' && e.bar === wait!.bar && e.completed === observed);
  const r: Release = { wait, bar, observed, done, agent: -1, async: -1, text: null };
  if (done >= 0) {
    const ph = events[done] as Extract<MachineEvent, { e: 'phase' }>;
    r.agent = ph.agent;
    r.async = ph.async;
    let opText: string | null = null;
    if (ph.async >= 0) {
      const o = asyncLoc.get(ph.async);
      if (o?.loc) r.loc = o.loc;
      opText = o ? opAt(p, o.agent, o.loc) : null;
    } else {
      for (let i = done - 1; i >= 0; i--) {
        const e = events[i]!;
        if ((e.e === 'arrive' || e.e === 'complete_tx' || e.e === 'expect_tx') && e.bar === ph.bar && e.agent === ph.agent && e.async < 0) {
          if (e.loc) r.loc = e.loc;
          break;
        }
      }
      opText = opAt(p, ph.agent, r.loc);
    }
    r.text = `${who(a, -1)} went on after its wait on ${bar}${line(wait.loc)}, which observed phase ${observed}; that phase was completed by ${opText ? `${opText} of ` : ''}${who(ph.agent, ph.async)}${line(r.loc)}`;
  } else if (observed < 0) {
    r.text = `${who(a, -1)} went on after its wait on ${bar}${line(wait.loc)}, which passed on the fresh barrier (parity 1 in phase 0): no phase had completed`;
  }
  return r;
}

/**
 * Whether the phase `observed` of barrier `bar` (completed at event `done`) that let a copy's issuer
 * overwrite buffer `buf` was completed by arrivals of the barrier's own CTA only, while `buf` lies in
 * another CTA of the cluster (a multicast destination): nothing from the destination CTA's readers
 * released the issuer.
 */
function clusterRelease(p: Program, events: readonly MachineEvent[], buf: number, bar: number, observed: number, done: number): boolean {
  const bufCta = p.bufferOf(buf).cta;
  const barCta = p.barrierOf(bar).cta;
  if (bufCta === barCta || done < 0) return false;
  for (const e of phaseArrivals(events, bar, done)) if (e.agent >= 0 && p.agents[e.agent]!.cta === bufCta) return false;
  return true;
}

/** The arrivals on `bar` of the phase whose completion is event `done`: those after the previous completion of `bar`. */
function phaseArrivals(events: readonly MachineEvent[], bar: number, done: number): Extract<MachineEvent, { e: 'arrive' }>[] {
  let from = 0;
  for (let i = done - 1; i >= 0 && from === 0; i--) {
    const e = events[i]!;
    if (e.e === 'phase' && e.bar === bar) from = i + 1;
  }
  const out: Extract<MachineEvent, { e: 'arrive' }>[] = [];
  for (let i = from; i < done; i++) {
    const e = events[i]!;
    if (e.e === 'arrive' && e.bar === bar) out.push(e);
  }
  return out;
}

/** Agent `a`'s arrive on `bar` among the arrivals of the phase completed at event `done`, if any. */
function ownEarlyArrive(events: readonly MachineEvent[], a: number, bar: number, done: number): Extract<MachineEvent, { e: 'arrive' }> | null {
  return done < 0 ? null : phaseArrivals(events, bar, done).find((e) => e.agent === a) ?? null;
}

/** Whether some role's code arrives on an element of barrier array `name` in another CTA (an `@` selector). */
function arrivesRemotely(p: Program, name: string): boolean {
  return p.roles.some((rc) => rc.code.some((ins) => ins.i === 'op' && ins.op.op === 'mbarrier.arrive' && ins.op.bar.name === name && ins.op.bar.cta !== undefined));
}

/** The fix of a {@link clusterRelease} race: the issuer's barrier must count the destination CTA's releases. */
function clusterReleaseFix(p: Program, who: Name, issuer: number, buf: number, bar: number, yName: string, remoteArrives: boolean, count: number): string {
  const bufCta = p.bufferOf(buf).cta;
  const barCta = p.barrierOf(bar).cta;
  const name = p.barrierName(bar);
  return `arrival count across the cluster: the ${yName} lands in ${p.bufferName(buf)} (CTA ${bufCta}), but ${who(issuer, -1)} was let go by ${name}, whose phase completed on CTA ${barCta}'s arrivals alone: nothing from CTA ${bufCta}'s readers of ${p.bufferName(buf)} releases it. Count the releases of every CTA the copy writes on ${name} (count ${count} × the destination CTAs)${remoteArrives ? ` (CTA ${bufCta}'s arrivals on it come, but the phase completes before them)` : ` and have each CTA's consumers arrive on it (a remote mbarrier.arrive.release.cluster on the issuer's barrier, @c${barCta} here)`}`;
}

/**
 * Explains race `race` of a trace whose events are `events`: the release that let the later access
 * go and the fix. `who` names agents and async ops as the report does.
 */
export function raceCause(p: Program, events: readonly MachineEvent[], race: HbRace, who: Name, countOf: (bar: number) => number = (k) => p.barrierOf(k).info.count): RaceCause {
  const x = race.first;
  const y = race.second;
  const later = y.agent >= 0 ? y.agent : y.issuer;
  const asyncLoc = new Map<number, { loc?: SrcLoc; kind: string; agent: number }>();
  for (const e of events) if (e.e === 'async') asyncLoc.set(e.id, { loc: e.loc, kind: e.kind, agent: e.agent });
  const wait = releaseOf(p, events, asyncLoc, who, later, y.at)?.wait ?? null;
  const xName = `${x.rw === 'w' ? 'write' : 'read'} by ${who(x.agent, x.async)}${line(x.loc)}`;
  const yName = `${y.rw === 'w' ? 'write' : 'read'} by ${who(y.agent, y.async)}${line(y.loc)}`;
  const buf = p.bufferName(x.buf);
  // A cross-proxy pair is ordered only with a proxy fence.
  if (x.proxy !== y.proxy && x.async < 0 && x.rw === 'w') {
    // The fence goes before the release that let the async side's issuer go (when the trace has one).
    const rel = wait ? releaseOf(p, events, asyncLoc, who, later, y.at) : null;
    const fixLoc = rel && rel.agent === x.agent && rel.async < 0 ? rel.loc : undefined;
    return { release: null, bars: [], fix: `a fence: the generic write${line(x.loc)} must be followed by fence.proxy.async before the release that hands ${buf} to the async proxy${fixLoc ? line(fixLoc) : ''}`, ...(fixLoc ? { fixLoc } : {}) };
  }
  if (!wait) {
    // The issuer itself touching the buffer again: its wait_group depth.
    const xa = x.async >= 0 ? asyncLoc.get(x.async) : undefined;
    if (xa && GROUP_KINDS.has(xa.kind) && y.agent === xa.agent) {
      const wg = lastGroupWait(events, xa, y.at);
      return { release: null, bars: [], fix: groupFix(events, xa, y.at, true, buf, who), ...(wg?.loc ? { fixLoc: wg.loc } : {}) };
    }
    const bar = x.signals >= 0 ? p.barrierName(x.signals) : null;
    return {
      release: null,
      bars: [],
      fix: bar
        ? `a wait on the right barrier: ${who(later, -1)} accesses ${buf} without waiting on ${bar}, on which the ${xName} completes; wait for that phase first`
        : `a wait: nothing ${who(later, -1)} waits on before its access orders it after the ${xName}`,
    };
  }
  const bar = p.barrierName(wait.bar);
  const rel = releaseOf(p, events, asyncLoc, who, later, y.at)!;
  const { observed, done } = rel;
  let relText = rel.text;
  let relLoc = rel.loc;
  let relWait = rel.wait;
  const relAgent = rel.agent;
  const relAsync = rel.async;
  const issuedAt = (id: number) => events.findIndex((e) => e.e === 'async' && e.id === id);
  const issuerRel = x.async >= 0 ? releaseOf(p, events, asyncLoc, who, x.issuer, issuedAt(x.async)) : null;
  // Which fix applies.
  let fix: string;
  let fixLoc: SrcLoc | undefined;
  const xa = x.async >= 0 ? asyncLoc.get(x.async) : undefined;
  if (xa && GROUP_KINDS.has(xa.kind) && (y.agent === xa.agent || relAgent === xa.agent)) {
    const upTo = y.agent === xa.agent ? y.at : done;
    fix = groupFix(events, xa, upTo, y.agent === xa.agent, buf, who);
    fixLoc = lastGroupWait(events, xa, upTo)?.loc;
  } else if (observed < 0) {
    fix = `the wait's parity: ${who(later, -1)}'s wait on ${bar}${line(wait.loc)} passed on the fresh barrier (parity 1 in phase 0) before any phase completed, so nothing orders it after the ${xName}: wait with the parity of a phase completed after that access (parity 0 for the first)`;
  } else if (y.async >= 0 && clusterRelease(p, events, x.buf, wait.bar, observed, done)) {
    fix = clusterReleaseFix(p, who, later, x.buf, wait.bar, yName, arrivesRemotely(p, p.barrierOf(wait.bar).info.name), countOf(wait.bar));
  } else if (x.async >= 0 && x.signals >= 0 && x.signals !== wait.bar) {
    fix = `a wait on the right barrier: the ${xName} completes on ${p.barrierName(x.signals)}, but ${who(later, -1)} waited on ${bar}`;
  } else if (x.async >= 0 && x.signals === wait.bar && issuedAt(x.async) > done && issuerRel && issuerRel.agent >= 0 && issuerRel.async < 0 && issuerRel.agent !== later) {
    // The copy's issuer was let go by another agent's release while this side still used the buffer.
    relText = issuerRel.text;
    relLoc = issuerRel.loc;
    relWait = issuerRel.wait;
    // This side's own arrive counted toward the phase that let the issuer go, before its access:
    // the release comes too early, the count may be right.
    const own = ownEarlyArrive(events, later, issuerRel.wait.bar, issuerRel.done);
    fix = own
      ? `move the release after the access: ${who(later, -1)} arrives on ${issuerRel.bar}${line(own.loc)} before its ${y.rw === 'w' ? 'write' : 'read'} of ${buf}${line(y.loc)}, and that arrival counted toward the phase that let ${who(x.issuer, -1)} refill ${buf}`
      : `arrival count: ${who(x.issuer, -1)} was released by ${who(issuerRel.agent, -1)}'s arrive on ${issuerRel.bar}${line(issuerRel.loc)} while ${who(later, -1)} still used ${buf}: the count of ${issuerRel.bar} (${countOf(issuerRel.wait.bar)}) is smaller than the agents that must release ${buf}`;
  } else if (x.async >= 0 && x.signals === wait.bar && issuedAt(x.async) > done) {
    fix = `the wait's phase: ${who(later, -1)}'s wait on ${bar}${line(wait.loc)} observed phase ${observed}, which had completed before the ${xName} was even issued: the parity it computes is stale (a phase counter off by whole phases, or restarted)`;
  } else if (x.async >= 0 && x.signals === wait.bar) {
    fix = `arrival count / expect_tx: phase ${observed} of ${bar} completed before the ${xName} landed: its arrivals (count ${countOf(wait.bar)}) and the bytes expected were all in without this copy's bytes; expect every copy's bytes (arrive.expect_tx with the sum, before the copies can land), or raise the count`;
  } else if (x.async >= 0 && xa?.kind === 'tc.mma') {
    fix = `a commit after the last MMA: the tcgen05.mma${line(xa.loc)} reading ${buf} is not covered by the tcgen05.commit that released ${who(later, -1)}`;
  } else if (x.async < 0 && x.agent >= 0 && relAgent >= 0 && relAgent !== x.agent && relAsync < 0) {
    fix = `arrival count: ${bar} completed phase ${observed} on ${who(relAgent, -1)}'s arrive without one from ${who(x.agent, -1)}, whose ${x.rw === 'w' ? 'write' : 'read'}${line(x.loc)} was not done: the count of ${bar} (${countOf(wait.bar)}) is smaller than the arrivals that must release ${buf}`;
  } else if (x.async < 0 && x.agent >= 0 && relAgent === x.agent && relLoc && x.loc && relLoc.line < x.loc.line) {
    fix = `move the release after the access: ${who(x.agent, -1)} arrives on ${bar}${line(relLoc)} before its ${x.rw === 'w' ? 'write' : 'read'} of ${buf}${line(x.loc)}`;
  } else {
    fix = `a wait on the right barrier: nothing that ${who(later, -1)} waits on is released after the ${xName}`;
  }
  const bars = [bar, ...(issuerRel ? [issuerRel.bar] : [])];
  const out: RaceCause = { release: relText, bars, fix: `${fix}. (${yName} against ${xName})` };
  if (relLoc) out.loc = relLoc;
  if (relWait.loc) out.waitLoc = relWait.loc;
  if (fixLoc) out.fixLoc = fixLoc;
  return out;
}

/**
 * Explains the strict cross-proxy race (PTX ISA §8.6): generic accesses of a buffer, then an
 * async-proxy write into it (a TMA copy issued at `issueLoc`) ordered after them only by an mbarrier
 * hand-off. The release is the one that let the copy's issuer go (the phase its last wait before the
 * issue observed); the fix is a `fence.proxy.async` on that chain, and `fixLoc` is the issuer's wait
 * (the fence goes after it, before the copy). Null when the trace holds no such issue.
 */
export function proxyRaceCause(p: Program, events: readonly MachineEvent[], issueLoc: SrcLoc | undefined, who: Name): RaceCause | null {
  const asyncLoc = new Map<number, { loc?: SrcLoc; kind: string; agent: number }>();
  for (const e of events) if (e.e === 'async') asyncLoc.set(e.id, { loc: e.loc, kind: e.kind, agent: e.agent });
  let at = -1;
  for (let i = events.length - 1; i >= 0 && at < 0; i--) {
    const e = events[i]!;
    if (e.e === 'async' && e.loc && issueLoc && e.loc.line === issueLoc.line && e.loc.col === issueLoc.col) at = i;
  }
  if (at < 0) return null;
  const issuer = (events[at] as Extract<MachineEvent, { e: 'async' }>).agent;
  const rel = releaseOf(p, events, asyncLoc, who, issuer, at);
  if (!rel || rel.done < 0) {
    return { release: null, bars: [], fix: `a proxy fence: fence.proxy.async between the generic accesses and the copy${line(issueLoc)}` };
  }
  const out: RaceCause = {
    release: rel.text,
    bars: [rel.bar],
    fix: `a proxy fence: fence.proxy.async by the threads that accessed the buffer, before their release${line(rel.loc)}, or by ${who(issuer, -1)} after its wait on ${rel.bar}${line(rel.wait.loc)} and before the copy${line(issueLoc)}; the mbarrier hand-off alone orders only the generic proxy`,
  };
  if (rel.loc) out.loc = rel.loc;
  if (rel.wait.loc) {
    out.waitLoc = rel.wait.loc;
    out.fixLoc = rel.wait.loc;
  }
  return out;
}

/**
 * The static finding that explains a race: a count or trip-count mismatch on a barrier whose phase
 * released the later side (`bars`), or on a named barrier the trace synchronized on (`named`:
 * `bar.sync ID` names, with `@cN` in clusters). Arrivals that do not add up to a barrier's count
 * let a phase complete (or a named barrier's generation finish) before every side is done, which
 * is what the race then shows; null when none applies.
 */
export function staticRaceCauseOf<T extends { kind: string; subject: { name: string } | null }>(bars: readonly string[], named: readonly string[], statics: readonly T[]): T | null {
  for (const b of bars) {
    for (const kind of ['count-mismatch', 'trip-mismatch']) {
      const hit = statics.find((w) => w.kind === kind && w.subject && names(w.subject.name, b));
      if (hit) return hit;
    }
  }
  for (const n of named) {
    const hit = statics.find((w) => w.kind === 'count-mismatch' && w.subject && (w.subject.name === n || w.subject.name === n.replace(/@c\d+$/, '')));
    if (hit) return hit;
  }
  return null;
}

/** Kinds of static findings that can explain a hang. */
const EXPLAINS_HANG = new Set(['unreachable-arrive', 'trip-mismatch', 'count-mismatch']);

/** Barrier names a hang's details say its waiters wait on (`waits for phase N of NAME`), first waiter first. */
function hangBarriers(details: readonly string[]): string[] {
  const out: string[] = [];
  for (const d of details) for (const m of d.matchAll(/waits for phase \d+ of (\S+) \(parity/g)) out.push(m[1]!);
  return out;
}

/** Whether static finding subject `s` (a barrier `full[0]`, or an array `full` for an arrive site) names barrier `name`. */
function names(s: string, name: string): boolean {
  const bare = name.replace(/@c\d+$/, '');
  return s === name || s === bare || name.startsWith(`${s}[`);
}

/**
 * The static finding (an arrive never executed, trip counts that differ between roles, arrivals
 * that do not add up to the count) that explains a hang whose waiters wait on `subject` or the
 * barriers its `details` name, or null.
 */
export function staticCauseOf<T extends { kind: string; subject: { name: string } | null }>(subject: string | null, details: readonly string[], statics: readonly T[]): T | null {
  const bars = [...(subject ? [subject] : []), ...hangBarriers(details)];
  for (const b of bars) {
    for (const kind of ['unreachable-arrive', 'trip-mismatch', 'count-mismatch']) {
      const hit = statics.find((w) => w.kind === kind && EXPLAINS_HANG.has(w.kind) && w.subject && names(w.subject.name, b));
      if (hit) return hit;
    }
  }
  return null;
}

/**
 * Rank of a hazard in the report (lower first; ties by trace length): a race in which an async copy
 * overwrites a buffer that a generic access read (the producer refilling a stage it was not given
 * back) is usually the symptom of an earlier consumer-side bug, so it comes after the other errors
 * when the report holds a race of rank 0 (the consumer-side race); without one the overwrite race
 * is the bug's own and keeps its place by trace length (check.ts).
 */
export function causeRank(h: { kind: string; race?: { first: string; second: string } }): number {
  if (h.kind === 'race' && h.race && /^write by TMA/.test(h.race.second) && /^read by /.test(h.race.first)) return 1;
  return 0;
}
