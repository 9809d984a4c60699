/**
 * The parallel exhaustive search (`workers` > 1): the same breadth-first search as
 * {@link explore}, each level expanded by N worker threads together.
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
 */
import type { MessagePort, Worker as NodeWorker } from 'node:worker_threads';

/**
 * node:worker_threads, loaded when a parallel search first needs it (not at import: the explorer's
 * browser bundle imports the checker, and browsers have no such module).
 */
type Threads = typeof import('node:worker_threads');
let threadsMod: Threads | null = null;
const threads = (): Threads => (threadsMod ??= (process as unknown as { getBuiltinModule(id: string): Threads }).getBuiltinModule('node:worker_threads'));
import type { Choice } from '../machine/machine.js';
import type { Kernel } from '../kernel/ir.js';
import { instantiate, type Program } from '../machine/program.js';
import { StateBuf } from './codec.js';
import { DEFAULT_BOUNDS, MAX_HAZARDS, encodeChoice, grow as growArray, growthGuard, stopOf, type ExploreOptions, type ExploreResult, type HashSet, type RawHazard, type SearchApi } from './engine.js';
import { search } from './search.js';
import { BoundReached, Governor, type Bound } from '../machine/governor.js';

/** Slots of the control array shared by the main thread and the workers. */
const C = {
  /** Bumped (and notified) whenever a worker finishes a level, pauses, or starts. */
  EVT: 0,
  DONE: 1,
  PAUSED: 2,
  /** 1 while the visited table is to be rebuilt: workers pause at their next insertion. */
  GROW: 3,
  /** Next frontier block to take. */
  NEXT: 4,
  /** Why the search stops (0: it does not): an index in {@link STOPS}. */
  STOP: 5,
  /** Entries in the visited table (flushed by the workers every {@link FLUSH} insertions). */
  SIZE: 6,
  /** States stored during this level (flushed every 16 expansions). */
  STORED: 7,
  READY: 8,
  /** Per worker: bumped after a message is posted to it. */
  MAIL: 16,
} as const;
const STOPS: ExploreResult['stoppedBy'][] = [null, 'max-states', 'max-memory', 'timeout'];
/** The governor's bound of a STOP code, and the code of a bound. */
const BOUNDS: (Bound | null)[] = [null, 'max-steps', 'max-memory', 'timeout'];
const codeOf = (b: Bound) => BOUNDS.indexOf(b);
/** How long the main thread waits for the workers to finish their block after a stop before it gives them up (ms). */
const STOP_GRACE_MS = 250;
const FLUSH = 256;
/** Second half of a slot being written (hashes equal to it are stored as PENDING − 1). */
const PENDING = -1;

function slotOf(h1: number, h2: number, mask: number): number {
  return (h1 ^ Math.imul(h2, 0x9e3779b1)) & mask;
}

/** Inserts into a table nobody else touches now (main thread: initial state, rebuilding). */
function insertPlain(t: Int32Array, mask: number, h1: number, h2: number): boolean {
  let i = slotOf(h1, h2, mask);
  for (;;) {
    const k2 = t[2 * i + 1]!;
    if (k2 === 0) {
      t[2 * i] = h1;
      t[2 * i + 1] = h2;
      return true;
    }
    if (k2 === h2 && t[2 * i] === h1) return false;
    i = (i + 1) & mask;
  }
}

/** The shared visited set as a worker (or the main thread) sees it. */
class SharedVisited implements HashSet {
  t: Int32Array;
  mask: number;
  private unflushed = 0;
  constructor(sab: SharedArrayBuffer, private readonly ctl: Int32Array, private readonly pause: () => void) {
    this.t = new Int32Array(sab);
    this.mask = this.t.length / 2 - 1;
  }
  setTable(sab: SharedArrayBuffer): void {
    this.t = new Int32Array(sab);
    this.mask = this.t.length / 2 - 1;
  }
  get bytes(): number {
    return this.t.byteLength;
  }
  bytesAfter(n: number): number {
    let cap = this.mask + 1;
    let bytes = this.t.byteLength;
    while ((Atomics.load(this.ctl, C.SIZE) + n) * 2 > cap) {
      cap *= 2;
      bytes *= 2;
    }
    return bytes;
  }
  flush(): void {
    if (this.unflushed === 0) return;
    const n = Atomics.add(this.ctl, C.SIZE, this.unflushed) + this.unflushed;
    this.unflushed = 0;
    if (n * 2 > this.mask + 1 && Atomics.load(this.ctl, C.GROW) === 0) {
      Atomics.store(this.ctl, C.GROW, 1);
      signal(this.ctl);
    }
  }
  add(h1: number, h2: number): boolean {
    const ctl = this.ctl;
    if (Atomics.load(ctl, C.GROW) !== 0) {
      this.flush();
      if (Atomics.load(ctl, C.GROW) === 1) this.pause();
      // Frozen (the search stops at the memory bound): nothing more is inserted.
      if (Atomics.load(ctl, C.GROW) === 2) return false;
    }
    h1 |= 0;
    h2 |= 0;
    if (h2 === PENDING) h2 = PENDING - 1;
    const t = this.t;
    const mask = this.mask;
    let i = slotOf(h1, h2, mask);
    for (;;) {
      let k2 = Atomics.load(t, 2 * i + 1);
      if (k2 === 0) {
        k2 = Atomics.compareExchange(t, 2 * i + 1, 0, PENDING);
        if (k2 === 0) {
          Atomics.store(t, 2 * i, h1);
          Atomics.store(t, 2 * i + 1, h2);
          if (++this.unflushed >= FLUSH) this.flush();
          return true;
        }
      }
      while (k2 === PENDING) k2 = Atomics.load(t, 2 * i + 1);
      if (k2 === h2 && Atomics.load(t, 2 * i) === h1) return false;
      i = (i + 1) & mask;
    }
  }
}

function signal(ctl: Int32Array): void {
  Atomics.add(ctl, C.EVT, 1);
  Atomics.notify(ctl, C.EVT);
}

// ---------------------------------------------------------------- messages

interface JobMsg {
  type: 'job';
  kernel: Kernel;
  params: Record<string, number>;
  /** The program's {@link InstantiateOptions.lockstep}. */
  lockstep: boolean;
  opts: Omit<ExploreOptions, 'onProgress' | 'workers'>;
  hash0: [number, number];
  table: SharedArrayBuffer;
  deadline: number;
  maxStates: number;
  /** Bytes of process memory (the resident set is the whole process's: every thread measures it). */
  maxMemory: number;
}
interface LevelMsg {
  type: 'level';
  data: SharedArrayBuffer;
  offs: SharedArrayBuffer;
  ids: SharedArrayBuffer;
  rh: SharedArrayBuffer;
  rhLen: number;
  n: number;
  block: number;
  /** Stored states before this level. */
  base: number;
  fedBy: [number, number[]][];
}
interface TableMsg {
  type: 'table';
  table: SharedArrayBuffer;
}
interface EndMsg {
  type: 'end';
}
type ToWorker = JobMsg | LevelMsg | TableMsg | EndMsg;

interface LevelResult {
  type: 'level';
  /** The new states' encodings (offs: count + 1 entries), record hashes, parents and chains (chainOff: count + 1 entries into chainData, codes). */
  data: Int32Array;
  offs: Int32Array;
  rh: Int32Array;
  parent: Int32Array;
  chainOff: Int32Array;
  chainData: Int32Array;
  /** Pairs (frontier block, index of its first new state). */
  blocks: Int32Array;
  hazards: RawHazard[];
  error: boolean;
  transitions: number;
  terminalOk: number;
  intermediates: number;
  fedBy: [number, number[]][];
}
type FromWorker = LevelResult | { type: 'ready' } | { type: 'error'; message: string };

// ---------------------------------------------------------------- worker side

/** One search as a worker serves it; `rec` holds the new states of the level being expanded. */
interface Job {
  api: SearchApi;
  visited: SharedVisited;
  gov: Governor;
  maxStates: number;
  rec: { parent: number[]; chainOff: number[]; chainData: number[] };
}

/** A worker thread's loop (par-worker.ts calls it). */
export function workerMain(data: { ctl: SharedArrayBuffer; port: MessagePort; w: number }): void {
  const ctl = new Int32Array(data.ctl);
  const port = data.port;
  const mail = C.MAIL + data.w;
  const receive = (): ToWorker => {
    for (;;) {
      const v = Atomics.load(ctl, mail);
      const r = threads().receiveMessageOnPort(port);
      if (r) return r.message as ToWorker;
      Atomics.wait(ctl, mail, v);
    }
  };
  let job: Job | null = null;
  /** Waits while the main thread rebuilds the visited table (GROW = 1), then takes the new table. */
  const pause = () => {
    do {
      Atomics.add(ctl, C.PAUSED, 1);
      signal(ctl);
      while (Atomics.load(ctl, C.GROW) === 1) Atomics.wait(ctl, C.GROW, 1);
      // During a level only tables are sent: the last one is current.
      for (let r = threads().receiveMessageOnPort(port); r; r = threads().receiveMessageOnPort(port)) {
        const m = r.message as ToWorker;
        if (m.type !== 'table') throw new Error(`parallel checker: expected a table, got ${m.type}`);
        job!.visited.setTable(m.table);
      }
    } while (Atomics.load(ctl, C.GROW) === 1);
  };
  post(port, ctl, { type: 'ready' }, C.READY);
  for (;;) {
    const m = receive();
    try {
      if (m.type === 'job') {
        job = null;
        const program = instantiate(m.kernel, m.params, { lockstep: m.lockstep });
        const visited = new SharedVisited(m.table, ctl, pause);
        const rec: Job['rec'] = { parent: [], chainOff: [], chainData: [] };
        // The stop is shared: a bound one thread hits stops them all (the STOP slot).
        const governor = new Governor({ maxMemory: m.maxMemory, deadline: m.deadline }, {
          every: 64,
          linked: () => BOUNDS[Atomics.load(ctl, C.STOP)] ?? null,
          onStop: (b) => stopWith(ctl, codeOf(b)),
        });
        const hooks = {
          visited,
          store: (parentId: number, chain: readonly Choice[]) => {
            rec.parent.push(parentId);
            rec.chainOff.push(rec.chainData.length);
            for (const c of chain) rec.chainData.push(encodeChoice(c));
            return rec.parent.length - 1;
          },
          governor,
        };
        const api = search(program, m.opts, hooks) as SearchApi;
        if (api.hash0[0] !== m.hash0[0] || api.hash0[1] !== m.hash0[1]) throw new Error('parallel checker: a worker hashes the initial state differently from the main thread');
        api.takeError();
        api.takeHazards();
        job = { api, visited, gov: governor, maxStates: m.maxStates, rec };
      } else if (m.type === 'table') {
        job?.visited.setTable(m.table);
      } else if (m.type === 'end') {
        job = null;
      } else if (m.type === 'level') {
        if (!job) throw new Error('parallel checker: a level without a job');
        post(port, ctl, runLevel(job, m, ctl), C.DONE);
      }
    } catch (e) {
      post(port, ctl, { type: 'error', message: (e as Error).stack ?? String(e) }, C.DONE);
    }
  }
}

function stopWith(ctl: Int32Array, code: number): void {
  Atomics.compareExchange(ctl, C.STOP, 0, code);
}

function post(port: MessagePort, ctl: Int32Array, msg: FromWorker, counter: number): void {
  const transfer: ArrayBuffer[] = [];
  if (msg.type === 'level') for (const a of [msg.data, msg.offs, msg.rh, msg.parent, msg.chainOff, msg.chainData, msg.blocks]) if (!transfer.includes(a.buffer as ArrayBuffer)) transfer.push(a.buffer as ArrayBuffer);
  port.postMessage(msg, transfer);
  Atomics.add(ctl, counter, 1);
  signal(ctl);
}

/** Expands frontier blocks until none is left (or the search stops); returns the new states and what was found. */
function runLevel(job: Job, m: LevelMsg, ctl: Int32Array): LevelResult {
  const { api, visited, rec } = job;
  api.addFedBy(m.fedBy);
  const cur = new StateBuf();
  cur.data = new Int32Array(m.data) as unknown as Int32Array<ArrayBuffer>;
  cur.offs = new Int32Array(m.offs) as unknown as number[];
  cur.ids = new Int32Array(m.ids) as unknown as number[];
  cur.rh = new Int32Array(m.rh) as unknown as Int32Array<ArrayBuffer>;
  cur.rhLen = m.rhLen;
  const next = new StateBuf();
  next.guard = growthGuard(job.gov);
  rec.parent.length = 0;
  rec.chainOff.length = 0;
  rec.chainData.length = 0;
  const c0 = api.counters();
  const blocks: number[] = [];
  let flushed = 0;
  let k = 0;
  try {
    outer: for (;;) {
      if (Atomics.load(ctl, C.STOP) !== 0) break;
      const b = Atomics.add(ctl, C.NEXT, 1);
      const lo = b * m.block;
      if (lo >= m.n) break;
      const hi = Math.min(m.n, lo + m.block);
      blocks.push(b, rec.parent.length);
      for (let i = lo; i < hi; i++) {
        api.expandAt(cur, i, next);
        if (api.abortBy()) break outer;
        if ((k++ & 15) === 0) {
          const stored = rec.parent.length;
          Atomics.add(ctl, C.STORED, stored - flushed);
          flushed = stored;
          if (m.base + Atomics.load(ctl, C.STORED) >= job.maxStates) stopWith(ctl, 1);
          if (job.gov.check() !== null) break outer;
        }
      }
    }
  } catch (e) {
    // A growth of this worker's buffers that the governor refused: every worker stops.
    if (!(e instanceof BoundReached)) throw e;
    job.gov.stop(e.bound);
  }
  // A state recorded but not encoded (the governor refused the frontier's growth) is dropped.
  const n = next.count;
  if (rec.parent.length > n) {
    rec.chainData.length = rec.chainOff[n]!;
    rec.parent.length = n;
    rec.chainOff.length = n;
  }
  Atomics.add(ctl, C.STORED, rec.parent.length - flushed);
  visited.flush();
  rec.chainOff.push(rec.chainData.length);
  const offs = new Int32Array(n + 1);
  for (let i = 0; i < n; i++) offs[i] = next.offs[i]!;
  offs[n] = next.len;
  const c1 = api.counters();
  // The buffers are handed over whole (no copy; the main thread reads them up to offs[n]).
  return {
    type: 'level', data: next.data, offs, rh: next.rh,
    parent: Int32Array.from(rec.parent), chainOff: Int32Array.from(rec.chainOff), chainData: Int32Array.from(rec.chainData), blocks: Int32Array.from(blocks),
    hazards: api.takeHazards(), error: api.takeError(),
    transitions: c1.transitions - c0.transitions, terminalOk: c1.terminalOk - c0.terminalOk, intermediates: c1.intermediates - c0.intermediates,
    fedBy: api.fedBy(),
  };
}

// ---------------------------------------------------------------- main thread

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


/** A frontier in shared memory. */
interface Frontier {
  data: Int32Array;
  offs: Int32Array;
  ids: Int32Array;
  rh: Int32Array;
  n: number;
}
function sharedI32(n: number): Int32Array {
  return new Int32Array(new SharedArrayBuffer(4 * Math.max(1, n)));
}

/** {@link explore} with `opts.workers` worker threads (see the file comment). */
export function exploreParallel(program: Program, opts: ExploreOptions): ExploreResult {
  const t0 = Date.now();
  const n = Math.max(2, Math.floor(opts.workers ?? 2));
  const maxStates = opts.maxStates ?? DEFAULT_BOUNDS.maxStates;
  const maxMemory = opts.maxMemory ?? DEFAULT_BOUNDS.maxMemory;
  const timeoutMs = opts.timeoutMs ?? DEFAULT_BOUNDS.timeoutMs;
  const wopts: JobMsg['opts'] = {};
  for (const k of ['maxStates', 'maxMemory', 'timeoutMs', 'all', 'por', 'symmetry', 'ctaSymmetry', 'strict', 'verifyHash'] as const) {
    if (opts[k] !== undefined) (wopts as Record<string, unknown>)[k] = opts[k];
  }
  const deadline = t0 + timeoutMs;
  const pl = getPool(n, deadline);
  // Not started by the deadline: the search stops by timeout (what one thread explores in no time).
  if (!pl) return search(program, { ...wopts, timeoutMs: 0 }, null) as ExploreResult;
  const { ctl, ports } = pl;
  for (let i = 0; i < C.READY; i++) Atomics.store(ctl, i, 0);
  const gov = new Governor({ maxMemory, deadline }, {
    linked: () => BOUNDS[Atomics.load(ctl, C.STOP)] ?? null,
    onStop: (b) => stopWith(ctl, codeOf(b)),
  });
  let table = new SharedArrayBuffer(8 << 16);
  const visited = new SharedVisited(table, ctl, () => {
    throw new Error('parallel checker: the main thread never pauses');
  });
  const api = search(program, wopts, { visited, store: () => 0, governor: gov }) as SearchApi;
  visited.flush();
  const send = (w: number, msg: ToWorker) => {
    ports[w]!.postMessage(msg);
    Atomics.add(ctl, C.MAIL + w, 1);
    Atomics.notify(ctl, C.MAIL + w);
  };
  const fail = (why: string): never => {
    dropPool();
    throw new Error(`parallel checker: ${why}`);
  };
  for (let w = 0; w < n; w++) {
    send(w, { type: 'job', kernel: program.kernel, params: program.params, lockstep: program.lockstep, opts: wopts, hash0: api.hash0, table, deadline, maxStates, maxMemory });
  }

  let parent = new Int32Array(1 << 14);
  let chainOff = new Int32Array(1 << 14);
  let chainData = new Int32Array(1 << 16);
  parent[0] = -1;
  chainOff[0] = 0;
  chainData[0] = 0;
  let chainLen = 1;
  let nStates = 1;
  let transitions = 0;
  let terminalOk = 0;
  let intermediates = 0;
  let depth = 0;
  let peakFrontier = 1;
  let memEst = 0;
  let stoppedBy: ExploreResult['stoppedBy'] = null;
  let errorFound = api.initError;
  const hazards = new Map<string, RawHazard>();
  for (const h of api.initHazards) hazards.set(h.key, h);
  const fedBy = new Map<number, Set<number>>();
  const rhLen = api.codec.rhLength();

  const init = api.initial;
  let cur: Frontier = { data: sharedI32(init.len), offs: sharedI32(2), ids: sharedI32(1), rh: sharedI32(rhLen), n: 1 };
  cur.data.set(init.data.subarray(0, init.len));
  cur.offs[1] = init.len;
  cur.rh.set(init.rh.subarray(0, rhLen));
  const arraysBytes = () => parent.byteLength + chainOff.byteLength + chainData.byteLength;
  const frontierBytes = (f: Frontier) => f.data.byteLength + f.offs.byteLength + f.ids.byteLength + f.rh.byteLength;

  /** Rebuilds the visited table twice as large (all workers paused or done), or freezes it at the memory bound. */
  const grow = () => {
    const old = visited.t;
    let cap = old.length;
    const size = Atomics.load(ctl, C.SIZE);
    while (size * 2 > cap / 2) cap *= 2;
    gov.estimate = old.byteLength + arraysBytes() + frontierBytes(cur);
    if (!gov.allow(cap * 4)) {
      stopWith(ctl, 2);
      Atomics.store(ctl, C.PAUSED, 0);
      Atomics.store(ctl, C.GROW, 2);
      Atomics.notify(ctl, C.GROW);
      return;
    }
    table = new SharedArrayBuffer(cap * 4);
    const t = new Int32Array(table);
    const mask = cap / 2 - 1;
    for (let j = 0; j < old.length; j += 2) if (old[j + 1] !== 0) insertPlain(t, mask, old[j]!, old[j + 1]!);
    visited.setTable(table);
    for (let w = 0; w < n; w++) send(w, { type: 'table', table });
    Atomics.store(ctl, C.PAUSED, 0);
    Atomics.store(ctl, C.GROW, 0);
    Atomics.notify(ctl, C.GROW);
  };

  let lastProgress = t0;
  try {
    while (cur.n > 0) {
      Atomics.store(ctl, C.DONE, 0);
      Atomics.store(ctl, C.NEXT, 0);
      Atomics.store(ctl, C.STORED, 0);
      const block = Math.max(1, Math.min(256, Math.ceil(cur.n / (n * 8))));
      const fl = [...fedBy].map(([k, v]): [number, number[]] => [k, [...v]]);
      for (let w = 0; w < n; w++) {
        send(w, { type: 'level', data: cur.data.buffer as SharedArrayBuffer, offs: cur.offs.buffer as SharedArrayBuffer, ids: cur.ids.buffer as SharedArrayBuffer, rh: cur.rh.buffer as SharedArrayBuffer, rhLen, n: cur.n, block, base: nStates, fedBy: fl });
      }
      // The main thread watches the bounds too (a worker may be deep in one expansion), and after a
      // stop waits at most STOP_GRACE_MS for the workers to hand in their blocks.
      let stopSeen = 0;
      let abandoned = false;
      for (;;) {
        const e = Atomics.load(ctl, C.EVT);
        const done = Atomics.load(ctl, C.DONE);
        if (Atomics.load(ctl, C.GROW) === 1 && Atomics.load(ctl, C.PAUSED) + done === n) {
          grow();
          continue;
        }
        if (done === n && Atomics.load(ctl, C.GROW) !== 1) break;
        const now = Date.now();
        gov.estimate = visited.bytes + arraysBytes() + frontierBytes(cur);
        if (gov.check() !== null) {
          if (stopSeen === 0) stopSeen = now;
          else if (now - stopSeen > STOP_GRACE_MS) {
            abandoned = true;
            break;
          }
        }
        if (opts.onProgress && now - lastProgress > 250) {
          lastProgress = now;
          opts.onProgress({ states: nStates + Atomics.load(ctl, C.STORED), transitions, depth, frontier: cur.n, memory: gov.memory(), elapsedMs: now - t0 });
        }
        Atomics.wait(ctl, C.EVT, e, 50);
      }
      if (abandoned) {
        // The workers did not stop in time: they are given up (terminated) and the search ends
        // with the states of the levels before this one.
        stoppedBy = STOPS[Atomics.load(ctl, C.STOP)] ?? 'timeout';
        dropPool();
        break;
      }
      const results: LevelResult[] = [];
      for (let w = 0; w < n; w++) {
        const r = threads().receiveMessageOnPort(ports[w]!);
        const msg = r?.message as FromWorker | undefined;
        if (!msg || msg.type !== 'level') fail(msg && msg.type === 'error' ? msg.message : `worker ${w} sent no result`);
        results.push(msg as LevelResult);
      }
      // New states, numbered in frontier-block order.
      const segs: [number, number, number, number][] = [];
      let count = 0;
      let dataLen = 0;
      results.forEach((r, w) => {
        const bl = r.blocks;
        for (let j = 0; j < bl.length; j += 2) {
          const end = j + 2 < bl.length ? bl[j + 3]! : r.parent.length;
          if (end > bl[j + 1]!) segs.push([bl[j]!, w, bl[j + 1]!, end]);
        }
        count += r.parent.length;
        dataLen += r.offs[r.offs.length - 1]!;
      });
      segs.sort((a, b) => a[0] - b[0]);
      // A stopped search needs no next frontier: only the new states' parents and chains are kept.
      gov.estimate = visited.bytes + arraysBytes() + frontierBytes(cur);
      const stopping = gov.check() !== null || !gov.allow(4 * (dataLen + count * (rhLen + 2) + 1));
      const next: Frontier = stopping
        ? { data: new Int32Array(0), offs: new Int32Array(count + 1), ids: new Int32Array(count), rh: new Int32Array(0), n: count }
        : { data: sharedI32(dataLen), offs: sharedI32(count + 1), ids: sharedI32(count), rh: sharedI32(count * rhLen), n: count };
      parent = growArray(parent, nStates + count);
      chainOff = growArray(chainOff, nStates + count);
      let pos = 0;
      let k = 0;
      for (const [, w, start, end] of segs) {
        const r = results[w]!;
        const d0 = r.offs[start]!;
        if (!stopping) {
          next.data.set(r.data.subarray(d0, r.offs[end]!), pos);
          next.rh.set(r.rh.subarray(start * rhLen, end * rhLen), k * rhLen);
        }
        const c0 = r.chainOff[start]!;
        const c1 = r.chainOff[end]!;
        chainData = growArray(chainData, chainLen + (c1 - c0) + (end - start));
        for (let j = start; j < end; j++) {
          next.offs[k] = pos + r.offs[j]! - d0;
          next.ids[k] = nStates;
          parent[nStates] = r.parent[j]!;
          chainOff[nStates] = chainLen;
          const a = r.chainOff[j]!;
          const b = r.chainOff[j + 1]!;
          chainData[chainLen++] = b - a;
          for (let q = a; q < b; q++) chainData[chainLen++] = r.chainData[q]!;
          nStates++;
          k++;
        }
        pos += r.offs[end]! - d0;
      }
      next.offs[count] = pos;
      // Hazards: per kind and place, the one of the lowest state id (the first found at it).
      const best = new Map<string, { h: RawHazard; i: number }>();
      results.forEach((r) => r.hazards.forEach((h, i) => {
        if (hazards.has(h.key)) return;
        const b = best.get(h.key);
        if (!b || h.state < b.h.state) best.set(h.key, { h, i });
      }));
      for (const { h } of [...best.values()].sort((a, b) => a.h.state - b.h.state || a.i - b.i)) {
        if (hazards.size >= MAX_HAZARDS) break;
        hazards.set(h.key, h);
      }
      for (const r of results) {
        if (r.error) errorFound = true;
        transitions += r.transitions;
        terminalOk += r.terminalOk;
        intermediates += r.intermediates;
        for (const [key, v] of r.fedBy) {
          let f = fedBy.get(key);
          if (!f) fedBy.set(key, (f = new Set()));
          for (const x of v) f.add(x);
        }
      }
      memEst = Math.max(memEst, gov.memory(), visited.bytes + arraysBytes() + frontierBytes(cur) + frontierBytes(next));
      const stop = STOPS[Atomics.load(ctl, C.STOP)] ?? null;
      if (stop) {
        stoppedBy = stop;
        break;
      }
      peakFrontier = Math.max(peakFrontier, count);
      cur = next;
      depth++;
      if (errorFound && !opts.all && count > 0) {
        stoppedBy = 'hazard';
        break;
      }
      if (nStates >= maxStates && count > 0) {
        stoppedBy = 'max-states';
        break;
      }
      if (Atomics.load(ctl, C.GROW) === 1) grow();
    }
  } finally {
    if (pool === pl) for (let w = 0; w < n; w++) send(w, { type: 'end' });
  }
  memEst = Math.max(memEst, gov.peak);
  if (stoppedBy === null && nStates > maxStates) stoppedBy = 'max-states';
  return {
    machine: api.machine, analysis: api.analysis, hazards: [...hazards.values()], complete: stoppedBy === null, stoppedBy, states: nStates, transitions, depth,
    peakFrontier, memory: memEst, elapsedMs: Date.now() - t0, parent, chainOff, chainData, terminalOk, intermediates,
  };
}
