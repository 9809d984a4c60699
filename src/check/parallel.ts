/**
 * The parallel exhaustive search (`workers` > 1): the same breadth-first search as
 * `explore` (./explore.ts), each level expanded by N worker threads together.
 *
 * - Every worker instantiates the kernel itself (a Program holds closures, so the Kernel IR and its
 *   parameters travel, not the Program), with its own Machine, analysis and Codec: all three are
 *   deterministic functions of the program, so every worker hashes a state alike (checked on the
 *   initial state).
 * - The visited set is one open-addressing table of 64-bit hashes in a SharedArrayBuffer: a slot is
 *   claimed with `Atomics.compareExchange` on its second half (0 → PENDING), then both halves are
 *   written. Every state a worker reaches, stored or intermediate (forced chains), is claimed before
 *   its successors are computed, so exactly one worker goes on from each state, as the sequential
 *   search does once. When the table passes half load, the workers pause at their next insertion,
 *   the main thread rebuilds it twice as large, and they go on.
 * - The frontier lies in SharedArrayBuffers; workers take blocks of it in turn (an atomic counter).
 *   New states come back per block with their parent id and forced chain; the main thread numbers
 *   them in block order (the order the sequential search would number them, up to which of two
 *   workers reaching the same state first claims it) and writes the next frontier.
 * - Hazards come back with the id of the state expanded (and the extra choices); for each kind and
 *   place the main thread keeps the one of the lowest state id, the first found at that id.
 *
 * The set of states reached at each depth is the sequential search's, and so are the transitions
 * taken: a complete search has the same stored states, transitions, verdict and hazard kinds. The
 * bounds (`maxStates`, `timeoutMs`) are checked by the workers every 16 expansions; `maxMemory` by
 * the main thread when the table grows and between levels.
 *
 * The main thread blocks (`Atomics.wait`) while the workers run, so `explore` stays synchronous;
 * messages go through MessageChannels read with `receiveMessageOnPort`. Workers stay in a pool
 * (unreferenced, so they never keep the process alive) and serve later searches.
 *
 * This module is the coordinator (the pool, the levels, the bounds); the shared table, control
 * slots and messages are `par-protocol.ts`, the worker's loop `par-worker.ts`, the merging of a
 * level's results into the search tree `par-merge.ts`.
 */
import type { MessagePort, Worker as NodeWorker } from 'node:worker_threads';
import type { Program } from '../machine/program.js';
import { BoundReached, Governor } from '../machine/governor.js';
import { DEFAULT_BOUNDS, type ExploreOptions, type ExploreResult, type SearchApi } from './engine.js';
import { search, stoppedInSetup } from './search.js';
import { BOUNDS, C, STOPS, SharedVisited, codeOf, insertPlain, stopWith, threads, type FromWorker, type JobMsg, type LevelResult, type ToWorker } from './par-protocol.js';
import { SearchTree, frontierBytes, sharedI32, type Frontier } from './par-merge.js';
export { workerMain } from './par-worker.js';

/** How long the main thread waits for the workers to finish their block after a stop before it gives them up (ms). */
const STOP_GRACE_MS = 250;

// ---------------------------------------------------------------- the pool of workers

interface Pool {
  n: number;
  workers: NodeWorker[];
  ports: MessagePort[];
  ctl: Int32Array;
}
let pool: Pool | null = null;

function dropPool(): void {
  if (!pool) return;
  for (const w of pool.workers) void w.terminate();
  for (const p of pool.ports) p.close();
  pool = null;
}

/** Waits (blocking) until `cond` holds, up to `ms`; false on timeout. */
function waitFor(ctl: Int32Array, cond: () => boolean, ms: number): boolean {
  const end = Date.now() + ms;
  for (;;) {
    const e = Atomics.load(ctl, C.EVT);
    if (cond()) return true;
    const left = end - Date.now();
    if (left <= 0) return false;
    Atomics.wait(ctl, C.EVT, e, Math.min(left, 1000));
  }
}

/**
 * The pool of `n` workers (started, or reused from an earlier search), or null when they are not
 * ready by `deadline` (ms since the epoch; they are given up).
 */
function getPool(n: number, deadline: number): Pool | null {
  if (pool && pool.n === n) return pool;
  dropPool();
  const ctl = new Int32Array(new SharedArrayBuffer(4 * (C.MAIL + n)));
  // This module's URL, or, in the bundled CLI (where this code lives in a shared chunk whose exports
  // are renamed), the bundle's worker entry next to it (scripts/bundle.mjs, src/check/worker-entry.ts).
  const here = /\/parallel\.[jt]s$/.test(import.meta.url) ? import.meta.url : new URL(/* @vite-ignore */ './check-worker.js', import.meta.url).href;
  // From the TypeScript sources (tests), the workers need hooks that load .ts files.
  const hooks = here.endsWith('.ts') ? new URL('../../test/support/ts-hooks.mjs', here).href : null;
  const code = `const { workerData } = require('node:worker_threads');
if (workerData.hooks) require('node:module').register(workerData.hooks);
import(workerData.entry).then((m) => m.workerMain(workerData), (e) => {
  workerData.port.postMessage({ type: 'error', message: String((e && e.stack) || e) });
  const c = new Int32Array(workerData.ctl); Atomics.add(c, ${C.READY}, 1); Atomics.add(c, ${C.EVT}, 1); Atomics.notify(c, ${C.EVT});
});`;
  const workers: NodeWorker[] = [];
  const ports: MessagePort[] = [];
  for (let w = 0; w < n; w++) {
    const ch = new (threads().MessageChannel)();
    const worker = new (threads().Worker)(code, { eval: true, workerData: { ctl: ctl.buffer, port: ch.port2, w, entry: here, hooks }, transferList: [ch.port2] });
    worker.unref();
    ch.port1.unref();
    workers.push(worker);
    ports.push(ch.port1);
  }
  pool = { n, workers, ports, ctl };
  const ok = waitFor(ctl, () => Atomics.load(ctl, C.READY) >= n, Math.min(120_000, Math.max(0, deadline - Date.now())));
  const errors: string[] = [];
  for (const p of ports) {
    const r = threads().receiveMessageOnPort(p);
    if (r && (r.message as FromWorker).type === 'error') errors.push((r.message as { message: string }).message);
  }
  if (!ok || errors.length) {
    dropPool();
    if (!ok && !errors.length && Date.now() >= deadline) return null;
    throw new Error(`parallel checker: the workers did not start${errors.length ? `: ${errors[0]}` : ' (timeout)'}`);
  }
  return pool;
}

// ---------------------------------------------------------------- the coordinator

/** `explore` (./explore.ts) with `opts.workers` worker threads (see the file comment). */
export function exploreParallel(program: Program, opts: ExploreOptions): ExploreResult {
  const t0 = Date.now();
  const n = Math.max(2, Math.floor(opts.workers ?? 2));
  const maxStates = opts.maxStates ?? DEFAULT_BOUNDS.maxStates;
  const maxMemory = opts.maxMemory ?? DEFAULT_BOUNDS.maxMemory;
  const timeoutMs = opts.timeoutMs ?? DEFAULT_BOUNDS.timeoutMs;
  const wopts: JobMsg['opts'] = {};
  for (const k of ['maxStates', 'maxMemory', 'timeoutMs', 'all', 'por', 'symmetry', 'ctaSymmetry', 'deadSlots', 'warpRelative', 'strict', 'verifyHash'] as const) {
    if (opts[k] !== undefined) (wopts as Record<string, unknown>)[k] = opts[k];
  }
  const deadline = t0 + timeoutMs;
  const pl = getPool(n, deadline);
  // Not started by the deadline: the search stops by timeout (what one thread explores in no time).
  if (!pl) return search(program, { ...wopts, timeoutMs: 0 }, null) as ExploreResult;
  const { ctl, ports } = pl;
  for (let i = 0; i < C.READY; i++) Atomics.store(ctl, i, 0);
  // The caller's interrupt (check's `stop`) stops the coordinator, which stops the workers (the STOP slot).
  const gov = new Governor({ maxMemory, deadline, ...(opts.governor?.interrupt ? { interrupt: opts.governor.interrupt } : {}) }, {
    linked: () => BOUNDS[Atomics.load(ctl, C.STOP)] ?? null,
    onStop: (b) => stopWith(ctl, codeOf(b)),
  });
  const table = new SharedArrayBuffer(8 << 16);
  const visited = new SharedVisited(table, ctl, () => {
    throw new Error('parallel checker: the main thread never pauses');
  });
  let api: SearchApi;
  try {
    api = search(program, wopts, { visited, store: () => 0, governor: gov }) as SearchApi;
  } catch (e) {
    // A bound hit while the search was being set up (the largest launches): nothing explored.
    if (e instanceof BoundReached) return stoppedInSetup(e, gov, t0);
    throw e;
  }
  visited.flush();
  const send = (w: number, msg: ToWorker) => {
    ports[w]!.postMessage(msg);
    Atomics.add(ctl, C.MAIL + w, 1);
    Atomics.notify(ctl, C.MAIL + w);
  };
  for (let w = 0; w < n; w++) {
    send(w, { type: 'job', kernel: program.kernel, params: program.params, lockstep: program.lockstep, opts: wopts, hash0: api.hash0, table, deadline, maxStates, maxMemory });
  }

  const tree = new SearchTree(api.initError, api.initHazards);
  let depth = 0;
  let peakFrontier = 1;
  let memEst = 0;
  let stoppedBy: ExploreResult['stoppedBy'] = null;
  const rhLen = api.codec.rhLength();

  const init = api.initial;
  let cur: Frontier = { data: sharedI32(init.len), offs: sharedI32(2), ids: sharedI32(1), rh: sharedI32(rhLen), n: 1 };
  cur.data.set(init.data.subarray(0, init.len));
  cur.offs[1] = init.len;
  cur.rh.set(init.rh.subarray(0, rhLen));
  const held = () => visited.bytes + tree.arraysBytes() + frontierBytes(cur);

  /** Rebuilds the visited table twice as large (all workers paused or done), or freezes it at the memory bound. */
  const grow = () => growTable(visited, ctl, gov, tree.arraysBytes() + frontierBytes(cur), (table) => {
    for (let w = 0; w < n; w++) send(w, { type: 'table', table });
  });

  const watch: LevelWatch = { ctl, n, gov, grow, held, lastProgress: t0, t0, onProgress: opts.onProgress };
  try {
    while (cur.n > 0) {
      Atomics.store(ctl, C.DONE, 0);
      Atomics.store(ctl, C.NEXT, 0);
      Atomics.store(ctl, C.STORED, 0);
      const block = Math.max(1, Math.min(256, Math.ceil(cur.n / (n * 8))));
      const fl = [...tree.fedBy].map(([k, v]): [number, number[]] => [k, [...v]]);
      for (let w = 0; w < n; w++) {
        send(w, { type: 'level', data: cur.data.buffer as SharedArrayBuffer, offs: cur.offs.buffer as SharedArrayBuffer, ids: cur.ids.buffer as SharedArrayBuffer, rh: cur.rh.buffer as SharedArrayBuffer, rhLen, n: cur.n, block, base: tree.nStates, fedBy: fl });
      }
      if (!awaitLevel(watch, { states: tree.nStates, transitions: tree.transitions, depth, frontier: cur.n })) {
        // The workers did not stop in time: they are given up (terminated) and the search ends
        // with the states of the levels before this one.
        stoppedBy = STOPS[Atomics.load(ctl, C.STOP)] ?? 'timeout';
        dropPool();
        break;
      }
      const results = collect(ports, n);
      // New states, numbered in frontier-block order.
      const sizes = SearchTree.sizes(results);
      const { count, dataLen } = sizes;
      // A stopped search needs no next frontier: only the new states' parents and chains are kept.
      gov.estimate = held();
      const stopping = gov.check() !== null || !gov.allow(4 * (dataLen + count * (rhLen + 2) + 1));
      const next = tree.addStates(results, sizes, rhLen, stopping);
      tree.addFindings(results);
      memEst = Math.max(memEst, gov.memory(), held() + frontierBytes(next));
      const stop = STOPS[Atomics.load(ctl, C.STOP)] ?? null;
      if (stop) {
        stoppedBy = stop;
        break;
      }
      peakFrontier = Math.max(peakFrontier, count);
      cur = next;
      depth++;
      if (tree.errorFound && !opts.all && count > 0) {
        stoppedBy = 'hazard';
        break;
      }
      if (tree.nStates >= maxStates && count > 0) {
        stoppedBy = 'max-states';
        break;
      }
      if (Atomics.load(ctl, C.GROW) === 1) grow();
    }
  } finally {
    if (pool === pl) for (let w = 0; w < n; w++) send(w, { type: 'end' });
  }
  memEst = Math.max(memEst, gov.peak);
  const { nStates, parent, chainOff, chainData, transitions, terminalOk, intermediates } = tree;
  if (stoppedBy === null && nStates > maxStates) stoppedBy = 'max-states';
  return {
    machine: api.machine, analysis: api.analysis, hazards: [...tree.hazards.values()], complete: stoppedBy === null, stoppedBy, states: nStates, transitions, depth,
    peakFrontier, memory: memEst, elapsedMs: Date.now() - t0, parent, chainOff, chainData, terminalOk, intermediates,
  };
}

/**
 * Rebuilds the visited table twice as large, every worker paused or done, and hands the new table
 * to `share`; or, when the memory bound refuses it (`others`: the other bytes the main thread
 * holds), freezes it (GROW = 2: nothing more is inserted) and stops the search at max-memory.
 */
function growTable(visited: SharedVisited, ctl: Int32Array, gov: Governor, others: number, share: (table: SharedArrayBuffer) => void): void {
  const old = visited.t;
  let cap = old.length;
  const size = Atomics.load(ctl, C.SIZE);
  while (size * 2 > cap / 2) cap *= 2;
  gov.estimate = old.byteLength + others;
  if (!gov.allow(cap * 4)) {
    stopWith(ctl, 2);
    Atomics.store(ctl, C.PAUSED, 0);
    Atomics.store(ctl, C.GROW, 2);
    Atomics.notify(ctl, C.GROW);
    return;
  }
  const table = new SharedArrayBuffer(cap * 4);
  const t = new Int32Array(table);
  const mask = cap / 2 - 1;
  for (let j = 0; j < old.length; j += 2) if (old[j + 1] !== 0) insertPlain(t, mask, old[j]!, old[j + 1]!);
  visited.setTable(table);
  share(table);
  Atomics.store(ctl, C.PAUSED, 0);
  Atomics.store(ctl, C.GROW, 0);
  Atomics.notify(ctl, C.GROW);
}

/** What the main thread watches while the workers expand a level. */
interface LevelWatch {
  ctl: Int32Array;
  n: number;
  gov: Governor;
  /** Rebuilds the visited table (every worker paused or done). */
  grow: () => void;
  /** Bytes the main thread holds (visited table, tree, frontier). */
  held: () => number;
  lastProgress: number;
  t0: number;
  onProgress: ExploreOptions['onProgress'];
}

/**
 * Waits until every worker handed in the level, growing the table when they ask, and watches the
 * bounds too (a worker may be deep in one expansion); after a stop it waits at most
 * {@link STOP_GRACE_MS} for the workers to hand in their blocks. False: they did not, and are to
 * be given up.
 */
function awaitLevel(w: LevelWatch, at: { states: number; transitions: number; depth: number; frontier: number }): boolean {
  const { ctl, n, gov } = w;
  let stopSeen = 0;
  for (;;) {
    const e = Atomics.load(ctl, C.EVT);
    const done = Atomics.load(ctl, C.DONE);
    if (Atomics.load(ctl, C.GROW) === 1 && Atomics.load(ctl, C.PAUSED) + done === n) {
      w.grow();
      continue;
    }
    if (done === n && Atomics.load(ctl, C.GROW) !== 1) return true;
    const now = Date.now();
    gov.estimate = w.held();
    if (gov.check() !== null) {
      if (stopSeen === 0) stopSeen = now;
      else if (now - stopSeen > STOP_GRACE_MS) return false;
    }
    if (w.onProgress && now - w.lastProgress > 250) {
      w.lastProgress = now;
      w.onProgress({ states: at.states + Atomics.load(ctl, C.STORED), transitions: at.transitions, depth: at.depth, frontier: at.frontier, memory: gov.memory(), elapsedMs: now - w.t0 });
    }
    Atomics.wait(ctl, C.EVT, e, 50);
  }
}

/** Each worker's result of the level (a worker's error or silence fails the search, and the pool is dropped). */
function collect(ports: MessagePort[], n: number): LevelResult[] {
  const results: LevelResult[] = [];
  for (let w = 0; w < n; w++) {
    const r = threads().receiveMessageOnPort(ports[w]!);
    const msg = r?.message as FromWorker | undefined;
    if (!msg || msg.type !== 'level') {
      dropPool();
      throw new Error(`parallel checker: ${msg && msg.type === 'error' ? msg.message : `worker ${w} sent no result`}`);
    }
    results.push(msg);
  }
  return results;
}
