/**
 * When asynchronous operations complete: the timing model of the TMA engine (per-SM and shared
 * L2 / HBM bandwidth, multicast, load-dependent queueing latency; fitted to hw/results/, see
 * docs/HARDWARE.md "Timing model fit"), the tensor core's MMAs in issue order, commits, bulk
 * stores, cp.async, tcgen05 data movement, remote signals, DSMEM copies and picks. Each
 * completion is pushed on the simulator's queue with its payload; spans go to the timeline.
 */
import type { AsyncOp } from '../machine/machine.js';
import type { Program } from '../machine/program.js';
import type { SrcLoc } from '../kernel/ir.js';
import type { Queue } from './queue.js';
import type { SimStats, Span } from './result.js';
import type { Timing } from './timing.js';

/**
 * Schedules the completions of `o`, issued at cycle `t` by an agent of CTA `agentCta`, on the queue
 * (in time order per operation) and records its span. `useShare`: a multicast copy reuses the read
 * of the group's first copy; `mc`: the multicast group's number of destinations (0: not multicast).
 */
export type ScheduleAsync = (o: AsyncOp, t: number, agentCta: number, useShare: boolean, mc: number) => void;

/**
 * The completion scheduler of one run: its engines' state (when each CTA's TMA engine and tensor
 * core are free, each agent's in-order streams, each SM's recent read load) lives in the closure.
 * `activeSmsOpt`: SMs copying at the same time (SimOptions.activeSms); `jit`: the run's latency
 * jitter; a completion's payload is 2·id + 1.
 */
export function asyncScheduler(
  program: Program, T: Timing, activeSmsOpt: number | undefined, queue: Queue, spans: Span[] | null, stats: SimStats, jit: (x: number) => number,
): ScheduleAsync {
  const v = (p: { value: number }) => p.value;
  const nA = program.agents.length;
  const tmaFree = new Float64Array(program.ctas);
  const tcFree = new Float64Array(program.ctas);
  // Latest completion time of each agent's in-order streams (tcgen05, wgmma, cp.async).
  const lastTc = new Float64Array(nA);
  const lastWg = new Float64Array(nA);
  const lastCp = new Float64Array(nA);
  const activeSms = Math.max(1, activeSmsOpt ?? Math.min(v(T.sms), program.ctas));
  // TMA model (fitted to hw/results/pipeline.json and load.json, docs/HARDWARE.md "Timing model fit").
  // Read side, per issuing SM: the engine's own limit (from HBM also the per-SM HBM limit), and the
  // SM's share of the shared L2 (HBM) bandwidth. Every SM of the launch is assumed to behave like the
  // simulated one (mean field): of the `activeSms`, a fraction u (this SM's read duty: read cycles per
  // cycle, recent) is reading at any time, and those split the shared bandwidth. A stream that idles
  // between copies therefore reads at its own limit until the SMs' reads add up to the shared limit.
  const hbm = v(T.tmaSourceHbm) !== 0;
  const smBw = hbm ? Math.min(v(T.tmaBytesPerCycleSm), v(T.tmaHbmBytesPerCycleSm)) : v(T.tmaBytesPerCycleSm);
  // Every SM streaming its own addresses (tmaSourceL2Distinct) reaches less of L2 than SMs sharing
  // tiles. Of n SMs reading at once each gets A + B / n bytes per cycle (A =
  // tmaL2DistinctBytesPerCycleSm, B = tmaL2DistinctSharedBytesPerCycle): their reads add up to
  // A·n + B, a rate that falls per SM as SMs are added long before the L2 is saturated; and at most
  // tmaL2DistinctBytesPerCycle / n, the GPU-wide cap, reached at about 100 SMs.
  const distinct = v(T.tmaSourceL2Distinct) !== 0;
  const l2Cap = v(T.tmaBytesPerCycleAllSms) * v(T.sms);
  const distinctShare = (n: number) => {
    if (!distinct) return Infinity;
    const m = Math.max(1, n);
    return Math.min(v(T.tmaL2DistinctBytesPerCycleSm) + v(T.tmaL2DistinctSharedBytesPerCycle) / m, v(T.tmaL2DistinctBytesPerCycle) / m);
  };
  // The capacity the distinct (or HBM) bytes of a copy share; every byte also passes the shared L2
  // (l2Cap). A fraction of each copy's bytes (tmaSharedTilePct) reads tiles that every SM reads,
  // L2-hot: those count against the SM's own rate and l2Cap only.
  const distinctCap = Math.min(hbm ? v(T.hbmBytesPerCycle) : Infinity, distinctShare(activeSms) * activeSms);
  const srcCap = Math.min(l2Cap, distinctCap);
  const distinctFrac = distinct || hbm ? 1 - v(T.tmaSharedTilePct) / 100 : 1;
  // Bulk stores to fresh global tiles (bulkStoreHbm) also share HBM's write rate among the SMs storing.
  const hbmWriteCap = v(T.bulkStoreHbm) !== 0 ? (v(T.hbmBytesPerCycle) * v(T.hbmWriteBytesPct)) / 100 : Infinity;
  // The queue that delays copies under load is at the shared L2 (HBM): its load is measured against
  // what the whole GPU can read from it (every SM reading), not against the launch's share: a lone
  // SM at its own limit queues only behind its own copies (hw/results/plan.json chain: with 1 to 16
  // CTAs a copy's issue-to-full time is its transfer behind the SM's previous copy, and nothing more).
  const sms = v(T.sms);
  const queueCap = Math.min(l2Cap, hbm ? v(T.hbmBytesPerCycle) : Infinity, distinctShare(sms) * sms);
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
  const qLat = hbm ? v(T.tmaQueueLatencyHbm) : distinct ? v(T.tmaQueueLatencyL2Distinct) : v(T.tmaQueueLatency);
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

  // The shared read of the last TMA copy scheduled (a multicast group reuses it): when it is done,
  // and its queueing delay.
  let shareStart = 0;
  let shareXfer = 0;
  // The SM's channel to the shared L2 (HBM): `nbytes` moved through it from cycle t at the SM's
  // current share (its read duty among the active SMs); `store`: a bulk store (all its bytes
  // distinct, and at most HBM's write share with bulkStoreHbm). Sets shareStart (when the transfer
  // is done) and shareXfer (the queueing delay at the current load).
  const channel = (c: number, t: number, nbytes: number, store: boolean): void => {
    const dt = t - loadAt[c]!;
    const w = win / (win + dt);
    const time = loadTime[c]! * w + dt;
    // the previous transfer's cycles pair with the cycles since its issue
    const busy = loadBusy[c]! * w + lastDur[c]!;
    const u = time > 0 ? busy / time : 0;
    const n = Math.max(1, activeSms * u);
    // the SM's own rate and the shared L2 carry every byte; the distinct share (HBM) the distinct ones
    const allBw = Math.min(smBw, l2Cap / n);
    const shareBw = Math.min(distinctCap / n, distinctShare(activeSms * u), store ? hbmWriteCap / n : Infinity);
    const dbytes = store ? nbytes : nbytes * distinctFrac;
    const rs = Math.max(t, readFree[c]!);
    const dur = Math.ceil(Math.max(nbytes / allBw, dbytes / shareBw));
    const readDone = rs + dur;
    readFree[c] = readDone;
    const bytes = loadBytes[c]! * w + dbytes;
    loadTime[c] = time;
    loadBusy[c] = busy;
    lastDur[c] = dur;
    loadBytes[c] = bytes;
    loadAt[c] = t;
    const rho = time > 0 ? Math.min(rhoMax, (bytes * activeSms) / (time * queueCap)) : 0;
    shareStart = readDone;
    shareXfer = Math.round(qLat * (rho / (1 - rho)));
  };
  return (o: AsyncOp, t: number, agentCta: number, useShare: boolean, mc: number): void => {
    const payload = o.id * 2 + 1;
    switch (o.kind) {
      case 'tma': {
        // Read once per copy (a multicast group shares its read), then received by each destination.
        if (!useShare) channel(agentCta, t, o.bytes, false);
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
        // The store's bytes also go through the SM's channel to the shared L2, which its copies'
        // reads use (hw/results/plan_lean_epilogue.json: at 132 CTAs a 32 KiB store every 2
        // k-steps costs 1,155 cycles a k-step, at 1 CTA 67).
        const start = Math.max(t, tmaFree[o.cta]!);
        channel(o.cta, t, o.bytes, true);
        const xfer = Math.max(start + Math.ceil(o.bytes / tmaBw), shareStart) - start;
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
}
