/**
 * `st.async` (PTX ISA §9.7.9.12) and `red.async` (§9.7.13.7): a non-blocking store (or reduction)
 * of registers into shared memory of a CTA of the cluster, whose completion performs complete-tx
 * of the bytes stored on an mbarrier of that same CTA. Both are performed in the generic proxy
 * (the store is a weak write, the reduction a relaxed one); the complete-tx has `.release`
 * semantics at `.cluster` scope, so a waiter that observes the phase sees the data.
 *
 * Undefined (reported as `async-store-target`, the agent stops): the destination and the mbarrier
 * in different CTAs; a cluster of one CTA (`%cluster_nctarank > 1` is required); for `red.async`,
 * a destination in the executing CTA (it must be a peer's).
 *
 * The threads performing one instruction (`per`) each store `bytes`: the machine issues one
 * asynchronous store of their total (they land together, as a warp's lanes run in lockstep).
 */
import { redSuffix } from '../../kernel/reduction.js';
import { diagnostic } from '../../model/mbarrier.js';
import { DIAG } from '../../model/diagnostics.js';
import type { OpInstr } from '../program.js';
import type { AsyncOp, MachineState, StepOut } from '../state.js';
import { endAccesses } from './bulk.js';
import { signal } from './mbarrier.js';
import type { AsyncDef, OpCtx, OpDef, OpK } from './types.js';

/**
 * Why the PTX ISA leaves a store of `ins` by agent `a` into buffer `buf` with barrier `key`
 * undefined, or null when it is defined (the conditions of the module comment; `peerOnly`: the
 * destination must be another CTA's, as for `red.async` and the shared::cluster bulk copy).
 */
export function asyncStoreProblem(m: OpCtx, a: number, ins: OpInstr, key: number, buf: number, peerOnly: boolean): string | null {
  const p = m.program;
  const info = p.agents[a]!;
  const rank = (cta: number) => cta - info.cluster * p.clusterSize;
  if (p.clusterSize < 2) return `${ins.text}: the cluster has one CTA; the instruction requires %cluster_nctarank > 1`;
  if (m.barCta(key) !== m.bufCta(buf)) {
    return `${ins.text}: its mbarrier ${p.barrierName(key)} is in CTA ${rank(m.barCta(key))} but its destination ${p.bufferName(buf)} is in CTA ${rank(m.bufCta(buf))}; both must be in one CTA`;
  }
  if (peerOnly && m.bufCta(buf) === info.cta) return `${ins.text}: its destination ${p.bufferName(buf)} is in the executing CTA; it must be another CTA of the cluster`;
  return null;
}

/** `st.async` / `red.async`: one asynchronous store of the performing threads' bytes. */
function execStore(m: OpCtx, s: MachineState, a: number, ins: OpInstr, out: StepOut, n: number): boolean {
  const f = s.agents[a]!.frame;
  const key = ins.bar!(f);
  if (key < 0) return m.keyFault(s, a, out, ins, 'barrier'), false;
  const buf = ins.buf!(f);
  if (buf < 0) return m.keyFault(s, a, out, ins, 'buffer'), false;
  const why = asyncStoreProblem(m, a, ins, key, buf, (ins.op as OpK<'st.async'>).red);
  if (why) return m.fault(s, a, out, diagnostic(DIAG.asyncStoreTarget, why, s.bars[key]), ins.loc, key, buf), false;
  const bytes = ins.ints.bytes!(f) * n;
  m.newAsync(s, out, 'st.async', a, m.bufCta(buf), key, buf, null, bytes, bytes, 1, -1, 0, null, null, ins.loc);
  return true;
}

const F = 'st.async';

/** The operations of the st.async family. */
export const STASYNC_OPS: readonly OpDef[] = [
  {
    op: 'st.async', family: F, por: 'issue', sync: 'issue', issues: ['st.async'], timing: 'st.async', exec: execStore,
    text: (op, t) => `${op.red ? `red.async${redSuffix(op.redop, op.redType)}` : 'st.async'} ${t.ref(op.dst)}, ${t.expr(op.bytes)}, ${t.ref(op.bar)}`,
  } satisfies OpDef<'st.async'>,
] as OpDef[];

/** An st.async / red.async in flight: its write lands and its complete_tx is applied in one step. */
export const ST_ASYNC_ASYNC: AsyncDef = {
  kind: 'st.async', family: F, label: 'st.async', stream: null, bufAccess: { rw: 'w', proxy: 'generic' },
  progress(m, s, o, out) {
    endAccesses(m, s, o, out, ST_ASYNC_ASYNC);
    return signal(m, s, out, o.bar, 'complete_tx', 1, 1, o.bytes, -1, o.id, o.loc, undefined) ? 'done' : 'trap';
  },
  touched: (o: AsyncOp) => o.bar,
};
