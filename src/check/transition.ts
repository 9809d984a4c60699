/**
 * The hazard detectors on one transition, in the order they run: TMA copies' barriers learnt
 * (`fedBy`), accesses against TMA landings still unordered, then per event: the machine's
 * diagnostics, access starts (detect-access.ts), passing waits (detect-waits.ts), phase
 * completions (detect-phase.ts); then the ghost records (ghost-step.ts), remote arrives' scope
 * (detect-scope.ts), exits (detect-exit.ts), proxy fences and init publication
 * (detect-fences.ts) and the memory model (relaxed.ts). The order is the reports' order, and the
 * first report of a (kind, subject, key) is the one kept.
 */
import type { Choice, MachineState } from '../machine/machine.js';
import type { MachineEvent } from '../machine/events.js';
import type { Extra } from './codec.js';
import { relaxedDetector } from './relaxed.js';
import { accessDetector } from './detect-access.js';
import { waitDetector, type WaitDetector } from './detect-waits.js';
import { phaseDetector, retireObserved } from './detect-phase.js';
import { ghostStep } from './ghost-step.js';
import { scopeDetector } from './detect-scope.js';
import { exitDetector } from './detect-exit.js';
import { fenceDetector } from './detect-fences.js';
import type { ExtraDraft, SearchCtx } from './search-ctx.js';
import { locKey } from './search-facts.js';
import { LAZY } from './search-hazards.js';

/**
 * Checks the transition `c` from `s` to `t` (its events `events`, checker data `x`, reached from
 * stored state `stateId` by the forced steps `prefix`) and returns the checker data after it.
 */
export type TransitionCheck = (s: MachineState, t: MachineState, c: Choice, events: MachineEvent[], x: Extra, stateId: number, prefix: Choice[]) => Extra;

/** The transition checker of search `ctx`, and the wait detector's end-of-execution check it shares its state with. */
export function transitionChecker(ctx: SearchCtx): { check: TransitionCheck; staleAtEnd: WaitDetector['staleAtEnd'] } {
  const { p, m, an, out, sink } = ctx;
  const { anyMultiWarp, remoteArrives } = ctx.f;
  const acc = accessDetector(ctx);
  const waits = waitDetector(ctx);
  const phase = phaseDetector(ctx);
  const ghosts = ghostStep(ctx);
  const scope = scopeDetector(ctx);
  const exit = exitDetector(ctx);
  const fences = an.trackProxy || an.manualCount ? fenceDetector(ctx) : null;
  /** The memory-model detector (relaxed arrives and waits, scoped acquires), or null when the kernel has none. */
  const relaxed = relaxedDetector(p, m, (h) => {
    if (h.severity === 'error') sink.errorFound = true;
    sink.report(h);
  }, LAZY);
  const d: ExtraDraft = { x: null!, hist: [], ghosts: [], tghosts: null, cghosts: [], pcm: [] };
  /** Per buffer key, the barriers the TMA copies the step issued complete on (read by the elected-thread races). */
  const learnFedBy = () => {
    for (const o of out.issued) {
      if (o.kind !== 'tma' || o.buf < 0 || o.bar < 0) continue;
      let f = ctx.fedBy.get(o.buf);
      if (!f) ctx.fedBy.set(o.buf, (f = new Set()));
      f.add(o.bar);
      if (o.targets) for (const k of o.targets) f.add(k);
    }
  };
  const check: TransitionCheck = (s, t, c, events, x, stateId, prefix) => {
    sink.lazyTrace(prefix, c);
    d.x = x;
    d.hist = x.hist;
    d.ghosts = x.ghosts;
    d.tghosts = x.tghosts;
    d.cghosts = x.cghosts;
    d.pcm = x.pcm;
    if (anyMultiWarp) learnFedBy();
    if (d.tghosts) acc.landed(events, d, stateId);
    for (const e of events) {
      switch (e.e) {
        case 'diag': {
          const dg = e.diag;
          const subject = e.bar >= 0 ? p.barrierName(e.bar) : e.buf !== undefined && e.buf >= 0 ? p.bufferName(e.buf) : null;
          if (dg.severity === 'error') sink.errorFound = true;
          sink.report({
            kind: dg.code, severity: dg.severity, key: `${subject ?? ''}|${locKey(e.loc)}`, message: dg.message, subject,
            state: stateId, extra: LAZY, details: [`H200: ${dg.h200}`], locs: e.loc ? [e.loc] : [],
          });
          break;
        }
        case 'access':
          if (e.edge !== 'end') acc.access(e, s, d, stateId);
          break;
        case 'wait':
          waits.wait(e, s, t, d, stateId);
          retireObserved(e, t, d);
          break;
        case 'phase':
          phase(e, t, d, stateId);
          break;
        default:
          break;
      }
    }
    ghosts(s, t, c, events, d);
    if (remoteArrives && c.kind === 'agent') scope(s, c.agent, stateId);
    exit(s, t, c, d, stateId);
    const y = d.hist === x.hist && d.ghosts === x.ghosts && d.tghosts === x.tghosts && d.cghosts === x.cghosts && d.pcm === x.pcm
      ? x : { ...x, hist: d.hist, ghosts: d.ghosts, tghosts: d.tghosts, cghosts: d.cghosts, pcm: d.pcm };
    const z = fences ? fences(s, t, c, y, stateId) : y;
    return relaxed ? relaxed(s, t, c, events, z, stateId) : z;
  };
  return { check, staleAtEnd: waits.staleAtEnd };
}
