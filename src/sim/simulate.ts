/**
 * The timed simulator: a deterministic discrete-event driver of the machine. It picks the next
 * choice by time — each agent pays an issue cost per operation, blocked waiters wake a fixed
 * latency after the phase completes, TMA copies move through a per-SM engine at the configured
 * bandwidth, MMAs run back to back on the CTA's tensor core — and records spans for timelines.
 * All semantics come from the machine's step function.
 *
 * Ties are broken by insertion order, so a run is a pure function of (kernel, parameters, timing,
 * seed). With a seed, asynchronous latencies get ±`jitter` from a seeded PRNG (mulberry32).
 */
import { Machine, newStepOut, type AsyncOp, type MachineState, type StepOut } from '../machine/machine.js';
import type { EventKind, MachineEvent } from '../machine/events.js';
import { explainHang, type HangReport } from '../machine/hang.js';
import { perThreads, type OpInstr, type Program } from '../machine/program.js';
import type { Diagnostic } from '../model/diagnostics.js';
import type { SrcLoc } from '../kernel/ir.js';
import { boundOption, Governor, type Bound } from '../machine/governor.js';
import { H200, ISSUE_COST, validateTiming, type IssueArgs, type Timing } from './timing.js';
import { OPS } from '../machine/ops/index.js';

/** Options of {@link simulate}. */
export interface SimOptions {
  timing?: Timing;
  /** Seed for latency jitter; absent: no jitter. */
  seed?: number;
  /** Keep the machine's events (needed for ledgers and traces). Default true. */
  recordEvents?: boolean;
  /**
   * Keep only events of these kinds (all are still counted in `eventCount`); default all. A ledger
   * needs {@link LEDGER_EVENT_KINDS} only, a third of the events of a typical run.
   */
  eventKinds?: ReadonlySet<EventKind>;
  /** Keep per-lane spans (needed for timelines and traces). Default true. */
  recordSpans?: boolean;
  /**
   * Stop after this many steps (a spinning kernel never ends). Default 50,000,000. Wake-ups that
   * apply no step (an asynchronous completion not yet enabled, re-queued a cycle later) are
   * bounded by {@link IDLE_PER_STEP} times as many, so a run without progress stops too.
   */
  maxSteps?: number;
  /**
   * Stop (verdict `incomplete`) before the process's memory passes this many bytes (its resident
   * set, src/machine/governor.ts; in a browser an estimate of the recorded events and spans).
   * Default: no bound.
   */
  maxMemory?: number;
  /** Stop (verdict `incomplete`) after this many wall-clock milliseconds. Default: no bound. */
  timeoutMs?: number;
  /**
   * SMs copying at the same time, for the shared L2/HBM bandwidth model (default: the CTAs of
   * this launch, at most the GPU's SMs). Set it to simulate one CTA of a full-GPU launch.
   */
  activeSms?: number;
  /** Called after every step with the state (read-only by contract) and the step's events. */
  onStep?: (state: MachineState, events: readonly MachineEvent[]) => void;
}

/** A busy or stalled interval on a lane. `lane` is an agent index, or a unit lane name. */
export interface Span {
  lane: string;
  t0: number;
  t1: number;
  kind: 'op' | 'stall' | 'tma' | 'mma' | 'store' | 'signal';
  label: string;
  loc?: SrcLoc;
  /** Asynchronous operation id, for async spans. */
  id?: number;
}

/**
 * How a run ended. `trap`: the H200 would trap; `error`: undefined behaviour reported without a
 * trap; `incomplete`: the step limit stopped it first.
 */
export type SimVerdict = 'ok' | 'hang' | 'trap' | 'error' | 'incomplete';

/** Everything a simulation produced. */
export interface SimResult {
  program: Program;
  timing: Timing;
  verdict: SimVerdict;
  /** Cycle of the last step. */
  cycles: number;
  steps: number;
  eventCount: number;
  events: MachineEvent[] | null;
  spans: Span[] | null;
  diagnostics: { diag: Diagnostic; agent: number; async: number; bar: number; loc?: SrcLoc; t: number }[];
  hang: HangReport | null;
  /** Why the run stopped early, if it did: a sentence naming the bound and what to raise or shrink. */
  stopped: string | null;
  /** The bound that stopped the run early, or null. */
  stoppedBy: Bound | null;
  stats: SimStats;
  final: MachineState;
}

/** Utilization and stall figures (cycles). */
export interface SimStats {
  /** Per agent: cycles spent issuing operations. */
  busy: number[];
  /** Per agent: stalled cycles by cause (e.g. `wait empty`, `bar.sync`). */
  stalls: Record<string, number>[];
  /** Per CTA: cycles the TMA engine was transferring. */
  tmaBusy: number[];
  /** Per CTA: cycles the tensor core was busy. */
  tcBusy: number[];
  /** Per agent: cycles at which it finished (or -1). */
  finishedAt: number[];
}

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A typed array twice as long holding the same elements first. */
function doubled<A extends Float64Array | Int32Array>(a: A): A {
  const b = new (a.constructor as new (n: number) => A)(a.length * 2);
  b.set(a);
  return b;
}

/**
 * Priority queue of (time, insertion order) → payload: pops the smallest time, ties in insertion
 * order. Integer times within a window of {@link Queue.W} cycles from the cursor go to FIFO
 * buckets, one per cycle (a bucket's entries are in insertion order, so its head is its
 * minimum); every other time (far ahead, behind the cursor, fractional) goes to a 4-ary min-heap in
 * parallel typed arrays. A pop takes the smaller of the first bucket's head and the heap's top.
 */
class Queue {
  static readonly W = 4096;
  // Buckets: first / last node of each cycle (ring indexed by time mod W), -1 when empty.
  private head = new Int32Array(Queue.W).fill(-1);
  private tail = new Int32Array(Queue.W);
  // Nodes: insertion number, payload, next node in the bucket (or in the free list).
  private nq = new Float64Array(1024);
  private nv = new Int32Array(1024);
  private nx = new Int32Array(1024);
  private nodes = 0;
  private free = -1;
  /** Every bucketed entry has a time in [cur, cur + W); no bucket before `cur` holds one. */
  private cur = 0;
  private near = 0;
  // Heap.
  private t = new Float64Array(1024);
  private q = new Float64Array(1024);
  private v = new Int32Array(1024);
  private n = 0;
  private seq = 0;
  /** Time of the entry {@link pop} returned last. */
  lastTime = 0;
  get size(): number {
    return this.n + this.near;
  }
  private grow(): void {
    this.t = doubled(this.t);
    this.q = doubled(this.q);
    this.v = doubled(this.v);
  }
  private growNodes(): void {
    this.nq = doubled(this.nq);
    this.nv = doubled(this.nv);
    this.nx = doubled(this.nx);
  }
  push(time: number, payload: number): void {
    const s = this.seq++;
    if (this.near === 0 && Math.floor(time) === time) this.cur = time;
    const d = time - this.cur;
    if (d >= 0 && d < Queue.W && Math.floor(time) === time) {
      let node = this.free;
      if (node >= 0) this.free = this.nx[node]!;
      else {
        if (this.nodes === this.nq.length) this.growNodes();
        node = this.nodes++;
      }
      this.nq[node] = s;
      this.nv[node] = payload;
      this.nx[node] = -1;
      const b = time & (Queue.W - 1);
      if (this.head[b] === -1) this.head[b] = node;
      else this.nx[this.tail[b]!] = node;
      this.tail[b] = node;
      this.near++;
      return;
    }
    this.heapPush(time, s, payload);
  }
  private heapPush(time: number, s: number, payload: number): void {
    if (this.n === this.t.length) this.grow();
    const t = this.t, q = this.q, v = this.v;
    let i = this.n++;
    // 4-ary heap: parent of i is (i - 1) >> 2.
    while (i > 0) {
      const p = (i - 1) >> 2;
      const tp = t[p]!;
      if (tp < time || (tp === time && q[p]! < s)) break;
      t[i] = tp;
      q[i] = q[p]!;
      v[i] = v[p]!;
      i = p;
    }
    t[i] = time;
    q[i] = s;
    v[i] = payload;
  }
  /** Pops the minimum; returns its payload and leaves its time in `lastTime`. */
  pop(): number {
    if (this.near > 0) {
      const head = this.head;
      const mask = Queue.W - 1;
      let cur = this.cur;
      while (head[cur & mask] === -1) cur++;
      this.cur = cur;
      const b = cur & mask;
      const node = head[b]!;
      const nq = this.nq[node]!;
      if (this.n === 0 || this.t[0]! > cur || (this.t[0] === cur && this.q[0]! > nq)) {
        head[b] = this.nx[node]!;
        this.nx[node] = this.free;
        this.free = node;
        this.near--;
        this.lastTime = cur;
        return this.nv[node]!;
      }
    }
    return this.heapPop();
  }
  private heapPop(): number {
    const t = this.t, q = this.q, v = this.v;
    const rv = v[0]!;
    this.lastTime = t[0]!;
    const n = --this.n;
    if (n > 0) {
      const lt = t[n]!, lq = q[n]!, lv = v[n]!;
      let i = 0;
      for (;;) {
        const first = 4 * i + 1;
        if (first >= n) break;
        // The smallest of up to four children.
        let c = first;
        let tc = t[first]!, qc = q[first]!;
        const last = first + 4 < n ? first + 4 : n;
        for (let k = first + 1; k < last; k++) {
          const tk = t[k]!;
          if (tk < tc || (tk === tc && q[k]! < qc)) {
            c = k;
            tc = tk;
            qc = q[k]!;
          }
        }
        if (tc > lt || (tc === lt && qc > lq)) break;
        t[i] = tc;
        q[i] = qc;
        v[i] = v[c]!;
        i = c;
      }
      t[i] = lt;
      q[i] = lq;
      v[i] = lv;
    }
    return rv;
  }
}

// Payload encoding: agents are 2·a (even), async op completions 2·id + 1 (odd).

/** Simulates `program` and returns its timeline, events, verdict and statistics. */
export function simulate(program: Program, opts: SimOptions = {}): SimResult {
  if (!program || typeof program !== 'object' || !Array.isArray((program as Partial<Program>).agents)) {
    throw new TypeError(`simulate: expected a Program (from instantiate), got ${program === null ? 'null' : typeof program}`);
  }
  const T = opts.timing ?? H200;
  validateTiming(T);
  const v = (p: { value: number }) => p.value;
  const recordEvents = opts.recordEvents ?? true;
  const recordSpans = opts.recordSpans ?? true;
  for (const k of ['maxSteps', 'maxMemory', 'timeoutMs', 'activeSms', 'seed'] as const) boundOption('simulate', k, opts[k]);
  const maxSteps = opts.maxSteps ?? 50_000_000;
  const rand = opts.seed !== undefined ? mulberry32(opts.seed) : null;
  const jit = (x: number) => (rand ? Math.round(x * (1 + (rand() * 2 - 1) * v(T.jitter))) : x);

  const m = new Machine(program);
  const initOut = newStepOut(recordEvents);
  const s = m.initial(initOut);
  const out: StepOut = newStepOut(recordEvents || !!opts.onStep);
  const events: MachineEvent[] | null = recordEvents ? [] : null;
  const spans: Span[] | null = recordSpans ? [] : null;
  const kinds = opts.eventKinds ?? null;
  const keep = (e: MachineEvent) => {
    if (!kinds || kinds.has(e.e)) events!.push(e);
  };
  const nA = program.agents.length;
  const queue = new Queue();
  const parkedAt = new Float64Array(nA).fill(-1);
  const parkCause: string[] = new Array(nA).fill('');
  const parkedOn = new Int32Array(nA).fill(-2); // barrier key, -1 other, -2 not parked
  // Agents parked on each barrier key, in the order they parked (all wake together).
  const parkedByBar: (number[] | undefined)[] = new Array(program.ctas * program.barriersPerCta);
  // Stall cause of a wait on each barrier key (built once per key).
  const waitCause: (string | undefined)[] = new Array(program.ctas * program.barriersPerCta);
  // Agents just woken from a blocked mbarrier wait: their wait returns as part of the wake latency.
  const woken = new Uint8Array(nA);
  // Agents parked on anything else (bar.sync, cluster wait, wait_group), in the order they parked.
  const parkedOther: number[] = [];
  const stats: SimStats = {
    busy: new Array(nA).fill(0),
    stalls: Array.from({ length: nA }, () => ({})),
    tmaBusy: new Array(program.ctas).fill(0),
    tcBusy: new Array(program.ctas).fill(0),
    finishedAt: new Array(nA).fill(-1),
  };
  const diagnostics: SimResult['diagnostics'] = [...initOut.diags];
  if (events && initOut.events) initOut.events.forEach(keep);
  const tmaFree = new Float64Array(program.ctas);
  const tcFree = new Float64Array(program.ctas);
  // Latest completion time of each agent's in-order streams (tcgen05, wgmma, cp.async).
  const lastTc = new Float64Array(nA);
  const lastWg = new Float64Array(nA);
  const lastCp = new Float64Array(nA);
  const activeSms = Math.max(1, opts.activeSms ?? Math.min(v(T.sms), program.ctas));
  // TMA model (fitted to hw/results/pipeline.json and load.json, docs/HARDWARE.md "Timing model fit").
  // Read side, per issuing SM: the engine's own limit (from HBM also the per-SM HBM limit), and the
  // SM's share of the shared L2 (HBM) bandwidth. Every SM of the launch is assumed to behave like the
  // simulated one (mean field): of the `activeSms`, a fraction u (this SM's read duty: read cycles per
  // cycle, recent) is reading at any time, and those split the shared bandwidth. A stream that idles
  // between copies therefore reads at its own limit until the SMs' reads add up to the shared limit.
  const hbm = v(T.tmaSourceHbm) !== 0;
  const smBw = hbm ? Math.min(v(T.tmaBytesPerCycleSm), v(T.tmaHbmBytesPerCycleSm)) : v(T.tmaBytesPerCycleSm);
  // Every SM streaming its own addresses (tmaSourceL2Distinct) reaches less of L2 than SMs sharing
  // tiles: an SM reading while n − 1 others also read gets tmaL2DistinctBytesPerCycle / (n − 1 + n0)
  // (n0 = tmaL2DistinctHalfSms): the share falls smoothly as SMs are added (queueing at the L2
  // slices), not only at a cap. With n0 = 0, tmaL2DistinctBytesPerCycle is a hard GPU-wide cap.
  const distinct = v(T.tmaSourceL2Distinct) !== 0;
  const n0 = v(T.tmaL2DistinctHalfSms);
  const sharedL2 = v(T.tmaBytesPerCycleAllSms) * v(T.sms);
  const l2Cap = distinct && n0 === 0 ? Math.min(sharedL2, v(T.tmaL2DistinctBytesPerCycle)) : sharedL2;
  const distinctShare = (n: number) => (distinct && n0 > 0 ? v(T.tmaL2DistinctBytesPerCycle) / (Math.max(0, n - 1) + n0) : Infinity);
  const srcCap = Math.min(hbm ? Math.min(l2Cap, v(T.hbmBytesPerCycle)) : l2Cap, distinctShare(activeSms) * activeSms);
  // Static per-SM share (every active SM reading at once): bulk stores and cp.async use it.
  const tmaBw = Math.min(smBw, srcCap / activeSms);
  // Receive side of a multicast copy, per destination SM (every destination takes the whole copy).
  // The shared limit is on the bytes multicast, not on the bytes received: a copy to d CTAs
  // delivers d times its bytes, so each destination's share grows with d (the parameter is the
  // per-SM rate with d = 2, where it was fitted; model.json: 4-CTA clusters on 132 SMs receive 87
  // B/cycle per SM where 2-CTA clusters receive 59).
  const mcastBw = (dests: number) => Math.min(v(T.tmaBytesPerCycleSm), (v(T.tmaMcastBytesPerCycleAllSms) * v(T.sms) * (dests / 2)) / activeSms);
  // Load-dependent latency: queueing delay q·ρ/(1−ρ) at the shared L2/HBM, ρ = activeSms × this SM's
  // recent read rate / the shared capacity, capped at tmaQueueMaxLoadPct.
  const qLat = hbm ? v(T.tmaQueueLatencyHbm) : v(T.tmaQueueLatency);
  const win = Math.max(1, v(T.tmaLoadWindow));
  const rhoMax = Math.min(0.99, v(T.tmaQueueMaxLoadPct) / 100);
  const baseLat = v(T.tmaLatency) + (hbm ? v(T.tmaHbmExtra) : 0);
  const tensorExtra = v(T.tmaTensorExtra);
  // Source locations of tensor-map copies (their latency differs by tmaTensorExtra).
  const tensorLocs = new Set<SrcLoc>();
  for (const r of program.roles) for (const ins of r.code) if (ins.i === 'op' && ins.op.op === 'cp.async.bulk' && ins.op.tensor) tensorLocs.add(ins.loc);
  const readFree = new Float64Array(program.ctas);
  // Per SM, exponentially weighted sums over its copies (weight win/(win+dt) per dt cycles):
  // elapsed cycles, read cycles (of the copies issued before) and bytes; their ratios are the read
  // duty u and the read rate.
  const loadTime = new Float64Array(program.ctas);
  const loadBusy = new Float64Array(program.ctas);
  const loadBytes = new Float64Array(program.ctas);
  const loadAt = new Float64Array(program.ctas);
  const lastDur = new Float64Array(program.ctas);
  // One lane name string per agent (not one per span).
  const laneNames = program.agents.map((_, i) => String(i));
  const laneOf = (a: number) => laneNames[a]!;

  // Each running agent has at most one entry in the queue, or is parked.
  const pushAgent = (a: number, t: number) => queue.push(t, a * 2);

  // The caller removes `a` from its parked list (parkedByBar or parkedOther).
  const unpark = (a: number, t: number) => {
    if (parkedOn[a] === -2) return;
    const since = parkedAt[a]!;
    const st = stats.stalls[a]!;
    const cause = parkCause[a]!;
    st[cause] = (st[cause] ?? 0) + (t - since);
    if (spans && t > since) spans.push({ lane: laneOf(a), t0: since, t1: t, kind: 'stall', label: cause });
    if (parkedOn[a]! >= 0) woken[a] = 1;
    parkedOn[a] = -2;
    pushAgent(a, t);
  };

  // The shared read of the last TMA copy scheduled (a multicast group reuses it): when it is done,
  // and its queueing delay.
  let shareStart = 0;
  let shareXfer = 0;
  /**
   * Schedules the completions of `o`, issued at `t`, on the queue (in time order per operation)
   * and records its span. `useShare`: a multicast copy reuses the read of the group's first copy.
   */
  const scheduleAsync = (o: AsyncOp, t: number, agentCta: number, useShare: boolean, mc: number): void => {
    const payload = o.id * 2 + 1;
    switch (o.kind) {
      case 'tma': {
        // Read once per copy (a multicast group shares its read), then received by each destination.
        if (!useShare) {
          const c = agentCta;
          const dt = t - loadAt[c]!;
          const w = win / (win + dt);
          const time = loadTime[c]! * w + dt;
          // the previous copy's read cycles pair with the cycles since its issue
          const busy = loadBusy[c]! * w + lastDur[c]!;
          const u = time > 0 ? busy / time : 0;
          const bw = Math.min(smBw, srcCap / Math.max(1, activeSms * u), distinctShare(activeSms * u));
          const rs = Math.max(t, readFree[c]!);
          const dur = Math.ceil(o.bytes / bw);
          const readDone = rs + dur;
          readFree[c] = readDone;
          const bytes = loadBytes[c]! * w + o.bytes;
          loadTime[c] = time;
          loadBusy[c] = busy;
          lastDur[c] = dur;
          loadBytes[c] = bytes;
          loadAt[c] = t;
          const rho = time > 0 ? Math.min(rhoMax, (bytes * activeSms) / (time * srcCap)) : 0;
          shareStart = readDone;
          shareXfer = Math.round(qLat * (rho / (1 - rho)));
        }
        const readDone = shareStart;
        const dst = o.cta;
        const start = Math.max(t, tmaFree[dst]!);
        const end = Math.max(start + Math.ceil(o.bytes / (mc > 0 ? mcastBw(mc) : v(T.tmaBytesPerCycleSm))), readDone);
        tmaFree[dst] = end;
        stats.tmaBusy[dst]! += end - start;
        const xfer = end - start;
        const lat = Math.round(jit(Math.max(0, baseLat + shareXfer + (tensorLocs.has(o.loc) ? tensorExtra : 0))));
        const c = Math.max(1, o.chunks);
        let x = 0;
        for (let j = 1; j <= c; j++) queue.push((x = start + Math.ceil((xfer * j) / c) + lat), payload);
        if (spans) spans.push({ lane: `TMA c${dst}`, t0: t, t1: x, kind: 'tma', label: `${o.bytes} B → ${program.bufferName(o.buf)}`, loc: o.loc, id: o.id });
        return;
      }
      case 'remote': {
        const x = t + jit(v(T.remoteSignal));
        if (spans) spans.push({ lane: `net c${o.cta}`, t0: t, t1: x, kind: 'signal', label: `${o.remote} → ${program.barrierName(o.bar)}`, loc: o.loc, id: o.id });
        queue.push(x, payload);
        return;
      }
      case 'tc.mma':
      case 'wgmma': {
        const last = o.kind === 'tc.mma' ? lastTc : lastWg;
        const rate = o.kind === 'tc.mma' ? v(T.tcgen05FlopsPerCycle) : v(T.wgmmaFlopsPerCycle);
        const start = Math.max(t + v(T.mmaStartLatency), tcFree[o.cta]!, last[o.agent]!);
        const dur = Math.ceil(o.bytes / rate);
        tcFree[o.cta] = start + dur;
        stats.tcBusy[o.cta]! += dur;
        const x = start + dur;
        last[o.agent] = Math.max(last[o.agent]!, x);
        if (spans) spans.push({ lane: `TC c${o.cta}`, t0: start, t1: start + dur, kind: 'mma', label: o.kind === 'tc.mma' ? 'tcgen05.mma' : 'wgmma', loc: o.loc, id: o.id });
        queue.push(x, payload);
        return;
      }
      case 'tc.commit': {
        const x = Math.max(t, tcFree[o.cta]!, lastTc[o.agent]!) + jit(v(T.commitLatency));
        lastTc[o.agent] = Math.max(lastTc[o.agent]!, x);
        queue.push(x, payload);
        return;
      }
      case 'bulk.store': {
        const start = Math.max(t, tmaFree[o.cta]!);
        const xfer = Math.ceil(o.bytes / tmaBw);
        tmaFree[o.cta] = start + xfer;
        stats.tmaBusy[o.cta]! += xfer;
        const x = start + xfer + jit(v(T.bulkStoreLatency));
        if (spans) spans.push({ lane: `TMA c${o.cta}`, t0: t, t1: x, kind: 'store', label: `store ${o.bytes} B ← ${program.bufferName(o.buf)}`, loc: o.loc, id: o.id });
        queue.push(x, payload);
        return;
      }
      case 'cp.async': {
        const x = t + jit(v(T.cpAsyncLatency)) + Math.ceil(o.bytes / tmaBw);
        lastCp[o.agent] = Math.max(lastCp[o.agent]!, x);
        queue.push(x, payload);
        return;
      }
      case 'cpa.arrive':
        queue.push(Math.max(t, lastCp[o.agent]!) + 10, payload);
        return;
      // tcgen05 data movement (estimates: no Blackwell GPU here). ld / st: the TMEM load latency;
      // cp (shared memory -> TMEM) and shift: in the issuer's tcgen05 order, at the TMA's per-SM rate.
      case 'tc.ld':
      case 'tc.st':
        queue.push(t + jit(v(T.tmemLoad)), payload);
        return;
      case 'tc.cp':
      case 'tc.shift': {
        const x = Math.max(t + v(T.mmaStartLatency), lastTc[o.agent]!) + (o.kind === 'tc.cp' ? Math.ceil(o.bytes / v(T.tmaBytesPerCycleSm)) : jit(v(T.commitLatency)));
        lastTc[o.agent] = Math.max(lastTc[o.agent]!, x);
        if (spans) spans.push({ lane: `TC c${o.cta}`, t0: t, t1: x, kind: 'mma', label: o.kind === 'tc.cp' ? 'tcgen05.cp' : 'tcgen05.shift', loc: o.loc, id: o.id });
        queue.push(x, payload);
        return;
      }
      case 'st.async': {
        // Registers to (peer) shared memory: the transfer at the receiving SM's rate, then the signal's latency.
        const x = t + Math.ceil(o.bytes / v(T.tmaBytesPerCycleSm)) + jit(v(T.remoteSignal));
        if (spans) spans.push({ lane: `net c${o.cta}`, t0: t, t1: x, kind: 'signal', label: `st.async ${o.bytes} B → ${program.bufferName(o.buf)}`, loc: o.loc, id: o.id });
        queue.push(x, payload);
        return;
      }
      case 'pick': {
        // A choose takes its lowest value first (a pick's delay grows with its value); a try_cancel
        // (bar >= 0) succeeds (issued first) after the response latency (machine/ops/values.ts, clc.ts).
        queue.push(t + (o.id - o.group) + (o.bar >= 0 ? v(T.clcLatency) : 0), payload);
        return;
      }
      case 'clc':
        queue.push(t + 1, payload);
        return;
      case 'dsmem': {
        // The issuing CTA's copy engine moves the bytes to the peer; its complete_tx then crosses the cluster.
        const src = agentCta;
        const start = Math.max(t, tmaFree[src]!);
        const xfer = Math.ceil(o.bytes / v(T.tmaBytesPerCycleSm));
        tmaFree[src] = start + xfer;
        stats.tmaBusy[src]! += xfer;
        const x = start + xfer + jit(v(T.remoteSignal));
        if (spans) spans.push({ lane: `TMA c${src}`, t0: t, t1: x, kind: 'tma', label: `${o.bytes} B → ${program.bufferName(o.buf)}`, loc: o.loc, id: o.id });
        queue.push(x, payload);
        return;
      }
    }
  };

  const onStep = opts.onStep;
  const handleOut = (t: number, agentCta: number) => {
    // Most steps produce nothing to schedule.
    const issued = out.issued;
    const phases = out.phases;
    if (!onStep && !events && issued.length === 0 && phases.length === 0 && out.diags.length === 0 && !(out.other && parkedOther.length)) return;
    if (onStep) onStep(s, out.events ?? []);
    if (events && out.events) for (const e of out.events) keep(e);
    for (const d of out.diags) diagnostics.push(d);
    // Asynchronous operations issued in this step.
    if (issued.length) {
      // A multicast copy: one instruction whose copies land in several CTAs (they share one read);
      // mc = its number of destinations (0: not multicast).
      let mc = 0;
      let tmaOps = 0;
      for (let i = 0; i < issued.length; i++) {
        const o = issued[i]!;
        if (o.kind !== 'tma') continue;
        tmaOps++;
        if (o.cta !== agentCta) mc = 1;
      }
      if (mc) mc = tmaOps;
      let shareLoc: SrcLoc | null = null; // source of the last TMA copy (its read is shareStart/shareXfer)
      for (let i = 0; i < issued.length; i++) {
        const o = issued[i]!;
        const isTma = o.kind === 'tma';
        scheduleAsync(o, t, agentCta, mc > 0 && isTma && shareLoc !== null && shareLoc === o.loc, mc);
        if (isTma) shareLoc = o.loc;
      }
    }
    // Wake waiters of completed phases (in the order they parked).
    for (let i = 0; i < phases.length; i++) {
      const list = parkedByBar[phases[i]!];
      if (!list || list.length === 0) continue;
      for (let j = 0; j < list.length; j++) {
        const a = list[j]!;
        const ins = m.nextOp(s, a);
        const wake = ins && ins.opc === 5 /* mbarrier.wait */ && (ins.op as { form: string }).form === 'test_wait' ? v(T.wakeTestWait) : v(T.wakeTryWait);
        unpark(a, t + jit(wake));
      }
      list.length = 0;
    }
    if (out.other && parkedOther.length) {
      for (let j = 0; j < parkedOther.length; j++) {
        const a = parkedOther[j]!;
        const ins = m.nextOp(s, a);
        const op = ins?.op.op;
        const wake = op === 'barrier.cluster.wait' ? v(T.clusterWake) : op === 'bar.sync' ? v(T.barWake) : v(T.issueWgmmaGroupOp);
        unpark(a, t + wake);
      }
      parkedOther.length = 0;
    }
  };

  // Each op code's cost function, looked up once by its module's timing key.
  const costFns = OPS.map((d) => {
    const fn = ISSUE_COST[d.timing];
    if (!fn) throw new Error(`timing: no issue cost for timing key '${d.timing}' (${d.op})`);
    return fn;
  });
  const costArgs: IssueArgs = { T, ins: null as unknown as OpInstr, mult: 0, frame: [] };
  /** Issue cost of `ins` for agent `a`: its module's timing key in {@link ISSUE_COST}. */
  const cost = (ins: OpInstr, a: number): number => {
    const info = program.agents[a]!;
    const mult = perThreads(ins.per, info);
    const fn = costFns[ins.opc]!;
    // One arguments record, reused (`work` is costed on every step).
    costArgs.ins = ins;
    costArgs.mult = mult;
    costArgs.frame = s.agents[a]!.frame;
    return fn(costArgs);
  };

  const park = (a: number, t: number, ins: OpInstr) => {
    parkedAt[a] = t;
    const op = ins.op;
    if (ins.opc === 5 /* mbarrier.wait */) {
      const key = ins.bar!(s.agents[a]!.frame);
      parkedOn[a] = key;
      parkCause[a] = waitCause[key] ??= `waiting on ${program.barrierOf(key).info.name}`;
      let list = parkedByBar[key];
      if (!list) parkedByBar[key] = list = [];
      list.push(a);
    } else {
      parkedOn[a] = -1;
      parkCause[a] = op.op === 'bar.sync' ? 'bar.sync' : op.op === 'barrier.cluster.wait' ? 'barrier.cluster.wait' : op.op;
      parkedOther.push(a);
    }
  };

  for (let a = 0; a < nA; a++) {
    if (s.agents[a]!.status === 'run') pushAgent(a, 0);
    else stats.finishedAt[a] = 0;
  }

  // Reused choice objects (the machine reads them, never keeps them).
  const agentChoice = { kind: 'agent' as const, agent: 0 };
  const asyncChoice = { kind: 'async' as const, id: 0 };
  // Issue cost of each instruction (by OpInstr.uid), computed once (`work` reads its operand at run
  // time); NaN: not yet computed.
  let nOps = 0;
  for (const r of program.roles) for (const ins of r.code) if (ins.i === 'op' && ins.uid >= nOps) nOps = ins.uid + 1;
  const costCache = new Float64Array(nOps).fill(NaN);
  const loopOverhead = v(T.loopOverhead);
  let steps = 0;
  let stopped: string | null = null;
  let stoppedBy: Bound | null = null;
  let now = 0;
  let end = 0; // latest end of any issued operation
  // Pops that applied no step (bounded by maxSteps too, so a run without progress ends).
  let idle = 0;
  const gov = new Governor({ ...(opts.maxMemory !== undefined ? { maxMemory: opts.maxMemory } : {}), ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}) }, { every: 1024 });
  gov.check(); // a bound already passed stops the run before its first step
  while (queue.size > 0) {
    if (steps >= maxSteps || idle >= IDLE_PER_STEP * maxSteps) {
      stoppedBy = 'max-steps';
      stopped = steps >= maxSteps
        ? `stopped after ${maxSteps.toLocaleString('en-US')} steps (a very long kernel, or a polling loop that never ends; raise the limit with --max-steps, or shrink the kernel's parameters with --set)`
        : `stopped after ${(IDLE_PER_STEP * maxSteps).toLocaleString('en-US')} wake-ups that made no progress (at cycle ${now}, after ${steps.toLocaleString('en-US')} steps): an asynchronous operation that never becomes enabled; raise --max-steps only if it does later`;
      break;
    }
    if (gov.tick() !== null) {
      stoppedBy = gov.stoppedBy;
      stopped = boundText(gov, steps, events, spans);
      break;
    }
    const payload = queue.pop();
    const t = queue.lastTime;
    if (!(t <= MAX_TIME)) throw new SimTimeError(`simulated time reached ${t} cycles (beyond 2^53, or not a number) after ${steps.toLocaleString('en-US')} steps: the timing parameters make the run too long to time exactly; use smaller latencies, or fewer iterations (--set)`);
    if (s.trapped) break;
    if ((payload & 1) === 0) {
      const a = payload >> 1;
      const ag = s.agents[a]!;
      if (ag.status !== 'run' || parkedOn[a] !== -2) {
        idle++;
        continue;
      }
      const ins = m.nextOp(s, a);
      if (!ins) {
        idle++;
        continue;
      }
      if (!m.agentEnabled(s, a)) {
        idle++;
        park(a, t, ins);
        continue;
      }
      // A wait that was blocked returns with the wake (its latency covers the passing test);
      // one that finds its phase already complete pays the full test.
      let c: number;
      const opc = ins.opc;
      if (woken[a] && opc === 5 /* mbarrier.wait */) c = loopOverhead;
      else if (opc === 27 /* work */) c = cost(ins, a);
      else {
        c = costCache[ins.uid]!;
        if (c !== c) costCache[ins.uid] = c = cost(ins, a); // NaN: first time
      }
      woken[a] = 0;
      now = t;
      agentChoice.agent = a;
      m.apply(s, agentChoice, out, t, true);
      steps++;
      stats.busy[a]! += c;
      if (t + c > end) end = t + c;
      if (spans && (c > 0 || opc !== 28 /* exit */)) spans.push({ lane: laneOf(a), t0: t, t1: t + c, kind: 'op', label: ins.text, loc: ins.loc });
      handleOut(t, program.agents[a]!.cta);
      if (ag.status === 'run') pushAgent(a, t + c);
      else stats.finishedAt[a] = t + c;
    } else {
      const id = payload >> 1;
      const o = m.findAsync(s, id);
      if (!o) {
        idle++;
        continue;
      }
      if (!m.asyncEnabled(s, o)) {
        idle++;
        queue.push(t + 1, payload);
        continue;
      }
      now = t;
      asyncChoice.id = id;
      m.apply(s, asyncChoice, out, t, true);
      steps++;
      handleOut(t, o.cta);
    }
  }

  // The last operation's end is never popped: past 2^53 its time is not exact either.
  const cycles = Math.max(now, end);
  if (!(cycles <= MAX_TIME)) throw new SimTimeError(`simulated time reached ${cycles} cycles (beyond 2^53, or not a number) after ${steps.toLocaleString('en-US')} steps: the timing parameters make the run too long to time exactly; use smaller latencies, or fewer iterations (--set)`);
  let verdict: SimVerdict = 'ok';
  let hang: HangReport | null = null;
  if (stopped) verdict = 'incomplete';
  else if (s.trapped) verdict = s.trapped.trap ? 'trap' : 'error';
  else if (s.agents.some((a) => a.status === 'run')) {
    verdict = 'hang';
    hang = explainHang(m, s);
  } else if (diagnostics.some((d) => d.diag.severity === 'error')) verdict = 'error';
  return {
    program, timing: T, verdict, cycles, steps, eventCount: s.events, events, spans, diagnostics, hang, stopped, stoppedBy, stats, final: s,
  };
}

/** The event kinds a ledger (src/report/ledger.ts) and its actor names read. */
export const LEDGER_EVENT_KINDS: ReadonlySet<EventKind> = new Set<EventKind>(['arrive', 'expect_tx', 'complete_tx', 'phase', 'wait', 'async', 'diag']);

/** Wake-ups without a step allowed per step of `maxSteps` (a completion waiting its turn is re-queued every cycle). */
export const IDLE_PER_STEP = 64;

/** Latest simulated time the simulator accepts (cycles): beyond it an increment of one cycle is lost. */
const MAX_TIME = Number.MAX_SAFE_INTEGER;

/** Thrown when simulated time leaves the exactly representable range (timing parameters too large for the run). */
export class SimTimeError extends Error {}

/** The `stopped` sentence of a run the governor stopped (memory or time). */
function boundText(gov: Governor, steps: number, events: readonly unknown[] | null, spans: readonly unknown[] | null): string {
  const held = `${(events?.length ?? 0).toLocaleString('en-US')} events and ${(spans?.length ?? 0).toLocaleString('en-US')} spans recorded`;
  const at = `after ${steps.toLocaleString('en-US')} steps`;
  if (gov.stoppedBy === 'max-memory') {
    return `stopped by --max-memory ${at}: the process holds ${(gov.peak / 1048576).toFixed(0)} MB (${held}); raise --max-memory MB, lower --max-steps, or shrink the kernel's parameters with --set`;
  }
  return `stopped by --timeout ${at} (${(gov.elapsed() / 1000).toFixed(1)} s; ${held}); raise --timeout SECONDS, lower --max-steps, or shrink the kernel's parameters with --set`;
}
