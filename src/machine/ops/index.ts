/**
 * The operation table: every operation module's {@link OpDef} indexed by its numeric code
 * ({@link OPC}, precomputed into `OpInstr.opc` at instantiation), and every asynchronous kind's
 * {@link AsyncDef}. The machine dispatches through {@link OPS} and {@link asyncDef}; the simulator
 * takes each operation's issue cost by its {@link OpDef.timing} key; the checker asks
 * {@link accessesOf} and {@link syncClass} instead of switching on mnemonics.
 *
 * Adding an operation: its IR form (`kernel/ir-ops.ts`), one {@link OpDef} in its family's module here,
 * its code in {@link OPC}, its timing entry (`sim/timing.ts`), and tests.
 */
import type { OpName } from '../../kernel/ir.js';
import type { AsyncKind } from '../events.js';
import type { AsyncOp } from '../state.js';
import { BARRIER_OPS } from './barriers.js';
import { BULK_OPS, BULK_STORE_ASYNC, DSMEM_ASYNC, TMA_ASYNC } from './bulk.js';
import { CP_ASYNC_ASYNC, CPA_ARRIVE_ASYNC, CPASYNC_OPS } from './cpasync.js';
import { MBARRIER_OPS, REMOTE_ASYNC } from './mbarrier.js';
import { SMEM_OPS } from './smem.js';
import { ST_ASYNC_ASYNC, STASYNC_OPS } from './stasync.js';
import { CLC_ASYNC, CLC_OPS, PICK_ASYNC } from './clc.js';
import { VALUE_OPS } from './values.js';
import { TC_COMMIT_ASYNC, TC_CP_ASYNC, TC_LD_ASYNC, TC_MMA_ASYNC, TC_SHIFT_ASYNC, TC_ST_ASYNC, TCGEN05_OPS } from './tcgen05.js';
import { TMEM_OPS } from './tmem.js';
import type { AsyncDef, OpDef, SyncClass } from './types.js';
import { WGMMA_ASYNC, WGMMA_OPS } from './wgmma.js';

export type { AsyncDef, OpCtx, OpDef, OpK, SignalKind, SyncClass, TextCtx } from './types.js';
export { signal } from './mbarrier.js';
export { checkCluster } from './barriers.js';
export { explainAlloc, explainPair, tmemAtExit } from './tmem.js';

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
  // tcgen05: Tensor Memory management, data movement and fences.
  'tcgen05.alloc': 29,
  'tcgen05.dealloc': 30,
  'tcgen05.relinquish_alloc_permit': 31,
  'tcgen05.ld.async': 32,
  'tcgen05.st': 33,
  'tcgen05.wait::ld': 34,
  'tcgen05.wait::st': 35,
  'tcgen05.cp': 36,
  'tcgen05.shift': 37,
  'tcgen05.fence::before_thread_sync': 38,
  'tcgen05.fence::after_thread_sync': 39,
  // The asynchronous copy family (cpasync.ts, stasync.ts, bulk.ts).
  'cp.async.commit_group': 40,
  'cp.async.wait_group': 41,
  'st.async': 42,
  'cp.async.bulk.shared::cluster': 43,
  'cp.reduce.async.bulk': 44,
  'cp.async.bulk.prefetch': 45,
  // Thread fences with a scope (smem.ts).
  'fence': 46,
  // Values, global memory (values.ts) and cluster launch control (clc.ts).
  'choose': 47,
  'ld.global': 48,
  'st.global': 49,
  'ld.strong': 50,
  'st.strong': 51,
  'atom.global': 52,
  'spin.global': 53,
  'clc.try_cancel': 54,
  'clc.query': 55,
  // A front end's instruction that is not modelled (smem.ts).
  'trap': 56,
});

const ALL_OPS: readonly OpDef[] = [...MBARRIER_OPS, ...BULK_OPS, ...TCGEN05_OPS, ...WGMMA_OPS, ...CPASYNC_OPS, ...BARRIER_OPS, ...SMEM_OPS, ...TMEM_OPS, ...STASYNC_OPS, ...VALUE_OPS, ...CLC_OPS];

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
const A_TC_LD = uniformAsync(TC_LD_ASYNC);
const A_TC_ST = uniformAsync(TC_ST_ASYNC);
const A_TC_CP = uniformAsync(TC_CP_ASYNC);
const A_TC_SHIFT = uniformAsync(TC_SHIFT_ASYNC);
const A_ST_ASYNC = uniformAsync(ST_ASYNC_ASYNC);
const A_DSMEM = uniformAsync(DSMEM_ASYNC);
const A_PICK = uniformAsync(PICK_ASYNC);
const A_CLC = uniformAsync(CLC_ASYNC);
const ASYNC: Readonly<Record<AsyncKind, AsyncDef>> = {
  tma: A_TMA, 'bulk.store': A_BULK_STORE, 'tc.mma': A_TC_MMA, 'tc.commit': A_TC_COMMIT,
  'tc.ld': A_TC_LD, 'tc.st': A_TC_ST, 'tc.cp': A_TC_CP, 'tc.shift': A_TC_SHIFT,
  wgmma: A_WGMMA, 'cp.async': A_CP_ASYNC, 'cpa.arrive': A_CPA_ARRIVE, remote: A_REMOTE,
  'st.async': A_ST_ASYNC, dsmem: A_DSMEM, pick: A_PICK, clc: A_CLC,
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
    case 'tc.ld': return A_TC_LD;
    case 'tc.st': return A_TC_ST;
    case 'tc.cp': return A_TC_CP;
    case 'tc.shift': return A_TC_SHIFT;
    case 'st.async': return A_ST_ASYNC;
    case 'dsmem': return A_DSMEM;
    case 'pick': return A_PICK;
    case 'clc': return A_CLC;
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
  if (o.reads && (d.kind === 'tc.mma' || d.kind === 'wgmma' || d.kind === 'tc.cp' || d.kind === 'dsmem')) for (const r of o.reads) out.push({ buf: r, rw: 'r' });
  return out;
}

/**
 * True when in-flight operations of kinds `x` and `y` issued by one agent are ordered by the
 * hardware: MMAs of one issuer (each stream in order), and the operations of one issuer's tcgen05
 * stream (mma, cp, shift: pipelined, PTX ISA §9.7.16.6.2). Their accesses never race each other.
 */
export function sameStreamOrdered(x: AsyncKind, y: AsyncKind): boolean {
  if (x === y && (x === 'tc.mma' || x === 'wgmma')) return true;
  return ASYNC[x].stream === 'tc' && ASYNC[y].stream === 'tc';
}

/**
 * Whether operation code `opc` issues an asynchronous operation that accesses shared memory
 * through the async proxy (TMA and bulk copies, bulk stores and reductions, MMAs): the checker's
 * proxy-fence tracking follows the buffers such operations name.
 */
export function asyncProxyOp(opc: number): boolean {
  for (const k of OPS[opc]!.issues ?? []) {
    const d = ASYNC[k];
    if ((d.bufAccess && d.bufAccess.proxy === 'async') || k === 'tc.mma' || k === 'wgmma') return true;
  }
  return false;
}

/** The happens-before role of mnemonic `op` ({@link SyncClass}). */
export function syncClass(op: OpName): SyncClass {
  return opDef(op).sync;
}

/** The agent's own point access of the operation with code `opc` ('r', 'w'), or undefined. */
export function pointAccess(opc: number): 'r' | 'w' | undefined {
  return OPS[opc]!.access;
}
