/**
 * The timing model of the simulator, in SM cycles. Defaults are the H200 measurements of
 * docs/HARDWARE.md (SM clock 1980 MHz); each parameter names its source. Parameters
 * marked "estimate" have no measurement behind them yet (tcgen05: no Blackwell GPU here).
 *
 * Every parameter can be overridden from JSON (`--timing FILE.json`) with {@link mergeTiming}.
 * Each operation's issue cost over these parameters is in issue-cost.ts.
 */

import { shown, TimingError, timingValueError } from './timing-kinds.js';

export { CLOCK_MHZ, MAX_CYCLES, MAX_RATE, MIN_RATE, PARAM_KINDS, paramKind, TimingError, timingValueError, type ParamKind } from './timing-kinds.js';

/** A number with where it comes from. */
export interface Param {
  value: number;
  source: string;
}

/** All timing parameters (cycles unless the name says otherwise). */
export interface Timing {
  clockMHz: Param;
  /** Cycles an agent spends issuing each kind of operation before its next instruction. */
  issueArrive: Param;
  issueExpectTx: Param;
  issueCompleteTx: Param;
  issueInit: Param;
  issueInval: Param;
  /** A wait that finds its phase complete (the cost of the passing test). */
  waitPassTryWait: Param;
  waitPassTestWait: Param;
  /** From phase completion to a blocked waiter's wait returning true. */
  wakeTryWait: Param;
  /** The same when one thread of its warp polls (a producer lane: `per: 'one'`). */
  wakeTryWaitLane: Param;
  wakeTestWait: Param;
  /** A single `try_wait` returns false after this long if the phase does not complete. */
  tryWaitTimeout: Param;
  /**
   * Distinct-address L2 reads: the part of an SM's rate that the n reading SMs share, bytes per
   * cycle: each gets `tmaL2DistinctBytesPerCycleSm` + this / n (see `tmaL2DistinctBytesPerCycle`).
   */
  tmaL2DistinctSharedBytesPerCycle: Param;
  /** Distinct-address L2 reads: the part of an SM's rate it keeps however many SMs read, bytes per cycle. */
  tmaL2DistinctBytesPerCycleSm: Param;
  /** Extra latency of a signal into another CTA (remote arrive / expect_tx / complete_tx), one way. */
  remoteSignal: Param;
  issueBulkCopy: Param;
  issueTensorCopy: Param;
  /**
   * Issue cost of a copy (`cp.async.bulk`, plain or tensor) that directly follows another copy of
   * the same thread, with no other operation between them (the second box of a GEMM stage): the
   * first copy's issue includes the wait of the thread's next barrier operation for it
   * (`issueBulkCopy`), which a copy right behind it shares. `loopOverhead` is added as for every copy.
   */
  issueCopyFollowing: Param;
  /**
   * Extra issue cost of a `.multicast::cluster` bulk copy over the same copy to one CTA (cycles),
   * added to `issueBulkCopy` / `issueCopyFollowing`.
   */
  issueMulticastExtra: Param;
  /** Fixed latency of a bulk copy from L2 (issue to last byte credited, without the waiter's wake). */
  tmaLatency: Param;
  /** Latency of a tensor-map copy minus that of a plain bulk copy (signed: negative is faster). */
  tmaTensorExtra: Param;
  /** Extra latency when the source is in HBM rather than L2 (use with `tmaSourceHbm`). */
  tmaHbmExtra: Param;
  /** 1 to add `tmaHbmExtra` to every copy. */
  tmaSourceHbm: Param;
  /** Bytes per cycle one SM's TMA engine moves when it is alone. */
  tmaBytesPerCycleSm: Param;
  /** Bytes per cycle per SM when every SM of the GPU copies at once (shared L2 bandwidth). */
  tmaBytesPerCycleAllSms: Param;
  /** Bytes per cycle one SM reads from HBM when it is alone (HBM copies). */
  tmaHbmBytesPerCycleSm: Param;
  /** Bytes per cycle per SM a multicast copy is received at when every SM receives at once. */
  tmaMcastBytesPerCycleAllSms: Param;
  /** Load-dependent copy latency: q in q·ρ/(1−ρ), ρ the shared L2 (or HBM) utilization. */
  tmaQueueLatency: Param;
  tmaQueueLatencyHbm: Param;
  /** The q of copies reading distinct L2 addresses (`tmaSourceL2Distinct` without `tmaSourceHbm`), ρ against `tmaL2DistinctBytesPerCycle`. */
  tmaQueueLatencyL2Distinct: Param;
  /** ρ is capped at this percentage (beyond it the bandwidth shares, not the queue, set the time). */
  tmaQueueMaxLoadPct: Param;
  /** Averaging window (cycles) of an SM's copy read rate (for ρ) and read duty (for its share of the shared bandwidth). */
  tmaLoadWindow: Param;
  /** SMs of the GPU (for the shared-bandwidth model). */
  sms: Param;
  /** GPU-wide HBM bandwidth in bytes per cycle (copies from HBM share it across active SMs). */
  hbmBytesPerCycle: Param;
  /**
   * Distinct-address L2 reads (use with `tmaSourceL2Distinct`): the GPU-wide cap, bytes per cycle of
   * all SMs together. An SM reading while n − 1 others read gets min(`tmaL2DistinctBytesPerCycleSm`
   * + `tmaL2DistinctSharedBytesPerCycle` / n, this / n) bytes per cycle (and at most its own limit):
   * the n SMs' reads add up to A·n + B below the cap (the per-SM rate falls as SMs are added, long
   * before the L2 is saturated), then to the cap.
   */
  tmaL2DistinctBytesPerCycle: Param;
  /** 1: the SMs' copies read distinct L2-resident addresses (no tile shared between SMs). */
  tmaSourceL2Distinct: Param;
  /**
   * Percentage of `hbmBytesPerCycle` that copies whose rows are 128 bytes far apart in memory (a
   * tensor box of 64 bf16 columns from a wide matrix) read HBM at, against contiguous copies. Like
   * `intDivMod`, applied by a kernel description (which knows its tensor maps), not by the
   * simulator, whose copies have a size but no layout.
   */
  tmaHbmStridedRowsPct: Param;
  /**
   * Percentage of every copy's bytes that read tiles all SMs read (L2-hot: a GEMM's B box shared
   * by every CTA) in a run whose copies otherwise read distinct addresses or HBM: those bytes pass
   * the SM's own rate and the shared L2, not the distinct-address share nor HBM (mean field over
   * the run's copies). Set by a kernel description, like `tmaHbmStridedRowsPct`.
   */
  tmaSharedTilePct: Param;
  /** 1: bulk stores write fresh global tiles, which reach HBM (their bytes share `hbmWriteBytesPct`). */
  bulkStoreHbm: Param;
  /** HBM's rate for bulk stores to fresh tiles, shared by the storing SMs: percentage of `hbmBytesPerCycle`. */
  hbmWriteBytesPct: Param;
  issueBulkStore: Param;
  bulkStoreLatency: Param;
  issueMma: Param;
  /** Dense bf16 FLOP per cycle per SM for tcgen05.mma (Blackwell). */
  tcgen05FlopsPerCycle: Param;
  /** Dense bf16 FLOP per cycle per SM for wgmma (Hopper). */
  wgmmaFlopsPerCycle: Param;
  /** From an MMA's issue to the tensor core starting it. */
  mmaStartLatency: Param;
  /** From the last tracked MMA completing to the tcgen05.commit arrive landing. */
  commitLatency: Param;
  issueCommit: Param;
  issueWgmmaGroupOp: Param;
  issueCpAsync: Param;
  cpAsyncLatency: Param;
  barSync: Param;
  barWake: Param;
  clusterArrive: Param;
  clusterWake: Param;
  fenceProxyAsync: Param;
  fenceMbarrierInit: Param;
  /** `fence.{acq_rel,sc,acquire,release}.cta` (memory-model fences, not proxy fences). */
  fenceCta: Param;
  /** The same fences at `.cluster` or `.gpu` scope (one MEMBAR.*.GPU on sm_90a). */
  fenceCluster: Param;
  /** `fence.sc.sys` / `fence.acq_rel.sys` / `membar.sys`. */
  fenceSys: Param;
  /** `barrier.cluster.arrive.relaxed`: the arrive without the release fence the compiler puts before a release arrive. */
  clusterArriveRelaxed: Param;
  ldShared: Param;
  stShared: Param;
  tmemLoad: Param;
  /** A global load, store or atomic to L2 and back (values.ts operations). */
  globalAccess: Param;
  /** From a try_cancel's issue to its response landing in shared memory. */
  clcLatency: Param;
  /** Local bookkeeping between synchronization operations (loop counters, address math). */
  loopOverhead: Param;
  /**
   * A 32-bit integer division or modulo by a run-time divisor in one thread's dependent chain (the
   * I2F.RP, MUFU.RCP, F2I and IMAD.HI sequence). No operation is charged it: a kernel's own code is
   * `work` in a sketch, and a description of a kernel adds this per run-time `/` or `%` its loop executes.
   */
  intDivMod: Param;
  /**
   * Extra cycles of a producer's loop per copy whose source no other CTA reads (distinct L2
   * addresses or HBM) over a copy of a tile every CTA reads. Like `intDivMod`, charged by a kernel
   * description as `work`, not by the simulator (a copy's source is not part of the kernel IR).
   */
  issueCopyDistinct: Param;
  /**
   * Cycles a producer lane's loop iteration grows by per warp of its CTA that follows the stages
   * (waits on each stage, arrives): the warps share the SM's four warp schedulers and its barrier
   * traffic. Like `intDivMod`, charged by a kernel description as `work`, not by the simulator.
   */
  producerPerFollowingWarp: Param;
  /**
   * Bytes a warp writes to shared memory per cycle in a loop of conflict-free `st.shared.v4` (a
   * warp-wide 512-byte store every 32 cycles); the SM's stores together stay under its 32 banks of 4
   * bytes a cycle. Like `intDivMod`, charged by a kernel description (its epilogue's store time), not
   * by the simulator, whose `write` has no size.
   */
  stSharedBytesPerCycleWarp: Param;
  /**
   * Cycles a producer lane's loop iteration grows by per consumer warp of its CTA that runs wgmma,
   * beyond `producerPerFollowingWarp`. Like `intDivMod`, charged by a kernel description as `work`.
   */
  producerPerWgmmaWarp: Param;
  /**
   * What `producerPerWgmmaWarp` is instead for a producer lane whose loop runs a run-time integer
   * division (a `%` or `/` by a kernel parameter: the I2F / MUFU.RCP / F2I sequence): cycles an
   * iteration per consumer warp of its CTA that runs wgmma. Charged by a kernel description as `work`.
   */
  producerPerWgmmaWarpDivision: Param;
  /** Relative jitter (e.g. 0.05 = ±5%) applied to asynchronous latencies when a seed is given. */
  jitter: Param;
}

/** The earlier H200 measurements of docs/HARDWARE.md ("What was measured, on what"): mbarrier operations, clusters, tensor maps. */
const F = 'docs/HARDWARE.md, earlier H200 measurements (mbarrier operations)';
const FC = 'docs/HARDWARE.md, earlier H200 measurements (clusters)';
const FT = 'docs/HARDWARE.md, earlier H200 measurements (tensor maps)';

/** The H200 defaults. */
export const H200: Timing = {
  clockMHz: { value: 1980, source: `${F}: SM clock measured against %globaltimer` },
  issueArrive: { value: 6, source: 'hw/results/ops.json (hw/probes/ops.cu): mbarrier.arrive issued in a loop, 5.98 cycles per iteration (lane 0; 6.37 with 32 lanes); nothing waits on its result' },
  issueExpectTx: { value: 18, source: `${F} §3: expect_tx back-to-back issue 17.9 cycles/op` },
  issueCompleteTx: { value: 7, source: `${FC} Costs: complete_tx issue 6-7 cycles` },
  issueInit: { value: 82, source: `${F} §3: mbarrier.init back-to-back 82.2 cycles/op` },
  issueInval: { value: 82, source: 'estimate: as init (SYNCS.CCTL.IV)' },
  waitPassTryWait: { value: 37, source: `${F} / docs/HARDWARE.md Latency: try_wait.parity on a complete phase in a dependent chain, net 37 (hw/results/latency.json); hw/results/ops.json: 17 per passing try_wait issued back to back in a loop` },
  waitPassTestWait: { value: 102, source: `fit (npm run calibrate; docs/HARDWARE.md "Timing model fit") to the H200 measurements in hw/results/pipeline.json` },
  wakeTryWait: { value: 150, source: 'hw/results/model.json wake: a try_wait polled by all 32 lanes returns 167 cycles after the completing arrive (clock64 before the arrive to clock64 after the pass), for any wait of 200-24,000 cycles, retries after the time limit included; minus the clock64 + st.shared of the probe (16, hw/results/ops.json)' },
  wakeTryWaitLane: { value: 61, source: 'hw/results/pipeline.json traced runs (hw/probes/pipeline.cu, H200): from the consumer\'s clock64 after its arrive on empty[s] to the producer lane\'s clock64 after its try_wait on empty[s] passes, 55 cycles in every traced row (1 CTA; S = 1, 2, 4; W = 0 and 500; every consumer wait mode); in the model the first clock comes issueArrive + loopOverhead after the arrive, the second loopOverhead after the wake: 55 + issueArrive = 61. A lone polling thread (the other lanes of its warp gone) is woken far sooner than a warp whose 32 lanes poll (wakeTryWait)' },
  wakeTestWait: { value: 268, source: `fit (npm run calibrate; docs/HARDWARE.md "Timing model fit") to the H200 measurements in hw/results/pipeline.json` },
  tryWaitTimeout: { value: 7833, source: `${F} §3/P2: incomplete try_wait returns false after 7833 cycles` },
  tmaL2DistinctSharedBytesPerCycle: { value: 436, source: 'fitted from pipeline data, not a micro-probe: with tmaL2DistinctBytesPerCycleSm and tmaL2DistinctBytesPerCycle on the train rows of hw/results/model.json (see tmaL2DistinctBytesPerCycle)' },
  tmaL2DistinctBytesPerCycleSm: { value: 46, source: 'fitted from pipeline data, not a micro-probe: with tmaL2DistinctSharedBytesPerCycle and tmaL2DistinctBytesPerCycle on the train rows of hw/results/model.json (see tmaL2DistinctBytesPerCycle)' },
  remoteSignal: { value: 90, source: 'earlier H200 cluster measurements (docs/HARDWARE.md "What was measured, on what"): try_wait ping-pong round trips of 381 cycles with local arrives and 563 with remote arrives (default semantics) in a 2-CTA cluster: (563 - 381) / 2 = 91 one way' },
  issueBulkCopy: { value: 141, source: 'hw/results/ops.json (hw/probes/ops.cu producer_bulk4k): a producer loop of a passing try_wait (37 + loopOverhead), arrive.expect_tx (issueArrive + loopOverhead) and one bulk copy takes 247 cycles an iteration; the rest (247 - (37 + 21) - (6 + 21) - 21, loopOverhead 21) is the copy issue, including the wait of the thread\'s next barrier operation for the copy to be accepted (a copy costs 109 more than a complete_tx in the same loop)' },
  issueTensorCopy: { value: 134, source: 'hw/results/ops.json (hw/probes/ops.cu producer_tensor16k): the same producer loop with one 16 KiB tensor-map box takes 240 cycles an iteration (240 - 58 - 27 - 21). A second box in the same iteration costs 103 more (producer_2tensor16k 343), but that figure is the per-SM copy rate, not the issue: two 16 KiB boxes an iteration move 32 KiB, 32768 / 343 = 95.5 B/cycle (tmaBytesPerCycleSm); a second copy issued right behind the first costs issueCopyFollowing' },
  issueCopyFollowing: { value: 27, source: 'hw/results/ops.json (hw/probes/ops.cu, H200): the producer loop with two 4 KiB bulk copies an iteration takes 294 cycles against 247 with one (8 KiB an iteration, far under the per-SM rate): a copy right behind another costs 47, of which loopOverhead 20. Checked by hw/results/glue.json (hw/probes/glue.cu ablate, H200): two 16 KiB tensor boxes cost 42-45 cycles an iteration more than one 16 KiB bulk copy in every configuration (L2 and HBM, 1 and 132 CTAs, flags 0, 2 and 31: 601.2 against 559.3, 757.8 / 715.9, 881.8 / 838.8, 609.6 / 565.0, 736.7 / 695.2), i.e. 49-52 for the second box with the first 7 cheaper than a bulk copy (issueTensorCopy against issueBulkCopy)' },
  issueMulticastExtra: { value: 10, source: 'read off pipeline data (no fit): hw/results/pipeline.json (hw/probes/pipeline.cu, H200), the producer-bound loops at S = 4 with 16 KiB tiles: a 2-CTA cluster whose producers each multicast half of the tile with a compile-time mask and slice takes 468.5 cycles an iteration (2 CTAs) and 467.5 (132 CTAs) against 458.4 and 458.5 for one plain bulk copy of the whole tile' },
  tmaLatency: { value: 132, source: `fit (npm run calibrate) to the H200 measurements in hw/results/pipeline.json, with the producer lane woken at wakeTryWaitLane; agrees with the latency probes: ${F} §3 / docs/HARDWARE.md Latency, a 1 KiB L2 copy seen complete 386 cycles after its arrive.expect_tx began, of which the two issue instructions take 81 and the waiter's wake about 150 (wakeTryWait): about 155 of copy latency; hw/results/plan.json chain (H100, S = 1): issue to pass 382.5 cycles for 1 KiB` },
  tmaTensorExtra: { value: 15, source: `${FT}: a tensor box costs about 15 cycles more than a plain bulk copy (issue to observed completion, same bytes)` },
  tmaHbmExtra: { value: 649, source: `fit (npm run calibrate) to hw/results/pipeline.json; hw/results/plan.json chain (H100, S = 1): a copy from HBM takes 440-630 cycles longer than from L2 (1-64 KiB)` },
  tmaSourceHbm: { value: 0, source: 'choice: 0 = L2-hot source (default), 1 = from HBM' },
  tmaBytesPerCycleSm: { value: 96, source: 'hw/results/plan.json (hw/probes/plan.cu chain, H100 80GB HBM3, whose 1-CTA rows of lean.json agree with the H200 within 0.4%): one SM streaming 64 KiB copies at S = 2 and 3 from L2 reads 95.4-95.5 B/cycle (1, 8 and 16 CTAs), and one copy alone takes 105 + bytes / 97.6 cycles more than an issue-bound loop (S = 1, 1-64 KiB, linear); the H200 pipeline.json row S=3 64 KiB 1 CTA from L2 gives 97 (65536 / 676.5)' },
  tmaBytesPerCycleAllSms: { value: 83, source: `fit (npm run calibrate; docs/HARDWARE.md "Timing model fit") to the H200 measurements in hw/results/pipeline.json` },
  tmaHbmBytesPerCycleSm: { value: 108, source: 'hw/results/pipeline.json (H200): one CTA streaming 64 KiB tiles from HBM at S = 3 reads 108 B/cycle (65536 / 605.9 cycles), faster than from L2; hw/results/plan.json (H100) chain at S = 3: 89.9, a lower bound (three copies in flight do not cover the HBM latency). The per-SM receive limit tmaBytesPerCycleSm binds first' },
  tmaMcastBytesPerCycleAllSms: { value: 60, source: 'fit (npm run calibrate; docs/HARDWARE.md "Timing model fit") to the H200 measurements in hw/results/pipeline.json' },
  tmaQueueLatency: { value: 65, source: 'fit (npm run calibrate) to hw/results/pipeline.json, with the producer lane woken at wakeTryWaitLane' },
  tmaQueueLatencyL2Distinct: { value: 1, source: 'fitted from pipeline data, not a micro-probe: with the distinct-address L2 share on the train rows of hw/results/model.json (see tmaL2DistinctBytesPerCycle)' },
  tmaQueueLatencyHbm: { value: 135, source: 'fit (npm run calibrate) to hw/results/pipeline.json, with the producer lane woken at wakeTryWaitLane' },
  tmaQueueMaxLoadPct: { value: 89, source: 'fit (npm run calibrate; docs/HARDWARE.md "Timing model fit") to the H200 measurements in hw/results/pipeline.json' },
  tmaLoadWindow: { value: 4000, source: 'choice: read rate averaged over about 4,000 cycles (2 µs)' },
  sms: { value: 132, source: `${F}: H200 has 132 SMs` },
  hbmBytesPerCycle: { value: 2420, source: 'fit (npm run calibrate; docs/HARDWARE.md "Timing model fit") to the H200 measurements in hw/results/pipeline.json' },
  tmaL2DistinctBytesPerCycle: { value: 4625, source: 'fitted from pipeline data, not a micro-probe: with tmaL2DistinctBytesPerCycleSm (46), tmaL2DistinctSharedBytesPerCycle (436) and tmaQueueLatencyL2Distinct (1) on the train rows of hw/results/model.json that read distinct addresses (l2_distinct and hbm: the split of docs/HARDWARE.md "Held-out validation"; npm run heldout -- --fit-l2, fitL2Distinct). The per-SM rate of n SMs reading distinct addresses is min(96, 46 + 436 / n, 4625 / n): 96 at 1-8 SMs (lean.json and model.json stream 64 KiB S=3: 98 at 8 CTAs, 91-98 at 1), 73 at 16 (measured 70-73), 59 at 33 (57-58), 53 at 66 (46-52), 47 at 99 (42-50), 35 at 132 (34-36): the SMs\' reads add up to 46 n + 436 B/cycle until the GPU-wide 4625 (reached at about 99 SMs; 35 B/cycle per SM at 132, measured 34.3-35.1 with 64 KiB tiles). The former form 8500 / (n - 1 + 92) could not keep the per-SM limit to 8 SMs and fall to 57 at 33 (lean.json 8 CTAs S=3 +14.6%, 33 CTAs -17.5%). Its load-dependent latency fitted to about nothing (tmaQueueLatencyL2Distinct): the share carries the load' },
  tmaHbmStridedRowsPct: { value: 93, source: 'fitted from pipeline data, not a micro-probe: the train rows of hw/results/model.json (the split of docs/HARDWARE.md "Held-out validation") at 132 CTAs from HBM, 16 KiB of HBM a CTA an iteration: the two-box mainloop_tma (A box 128 rows of 128 B, 40 KiB apart: model.cu make_tmap_2d) at S = 4 runs at 1003.3 cycles, the bulk stream of 16 KiB tiles at S = 4 at 931.4: 931.4 / 1003.3 = 92.8%. The layout, not the tensor path: hw/results/pipeline.json (hw/probes/pipeline.cu, whose box is a contiguous 16 KiB, rows 256 B with a 256 B pitch) at 132 CTAs, S = 4, from HBM: a tensor box 906.8 cycles, a bulk copy 918.3. Checked on lean.json (held out; the same tensor maps): mainloop_tma 132 CTAs S = 4 / 6 992.2 / 967.4 against the 16 KiB bulk stream at S = 4 / 8 893.3 / 886.6 (90-92%)' },
  tmaSourceL2Distinct: { value: 0, source: 'choice: 0 = SMs share L2 tiles (default), 1 = every SM reads its own addresses' },
  tmaSharedTilePct: { value: 0, source: 'choice: 0 = no copy bytes read tiles every SM reads (default); a kernel description sets the share of its shared boxes (the tensor mainloops of model.cu and lean.cu: 50, the B box of two equal boxes)' },
  bulkStoreHbm: { value: 0, source: 'choice: 0 = bulk stores stay in L2 (default), 1 = they write fresh tiles, which reach HBM' },
  hbmWriteBytesPct: { value: 70, source: 'hw/results/plan3_h100.json epi (hw/probes/plan3.cu, H100; a ratio of two GPU-wide rates taken as the form for the H200, not a rate): the persistent TMA loop at 132 CTAs, KT = 2, storing 16, 32 and 64 KiB epilogues to fresh HBM tiles runs at 1,264, 2,205 and 4,088 cycles an iteration: each further 16 KiB a tile costs 1,882-1,883 cycles a tile (2 k-steps), 132 x 16,384 / 1,883 = 1,148 B/cycle of stores for the GPU, 70% of the H100 HBM read rate (1,650 B/cycle, docs/HARDWARE.md "H100 figures and the H200")' },
  issueBulkStore: { value: 98, source: 'hw/results/plan2_h100.json epi (hw/probes/plan2.cu, H100; one SM, so it stands for the H200): the thread that issues the persistent loop\'s 32 KiB epilogue store takes 332 cycles from the second bar.sync to after cp.async.bulk.commit_group (TMA only; 1,179 - 132 - 699 = 348 under one warpgroup of wgmma), 84 without the store (epilogue of 0 bytes; 112 with wgmma), of which the store address\'s run-time division ITERS / KT is intDivMod (150; SASS in hw/results/sass/plan2_sass.txt.gz): 332 - 84 - 150 = 98 (wgmma: 86)' },
  bulkStoreLatency: { value: 840, source: 'hw/results/ops.json (hw/probes/ops.cu epilogue): a 32 KiB bulk store shared -> global and its wait_group (read or done) take 1162 cycles; minus 32 KiB at tmaBytesPerCycleSm (321)' },
  issueMma: { value: 16, source: 'fit (npm run calibrate; docs/HARDWARE.md "Timing model fit") to the H200 measurements in hw/results/pipeline.json' },
  tcgen05FlopsPerCycle: { value: 8192, source: 'estimate: B200 dense bf16 (2.25 PFLOP/s, 148 SMs, 1.85 GHz); no Blackwell here' },
  wgmmaFlopsPerCycle: { value: 4096, source: 'hw/results/pipeline.json: four more wgmma.m64n128k16 per stage cost 256 SM cycles (64 each)' },
  mmaStartLatency: { value: 42, source: 'fit (npm run calibrate; docs/HARDWARE.md "Timing model fit") to the H200 measurements in hw/results/pipeline.json (its wgmma rows); not a micro-probe figure' },
  commitLatency: { value: 40, source: 'estimate' },
  issueCommit: { value: 10, source: 'estimate' },
  issueWgmmaGroupOp: { value: 8, source: 'estimate' },
  issueCpAsync: { value: 8, source: 'estimate' },
  cpAsyncLatency: { value: 300, source: 'estimate: as a bulk load of L2 data' },
  barSync: { value: 20, source: 'hw/results/ops.json (hw/probes/ops.cu epilogue): bar.sync of 128 threads in a loop, 20.0 cycles' },
  barWake: { value: 20, source: 'estimate' },
  clusterArrive: { value: 300, source: `${FC}: 270-318 cycles, the compiler puts MEMBAR.ALL.GPU before barrier.cluster.arrive` },
  clusterWake: { value: 180, source: `${FC}: remote signal one way about 270 minus the arrive` },
  fenceProxyAsync: { value: 30, source: 'hw/results/ops.json (hw/probes/ops.cu epilogue): fence.proxy.async + bar.sync 50 cycles, minus bar.sync 20' },
  fenceMbarrierInit: { value: 300, source: `estimate: a .release.cluster fence (MEMBAR.ALL.GPU, ${FC})` },
  fenceCta: { value: 11, source: 'hw/results/fences.json (hw/probes/fences.cu): fence.acq_rel.cta 10.6 and fence.sc.cta 9.6 cycles in a loop (MEMBAR.ALL.CTA / MEMBAR.SC.CTA); after a st.shared 16.6 − 5.0' },
  fenceCluster: { value: 266, source: 'hw/results/fences.json: fence.{acq_rel,sc}.{cluster,gpu} 266.3-266.8 cycles in a loop (MEMBAR.ALL.GPU / MEMBAR.SC.GPU on sm_90a)' },
  fenceSys: { value: 1018, source: 'hw/results/fences.json: fence.sc.sys 1018 cycles in a loop (MEMBAR.SC.SYS)' },
  clusterArriveRelaxed: { value: 36, source: 'hw/results/fences.json: a barrier.cluster.arrive.relaxed + wait round costs 58 cycles, the release arrive 322 (its MEMBAR.ALL.GPU, as fence.acq_rel.cluster + relaxed arrive: 327): clusterArrive minus 264' },
  ldShared: { value: 21, source: `${F} §3: ld.shared.b64 net 21` },
  stShared: { value: 21, source: 'estimate: as ld.shared' },
  tmemLoad: { value: 30, source: 'estimate' },
  globalAccess: { value: 600, source: 'estimate: an L2 round trip of a global load or atomic (a TMA copy of L2 data, issue to landing, is of that order: tmaLatency + wake); not measured' },
  clcLatency: { value: 800, source: 'estimate: no Blackwell GPU here (clusterlaunchcontrol.try_cancel is sm_100+)' },
  loopOverhead: { value: 20, source: `fit (npm run calibrate; docs/HARDWARE.md "Timing model fit") to the H200 measurements in hw/results/pipeline.json` },
  intDivMod: { value: 150, source: 'hw/results/glue.json (hw/probes/glue.cu ablate, flag 2): the minimal producer loop with its source index computed at run time as `it % nt` costs 157 cycles an iteration more than with `it & 7` (559 -> 716 with a bulk copy, 601 -> 758 with two tensor boxes; the same at 1 and 132 CTAs), and 7 more from HBM, where that index has no `%` (565 -> 572): the modulo by a run-time divisor is 157 - 7 = 150. SASS: one I2F.RP / MUFU.RCP / F2I / IMAD.HI sequence per `%` (hw/results/sass/lean_sass.txt.gz, model_sass.txt.gz). Checked in other code by hw/results/plan.json (hw/probes/plan.cu divide, H100): a signed run-time `%` in a producer\'s source index costs 117 cycles an iteration, an unsigned one 98, a `%` and a `/` of the same iteration (independent) 164 together: the cost depends on the code around it (98-157)' },
  issueCopyDistinct: { value: 26, source: 'fitted from pipeline data, not a micro-probe: the gpipe kernel\'s glue (docs/HARDWARE.md "Held-out validation") fitted on the train rows of hw/results/model.json (npm run heldout -- --fit, with intDivMod charged) gives +24 cycles an iteration for copies from HBM and +28 for distinct L2 addresses over shared L2 tiles; their mean. hw/results/glue.json does not show it (fresh HBM tiles +6 over 8 L2 tiles): cause not established. hw/results/plan.json (hw/probes/plan.cu source, H100): the copy itself costs the same from every source (a producer loop of 477.0 cycles from 8 shared L2 tiles, the CTA\'s own tiles, 1,024 tiles and fresh HBM tiles, 477.1), so this is the kernels\' own distinct-source code, not the copy\'s; refitted with the rates and the queue of the probe-plan revision the gpipe glue gave -72 (HBM) and +60 (distinct L2), with the producer lane\'s wake and the following warps -112 and +20: kept at 26, unexplained' },
  producerPerFollowingWarp: { value: 2.7, source: 'hw/results/plan.json sched (hw/probes/plan.cu, H100; one SM, so it stands for the H200): the chain producer (16 KiB copies, S = 4) runs at 299.9 cycles an iteration alone, 310.7 / 321.8 / 341.5 with warps 1-4 / 1-8 / 1-15 following its stages (all lanes wait on each stage, __syncwarp, lane 0 arrives): 2.70, 2.74, 2.77 cycles per warp. The same in the H200 pipelines: lean.json consumers 617 -> 627-635 -> 641-659 cycles with 1, 4 and 8 consumer warps, model.json 674 -> 682-686 -> 702-708' },
  stSharedBytesPerCycleWarp: { value: 16, source: 'hw/results/plan2_h100.json epi (hw/probes/plan2.cu, H100; one SM, so it stands for the H200): the 32 KiB conflict-free st.shared.v4 epilogue of the persistent TMA loop, stored by 1, 2 or 4 warps with the copies paused, takes 2053, 1090 and 573 cycles between its two bar.syncs, 65 of them the fence and bar.sync alone (no stores): 32768 / (2053 - 65) = 16.5, / (1090 - 65) = 32.0, / (573 - 65) = 64.5 B/cycle, 16 a warp (one 512-byte store every 32 cycles); with the copies landing meanwhile 2083, 1091, 589 (the TMA writes slow the stores by 0-3%), with the producer on another warp scheduler 2053. Under one warpgroup of wgmma the same stores take 2463 (1 warp) and 695 (4 warps): 13.7 a warp' },
  producerPerWgmmaWarp: { value: 2.5, source: 'hw/results/plan3_busy_h100.json wg (hw/probes/plan3.cu, H100; one SM, so it stands for the H200): the producer lane\'s own work an iteration (clock64 from its wait on empty[s] passing to its two tensor boxes issued; copies from HBM, no run-time division in its loop) is 277-289 cycles beside 8 warps that only follow the stages and 320-336 beside two warpgroups of wgmma (+40 for 8 warps: 5.0 a warp), 271-274 beside 4 following warps and 270-275 beside one warpgroup (0 a warp); 2.5 the mean. The copies\' source, the operands\' source (a fixed buffer or the stage just landed) and the producer\'s warp scheduler (warp 0 or 1) change it by under 20 cycles' },
  producerPerWgmmaWarpDivision: { value: 14, source: 'hw/results/plan3_busy_h100.json wg (hw/probes/plan3.cu, H100; one SM, so it stands for the H200): with copies from L2 the producer\'s loop computes its box coordinate with a run-time `%` (the kernels\' `it % nt`); its own work an iteration is 443-446 cycles beside 8 or 4 following warps and 547-566 beside two warpgroups of wgmma (+110 for 8 warps: 13.8 a warp), 494 beside one warpgroup (+56 for 4 warps: 14.0 a warp), at 1 and 132 CTAs and S = 3, 4, 6. A kernel description charges it per run-time division of the producer\'s loop (docs/HARDWARE.md "Held-out validation": the wgmma warps slow each run-time division of the producer\'s loop): the two-box L2 loops of hw/probes/model.cu and lean.cu run two `%`, and their producers slow by about twice as much, 29 cycles a wgmma warp beyond producerPerFollowingWarp (model.json train rows, 1 CTA: 1,165-1,169 cycles an iteration beside two warpgroups against 910 TMA only; lean.json: 855 alone, 1,067-1,112 beside two warpgroups: 24-29)' },
  jitter: { value: 0.05, source: 'choice: ±5% on asynchronous latencies with --seed' },
};

/**
 * Checks every parameter of `t` against its kind ({@link PARAM_KINDS}); throws a
 * {@link TimingError} naming the first bad one. {@link mergeTiming} and `simulate` call it, so a
 * timing that would make simulated time infinite (a zero rate) or meaningless never runs.
 */
export function validateTiming(t: Timing): void {
  if (typeof t !== 'object' || t === null || Array.isArray(t)) throw new TimingError(`a timing must be an object of parameters (H200's, each with its source: docs/HARDWARE.md, "Timing parameters and their sources"), got ${shown(t)}`);
  // A timing gives every parameter: a partial one would read undefined deep inside the run.
  const missing = Object.keys(H200).filter((k) => !Object.hasOwn(t, k));
  if (missing.length) throw new TimingError(`the timing lacks ${missing.length} of its ${Object.keys(H200).length} parameters (${missing.slice(0, 3).join(', ')}${missing.length > 3 ? ', …' : ''}): give them all, e.g. mergeTiming(H200, { tmaLatency: 300 })`);
  for (const [k, p] of Object.entries(t as unknown as Record<string, Param>)) {
    const why = timingValueError(k, p?.value);
    if (why) throw new TimingError(why);
  }
}

/**
 * `base` with `overrides` applied: `{ "name": number }` or `{ "name": { "value": number } }`.
 * Unknown names (own parameters of `base` only: `toString` is none) and values outside the
 * parameter's kind throw {@link TimingError}.
 */
export function mergeTiming(base: Timing, overrides: unknown): Timing {
  if (typeof overrides !== 'object' || overrides === null || Array.isArray(overrides)) {
    throw new TimingError('a timing file must hold a JSON object of parameter names to numbers');
  }
  const out = { ...base } as Record<string, Param>;
  for (const [k, v] of Object.entries(overrides as Record<string, unknown>)) {
    if (!Object.hasOwn(base, k)) {
      const near = Object.keys(base).filter((n) => n.toLowerCase().includes(k.toLowerCase().slice(0, 5))).slice(0, 3);
      throw new TimingError(`unknown timing parameter '${k}'${near.length ? ` (did you mean ${near.join(', ')}?)` : ''}`);
    }
    if (typeof v === 'object' && v !== null && !Array.isArray(v) && !Object.hasOwn(v, 'value')) {
      throw new TimingError(`timing parameter '${k}' must be a number or { "value": number }, got an object without "value"`);
    }
    const value = typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Param).value : v;
    const why = timingValueError(k, value);
    if (why) throw new TimingError(why);
    out[k] = { value: value as number, source: 'override' };
  }
  validateTiming(out as unknown as Timing);
  return out as unknown as Timing;
}
