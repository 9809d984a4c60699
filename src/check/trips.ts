/**
 * The all-trip-counts check (`mbsim check --all-trips N`, docs/CHECK.md "Every trip count"): one
 * verdict for every value of a trip parameter N (k-iterations, tiles) at or above a least one.
 *
 * 1. Before the last trip. The kernel runs with N huge, so no trip loop ends; a state identifies
 *    with the same state one period of iterations earlier (trips-shift.ts), so this search ends
 *    once the loops are in their steady state. Every state where a step may end a trip loop is a
 *    start of the last trip: a stored one, or one a forced step of the reduction leaves from.
 * 2. The last trip. From every stored state, for each trip count n it is consistent with (every
 *    agent inside a trip loop entered its body under n, trips-loops.ts) and that can end a loop
 *    within the next steps, the kernel with N = n goes on from that state: one search per n,
 *    started from all those states at once.
 * Every execution with N = n is the first search's up to the step that first ends a trip loop,
 * then the second's; so a complete pair of searches covers every N from the least on, and each
 * finding's schedule replays as a whole in the kernel with its own N (shown with the finding).
 */
import type { Kernel } from '../kernel/ir.js';
import { Governor } from '../machine/governor.js';
import { Machine, type Choice, type MachineState } from '../machine/machine.js';
import { instantiate, KernelError, type Program } from '../machine/program.js';
import type { Expr, SrcLoc } from '../kernel/ir.js';
import { evalExpr } from '../kernel/expr.js';
import { analyse, type Analysis } from './analysis.js';
import { initialExtra } from './search.js';
import { checkResultOf, scheduleOf, type CheckOptions, type CheckResult, type Hazard } from './check.js';
import { Codec, type Extra } from './codec.js';
import { decodeChoice, DEFAULT_BOUNDS, encodeChoice, explore, type ExploreResult, type RawHazard } from './explore.js';
import { staticChecks } from './static.js';
import { consistentWith, crossesTripHead, leastConsistent, mayEndLoop, tripLoopsOf, type TripLoop } from './trips-loops.js';
import { learnRates, shiftPlan, type ShiftPlan } from './trips-shift.js';
import { shifted } from './trips-normal.js';
import { sizedBy, usesInScope } from './trips-scope.js';

/** The huge trip count of the first search: no trip loop ends (exact integers up to 2^53). */
export const HUGE_TRIPS = 2 ** 40;

/** Options of {@link checkAllTrips}: the check's, the trip parameter and its least value. */
export interface TripsOptions extends CheckOptions {
  /** The trip parameter (a `param` of the kernel that bounds loops). */
  param: string;
  /** The least trip count covered (default 1). */
  from?: number;
}

/** What the all-trip-counts check covered. */
export interface TripsInfo {
  param: string;
  /** The least trip count covered. */
  from: number;
  /** True when both searches finished: the verdict holds for every value from `from` on. */
  complete: boolean;
  /** Why the states before the last trip could not be identified across periods (the first search then does not end), or null. */
  noShift: { why: string; line?: number; col?: number } | null;
  /** The period (iterations of the slowest trip loop) and threshold of the steady state, when identified. */
  period: number | null;
  threshold: number | null;
  /** States of the first search (before the last trip). */
  statesBefore: number;
  /** The trip counts the second search ran with, and the states it started from. */
  tripCounts: number[];
  starts: number;
}

/** A check result with what the all-trip-counts check covered; each hazard's `tripCount` is the N its trace runs with. */
export type TripsResult = CheckResult & { trips: TripsInfo; hazards: (Hazard & { tripCount?: number })[] };

/** The reason a kernel and parameter are out of the check's scope (a kernel error with its place, code `all-trips`). */
export class TripsScopeError extends KernelError {
  constructor(message: string, loc?: SrcLoc) {
    super(message, loc, 'all-trips');
    this.name = 'TripsScopeError';
  }
}

/**
 * Checks `kernel` (with `overrides`) for every value of trip parameter `opts.param` from
 * `opts.from` (default 1) on. Throws {@link TripsScopeError} when the parameter is not a trip
 * count this check can take (it sizes a declaration, or role code uses it other than in loop
 * bounds); `KernelError` from `instantiate` as usual.
 */
export function checkAllTrips(kernel: Kernel, overrides: Record<string, number>, opts: TripsOptions): TripsResult {
  const t0 = Date.now();
  const param = opts.param;
  const N0 = opts.from ?? 1;
  if (!kernel.params.some((q) => q.name === param)) throw new TripsScopeError(`--all-trips ${param}: the kernel has no parameter ${param} (it has: ${kernel.params.map((q) => q.name).join(', ') || 'none'})`);
  const sized = sizedBy(kernel, param);
  if (sized) throw new TripsScopeError(`--all-trips ${param}: ${sized.why}`, sized.loc);
  const programs = new Map<number, Program>();
  const at = (n: number): Program => {
    let p = programs.get(n);
    if (!p) programs.set(n, (p = instantiate(kernel, { ...overrides, [param]: n })));
    return p;
  };
  const pH = at(HUGE_TRIPS);
  const loops: TripLoop[][] = pH.roles.map((rc) => tripLoopsOf(rc.code, param, (e) => evalParams(e, pH.params)));
  if (!loops.some((l) => l.length)) throw new TripsScopeError(`--all-trips ${param}: no loop of the kernel is bounded by ${param}`);
  for (let r = 0; r < pH.roles.length; r++) {
    if (!loops[r]!.length) continue;
    const bad = usesInScope(pH, r, param, loops[r]!);
    if (bad) throw new TripsScopeError(`--all-trips ${param}: ${bad.why}`, bad.loc);
  }
  const timeout = opts.timeout ?? DEFAULT_BOUNDS.timeoutMs;
  const maxStates = opts.maxStates ?? DEFAULT_BOUNDS.maxStates;
  const gov = new Governor({ maxMemory: opts.maxMemory ?? DEFAULT_BOUNDS.maxMemory, deadline: t0 + timeout }, { every: 64 });
  const an = analyse(pH);
  let noShift: TripsInfo['noShift'] = null;
  let plan: ShiftPlan | null = null;
  if (pH.values || an.trackRelaxed) noShift = { why: pH.values ? 'the kernel has values in memory (the steady state is not identified across them)' : 'the kernel uses relaxed or scoped memory-model operations (the steady state is not identified across them)' };
  else {
    const rates = learnRates(pH, loops);
    if (!rates) noShift = { why: 'the trip loops made no progress on a sample schedule' };
    else {
      const sp = shiftPlan(pH, param, loops, rates);
      if ('why' in sp) noShift = { why: sp.why, ...(sp.loc ? { line: sp.loc.line, col: sp.loc.col } : {}) };
      else plan = sp;
    }
  }
  const crosses = pH.roles.map((rc, r) => crossesTripHead(rc.code, loops[r]!));
  const mH = new Machine(pH);
  const codec = new Codec(pH, an, mH.initial());
  const key = (s: MachineState, x: Extra, out: Uint32Array) => {
    const n = shifted(plan ?? { L: 1, T: Infinity, delta: pH.roles.map(() => new Map()) }, mH, pH, an, loops, s, x);
    codec.hash(n.s, n.x, out);
  };
  // The trip counts each stored state starts the last trip with (trips-loops.ts).
  const maxStep = Math.max(1, ...loops.flat().map((l) => l.step));
  // A start: a state reached by the stored state `id` and then the forced choices `chain`.
  const starts = new Map<number, { s: MachineState; x: Extra; id: number; chain: number[] }[]>();
  let nStarts = 0;
  // Starts count against --max-states (a forced chain can leave many: one per iteration it runs).
  let tooMany = false;
  const addStart = (s: MachineState, x: Extra, id: number, chain: number[]) => {
    if (nStarts >= maxStates) {
      tooMany = true;
      return;
    }
    const nmin = leastConsistent(at, s, loops, N0);
    if (nmin < 0) return;
    // Only where a step can end a trip loop under a consistent count does the last trip start here.
    if (!s.agents.some((_, a) => mayEndLoop(at(nmin), s, a, loops, crosses))) return;
    for (let n = nmin; n < nmin + maxStep; n++) {
      if (!consistentWith(at(n), s, loops)) continue;
      let l = starts.get(n);
      if (!l) starts.set(n, (l = []));
      l.push({ s, x, id, chain });
      nStarts++;
    }
  };
  const onExpand = (s: MachineState, x: Extra, id: number) => addStart(s, x, id, []);
  // A step that can end a trip loop is still forced where the reduction forces it (under the huge
  // count it only moves its agent on into the next iteration), and the state it starts from is a
  // start of the last trip: under a count n that step ends the loop instead, which is as local, so
  // it commutes with the same steps (docs/CHECK.md, "Every trip count"). Without a steady state
  // (no shift plan) a forced chain could run a free loop for its 2^40 iterations: such steps are
  // explored instead, every state they start from stored.
  const forcedHead = plan
    ? {
      at: (s: MachineState, a: number) => crosses[pH.agents[a]!.role]![s.agents[a]!.pc] === 1,
      seed: (s: MachineState, x: Extra, id: number, prefix: readonly Choice[]) => addStart(s, x, id, prefix.map(encodeChoice)),
    }
    : {
      at: (s: MachineState, a: number) => {
        if (crosses[pH.agents[a]!.role]![s.agents[a]!.pc] !== 1) return false;
        const nmin = leastConsistent(at, s, loops, N0);
        return nmin < 0 || mayEndLoop(at(nmin), s, a, loops, crosses);
      },
    };
  const before = explore(pH, {
    ...searchOpts(opts), maxStates: Math.floor(maxStates / 2), timeoutMs: Math.max(0, Math.floor(timeout / 2) - (Date.now() - t0)),
    hooks: { key, onExpand, forcedHead },
  });
  const results: { n: number; r: CheckResult }[] = [];
  // The static findings that hold at every trip count sampled (the least ones, and one period on):
  // a finding of one count only (an arrive that a single iteration never reaches) is not the kernel's.
  const sample = [...new Set([N0, N0 + 1, N0 + (plan?.L ?? 2), N0 + (plan?.L ?? 2) + 1])];
  const staticKey = (h: RawHazard) => `${h.kind}|${h.subject ?? ''}|${h.locs.map((l) => `${l.line}:${l.col}`).join(',')}`;
  const perCount = sample.map((n) => staticChecks(at(n), gov));
  const staticRaw = new Set<RawHazard>(perCount[0]!.filter((h) => perCount.every((l) => l.some((g) => staticKey(g) === staticKey(h)))));
  // Findings before the last trip: each runs with the least trip count its final state is consistent with.
  if (before.hazards.length) {
    const byN = new Map<number, RawHazard[]>();
    for (const h of before.hazards) {
      const n = leastTrips(pH, at, loops, scheduleOf(h, before.parent, before.chainOff, before.chainData), N0, maxStep);
      const l = byN.get(n) ?? [];
      l.push(h);
      byN.set(n, l);
    }
    for (const [n, hs] of [...byN].sort((a, b) => a[0] - b[0])) results.push({ n, r: checkResultOf(at(n), { ...before, hazards: hs }, new Set(), opts, gov, t0) });
  }
  let complete = before.complete && !tooMany;
  let states = before.states;
  let transitions = before.transitions;
  let depth = before.depth;
  let peakFrontier = before.peakFrontier;
  let memory = before.memory;
  let stoppedBy: CheckResult['stoppedBy'] = before.stoppedBy ?? (tooMany ? 'max-states' : null);
  const tripCounts: number[] = [];
  const errorFound = () => results.some((x) => x.r.hazards.length);
  if (complete || before.stoppedBy === 'hazard') {
    for (let n = N0; n < N0 + maxStep; n++) if (!starts.has(n)) starts.set(n, []);
    for (const n of [...starts.keys()].sort((a, b) => a - b)) {
      if (errorFound() && !opts.all) break;
      const anN = analyse(at(n));
      const roots = starts.get(n)!.map(({ s, x, id, chain }) => ({ s, x: remapExtra(x, an, anN), schedule: [...scheduleOf({ state: id, extra: [] } as unknown as RawHazard, before.parent, before.chainOff, before.chainData), ...chain] }));
      // The least counts are also checked from their own initial state (a loop they skip).
      if (n < N0 + maxStep) roots.unshift({ s: new Machine(at(n)).initial(), x: initialExtra(at(n), anN), schedule: [] });
      const left = timeout - (Date.now() - t0);
      if (left <= 0 || states >= maxStates) {
        complete = false;
        stoppedBy = left <= 0 ? 'timeout' : 'max-states';
        break;
      }
      const r: ExploreResult = explore(at(n), { ...searchOpts(opts), maxStates: maxStates - states, timeoutMs: left, hooks: { roots } });
      tripCounts.push(n);
      states += r.states;
      transitions += r.transitions;
      depth = Math.max(depth, r.depth);
      peakFrontier = Math.max(peakFrontier, r.peakFrontier);
      memory = Math.max(memory, r.memory);
      if (!r.complete) {
        complete = false;
        stoppedBy = r.stoppedBy;
      }
      if (r.hazards.length) results.push({ n, r: checkResultOf(at(n), r, new Set(), opts, gov, t0) });
      if (r.stoppedBy !== null && r.stoppedBy !== 'hazard') break;
    }
  }
  if (errorFound() && stoppedBy === null) stoppedBy = 'hazard';
  const base = checkResultOf(at(N0), { ...before, hazards: [] }, staticRaw, opts, gov, t0);
  return merge(base, results, {
    param, from: N0, complete: complete && !errorFound(), noShift, period: plan?.L ?? null, threshold: plan?.T ?? null,
    statesBefore: before.states, tripCounts, starts: nStarts,
  }, { complete, stoppedBy, states, transitions, depth, peakFrontier, memory, elapsedMs: Date.now() - t0 });
}

/**
 * Checker data of the kernel with the huge trip count as the kernel with another count lays it
 * out: the phases each waiter observed move to that analysis's history slots (a kernel with fewer
 * iterations than stages waits on fewer barriers).
 */
function remapExtra(x: Extra, from: Analysis, to: Analysis): Extra {
  const hist = new Array<number>(to.histLen).fill(-2);
  to.waitSlots.forEach((m, a) => m.forEach((slot, bar) => {
    const old = from.waitSlots[a]?.get(bar);
    if (old !== undefined) hist[slot] = x.hist[old]!;
  }));
  return { ...x, hist };
}

/** The explore options a check's options give (bounds are set by the caller). */
function searchOpts(opts: CheckOptions) {
  return {
    ...(opts.all !== undefined ? { all: opts.all } : {}), ...(opts.por !== undefined ? { por: opts.por } : {}),
    ...(opts.symmetry !== undefined ? { symmetry: opts.symmetry } : {}), ...(opts.ctaSymmetry !== undefined ? { ctaSymmetry: opts.ctaSymmetry } : {}),
    ...(opts.strict !== undefined ? { strict: opts.strict } : {}), ...(opts.maxMemory !== undefined ? { maxMemory: opts.maxMemory } : {}),
    ...(opts.randomRuns !== undefined ? { randomRuns: opts.randomRuns } : {}),
  };
}

/** The least trip count from `N0` that the state at the end of `schedule` (run with the huge count) is consistent with. */
function leastTrips(pH: Program, at: (n: number) => Program, loops: readonly (readonly TripLoop[])[], schedule: number[], N0: number, maxStep: number): number {
  const m = new Machine(pH);
  let s = m.initial();
  for (const c of schedule) s = m.step(s, decodeChoice(c)).state;
  const n = leastConsistent(at, s, loops, N0);
  return n >= 0 ? n : N0 + maxStep;
}

/** The value of a parameter-only expression, or null. */
function evalParams(e: Expr, params: Record<string, number>): number | null {
  try {
    return evalExpr(e, (n) => (Object.hasOwn(params, n) ? params[n] : undefined));
  } catch {
    return null;
  }
}

/** One result from the base (static findings, the first search's coverage) and the findings of each trip count, smallest trip count first. */
function merge(base: CheckResult, results: { n: number; r: CheckResult }[], trips: TripsInfo, cov: Pick<CheckResult, 'complete' | 'stoppedBy'> & { states: number; transitions: number; depth: number; peakFrontier: number; memory: number; elapsedMs: number }): TripsResult {
  const hazards: (Hazard & { tripCount?: number })[] = [];
  const warnings: Hazard[] = [...base.warnings];
  const seen = new Set<string>();
  const keyOf = (h: Hazard) => `${h.kind}|${h.subject?.name ?? ''}`;
  for (const w of warnings) seen.add(keyOf(w));
  for (const { n, r } of results.sort((a, b) => a.n - b.n)) {
    for (const h of r.hazards) if (!seen.has(keyOf(h))) {
      seen.add(keyOf(h));
      hazards.push({ ...h, tripCount: n, details: [`with ${trips.param} = ${n}`, ...h.details] });
    }
    for (const h of r.warnings) if (!seen.has(keyOf(h))) {
      seen.add(keyOf(h));
      warnings.push({ ...h, details: [`with ${trips.param} = ${n}`, ...h.details] });
    }
  }
  const first = results.find((x) => x.r.hazards.length);
  const program = first ? first.r.program : base.program;
  const verdict = hazards.length ? hazards[0]!.kind : cov.complete ? 'ok' : 'incomplete';
  return {
    ...base, program, verdict, complete: cov.complete && !hazards.length, stoppedBy: hazards.length ? 'hazard' : cov.stoppedBy, hazards, warnings,
    coverage: { ...base.coverage, states: cov.states, transitions: cov.transitions, depth: cov.depth, peakFrontier: cov.peakFrontier, memoryBytes: cov.memory, elapsedMs: cov.elapsedMs },
    trips,
  };
}
