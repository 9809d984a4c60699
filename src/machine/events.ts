/**
 * Events: the machine's one output. Every step emits typed events carrying the time (cycles, as
 * the driver set it), the agent or asynchronous operation that caused them and the source location.
 * Timelines, ledgers, traces, the checker's hazards and the web views all consume these.
 */
import type { Diagnostic } from '../model/diagnostics.js';
import type { OpName, SrcLoc } from '../kernel/ir.js';

/** Kinds of asynchronous operations the machine tracks (its asynchronous units). */
export type AsyncKind =
  | 'tma'          // cp.async.bulk{.tensor} load into one destination CTA
  | 'bulk.store'   // cp.async.bulk store (reads smem)
  | 'tc.mma'       // tcgen05.mma
  | 'tc.commit'    // tcgen05.commit arrive (after earlier tcgen05 ops)
  | 'tc.ld'        // asynchronous tcgen05.ld (TMEM -> registers), retired by tcgen05.wait::ld
  | 'tc.st'        // tcgen05.st (registers -> TMEM), retired by tcgen05.wait::st
  | 'tc.cp'        // tcgen05.cp (shared memory -> TMEM), in the issuer's tcgen05 order
  | 'tc.shift'     // tcgen05.shift (TMEM rows), in the issuer's tcgen05 order
  | 'wgmma'        // wgmma.mma_async
  | 'cp.async'     // non-bulk cp.async
  | 'cpa.arrive'   // cp.async.mbarrier.arrive's asynchronous arrive
  | 'remote'       // a remote (shared::cluster) arrive / expect_tx / complete_tx in flight
  | 'st.async'     // st.async / red.async: a register store into (peer) smem, then complete_tx
  | 'dsmem'        // cp.async.bulk.shared::cluster.shared::cta: smem → peer smem, then complete_tx
  | 'pick'         // one alternative of a choose, or a try_cancel's outcome (the first to progress wins)
  | 'clc';         // a try_cancel response: written into smem, then complete_tx(16)

/** Who caused an event: an agent (index) or an asynchronous operation (id). */
export interface Cause {
  /** Agent index, or -1 when an asynchronous unit acted. */
  agent: number;
  /** Asynchronous operation id, or -1. */
  async: number;
}

/** Every event kind. `t` is in cycles. */
export type MachineEvent =
  | ({ e: 'op'; t: number; op: OpName; text: string; loc: SrcLoc; /** wait_group: the resolved group count `n`. */ n?: number } & Cause)
  | ({ e: 'arrive'; t: number; bar: number; count: number; expectTx: number; drop: boolean; phase: number; pending: number; tx: number; loc?: SrcLoc } & Cause)
  | ({ e: 'expect_tx'; t: number; bar: number; bytes: number; phase: number; tx: number; loc?: SrcLoc } & Cause)
  | ({ e: 'complete_tx'; t: number; bar: number; bytes: number; phase: number; tx: number; loc?: SrcLoc } & Cause)
  | ({ e: 'phase'; t: number; bar: number; completed: number } & Cause)
  | { e: 'wait'; t: number; agent: number; bar: number; parity: number; phase: number; pass: boolean; token: boolean; loc: SrcLoc }
  | { e: 'async'; t: number; id: number; kind: AsyncKind; agent: number; cta: number; bytes: number; bar: number; buf: number; loc: SrcLoc }
  | { e: 'async.done'; t: number; id: number; kind: AsyncKind; cta: number }
  | ({ e: 'access'; t: number; buf: number; rw: 'r' | 'w'; proxy: 'generic' | 'async'; edge: 'point' | 'begin' | 'end'; loc?: SrcLoc } & Cause)
  | {
    e: 'sync'; t: number; agent: number;
    /** `bar.sync.done`: the second half of a `bar.sync` (its generation completed; the agent proceeds). */
    kind: 'bar.sync' | 'bar.arrive' | 'cluster.arrive' | 'cluster.wait' | 'named.done' | 'cluster.done' | 'bar.sync.done';
    id: number; loc?: SrcLoc;
    /** `cluster.done`: the cluster index (`id` is the round). */
    cluster?: number;
  }
  /** `buf`: the buffer key the diagnostic is about, when it is about a buffer (`exited-cta`). */
  | ({ e: 'diag'; t: number; diag: Diagnostic; bar: number; buf?: number; loc?: SrcLoc } & Cause)
  | { e: 'exit'; t: number; agent: number; loc?: SrcLoc };

/** An event kind name. */
export type EventKind = MachineEvent['e'];
