/**
 * TMA and bulk copies (PTX ISA §9.7.9.25.4): `cp.async.bulk{.tensor}` loads into shared memory
 * (plain, multicast, credited in chunks with `complete_tx` on the destination's mbarrier), bulk
 * stores out of shared memory and their bulk async-groups (`cp.async.bulk.commit_group`,
 * `cp.async.bulk.wait_group`, §9.7.9.27.2); `cp.async.bulk.shared::cluster.shared::cta`, a DSMEM
 * copy from this CTA's shared memory into a peer's, crediting the peer's mbarrier (§9.7.9.25.4.1);
 * `cp.reduce.async.bulk` shared → global, a member of the bulk groups like a store (§9.7.9.25.4.2);
 * and the bulk prefetches, which change nothing but time (§9.7.9.25.4.3, §9.7.9.27.1.4). Every
 * `cp{.reduce}.async.bulk` accesses shared memory in the async proxy (§9.7.9.25.2).
 */
import { redSuffix } from '../../kernel/reduction.js';
import { diagnostic } from '../../model/mbarrier.js';
import { DIAG } from '../../model/diagnostics.js';
import { maskRanks, ranksFrom } from '../cta-mask.js';
import type { OpInstr } from '../program.js';
import { nextCredit, pendingAsyncGroups, type AsyncOp, type MachineState, type StepOut } from '../state.js';
import { signal } from './mbarrier.js';
import { asyncStoreProblem } from './stasync.js';
import type { AsyncDef, OpCtx, OpDef } from './types.js';

/** `cp.async.bulk{.tensor}` global → shared memory: one TMA copy per destination CTA (and per thread performing it). */
function execCopy(m: OpCtx, s: MachineState, a: number, ins: OpInstr, out: StepOut, n: number): boolean {
  const p = m.program;
  const info = p.agents[a]!;
  const f = s.agents[a]!.frame;
  const loc = ins.loc;
  const key = ins.bar!(f);
  if (key < 0) return m.keyFault(s, a, out, ins, 'barrier'), false;
  const buf = ins.buf!(f);
  if (buf < 0) return m.keyFault(s, a, out, ins, 'buffer'), false;
  const bytes = ins.ints.bytes!(f);
  if (bytes <= 0 || bytes % 16 !== 0) {
    return m.fault(s, a, out, diagnostic(DIAG.bulkSize, `${ins.text}: ${bytes} bytes is not a positive multiple of 16`), loc, key), false;
  }
  const chunks = Math.max(1, Math.min(ins.ints.chunks ? ins.ints.chunks(f) : 1, bytes / 16));
  const clusterBase = info.cluster * p.clusterSize;
  const barRank = m.barCta(key) - clusterBase;
  const bufRank = m.bufCta(buf) - clusterBase;
  // Destination ranks: the buffer's, or (multicast) every rank the mask selects, from the issuer's rank up (ranksFrom).
  let ranks: readonly number[];
  if (ins.ints.multicast) {
    const sel = maskRanks(ins.ints.multicast(f), p.clusterSize);
    if (!Array.isArray(sel)) return m.fault(s, a, out, diagnostic(DIAG.multicastMask, `${ins.text}: ${sel.problem}; the copy would deliver nothing`), loc, key), false;
    ranks = ranksFrom(sel, info.cta - clusterBase, p.clusterSize);
  } else {
    if (barRank !== bufRank) {
      // Without multicast the mbarrier must be in the destination's CTA (PTX ISA §9.7.9.25.4.1,
      // §9.7.9.27.1.2 with .cta_group::1): where the bytes would be credited is undefined.
      return m.fault(s, a, out, diagnostic(DIAG.tmaBarrierCta,
        `${ins.text}: its mbarrier ${p.barrierName(key)} is in CTA ${barRank} but its destination ${p.bufferName(buf)} is in CTA ${bufRank}; without multicast the mbarrier must be in the destination's CTA`, s.bars[key]), loc, key), false;
    }
    ranks = [bufRank];
  }
  for (let j = 0; j < n; j++) {
    for (const r of ranks) {
      // Multicast: data and complete_tx land at the same CTA-relative offsets in each destination (PTX ISA §9.7.9.25.4.1).
      const dBar = key + (r - barRank) * p.barriersPerCta;
      const dBuf = buf + (r - bufRank) * p.buffersPerCta;
      m.newAsync(s, out, 'tma', a, clusterBase + r, dBar, dBuf, null, bytes, bytes, chunks, -1, 0, null, null, loc);
    }
  }
  return true;
}

/** `cp.async.bulk` shared → global: a store in the issuer's open bulk group. */
function execStore(m: OpCtx, s: MachineState, a: number, ins: OpInstr, out: StepOut, n: number): boolean {
  const ag = s.agents[a]!;
  const buf = ins.buf!(ag.frame);
  if (buf < 0) return m.keyFault(s, a, out, ins, 'buffer'), false;
  const bytes = ins.ints.bytes!(ag.frame);
  for (let j = 0; j < n; j++) m.newAsync(s, out, 'bulk.store', a, m.program.agents[a]!.cta, -1, buf, null, bytes, bytes, 1, ag.bulkGroup, 0, null, null, ins.loc);
  return true;
}

/**
 * `cp.async.bulk.shared::cluster.shared::cta`: one copy per performing thread from `src` (this
 * CTA) into `dst` (a peer CTA), complete_tx on `bar`, which must be in `dst`'s CTA.
 */
function execDsmem(m: OpCtx, s: MachineState, a: number, ins: OpInstr, out: StepOut, n: number): boolean {
  const f = s.agents[a]!.frame;
  const loc = ins.loc;
  const key = ins.bar!(f);
  if (key < 0) return m.keyFault(s, a, out, ins, 'barrier'), false;
  const dst = ins.buf!(f);
  if (dst < 0) return m.keyFault(s, a, out, ins, 'buffer'), false;
  const src = ins.reads![0]!(f);
  if (src < 0) return m.keyFault(s, a, out, ins, 'buffer'), false;
  const bytes = ins.ints.bytes!(f);
  if (bytes <= 0 || bytes % 16 !== 0) {
    return m.fault(s, a, out, diagnostic(DIAG.bulkSize, `${ins.text}: ${bytes} bytes is not a positive multiple of 16`), loc, key), false;
  }
  const info = m.program.agents[a]!;
  const why = m.bufCta(src) !== info.cta ? `${ins.text}: its source ${m.program.bufferName(src)} is not in the executing CTA (.shared::cta)` : asyncStoreProblem(m, a, ins, key, dst, true);
  if (why) return m.fault(s, a, out, diagnostic(DIAG.asyncStoreTarget, why, s.bars[key]), loc, key, dst), false;
  for (let j = 0; j < n; j++) m.newAsync(s, out, 'dsmem', a, m.bufCta(dst), key, dst, [src], bytes, bytes, 1, -1, 0, null, null, loc);
  return true;
}

/** `cp.reduce.async.bulk` shared → global: like a store, a read of `src` in the issuer's open bulk group. */
function execReduce(m: OpCtx, s: MachineState, a: number, ins: OpInstr, out: StepOut, n: number): boolean {
  return execStore(m, s, a, ins, out, n);
}

const F = 'bulk';

/** The operations of the TMA and bulk-copy family. */
export const BULK_OPS: readonly OpDef[] = [
  {
    op: 'cp.async.bulk', family: F, por: 'issue', sync: 'issue', issues: ['tma'], timing: 'cp.async.bulk', exec: execCopy,
    text: (op, t) => `cp.async.bulk${op.tensor ? '.tensor' : ''} ${t.ref(op.dst)}, ${t.expr(op.bytes)}, ${t.ref(op.bar)}${op.multicast ? `, multicast=${t.expr(op.multicast)}` : ''}`,
  } satisfies OpDef<'cp.async.bulk'>,
  {
    op: 'cp.async.bulk.store', family: F, por: 'issue', sync: 'issue', issues: ['bulk.store'], timing: 'cp.async.bulk.store', exec: execStore,
    text: (op, t) => `cp.async.bulk.store ${t.ref(op.src)}, ${t.expr(op.bytes)}`,
  } satisfies OpDef<'cp.async.bulk.store'>,
  {
    op: 'cp.async.bulk.shared::cluster', family: F, por: 'issue', sync: 'issue', issues: ['dsmem'], timing: 'cp.async.bulk.shared::cluster', exec: execDsmem,
    text: (op, t) => `cp.async.bulk.shared::cluster ${t.ref(op.dst)}, ${t.ref(op.src)}, ${t.expr(op.bytes)}, ${t.ref(op.bar)}`,
  } satisfies OpDef<'cp.async.bulk.shared::cluster'>,
  {
    op: 'cp.reduce.async.bulk', family: F, por: 'issue', sync: 'issue', issues: ['bulk.store'], timing: 'cp.reduce.async.bulk', exec: execReduce,
    text: (op, t) => `cp.reduce.async.bulk${op.tensor ? '.tensor' : ''}${redSuffix(op.redop, op.redType)} ${t.ref(op.src)}, ${t.expr(op.bytes)}`,
  } satisfies OpDef<'cp.reduce.async.bulk'>,
  {
    // A hint: nothing the machine tracks changes (its cost is in the timing table).
    op: 'cp.async.bulk.prefetch', family: F, por: 'local', sync: 'local', timing: 'cp.async.bulk.prefetch', exec: () => true,
    text: (op, t) => `cp.async.bulk.prefetch${op.tensor ? '.tensor' : ''} ${t.expr(op.bytes)}`,
  } satisfies OpDef<'cp.async.bulk.prefetch'>,
  {
    op: 'cp.async.bulk.commit_group', family: F, por: 'local', sync: 'local', timing: 'cp.async.bulk.commit_group',
    exec: (_m, s, a) => (s.agents[a]!.bulkGroup++, true),
    text: (op) => op.op,
  } satisfies OpDef<'cp.async.bulk.commit_group'>,
  {
    op: 'cp.async.bulk.wait_group', family: F, por: 'sync', sync: 'group-wait', timing: 'cp.async.bulk.wait_group', opEventN: true,
    enabled: (_m, s, a, ins, ag) => pendingAsyncGroups(s, a, 'bulk.store') <= ins.ints.n!(ag.frame),
    exec: () => true,
    text: (op, t) => `cp.async.bulk.wait_group${op.read ? '.read' : ''} ${t.expr(op.n)}`,
  } satisfies OpDef<'cp.async.bulk.wait_group'>,
] as OpDef[];

/** A TMA load in flight: each step credits one chunk of its bytes with `complete_tx`. */
export const TMA_ASYNC: AsyncDef = {
  kind: 'tma', family: F, label: 'TMA copy', stream: null, bufAccess: { rw: 'w', proxy: 'async' },
  progress(m, s, o, out) {
    // One partial credit; the H200 credits a copy's bytes in 16-byte units, grouped differently on each run (docs/HARDWARE.md, Conformance vectors).
    const chunk = nextCredit(o);
    o.left -= chunk;
    o.chunks--;
    const done = o.left <= 0;
    if (done) { m.emitted(s); if (out.events && !out.sparse) out.events.push({ e: 'access', t: s.now, buf: o.buf, rw: 'w', proxy: 'async', edge: 'end', agent: -1, async: o.id, loc: o.loc }); }
    if (!signal(m, s, out, o.bar, 'complete_tx', 1, 1, chunk, -1, o.id, o.loc, undefined)) return 'trap';
    return done ? 'done' : 'more';
  },
  touched: (o: AsyncOp) => o.bar,
};

/**
 * Ends the accesses of a completed copy, store or MMA: its `buf` (mode and proxy from `d`) and its
 * operand reads (async proxy). Shared by every kind that holds buffers until it completes.
 */
export function endAccesses(m: OpCtx, s: MachineState, o: AsyncOp, out: StepOut, d: AsyncDef): void {
  if (o.buf >= 0) {
    const rw = d.bufAccess ? d.bufAccess.rw : 'w';
    const proxy = d.bufAccess ? d.bufAccess.proxy : 'async';
    { m.emitted(s); if (out.events && !out.sparse) out.events.push({ e: 'access', t: s.now, buf: o.buf, rw, proxy, edge: 'end', agent: -1, async: o.id, loc: o.loc }); }
  }
  if (o.reads) for (const r of o.reads) { m.emitted(s); if (out.events && !out.sparse) out.events.push({ e: 'access', t: s.now, buf: r, rw: 'r', proxy: 'async', edge: 'end', agent: -1, async: o.id, loc: o.loc }); }
}

/** A bulk store in flight: completes in one step (its group may then retire). */
export const BULK_STORE_ASYNC: AsyncDef = {
  kind: 'bulk.store', family: F, label: 'bulk store', stream: null, bufAccess: { rw: 'r', proxy: 'async' },
  progress(m, s, o, out) {
    endAccesses(m, s, o, out, BULK_STORE_ASYNC);
    out.other = true;
    return 'done';
  },
  touched: () => -1,
};

/**
 * A DSMEM bulk copy in flight: reads its source and writes the peer's destination through the
 * async proxy, then credits all its bytes with one complete_tx on the peer's barrier.
 */
export const DSMEM_ASYNC: AsyncDef = {
  kind: 'dsmem', family: F, label: 'DSMEM bulk copy', stream: null, bufAccess: { rw: 'w', proxy: 'async' },
  progress(m, s, o, out) {
    endAccesses(m, s, o, out, DSMEM_ASYNC);
    return signal(m, s, out, o.bar, 'complete_tx', 1, 1, o.bytes, -1, o.id, o.loc, undefined) ? 'done' : 'trap';
  },
  touched: (o: AsyncOp) => o.bar,
};
