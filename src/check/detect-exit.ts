/**
 * Hazard detector on exits (`inflight-at-exit`): a step after which every agent of a CTA has
 * stopped running while something may still write or signal that CTA's memory: an operation in
 * flight into it, a TMA landing the reduction took early whose phase is still open, a commit
 * landed as a forced step whose phase nobody waited for (and the MMAs it covers), a finished MMA
 * no commit has signalled. A bulk store still reading the CTA's shared memory is a warning (an
 * error under `strict`).
 */
import type { AsyncOp, Choice, MachineState } from '../machine/machine.js';
import type { RawHazard } from './engine.js';
import { EG, kindLabel } from './ghosts.js';
import type { ExtraDraft, SearchCtx } from './search-ctx.js';
import { LAZY } from './search-hazards.js';

/** The exit detector of search `ctx`: the step `c` from `s` to `t`, with the ghosts of `d` after it. */
export function exitDetector(ctx: SearchCtx): (s: MachineState, t: MachineState, c: Choice, d: ExtraDraft, stateId: number) => void {
  const { p, out } = ctx;
  const { ctaAgents } = ctx.f;
  const inflightInto = inflightAtExit(ctx);
  const ghostsInto = ghostsAtExit(ctx);
  return (s, t, c, d, stateId) => {
    // A CTA whose agents have all exited with operations in flight into it. An agent stopped by an
    // error (status trap) has not exited: on the GPU it would run on or hang, so its CTA stays.
    const mayExit = c.kind === 'agent' && (t.agents[c.agent]!.status === 'done' || out.issued.length > 0);
    if (!mayExit) return;
    for (let cta = 0; cta < p.ctas; cta++) {
      const ags = ctaAgents[cta]!;
      if (!ags.length) continue;
      let live = false;
      for (let i = 0; i < ags.length && !live; i++) if (t.agents[ags[i]!]!.status !== 'done') live = true;
      if (live) continue;
      let wasLive = false;
      for (let i = 0; i < ags.length; i++) if (s.agents[ags[i]!]!.status !== 'done') wasLive = true;
      const fresh = !wasLive ? out.issued : t.inflight;
      if (!wasLive && !fresh.length) continue;
      inflightInto(cta, fresh, stateId);
      if (wasLive) ghostsInto(cta, d, stateId);
    }
  };
}

/** Operations `ops` in flight into CTA `cta` once its agents have all exited. */
function inflightAtExit(ctx: SearchCtx): (cta: number, ops: readonly AsyncOp[], stateId: number) => void {
  const { p, sink, strict } = ctx;
  const { barCta, bufCta, ctaLabel, agentName } = ctx.f;
  /**
   * A bulk store (shared -> global) still reading its shared-memory source when every agent of its
   * CTA has exited. The PTX ISA does not say whether an exited CTA's shared memory stays allocated
   * until such reads are done (cp.async.bulk.wait_group.read, §9.7.9.27.2.2, only says when the
   * source may be reused); CUTLASS's epilogues (store_tail: tma_store_wait<0>) and
   * FlashAttention-3's (tma_store_wait<0> before barrier_O) always wait. A warning, an error under
   * `strict` (docs/CHECK.md, `inflight-at-exit`).
   */
  const storeAtExit = (o: AsyncOp, ctaName: string, target: string, stateId: number): RawHazard => {
    if (strict) sink.errorFound = true;
    return {
      kind: 'inflight-at-exit', severity: strict ? 'error' : 'warning', key: `${ctaName}|${o.agent}|store`,
      message: `every agent of ${ctaName} has exited while a bulk store issued by ${agentName(o.agent)} (line ${o.loc.line}) may still be reading ${target}: nothing waited for its reads of shared memory (cp.async.bulk.wait_group.read 0) before the exit`,
      subject: target || null, state: stateId, extra: LAZY,
      details: ['The PTX ISA does not define whether an exited CTA\'s shared memory stays allocated until its bulk stores have read it (§9.7.9.27.2.2 only says when the source may be reused); CUTLASS (store_tail: tma_store_wait<0>) and FlashAttention-3 wait before exiting. A warning; an error with --strict.'],
      locs: [o.loc],
    };
  };
  return (cta, ops, stateId) => {
    for (const o of ops) {
      const hit = (o.bar >= 0 && barCta(o.bar) === cta) || (o.buf >= 0 && bufCta(o.buf) === cta) || (o.kind === 'tma' && o.cta === cta)
        || (o.reads?.some((r) => bufCta(r) === cta) ?? false) || (o.targets?.some((k) => barCta(k) === cta) ?? false);
      if (!hit) continue;
      const ctaName = ctaLabel(cta);
      const target = o.bar >= 0 ? p.barrierName(o.bar) : o.buf >= 0 ? p.bufferName(o.buf) : o.targets ? o.targets.map((k) => p.barrierName(k)).join(', ') : '';
      if (o.kind === 'bulk.store') {
        sink.report(storeAtExit(o, ctaName, target, stateId));
        continue;
      }
      sink.error({
        kind: 'inflight-at-exit', severity: 'error', key: `${cta}|${o.agent}`,
        message: `every agent of ${ctaName} has exited while a ${kindLabel(o.kind)} issued by ${agentName(o.agent)} (line ${o.loc.line})${target ? ` into ${target}` : ''} is still in flight: it writes or signals memory of a CTA that no longer exists`,
        subject: target || null, state: stateId, extra: LAZY, details: [], locs: [o.loc],
      });
    }
  };
}

/** The ghosts of `d` (TMA landings, pending commits, finished MMAs) into CTA `cta`, whose agents the step made all exit. */
function ghostsAtExit(ctx: SearchCtx): (cta: number, d: ExtraDraft, stateId: number) => void {
  const { p, sink } = ctx;
  const { barCta, bufCta, ctaLabel, agentName } = ctx.f;
  const ctaName = ctaLabel;
  /** Pending commits into the CTA's barriers, and the MMAs they cover. */
  const commits = (cta: number, d: ExtraDraft, stateId: number) => {
    const { pcm, cghosts } = d;
    for (let g = 0; g < pcm.length; g++) for (const b of pcm[g] ?? []) {
      if (barCta(b) !== cta) continue;
      const bname = p.barrierName(b);
      sink.error({
        kind: 'inflight-at-exit', severity: 'error', key: `${cta}|${g}|${b}`,
        message: `every agent of ${ctaName(cta)} has exited while a tcgen05.commit issued by ${agentName(g)} into ${bname} may still be in flight (nothing has waited for the phase it arrives in): it arrives on a barrier of a CTA that no longer exists`,
        subject: bname, state: stateId, extra: LAZY, details: [], locs: [],
      });
      // In the schedule where that commit is still in flight, so are the MMAs it covers (they
      // complete before it): their accumulators, as for an MMA in flight at the exit.
      const cg = cghosts[g];
      if (cg) for (let i = 0; i < cg.length; i += 2) {
        if (cg[i] !== b || !(cg[i + 1]! & 1) || bufCta(cg[i + 1]! >> 1) !== cta) continue;
        const acc = p.bufferName(cg[i + 1]! >> 1);
        sink.report({
          kind: 'inflight-at-exit', severity: 'error', key: `${cta}|${g}|${acc}`,
          message: `every agent of ${ctaName(cta)} has exited while a tcgen05.mma issued by ${agentName(g)} into ${acc} may still be in flight (the tcgen05.commit into ${bname} that covers it has not been waited for): in some schedule that MMA is still writing the CTA's memory`,
          subject: acc, state: stateId, extra: LAZY, details: [], locs: [],
        });
      }
    }
  };
  return (cta, d, stateId) => {
    // TMA landings the reduction took early whose phase is still open: in
    // the schedule where they land after this exit, they are in flight into a finished CTA.
    const tghosts = d.tghosts;
    if (tghosts) for (let i = 0; i < tghosts.length; i += 2) {
      const b = tghosts[i]!;
      if (barCta(b) !== cta) continue;
      const bname = p.barrierName(b);
      const what = `a TMA copy into ${p.bufferName(tghosts[i + 1]!)}`;
      sink.error({
        kind: 'inflight-at-exit', severity: 'error', key: `${cta}|ghost${b}`,
        message: `every agent of ${ctaName(cta)} has exited while the phase of ${bname} that ${what} signals has not completed: nothing waited for it, so in some schedule it is still in flight into a CTA that no longer exists`,
        subject: bname, state: stateId, extra: LAZY, details: [], locs: [],
      });
    }
    commits(cta, d, stateId);
    const ghosts = d.ghosts;
    for (let g = 0; g < ghosts.length; g++) {
      const gl = ghosts[g];
      if (!gl) continue;
      const bufs = gl.filter((v) => !(v & EG) && bufCta(v >> 1) === cta).map((v) => p.bufferName(v >> 1));
      if (!bufs.length) continue;
      sink.errorFound = true;
      // The subject is the accumulator each such MMA writes, as for an MMA still in flight.
      const accs = new Set(gl.filter((v) => !(v & EG) && v & 1).map((v) => p.bufferName(v >> 1)));
      for (const acc of accs.size ? accs : [bufs[0]!]) sink.report({
        kind: 'inflight-at-exit', severity: 'error', key: `${cta}|${g}`,
        message: `every agent of ${ctaName(cta)} has exited while no tcgen05.commit has signalled the completion of a tcgen05.mma issued by ${agentName(g)} on ${[...new Set(bufs)].join(', ')}: in some schedule that MMA is still reading or writing the CTA's memory`,
        subject: acc, state: stateId, extra: LAZY, details: [], locs: [],
      });
    }
  };
}
