/**
 * `check(program, opts)`: the exhaustive checker's entry point. Runs the explorer, then rebuilds
 * each hazard's shortest trace by replaying its schedule through the machine's pure `step`, with
 * numbered steps, the barrier states after each step, the per-barrier ledger of the trace and, for
 * races, the happens-before analysis of the trace.
 */
import { boundOption, Governor } from '../machine/governor.js';
import { Machine } from '../machine/machine.js';
import type { Program } from '../machine/program.js';
import type { SrcLoc } from '../kernel/ir.js';
import { buildLedger, type Ledger } from '../report/ledger.js';
import { DEFAULT_BOUNDS, explore, type ExploreOptions, type ExploreResult, type RawHazard } from './explore.js';
import { tcFenceChecks } from './tcfence.js';
import { staticChecks } from './static.js';
import { causeRank, staticCauseOf, staticRaceCauseOf } from './cause-static.js';
import { explainFence, explainRace, type RaceBars } from './race-report.js';
import { objectArg, positiveBound, programArg } from '../model/api-args.js';
import { replay } from './replay.js';

export { replay } from './replay.js';
export type { BarrierSnapshot, CheckOptions, CheckResult, GroupNote, Hazard, StopRequest, TraceStep, Verdict } from './check-types.js';
export { stopRequested } from './check-types.js';
import { stopRequested, type CheckOptions, type CheckResult, type Hazard } from './check-types.js';


/**
 * Whether a bound keeps the trace of a finding (`steps` long) from being built, and which: past
 * the time bound every finding after the first (`traced` of them built so far); the memory bound
 * when a replay (a whole state of the launch, `machine().stateBytes()`) would pass it.
 */
function untracedBy(gov: Governor, program: Program, steps: number, traced: number, machine: () => Machine): 'timeout' | 'max-memory' | 'interrupt' | null {
  const stop = gov.check();
  if (stop === 'max-memory') return 'max-memory';
  if (stop !== null && traced > 0) return stop === 'interrupt' ? 'interrupt' : 'timeout';
  const bytes = machine().stateBytes() + steps * 2048;
  // Stopped by another bound the governor says no to everything: the memory is asked directly.
  if (stop !== null) return gov.memory(true) + bytes > gov.maxMemory ? 'max-memory' : null;
  return gov.allow(bytes, true) ? null : 'max-memory';
}

export function scheduleOf(raw: RawHazard, parent: Int32Array, chainOff: Int32Array, chainData: Int32Array, roots?: readonly number[][]): number[] {
  const chains: number[][] = [];
  let root = 0;
  for (let id = raw.state; id >= 0; id = parent[id]!) {
    const off = chainOff[id]!;
    chains.push(Array.from(chainData.subarray(off + 1, off + 1 + chainData[off]!)));
    root = id;
  }
  // A search started from given states (ExploreOptions.hooks.roots): the schedule that reached its root first.
  if (roots?.[root]) chains.push(roots[root]!);
  chains.reverse();
  const path = chains.flat();
  for (const c of raw.extra) path.push(c.kind === 'agent' ? c.agent : -(c.id + 1));
  return path;
}

/** Every key of {@link CheckOptions}: `check` refuses any other (a misspelt bound would be no bound). */
const CHECK_OPTION_KEYS = ['maxStates', 'maxMemory', 'timeout', 'all', 'por', 'symmetry', 'ctaSymmetry', 'deadSlots', 'stableWaits', 'stableLandings', 'countingArrivals', 'strict', 'verifyHash', 'workers', 'randomRuns', 'onProgress', 'onTerminal', 'stop'] as const satisfies readonly (keyof CheckOptions)[];
// Every option is listed (a new one not added above fails to compile here).
const CHECK_KEYS_COMPLETE: Exclude<keyof CheckOptions, (typeof CHECK_OPTION_KEYS)[number]> extends never ? true : never = true;
void CHECK_KEYS_COMPLETE;

/** The most worker threads {@link check} starts (the CLI lowers `--workers` to the CPUs first). */
export const MAX_WORKERS = 256;

/** Exhaustively checks `program`: every schedule of agents and asynchronous completions. */
export function check(program: Program, opts: CheckOptions = {}): CheckResult {
  programArg('check', program);
  objectArg('check', 'options', opts, true, CHECK_OPTION_KEYS);
  for (const k of ['maxStates', 'maxMemory', 'timeout', 'workers'] as const) boundOption('check', k, opts[k]);
  positiveBound('check', 'maxStates', opts.maxStates, 'a positive whole number of states', true);
  positiveBound('check', 'maxMemory', opts.maxMemory, 'a positive number of bytes');
  positiveBound('check', 'timeout', opts.timeout, 'a positive number of milliseconds');
  if (opts.workers !== undefined && (!Number.isInteger(opts.workers) || opts.workers < 1)) {
    throw new RangeError(`check: workers must be a positive integer, got ${opts.workers}`);
  }
  // Each worker is a thread with a copy of the program: past this, allocation fails deep inside.
  if (opts.workers !== undefined && opts.workers > MAX_WORKERS) {
    throw new RangeError(`check: workers must be at most ${MAX_WORKERS} (threads, each with its own copy of the kernel), got ${opts.workers}`);
  }
  // The timeout covers the whole check: the static checks run first, the search gets the rest.
  const t0 = Date.now();
  // One governor for the whole check: the static checks, the search's setup and search, the traces.
  const stop = opts.stop;
  if (stop !== undefined && !(stop instanceof Int32Array) && (typeof stop !== 'object' || stop === null || !('aborted' in stop))) {
    throw new TypeError('check: stop must be an AbortSignal (an object with `aborted`) or an Int32Array');
  }
  const gov = new Governor({
    maxMemory: opts.maxMemory ?? DEFAULT_BOUNDS.maxMemory, deadline: t0 + (opts.timeout ?? DEFAULT_BOUNDS.timeoutMs),
    ...(stop !== undefined ? { interrupt: () => stopRequested(stop) } : {}),
  }, { every: 64 });
  const staticRaw = new Set(staticChecks(program, gov));
  // The tcgen05 fence rule (tcfence.ts): warnings under --strict only (CUTLASS omits the fences).
  if (opts.strict) for (const h of tcFenceChecks(program)) staticRaw.add(h);
  const eo: ExploreOptions = {};
  if (opts.maxStates !== undefined) eo.maxStates = opts.maxStates;
  if (opts.maxMemory !== undefined) eo.maxMemory = opts.maxMemory;
  eo.timeoutMs = Math.max(0, (opts.timeout ?? DEFAULT_BOUNDS.timeoutMs) - (Date.now() - t0));
  if (opts.all !== undefined) eo.all = opts.all;
  if (opts.por !== undefined) eo.por = opts.por;
  if (opts.symmetry !== undefined) eo.symmetry = opts.symmetry;
  if (opts.ctaSymmetry !== undefined) eo.ctaSymmetry = opts.ctaSymmetry;
  if (opts.deadSlots !== undefined) eo.deadSlots = opts.deadSlots;
  if (opts.stableWaits !== undefined) eo.stableWaits = opts.stableWaits;
  if (opts.stableLandings !== undefined) eo.stableLandings = opts.stableLandings;
  if (opts.countingArrivals !== undefined) eo.countingArrivals = opts.countingArrivals;
  if (opts.strict !== undefined) eo.strict = opts.strict;
  if (opts.verifyHash !== undefined) eo.verifyHash = opts.verifyHash;
  if (opts.workers !== undefined) eo.workers = opts.workers;
  if (opts.randomRuns !== undefined) eo.randomRuns = opts.randomRuns;
  if (opts.onProgress) eo.onProgress = opts.onProgress;
  if (opts.onTerminal) eo.onTerminal = opts.onTerminal;
  eo.governor = gov;
  const r = explore(program, eo);
  return checkResultOf(program, r, staticRaw, opts, gov, t0);
}

/**
 * The {@link CheckResult} of search `r` of `program` (with the static findings `staticRaw`): each
 * hazard's schedule replayed into its trace and ledger (within the bounds of `gov`), causes, order
 * and merged sites, coverage. `t0`: when the check started (Date.now()).
 */
export function checkResultOf(program: Program, r: ExploreResult, staticRaw: ReadonlySet<RawHazard>, opts: CheckOptions, gov: Governor, t0: number): CheckResult {
  const hazards: Hazard[] = [];
  // Per race: the barriers that released its later side and the named barriers of its trace (static causes).
  const raceBars: RaceBars = new Map();
  /** Each finding's detector variant ({@link variantOf}), for merging sites. */
  const variants = new WeakMap<Hazard, string>();
  /** Each finding's raw hazard: the hang facts its cause is decided from ({@link RawHazard.startParity}, {@link RawHazard.waitBarriers}). */
  const raws = new WeakMap<Hazard, RawHazard>();
  const warnings: Hazard[] = [];
  // The bounds cover the traces too: past one, findings after the first keep their schedule only.
  let traced = 0;
  let noLedger: Ledger | undefined;
  let machine: Machine | undefined;
  for (const raw of [...r.hazards, ...staticRaw]) {
    const schedule = scheduleOf(raw, r.parent, r.chainOff, r.chainData, r.rootSchedules);
    // A buffer's subject is its name, with `[i]` for an array element and `@cN` in a cluster.
    const isBuf = raw.kind === 'race' || (raw.subject !== null && program.buffers.some((b) => raw.subject === b.name || raw.subject!.startsWith(`${b.name}[`) || raw.subject!.startsWith(`${b.name}@`)));
    const base = {
      kind: raw.kind, severity: raw.severity, message: raw.message,
      subject: raw.subject ? { type: isBuf ? 'buffer' as const : 'barrier' as const, name: raw.subject } : null,
      details: raw.details, locations: raw.locs, schedule,
      ...(raw.random ? { randomRun: true } : {}),
    };
    const by = schedule.length ? untracedBy(gov, program, schedule.length, traced, () => (machine ??= new Machine(program))) : null;
    if (by) {
      const u: Hazard = { ...base, trace: [], ledger: (noLedger ??= buildLedger(program, [])), untraced: true, untracedBy: by };
      raws.set(u, raw);
      (raw.severity === 'error' ? hazards : warnings).push(u);
      continue;
    }
    if (schedule.length) traced++;
    // An empty schedule (a static finding) has no steps, no events and the ledger of no events.
    const rp = schedule.length ? replay(program, schedule, (machine ??= new Machine(program))) : { steps: [], events: [] };
    const h: Hazard = { ...base, trace: rp.steps, ledger: schedule.length ? buildLedger(program, rp.events) : (noLedger ??= buildLedger(program, [])) };
    variants.set(h, variantOf(raw.key));
    raws.set(h, raw);
    if (staticRaw.has(raw)) h.static = true;
    if (raw.kind === 'race') explainRace(program, raw, h, rp.events, raceBars, 'final' in rp ? (k) => rp.final.bars[k]!.expected : undefined);
    else if (raw.kind === 'missing-fence' && raw.severity === 'error') explainFence(program, h, rp.events);
    (raw.severity === 'error' ? hazards : warnings).push(h);
  }
  // A trace has one step per schedule entry (an untraced finding has its schedule only).
  const cmp = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);
  const byLen = (a: Hazard, b: Hazard) => a.schedule.length - b.schedule.length;
  // A hang, or an operation left in flight at exit, that a static finding explains leads with that
  // finding (trip counts that differ leave copies unwaited at exit as often as they hang).
  const statics = warnings.filter((w) => w.static);
  // A hang whose waiter in the wait-for cycle waits with parity 0 on a fresh barrier that others
  // can still arrive on (hang.ts's producer-start hint) is explained by that parity: an arrive
  // never executed does not explain it (the waiter's arrivers are there), so the parity leads.
  const parityCauses: { locs: string; cause: NonNullable<Hazard['cause']> }[] = [];
  const locsKey = (ls: readonly SrcLoc[]) => ls.map((l) => `${l.file ?? ''}:${l.line}:${l.col}`).sort().join(',');
  for (const h of hazards) {
    if (h.kind !== 'hang') continue;
    const pc = startParityCause(raws.get(h)?.startParity);
    if (pc) parityCauses.push({ locs: locsKey(h.locations), cause: pc });
  }
  for (const h of hazards) {
    if (h.kind !== 'hang' && h.kind !== 'cycle' && h.kind !== 'inflight-at-exit') continue;
    const pc = h.kind === 'hang' ? startParityCause(raws.get(h)?.startParity) : h.kind === 'cycle' ? parityCauses.find((x) => x.locs === locsKey(h.locations) || h.locations.every((l) => x.locs.includes(`${l.file ?? ''}:${l.line}:${l.col}`)))?.cause ?? null : null;
    const c = staticCauseOf(h.subject?.name ?? null, raws.get(h)?.waitBarriers ?? [], statics);
    if (c && !(pc && c.kind === 'unreachable-arrive')) {
      h.cause = { kind: c.kind, message: c.message, locations: c.locations };
      h.details = [`root cause (static ${c.kind}): ${c.message}`, ...h.details];
    } else if (pc) {
      h.cause = pc;
    }
  }
  // A hang on a barrier whose expect_tx asks bytes no copy delivers (a tx-mismatch of this check on
  // a barrier the hang waits on) leads with that finding when nothing static explains it.
  for (const h of hazards) {
    if (h.kind !== 'hang' || h.cause) continue;
    const bars = raws.get(h)?.waitBarriers ?? [];
    const tx = hazards.find((x) => x.kind === 'tx-mismatch' && x.subject && bars.includes(x.subject.name));
    if (!tx) continue;
    h.cause = { kind: 'tx-mismatch', message: tx.message, locations: tx.locations };
  }
  // A hang whose waiter skips a completed phase nobody observed (its parity did not advance) leads
  // with that wait when nothing else explains it.
  for (const h of hazards) {
    if (h.kind !== 'hang' || h.cause) continue;
    const sk = skippedPhaseCause(raws.get(h)?.skippedPhase);
    if (sk) h.cause = sk;
  }
  // A race that a count or trip-count mismatch explains leads with it (the fix is the count).
  for (const h of hazards) {
    const rb = raceBars.get(h);
    if (!rb || h.cause) continue;
    const c = staticRaceCauseOf(rb.bars, rb.named, statics);
    // A race whose later side's wait passed on the fresh barrier (parity 1, no phase completed:
    // the race's own fix is the wait's parity) is that parity's, even where a static trip-mismatch
    // counts the waiter's observed phases short: its vacuous first wait is the phase it misses
    // (an inverted start parity), not trip counts that differ. The vacuous-wait finding on that
    // barrier, when the search made one, is the cause; the parity fix stays.
    if (c && c.kind === 'trip-mismatch' && h.race && rb.fixKind === 'parity') {
      const vw = warnings.find((w) => w.kind === 'vacuous-wait' && w.subject && rb.bars.includes(w.subject.name));
      if (vw) h.cause = { kind: vw.kind, message: vw.message, locations: vw.locations };
      continue;
    }
    if (c) {
      h.cause = { kind: c.kind, message: c.message, locations: c.locations };
      // The count is the fix; a schedule-based guess other than the count is about the symptom.
      if (h.race && rb.fixKind !== 'count') {
        const fix = `arrival count: ${c.kind === 'trip-mismatch' ? 'the arrivals on the barrier and the waits for it disagree about the number of phases' : 'the arrivals per phase do not add up to the count'} (the cause above); this race is what happens once a phase completes early`;
        h.details = h.details.map((d) => (d.startsWith('fix: ') ? `fix: ${fix}` : d));
        h.race = { ...h.race, fix };
      }
      h.details = [`root cause (static ${c.kind}): ${c.message}`, ...h.details];
    }
  }
  // An arrive that a branch on parameters leaves out is a specialization, not a finding, unless
  // it is what a hang or race of this check comes from (static.ts, param-branches.ts).
  // Every left-out arrive on a barrier that one of them is the cause for stays.
  const causes = new Set(hazards.map((h) => h.cause?.message));
  const causeBars = new Set(warnings.filter((w) => causes.has(w.message)).map((w) => w.subject?.name));
  for (let i = warnings.length - 1; i >= 0; i--) if (raws.get(warnings[i]!)?.specialized && !causeBars.has(warnings[i]!.subject?.name)) warnings.splice(i, 1);
  // Causes before the symptoms the same bug leads to, then shortest first.
  // Ties by kind, subject and first location: the verdict must not depend on the order in which
  // a search (one worker or several) met hazards with traces of equal length.
  // Races and hangs first (what the user sees break), a hang's wait-for cycle after it.
  const kindRank = (k: string) => (k === 'race' ? 0 : k === 'hang' ? 1 : k === 'cycle' ? 3 : 2);
  const tie = (a: Hazard, b: Hazard) => kindRank(a.kind) - kindRank(b.kind) || cmp(a.kind, b.kind) || cmp(a.subject?.name ?? '', b.subject?.name ?? '')
    || (a.locations[0]?.line ?? 0) - (b.locations[0]?.line ?? 0) || (a.locations[0]?.col ?? 0) - (b.locations[0]?.col ?? 0);
  // An overwrite race is a symptom only beside a race on the consumer side (causeRank); alone it is
  // the bug's own race, ordered by its trace like any other error.
  const overwrite = (h: Hazard) => raceBars.get(h)?.overwrite;
  const demote = hazards.some((h) => h.kind === 'race' && causeRank(h, overwrite(h)) === 0);
  const rank = (h: Hazard) => (demote ? causeRank(h, overwrite(h)) : 0);
  hazards.sort((a, b) => rank(a) - rank(b) || byLen(a, b) || tie(a, b));
  warnings.sort((a, b) => byLen(a, b) || tie(a, b));
  mergeSites(hazards, variants);
  mergeSites(warnings, variants);
  const verdict = hazards.length ? hazards[0]!.kind : r.complete || r.stoppedBy === 'hazard' ? 'ok' : 'incomplete';
  return {
    program, verdict, complete: r.complete, stoppedBy: r.stoppedBy, hazards, warnings,
    coverage: {
      states: r.states, transitions: r.transitions, depth: r.depth, peakFrontier: r.peakFrontier, memoryBytes: r.memory,
      elapsedMs: Date.now() - t0, terminalStates: r.terminalOk, por: opts.por !== false, symmetryOn: opts.symmetry !== false,
      symmetry: opts.symmetry === false || !r.analysis ? [] : r.analysis.groups.map((g) => ({ role: program.agents[g.agents[0]!]!.roleName, cta: program.agents[g.agents[0]!]!.cta, agents: g.agents.length })),
      ctaSymmetry: r.analysis ? { permutations: r.analysis.cta.perms.map((q) => q.rank.slice()), reason: r.analysis.cta.reason } : { permutations: [], reason: 'not analysed: a bound stopped the check first' },
      randomRuns: r.randomRuns ?? { runs: 0, steps: 0 },
    },
  };
}

const sameLoc = (a: SrcLoc, b: SrcLoc) => a.line === b.line && a.col === b.col && a.file === b.file;

/**
 * The detector's variant of a finding: the last field of its raw key when that field is a word
 * (`never`, `early`, `war`, `proxy`, `ghost2` → `ghost`, …), else ''. One detector reports one kind
 * in several variants that call for different fixes (a phase nobody waits on, a reader that never
 * waits); fields that are locations or agent numbers only tell sites apart.
 */
export function variantOf(key: string): string {
  const last = key.slice(key.lastIndexOf('|') + 1);
  return /^[a-z]+\d*$/i.test(last) && key.includes('|') ? last.replace(/\d+$/, '') : '';
}

/**
 * Keeps one finding per (kind, subject, detector variant) of a sorted list, in place: the first
 * (the shortest, the list being sorted by rank and trace length), with the others' locations as
 * {@link Hazard.also}. Other schedules reach the same hazard through other sites (another loop
 * trip, another warp, a hang with other agents blocked); `--all` promises every reachable (kind,
 * subject) and every variant of it ({@link variantOf}), not every path.
 */
function mergeSites(list: Hazard[], variants: WeakMap<Hazard, string>): void {
  const first = new Map<string, Hazard>();
  let w = 0;
  for (const h of list) {
    // A static finding (no schedule) is one site already: two of them are two different fixes.
    if (h.static) {
      list[w++] = h;
      continue;
    }
    const key = `${h.kind}|${h.subject?.name ?? ''}|${variants.get(h) ?? ''}`;
    const keep = first.get(key);
    if (!keep) {
      first.set(key, h);
      list[w++] = h;
      continue;
    }
    const also = (keep.also ??= { count: 0, locations: [] });
    also.count++;
    for (const l of h.locations) {
      if (keep.locations.some((k) => sameLoc(k, l)) || also.locations.some((k) => sameLoc(k, l))) continue;
      also.locations.push(l);
    }
    also.locations.sort((a, b) => a.line - b.line || a.col - b.col);
  }
  list.length = w;
}

/**
 * The cause of a hang from its skipped-phase fact `sk` (machine/hang.ts `BlockedWaiter.skipped`):
 * the waiter's parity names a phase past the next one, which completed with no waiter observing
 * it; null without the fact.
 */
function skippedPhaseCause(sk: RawHazard['skippedPhase']): NonNullable<Hazard['cause']> | null {
  if (!sk) return null;
  const next = sk.observed + 1;
  return {
    kind: 'skipped-phase',
    message: `${sk.waiter}'s wait on ${sk.barrier} passed for phase ${sk.observed}, then waits with parity ${sk.parity}, which names phase ${sk.phase}: phase ${next} completed and no wait observed it. The parity did not advance from one use of the barrier to the next (in a ring of S stages it flips every S iterations of the loop that counts every use, e.g. ((i / S) & 1) with i counting across tiles); parity ${next & 1} would have waited for phase ${next}`,
    locations: [sk.loc],
  };
}

/**
 * The cause of a hang from its producer-start parity fact `sp` (machine/hang.ts decides it, the
 * hang detector carries it on the raw hazard): the waiter waits with parity 0 for the first
 * completion of a barrier that only agents of the cycle can complete; null without the fact.
 */
function startParityCause(sp: RawHazard['startParity']): NonNullable<Hazard['cause']> | null {
  if (!sp) return null;
  return {
    kind: 'start-parity',
    message: `${sp.waiter} waits on ${sp.barrier} with parity 0 while the barrier is still in its phase 0, so it waits for the barrier's first completion, which the agents it waits for cannot give before it passes; a wait meaning "the buffer is free" at the start (a producer on an empty barrier) uses parity 1, which passes on a fresh barrier (start the producer's phase bit at 1)`,
    locations: [sp.loc],
  };
}
