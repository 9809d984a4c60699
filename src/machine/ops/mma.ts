/**
 * Issuing an MMA, shared by wgmma (PTX ISA §9.7.15.5) and tcgen05.mma (§9.7.16.10): the operand
 * buffers it reads (and, for tcgen05, the TMEM accumulator it writes) until it completes.
 */
import type { OpInstr } from '../program.js';
import type { MachineState, StepOut } from '../state.js';
import { checkTmemUse } from './tmem.js';
import type { OpCtx, OpK } from './types.js';

/** Issues `ins` (tcgen05.mma or wgmma.mma_async) as one asynchronous MMA in its issuer's stream. */
export function execMma(m: OpCtx, s: MachineState, a: number, ins: OpInstr, out: StepOut): boolean {
  const ag = s.agents[a]!;
  const f = ag.frame;
  const op = ins.op;
  const rf = ins.reads!;
  const keys = m.scratchKeys; // may hold more from an earlier MMA: only the first rf.length count
  for (let j = 0; j < rf.length; j++) {
    const k = rf[j]!(f);
    if (k < 0) return m.keyFault(s, a, out, ins, 'buffer'), false;
    keys[j] = k;
  }
  const reads = keys.slice(0, rf.length);
  const tc = op.op === 'tcgen05.mma';
  const acc = tc ? ins.buf!(f) : -1;
  if (tc && acc < 0) return m.keyFault(s, a, out, ins, 'buffer'), false;
  if (tc) {
    checkTmemUse(m, s, a, ins, acc, out);
    for (const r of reads) checkTmemUse(m, s, a, ins, r, out);
  }
  const { m: mm, n, k } = (op as OpK<'tcgen05.mma'>).shape;
  if (tc && (op as OpK<'tcgen05.mma'>).pair) return issuePair(m, s, a, ins, out, acc, reads, mm * n * k);
  m.newAsync(s, out, tc ? 'tc.mma' : 'wgmma', a, m.program.agents[a]!.cta, -1, acc, reads, 2 * mm * n * k, 0, 1, tc ? -1 : ag.wgGroup, 0, null, null, ins.loc);
  return true;
}

/**
 * `tcgen05.mma.cta_group::2` (PTX ISA §9.7.16.5.1): one MMA per CTA of the issuer's pair, in the
 * issuer's tcgen05 order (so its commit tracks both), each on its CTA's tensor core: CTA c writes
 * `acc@c` from `A@c` and both CTAs' other operands. `flop2`: half the pair's FLOP (m × n × k).
 */
function issuePair(m: OpCtx, s: MachineState, a: number, ins: OpInstr, out: StepOut, acc: number, reads: number[], flop2: number): boolean {
  const p = m.program;
  const cta = m.bufCta(acc);
  const rank = cta % p.clusterSize;
  const d = ((rank ^ 1) - rank) * p.buffersPerCta; // key offset of the same buffer in the peer CTA
  const peerAcc = acc + d;
  checkTmemUse(m, s, a, ins, peerAcc, out);
  const rest = reads.slice(1);
  const both = [...rest, ...rest.map((r) => r + d)];
  m.newAsync(s, out, 'tc.mma', a, cta, -1, acc, [reads[0]!, ...both], flop2, 0, 1, -1, 0, null, null, ins.loc);
  m.newAsync(s, out, 'tc.mma', a, cta + (rank ^ 1) - rank, -1, peerAcc, [reads[0]! + d, ...both], flop2, 0, 1, -1, 0, null, null, ins.loc);
  return true;
}
