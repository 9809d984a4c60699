/**
 * Root causes for the checker's races: the release that let the later side of a race go and the
 * fix that applies (the static finding behind a hazard and the report order: cause-static.ts).
 *
 * Everything here reads what the checker already has: the replayed events of a hazard's trace
 * (`replay`), the vector-clock race (`hb.ts`) and the roles' compiled code. No machine rule is
 * re-implemented: phases, passes and completions are the machine's events.
 */
import type { SrcLoc } from '../kernel/ir.js';
import type { MachineEvent } from '../machine/events.js';
import type { Program } from '../machine/program.js';
import type { TraceStep } from './check-types.js';
import { opTextAt } from './cause-optext.js';
import type { HbAccess, HbRace } from './hb.js';

/** The release that let the later access of a race go, and the fix that applies. */
export interface RaceCause {
  /** One sentence: which arrive / commit / landing completed the phase the later side's wait observed, with lines. */
  release: string | null;
  /** Which fix applies: arrival count, wait_group depth, a wait on the right barrier, a fence, … */
  fix: string;
  /** The family of {@link fix}, for rules that depend on it (check.ts): the text is for people. */
  fixKind: RaceFixKind;
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

/** Per asynchronous operation of a trace: its issue's location, kind, issuer and step (`t`). */
type AsyncLocs = Map<number, { loc?: SrcLoc; kind: string; agent: number; t: number }>;

/**
 * The families of a race's fix ({@link RaceCause.fix}): `proxy-fence` (fence.proxy.async, PTX ISA
 * §8.6), `group-depth` (a wait_group that leaves the group in flight), `wait` (no wait at all),
 * `right-barrier` (a wait on the barrier the earlier access completes or hands on), `parity` (the
 * later side's wait passed on the fresh barrier: its parity), `count` (arrival count or expect_tx,
 * within a CTA or across the cluster), `release-order` (a release issued before the access it
 * should follow), `phase` (the wait observed a stale phase), `commit` (an MMA no commit covers),
 * `relaxed` (the memory model's fix, named by check/relaxed.ts).
 */
export type RaceFixKind = 'proxy-fence' | 'group-depth' | 'wait' | 'right-barrier' | 'parity' | 'count' | 'release-order' | 'phase' | 'commit' | 'relaxed';

/**
 * How the fix of a race whose later side's wait passed on the fresh barrier (parity 1 in phase 0,
 * before any phase completed) begins: the wait's parity is the fix (`fixKind` `parity`).
 */
const PARITY_FIX = "the wait's parity";

const line = (l?: SrcLoc) => (l ? ` (line ${l.line})` : '');
/** ` (line N)`, with the source line it was compiled from when known (a PTX line's CUDA line: ` (line N, from f.cu:L)`). */
const lineFrom = (l?: SrcLoc) => (l ? ` (line ${l.line}${l.origin ? `, from ${l.origin}` : ''})` : '');

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

function releaseOf(p: Program, events: readonly MachineEvent[], asyncLoc: AsyncLocs, who: Name, a: number, upTo: number, steps?: readonly TraceStep[]): Release | null {
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
      opText = o ? opTextAt(p, steps, o.agent, o.t, o.loc) : null;
    } else {
      let t = -1;
      for (let i = done - 1; i >= 0; i--) {
        const e = events[i]!;
        if ((e.e === 'arrive' || e.e === 'complete_tx' || e.e === 'expect_tx') && e.bar === ph.bar && e.agent === ph.agent && e.async < 0) {
          if (e.loc) r.loc = e.loc;
          t = e.t;
          break;
        }
      }
      opText = opTextAt(p, steps, ph.agent, t, r.loc);
    }
    r.text = `${who(a, -1)} went on after its wait on ${bar}${lineFrom(wait.loc)}, which observed phase ${observed}; that phase was completed by ${opText ? `${opText} of ` : ''}${who(ph.agent, ph.async)}${lineFrom(r.loc)}`;
  } else if (observed < 0) {
    r.text = `${who(a, -1)} went on after its wait on ${bar}${lineFrom(wait.loc)}, which passed on the fresh barrier (parity 1 in phase 0): no phase had completed`;
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

/** The barriers whose phases order what follows an access (see {@link signalsOf}). */
interface Signals {
  /** Their names, as reports write them (an array's name alone when the element is not known). */
  names: string[];
  /** Whether barrier key `k` is one of them. */
  has: (k: number) => boolean;
  /** The arrive that hands a generic access on, when that is what signals. */
  arrive?: SrcLoc;
}

/**
 * The barriers whose phases order access `y` after access `x`: the one `x`'s asynchronous op
 * signals on completion; for a generic write that another role's access `y` reads (a hand-off),
 * those `x`'s agent arrives on after it in the trace, else the barrier array of the first
 * `mbarrier.arrive` after it in its role's code; null when none is known (peers of one role order
 * their accesses through other barriers' chains: no one barrier to name).
 */
function signalsOf(p: Program, events: readonly MachineEvent[], x: HbAccess, y: HbAccess): Signals | null {
  if (x.signals >= 0) return { names: [p.barrierName(x.signals)], has: (k) => k === x.signals };
  if (x.async >= 0 || x.agent < 0 || x.rw !== 'w' || y.rw !== 'r' || y.agent < 0 || p.agents[y.agent]!.role === p.agents[x.agent]!.role) return null;
  const keys = new Map<number, SrcLoc | undefined>();
  for (let i = x.at + 1; i < events.length; i++) {
    const e = events[i]!;
    if (e.e === 'arrive' && e.agent === x.agent && e.async < 0 && !keys.has(e.bar)) keys.set(e.bar, e.loc);
  }
  if (keys.size) return { names: [...keys.keys()].map((k) => p.barrierName(k)), has: (k) => keys.has(k), arrive: [...keys.values()][0] };
  const code = p.roles[p.agents[x.agent]!.role]!.code;
  const at = x.loc ? code.findIndex((ins) => ins.i === 'op' && ins.loc.line === x.loc!.line && ins.loc.col === x.loc!.col) : -1;
  if (at < 0) return null;
  for (const ins of code.slice(at + 1)) {
    if (ins.i !== 'op' || ins.op.op !== 'mbarrier.arrive') continue;
    const name = ins.op.bar.name;
    return { names: [name], has: (k) => p.barrierOf(k).info.name === name, arrive: ins.loc };
  }
  return null;
}

/** Whether agent `a` passed a wait on a barrier of `sig` before event `upTo`. */
function waitedOn(events: readonly MachineEvent[], a: number, sig: Signals, upTo: number): boolean {
  for (let i = 0; i < upTo && i < events.length; i++) {
    const e = events[i]!;
    if (e.e === 'wait' && e.pass && e.agent === a && sig.has(e.bar)) return true;
  }
  return false;
}

/**
 * The fix of a race whose later side (`y`, by or issued by agent `later`) waited on none of the
 * barriers `sig` whose phases the earlier access `x` completes or is handed on by: a wait on one of
 * them before `y`'s line. `wait` is `later`'s last passing wait before `y` (on another barrier), if any.
 */
function unwaitedFix(p: Program, who: Name, later: number, sig: Signals, x: HbAccess, xName: string, y: HbAccess, yName: string, wait: Extract<MachineEvent, { e: 'wait' }> | null): string {
  const on = sig.names.length === 1 ? sig.names[0]! : `any of ${sig.names.join(', ')}`;
  const how = x.signals >= 0 ? `completes on ${sig.names[0]}` : `is handed on by ${who(x.agent, -1)}'s arrive on ${sig.names.join(' and ')}${line(sig.arrive)}`;
  const waited = wait ? `waited on ${p.barrierName(wait.bar)}${line(wait.loc)} and never on ${on}` : `waited on no barrier`;
  const phase = x.signals >= 0 ? `the phase that ${x.rw === 'w' ? 'write' : 'read'} completes` : 'the phase that arrive completes';
  return `a wait on the right barrier: the ${xName} ${how}, but ${who(later, -1)} ${waited} before the ${yName}: wait on ${sig.names[0]} for ${phase} before ${y.loc ? `line ${y.loc.line}` : 'that access'}`;
}

/**
 * Explains race `race` of a trace whose events are `events`: the release that let the later access
 * go and the fix. `who` names agents and async ops as the report does; `steps`, the trace's
 * numbered steps (replay.ts), give a PTX release its operands' values ({@link opTextAt}).
 */
export function raceCause(p: Program, events: readonly MachineEvent[], race: HbRace, who: Name, countOf: (bar: number) => number = (k) => p.barrierOf(k).info.count, steps?: readonly TraceStep[]): RaceCause {
  const x = race.first;
  const y = race.second;
  const later = y.agent >= 0 ? y.agent : y.issuer;
  const asyncLoc: AsyncLocs = new Map();
  for (const e of events) if (e.e === 'async') asyncLoc.set(e.id, { loc: e.loc, kind: e.kind, agent: e.agent, t: e.t });
  const wait = releaseOf(p, events, asyncLoc, who, later, y.at, steps)?.wait ?? null;
  const xName = `${x.rw === 'w' ? 'write' : 'read'} by ${who(x.agent, x.async)}${line(x.loc)}`;
  const yName = `${y.rw === 'w' ? 'write' : 'read'} by ${who(y.agent, y.async)}${line(y.loc)}`;
  const buf = p.bufferName(x.buf);
  // A cross-proxy pair is ordered only with a proxy fence.
  if (x.proxy !== y.proxy && x.async < 0 && x.rw === 'w') {
    // The fence goes before the release that let the async side's issuer go (when the trace has one).
    const rel = wait ? releaseOf(p, events, asyncLoc, who, later, y.at, steps) : null;
    const fixLoc = rel && rel.agent === x.agent && rel.async < 0 ? rel.loc : undefined;
    return { release: null, bars: [], fixKind: 'proxy-fence', fix: `a fence: the generic write${line(x.loc)} must be followed by fence.proxy.async before the release that hands ${buf} to the async proxy${fixLoc ? line(fixLoc) : ''}`, ...(fixLoc ? { fixLoc } : {}) };
  }
  if (!wait) {
    // The issuer itself touching the buffer again: its wait_group depth.
    const xa = x.async >= 0 ? asyncLoc.get(x.async) : undefined;
    if (xa && GROUP_KINDS.has(xa.kind) && y.agent === xa.agent) {
      const wg = lastGroupWait(events, xa, y.at);
      return { release: null, bars: [], fixKind: 'group-depth', fix: groupFix(events, xa, y.at, true, buf, who), ...(wg?.loc ? { fixLoc: wg.loc } : {}) };
    }
    const sig = signalsOf(p, events, x, y);
    return {
      release: null,
      bars: [],
      fixKind: sig ? 'right-barrier' : 'wait',
      fix: sig
        ? unwaitedFix(p, who, later, sig, x, xName, y, yName, null)
        : `a wait: nothing ${who(later, -1)} waits on before its access orders it after the ${xName}`,
    };
  }
  const bar = p.barrierName(wait.bar);
  const rel = releaseOf(p, events, asyncLoc, who, later, y.at, steps)!;
  const { observed, done } = rel;
  let relText = rel.text;
  let relLoc = rel.loc;
  let relWait = rel.wait;
  const relAgent = rel.agent;
  const relAsync = rel.async;
  const issuedAt = (id: number) => events.findIndex((e) => e.e === 'async' && e.id === id);
  const issuerRel = x.async >= 0 ? releaseOf(p, events, asyncLoc, who, x.issuer, issuedAt(x.async), steps) : null;
  // The barriers whose phases would order the later side after the earlier one, when it waited on none of them.
  const sig = signalsOf(p, events, x, y);
  const unwaited = sig && !waitedOn(events, later, sig, y.at) ? sig : null;
  // Which fix applies.
  let fix: string;
  let fixKind: RaceFixKind;
  let fixLoc: SrcLoc | undefined;
  const xa = x.async >= 0 ? asyncLoc.get(x.async) : undefined;
  if (xa && GROUP_KINDS.has(xa.kind) && (y.agent === xa.agent || relAgent === xa.agent)) {
    const upTo = y.agent === xa.agent ? y.at : done;
    fix = groupFix(events, xa, upTo, y.agent === xa.agent, buf, who);
    fixKind = 'group-depth';
    fixLoc = lastGroupWait(events, xa, upTo)?.loc;
  } else if (observed < 0 && !unwaited) {
    fix = `${PARITY_FIX}: ${who(later, -1)}'s wait on ${bar}${lineFrom(wait.loc)} passed on the fresh barrier (parity 1 in phase 0) before any phase completed, so nothing orders it after the ${xName}: wait with the parity of a phase completed after that access (parity 0 for the first)`;
    fixKind = 'parity';
  } else if (y.async >= 0 && clusterRelease(p, events, x.buf, wait.bar, observed, done)) {
    fix = clusterReleaseFix(p, who, later, x.buf, wait.bar, yName, arrivesRemotely(p, p.barrierOf(wait.bar).info.name), countOf(wait.bar));
    fixKind = 'count';
  } else if (unwaited && (x.signals >= 0 || observed < 0)) {
    fix = unwaitedFix(p, who, later, unwaited, x, xName, y, yName, wait);
    fixKind = 'right-barrier';
  } else if (x.async >= 0 && x.signals >= 0 && x.signals !== wait.bar) {
    fix = `a wait on the right barrier: the ${xName} completes on ${p.barrierName(x.signals)}, but ${who(later, -1)} waited on ${bar}`;
    fixKind = 'right-barrier';
  } else if (x.async >= 0 && x.signals === wait.bar && issuedAt(x.async) > done && issuerRel && issuerRel.agent >= 0 && issuerRel.async < 0 && (issuerRel.agent !== later || ownEarlyArrive(events, later, issuerRel.wait.bar, issuerRel.done))) {
    // The copy's issuer was let go by a release (another agent's, or this side's own: one consumer
    // alone, or lane 0 of the reading warp) while this side still used the buffer.
    relText = issuerRel.text;
    relLoc = issuerRel.loc;
    relWait = issuerRel.wait;
    // This side's own arrive counted toward the phase that let the issuer go, before its access:
    // the release comes too early, the count may be right.
    const own = ownEarlyArrive(events, later, issuerRel.wait.bar, issuerRel.done);
    if (own?.loc) fixLoc = own.loc;
    fixKind = own ? 'release-order' : 'count';
    fix = own
      ? `move the release after the access: ${who(later, -1)} arrives on ${issuerRel.bar}${lineFrom(own.loc)} before its ${y.rw === 'w' ? 'write' : 'read'} of ${buf}${lineFrom(y.loc)}, and that arrival counted toward the phase that let ${who(x.issuer, -1)} refill ${buf}`
      : `arrival count: ${who(x.issuer, -1)} was released by ${who(issuerRel.agent, -1)}'s arrive on ${issuerRel.bar}${line(issuerRel.loc)} while ${who(later, -1)} still used ${buf}: the count of ${issuerRel.bar} (${countOf(issuerRel.wait.bar)}) is smaller than the agents that must release ${buf}`;
  } else if (x.async >= 0 && x.signals === wait.bar && issuedAt(x.async) > done) {
    fix = `the wait's phase: ${who(later, -1)}'s wait on ${bar}${lineFrom(wait.loc)} observed phase ${observed}, which had completed before the ${xName} was even issued: the parity it computes is stale (a phase counter off by whole phases, or restarted)`;
    fixKind = 'phase';
  } else if (x.async >= 0 && x.signals === wait.bar) {
    fix = `arrival count / expect_tx: phase ${observed} of ${bar} completed before the ${xName} landed: its arrivals (count ${countOf(wait.bar)}) and the bytes expected were all in without this copy's bytes; expect every copy's bytes (arrive.expect_tx with the sum, before the copies can land), or raise the count`;
    fixKind = 'count';
  } else if (x.async >= 0 && xa?.kind === 'tc.mma') {
    fix = `a commit after the last MMA: the tcgen05.mma${line(xa.loc)} reading ${buf} is not covered by the tcgen05.commit that released ${who(later, -1)}`;
    fixKind = 'commit';
  } else if (x.async < 0 && x.agent >= 0 && relAgent >= 0 && relAgent !== x.agent && relAsync < 0) {
    fix = `arrival count: ${bar} completed phase ${observed} on ${who(relAgent, -1)}'s arrive without one from ${who(x.agent, -1)}, whose ${x.rw === 'w' ? 'write' : 'read'}${line(x.loc)} was not done: the count of ${bar} (${countOf(wait.bar)}) is smaller than the arrivals that must release ${buf}`;
    fixKind = 'count';
  } else if (x.async < 0 && x.agent >= 0 && relAgent === x.agent && relLoc && x.loc && relLoc.line < x.loc.line) {
    fix = `move the release after the access: ${who(x.agent, -1)} arrives on ${bar}${line(relLoc)} before its ${x.rw === 'w' ? 'write' : 'read'} of ${buf}${line(x.loc)}`;
    fixKind = 'release-order';
  } else {
    fix = `a wait on the right barrier: nothing that ${who(later, -1)} waits on is released after the ${xName}`;
    fixKind = 'right-barrier';
  }
  const bars = [bar, ...(issuerRel ? [issuerRel.bar] : [])];
  const out: RaceCause = { release: relText, bars, fix: `${fix}. (${yName} against ${xName})`, fixKind };
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
 * (the fence goes after it, before the copy). Null when the trace holds no such issue. `steps`: as
 * for {@link raceCause}.
 */
export function proxyRaceCause(p: Program, events: readonly MachineEvent[], issueLoc: SrcLoc | undefined, who: Name, steps?: readonly TraceStep[]): RaceCause | null {
  const asyncLoc: AsyncLocs = new Map();
  for (const e of events) if (e.e === 'async') asyncLoc.set(e.id, { loc: e.loc, kind: e.kind, agent: e.agent, t: e.t });
  let at = -1;
  for (let i = events.length - 1; i >= 0 && at < 0; i--) {
    const e = events[i]!;
    if (e.e === 'async' && e.loc && issueLoc && e.loc.line === issueLoc.line && e.loc.col === issueLoc.col) at = i;
  }
  if (at < 0) return null;
  const issuer = (events[at] as Extract<MachineEvent, { e: 'async' }>).agent;
  const rel = releaseOf(p, events, asyncLoc, who, issuer, at, steps);
  if (!rel || rel.done < 0) {
    return { release: null, bars: [], fixKind: 'proxy-fence', fix: `a proxy fence: fence.proxy.async between the generic accesses and the copy${line(issueLoc)}` };
  }
  const out: RaceCause = {
    release: rel.text,
    bars: [rel.bar],
    fixKind: 'proxy-fence',
    fix: `a proxy fence: fence.proxy.async by the threads that accessed the buffer, before their release${line(rel.loc)}, or by ${who(issuer, -1)} after its wait on ${rel.bar}${line(rel.wait.loc)} and before the copy${line(issueLoc)}; the mbarrier hand-off alone orders only the generic proxy`,
  };
  if (rel.loc) out.loc = rel.loc;
  if (rel.wait.loc) {
    out.waitLoc = rel.wait.loc;
    out.fixLoc = rel.wait.loc;
  }
  return out;
}
