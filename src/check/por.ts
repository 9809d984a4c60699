/**
 * The partial-order reduction's independence facts (docs/CHECK.md states the argument in full).
 *
 * From every successor, forced steps (single-transition ample sets) are applied in a chain until
 * none is left; intermediate states are hashed into the visited set (so other paths stop there)
 * but never stored or expanded. A forced step is
 *   - an agent's `local` step (work, fences, commit_group) or `issue` step (TMA, bulk store, MMA,
 *     commit, cp.async, remote arrive: only starts an async op), unless it ends the agent — the
 *     class each operation module declares (`OpDef.por`), read per pc by `analysis.ts`;
 *   - a tcgen05.mma completion (its accesses stay visible as a ghost until a later commit of its
 *     issuer lands);
 *   - a TMA landing that cannot complete its phase (pending 0, bytes left after it, no direct
 *     expect_tx/complete_tx on that barrier array, no remote signal to it in flight, and
 *     {@link landingsCommute}); its write stays visible as a ghost until the phase completes.
 * Independence: a forced step commutes with every other enabled transition (C1: it touches only
 * its actor's record, the in-flight list by push or its own entry, and a barrier no other enabled
 * step can complete), and is invisible to the hazards (C2): accesses it starts or ends stay
 * visible (in flight or as ghosts). Chains are finite (C3: each forced step consumes an operation
 * or a credit). The search (`search.ts`) applies the rules; `options.por: false` switches them off.
 */
import type { MachineState } from '../machine/machine.js';
import type { Program } from '../machine/program.js';
import type { SrcLoc } from '../kernel/ir.js';

/**
 * True when no proper subset of the TMA credits in flight to barrier `bar` sums to `tx`: then the
 * phase can complete only once all of them have landed (or never), whatever their order, so
 * taking one landing alone loses no early completion. Conservative (false) with partial credits
 * (chunks) or more than 12 copies in flight.
 */
export function landingsCommute(s: MachineState, bar: number, tx: number): boolean {
  const credits = CREDITS;
  let n = 0;
  for (const y of s.inflight) {
    if (y.kind !== 'tma' || y.bar !== bar) continue;
    if (y.chunks > 1 || n >= 12) return false;
    credits[n++] = y.left;
  }
  const all = (1 << n) - 1;
  for (let mask = 1; mask < all; mask++) {
    let sum = 0;
    for (let i = 0; i < n; i++) if (mask & (1 << i)) sum += credits[i]!;
    if (sum === tx) return false;
  }
  return true;
}

/** Scratch of {@link landingsCommute}. */
const CREDITS = new Float64Array(12);

/** Where the kernel registers tx bytes on the barrier array of `bar` (expect_tx, arrive.expect_tx). */
export function txSites(p: Program, bar: number): { loc: SrcLoc; text: string }[] {
  const name = p.barrierOf(bar).info.name;
  const out: { loc: SrcLoc; text: string }[] = [];
  for (const rc of p.roles) {
    for (const ins of rc.code) {
      if (ins.i !== 'op') continue;
      const op = ins.op;
      if ((op.op === 'mbarrier.expect_tx' || (op.op === 'mbarrier.arrive' && op.expectTx)) && op.bar.name === name) out.push({ loc: ins.loc, text: ins.text });
    }
  }
  return out;
}

/** The copies that complete on the barrier array of `bar` (cp.async.bulk{.tensor}, with their multicast masks). */
export function copySites(p: Program, bar: number): { loc: SrcLoc; text: string }[] {
  const name = p.barrierOf(bar).info.name;
  const out: { loc: SrcLoc; text: string }[] = [];
  for (const rc of p.roles) for (const ins of rc.code) if (ins.i === 'op' && ins.op.op === 'cp.async.bulk' && ins.op.bar.name === name) out.push({ loc: ins.loc, text: ins.text });
  return out;
}

/** Lowest tx-count a reduced landing may leave (the model's tx-range is ±(2^20 − 1)). */
export const TX_FLOOR = -((1 << 20) - 1);
