/**
 * The worker side of the parallel search: a worker thread's loop serves jobs (a search over the
 * shared visited set) and levels (frontier blocks expanded until none is left), and hands back the
 * new states, their parents and forced chains, and the hazards found.
 */
import type { MessagePort } from 'node:worker_threads';
import type { Choice } from '../machine/machine.js';
import { instantiate } from '../machine/program.js';
import { BoundReached, Governor } from '../machine/governor.js';
import { StateBuf } from './codec.js';
import { encodeChoice, growthGuard, type SearchApi } from './engine.js';
import { search } from './search.js';
import { BOUNDS, C, SharedVisited, codeOf, signal, stopWith, threads, type FromWorker, type LevelMsg, type LevelResult, type ToWorker } from './par-protocol.js';

/** One search as a worker serves it; `rec` holds the new states of the level being expanded. */
interface Job {
  api: SearchApi;
  visited: SharedVisited;
  gov: Governor;
  maxStates: number;
  rec: { parent: number[]; chainOff: number[]; chainData: number[] };
}

/** A worker thread's loop (the pool's worker code calls it with its control array, port and index). */
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

/** Posts `msg` (its arrays transferred) and bumps `counter`. */
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
