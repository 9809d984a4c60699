/// <reference lib="dom" />
/**
 * The page's side of the worker (src/web/worker.ts). Simulations and phase tables each have one
 * worker; a new request while one is running terminates it (the old answer is no longer wanted)
 * and starts a fresh one, so a long simulation never delays the next. Each check gets its own
 * worker, terminated on cancel. Where module workers cannot start (a page opened from file://),
 * requests run on the page's thread instead.
 */
import type { Progress } from '../check/explore.js';
import type { PhaseRowX } from './phase-rows.js';
import { handle, type CheckBounds, type PackedCheck, type WorkerReply, type WorkerRequest } from './engine-protocol.js';
import type { PackedModel } from './model.js';
import type { SimProgress } from './sim-model.js';
import type { SourceRef } from './share.js';

/** Rejection reason of a request replaced by a newer one, or a cancelled check. */
export class Dropped extends Error {}

type Pending = { id: number; req: WorkerRequest; resolve: (m: WorkerReply) => void; reject: (e: Error) => void; onProgress?: (p: Progress) => void; onSimProgress?: (p: SimProgress) => void };

let workersBroken = typeof Worker === 'undefined';
let nextId = 1;

function spawn(): Worker | null {
  if (workersBroken) return null;
  try {
    return new Worker(new URL('./worker.ts', import.meta.url), { type: 'module', name: 'mbsim-engine' });
  } catch {
    workersBroken = true;
    return null;
  }
}

/** Runs a request on this thread (fallback), asynchronously. */
function inThread(p: Pending): () => void {
  let dropped = false;
  const t = setTimeout(() => {
    handle(p.req, (m) => {
      if (dropped) return;
      if (m.type === 'progress') p.onProgress?.(m.progress);
      else if (m.type === 'sim-progress') p.onSimProgress?.(m.progress);
      else if (m.type === 'error') p.reject(new Error(m.error));
      else p.resolve(m);
    });
  }, 0);
  return () => {
    dropped = true;
    clearTimeout(t);
  };
}

/** Sends `p` to worker `w`; resolves through `p`. Returns a function that drops it. */
function viaWorker(w: Worker, p: Pending, onDead: () => void): void {
  w.onmessage = (e: MessageEvent<WorkerReply>) => {
    const m = e.data;
    if (m.id !== p.id) return;
    if (m.type === 'progress') p.onProgress?.(m.progress);
    else if (m.type === 'sim-progress') p.onSimProgress?.(m.progress);
    else if (m.type === 'error') p.reject(new Error(m.error));
    else p.resolve(m);
  };
  w.onerror = (e) => {
    e.preventDefault();
    // The worker script could not load or crashed: from now on run on this thread.
    workersBroken = true;
    onDead();
    inThread(p);
  };
  w.postMessage(p.req);
}

/** One worker serving one request at a time; a newer request replaces the running one. */
class Slot {
  private w: Worker | null = null;
  private cur: Pending | null = null;
  private dropCur: (() => void) | null = null;

  /** Drops the running request (it rejects with {@link Dropped}) and terminates its worker. */
  cancel(why = 'cancelled'): void {
    if (!this.cur) return;
    this.cur.reject(new Dropped(why));
    this.dropCur?.();
    this.w?.terminate();
    this.w = null;
    this.cur = null;
  }

  run(req: WorkerRequest, onProgress?: (p: Progress) => void, onSimProgress?: (p: SimProgress) => void): Promise<WorkerReply> {
    this.cancel('superseded');
    return new Promise<WorkerReply>((resolve, reject) => {
      const p: Pending = {
        id: req.id, req,
        resolve: (m) => {
          if (this.cur === p) this.cur = null;
          resolve(m);
        },
        reject: (e) => {
          if (this.cur === p) this.cur = null;
          reject(e);
        },
        ...(onProgress ? { onProgress } : {}),
        ...(onSimProgress ? { onSimProgress } : {}),
      };
      this.cur = p;
      this.w ??= spawn();
      if (this.w) {
        this.dropCur = null;
        viaWorker(this.w, p, () => {
          this.w = null;
        });
      } else this.dropCur = inThread(p);
    });
  }
}

const simSlot = new Slot();
const phaseSlot = new Slot();

/**
 * Simulates a kernel in the worker; `onProgress` hears how far a long one has come. Rejects with
 * {@link Dropped} when a newer simulation replaces it or {@link cancelSimulation} stops it.
 */
export async function simulateIn(src: SourceRef, params: Record<string, number>, onProgress?: (p: SimProgress) => void): Promise<PackedModel> {
  const r = await simSlot.run({ type: 'sim', id: nextId++, src, params }, undefined, onProgress);
  if (r.type !== 'sim') throw new Error('unexpected reply');
  return r.model;
}

/** Stops the running simulation (its worker is terminated; on the page's thread it cannot be interrupted). */
export function cancelSimulation(): void {
  simSlot.cancel();
}

/** The phase table of a kernel's loop (src/report/phases.ts `phaseTable`), in the worker. */
export async function phasesIn(src: SourceRef, params: Record<string, number>, role: string, barrier: string, variable: string): Promise<PhaseRowX[]> {
  const r = await phaseSlot.run({ type: 'phases', id: nextId++, src, params, role, barrier, variable });
  if (r.type !== 'phases') throw new Error('unexpected reply');
  return r.rows;
}

/** A running check. */
export interface CheckRun {
  done: Promise<PackedCheck>;
  /** Stops the search (terminates its worker); `done` rejects with {@link Dropped}. */
  cancel(): void;
  /** True when it runs in a worker (false: on the page's thread, which cannot be interrupted). */
  readonly inWorker: boolean;
}

/** Runs the exhaustive checker in a worker of its own. */
export function checkIn(src: SourceRef, params: Record<string, number>, bounds: CheckBounds, onProgress: (p: Progress) => void): CheckRun {
  const req: WorkerRequest = { type: 'check', id: nextId++, src, params, bounds };
  let w = spawn();
  let drop: (() => void) | null = null;
  let rejectFn: (e: Error) => void = () => undefined;
  let settled = false;
  const done = new Promise<PackedCheck>((resolve, reject) => {
    rejectFn = reject;
    const p: Pending = {
      id: req.id, req, onProgress,
      resolve: (m) => {
        settled = true;
        w?.terminate();
        if (m.type === 'check') resolve(m.result);
        else reject(new Error('unexpected reply'));
      },
      reject: (e) => {
        settled = true;
        w?.terminate();
        reject(e);
      },
    };
    if (w) viaWorker(w, p, () => {
      w = null;
    });
    else drop = inThread(p);
  });
  return {
    done,
    inWorker: w !== null,
    cancel() {
      if (settled) return;
      settled = true;
      w?.terminate();
      drop?.();
      rejectFn(new Dropped('cancelled'));
    },
  };
}
