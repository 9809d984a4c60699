/**
 * Diagnostics of the mbarrier model: every case the PTX ISA calls undefined or out of range,
 * with a stable code, the field's words and what an H200 does in that case.
 *
 * Sources: PTX ISA 9.1 §9.7.13.15 (docs/SEMANTICS.md) for
 * what is undefined; the H200 observations in docs/HARDWARE.md for what the
 * H200 does.
 */

/** Stable diagnostic codes of the mbarrier model. Never renumber; add new codes at the end. */
export const DIAG = {
  /** An arrive-on with count > pending, or any arrive while pending == 0 and the phase waits on tx. */
  overArrival: 'over-arrival',
  /** tx-count leaves the PTX range ±(2^20 − 1). */
  txRange: 'tx-range',
  /** An operation other than `init` on a barrier that was never initialized. */
  uninitialized: 'uninitialized',
  /** An operation other than `init` on an invalidated barrier. */
  invalidated: 'invalidated',
  /** `mbarrier.init` of a barrier that is still valid (no `inval` in between). */
  reinit: 'reinit',
  /** A count operand (init, arrive, arrive_drop) outside [1, 2^20 − 1]. */
  countRange: 'count-range',
  /** `arrive.noComplete` (or `arrive_drop.noComplete`) that completes the phase. */
  noCompleteCompletes: 'nocomplete-completes',
  /** A phase completed by a standalone `expect_tx` bringing a negative tx-count back to 0. */
  expectTxCompletes: 'expect-tx-completes',
  /** `test_wait` / `try_wait` / `pending_count` / `init` / `inval` on a barrier of another CTA. */
  remoteWait: 'remote-wait',
  /** A token wait with a token that an arrive on another barrier returned. */
  foreignToken: 'foreign-token',
  /** A token wait with a token two or more phases old: only its parity is compared. */
  staleToken: 'stale-token',
  /** `arrive_drop` lowering the expected arrival count to 0. */
  dropToZero: 'drop-to-zero',
  /** `mbarrier.pending_count` on a token not produced by a `.noComplete` arrive. */
  pendingCountToken: 'pending-count-token',
  /** `cp.async.mbarrier.arrive` (without `.noinc`) raising pending above 2^20 − 1. */
  pendingOverflow: 'pending-overflow',
  /** Per-thread arrivals of one instruction that outnumber pending: the rest land in the next phase. */
  arrivalSpill: 'arrival-spill',
  /** A parity wait whose operand is neither 0 nor 1 (PTX 9.1 accepts only 0 and 1). */
  parityOperand: 'parity-operand',
  /** A barrier or buffer index (or CTA rank) outside its declared array at run time. */
  indexRange: 'index-range',
  /** A bulk copy whose size is not a positive multiple of 16 bytes (PTX ISA §9.7.9.25.4.1). */
  bulkSize: 'bulk-size',
  /** An expression of the kernel's program has no exact result (division by zero, shift count, beyond ±(2^53 − 1), loop step 0). */
  arith: 'arith',
  /** An instruction of a front end's input (PTX) that the machine does not model yet was executed. */
  notModelled: 'not-modelled',
  /** A data access (load, store, copy) whose bytes overlap an mbarrier of the same shared-memory array (PTX ISA §9.7.13.15). */
  barrierAsData: 'barrier-as-data',
  /** A non-blocking `bar.arrive` landing in the generation the same agent's previous arrive joined. */
  lapping: 'lapping',
  /** `bar.sync` / `bar.arrive` with an id outside 0..15 or a thread count that is not a positive multiple of 32. */
  namedBarrier: 'named-barrier',
  /** `test_wait` / `try_wait` on a barrier that was never initialized. */
  uninitializedWait: 'uninitialized-wait',
  /** A non-multicast bulk copy whose mbarrier is not in the CTA of its destination buffer. */
  tmaBarrierCta: 'tma-barrier-cta',
  /** `ld.shared` / `st.shared` of another CTA's shared memory after every thread of that CTA has exited. */
  exitedCta: 'exited-cta',
  // Tensor Memory (tcgen05, PTX ISA §9.7.16.7–§9.7.16.8; no Blackwell GPU was available to probe them).
  /** A tcgen05 operation on TMEM declared with `cols=` that is not allocated now (before its alloc, or after its dealloc). */
  tmemUnallocated: 'tmem-unallocated',
  /** `tcgen05.dealloc` while a tcgen05 operation in flight still accesses those columns. */
  tmemDeallocInflight: 'tmem-dealloc-inflight',
  /** A CTA whose threads have all exited with TMEM columns still allocated. */
  tmemLeak: 'tmem-leak',
  /** `tcgen05.alloc` after a warp of the CTA executed `tcgen05.relinquish_alloc_permit`. */
  tmemAllocRelinquished: 'tmem-alloc-after-relinquish',
  /** `tcgen05.alloc` of a buffer that is allocated, or `tcgen05.dealloc` of one this warp does not hold. */
  tmemAllocState: 'tmem-alloc-state',
  /** Registers of an asynchronous `tcgen05.ld` used (a store of them) before `tcgen05.wait::ld`. */
  tmemLdUnwaited: 'tmem-ld-unwaited',
  /**
   * `st.async` / `red.async` / `cp.async.bulk.shared::cluster.shared::cta` whose destination and
   * mbarrier are not in one CTA, whose destination must be a peer's and is not, or in a cluster of
   * one CTA (PTX ISA §9.7.9.12, §9.7.13.7, §9.7.9.25.4.1).
   */
  asyncStoreTarget: 'async-store-target',
  /** Two different aligned `bar.sync` (or `bar.arrive`) instructions of one role meeting in one named-barrier generation. */
  alignedBarrier: 'aligned-barrier',
  /** A `multicast=` CTA mask (16 bits) of a bulk copy or `tcgen05.commit` that selects no CTA of the cluster. */
  multicastMask: 'multicast-mask',
  // Values, global memory and cluster launch control (machine/ops/values.ts, clc.ts).
  /** A read (load, atom, spin) of a global location that nothing initialized for this launch (`gmem` without `init=`, never stored). */
  globalUninit: 'global-uninit',
  /** `choose LO, HI` with HI < LO, or with more alternatives than the model explores. */
  chooseRange: 'choose-range',
  /** `clusterlaunchcontrol.try_cancel` after the CTA observed a failed response (PTX ISA §9.7.13.17). */
  clcAfterFail: 'clc-after-fail',
  /** `clusterlaunchcontrol.query_cancel.get_first_ctaid` of a failed response (PTX ISA §9.7.13.18). */
  clcCtaidFailed: 'clc-ctaid-failed',
  /** `barrier.cluster.arrive` by the elected thread alone (inside `elect:`) of a warp whose other threads run on (PTX ISA §9.7.13.3). */
  clusterArrivePartial: 'cluster-arrive-partial',
  /** A second `barrier.cluster.arrive` by a thread before its `barrier.cluster.wait` of the round (PTX ISA §9.7.13.3: one arrival per thread and round). */
  clusterArriveTwice: 'cluster-arrive-twice',
} as const;

/** One of the stable diagnostic codes in {@link DIAG}. */
export type DiagCode = (typeof DIAG)[keyof typeof DIAG];

/** `error`: undefined behaviour or a definite bug; `warning`: legal but likely wrong. */
export type Severity = 'error' | 'warning';

/**
 * What the model reports for an undefined or suspicious operation. Diagnostics are data, never
 * exceptions: the machine records them as events and, when `trap` is set, stops the kernel the way
 * the H200 does (sticky `cudaErrorLaunchFailure`).
 */
export interface Diagnostic {
  code: DiagCode;
  severity: Severity;
  /** One sentence in the field's words. */
  message: string;
  /** What an H200 does in this case, and the observation or spec section it comes from. */
  h200: string;
  /** True when the H200 traps the kernel here (docs/HARDWARE.md, Conformance vectors). */
  trap: boolean;
  /** The barrier's state before the operation: phase, pending, expected, tx-count (bytes). */
  state?: { phase: number; pending: number; expected: number; tx: number; status: string };
}

/** What the H200 does for each code, with its source, and whether it traps. */
export const H200_BEHAVIOUR: Record<DiagCode, { h200: string; trap: boolean; severity: Severity }> = {
  'over-arrival': {
    h200: 'the kernel traps (unspecified launch failure); the phase is never silently advanced (docs/HARDWARE.md, Conformance vectors)',
    trap: true,
    severity: 'error',
  },
  'tx-range': {
    h200: 'accumulated tx up to +2^20 and down to −(2^20 − 1) is accepted; beyond that, or one expect_tx operand ≥ 2^20, the kernel traps (docs/HARDWARE.md, Conformance vectors)',
    trap: true,
    severity: 'error',
  },
  uninitialized: {
    h200: 'an arrive on a never-initialized word traps the kernel (docs/HARDWARE.md, Conformance vectors); expect_tx and copies on one were not probed: the machine stops the agent (waits: uninitialized-wait)',
    trap: true,
    severity: 'error',
  },
  invalidated: {
    h200: 'undefined (PTX ISA §9.7.13.15.10); the word written back by inval is not a valid barrier, so treated like an uninitialized one: traps (docs/HARDWARE.md, Conformance vectors)',
    trap: true,
    severity: 'error',
  },
  reinit: {
    h200: 'not observed; init is a plain SYNCS.EXCH of a fresh word, so the state is overwritten and in-flight signals are lost (docs/HARDWARE.md, Encoding, inferred)',
    trap: false,
    severity: 'error',
  },
  'count-range': {
    h200: 'init(0) starts with the phase bit set, pending 0 and tx −1, so parity(0) passes and the first arrive traps; init(2^20) leaves a zero word and the first arrive traps; arrive(count=0) arrives nothing but runs the completion check (docs/HARDWARE.md, Conformance vectors; conformance vectors init_count0_ub, arrive_drop_to_zero_probe_completes_phase)',
    trap: false,
    severity: 'error',
  },
  'nocomplete-completes': {
    h200: 'the phase simply completes, no trap (docs/HARDWARE.md, Conformance vectors)',
    trap: false,
    severity: 'error',
  },
  'expect-tx-completes': {
    h200: 'the phase completes (docs/HARDWARE.md, Conformance vectors); the PTX ISA lists only arrive-on and complete-tx as completion triggers (§9.7.13.15.5.1)',
    trap: false,
    severity: 'warning',
  },
  'remote-wait': {
    h200: 'not expressible: test_wait, try_wait, pending_count, init and inval accept only .shared::cta addresses (PTX ISA §9.7.13.15.8)',
    trap: false,
    severity: 'error',
  },
  'foreign-token': {
    h200: 'only the token\'s phase parity (bit 63) is compared against this barrier\'s phase (docs/HARDWARE.md, Conformance vectors)',
    trap: false,
    severity: 'warning',
  },
  'stale-token': {
    h200: 'only the parity is compared: a token from phase p−2 reads as the current phase (false), p−3 as complete (docs/HARDWARE.md, Conformance vectors)',
    trap: false,
    severity: 'error',
  },
  'drop-to-zero': {
    h200: 'the completing drop completes the phase; the next phase has 0 pending but never completes on its own, and the next arrive traps (docs/HARDWARE.md, Conformance vectors)',
    trap: false,
    severity: 'error',
  },
  'pending-count-token': {
    h200: 'pending_count is a pure bit extraction of the token: it returns the pending count before the arrive (docs/HARDWARE.md, Encoding)',
    trap: false,
    severity: 'warning',
  },
  'pending-overflow': {
    h200: 'not observed; undefined in PTX ISA §9.7.13.15.15',
    trap: false,
    severity: 'error',
  },
  'arrival-spill': {
    h200: 'each thread\'s arrive is separate: the first ones complete the phase and the rest count toward the next phase (docs/HARDWARE.md, Conformance vectors)',
    trap: false,
    severity: 'warning',
  },
  'index-range': {
    h200: 'undefined: the instruction operates on whatever shared memory lies at that address; the machine stops the agent',
    trap: true,
    severity: 'error',
  },
  'bulk-size': {
    h200: 'undefined (PTX ISA §9.7.9.25.4.1: size must be a multiple of 16); a misaligned tensor-copy coordinate faults with cudaErrorIllegalInstruction (docs/HARDWARE.md, Conformance vectors)',
    trap: true,
    severity: 'error',
  },
  'aligned-barrier': {
    h200: 'not measured on the H200. PTX leaves it undefined (§9.7.13.1: every thread of an aligned barrier executes the same barrier instruction; in conditional code only when all threads evaluate the condition alike); the compiler may assume it (and move or merge the instructions), so use barrier.sync (not aligned) where threads reach one barrier from different code. The machine counts both arrivals and goes on',
    trap: false,
    severity: 'error',
  },
  lapping: {
    h200: 'a named barrier counts threads per generation (PTX ISA §9.7.13.1): the second arrive completes the generation with the same threads twice, so a bar.sync waiting in it is released early or, later, left in a generation that never fills (bug pattern B03)',
    trap: false,
    severity: 'error',
  },
  arith: {
    h200: 'not a barrier behaviour: the kernel\'s own integer arithmetic has no exact result here (the message names the cause: a division or remainder by zero, a shift count outside 0..63, a value beyond ±(2^53 − 1) that mbsim cannot hold exactly, a loop step of 0); the machine stops the agent',
    trap: true,
    severity: 'error',
  },
  'barrier-as-data': {
    h200: 'not probed: PTX ISA §9.7.13.15 makes any access to a valid mbarrier other than the mbarrier instructions undefined (a TMA box or a store over the barrier corrupts its phase and counts); reported for every access whose bytes overlap an mbarrier\'s, whatever the barrier\'s state (an access after mbarrier.inval is legal and reported too); the machine stops the agent',
    trap: true,
    severity: 'error',
  },
  'not-modelled': {
    h200: 'not a hardware behaviour: the input executed an instruction (or an instruction in a lane configuration) that mbsim does not model yet; the message names it; the machine stops the agent rather than guess',
    trap: true,
    severity: 'error',
  },
  'named-barrier': {
    h200: 'not probed: PTX ISA §9.7.13.1 allows ids 0..15 and a thread count that is a multiple of the warp size; anything else is undefined (ptxas rejects constant ids above 15); the machine stops the agent',
    trap: true,
    severity: 'error',
  },
  'uninitialized-wait': {
    h200: 'no trap on a zero word: it reads as phase 0, so test_wait/try_wait.parity(1) return true and parity(0) false (try_wait after its ~7.8k-cycle timeout; a try_wait loop spins forever); a word holding 0xff.. or 0xa5.. traps (docs/HARDWARE.md, "Waits on a word that was never initialized"). Shared memory is not cleared at launch, so what a kernel sees depends on what the word held; the machine goes on as on the zero word',
    trap: false,
    severity: 'error',
  },
  'multicast-mask': {
    h200: 'undefined: the ctaMask operand (.b16) names the destination CTAs of a multicast copy or commit by their bits (PTX ISA §9.7.9.25.4.1, §9.7.16.8.11); a mask of 0, or of ranks beyond the cluster only, names none, so no bytes and no arrive would land; not probed. The machine stops the agent',
    trap: false,
    severity: 'error',
  },
  'tma-barrier-cta': {
    h200: 'undefined: without multicast the mbarrier operand must be in the same CTA as the destination (PTX ISA §9.7.9.25.4.1, §9.7.9.27.1.2, .cta_group::1); not probed. The machine does not guess where the bytes are credited: it stops the agent',
    trap: false,
    severity: 'error',
  },
  'exited-cta': {
    h200: 'undefined: distributed shared memory of a CTA that has exited may no longer be accessed (PTX ISA §9.7.9.25.2, CUDA programming guide: a CTA must not exit while others access its shared memory, hence the cluster barrier before exit); not probed. The machine records the access and goes on',
    trap: false,
    severity: 'error',
  },
  'tmem-unallocated': {
    h200: 'undefined: Tensor Memory is accessed through the address tcgen05.alloc returned, and columns not allocated (or deallocated) may belong to another CTA on the SM (PTX ISA §9.7.16.7.1); tcgen05 has no hardware here, not probed. The machine records the access and goes on',
    trap: false,
    severity: 'error',
  },
  'tmem-dealloc-inflight': {
    h200: 'undefined: the columns are freed while an asynchronous tcgen05 operation still reads or writes them (PTX ISA §9.7.16.7.1, §9.7.16.6); not probed (no Blackwell GPU here)',
    trap: false,
    severity: 'error',
  },
  'tmem-leak': {
    h200: 'undefined: all Tensor Memory a CTA allocated must be deallocated before the kernel exits (PTX ISA §9.7.16.7.1); not probed (no Blackwell GPU here)',
    trap: false,
    severity: 'error',
  },
  'tmem-alloc-after-relinquish': {
    h200: 'undefined: a CTA that relinquished its allocation permit may not allocate again (PTX ISA §9.7.16.7.1); not probed (no Blackwell GPU here). The machine allocates as asked',
    trap: false,
    severity: 'error',
  },
  'tmem-alloc-state': {
    h200: 'undefined (PTX ISA §9.7.16.7.1: dealloc takes an address an alloc returned); mbsim lets the warp that allocated a buffer own its columns until it deallocates them; not probed (no Blackwell GPU here). The machine leaves the allocation as it was',
    trap: false,
    severity: 'error',
  },
  'tmem-ld-unwaited': {
    h200: 'undefined: the destination registers of tcgen05.ld are valid only after tcgen05.wait::ld (PTX ISA §9.7.16.8.3, §9.7.16.6.4.5); not probed (no Blackwell GPU here)',
    trap: false,
    severity: 'error',
  },
  'async-store-target': {
    h200: 'undefined (PTX ISA §9.7.9.12 st.async, §9.7.13.7 red.async, §9.7.9.25.4.1 cp.async.bulk shared::cluster: destination and mbarrier in one CTA of a cluster of more than one CTA; red.async and the bulk copy into a peer CTA); not probed. The machine stops the agent and credits the bytes nowhere',
    trap: false,
    severity: 'error',
  },
  'global-uninit': {
    h200: 'the location holds whatever an earlier launch left there (PTX ISA §8: a read returns the value of some write; none of this launch precedes it): a persistent scheduler counter or split-K semaphore must be reset (memset, or by the kernel) before the launch that waits on it; not probed. The machine goes on as if it held 0',
    trap: false,
    severity: 'error',
  },
  'choose-range': {
    h200: 'a modeling error, not hardware: choose LO, HI needs LO <= HI and at most 64 alternatives. The agent stops',
    trap: false,
    severity: 'error',
  },
  'clc-after-fail': {
    h200: 'undefined (PTX ISA §9.7.13.17: once the executing CTA has observed a try_cancel response as failed, a later try_cancel is undefined); not probed (no Blackwell GPU here). The machine stops the agent',
    trap: false,
    severity: 'error',
  },
  'clc-ctaid-failed': {
    h200: 'undefined (PTX ISA §9.7.13.18: get_first_ctaid of a response whose request failed); not probed. The machine returns 0',
    trap: false,
    severity: 'error',
  },
  'cluster-arrive-partial': {
    h200: 'a barrier.cluster.wait completes only when every non-exited thread of the cluster has arrived (PTX ISA §9.7.13.3): the warp\'s other threads, which did not arrive, keep every wait of the round from completing (a hang), or arrive later a second time; with .aligned every thread of the warp must execute the instruction (undefined otherwise). Not probed. The machine stops the agent',
    trap: false,
    severity: 'error',
  },
  'cluster-arrive-twice': {
    h200: 'undefined (PTX ISA §9.7.13.3: each thread arrives on the cluster barrier once per round, and a barrier.cluster.wait between two arrives completes its round); not probed. The machine stops the agent instead of counting the arrival toward the next round',
    trap: false,
    severity: 'error',
  },
  'parity-operand': {
    h200: 'only bit 0 of the operand is used (docs/HARDWARE.md, Conformance vectors; newer PTX text says the same)',
    trap: false,
    severity: 'warning',
  },
};
