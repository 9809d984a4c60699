/**
 * Stable generic accesses and stable proxy fences, for the partial-order reduction: the
 * questions of stable.ts asked about an `ld.shared` / `st.shared` and a `fence.proxy.async`, with
 * the same forward run of the other agents while the asking agent stays put (docs/CHECK.md,
 * "Stable accesses", "Stable proxy fences").
 */
import type { MachineState } from '../machine/machine.js';
import type { Instr, OpInstr, Program } from '../machine/program.js';
import { OPC, OPS, accessesOf, pointAccess } from '../machine/ops/index.js';
import { sliceShared } from '../machine/roles.js';
import { frozenFixpoint } from './stable.js';

const OPC_BAR_SYNC = OPC['bar.sync'];
const OPC_FENCE_PROXY = OPC['fence.proxy.async'];

/**
 * Stable accesses: agent `a`'s next operation is a generic access (`ld.shared` / `st.shared`,
 * mode `rw`) of shared-memory buffer key `key` in its own CTA, no operation in flight accesses
 * bytes it overlaps in a conflicting mode (one of the two writes), and no other agent, run forward
 * as for `stableWait` (./stable.ts) while `a` stays put, reaches an operation that accesses those bytes:
 * a generic access in a conflicting mode (except a slice sibling's at the same instruction: each
 * warp its own slice, never a race), or any operation that issues an asynchronous access or reads
 * through the async proxy (whose order against a generic access decides the proxy findings).
 * Then the access commutes with every step the others can take until `a` moves: it changes only
 * `a`'s position and `a`'s own checker records (its accesses, its dirty set for the proxy
 * fences, which only `a`'s own releases publish), it enables or disables no other step, and no
 * access it could race with can come before it (so every race it is part of is found from the
 * states where it is taken: the conflicting operations in flight or ghosts there only retire
 * later). Kernels with memory values are excluded by the caller (a write there can steer a
 * reader's control flow). Taking it alone keeps every reachable hazard, deadlock and final state
 * (docs/CHECK.md, "Stable accesses").
 */
export function stableAccess(p: Program, codes: readonly Instr[][], s: MachineState, a: number, ins: OpInstr, key: number, rw: 'r' | 'w'): boolean {
  for (const o of s.inflight) {
    for (const acc of accessesOf(o)) if ((acc.rw === 'w' || rw === 'w') && p.buffersOverlap(acc.buf, key)) return false;
  }
  const touch = (x: number, op: OpInstr, f: number[]): boolean => {
    if (!op.buf && !op.reads) return false;
    const mode = pointAccess(op.opc);
    if (mode !== undefined && op.buf) {
      // A generic access: exact bytes (its key names its CTA).
      if (mode === 'r' && rw === 'r') return false;
      const k = op.buf(f);
      if (k < 0) return true;
      return p.buffersOverlap(k, key) && !(op === ins && sliceShared(p, a, x, ins.op));
    }
    return namesBytes(p, op, f, [key]);
  };
  return frozenFixpoint(p, codes, s, a, -1, () => true, -1, touch);
}

/**
 * Whether `op` (not a generic access), run on frame `f`, names bytes of the buffer keys `keys`:
 * copies, stores, MMAs and tcgen05 by their keys, and where they can reach other CTAs (a multicast
 * copy, tcgen05 with its CTA pair) by the same offsets in any CTA of the cluster. An operand that
 * faults counts as naming them.
 */
export function namesBytes(p: Program, op: OpInstr, f: number[], keys: readonly number[]): boolean {
  const per = p.buffersPerCta;
  const anyCta = op.ints.multicast !== undefined || op.op.op.startsWith('tcgen05');
  const check = (k: number) => k < 0 || (anyCta ? keys.some((x) => p.buffersOverlap(k % per, x % per)) : keys.some((x) => p.buffersOverlap(k, x)));
  if (op.buf && check(op.buf(f))) return true;
  if (op.reads) for (const r of op.reads) if (check(r(f))) return true;
  return false;
}

/**
 * Stable proxy fences: agent `a`'s next operation is `fence.proxy.async`, no generic access is
 * published without a fence now (`escaped` is false: the checker's `esc` set is empty), and no other
 * agent, run forward as for `stableWait` (./stable.ts) while `a` stays put, reaches a release (an operation
 * of sync class release, or `bar.sync`) while it holds generic accesses to async-proxy buffers not
 * followed by its own fence (`dirty(x)` now, or an `ld.shared` / `st.shared` of such a buffer on
 * the way, `tracked(key)`; an `ld.shared` only when `reads`: the checker keeps generic reads under
 * `strict` only). The checker's fence rule (detect-fences.ts) clears the fencing agent's
 * own unfenced accesses, read only by its own later releases and issues, and every published one,
 * of which there are none before `a` moves in any order: so the fence commutes with every step
 * the others can take until `a` moves, and taking it alone keeps every reachable hazard. Only for
 * a launch of one cluster (the published set spans the grid).
 */
export function stableProxyFence(p: Program, codes: readonly Instr[][], s: MachineState, a: number, escaped: boolean,
  dirty: (x: number) => boolean, tracked: (key: number) => boolean, reads: boolean): boolean {
  if (escaped || p.grid !== 1) return false;
  // Per agent: whether its run holds unfenced generic accesses (kept across rounds: a run resumed
  // in a later round goes on from where it blocked, with what it held there).
  const held = heldFor(s.agents.length);
  const begin = (x: number) => { held[x] = dirty(x) ? 1 : 0; };
  const touch = (x: number, op: OpInstr, f: number[]): boolean => {
    if (op.opc === OPC_FENCE_PROXY) held[x] = 0;
    else if (pointAccess(op.opc) !== undefined && op.buf) {
      if (!reads && pointAccess(op.opc) === 'r') return false;
      const k = op.buf(f);
      if (k < 0 || tracked(k)) held[x] = 1;
    } else if (held[x] && (OPS[op.opc]!.sync === 'release' || op.opc === OPC_BAR_SYNC)) return true;
    return false;
  };
  return frozenFixpoint(p, codes, s, a, -1, () => true, -1, touch, begin);
}

/** The per-agent flags of {@link stableProxyFence} (reused: questions do not overlap; `begin` sets each agent's before its run reads it). */
let heldScratch = new Uint8Array(16);
function heldFor(n: number): Uint8Array {
  if (heldScratch.length < n) heldScratch = new Uint8Array(Math.max(n, heldScratch.length * 2));
  return heldScratch;
}
