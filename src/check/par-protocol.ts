/**
 * What the parallel search's main thread and workers share: the control slots of a shared Int32Array
 * (`C`), the visited set as one open-addressing table of 64-bit hashes in a SharedArrayBuffer
 * (`SharedVisited`, claimed slot by slot with `Atomics.compareExchange`), and the messages they
 * exchange through MessageChannels (parallel.ts describes the protocol).
 */
import type { Kernel } from '../kernel/ir.js';
import type { Bound } from '../machine/governor.js';
import type { ExploreOptions, ExploreResult, HashSet, RawHazard } from './engine.js';

/**
 * node:worker_threads, loaded when a parallel search first needs it (not at import: the explorer's
 * browser bundle imports the checker, and browsers have no such module).
 */
type Threads = typeof import('node:worker_threads');
let threadsMod: Threads | null = null;
export const threads = (): Threads => (threadsMod ??= (process as unknown as { getBuiltinModule(id: string): Threads }).getBuiltinModule('node:worker_threads'));

/** Slots of the control array shared by the main thread and the workers. */
export const C = {
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
export const STOPS: ExploreResult['stoppedBy'][] = [null, 'max-states', 'max-memory', 'timeout', 'interrupt'];
/** The governor's bound of a STOP code, and the code of a bound. */
export const BOUNDS: (Bound | null)[] = [null, 'max-steps', 'max-memory', 'timeout', 'interrupt'];
export const codeOf = (b: Bound) => BOUNDS.indexOf(b);
/** Insertions a worker makes before it adds them to the shared size. */
const FLUSH = 256;
/** Second half of a slot being written (hashes equal to it are stored as PENDING − 1). */
const PENDING = -1;

/** The first slot probed for a hash. */
function slotOf(h1: number, h2: number, mask: number): number {
  return (h1 ^ Math.imul(h2, 0x9e3779b1)) & mask;
}

/** Inserts into a table nobody else touches now (main thread: initial state, rebuilding). */
export function insertPlain(t: Int32Array, mask: number, h1: number, h2: number): boolean {
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

/** The shared visited set as a worker (or the main thread) sees it; `pause` is called while the table is rebuilt. */
export class SharedVisited implements HashSet {
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

/** Bumps the event counter and wakes whoever waits on it. */
export function signal(ctl: Int32Array): void {
  Atomics.add(ctl, C.EVT, 1);
  Atomics.notify(ctl, C.EVT);
}

/** Records why the search stops (the first code set wins). */
export function stopWith(ctl: Int32Array, code: number): void {
  Atomics.compareExchange(ctl, C.STOP, 0, code);
}

// ---------------------------------------------------------------- messages

/** A search to serve: the kernel and parameters (each worker instantiates them), its options and bounds, the table. */
export interface JobMsg {
  type: 'job';
  kernel: Kernel;
  params: Record<string, number>;
  /** The program's `lockstep` (src/machine/program.ts `InstantiateOptions`). */
  lockstep: boolean;
  opts: Omit<ExploreOptions, 'onProgress' | 'workers'>;
  hash0: [number, number];
  table: SharedArrayBuffer;
  deadline: number;
  maxStates: number;
  /** Bytes of process memory (the resident set is the whole process's: every thread measures it). */
  maxMemory: number;
}
/** A level to expand: the frontier in shared memory, taken in blocks of `block` states. */
export interface LevelMsg {
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
/** The visited table, rebuilt larger. */
export interface TableMsg {
  type: 'table';
  table: SharedArrayBuffer;
}
/** The search is over. */
export interface EndMsg {
  type: 'end';
}
/** A message to a worker. */
export type ToWorker = JobMsg | LevelMsg | TableMsg | EndMsg;

/** What a worker found in one level. */
export interface LevelResult {
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
/** A message from a worker. */
export type FromWorker = LevelResult | { type: 'ready' } | { type: 'error'; message: string };
