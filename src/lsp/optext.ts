/**
 * What each operation of the sketch language means in PTX, for the language server's hover: the
 * PTX instruction it stands for, one or two sentences on its effect as the model implements it,
 * and the PTX ISA section (version 9.1) the rule comes from. The same facts, longer, are in
 * docs/LANGUAGE.md (section 7) and docs/SEMANTICS.md.
 */
import type { OpSpec } from '../lang/ops.js';
import { findOp, parseQualifiers } from '../lang/ops-spelling.js';

/** The PTX meaning of one operation. */
export interface OpText {
  /** The PTX instruction (with its usual qualifiers) the sketch operation stands for. */
  ptx: string;
  /** Its effect on barriers, buffers and the issuing agent, as the model implements it. */
  meaning: string;
  /** PTX ISA sections (§…) the rule comes from. */
  sections: string;
}

const T = (ptx: string, meaning: string, sections: string): OpText => ({ ptx, meaning, sections });

/** Every non-arrive operation, by canonical mnemonic (the arrive family is composed by {@link arriveText}). */
const TEXT: Record<string, OpText> = {
  'mbarrier.init': T('mbarrier.init.shared::cta.b64 [addr], count', 'Sets the barrier to phase 0 with COUNT pending and expected arrivals (default: the declared count) and a tx-count of 0. Needed only for `manual` barriers; other threads may use it once the init is published (a CTA sync, or `fence.mbarrier_init` and a cluster barrier for other CTAs).', '§9.7.13.15.9, §9.7.13.15.3'),
  'mbarrier.inval': T('mbarrier.inval.shared::cta.b64 [addr]', 'Ends the barrier\'s life before its memory is reused; any later operation but `mbarrier.init` on it is undefined (`uninitialized`).', '§9.7.13.15.10'),
  'mbarrier.expect_tx': T('mbarrier.expect_tx.b64 [addr], txCount', 'Raises the current phase\'s tx-count by BYTES without arriving; it never completes a phase by itself.', '§9.7.13.15.11, §9.7.13.15.5.1'),
  'mbarrier.complete_tx': T('mbarrier.complete_tx.b64 [addr], txCount', 'Lowers the tx-count by BYTES, as a finished transfer does, then tests for completion (pending 0 and tx-count 0). Moves no data.', '§9.7.13.15.12, §9.7.13.15.5.2'),
  'mbarrier.try_wait.parity': T('mbarrier.try_wait.parity{.acquire|.relaxed}{.cta|.cluster}.b64 p, [addr], parity (in a retry loop)', 'Blocks until the phase of parity PARITY has completed: it passes at once when the barrier\'s current phase parity differs from PARITY, so a wait for parity 1 on a fresh barrier passes immediately. With `R = …` it is one test: R is 1 if the phase completed, else 0. `.acquire` (default) orders the later accesses after the phase\'s releases; `.relaxed` does not, until an acquire fence; an explicit `.cta` scope does not synchronize with another CTA\'s release.', '§9.7.13.15.16, §8.8'),
  'mbarrier.test_wait.parity': T('mbarrier.test_wait.parity.b64 p, [addr], parity', 'One non-blocking test: R is 1 if the phase of parity PARITY has completed, else 0. Never changes the barrier.', '§9.7.13.15.16'),
  'mbarrier.try_wait': T('mbarrier.try_wait.b64 p, [addr], state', 'Blocks until the phase named by the token (from an arrive on the same barrier, in the current or the previous phase) has completed.', '§9.7.13.15.16'),
  'mbarrier.test_wait': T('mbarrier.test_wait.b64 p, [addr], state', 'One non-blocking test of the phase named by the token: R is 1 if it completed, else 0.', '§9.7.13.15.16'),
  'mbarrier.pending_count': T('mbarrier.pending_count.b64 n, state', 'The pending arrival count recorded in a token of a `.noComplete` arrive.', '§9.7.13.15.17'),
  'cp.async.bulk.tensor': T('cp.async.bulk.tensor.Nd.shared::cluster.global.mbarrier::complete_tx::bytes [dst], [map, coords], [bar]', 'TMA load: an async-proxy write of BYTES into DST that performs complete_tx(BYTES) on BAR when it lands. It does not arrive: someone must announce the bytes (usually `mbarrier.arrive.expect_tx`). `multicast=MASK` delivers to the same buffer and barrier in every CTA of the mask; `chunks=N` credits the bytes in N steps.', '§9.7.9.27.1.2, §9.7.9.25.4.1'),
  'cp.async.bulk': T('cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [dst], [src], size, [bar]', 'A bulk copy without a tensor map: an async-proxy write of BYTES into DST with complete_tx(BYTES) on BAR when it lands; no arrival.', '§9.7.9.25.4.1'),
  'cp.async.bulk.store': T('cp.async.bulk.global.shared::cta.bulk_group [dst], [src], size', 'Bulk store: an async-proxy read of SRC, tracked by bulk async-groups (`commit_group`, `wait_group.read` before SRC is rewritten).', '§9.7.9.25.4.1, §9.7.9.27.2'),
  'cp.async.bulk.commit_group': T('cp.async.bulk.commit_group', 'Closes the current bulk async-group of this thread.', '§9.7.9.27.2.1'),
  'cp.async.bulk.wait_group': T('cp.async.bulk.wait_group N', 'Waits until at most N committed bulk groups of this thread are pending.', '§9.7.9.27.2.2'),
  'cp.async.bulk.wait_group.read': T('cp.async.bulk.wait_group.read N', 'Waits until at most N committed bulk groups still read shared memory: their sources may then be rewritten.', '§9.7.9.27.2.2'),
  'tcgen05.mma': T('tcgen05.mma.cta_group::1.kind::f16 [d_tmem], a_desc, b_desc, idesc, enable', 'Blackwell MMA: reads the shared-memory operands asynchronously and accumulates into the TMEM buffer ACC; completes in issue order. Its completion is observed through `tcgen05.commit`.', '§9.7.16.6, §9.7.16.5'),
  'tcgen05.commit': T('tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [bar]', 'One arrival (count 1) on BAR, on every CTA of MASK with `multicast=`, once every earlier tcgen05 operation of this thread has completed. An arrival, not a complete_tx.', '§9.7.16.12.1, §9.7.16.6.2'),
  'tcgen05.ld': T('tcgen05.ld.sync.aligned… then tcgen05.wait::ld', 'Reads a TMEM buffer together with its `tcgen05.wait::ld` (the epilogue\'s load of the accumulator, registers ready at once).', '§9.7.16.8.3'),
  'tcgen05.mma.cta_group::2': T('tcgen05.mma.cta_group::2.kind::f16 [d_tmem], a_desc, b_desc, idesc, enable', 'The MMA of a CTA pair: each CTA\'s accumulator is written from its half of A and both CTAs\' halves of B, read from both CTAs\' shared memory; commit it with `multicast=` naming both CTAs.', '§9.7.16.5.1, §9.7.16.10'),
  // tcgen05: Tensor Memory management, data movement and fences.
  'tcgen05.alloc': T('tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [dst], nCols', 'Allocates the `cols=` columns declared for the TMEM buffer out of the CTA\'s 512; blocks while fewer are free. The allocating warp holds them until its `tcgen05.dealloc`; all must be freed before the CTA exits.', '§9.7.16.7.1'),
  'tcgen05.dealloc': T('tcgen05.dealloc.cta_group::1.sync.aligned.b32 taddr, nCols', 'Frees the columns of the TMEM buffer; a tcgen05 access to it afterwards, or one still in flight, is undefined.', '§9.7.16.7.1'),
  'tcgen05.relinquish_alloc_permit': T('tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned', 'The CTA gives up the right to allocate Tensor Memory: a later `tcgen05.alloc` in it is undefined.', '§9.7.16.7.1'),
  'tcgen05.alloc.cta_group::2': T('tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32 [dst], nCols', 'The CTA pair (ranks 2p, 2p + 1 of the cluster) allocates the buffer\'s `cols=` columns together: one warp of each CTA issues it, and the columns are allocated in both CTAs\' Tensor Memory. A warp waits here until the peer CTA\'s warp issues it too.', '§9.7.16.7.1'),
  'tcgen05.dealloc.cta_group::2': T('tcgen05.dealloc.cta_group::2.sync.aligned.b32 taddr, nCols', 'The CTA pair frees the columns together: one warp of each CTA issues it.', '§9.7.16.7.1'),
  'tcgen05.relinquish_alloc_permit.cta_group::2': T('tcgen05.relinquish_alloc_permit.cta_group::2.sync.aligned', 'The CTA gives up the right to allocate Tensor Memory for the pair: a later pair `tcgen05.alloc` of either CTA is undefined.', '§9.7.16.7.1'),
  'tcgen05.ld.sync.aligned': T('tcgen05.ld.sync.aligned.shape.num.b32 r, [taddr]', 'Asynchronous TMEM load: the registers are valid only after `tcgen05.wait::ld`; storing them before is reported, and the TMEM may not be overwritten until then.', '§9.7.16.8.3, §9.7.16.6.4.5'),
  'tcgen05.st': T('tcgen05.st.sync.aligned.shape.num.b32 [taddr], r', 'Asynchronous TMEM store: an MMA or load may use the data only after `tcgen05.wait::st`.', '§9.7.16.8.4'),
  'tcgen05.wait::ld': T('tcgen05.wait::ld.sync.aligned', 'Waits until every earlier `tcgen05.ld` of this thread has completed.', '§9.7.16.8.5'),
  'tcgen05.wait::st': T('tcgen05.wait::st.sync.aligned', 'Waits until every earlier `tcgen05.st` of this thread has completed.', '§9.7.16.8.5'),
  'tcgen05.cp': T('tcgen05.cp.cta_group::1.shape [taddr], s_desc', 'Asynchronous copy of shared memory (async proxy) into TMEM, in this thread\'s tcgen05 order: a later `tcgen05.mma` of the thread sees it, `tcgen05.commit` tracks it.', '§9.7.16.9.1, §9.7.16.6.2'),
  'tcgen05.shift': T('tcgen05.shift.cta_group::1.down [taddr]', 'Asynchronously shifts the rows of a TMEM buffer down by one, in this thread\'s tcgen05 order.', '§9.7.16.9.2'),
  'tcgen05.fence::before_thread_sync': T('tcgen05.fence::before_thread_sync', 'Orders this thread\'s earlier tcgen05 operations before its following thread synchronization (arrive, bar.sync, ...).', '§9.7.16.11.1, §9.7.16.6.3'),
  'tcgen05.fence::after_thread_sync': T('tcgen05.fence::after_thread_sync', 'Orders this thread\'s later tcgen05 operations after its preceding thread synchronization (a wait, bar.sync, ...).', '§9.7.16.11.1, §9.7.16.6.3'),
  'wgmma.mma_async': T('wgmma.mma_async.sync.aligned.mMnNkK…', 'Hopper warpgroup MMA reading its shared-memory operands asynchronously; a stage may be released only after a `wgmma.wait_group` that covers it.', '§9.7.15, §9.7.15.4'),
  'wgmma.commit_group': T('wgmma.commit_group.sync.aligned', 'Closes the current wgmma group of this warpgroup.', '§9.7.15.7.2'),
  'wgmma.wait_group': T('wgmma.wait_group.sync.aligned N', 'Waits until at most N wgmma groups are still in flight (groups complete in commit order).', '§9.7.15.7.3'),
  'cp.async': T('cp.async.ca/cg.shared.global [dst], [src], size', 'A non-bulk asynchronous copy of BYTES into DST, a generic-proxy write, in this thread\'s open cp.async-group; its data may be read only after the `cp.async.wait_group` / `wait_all` that covers it, or a wait on the barrier of a `cp.async.mbarrier.arrive` after it.', '§9.7.9.25.3.1, §9.7.9.25.3.3'),
  'cp.async.commit_group': T('cp.async.commit_group', 'Closes this thread\'s open cp.async-group (an empty group is trivially complete). Separate from the bulk groups.', '§9.7.9.25.3.2'),
  'cp.async.wait_group': T('cp.async.wait_group N', 'Waits until at most N of this thread\'s most recent committed cp.async-groups are pending (groups complete in commit order); the copies of older groups are then visible to this thread. Orders nothing but cp.async.', '§9.7.9.25.3.3'),
  'cp.async.wait_all': T('cp.async.wait_all', 'A `cp.async.commit_group` followed by `cp.async.wait_group 0`: waits until every cp.async of this thread has landed.', '§9.7.9.25.3.3'),
  'st.async': T('st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [addr], value, [bar]', 'Asynchronous store of BYTES per performing thread from registers into DST, in this CTA or a peer of the cluster, in the generic proxy; when it lands, complete_tx of the bytes on BAR, which must be in DST\'s CTA (release at cluster scope). Requires a cluster of more than one CTA.', '§9.7.9.12'),
  'red.async': T('red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.u32 [addr], value, [bar]', 'Asynchronous reduction of BYTES per performing thread into DST in a peer CTA (not the executing one), in the generic proxy; when it lands, complete_tx of the bytes on BAR in DST\'s CTA.', '§9.7.13.7'),
  'cp.async.bulk.shared::cluster': T('cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [dst], [src], size, [bar]', 'DSMEM bulk copy of BYTES from SRC (this CTA) into DST (a peer CTA), reading and writing through the async proxy (SRC written by st.shared needs `fence.proxy.async` first); when it lands, complete_tx(BYTES) on BAR in DST\'s CTA. SRC may be rewritten only once the peer\'s phase says the copy is done.', '§9.7.9.25.4.1, §9.7.9.25.2'),
  'cp.reduce.async.bulk': T('cp.reduce.async.bulk.global.shared::cta.bulk_group.add [dst], [src], size', 'Bulk reduction into global memory: an async-proxy read of SRC in this thread\'s open bulk group, like a bulk store (`cp.async.bulk.wait_group.read` before SRC is rewritten).', '§9.7.9.25.4.2, §9.7.9.27.2'),
  'cp.reduce.async.bulk.tensor': T('cp.reduce.async.bulk.tensor.Nd.global.shared::cta.add.tile.bulk_group [map, coords], [src]', 'Tensor-map bulk reduction into global memory: an async-proxy read of SRC in this thread\'s open bulk group, like a bulk store.', '§9.7.9.27.1.3, §9.7.9.27.2'),
  'cp.async.bulk.prefetch': T('cp.async.bulk.prefetch.L2.global [src], size', 'A hint to bring BYTES of global memory into L2: no effect on barriers or buffers, only issue time.', '§9.7.9.25.4.3'),
  'cp.async.bulk.prefetch.tensor': T('cp.async.bulk.prefetch.tensor.Nd.L2.global [map, coords]', 'A hint to bring a tensor-map box of BYTES into L2: no effect on barriers or buffers, only issue time.', '§9.7.9.27.1.4'),
  'cp.async.mbarrier.arrive': T('cp.async.mbarrier.arrive.shared::cta.b64 [addr]', 'Arrives on BAR once every earlier `cp.async` of this thread has landed. Pending is raised by one when it is issued, so the arrival is net zero.', '§9.7.13.15.15'),
  'cp.async.mbarrier.arrive.noinc': T('cp.async.mbarrier.arrive.noinc.shared::cta.b64 [addr]', 'Arrives on BAR once every earlier `cp.async` of this thread has landed; the arrival counts toward the phase\'s expected arrivals.', '§9.7.13.15.15'),
  'bar.sync': T('bar.sync id{, count} (barrier.sync.aligned; barrier.sync is not aligned)', 'Named barrier ID (0..15): counts the performing threads and waits until THREADS (default: every thread of the CTA) have arrived in this generation. An aligned barrier must be reached by every participating thread through the same instruction: two `bar.sync` lines of one role meeting in one generation are the `aligned-barrier` error; `barrier.sync` allows it.', '§9.7.13.1'),
  'bar.arrive': T('bar.arrive id, count', 'Counts toward named barrier ID\'s generation without waiting.', '§9.7.13.1'),
  'fence.proxy.async': T('fence.proxy.async.shared::cta', 'Orders this thread\'s generic-proxy accesses (ld/st.shared) against its async-proxy ones (TMA, bulk copies, MMA operands): needed between generic writes and an async read of the same buffer.', '§8.6, §9.7.13.4'),
  'fence.mbarrier_init': T('fence.mbarrier_init.release.cluster', 'Publishes this thread\'s earlier `mbarrier.init`s to the cluster and the async proxy (followed by a cluster barrier for other CTAs).', '§9.7.13.4, §9.7.13.15.3'),
  'barrier.cluster.arrive': T('barrier.cluster.arrive{.release|.relaxed}{.aligned}', 'The first half of the cluster-wide barrier: this CTA\'s threads arrive. `.release` (the default) releases their earlier accesses at cluster scope; `.relaxed` releases nothing unless a release fence (`fence.acq_rel.cluster`) precedes it.', '§9.7.13.3, §8.8'),
  'barrier.cluster.wait': T('barrier.cluster.wait{.acquire}{.aligned}', 'The second half of the cluster-wide barrier: waits until every non-exited thread of the cluster arrived (acquire at cluster scope).', '§9.7.13.3'),
  fence: T('fence{.acq_rel|.sc|.acquire|.release}.{cta|cluster|gpu|sys}', 'A thread fence: no effect on barriers. As a release fence it turns the relaxed arrives after it into releases, as an acquire fence the relaxed waits before it into acquires, for threads inside its scope (`.cta`: this CTA). `membar.cta/gl/sys` is `fence.sc`.', '§9.7.13.4, §8.8'),
  'ld.shared': T('ld.shared', 'A generic-proxy read of the buffer by the performing threads.', '§8.6'),
  'st.shared': T('st.shared', 'A generic-proxy write of the buffer by the performing threads.', '§8.6'),
  work: T('(no PTX instruction)', 'Busy work of CYCLES cycles: no synchronization, only time in the simulator.', '—'),
  // Values, global memory and cluster launch control (machine/ops/values.ts, clc.ts).
  'ld.global': T('ld.global.u32 r, [addr]', 'A weak load of the gmem location G (one per launch); R gets its value. A data access: unordered with a write of G by another thread it is a race.', '§9.7.9.8, §8.4'),
  'st.global': T('st.global.u32 [addr], value', 'A weak store of VALUE into the gmem location G. A data access: unordered with another access of G, it is a race.', '§9.7.9.11, §8.4'),
  'ld.acquire.gpu.global': T('ld{.relaxed|.acquire}.scope.global.u32 r, [addr]', 'A strong load of G (it never races with other strong operations on G); `.acquire` orders the later accesses after the release it reads from.', '§9.7.9.8, §8.8'),
  'st.release.gpu.global': T('st{.relaxed|.release}.scope.global.u32 [addr], value', 'A strong store of VALUE into G; `.release` orders the earlier accesses before any acquire that reads it.', '§9.7.9.11, §8.8'),
  'atom.global.cas': T('atom{.sem}{.scope}.global.cas.b32 r, [addr], compare, value', 'An atomic compare-and-swap of G: G becomes VALUE when it equals COMPARE; R gets the old value either way. A read of a location nothing initialized for this launch is `global-uninit`.', '§9.7.13.5'),
  'atom.global.add': T('atom{.sem}{.scope}.global.op.u32 r, [addr], value', 'An atomic read-modify-write of G (add, exch, min, max, inc, dec, and, or, xor); R gets the old value. A read of a location nothing initialized for this launch is `global-uninit`.', '§9.7.13.5'),
  'red.global.add': T('red{.sem}{.scope}.global.op.u32 [addr], value', 'An atomic reduction into G, without a result.', '§9.7.13.6'),
  'spin.acquire.gpu.ge': T('a loop: ld.acquire.gpu.global r, [addr]; setp; @!p bra', 'Spins on strong loads of G until it compares (eq, ne, ge, gt, le, lt) with TARGET; the machine runs it as one blocking wait, so a value that never comes is a hang (also when only a CTA that is not resident could write it).', '§9.7.9.8, §8.8'),
  'clusterlaunchcontrol.try_cancel': T('clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes.b128 [resp], [mbar]', 'Asks to cancel a cluster that has not started; the 16-byte response is written into RESP asynchronously, then complete_tx(16) on BAR. Success or failure is explored both ways. After the CTA observed a failed response, another request is undefined (`clc-after-fail`).', '§9.7.13.17'),
  'clusterlaunchcontrol.try_cancel.multicast::cluster::all': T('clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes.multicast::cluster::all.b128 [resp], [mbar]', 'As try_cancel, with the response written into RESP and complete_tx(16) on BAR in every CTA of the cluster.', '§9.7.13.17'),
  'clusterlaunchcontrol.query_cancel.is_canceled': T('ld.shared.b128 h, [resp]; clusterlaunchcontrol.query_cancel.is_canceled.pred.b128 p, h', 'Reads the response in RESP (a generic read: before the mbarrier wait it races with the response) and gives 1 if the request canceled a cluster, 0 if it failed.', '§9.7.13.18'),
  'clusterlaunchcontrol.query_cancel.get_first_ctaid': T('ld.shared.b128 h, [resp]; clusterlaunchcontrol.query_cancel.get_first_ctaid::x.b32.b128 r, h', 'Reads the response in RESP and gives the first CTA id of the canceled cluster; of a failed response it is undefined (`clc-ctaid-failed`).', '§9.7.13.18'),
  exit: T('exit', 'The role stops here. A CTA must not exit while asynchronous operations may still signal into its shared memory.', '§2.2.2'),
};

/** The text of an `mbarrier.arrive{_drop}{.expect_tx}{.noComplete}` form (the suffixes combine). */
function arriveText(name: string): OpText {
  const drop = name.includes('arrive_drop');
  const expect = name.includes('.expect_tx');
  const noComplete = name.includes('.noComplete');
  const parts: string[] = [];
  if (expect) parts.push('First adds BYTES to the phase\'s tx-count, then arrives.');
  parts.push('COUNT arrivals (default 1) per performing thread: pending goes down, and the phase completes when pending and the tx-count are both 0 (pending is then reloaded from the expected count).');
  if (drop) parts.push('It also lowers the expected count of this and every later phase by COUNT (a thread leaving the protocol).');
  if (noComplete) parts.push('It must not complete the phase: if it would, the operation is undefined.');
  parts.push('`TOK = …` keeps the token (the state before the arrive) for a token wait. An arrive releases at `.cta` scope unless `.release.cluster` is written; a remote arrive (`BAR@cta`) needs `.cluster`.');
  const sections = ['§9.7.13.15.13', ...(drop ? ['§9.7.13.15.14'] : []), ...(expect ? ['§9.7.13.15.5.1'] : []), '§9.7.13.15.7'];
  const ptx = `${name}{.release|.relaxed}{.cta|.cluster}.b64 state, [addr]${expect ? ', txCount' : ''}${noComplete ? ', count' : '{, count}'}`;
  return { ptx, meaning: parts.join(' '), sections: sections.join(', ') };
}

/** The PTX meaning of the operation named `canonical` (an {@link OpSpec} name), or undefined. */
export function opText(canonical: string): OpText | undefined {
  if (/^mbarrier\.arrive/.test(canonical)) return arriveText(canonical);
  return Object.hasOwn(TEXT, canonical) ? TEXT[canonical] : undefined;
}

/** The operation written as `mnemonic` (any accepted spelling) with its PTX meaning, or undefined for an unknown mnemonic. */
export function describeMnemonic(mnemonic: string): { spec: OpSpec; text: OpText; sem?: string; scope?: string } | undefined {
  const spec = findOp(mnemonic);
  if (!spec) return undefined;
  const text = opText(spec.name);
  if (!text) return undefined;
  const q = parseQualifiers(mnemonic);
  return { spec, text, ...(q?.sem ? { sem: q.sem } : {}), ...(q?.scope ? { scope: q.scope } : {}) };
}
