/**
 * The operation table: every operation module's {@link OpDef} indexed by its numeric code
 * ({@link OPC}, precomputed into `OpInstr.opc` at instantiation), and every asynchronous kind's
 * {@link AsyncDef}. The machine dispatches through {@link OPS} and {@link asyncDef}; the simulator
 * takes each operation's issue cost by its {@link OpDef.timing} key; the checker asks
 * {@link accessesOf} and {@link syncClass} instead of switching on mnemonics.
 *
 * Adding an operation: its IR form (`kernel/ir.ts`), one {@link OpDef} in its family's module here,
 * its code in {@link OPC}, its timing entry (`sim/timing.ts`), and tests.
 */
import type { OpName } from '../../kernel/ir.js';
import type { AsyncKind } from '../events.js';
import type { AsyncOp } from '../state.js';
import { BARRIER_OPS } from './barriers.js';
import { BULK_OPS, BULK_STORE_ASYNC, TMA_ASYNC } from './bulk.js';
import { CP_ASYNC_ASYNC, CPA_ARRIVE_ASYNC, CPASYNC_OPS } from './cpasync.js';
import { MBARRIER_OPS, REMOTE_ASYNC } from './mbarrier.js';
import { SMEM_OPS } from './smem.js';
import { TC_COMMIT_ASYNC, TC_MMA_ASYNC, TCGEN05_OPS } from './tcgen05.js';
import type { AsyncDef, OpDef, SyncClass } from './types.js';
import { WGMMA_ASYNC, WGMMA_OPS } from './wgmma.js';

export type { AsyncDef, OpCtx, OpDef, OpK, SignalKind, SyncClass, TextCtx } from './types.js';
export { signal } from './mbarrier.js';
export { checkCluster } from './barriers.js';

/**
 * Numeric codes of the operations (`OpInstr.opc`): the index of each operation in {@link OPS}.
 * A few checker rules compare with these literal values; the comments there name the operation.
 */
export const OPC: Readonly<Record<OpName, number>> = Object.freeze({
  'mbarrier.init': 0,
  'mbarrier.inval': 1,
  'mbarrier.arrive': 2,
  'mbarrier.expect_tx': 3,
  'mbarrier.complete_tx': 4,
  'mbarrier.wait': 5,
  'mbarrier.pending_count': 6,
  'cp.async.bulk': 7,
  'cp.async.bulk.store': 8,
  'cp.async.bulk.commit_group': 9,
  'cp.async.bulk.wait_group': 10,
  'tcgen05.mma': 11,
  'tcgen05.commit': 12,
  'tcgen05.ld': 13,
  'wgmma.mma_async': 14,
  'wgmma.commit_group': 15,
  'wgmma.wait_group': 16,
  'cp.async': 17,
  'cp.async.mbarrier.arrive': 18,
  'bar.sync': 19,
  'bar.arrive': 20,
  'fence.proxy.async': 21,
  'fence.mbarrier_init': 22,
  'barrier.cluster.arrive': 23,
  'barrier.cluster.wait': 24,
  'ld.shared': 25,
  'st.shared': 26,
  'work': 27,
  'exit': 28,
  'fence': 29,
});

const ALL_OPS: readonly OpDef[] = [...MBARRIER_OPS, ...BULK_OPS, ...TCGEN05_OPS, ...WGMMA_OPS, ...CPASYNC_OPS, ...BARRIER_OPS, ...SMEM_OPS];

/**
 * `d` with every field present, in one order: all definitions share one hidden class, so the
 * machine's loads of `enabled`, `exec`, … stay monomorphic on the hot path.
 */
function uniformOp(d: OpDef): OpDef {
  return {
    op: d.op, family: d.family, enabled: d.enabled, exec: d.exec, opEvent: d.opEvent ?? 'always', opEventN: d.opEventN ?? false,
    touchesBar: d.touchesBar ?? false, access: d.access, issues: d.issues ?? [], sync: d.sync, por: d.por, text: d.text, timing: d.timing,
  };
}

/** `d` with every field present, in one order (see {@link uniformOp}). */
function uniformAsync(d: AsyncDef): AsyncDef {
  return { kind: d.kind, family: d.family, label: d.label, stream: d.stream, enabled: d.enabled, progress: d.progress, touched: d.touched, bufAccess: d.bufAccess };
}

/** Every operation's definition, indexed by its code {@link OPC}. */
export const OPS: readonly OpDef[] = (() => {
  const t: OpDef[] = new Array(ALL_OPS.length);
  for (const d of ALL_OPS) {
    const c = OPC[d.op];
    if (c === undefined || t[c]) throw new Error(`operation table: ${d.op} has no code or is defined twice`);
    t[c] = uniformOp(d);
  }
  for (const [name, c] of Object.entries(OPC)) if (!t[c]) throw new Error(`operation table: ${name} has no module`);
  return Object.freeze(t);
})();

/** The definition of mnemonic `op`. */
export function opDef(op: OpName): OpDef {
  return OPS[OPC[op]]!;
}

const A_TMA = uniformAsync(TMA_ASYNC);
const A_BULK_STORE = uniformAsync(BULK_STORE_ASYNC);
const A_TC_MMA = uniformAsync(TC_MMA_ASYNC);
const A_TC_COMMIT = uniformAsync(TC_COMMIT_ASYNC);
const A_WGMMA = uniformAsync(WGMMA_ASYNC);
const A_CP_ASYNC = uniformAsync(CP_ASYNC_ASYNC);
const A_CPA_ARRIVE = uniformAsync(CPA_ARRIVE_ASYNC);
const A_REMOTE = uniformAsync(REMOTE_ASYNC);
const ASYNC: Readonly<Record<AsyncKind, AsyncDef>> = {
  tma: A_TMA, 'bulk.store': A_BULK_STORE, 'tc.mma': A_TC_MMA, 'tc.commit': A_TC_COMMIT,
  wgmma: A_WGMMA, 'cp.async': A_CP_ASYNC, 'cpa.arrive': A_CPA_ARRIVE, remote: A_REMOTE,
};

/** The definition of asynchronous kind `kind`. */
export function asyncDef(kind: AsyncKind): AsyncDef {
  switch (kind) {
    case 'tma': return A_TMA;
    case 'remote': return A_REMOTE;
    case 'tc.mma': return A_TC_MMA;
    case 'tc.commit': return A_TC_COMMIT;
    case 'wgmma': return A_WGMMA;
    case 'bulk.store': return A_BULK_STORE;
    case 'cp.async': return A_CP_ASYNC;
    case 'cpa.arrive': return A_CPA_ARRIVE;
  }
}

/** Every asynchronous kind's definition. */
export const ASYNC_DEFS: readonly AsyncDef[] = Object.freeze(Object.values(ASYNC));

/**
 * The buffers in-flight operation `o` accesses until it completes, with the mode: its `buf` (by
 * its kind's {@link AsyncDef.bufAccess}), then the operand buffers it reads.
 */
export function accessesOf(o: AsyncOp): { buf: number; rw: 'r' | 'w' }[] {
  const out: { buf: number; rw: 'r' | 'w' }[] = [];
  const d = ASYNC[o.kind];
  if (d.bufAccess && o.buf >= 0) out.push({ buf: o.buf, rw: d.bufAccess.rw });
  if (o.reads && (d.kind === 'tc.mma' || d.kind === 'wgmma')) for (const r of o.reads) out.push({ buf: r, rw: 'r' });
  return out;
}

/** The happens-before role of mnemonic `op` ({@link SyncClass}). */
export function syncClass(op: OpName): SyncClass {
  return opDef(op).sync;
}

/** The agent's own point access of the operation with code `opc` ('r', 'w'), or undefined. */
export function pointAccess(opc: number): 'r' | 'w' | undefined {
  return OPS[opc]!.access;
}
