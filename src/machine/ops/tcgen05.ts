/**
 * Blackwell tensor-core operations (PTX ISA §9.7.16): `tcgen05.mma` (reads its operands and writes
 * its TMEM accumulator through the async proxy), `tcgen05.commit` (arrives on an mbarrier, or on
 * the barriers of a multicast mask, once every earlier tcgen05 operation of its issuer completed,
 * §9.7.16.6) and `tcgen05.ld` (a TMEM load of the agent together with its `tcgen05.wait::ld`).
 * tcgen05 operations complete in issue order per issuer (§9.7.16.6.1).
 *
 * Data movement (§9.7.16.8, §9.7.16.9): the asynchronous `tcgen05.ld` (sketch:
 * `tcgen05.ld.sync.aligned`) and `tcgen05.st`, retired by `tcgen05.wait::ld` / `tcgen05.wait::st`
 * (they are not in the issuer's tcgen05 order and no commit tracks them, §9.7.16.6.2.1.2);
 * `tcgen05.cp` (shared memory to TMEM) and `tcgen05.shift`, which are in the issuer's tcgen05 order
 * (pipelined with its MMAs, tracked by commit). Every TMEM access is checked against the
 * allocation state (`tmem.ts`).
 */
import { diagnostic } from '../../model/mbarrier.js';
import { DIAG } from '../../model/diagnostics.js';
import { maskRanks, ranksFrom } from '../cta-mask.js';
import type { OpInstr } from '../program.js';
import type { AsyncOp, MachineState, StepOut } from '../state.js';
import { endAccesses } from './bulk.js';
import { signal } from './mbarrier.js';
import { execMma } from './mma.js';
import { execPointAccess } from './smem.js';
import { checkLdWaited, checkTmemUse } from './tmem.js';
import type { AsyncDef, OpCtx, OpDef } from './types.js';

/** Issues `ins` as an asynchronous TMEM operation of `kind` on `ins.buf` (and `ins.reads`, for tcgen05.cp). */
function execTmemAsync(kind: 'tc.ld' | 'tc.st' | 'tc.cp' | 'tc.shift') {
  return (m: OpCtx, s: MachineState, a: number, ins: OpInstr, out: StepOut): boolean => {
    const ag = s.agents[a]!;
    const buf = ins.buf!(ag.frame);
    if (buf < 0) return m.keyFault(s, a, out, ins, 'buffer'), false;
    let reads: number[] | null = null;
    if (ins.reads) {
      reads = [];
      for (const r of ins.reads) {
        const k = r(ag.frame);
        if (k < 0) return m.keyFault(s, a, out, ins, 'buffer'), false;
        reads.push(k);
      }
    }
    checkTmemUse(m, s, a, ins, buf, out);
    if (kind === 'tc.st') checkLdWaited(m, s, a, ins, out, buf);
    const bytes = kind === 'tc.cp' && reads ? m.program.bufferOf(reads[0]!).info.bytes : m.program.bufferOf(buf).info.bytes;
    m.newAsync(s, out, kind, a, m.program.agents[a]!.cta, -1, buf, reads, bytes, 0, 1, -1, 0, null, null, ins.loc);
    if (kind === 'tc.ld') ag.tcLdUnwaited++;
    return true;
  };
}

/** True when agent `a` has no asynchronous operation of `kind` in flight. */
function noneInFlight(s: MachineState, a: number, kind: 'tc.ld' | 'tc.st'): boolean {
  for (const o of s.inflight) if (o.agent === a && o.kind === kind) return false;
  return true;
}

/** `tcgen05.commit`: an arrive in the issuer's tcgen05 stream, on one barrier or on each CTA of a multicast mask. */
function execCommit(m: OpCtx, s: MachineState, a: number, ins: OpInstr, out: StepOut): boolean {
  const p = m.program;
  const f = s.agents[a]!.frame;
  const key = ins.bar!(f);
  if (key < 0) return m.keyFault(s, a, out, ins, 'barrier'), false;
  let targets: number[] | null = null;
  if (ins.ints.multicast) {
    const sel = maskRanks(ins.ints.multicast(f), p.clusterSize);
    if (!Array.isArray(sel)) return m.fault(s, a, out, diagnostic(DIAG.multicastMask, `${ins.text}: ${sel.problem}; the commit would arrive on no barrier`), ins.loc, key), false;
    const rank = m.barCta(key) - p.agents[a]!.cluster * p.clusterSize;
    targets = ranksFrom(sel, p.agents[a]!.cta - p.agents[a]!.cluster * p.clusterSize, p.clusterSize).map((r) => key + (r - rank) * p.barriersPerCta);
  }
  m.newAsync(s, out, 'tc.commit', a, p.agents[a]!.cta, targets ? -1 : key, -1, null, 0, 0, 1, -1, 1, null, targets, ins.loc);
  return true;
}

const F = 'tcgen05';

/** The operations of the tcgen05 family. */
export const TCGEN05_OPS: readonly OpDef[] = [
  {
    op: 'tcgen05.mma', family: F, por: 'issue', sync: 'issue', issues: ['tc.mma'], timing: 'tcgen05.mma', exec: execMma,
    text: (op, t) => `tcgen05.mma${op.pair ? '.cta_group::2' : ''} ${t.ref(op.acc)}, ${op.reads.map((r) => t.ref(r)).join(', ')}`,
  } satisfies OpDef<'tcgen05.mma'>,
  {
    op: 'tcgen05.commit', family: F, por: 'issue', sync: 'release', issues: ['tc.commit'], timing: 'tcgen05.commit', exec: execCommit,
    text: (op, t) => `tcgen05.commit ${t.ref(op.bar)}${op.multicast ? `, multicast=${t.expr(op.multicast)}` : ''}`,
  } satisfies OpDef<'tcgen05.commit'>,
  {
    op: 'tcgen05.ld', family: F, por: 'sync', sync: 'access', access: 'r', timing: 'tcgen05.ld',
    exec: (m, s, a, ins, out) => {
      const buf = ins.buf!(s.agents[a]!.frame);
      if (buf >= 0) checkTmemUse(m, s, a, ins, buf, out);
      return execPointAccess(m, s, a, ins, out);
    },
    text: (op, t) => `tcgen05.ld ${t.ref(op.src)}`,
  } satisfies OpDef<'tcgen05.ld'>,
  {
    op: 'tcgen05.ld.async', family: F, por: 'issue', sync: 'issue', issues: ['tc.ld'], timing: 'tcgen05.ld.async', exec: execTmemAsync('tc.ld'),
    text: (op, t) => `tcgen05.ld.sync.aligned ${t.ref(op.src)}`,
  } satisfies OpDef<'tcgen05.ld.async'>,
  {
    op: 'tcgen05.st', family: F, por: 'issue', sync: 'issue', issues: ['tc.st'], timing: 'tcgen05.st', exec: execTmemAsync('tc.st'),
    text: (op, t) => `tcgen05.st ${t.ref(op.dst)}`,
  } satisfies OpDef<'tcgen05.st'>,
  {
    op: 'tcgen05.wait::ld', family: F, por: 'sync', sync: 'group-wait', timing: 'tcgen05.wait::ld',
    enabled: (_m, s, a) => noneInFlight(s, a, 'tc.ld'),
    exec: (_m, s, a) => ((s.agents[a]!.tcLdUnwaited = 0), true),
    text: (op) => op.op,
  } satisfies OpDef<'tcgen05.wait::ld'>,
  {
    op: 'tcgen05.wait::st', family: F, por: 'sync', sync: 'group-wait', timing: 'tcgen05.wait::st',
    enabled: (_m, s, a) => noneInFlight(s, a, 'tc.st'),
    exec: () => true,
    text: (op) => op.op,
  } satisfies OpDef<'tcgen05.wait::st'>,
  {
    op: 'tcgen05.cp', family: F, por: 'issue', sync: 'issue', issues: ['tc.cp'], timing: 'tcgen05.cp', exec: execTmemAsync('tc.cp'),
    text: (op, t) => `tcgen05.cp ${t.ref(op.dst)}, ${t.ref(op.src)}`,
  } satisfies OpDef<'tcgen05.cp'>,
  {
    op: 'tcgen05.shift', family: F, por: 'issue', sync: 'issue', issues: ['tc.shift'], timing: 'tcgen05.shift', exec: execTmemAsync('tc.shift'),
    text: (op, t) => `tcgen05.shift ${t.ref(op.buf)}`,
  } satisfies OpDef<'tcgen05.shift'>,
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

/**
 * An asynchronous TMEM operation in flight: `tcgen05.ld` (reads TMEM) and `tcgen05.st` (writes it)
 * complete in any order and are retired by `tcgen05.wait::ld` / `::st`; `tcgen05.cp` (reads shared
 * memory through the async proxy, writes TMEM) and `tcgen05.shift` (rewrites TMEM) complete in
 * their issuer's tcgen05 order.
 */
function tmemAsync(kind: 'tc.ld' | 'tc.st' | 'tc.cp' | 'tc.shift', label: string, rw: 'r' | 'w', inOrder: boolean): AsyncDef {
  const d: AsyncDef = {
    kind, family: F, label, stream: inOrder ? 'tc' : null, bufAccess: { rw, proxy: 'async' },
    progress(m, s, o, out) {
      endAccesses(m, s, o, out, d);
      out.other = true;
      return 'done';
    },
    touched: () => -1,
  };
  if (inOrder) d.enabled = (s, o) => o.seq === s.agents[o.agent]!.tcDone;
  return d;
}

export const TC_LD_ASYNC = tmemAsync('tc.ld', 'tcgen05.ld', 'r', false);
export const TC_ST_ASYNC = tmemAsync('tc.st', 'tcgen05.st', 'w', false);
export const TC_CP_ASYNC = tmemAsync('tc.cp', 'tcgen05.cp', 'w', true);
export const TC_SHIFT_ASYNC = tmemAsync('tc.shift', 'tcgen05.shift', 'w', true);
