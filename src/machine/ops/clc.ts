/**
 * Cluster launch control (PTX ISA §9.7.13.17, §9.7.13.18):
 *
 * - `clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes{.multicast::cluster::all}.b128 [resp], [mbar]`
 *   asks to cancel a cluster that has not started; asynchronously, a 16-byte response is written
 *   into `resp` through the async proxy (weak writes) and complete_tx(16) is performed on `mbar`
 *   (with `.multicast::cluster::all`: into `resp` and on `mbar` of every CTA of the cluster).
 *   Whether it succeeds is the checker's nondeterministic choice (two picks, values.ts): success
 *   hands out the first CTA id of a cluster that will not run (numbered after the CTAs the sketch
 *   runs, in the order the successes land), failure says so. The simulator takes success.
 * - `clusterlaunchcontrol.query_cancel.is_canceled` / `.get_first_ctaid` decode the response; the
 *   sketch form includes the `ld.shared.b128` of the response, so it is a generic read of `resp`:
 *   before the mbarrier wait that observes the complete_tx it races with the response's write.
 *
 * Undefined, reported: a try_cancel by a CTA that has observed a failed response (an
 * `is_canceled` query of a failed response: a query of a buffer no response has reached returns 0
 * but observed nothing): `clc-after-fail`, the agent stops; `get_first_ctaid` of a
 * failed response: `clc-ctaid-failed` (it returns 0).
 */
import { diagnostic } from '../../model/mbarrier.js';
import { DIAG } from '../../model/diagnostics.js';
import type { AsyncOp, MachineState, StepOut } from '../state.js';
import { endAccesses } from './bulk.js';
import { signal } from './mbarrier.js';
import type { AsyncDef, OpCtx, OpDef, OpK } from './types.js';
import { makePick, pointEvent } from './values.js';

import { CLC_RESPONSE_BYTES } from '../../kernel/op-limits.js';

export { CLC_RESPONSE_BYTES };

const F = 'clc';

/**
 * A try_cancel's outcome was picked (`o.count`: 1 success, 0 failure): its responses are issued,
 * one per destination CTA (`o.bytes`: 1 with multicast), all with the same answer (0: failed; else
 * the canceled cluster's first CTA id + 1).
 */
function decide(m: OpCtx, s: MachineState, o: AsyncOp, out: StepOut): boolean {
  const p = m.program;
  const v = p.values!;
  let answer = 0;
  if (o.count === 1) {
    answer = s.mem[v.clcNext]! + 1;
    s.mem[v.clcNext] = s.mem[v.clcNext]! + p.clusterSize;
  }
  const own = m.bufCta(o.buf);
  const first = p.agents[o.agent]!.cluster * p.clusterSize;
  const ranks = o.bytes === 1 ? p.clusterSize : 1;
  for (let r = 0; r < ranks; r++) {
    const cta = o.bytes === 1 ? first + r : own;
    const buf = o.buf + (cta - own) * p.buffersPerCta;
    const bar = o.bar + (cta - m.barCta(o.bar)) * p.barriersPerCta;
    m.newAsync(s, out, 'clc', o.agent, cta, bar, buf, null, CLC_RESPONSE_BYTES, CLC_RESPONSE_BYTES, 1, -1, answer, null, null, o.loc);
  }
  return true;
}

/** The pick of a try_cancel's outcome, and of a `choose` (values.ts). */
export const PICK_ASYNC: AsyncDef = makePick(decide);

/** A response in flight: written into `resp`, then complete_tx(16) on its mbarrier. */
export const CLC_ASYNC: AsyncDef = {
  kind: 'clc', family: F, label: 'try_cancel response', stream: null, bufAccess: { rw: 'w', proxy: 'async' },
  progress(m, s, o, out) {
    endAccesses(m, s, o, out, CLC_ASYNC);
    // The cell: ctaid + 1 of a success, −1 of a failure; 0 (never written) is no response at all.
    s.mem[o.buf] = o.count > 0 ? o.count : -1;
    return signal(m, s, out, o.bar, 'complete_tx', 1, 1, o.bytes, -1, o.id, o.loc, undefined) ? 'done' : 'trap';
  },
  touched: (o: AsyncOp) => o.bar,
};

/** The cluster launch control operations. */
export const CLC_OPS: readonly OpDef[] = [
  {
    op: 'clc.try_cancel', family: F, por: 'sync', sync: 'issue', issues: ['pick', 'clc'], timing: 'clc.try_cancel',
    exec(m, s, a, ins, out) {
      const f = s.agents[a]!.frame;
      const key = ins.bar!(f);
      if (key < 0) return m.keyFault(s, a, out, ins, 'barrier'), false;
      const buf = ins.buf!(f);
      if (buf < 0) return m.keyFault(s, a, out, ins, 'buffer'), false;
      const p = m.program;
      const cta = p.agents[a]!.cta;
      if (s.mem[p.values!.clcFailed + cta]) {
        m.fault(s, a, out, diagnostic(DIAG.clcAfterFail, `${ins.text}: this CTA already observed a failed try_cancel response (an is_canceled query returned 0); a later try_cancel is undefined (PTX ISA §9.7.13.17)`), ins.loc, key, buf);
        return false;
      }
      const multicast = (ins.op as OpK<'clc.try_cancel'>).multicast ? 1 : 0;
      const group = s.nextId;
      m.newAsync(s, out, 'pick', a, cta, key, buf, null, multicast, 0, 0, group, 1, null, null, ins.loc);
      m.newAsync(s, out, 'pick', a, cta, key, buf, null, multicast, 0, 0, group, 0, null, null, ins.loc);
      return true;
    },
    text: (op, t) => `clusterlaunchcontrol.try_cancel${op.multicast ? '.multicast::cluster::all' : ''} ${t.ref(op.dst)}, ${t.ref(op.bar)}`,
  } satisfies OpDef<'clc.try_cancel'>,
  {
    op: 'clc.query', family: F, por: 'sync', sync: 'access', access: 'r', timing: 'clc.query',
    exec(m, s, a, ins, out) {
      const f = s.agents[a]!.frame;
      const buf = ins.buf!(f);
      if (buf < 0) return m.keyFault(s, a, out, ins, 'buffer'), false;
      pointEvent(m, s, a, ins, out, buf, 'r');
      const p = m.program;
      const answer = s.mem[buf]!;
      const op = ins.op as OpK<'clc.query'>;
      if (op.what === 'is_canceled') {
        f[ins.dest!] = answer > 0 ? 1 : 0;
        // Only a failed response observed counts (PTX ISA §9.7.13.17); a buffer no response has
        // reached yet (a read that races with it) holds none.
        if (answer < 0) s.mem[p.values!.clcFailed + p.agents[a]!.cta] = 1;
      } else if (answer <= 0) {
        m.diag(s, out, diagnostic(DIAG.clcCtaidFailed, `${ins.text}: ${answer < 0 ? `the response in ${p.bufferName(buf)} says the request failed` : `${p.bufferName(buf)} holds no response yet`}; get_first_ctaid of a failed response is undefined (PTX ISA §9.7.13.18)`), a, -1, -1, ins.loc, buf);
        f[ins.dest!] = 0;
      } else f[ins.dest!] = answer - 1;
      return true;
    },
    text: (op, t) => `${op.dest} = clusterlaunchcontrol.query_cancel.${op.what === 'is_canceled' ? 'is_canceled' : 'get_first_ctaid'} ${t.ref(op.src)}`,
  } satisfies OpDef<'clc.query'>,
] as OpDef[];
