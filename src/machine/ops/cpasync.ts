/**
 * Ampere `cp.async` (PTX ISA §9.7.9.25.3.1: a non-bulk copy global → shared memory; "cp.async is
 * treated as a weak memory operation performed in the generic proxy", so its writes are
 * generic-proxy writes and need no proxy fence before generic reads), its completion mechanisms:
 * the per-thread cp.async-groups (`cp.async.commit_group` §9.7.9.25.3.2, `cp.async.wait_group N` /
 * `cp.async.wait_all` §9.7.9.25.3.3) and `cp.async.mbarrier.arrive{.noinc}` (§9.7.13.15.15: an
 * asynchronous arrive that takes effect once every earlier cp.async of the thread completed).
 *
 * Groups are per agent (a warp's lanes run in lockstep, so each lane's groups advance together):
 * a cp.async belongs to the agent's open group (`AgentState.cpGroup` at issue); wait_group N is
 * enabled once at most N of the agent's committed groups still have a copy in flight. Writes
 * become visible to the issuer only after the wait that covers them (§9.7.9.25.3.3): a read of the
 * destination before it is a race with the copy still in flight.
 */
import { cpAsyncArriveIssue, diagnostic, TRAP } from '../../model/mbarrier.js';
import { DIAG, type Diagnostic } from '../../model/diagnostics.js';
import type { OpInstr } from '../program.js';
import { pendingAsyncGroups, type AsyncOp, type MachineState, type StepOut } from '../state.js';
import { endAccesses } from './bulk.js';
import { signal } from './mbarrier.js';
import type { AsyncDef, OpCtx, OpDef, OpK } from './types.js';

/** `cp.async.mbarrier.arrive`: the pending-count increment now (unless `.noinc`), the arrive once the copies landed. */
function execArrive(m: OpCtx, s: MachineState, a: number, ins: OpInstr, out: StepOut, n: number): boolean {
  const p = m.program;
  const info = p.agents[a]!;
  const loc = ins.loc;
  const key = ins.bar!(s.agents[a]!.frame);
  if (key < 0) return m.keyFault(s, a, out, ins, 'barrier'), false;
  if (m.barCta(key) !== info.cta) {
    return m.fault(s, a, out, diagnostic(DIAG.remoteWait, `cp.async.mbarrier.arrive on ${p.barrierName(key)}, a barrier of another CTA`, s.bars[key]), loc, key), false;
  }
  const diags: Diagnostic[] = [];
  for (let j = 0; j < n; j++) if (cpAsyncArriveIssue(s.bars[key]!, (ins.op as OpK<'cp.async.mbarrier.arrive'>).noinc, diags) === TRAP) break;
  if (diags.length && m.flush(s, out, diags, a, -1, key, loc)) return false;
  m.newAsync(s, out, 'cpa.arrive', a, info.cta, key, -1, null, 0, 0, 1, -1, n, null, null, loc);
  return true;
}

const F = 'cp.async';

/** The operations of the cp.async family. */
export const CPASYNC_OPS: readonly OpDef[] = [
  {
    op: 'cp.async', family: F, por: 'issue', sync: 'issue', issues: ['cp.async'], timing: 'cp.async',
    exec(m, s, a, ins, out) {
      const f = s.agents[a]!.frame;
      const buf = ins.buf!(f);
      if (buf < 0) return m.keyFault(s, a, out, ins, 'buffer'), false;
      const bytes = ins.ints.bytes!(f);
      m.newAsync(s, out, 'cp.async', a, m.program.agents[a]!.cta, -1, buf, null, bytes, bytes, 1, s.agents[a]!.cpGroup, 0, null, null, ins.loc);
      return true;
    },
    text: (op, t) => `cp.async ${t.ref(op.dst)}, ${t.expr(op.bytes)}`,
  } satisfies OpDef<'cp.async'>,
  {
    op: 'cp.async.commit_group', family: F, por: 'local', sync: 'local', timing: 'cp.async.commit_group',
    exec: (_m, s, a) => (s.agents[a]!.cpGroup++, true),
    text: (op) => op.op,
  } satisfies OpDef<'cp.async.commit_group'>,
  {
    // wait_all = commit_group; wait_group 0 (§9.7.9.25.3.3): enabled once no cp.async of the agent is in flight.
    op: 'cp.async.wait_group', family: F, por: 'sync', sync: 'group-wait', timing: 'cp.async.wait_group', opEventN: true,
    enabled: (_m, s, a, ins, ag) => (ins.op as OpK<'cp.async.wait_group'>).all ? !cpInFlight(s, a) : pendingAsyncGroups(s, a, 'cp.async') <= ins.ints.n!(ag.frame),
    exec(_m, s, a, ins) {
      if ((ins.op as OpK<'cp.async.wait_group'>).all) s.agents[a]!.cpGroup++;
      return true;
    },
    text: (op, t) => (op.all ? 'cp.async.wait_all' : `cp.async.wait_group ${t.expr(op.n)}`),
  } satisfies OpDef<'cp.async.wait_group'>,
  {
    op: 'cp.async.mbarrier.arrive', family: F, por: 'sync', sync: 'release', touchesBar: true, issues: ['cpa.arrive'], timing: 'cp.async.mbarrier.arrive', exec: execArrive,
    text: (op, t) => `cp.async.mbarrier.arrive${op.noinc ? '.noinc' : ''} ${t.ref(op.bar)}`,
  } satisfies OpDef<'cp.async.mbarrier.arrive'>,
] as OpDef[];

/** Whether agent `a` has a cp.async copy in flight. */
function cpInFlight(s: MachineState, a: number): boolean {
  for (const o of s.inflight) if (o.agent === a && o.kind === 'cp.async') return true;
  return false;
}

/** A cp.async copy in flight: lands in one step (its group may then retire). */
export const CP_ASYNC_ASYNC: AsyncDef = {
  kind: 'cp.async', family: F, label: 'cp.async', stream: null, bufAccess: { rw: 'w', proxy: 'generic' },
  progress(m, s, o, out) {
    endAccesses(m, s, o, out, CP_ASYNC_ASYNC);
    out.other = true; // a cp.async.wait_group may proceed
    return 'done';
  },
  touched: () => -1,
};

/** The asynchronous arrive of cp.async.mbarrier.arrive: enabled once its thread's earlier cp.async copies landed. */
export const CPA_ARRIVE_ASYNC: AsyncDef = {
  kind: 'cpa.arrive', family: F, label: 'cp.async.mbarrier.arrive', stream: null, bufAccess: null,
  enabled(s, o) {
    for (const x of s.inflight) {
      if (x.id >= o.id) break;
      if (x.agent === o.agent && x.kind === 'cp.async') return false;
    }
    return true;
  },
  progress(m, s, o, out) {
    return signal(m, s, out, o.bar, 'arrive', o.count, 1, 0, -1, o.id, o.loc, undefined) ? 'done' : 'trap';
  },
  touched: (o: AsyncOp) => o.bar,
};
