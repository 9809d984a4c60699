/**
 * Interchangeable remote arrives, for the search's expansion: of several plain remote arrives in
 * flight to one barrier (`mbarrier.arrive` on another CTA's barrier, PTX ISA §9.7.13.15.13, in
 * flight until it lands, §9.7.13.15.8) that came from the same instruction of agents of the same
 * CTA with the same count, only one landing is explored from a state: the first in agent order
 * (docs/CHECK.md, "Interchangeable remote arrives").
 *
 * Why that keeps every hazard and final state: landing any one of them changes the barrier the
 * same way (an arrival of `count` on its current phase: pending count, phase and tx-count come out
 * equal) and leaves the others in flight, so the two successors differ only in which issuer's
 * identical signal is still in flight. Nothing the machine or the checker decides reads that
 * identity, but one rule: an issuer's `barrier.cluster.arrive` waits for its own remote signals
 * (machine/ops/barriers.ts), so the rule takes only arrives whose issuers cannot reach a cluster
 * barrier any more. Everything else a later step reads of them is the same: the landing's events
 * (an arrival on the barrier with the instruction's location; a phase completion; a diagnostic of
 * the barrier at that location), the CTA whose exit finds them in flight (detect-exit.ts: the
 * barrier's CTA), the ghosts (remote arrives leave none). States that differ only so are therefore
 * bisimilar, step for step, with the same hazards (kind and subject) on matching steps and the
 * same final states: exploring the successor of one of them explores what the others reach.
 * Hazard keys and messages may name another issuer. Not with memory values or relaxed arrives
 * tracked (relaxed.ts keeps per-release records of each arrive's issuer).
 */
import type { AsyncOp, Choice, MachineState } from '../machine/machine.js';
import type { Instr, Program } from '../machine/program.js';
import type { SrcLoc } from '../kernel/ir.js';
import { OPC } from '../machine/ops/index.js';
import type { SearchCtx } from './search-ctx.js';

const OPC_CLUSTER_ARRIVE = OPC['barrier.cluster.arrive'];
const OPC_CLUSTER_WAIT = OPC['barrier.cluster.wait'];

/**
 * Marks in `skip` (index of `ch`: 1 = not explored) the landings of `ch` enabled in `s` that are
 * interchangeable with an earlier one (see the module comment); returns how many it marked.
 */
export type InterchangeableLandings = (s: MachineState, ch: readonly Choice[], skip: Uint8Array) => number;

/** The rule for search `ctx`, or null where it cannot apply (no remote arrives, memory values, relaxed arrives tracked). */
export function interchangeableLandings(ctx: SearchCtx): InterchangeableLandings | null {
  const { p, m, an } = ctx;
  if (!ctx.f.remoteArrives || p.values || an.trackRelaxed) return null;
  const { agentCode } = ctx.f;
  const reach = clusterReachOf(agentCode);
  /** The choice indices of the remote plain arrives among `ch` that may be interchangeable (reused). */
  let cand: number[] = [];
  let ops: AsyncOp[] = [];
  return (s, ch, skip) => {
    skip.fill(0, 0, ch.length);
    let remote = 0;
    for (const o of s.inflight) if (o.kind === 'remote' && o.remote === 'arrive') remote++;
    if (remote < 2) return 0;
    cand.length = 0;
    ops.length = 0;
    for (let i = 0; i < ch.length; i++) {
      const c = ch[i]!;
      if (c.kind !== 'async') continue;
      const o = m.findAsync(s, c.id);
      if (!o || !twinable(s, o, reach)) continue;
      cand.push(i);
      ops.push(o);
    }
    let n = 0;
    for (let j = 0; j < cand.length; j++) {
      const o = ops[j]!;
      for (let k = 0; k < cand.length; k++) {
        if (k === j) continue;
        const y = ops[k]!;
        if (!alike(p, o, y)) continue;
        // y is explored instead when it comes first: lower issuer, or the same issuer's earlier one.
        if (y.agent < o.agent || (y.agent === o.agent && k < j)) {
          skip[cand[j]!] = 1;
          n++;
          break;
        }
      }
    }
    if (cand.length > 64) {
      cand = [];
      ops = [];
    }
    return n;
  };
}

/**
 * Whether `o`, in flight in `s`, is a remote plain arrive whose issuer cannot reach a cluster
 * barrier any more (`reach`: {@link clusterReachOf}), so that its landing may be interchanged with
 * an alike one's ({@link alike}).
 */
export function twinable(s: MachineState, o: AsyncOp, reach: readonly Uint8Array[]): boolean {
  if (o.kind !== 'remote' || o.remote !== 'arrive' || o.bar < 0) return false;
  const ag = s.agents[o.agent]!;
  return ag.status !== 'run' || !reach[o.agent]![ag.pc];
}

/** Two remote plain arrives whose landings are interchangeable: one barrier, one count, one instruction ({@link sameLoc}), issuers of one CTA. */
export function alike(p: Program, o: AsyncOp, y: AsyncOp): boolean {
  return o.bar === y.bar && o.count === y.count && p.agents[o.agent]!.cta === p.agents[y.agent]!.cta && sameLoc(o.loc, y.loc);
}

/** One source location (an instruction's: file, line and column). */
export function sameLoc(a: SrcLoc, b: SrcLoc): boolean {
  return a === b || (a.line === b.line && a.col === b.col && a.file === b.file);
}

const REACH = new WeakMap<readonly Instr[][], Uint8Array[]>();
/** {@link clusterBarrierReach} of the agents' codes `agentCode` (computed once per table). */
export function clusterReachOf(agentCode: readonly Instr[][]): Uint8Array[] {
  let r = REACH.get(agentCode);
  if (!r) REACH.set(agentCode, (r = clusterBarrierReach(agentCode, agentCode.length)));
  return r;
}

/** Per agent and pc: 1 when a cluster-barrier operation can be executed from there on (a backward fixpoint per role's code). */
export function clusterBarrierReach(agentCode: readonly Instr[][], nAgents: number): Uint8Array[] {
  const byRole = new Map<readonly Instr[], Uint8Array>();
  const out: Uint8Array[] = [];
  for (let a = 0; a < nAgents; a++) {
    const code = agentCode[a]!;
    let r = byRole.get(code);
    if (!r) byRole.set(code, (r = reachesClusterBarrier(code)));
    out.push(r);
  }
  return out;
}

/** Per pc of `code`: 1 when a cluster-barrier operation can be executed from there on (a backward fixpoint). */
export function reachesClusterBarrier(code: readonly Instr[]): Uint8Array {
  const at = new Uint8Array(code.length + 1);
  code.forEach((ins, pc) => { if (ins.i === 'op' && (ins.opc === OPC_CLUSTER_ARRIVE || ins.opc === OPC_CLUSTER_WAIT)) at[pc] = 1; });
  for (let changed = true; changed;) {
    changed = false;
    for (let pc = code.length - 1; pc >= 0; pc--) {
      if (at[pc]) continue;
      const ins = code[pc]!;
      const succ = ins.i === 'end' ? [] : ins.i === 'jmp' ? [ins.to] : ins.i === 'jz' ? [pc + 1, ins.to] : [pc + 1];
      if (succ.some((q) => at[q])) {
        at[pc] = 1;
        changed = true;
      }
    }
  }
  return at;
}
