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
import { halfPlan, type HalfPlan } from './trips-half.js';
import { WaitReach } from './trips-dead.js';
import { sizedBy, usesInScope } from './trips-scope.js';
import { offsetPlan } from './trips-offset.js';
import { negativeT, rebase, touchedIn } from './trips-rebase.js';
import { freshHist, HIST_WORDS } from './wait-hist.js';

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
  /** Whether states half a period apart are identified too, with the barriers whose waits' parities that flips (trips-half.ts). */
  halfPeriod: boolean;
  threshold: number | null;
  /** States of the first search (before the last trip). */
  statesBefore: number;
  /** The trip counts the second search ran with, and the states it started from. */
  tripCounts: number[];
  starts: number;
  /**
   * Before the last trip the parameter matters only modulo this (trips-offset.ts: `t * K` with `t`
   * from a value other than 0): one first search per residue. 1 when it is only a loop bound.
   */
  modulus: number;
  /** How many of the least counts (from `from` on) were searched directly from their initial state only (the residue argument holds from `from + direct` on). */
  direct: number;
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
  const pH0 = at(HUGE_TRIPS);
  const loops: TripLoop[][] = pH0.roles.map((rc) => tripLoopsOf(rc.code, param, (e) => evalParams(e, pH0.params)));
  if (!loops.some((l) => l.length)) {
    // A front end's warps run as written (PTX): their loops are branches, not the sketch's `for`.
    if (kernel.roles.some((r) => r.asWritten)) throw new TripsScopeError(`--all-trips ${param}: not available for PTX input yet (its loops are branches the checker does not recognize as trip loops); check each value with --param ${param}=N, or write the protocol as a sketch (docs/CHECK.md, "Every trip count")`);
    throw new TripsScopeError(`--all-trips ${param}: no loop of the kernel is bounded by ${param}`);
  }
  const ends: number[] = [];
  for (let r = 0; r < pH0.roles.length; r++) {
    if (!loops[r]!.length) {
      ends.push(Infinity);
      continue;
    }
    const sc = usesInScope(pH0, r, param, loops[r]!);
    if ('why' in sc) throw new TripsScopeError(`--all-trips ${param}: ${sc.why}`, sc.loc);
    ends.push(sc.end);
  }
  // Where K reaches the state before the last trip (trips-offset.ts): modulo P, from `least` on.
  const off = offsetPlan(pH0, param, loops, ends);
  if ('why' in off) throw new TripsScopeError(`--all-trips ${param}: ${off.why}`, off.loc);
  const P = off.P;
  const least = Math.max(N0, off.min);
  const residues = Array.from({ length: P }, (_, r) => r);
  /** The huge count of residue r: 2^40 or just above, ≡ r (mod P). */
  const hugeOf = (r: number) => HUGE_TRIPS + ((((r - HUGE_TRIPS) % P) + P) % P);
  const timeout = opts.timeout ?? DEFAULT_BOUNDS.timeoutMs;
  const maxStates = opts.maxStates ?? DEFAULT_BOUNDS.maxStates;
  const gov = new Governor({ maxMemory: opts.maxMemory ?? DEFAULT_BOUNDS.maxMemory, deadline: t0 + timeout }, { every: 64 });
  const crosses = pH0.roles.map((rc, r) => crossesTripHead(rc.code, loops[r]!));
  // The trip counts each stored state starts the last trip with (trips-loops.ts).
  const maxStep = Math.max(1, ...loops.flat().map((l) => l.step));
  // A start: a state of first search `r` reached by its stored state `id` and then the forced choices `chain`.
  const starts = new Map<number, { s: MachineState; x: Extra; id: number; chain: number[]; r: number }[]>();
  let nStarts = 0;
  // Starts count against --max-states (a forced chain can leave many: one per iteration it runs).
  let tooMany = false;
  let noShift: TripsInfo['noShift'] = null;
  let plan0: ShiftPlan | null = null;
  let half0: HalfPlan | null = null;
  const befores: { r: number; pH: Program; an: Analysis; res: ExploreResult }[] = [];
  const results: { n: number; r: CheckResult }[] = [];
  const errorFound = () => results.some((x) => x.r.hazards.length);
  let statesBefore = 0;
  // Whether a state of the first search may hold a value that moves with K: until one does, the
  // search is the same for every residue, and the first residue's stands for all.
  let touched = false;
  // 1. Before the last trip: one search per residue of K modulo P.
  for (const res of residues) {
    if (res > 0 && !touched) break;
    const H = hugeOf(res);
    const pH = at(H);
    const an = analyse(pH);
    let plan: ShiftPlan | null = null;
    let half: HalfPlan | null = null;
    if (pH.values || an.trackRelaxed) noShift ??= { why: pH.values ? 'the kernel has values in memory (the steady state is not identified across them)' : 'the kernel uses relaxed or scoped memory-model operations (the steady state is not identified across them)' };
    else {
      const rates = learnRates(pH, loops);
      if (!rates) noShift ??= { why: 'the trip loops made no progress on a sample schedule' };
      else {
        const sp = shiftPlan(pH, param, loops, rates);
        if ('why' in sp) noShift ??= { why: sp.why, ...(sp.loc ? { line: sp.loc.line, col: sp.loc.col } : {}) };
        else {
          plan = sp;
          // Half a period with the parities it flips (trips-half.ts), where K matters for nothing but loop bounds.
          if (P === 1) half = halfPlan(pH, param, loops, rates, sp);
        }
      }
    }
    if (res === 0) {
      plan0 = plan;
      half0 = half;
    }
    const mH = new Machine(pH);
    const codec = new Codec(pH, an, mH.initial());
    const hasT = off.roles.some((ro) => ro.t);
    const plain: ShiftPlan = { L: 1, T: Infinity, delta: pH.roles.map(() => new Map()) };
    const reach = new WaitReach(pH, param, loops, plan ?? plain);
    const key = (s: MachineState, x: Extra, out: Uint32Array) => {
      if (P > 1 && !touched && touchedIn(off, pH, s)) touched = true;
      if (hasT) {
        const a = negativeT(off, pH, s);
        if (a >= 0) {
          const ro = off.roles[pH.agents[a]!.role]!;
          throw new TripsScopeError(`--all-trips ${param}: role ${pH.roles[pH.agents[a]!.role]!.name}: ${pH.roles[pH.agents[a]!.role]!.slots[ro.t!.slot]} multiplies ${param} and is negative in agent ${a} (a value that decreases with ${param})`);
        }
      }
      const n = shifted(plan ?? plain, mH, pH, an, loops, s, x, reach, half);
      codec.hash(n.s, n.x, out);
    };
    const addStart = (s: MachineState, x: Extra, id: number, chain: number[]) => {
      if (nStarts >= maxStates) {
        tooMany = true;
        return;
      }
      const nmin = leastConsistent(at, s, loops, least);
      if (nmin < 0) return;
      // Only where a step can end a trip loop under a consistent count does the last trip start here.
      if (!s.agents.some((_, a) => mayEndLoop(at(nmin), s, a, loops, crosses))) return;
      for (let n = nmin; n < nmin + maxStep; n++) {
        if (!consistentWith(at(n), s, loops)) continue; // the residue is matched once it is known whether it matters
        let l = starts.get(n);
        if (!l) starts.set(n, (l = []));
        l.push({ s, x, id, chain, r: res });
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
          const nmin = leastConsistent(at, s, loops, least);
          return nmin < 0 || mayEndLoop(at(nmin), s, a, loops, crosses);
        },
      };
    // The residues share half of the bounds.
    const left = P - befores.length;
    const before = explore(pH, {
      ...searchOpts(opts), maxStates: Math.max(1, Math.floor((Math.floor(maxStates / 2) - statesBefore) / left)),
      timeoutMs: Math.max(0, Math.floor((Math.floor(timeout / 2) - (Date.now() - t0)) / left)),
      hooks: { key, onExpand, forcedHead },
    });
    befores.push({ r: res, pH, an, res: before });
    statesBefore += before.states;
    // Findings before the last trip: each runs with the least trip count of its residue its final state is consistent with.
    if (before.hazards.length) {
      const byN = new Map<number, RawHazard[]>();
      for (const h of before.hazards) {
        const end = endOf(pH, scheduleOf(h, before.parent, before.chainOff, before.chainData));
        let n = leastTrips(at, loops, end, least, maxStep);
        // A count of the search's residue, unless no value that moves with K was computed on the way.
        if (P > 1 && touchedIn(off, pH, end, true)) n += ((((res - n) % P) + P) % P);
        const l = byN.get(n) ?? [];
        l.push(h);
        byN.set(n, l);
      }
      for (const [n, hs] of [...byN].sort((a, b) => a[0] - b[0])) results.push({ n, r: checkResultOf(at(n), { ...before, hazards: hs }, new Set(), opts, gov, t0) });
    }
    if (before.stoppedBy !== null) break;
  }
  const plan = plan0;
  // The static findings that hold at every trip count sampled (the least ones, and one period on):
  // a finding of one count only (an arrive that a single iteration never reaches) is not the kernel's.
  const sample = [...new Set([N0, N0 + 1, N0 + (plan?.L ?? 2), N0 + (plan?.L ?? 2) + 1])];
  const staticKey = (h: RawHazard) => `${h.kind}|${h.subject ?? ''}|${h.locs.map((l) => `${l.line}:${l.col}`).join(',')}`;
  const perCount = sample.map((n) => staticChecks(at(n), gov));
  const staticRaw = new Set<RawHazard>(perCount[0]!.filter((h) => perCount.every((l) => l.some((g) => staticKey(g) === staticKey(h)))));
  const first = befores[0]!.res;
  const lastBefore = befores[befores.length - 1]!.res;
  let complete = (befores.length === P || !touched) && befores.every((b) => b.res.complete) && !tooMany;
  // Each count starts from the states of its own residue (of any, when no value moved with K).
  if (touched) for (const [n, l] of starts) starts.set(n, l.filter((x) => (n - x.r) % P === 0));
  nStarts = [...starts.values()].reduce((a, l) => a + l.length, 0);
  let states = statesBefore;
  let transitions = befores.reduce((a, b) => a + b.res.transitions, 0);
  let depth = Math.max(...befores.map((b) => b.res.depth));
  let peakFrontier = Math.max(...befores.map((b) => b.res.peakFrontier));
  let memory = Math.max(...befores.map((b) => b.res.memory));
  let stoppedBy: CheckResult['stoppedBy'] = lastBefore.stoppedBy ?? (tooMany ? 'max-states' : null);
  const tripCounts: number[] = [];
  // 2. The last trip. The counts below `least` are searched directly, from their initial state only.
  if (complete || lastBefore.stoppedBy === 'hazard') {
    for (let n = N0; n < least + maxStep; n++) if (!starts.has(n)) starts.set(n, []);
    for (const n of [...starts.keys()].sort((a, b) => a - b)) {
      if (errorFound() && !opts.all) break;
      const anN = analyse(at(n));
      const roots = starts.get(n)!.map(({ s, x, id, chain, r }) => {
        const b = befores.find((q) => q.r === r)!;
        return { s: rebase(off, at(n), s, hugeOf(r), n), x: remapExtra(x, b.an, anN), schedule: [...scheduleOf({ state: id, extra: [] } as unknown as RawHazard, b.res.parent, b.res.chainOff, b.res.chainData), ...chain] };
      });
      // The least counts are also checked from their own initial state (a loop they skip).
      if (n < least + maxStep) roots.unshift({ s: new Machine(at(n)).initial(), x: initialExtra(at(n), anN), schedule: [] });
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
  const base = checkResultOf(at(N0), { ...first, hazards: [] }, staticRaw, opts, gov, t0);
  return merge(base, results, {
    param, from: N0, complete: complete && !errorFound(), noShift, period: plan?.L ?? null, halfPeriod: half0 !== null, threshold: plan?.T ?? null,
    statesBefore, tripCounts, starts: nStarts, modulus: touched ? P : 1, direct: least - N0,
  }, { complete, stoppedBy, states, transitions, depth, peakFrontier, memory, elapsedMs: Date.now() - t0 });
}

/**
 * Checker data of the kernel with the huge trip count as the kernel with another count lays it
 * out: the phases each waiter observed move to that analysis's history slots (a kernel with fewer
 * iterations than stages waits on fewer barriers).
 */
function remapExtra(x: Extra, from: Analysis, to: Analysis): Extra {
  const hist = freshHist(to.histLen);
  to.waitSlots.forEach((m, a) => m.forEach((slot, bar) => {
    const old = from.waitSlots[a]?.get(bar);
    if (old !== undefined) for (let w = 0; w < HIST_WORDS; w++) hist[slot + w] = x.hist[old + w]!;
  }));
  return { ...x, hist };
}

/** The explore options a check's options give (bounds are set by the caller). */
function searchOpts(opts: CheckOptions) {
  return {
    ...(opts.all !== undefined ? { all: opts.all } : {}), ...(opts.por !== undefined ? { por: opts.por } : {}),
    ...(opts.symmetry !== undefined ? { symmetry: opts.symmetry } : {}), ...(opts.ctaSymmetry !== undefined ? { ctaSymmetry: opts.ctaSymmetry } : {}), ...(opts.deadSlots !== undefined ? { deadSlots: opts.deadSlots } : {}),
    ...(opts.strict !== undefined ? { strict: opts.strict } : {}), ...(opts.maxMemory !== undefined ? { maxMemory: opts.maxMemory } : {}),
    ...(opts.randomRuns !== undefined ? { randomRuns: opts.randomRuns } : {}),
  };
}

/** The state at the end of `schedule`, run with program `pH`. */
function endOf(pH: Program, schedule: number[]): MachineState {
  const m = new Machine(pH);
  let s = m.initial();
  for (const c of schedule) s = m.step(s, decodeChoice(c)).state;
  return s;
}

/** The least trip count from `N0` that state `s` (of the kernel with a huge count) is consistent with. */
function leastTrips(at: (n: number) => Program, loops: readonly (readonly TripLoop[])[], s: MachineState, N0: number, maxStep: number): number {
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
