/**
 * Arrivals on counting barriers, for the partial-order reduction (docs/CHECK.md, "Arrivals across
 * a phase boundary"). A *counting* barrier array is one that nothing but plain arrives and parity
 * waits names, declared `auto` (no init or inval), every arrive bringing one arrive instruction of
 * the same `u` arrivals (PTX ISA §9.7.13.15.13; a local arrive per thread is one instruction per
 * warp, machine-ctx.ts `arriveInstrs`; a remote one lands as one). Its tx-count is then 0 forever,
 * and while `u` divides its pending and expected counts no arrive can over-arrive: the barrier is
 * a counter of the arrivals since a state, its phase and pending count a function of their number
 * N alone (phase r completes at N = pending, phase r + 1 at N = pending + expected, whichever
 * arrival brings it), so two arrivals commute even when one of them completes the phase.
 *
 * The stable arrive of stable.ts and the partial remote landing of stable-landing.ts ask that the
 * others cannot complete the phase first, which fails wherever a peer CTA's next-round remote
 * arrives may land in the current phase (DeepGEMM's 2-CTA releases: a math warp releases the peer's
 * stage before its own, so the peer can refill and release it again before the last local release).
 * Here an arrival X (an agent's local arrive, or the landing of a remote arrive) of `u` arrivals is
 * taken alone when, with X held back and the others run forward (stable.ts), they bring A
 * arrivals with A + u < pending + expected (at most one completion in any order, X included), no
 * tx-count change, init or inval, and no wait on the barrier passes on its current phase (the
 * parity of the phase before: such a wait is disabled once the phase completes).
 *
 * Why the single step keeps every hazard, deadlock and final state: moving X to the front of any
 * schedule from the state shifts the barrier's counter by `u` at every step before X's place:
 * - an arrival there commutes with X (the counter; no over-arrival, at most one completion);
 * - a wait that passes there relies on the completion (the others' arrivals already counted
 *   `pending`), and with X first the counter is higher but below the next completion, so it still
 *   passes on the same phase; what its checks read beyond the phase (detect-waits.ts: whether the
 *   next phase has begun) only grows with the counter, so the finding is kept;
 * - a completion moves to an earlier step, and on a counting barrier a completion retires nothing
 *   the detectors keep (no copy, commit or bytes name the barrier: detect-phase.ts);
 * - X itself publishes nothing (its agent holds no unfenced access, detect-fences.ts) and enables
 *   or disables no other step but the waits its completion enables, which with X first are enabled
 *   at least as early.
 * A landing must also keep the barrier's CTA from finishing first (an exit with it in flight is a
 * finding), as in stable-landing.ts; its alike twins (landing-order.ts) stay in flight with it.
 */
import type { AsyncOp, MachineState } from '../machine/machine.js';
import type { AgentInfo, Instr, OpInstr, Program } from '../machine/program.js';
import type { MachineCtx } from '../machine/machine-ctx.js';
import { frozenFixpoint, type Frozen } from './stable.js';
import { remoteLandingRun } from './stable-landing.js';

/** How the machine counts an arrive instruction's arrivals (machine-ctx.ts). */
export type ArriveCounts = Pick<MachineCtx, 'arriveInstrs' | 'arriveLanes' | 'mult'>;

/**
 * Per barrier key of `p`: the arrivals `u` each arrive on it brings when its array is a counting
 * array (see the module comment), else 0. `m`: the machine's arrive multiplicities.
 */
export function countingUnits(p: Program, m: ArriveCounts): Int32Array {
  const unit = new Map<string, number>();
  const bad = new Set<string>();
  const note = (name: string, u: number) => {
    if (!(u >= 1)) bad.add(name);
    else if ((unit.get(name) ?? u) !== u) bad.add(name);
    else unit.set(name, u);
  };
  const seen = new Set<string>();
  for (const a of p.agents) {
    // Agents of one role with the same threads and warps count their arrives alike.
    const sig = `${a.role}:${a.threads}:${a.warps}`;
    if (seen.has(sig)) continue;
    seen.add(sig);
    const code = p.roles[a.role]!.code;
    for (const ins of code) {
      if (ins.i !== 'op') continue;
      const op = ins.op as { op: string; bar?: { name: string; cta?: unknown } };
      if (!op.bar) continue;
      const name = op.bar.name;
      if (op.op === 'mbarrier.wait') {
        const w = ins.op as Extract<OpInstr['op'], { op: 'mbarrier.wait' }>;
        if (w.token !== undefined || w.dest !== undefined || w.parity === undefined) bad.add(name);
        continue;
      }
      if (op.op !== 'mbarrier.arrive') {
        bad.add(name);
        continue;
      }
      const u = arriveUnit(m, ins as OpInstr, a);
      if (u === null) bad.add(name);
      else {
        note(name, u.local);
        if (op.bar.cta !== undefined) note(name, u.remote);
      }
    }
  }
  const out = new Int32Array(p.ctas * p.barriersPerCta);
  for (let k = 0; k < out.length; k++) {
    const info = p.barrierOf(k).info;
    if (info.init === 'auto' && !bad.has(info.name)) out[k] = unit.get(info.name) ?? 0;
  }
  return out;
}

/**
 * The arrivals one arrive instruction `ins` of agent `a` brings, executed on its own CTA's
 * barrier (`local`: 0 when it is several instructions, as per-warp arrives of an agent of several
 * warps are) and on another CTA's (`remote`: one landing of every thread's arrivals); null for an
 * arrive that is not plain (`.expect_tx`, drop, `.noComplete`, a token, a count that is not a
 * constant).
 */
function arriveUnit(m: ArriveCounts, ins: OpInstr, a: AgentInfo): { local: number; remote: number } | null {
  const op = ins.op as Extract<OpInstr['op'], { op: 'mbarrier.arrive' }>;
  if (op.expectTx || op.drop || op.noComplete || op.token !== undefined) return null;
  if (op.count !== undefined && op.count.k !== 'num') return null;
  const count = op.count === undefined ? 1 : op.count.v;
  return { local: m.arriveInstrs(ins, a) === 1 ? count * m.arriveLanes(ins, a) : 0, remote: count * m.mult(ins, a) };
}

/** Whether barrier `key` in `s` can take arrivals of `u` in any order without over-arriving, `count` of them now. */
function counts(s: MachineState, key: number, u: number, count: number): boolean {
  const b = s.bars[key];
  return !!b && b.status === 'valid' && u >= 1 && count === u && b.tx === 0 && b.pending >= u && b.pending % u === 0 && b.expected % u === 0;
}

/** The bound of the module comment: what the others bring leaves at most one completion, `count` arrivals included, and nothing else reaches the barrier. */
function oneCompletion(f: Frozen, key: number, pending: number, expected: number, count: number): boolean {
  return f.arrivals[key]! + count < pending + expected && !f.tx[key] && !f.reset[key] && !f.passedNow[key];
}

/**
 * Whether agent `a`'s next operation, a plain local arrive of `count` arrivals on counting barrier
 * `key` (unit `u`, {@link countingUnits}), may be taken alone in `s` (see the module comment).
 * `codes[x]`: agent x's role code. The caller checks that `a` holds no unfenced access.
 */
export function countingArrive(p: Program, codes: readonly Instr[][], s: MachineState, a: number, key: number, count: number, u: number): boolean {
  if (!counts(s, key, u, count)) return false;
  const b = s.bars[key]!;
  const { pending, expected } = b;
  return frozenFixpoint(p, codes, s, a, -1, (f) => oneCompletion(f, key, pending, expected, count));
}

/**
 * Whether the landing of remote arrive `o` on counting barrier `o.bar` (unit `u`) may be taken
 * alone in `s`: the bound of the module comment with `o` and the arrives alike it (landing-order.ts)
 * held in flight, and some running agent of the barrier's CTA blocking before its end
 * (`ctaAgents[c]`: the agents of CTA c), so the CTA cannot finish with `o` in flight.
 */
export function countingLanding(p: Program, codes: readonly Instr[][], s: MachineState, o: AsyncOp, ctaAgents: readonly (readonly number[])[], u: number): boolean {
  const key = o.bar;
  if (o.kind !== 'remote' || o.remote !== 'arrive' || key < 0 || !counts(s, key, u, o.count)) return false;
  const { pending, expected } = s.bars[key]!;
  return remoteLandingRun(p, codes, s, o, ctaAgents, -1, (f) => oneCompletion(f, key, pending, expected, o.count));
}
