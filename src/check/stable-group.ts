/**
 * Stable group completions, for the partial-order reduction (docs/CHECK.md, "Stable group
 * completions"): the completion of a `wgmma.mma_async` or a bulk store (`cp.async.bulk` to global
 * memory) in flight that a wait_group waits for (the next operation of a warp of its warpgroup, or
 * of the store's issuer, is a `wgmma.wait_group` / `cp.async.bulk.wait_group` that needs its
 * group) is taken alone when nothing the rest of the kernel can do before it completes depends on
 * it.
 *
 * Such a completion ends the operation's reads of shared memory (PTX ISA §9.7.15.7: a wgmma's
 * operands may be overwritten once `wgmma.wait_group` says its group is complete; §9.7.9.27.2.2:
 * a bulk store's source once `cp.async.bulk.wait_group.read` does) and enables only the
 * wait_groups that need it (and, for a wgmma, the completion of its issuer's next one: they
 * complete in issue order); it changes no barrier and disables nothing. It is stable when, with
 * the operation kept in flight (stable.ts `inflightFixpoint`; the wait_groups that need it block):
 * - no agent of the cluster, run forward from its position, reaches an operation that writes the
 *   bytes it reads, or that issues an asynchronous access to them or reads them through the async
 *   proxy (conservative);
 * - no other operation in flight writes those bytes.
 * Then it commutes with every step the others can take before it, and since a wait_group waits
 * for it, its CTA cannot exit first (an exit with it in flight is `inflight-at-exit`). Taking it
 * alone keeps every reachable hazard, deadlock and final state.
 */
import type { AsyncOp, MachineState } from '../machine/machine.js';
import { waitGroupNeeds } from '../machine/state.js';
import { OPC, accessesOf, pointAccess } from '../machine/ops/index.js';
import type { Instr, OpInstr, Program } from '../machine/program.js';
import { inflightFixpoint } from './stable.js';
import { namesBytes } from './stable-access.js';

const OPC_WG_WAIT = OPC['wgmma.wait_group'];
const OPC_BULK_WAIT = OPC['cp.async.bulk.wait_group'];

/**
 * Whether a wait_group waits for `o` (a wgmma or a bulk store in flight): the next operation of a
 * warp of a wgmma's warpgroup (its issuer, the warpgroup's leader, or `peers`), or of a bulk
 * store's issuer, is the wait_group of its family that needs `o`'s group (PTX ISA §9.7.15.7.2,
 * §9.7.9.27.2.2: the groups older than the N most recent must be complete). An operand that
 * faults counts as needing it. False for other kinds.
 */
export function groupNeeded(s: MachineState, o: AsyncOp, codes: readonly Instr[][], peers: readonly number[] | null): boolean {
  const wg = o.kind === 'wgmma';
  if (!wg && o.kind !== 'bulk.store') return false;
  const needs = (w: number): boolean => {
    const ag = s.agents[w]!;
    if (ag.status !== 'run') return false;
    const ins = codes[w]![ag.pc]!;
    if (ins.i !== 'op' || ins.opc !== (wg ? OPC_WG_WAIT : OPC_BULK_WAIT)) return false;
    try {
      return waitGroupNeeds(wg ? ag.wgGroup : ag.bulkGroup, ins.ints.n!(ag.frame), o.group);
    } catch {
      return true;
    }
  };
  if (needs(o.agent)) return true;
  if (wg && peers) for (const w of peers) if (needs(w)) return true;
  return false;
}

/**
 * True when the completion of `o` (a wgmma or bulk store in flight) in `s` is enabled (a wgmma:
 * the issuer's oldest in flight, and every warp of its warpgroup issued it), a wait_group waits
 * for it ({@link groupNeeded}) and it is stable (see the module comment). `codes[x]`: agent x's
 * role code; `peers`: the other warps of a wgmma issuer's warpgroup.
 */
export function stableGroupOp(p: Program, codes: readonly Instr[][], s: MachineState, o: AsyncOp, peers: readonly number[] | null): boolean {
  if (o.kind === 'wgmma') {
    if (o.seq !== s.agents[o.agent]!.wgDone) return false;
    if (peers) for (const w of peers) if (s.agents[w]!.wgIssued <= o.seq) return false;
  } else if (o.kind !== 'bulk.store') return false;
  if (!groupNeeded(s, o, codes, peers)) return false;
  const reads = accessesOf(o).map((a) => a.buf);
  if (!reads.length) return false;
  const conflicts = (k: number) => reads.some((x) => p.buffersOverlap(x, k));
  for (const y of s.inflight) {
    if (y.id === o.id) continue;
    for (const acc of accessesOf(y)) if (acc.rw === 'w' && conflicts(acc.buf)) return false;
  }
  const touch = (_x: number, op: OpInstr, f: number[]): boolean => {
    if (!op.buf && !op.reads) return false;
    const mode = pointAccess(op.opc);
    if (mode !== undefined && op.buf) {
      if (mode === 'r') return false; // a generic read of bytes it reads: no race either way
      const k = op.buf(f);
      return k < 0 || conflicts(k);
    }
    return namesBytes(p, op, f, reads);
  };
  return inflightFixpoint(p, codes, s, (y) => y.id === o.id, p.agents[o.agent]!.cluster, -1, () => true, touch, null, null, o);
}
