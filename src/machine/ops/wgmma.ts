/**
 * Hopper warpgroup MMA (PTX ISA §9.7.15): `wgmma.mma_async` (reads its shared-memory operands
 * through the async proxy until it completes; wgmma operations complete in issue order per
 * issuer), `wgmma.commit_group` and `wgmma.wait_group N` (§9.7.15.7).
 */
import { pendingAsyncGroups } from '../state.js';
import { endAccesses } from './bulk.js';
import { execMma } from './mma.js';
import type { AsyncDef, OpDef } from './types.js';

const F = 'wgmma';

/** The operations of the wgmma family. */
export const WGMMA_OPS: readonly OpDef[] = [
  {
    op: 'wgmma.mma_async', family: F, por: 'issue', sync: 'issue', issues: ['wgmma'], timing: 'wgmma.mma_async',
    // Warpgroup-collective: the leader warp starts the MMA; the other warps count their issue (AgentInfo.wgLeader).
    exec: (m, s, a, ins, out) => (m.program.agents[a]!.wgLeader === a ? execMma(m, s, a, ins, out) : (s.agents[a]!.wgIssued++, true)),
    text: (op, t) => `wgmma.mma_async ${op.reads.map((r) => t.ref(r)).join(', ')}`,
  } satisfies OpDef<'wgmma.mma_async'>,
  {
    op: 'wgmma.commit_group', family: F, por: 'local', sync: 'local', timing: 'wgmma.commit_group',
    exec: (_m, s, a) => (s.agents[a]!.wgGroup++, true),
    text: (op) => op.op,
  } satisfies OpDef<'wgmma.commit_group'>,
  {
    op: 'wgmma.wait_group', family: F, por: 'sync', sync: 'group-wait', timing: 'wgmma.wait_group', opEventN: true,
    enabled: (m, s, a, ins, ag) => pendingAsyncGroups(s, a, 'wgmma', m.program.agents[a]!.wgLeader) <= ins.ints.n!(ag.frame),
    exec: () => true,
    text: (op, t) => `wgmma.wait_group ${t.expr(op.n)}`,
  } satisfies OpDef<'wgmma.wait_group'>,
] as OpDef[];

/** A wgmma in flight: completes in its issuer's order (its group may then retire). */
export const WGMMA_ASYNC: AsyncDef = {
  kind: 'wgmma', family: F, label: 'wgmma', stream: 'wg', bufAccess: null,
  enabled: (s, o, m) => {
    if (o.seq !== s.agents[o.agent]!.wgDone) return false;
    const peers = m.wgPeers[o.agent];
    if (peers) for (const w of peers) if (s.agents[w]!.wgIssued <= o.seq) return false;
    return true;
  },
  progress(m, s, o, out) {
    endAccesses(m, s, o, out, WGMMA_ASYNC);
    out.other = true;
    return 'done';
  },
  touched: () => -1,
};
