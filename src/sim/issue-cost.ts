/**
 * Each operation's issue cost in SM cycles over the timing parameters of timing.ts: the cycles an
 * agent spends issuing it before its next instruction, keyed by the operation module's timing key.
 */
import { tryInt } from '../kernel/expr.js';
import type { OpName } from '../kernel/ir.js';
import type { OpInstr } from '../machine/program.js';
import type { Timing } from './timing.js';

/** What an operation's issue cost may depend on: the timing, the instruction, the threads performing it, the agent's frame. */
export interface IssueArgs {
  T: Timing;
  ins: OpInstr;
  /** Threads of the agent performing it (its `per`). */
  mult: number;
  frame: number[];
}

/** Issue cost of one operation, in cycles (the agent's next instruction starts that much later). */
export type IssueCost = (c: IssueArgs) => number;

const lo = (T: Timing) => T.loopOverhead.value;

/** `issueMulticastExtra` for a `.multicast::cluster` bulk copy, else 0 (cycles). */
export function multicastExtra(T: Timing, ins: OpInstr): number {
  return (ins.op as { multicast?: unknown }).multicast !== undefined ? T.issueMulticastExtra.value : 0;
}

/**
 * Issue cost of every operation, keyed by its module's timing key (`OpDef.timing` in
 * `machine/ops/`): the one place the simulator reads an operation's cost from. Asynchronous
 * completions are timed by `scheduleAsync` in `simulate.ts`.
 */
export const ISSUE_COST = {
  'mbarrier.init': ({ T }) => T.issueInit.value,
  'mbarrier.inval': ({ T }) => T.issueInval.value,
  'mbarrier.arrive': ({ T }) => T.issueArrive.value + lo(T),
  'mbarrier.expect_tx': ({ T }) => T.issueExpectTx.value + lo(T),
  'mbarrier.complete_tx': ({ T }) => T.issueCompleteTx.value + lo(T),
  'mbarrier.wait': ({ T, ins }) => ((ins.op as { form: string }).form === 'test_wait' ? T.waitPassTestWait.value : T.waitPassTryWait.value) + lo(T),
  'mbarrier.pending_count': () => 2,
  'cp.async.bulk': ({ T, ins, mult }) => (((ins.op as { tensor?: boolean }).tensor ? T.issueTensorCopy.value : T.issueBulkCopy.value) + multicastExtra(T, ins)) * Math.min(mult, 32) + lo(T),
  'cp.async.bulk.store': ({ T }) => T.issueBulkStore.value + lo(T),
  'cp.async.bulk.commit_group': ({ T }) => T.issueWgmmaGroupOp.value,
  'cp.async.bulk.wait_group': ({ T }) => T.issueWgmmaGroupOp.value,
  'wgmma.commit_group': ({ T }) => T.issueWgmmaGroupOp.value,
  'wgmma.wait_group': ({ T }) => T.issueWgmmaGroupOp.value,
  'tcgen05.mma': ({ T }) => T.issueMma.value + lo(T),
  'wgmma.mma_async': ({ T }) => T.issueMma.value + lo(T),
  'tcgen05.commit': ({ T }) => T.issueCommit.value + lo(T),
  'tcgen05.ld': ({ T }) => T.tmemLoad.value,
  // tcgen05 Tensor Memory management, data movement and fences (estimates: no Blackwell GPU here).
  'tcgen05.alloc': ({ T }) => T.issueInit.value + lo(T),
  'tcgen05.dealloc': ({ T }) => T.issueInit.value + lo(T),
  'tcgen05.relinquish_alloc_permit': ({ T }) => T.issueCommit.value,
  'tcgen05.ld.async': ({ T }) => T.issueCommit.value + lo(T),
  'tcgen05.st': ({ T }) => T.issueCommit.value + lo(T),
  'tcgen05.wait::ld': ({ T }) => T.issueWgmmaGroupOp.value,
  'tcgen05.wait::st': ({ T }) => T.issueWgmmaGroupOp.value,
  'tcgen05.cp': ({ T }) => T.issueMma.value + lo(T),
  'tcgen05.shift': ({ T }) => T.issueMma.value + lo(T),
  'tcgen05.fence::before_thread_sync': ({ T }) => T.issueWgmmaGroupOp.value,
  'tcgen05.fence::after_thread_sync': ({ T }) => T.issueWgmmaGroupOp.value,
  'cp.async': ({ T }) => T.issueCpAsync.value,
  'cp.async.mbarrier.arrive': ({ T }) => T.issueArrive.value,
  'bar.sync': ({ T }) => T.barSync.value,
  'bar.arrive': ({ T }) => T.barSync.value,
  'fence.proxy.async': ({ T }) => T.fenceProxyAsync.value,
  'fence.mbarrier_init': ({ T }) => T.fenceMbarrierInit.value,
  'fence': ({ T, ins }) => {
    const scope = (ins.op as { scope?: string }).scope;
    return scope === 'cta' ? T.fenceCta.value : scope === 'sys' ? T.fenceSys.value : T.fenceCluster.value;
  },
  'barrier.cluster.arrive': ({ T, ins }) => ((ins.op as { sem?: string }).sem === 'relaxed' ? T.clusterArriveRelaxed.value : T.clusterArrive.value),
  'barrier.cluster.wait': () => 10,
  'ld.shared': ({ T }) => T.ldShared.value,
  'st.shared': ({ T }) => T.stShared.value,
  // A fault in the cycles costs nothing here: the step evaluates them and reports it (ops/smem.ts).
  'work': ({ ins, frame }) => Math.max(0, tryInt(ins.ints.cycles!, frame) ?? 0),
  'exit': () => 0,
  'trap': () => 0,
  // The asynchronous copy family (completion times: scheduleAsync in simulate.ts).
  'cp.async.commit_group': ({ T }) => T.issueWgmmaGroupOp.value,
  'cp.async.wait_group': ({ T }) => T.issueWgmmaGroupOp.value,
  'st.async': ({ T }) => T.stShared.value,
  'cp.async.bulk.shared::cluster': ({ T }) => T.issueBulkCopy.value + lo(T),
  'cp.reduce.async.bulk': ({ T }) => T.issueBulkStore.value + lo(T),
  'cp.async.bulk.prefetch': ({ T, ins }) => ((ins.op as { tensor?: boolean }).tensor ? T.issueTensorCopy.value : T.issueBulkCopy.value),
  // Values, global memory and cluster launch control (values.ts, clc.ts; estimates).
  'choose': () => 0,
  'ld.global': ({ T }) => T.globalAccess.value,
  'ld.strong': ({ T }) => T.globalAccess.value,
  'st.global': ({ T }) => T.stShared.value,
  'st.strong': ({ T }) => T.stShared.value,
  'atom.global': ({ T }) => T.globalAccess.value,
  'spin.global': ({ T }) => T.globalAccess.value,
  'clc.try_cancel': ({ T }) => T.issueBulkCopy.value,
  'clc.query': ({ T }) => T.ldShared.value,
} satisfies Record<OpName, IssueCost> as Readonly<Record<string, IssueCost>>;
