/**
 * Blackwell tensor-core operations (PTX ISA §9.7.16): `tcgen05.mma` (reads its operands and writes
 * its TMEM accumulator through the async proxy), `tcgen05.commit` (arrives on an mbarrier, or on
 * the barriers of a multicast mask, once every earlier tcgen05 operation of its issuer completed,
 * §9.7.16.6) and `tcgen05.ld` (a TMEM load of the agent). tcgen05 operations complete in issue
 * order per issuer (§9.7.16.6.1).
 */
import type { OpInstr } from '../program.js';
import type { AsyncOp, MachineState, StepOut } from '../state.js';
import { endAccesses } from './bulk.js';
import { signal } from './mbarrier.js';
import { execMma } from './mma.js';
import { execPointAccess } from './smem.js';
import type { AsyncDef, OpCtx, OpDef } from './types.js';

/** `tcgen05.commit`: an arrive in the issuer's tcgen05 stream, on one barrier or on each CTA of a multicast mask. */
function execCommit(m: OpCtx, s: MachineState, a: number, ins: OpInstr, out: StepOut): boolean {
  const p = m.program;
  const f = s.agents[a]!.frame;
  const key = ins.bar!(f);
  if (key < 0) return m.keyFault(s, a, out, ins, 'barrier'), false;
  let targets: number[] | null = null;
  if (ins.ints.multicast) {
    const mask = ins.ints.multicast(f);
    const base = p.agents[a]!.cluster * p.clusterSize;
    const rank = m.barCta(key) - base;
    targets = [];
    for (let r = 0; r < p.clusterSize; r++) if (mask & (1 << r)) targets.push(key + (r - rank) * p.barriersPerCta);
  }
  m.newAsync(s, out, 'tc.commit', a, p.agents[a]!.cta, targets ? -1 : key, -1, null, 0, 0, 1, -1, 1, null, targets, ins.loc);
  return true;
}

const F = 'tcgen05';

/** The operations of the tcgen05 family. */
export const TCGEN05_OPS: readonly OpDef[] = [
  {
    op: 'tcgen05.mma', family: F, por: 'issue', sync: 'issue', issues: ['tc.mma'], timing: 'tcgen05.mma', exec: execMma,
    text: (op, t) => `tcgen05.mma ${t.ref(op.acc)}, ${op.reads.map((r) => t.ref(r)).join(', ')}`,
  } satisfies OpDef<'tcgen05.mma'>,
  {
    op: 'tcgen05.commit', family: F, por: 'issue', sync: 'release', issues: ['tc.commit'], timing: 'tcgen05.commit', exec: execCommit,
    text: (op, t) => `tcgen05.commit ${t.ref(op.bar)}${op.multicast ? `, multicast=${t.expr(op.multicast)}` : ''}`,
  } satisfies OpDef<'tcgen05.commit'>,
  {
    op: 'tcgen05.ld', family: F, por: 'sync', sync: 'access', access: 'r', timing: 'tcgen05.ld', exec: execPointAccess,
    text: (op, t) => `tcgen05.ld ${t.ref(op.src)}`,
  } satisfies OpDef<'tcgen05.ld'>,
] as OpDef[];

/** A tcgen05.mma in flight: completes in its issuer's order. */
export const TC_MMA_ASYNC: AsyncDef = {
  kind: 'tc.mma', family: F, label: 'tcgen05.mma', stream: 'tc', bufAccess: { rw: 'w', proxy: 'async' },
  enabled: (s, o) => o.seq === s.agents[o.agent]!.tcDone,
  progress(m, s, o, out) {
    endAccesses(m, s, o, out, TC_MMA_ASYNC);
    return 'done';
  },
  touched: () => -1,
};

/** A tcgen05.commit in flight: arrives once on its barrier (or each multicast target) after the issuer's earlier tcgen05 operations. */
export const TC_COMMIT_ASYNC: AsyncDef = {
  kind: 'tc.commit', family: F, label: 'tcgen05.commit', stream: 'tc', bufAccess: null,
  enabled: (s, o) => o.seq === s.agents[o.agent]!.tcDone,
  progress(m, s, o, out) {
    if (!o.targets) {
      if (!signal(m, s, out, o.bar, 'arrive', 1, 1, 0, -1, o.id, o.loc, undefined)) return 'trap';
    } else for (const bar of o.targets) if (!signal(m, s, out, bar, 'arrive', 1, 1, 0, -1, o.id, o.loc, undefined)) return 'trap';
    return 'done';
  },
  touched: (o: AsyncOp) => (o.targets ? -2 : o.bar),
};
