/**
 * Hazard detector on remote arrives (`scope`): an arrive on another CTA's barrier whose release is
 * at CTA scope (explicit `.cta`: an error; no scope, PTX's default `.cta`: a warning under
 * `strict`) orders nothing for the other CTA's waiters (PTX ISA §9.7.13.15.13, §8.8–8.9).
 */
import type { MachineState } from '../machine/machine.js';
import { keyOf } from './engine.js';
import type { SearchCtx } from './search-ctx.js';
import { locKey } from './search-facts.js';
import { LAZY } from './search-hazards.js';

/** The scope detector of search `ctx`: the step of agent `a` from `s`. */
export function scopeDetector(ctx: SearchCtx): (s: MachineState, a: number, stateId: number) => void {
  const { p, m, sink, strict } = ctx;
  const { barCta, agentName } = ctx.f;
  return (s, a, stateId) => {
    const ins = m.nextOp(s, a);
    if (!ins || ins.op.op !== 'mbarrier.arrive' || ins.op.sem === 'relaxed' || ins.op.scope === 'cluster') return;
    const k = keyOf(ins.bar!, s.agents[a]!.frame);
    const info = p.agents[a]!;
    if (k < 0 || barCta(k) === info.cta || !(ins.op.scope === 'cta' || strict)) return;
    const bname = p.barrierName(k);
    const explicit = ins.op.scope === 'cta';
    if (explicit) sink.errorFound = true;
    sink.report({
      kind: 'scope', severity: explicit ? 'error' : 'warning', key: `${bname}|${locKey(ins.loc)}`,
      message: explicit
        ? `${agentName(a)} arrives on ${bname}, a barrier of another CTA, with .release.cta: a release at CTA scope does not order ${agentName(a)}'s earlier memory accesses for the threads of the other CTA that wait on ${bname}; write mbarrier.arrive.release.cluster`
        : `${agentName(a)} arrives on ${bname}, a barrier of another CTA, without a scope: PTX's default is .cta, which does not order its earlier memory accesses for the other CTA's waiters; write mbarrier.arrive.release.cluster (strict rule)`,
      subject: bname, state: stateId, extra: LAZY,
      details: ['PTX ISA §9.7.13.15.13 (.scope defaults to .cta), §8.8–8.9 (morally strong release/acquire needs a scope that includes both threads); CUTLASS, https://github.com/NVIDIA/cutlass/issues/3643.'],
      locs: [ins.loc],
    });
  };
}
