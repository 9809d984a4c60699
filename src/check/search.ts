/**
 * The sequential search: breadth-first over every interleaving of agents and asynchronous
 * completions, driving the machine's own `apply`, with the partial-order reduction (forced steps:
 * `forced.ts`, postponed landings: `postpone.ts`, over the facts of `por.ts`), the symmetry
 * reduction of `codec.ts` (canonical hashes; agents skipped in `expand.ts`), copy-on-write
 * successors (`successor.ts`) and the hazard detectors on transitions (`transition.ts`) and
 * states (`co-enabled.ts`, `detect-hang.ts`). With `par` it hands its internals to a worker of
 * the parallel search (`parallel.ts`) instead of running.
 *
 * This module builds the parts of one search and runs its levels; each part is its own module.
 */
import { Machine, newStepOut, type MachineState, type StepOut } from '../machine/machine.js';
import type { Program } from '../machine/program.js';
import { BoundReached, Governor } from '../machine/governor.js';
import { analyse, type Analysis } from './analysis.js';
import { Codec, StateBuf, Visited, type Extra } from './codec.js';
import { DEFAULT_BOUNDS, RANDOM_RUNS, stopOf, growthGuard, type ExploreOptions, type ExploreResult, type HashSet, type ParHooks, type SearchApi } from './engine.js';
import { coEnabledDetector } from './co-enabled.js';
import { searchFacts, locKey } from './search-facts.js';
import { HazardSink } from './search-hazards.js';
import type { SearchCtx } from './search-ctx.js';
import { transitionChecker } from './transition.js';
import { hangDetector } from './detect-hang.js';
import { forcedStep } from './forced.js';
import { mulberry32 } from '../model/random.js';
import { Postponed } from './postpone.js';
import { Successors } from './successor.js';
import { expander, type Expander } from './expand.js';
import { StateTree } from './state-tree.js';
import { freshHist } from './wait-hist.js';

/** The parts of one search, built by {@link setup}. */
interface Parts {
  m: Machine;
  an: Analysis;
  codec: Codec;
  gov: Governor;
  visited: HashSet;
  tree: StateTree;
  ctx: SearchCtx;
  sx: Successors;
  ex: Expander;
  /** The frontier being expanded (the initial state at first). */
  cur: StateBuf;
  /** The initial state's hash. */
  hash0: [number, number];
}

/** The search; with `par` (a worker of the parallel search), returns its internals instead of running it. */
export function search(program: Program, opts: ExploreOptions, par: ParHooks | null): ExploreResult | SearchApi {
  const t0 = Date.now();
  const maxMemory = opts.maxMemory ?? DEFAULT_BOUNDS.maxMemory;
  const timeoutMs = opts.timeoutMs ?? DEFAULT_BOUNDS.timeoutMs;
  // Made before the setup, which for the largest launch takes seconds and hundreds of MB.
  const gov = par ? par.governor : opts.governor ?? new Governor({ maxMemory, deadline: t0 + timeoutMs }, { every: 64 });
  let parts: Parts;
  try {
    parts = setup(program, opts, par, gov);
  } catch (e) {
    if (!(e instanceof BoundReached) || par) throw e;
    return stoppedInSetup(e, gov, t0);
  }
  return par ? workerApi(parts) : runLevels(parts, opts, t0);
}

/** The result of a search that a bound stopped while it was being set up: no state explored. */
export function stoppedInSetup(e: BoundReached, gov: Governor, t0: number): ExploreResult {
  return {
    machine: null, analysis: null, hazards: [], complete: false, stoppedBy: stopOf(e.bound), states: 0, transitions: 0, depth: 0, peakFrontier: 0,
    // No state stored: the static findings' schedules (state 0, the initial state) end at the root (parent -1),
    // which an array of zeros made a cycle (scheduleOf looped, growing its chains until the heap ran out).
    memory: Math.max(gov.peak, gov.memory()), elapsedMs: Date.now() - t0, parent: Int32Array.of(-1), chainOff: new Int32Array(1), chainData: new Int32Array(1),
    terminalOk: 0, intermediates: 0,
  };
}

/** The machine, the analysis (with symmetry off: no groups) and the initial state with its step output. */
function begin(program: Program, opts: ExploreOptions, gov: Governor): { m: Machine; an: Analysis; s0: MachineState; initOut: StepOut } {
  const m = new Machine(program);
  const an = analyse(program, { ctaSymmetry: opts.symmetry !== false && opts.ctaSymmetry !== false, deadSlots: opts.deadSlots !== false, warpRelative: opts.warpRelative !== false, governor: gov });
  if (opts.symmetry === false) {
    an.groups = [];
    an.groupOf.fill(-1);
  }
  const initOut = newStepOut(true);
  if (!gov.allow(m.stateBytes())) throw new BoundReached(gov.stoppedBy!);
  const s0 = m.initial(initOut);
  if (gov.check() !== null) throw new BoundReached(gov.stoppedBy!);
  return { m, an, s0, initOut };
}

/** Builds the parts of a search and stores its initial state (id 0) in the tree, the visited set and the first frontier. */
function setup(program: Program, opts: ExploreOptions, par: ParHooks | null, gov: Governor): Parts {
  const { m, an, s0, initOut } = begin(program, opts, gov);
  const p = program;
  const verifyHash = opts.verifyHash === true;
  if (gov.check() !== null) throw new BoundReached(gov.stoppedBy!);
  const codec = new Codec(program, an, s0);
  const guard = growthGuard(gov);
  const visited: HashSet = par ? par.visited : new Visited(1 << 14);
  if (visited instanceof Visited) visited.guard = guard;
  const tree = new StateTree();
  const out = newStepOut(true);
  out.sparse = true; // the transition checks read only diagnostics, phases, waits and access starts
  const ctx: SearchCtx = {
    p, m, an, f: searchFacts(p, an), strict: opts.strict === true, out, sink: new HazardSink(par !== null),
    fedBy: new Map(), tmaGhost: -1, commitGhost: -1,
  };

  // ---- initial state
  const x0 = initialExtra(p, an);
  if (gov.check() !== null) throw new BoundReached(gov.stoppedBy!);
  const hbuf = new Uint32Array(2);
  const rh0 = new Int32Array(codec.rhLength());
  const hooks = opts.hooks;
  const cur = new StateBuf();
  const roots = hooks?.roots ?? [{ s: s0, x: x0, schedule: [] }];
  let id0 = 0;
  let hash0: [number, number] | null = null;
  for (const root of roots) {
    codec.hash(root.s, root.x, hbuf, rh0);
    hash0 ??= [hbuf[0]!, hbuf[1]!];
    if (hooks?.key) hooks.key(root.s, root.x, hbuf);
    const id = tree.add(-1, []);
    if (root === roots[0]) id0 = id;
    if (!visited.add(hbuf[0]!, hbuf[1]!)) continue;
    codec.encode(root.s, root.x, cur, id, rh0);
  }
  cur.guard = guard; // the initial state is always held; growths after it ask the governor
  // An agent can already stop before its first operation (e.g. a division by zero).
  for (const d of initOut.diags) {
    if (d.diag.severity === 'error') ctx.sink.errorFound = true;
    ctx.sink.report({
      kind: d.diag.code, severity: d.diag.severity, key: `init|${locKey(d.loc)}`, message: d.diag.message, subject: null,
      state: id0, extra: [], details: [`H200: ${d.diag.h200}`], locs: d.loc ? [d.loc] : [],
    });
  }

  const sx = new Successors(ctx, codec, verifyHash);
  const parts: Parts = { m, an, codec, gov, visited, tree, ctx, sx, ex: null!, cur, hash0: hash0 ?? [0, 0] };
  const { check, staleAtEnd } = transitionChecker(ctx);
  const sink = ctx.sink;
  parts.ex = expander({
    ctx, codec, visited, gov, sx, check, staleAtEnd, verifyHash,
    usePor: opts.por !== false,
    useSym: opts.symmetry !== false,
    forced: forcedStep(ctx, sx, check, opts.stableWaits !== false, opts.stableLandings !== false, hooks?.forcedHead, opts.countingArrivals !== false),
    key: hooks?.key,
    postponed: new Postponed(ctx, opts.stableWaits !== false && opts.stableLandings !== false),
    coEnabled: coEnabledDetector(p, ctx.f.agentCode, (h) => sink.error(h)),
    hang: hangDetector(ctx),
    onTerminal: opts.onTerminal,
    store: par ? (parentId, chain) => par.store(parentId, chain) : (parentId, chain) => tree.add(parentId, chain),
    estimate: par ? () => {} : (next) => {
      gov.estimate = estimateBytes(parts, next);
    },
  });
  return parts;
}

/** The checker data of the initial state: nothing observed, no ghosts, nothing published. */
export function initialExtra(p: Program, an: Analysis): Extra {
  return {
    hist: freshHist(an.histLen), ghosts: new Array(p.agents.length).fill(null), tghosts: null,
    dirty: new Array(p.agents.length).fill(null), esc: null, pub: new Array<number>(an.manualCount).fill(0),
    cghosts: new Array(p.agents.length).fill(null), pcm: new Array<number[] | null>(p.agents.length).fill(null),
    ru: new Array(p.agents.length).fill(null), rp: null,
  };
}

/** The sequential search's own estimate of its bytes: the visited set, the tree and both frontiers. */
function estimateBytes(parts: Parts, next: StateBuf): number {
  return parts.visited.bytes + parts.tree.bytes + parts.cur.bytes + next.bytes;
}

/** A worker's view of the search (parallel.ts): it expands the states the coordinator hands it. */
function workerApi(parts: Parts): SearchApi {
  const { m, an, codec, ctx, sx, ex } = parts;
  const sink = ctx.sink;
  const api: SearchApi = {
    machine: m, analysis: an, codec, hash0: parts.hash0, initial: parts.cur, initHazards: [...sink.hazards.values()], initError: sink.errorFound,
    expandAt: (buf, i, next) => {
      const { s, x } = codec.decode(buf, i, ex.rhCur);
      ex.expand(s, x, buf.ids[i]!, next);
    },
    takeHazards: () => sink.takeFresh(),
    takeError: () => sink.takeError(),
    counters: () => ({ transitions: sx.transitions, terminalOk: ex.stats.terminalOk, intermediates: ex.stats.intermediates }),
    abortBy: () => ex.abortBy(),
    fedBy: () => [...ctx.fedBy].map(([k, v]) => [k, [...v].sort((a, b) => a - b)]),
    addFedBy: (l) => {
      for (const [k, v] of l) {
        let f = ctx.fedBy.get(k);
        if (!f) ctx.fedBy.set(k, (f = new Set()));
        for (const b of v) f.add(b);
      }
    },
  };
  sink.takeFresh(); // the initial hazards travel as initHazards
  return api;
}

/** Runs the levels of a sequential search breadth-first until the frontier empties or a bound stops it. */
function runLevels(parts: Parts, opts: ExploreOptions, t0: number): ExploreResult {
  const { codec, gov, tree, ctx, sx, ex } = parts;
  const maxStates = opts.maxStates ?? DEFAULT_BOUNDS.maxStates;
  let depth = 0;
  let peakFrontier = 1;
  let stoppedBy: ExploreResult['stoppedBy'] = null;
  let lastProgress = t0;
  let memEst = 0;
  let spare = new StateBuf();
  spare.guard = parts.cur.guard;
  const hunt = randomRunsOf(opts);
  const onExpand = opts.hooks?.onExpand;
  /** Checked every 16 expansions: the state bound, the governor's bounds, and progress. */
  const between = (next: StateBuf, n: number, i: number): ExploreResult['stoppedBy'] => {
    const now = Date.now();
    gov.estimate = memEst = estimateBytes(parts, next);
    if (tree.n - (hunt?.stored ?? 0) >= maxStates) return 'max-states';
    const b = gov.check();
    if (b !== null) return stopOf(b);
    if (opts.onProgress && now - lastProgress > 250) {
      lastProgress = now;
      opts.onProgress({ states: tree.n - (hunt?.stored ?? 0), transitions: sx.transitions - (hunt?.steps ?? 0), depth, frontier: n - i + next.count, memory: gov.memory(), elapsedMs: now - t0 });
    }
    return null;
  };
  try {
    outer: while (parts.cur.count > 0) {
      const cur = parts.cur;
      const next = spare;
      next.reset();
      const n = cur.count;
      for (let i = 0; i < n; i++) {
        const { s, x } = codec.decode(cur, i, ex.rhCur);
        onExpand?.(s, x, cur.ids[i]!);
        ex.expand(s, x, cur.ids[i]!, next);
        if (hunt && (tree.n - hunt.stored >= hunt.from || ((i & 15) === 0 && Date.now() - t0 >= hunt.afterMs)) && hunt.steps < (sx.transitions - hunt.steps) * hunt.share && !ex.abortBy()) {
          const before = tree.n;
          ctx.sink.random = true;
          hunt.steps += ex.dive(s, x, cur.ids[i]!, hunt.rand, RANDOM_RUNS.maxSteps);
          ctx.sink.random = false;
          hunt.stored += tree.n - before;
          hunt.runs++;
          // An error of a random run: no shorter trace is promised, the search stops here.
          if (ctx.sink.errorFound) {
            stoppedBy = 'hazard';
            break outer;
          }
        }
        if (ex.abortBy()) {
          stoppedBy = ex.abortBy();
          break outer;
        }
        if ((i & 15) === 0 && (stoppedBy = between(next, n, i)) !== null) break outer;
      }
      peakFrontier = Math.max(peakFrontier, next.count);
      memEst = Math.max(memEst, estimateBytes(parts, next));
      spare = cur;
      parts.cur = next;
      depth++;
      if (ctx.sink.errorFound && !opts.all && next.count > 0) {
        stoppedBy = 'hazard';
        break;
      }
    }
  } catch (e) {
    // A table growth the governor refused: the search stops where it is.
    if (!(e instanceof BoundReached)) throw e;
    stoppedBy = stopOf(e.bound);
  }
  if (stoppedBy === null && tree.n - (hunt?.stored ?? 0) > maxStates) stoppedBy = 'max-states';
  gov.estimate = memEst;
  return {
    machine: parts.m, analysis: parts.an, hazards: [...ctx.sink.hazards.values()], complete: stoppedBy === null, stoppedBy, states: tree.n - (hunt?.stored ?? 0),
    transitions: sx.transitions - (hunt?.steps ?? 0), depth, peakFrontier, memory: Math.max(gov.peak, gov.memory()), elapsedMs: Date.now() - t0,
    parent: tree.parent, chainOff: tree.chainOff, chainData: tree.chainData, terminalOk: ex.stats.terminalOk, intermediates: ex.stats.intermediates,
    randomRuns: { runs: hunt?.runs ?? 0, steps: hunt?.steps ?? 0 },
    ...(opts.hooks?.roots ? { rootSchedules: opts.hooks.roots.map((r) => r.schedule) } : {}),
  };
}


/** The random runs of a sequential search (engine.ts ExploreOptions.randomRuns), or null when off. */
function randomRunsOf(opts: ExploreOptions): { from: number; afterMs: number; share: number; rand: () => number; steps: number; stored: number; runs: number } | null {
  const o = opts.randomRuns ?? true;
  if (o === false || opts.all) return null;
  const c = o === true ? {} : o;
  // A slow search (large states) reaches few states before its time bound: the runs start by time too.
  const afterMs = c.afterMs ?? (c.from !== undefined ? Infinity : (opts.timeoutMs ?? DEFAULT_BOUNDS.timeoutMs) / 5);
  return { from: c.from ?? RANDOM_RUNS.from, afterMs, share: c.share ?? RANDOM_RUNS.share, rand: mulberry32(c.seed ?? RANDOM_RUNS.seed), steps: 0, stored: 0, runs: 0 };
}
