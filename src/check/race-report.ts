/**
 * The race part of a hazard's report: the happens-before explanation of its trace, the release that
 * let the later side go and the fix (check/cause.ts), and the barriers a static cause may name.
 * Reads the replayed events of the hazard's trace; no machine rule is re-implemented.
 */
import type { MachineEvent } from '../machine/events.js';
import type { Program } from '../machine/program.js';
import { actorNamer } from '../report/ledger.js';
import type { Hazard } from './check.js';
import type { RawHazard } from './explore.js';
import { happensBefore } from './hb.js';
import { namedBarrierSubject } from './static.js';
import { proxyRaceCause, raceCause, type RaceCause } from './cause.js';
import type { OpName, SrcLoc } from '../kernel/ir.js';
import { syncClass } from '../machine/ops/index.js';

/**
 * The barriers whose phases let a race's later side go, the named barriers of its trace, its fix's
 * family ({@link RaceCause.fixKind}), and `overwrite`: the race is a TMA copy writing bytes that a
 * read touched before (the producer refilling a stage it was not given back; ranked by
 * causeRank, check/cause-static.ts).
 */
export type RaceBars = Map<Hazard, { bars: string[]; named: string[]; fixKind: RaceCause['fixKind']; overwrite: boolean }>;

/**
 * Adds the race explanation to `h` (the report of `raw`, a `race`, whose trace replays to `events`):
 * `h.race`, `released by:` / `fix:` / happens-before details, `h.sites` and the extra locations;
 * records in `raceBars` the barriers a static cause may explain. `countOf`: a barrier's expected
 * arrival count in the trace (an `mbarrier.init` at run time sets it; default: the declared count). The strict cross-proxy race
 * (key `…|proxy`, ordered by happens-before but not across proxies, PTX ISA §8.6) gets its release
 * and the place of the proxy fence.
 */
export function explainRace(program: Program, raw: RawHazard, h: Hazard, events: MachineEvent[], raceBars: RaceBars, countOf?: (bar: number) => number): void {
  const who = actorNamer(program, events);
  const race = happensBefore(program, events).races.filter((x) => program.bufferName(x.first.buf) === raw.subject || program.bufferName(x.second.buf) === raw.subject).pop();
  if (!race) {
    // The strict cross-proxy race: ordered by happens-before, unordered across the proxies.
    const rc = raw.key.endsWith('|proxy') ? proxyRaceCause(program, events, raw.locs[0], who, h.trace) : null;
    if (!rc) return;
    raceBars.set(h, { bars: rc.bars, named: [], fixKind: rc.fixKind, overwrite: false });
    applyCause(h, rc, []);
    return;
  }
  const desc = (a: typeof race.first) => `${a.rw === 'w' ? 'write' : 'read'} by ${who(a.agent, a.async)}${a.loc ? ` (line ${a.loc.line})` : ''}`;
  const x = race.first;
  let explanation: string;
  if (x.async >= 0 && x.signals >= 0) explanation = `nothing orders the ${desc(race.second)} after the completion of the ${desc(x)}: no wait observing a phase of ${program.barrierName(x.signals)} completed by that copy precedes it`;
  else if (x.async >= 0) explanation = `the ${desc(x)} is asynchronous; no completion it signals (commit, wait_group) is observed before the ${desc(race.second)}`;
  else explanation = `no release by ${who(x.agent, -1)} after its access is acquired (through a wait, bar.sync or cluster barrier) before the ${desc(race.second)}`;
  const rc = raceCause(program, events, race, who, countOf, h.trace);
  // Memory-model races (check/relaxed.ts): ordered in time, not in memory; the detector names the
  // fix (RawHazard.fix), which replaces its detail line.
  if (raw.fix !== undefined) {
    explanation = `the ${desc(x)} and the ${desc(race.second)} are ordered in time but not by happens-before: ${raw.reason ?? raw.message}`;
    rc.fix = raw.fix;
    rc.fixKind = 'relaxed';
    h.details = h.details.filter((d) => d !== `fix: ${raw.fix}`);
  }
  const named = new Set<string>();
  for (const e of events) {
    if (e.e === 'sync' && (e.kind === 'bar.sync' || e.kind === 'bar.arrive')) {
      named.add(namedBarrierSubject(program, e.id, program.agents[e.agent]!.cta));
    }
  }
  const tmaWrite = race.second.rw === 'w' && race.second.async >= 0
    && events.some((e) => e.e === 'async' && e.id === race.second.async && e.kind === 'tma');
  raceBars.set(h, { bars: rc.bars, named: [...named], fixKind: rc.fixKind, overwrite: tmaWrite && x.rw === 'r' });
  h.race = { first: desc(x), second: desc(race.second), explanation, release: rc.release, fix: rc.fix };
  applyCause(h, rc, [`happens-before (vector clocks over the trace): ${explanation}`]);
}

/** Puts `rc` into `h`: the `released by:` and `fix:` details first, `after` last, the sites and their locations. */
function applyCause(h: Hazard, rc: RaceCause, after: string[]): void {
  h.details = [...(rc.release ? [`released by: ${rc.release}`] : []), `fix: ${rc.fix}`, ...h.details, ...after];
  if (rc.loc || rc.waitLoc || rc.fixLoc) h.sites = { ...(rc.loc ? { release: rc.loc } : {}), ...(rc.waitLoc ? { wait: rc.waitLoc } : {}), ...(rc.fixLoc ? { fix: rc.fixLoc } : {}) };
  for (const l of [rc.loc, rc.fixLoc]) if (l && !h.locations.some((k) => k.line === l.line && k.col === l.col)) h.locations = [...h.locations, l];
}

/**
 * Adds where the fence goes to `h`, a `missing-fence` error whose trace replays to `events`: the
 * last generic write to bytes of the subject buffer (an element a spanning copy covers, a range of
 * it) before the async-proxy operation was issued, and the
 * first synchronizing step of the writer after it (a named-barrier, cluster-barrier or mbarrier
 * release) that let the issuer go: `fence.proxy.async` goes between the two (PTX ISA §8.6). When the
 * writer issues the operation itself, the fence goes between its write and the issue. Leaves `h`
 * as it is when the trace holds no such write.
 */
export function explainFence(program: Program, h: Hazard, events: MachineEvent[]): void {
  const subject = h.subject?.name;
  if (!subject) return;
  const who = actorNamer(program, events);
  // The async-proxy operation: the last issue of an operation on the subject buffer.
  let issue = -1;
  for (let i = events.length - 1; i >= 0 && issue < 0; i--) {
    const e = events[i]!;
    if (e.e === 'async' && e.buf >= 0 && program.bufferName(e.buf) === subject) issue = i;
  }
  if (issue < 0) return;
  const issuer = (events[issue] as Extract<MachineEvent, { e: 'async' }>).agent;
  const key = (events[issue] as Extract<MachineEvent, { e: 'async' }>).buf;
  /** Whether the writer of access event `i` executed fence.proxy.async after it, before the issue. */
  const fencedAfter = (i: number): boolean => {
    const a = (events[i] as Extract<MachineEvent, { e: 'access' }>).agent;
    for (let j = i + 1; j < issue; j++) {
      const e = events[j]!;
      if (e.e === 'op' && e.agent === a && e.op === 'fence.proxy.async') return true;
    }
    return false;
  };
  // The write: the last generic write of the buffer by another agent (its release is the fix's
  // place, and fixes every writer that releases there), else the issuer's own last write.
  const lastWrite = (others: boolean): number => {
    for (let i = issue - 1; i >= 0; i--) {
      const e = events[i]!;
      if (e.e === 'access' && e.proxy === 'generic' && e.rw === 'w' && e.agent >= 0 && e.loc && (!others || e.agent !== issuer) && program.buffersOverlap(e.buf, key) && !fencedAfter(i)) return i;
    }
    return -1;
  };
  let write = lastWrite(true);
  if (write < 0) write = lastWrite(false);
  if (write < 0) return;
  const w = events[write] as Extract<MachineEvent, { e: 'access' }>;
  let release: { text: string; loc: SrcLoc } | null = null;
  if (w.agent !== issuer) {
    for (let i = write + 1; i < issue && !release; i++) {
      const e = events[i]!;
      if (e.e === 'op' && e.agent === w.agent && isRelease(e.op)) release = { text: e.text, loc: e.loc };
    }
  }
  const at = (l: SrcLoc) => ` (line ${l.line})`;
  const written = program.bufferName(w.buf);
  const fix = release
    ? `fence.proxy.async after ${who(w.agent, -1)}'s generic write of ${written}${at(w.loc!)}, before ${release.text}${at(release.loc)}, the release that lets ${who(issuer, -1)} issue the async-proxy operation`
    : `fence.proxy.async between ${who(w.agent, -1)}'s generic write of ${written}${at(w.loc!)} and its async-proxy operation`;
  h.details = [`fix: ${fix}`, ...h.details];
  const fixLoc = release ? release.loc : w.loc!;
  h.sites = { ...(h.sites ?? {}), fix: fixLoc };
  for (const l of [w.loc!, ...(release ? [release.loc] : [])]) if (!h.locations.some((k) => k.line === l.line && k.col === l.col)) h.locations = [...h.locations, l];
}

/** Whether operation `op` lets other agents go after what its agent did before it: the operation table's release and barrier classes. */
function isRelease(op: OpName): boolean {
  const c = syncClass(op);
  return c === 'release' || c === 'barrier';
}
