/// <reference lib="dom" />
/**
 * The explorer's checker runs and counterexample replays: a check of the page's kernel in the
 * worker (one at a time; a new kernel cancels it), and a hazard's schedule replayed through the
 * machine (trace-model.ts) as the model every view shows, stepped from the header, the Check tab
 * or the keyboard. The page (main.ts) lends what it owns through {@link ReplayHost}.
 */
import { missingParamCheckVerdict } from './missing-param-note.js';
import type { Hazard } from '../check/check.js';
import type { Kernel } from '../kernel/ir.js';
import { setText } from './dom.js';
import { checkIn, Dropped, type CheckRun } from './engine.js';
import type { PackedCheck } from './engine-protocol.js';
import { instantiateKernel, type RunModel } from './model.js';
import { replayStep } from './replay-step.js';
import type { SourceRef, Tab } from './share.js';
import { traceModel } from './trace-model.js';
import type { CheckView } from './views/check.js';
import type { MechanismView } from './views/mechanism.js';
import type { TimelineView } from './views/timeline.js';

/** What the page lends the checker and the replay. */
export interface ReplayHost {
  /** The page's kernel, when its source parses. */
  kernel(): Kernel | undefined;
  source(): SourceRef;
  params(): Record<string, number>;
  tab(): Tab;
  /** The timeline cursor's event in the simulation (restored when a replay ends). */
  ev(): number;
  /** The sketch's lines (empty without a sketch). */
  lines(): string[];
  /** The simulation of the page's kernel. */
  simModel(): RunModel | null;
  /** Points every view at `m`. */
  showModel(m: RunModel): void;
}

/** The counterexample being replayed. */
export interface Replay {
  index: number;
  hazard: Hazard;
  model: RunModel;
  subject: string | null;
  lastBar: string | null;
}

/** The checker and replay controls of the page. */
export interface CheckReplay {
  /** The counterexample being replayed, or null. */
  readonly replay: Replay | null;
  /** Cancels a running check, forgets its result and ends a replay. */
  stopCheck(): void;
  exitReplay(): void;
  /** Moves the replay to step `k` (clamped to the trace). */
  goStep(k: number): void;
  /** Shows the replay's step `k`: the trace, the mechanism, the header's line. */
  showStep(k: number): void;
}

/** Wires the Check tab to the worker and the replay to the views. */
export function checkAndReplay(
  host: ReplayHost, v: { check: CheckView; timeline: TimelineView; mech: MechanismView; replayBar: HTMLElement; replayText: HTMLElement },
): CheckReplay {
  const { check, timeline, mech, replayBar, replayText } = v;
  let checkRun: CheckRun | null = null;
  let checkResult: PackedCheck | null = null;
  let replay: Replay | null = null;

  function stopCheck(): void {
    const r = checkRun;
    checkRun = null;
    r?.cancel();
    checkResult = null;
    if (replay) exitReplay();
  }

  check.onRun = (maxStates, timeoutMs) => {
    if (!host.kernel()) return;
    stopCheck();
    const run = checkIn(host.source(), { ...host.params() }, { maxStates, timeoutMs, maxMemory: 768 * 1024 * 1024 }, (p) => {
      if (checkRun === run) check.progress(p);
    });
    checkRun = run;
    check.running(run.inWorker);
    run.done.then((r) => {
      if (checkRun !== run) return;
      checkRun = null;
      checkResult = r;
      const k = host.kernel();
      const inst = k && host.source().kind === 'ptx' ? instantiateKernel(k, host.params()) : null;
      check.result(r, inst?.program ? missingParamCheckVerdict(inst.program, [...r.hazards, ...r.warnings]) : null);
    }).catch((err: unknown) => {
      if (checkRun !== run) return;
      checkRun = null;
      if (err instanceof Dropped) check.cancelled();
      else check.failed(String((err as Error)?.message ?? err));
    });
  };
  check.onCancel = () => checkRun?.cancel();
  check.onReplay = (i) => startReplay(i);
  check.onStep = (k) => goStep(k);
  check.onExitReplay = () => exitReplay();

  function startReplay(i: number): void {
    const hz = check.hazards[i];
    const k = host.kernel();
    if (!hz || !k || !checkResult) return;
    const inst = instantiateKernel(k, host.params());
    if (!inst.program) return;
    let tm: RunModel;
    try {
      // The machine's own step function re-runs the schedule (src/web/trace-model.ts).
      tm = traceModel(inst.program, hz.schedule, hz.trace);
    } catch (err) {
      check.failed(`the trace does not replay: ${String((err as Error)?.message ?? err)}`);
      return;
    }
    replay = { index: i, hazard: hz, model: tm, subject: hz.subject?.type === 'barrier' ? hz.subject.name : null, lastBar: null };
    check.showTrace(i);
    replayBar.hidden = false;
    host.showModel(tm);
    timeline.fit();
    goStep(0);
    if (host.tab() === 'check') (document.getElementById('trace') as HTMLElement | null)?.focus();
  }

  function exitReplay(): void {
    if (!replay) return;
    replay = null;
    replayBar.hidden = true;
    check.showTrace(null);
    mech.showBarrier(null);
    const simModel = host.simModel();
    if (simModel) {
      const ev = host.ev();
      host.showModel(simModel);
      timeline.setEvent(ev, true);
    }
  }

  function goStep(k: number): void {
    if (!replay) return;
    timeline.setStep(Math.max(0, Math.min(replay.hazard.trace.length, k)));
    timeline.renderNow();
  }

  /** The replay's step `k`: the trace, the mechanism, the editor. */
  function showStep(k: number): void {
    const r = replay!;
    const v = replayStep(r.model, r.hazard, r.index, k, host.lines(), r.subject, r.lastBar);
    check.setStep(k, v.detail);
    setText(replayText, v.headline);
    r.lastBar = v.barrier;
    if (v.mech) mech.showBarrier(v.mech.state, v.mech.caption);
  }

  return {
    get replay() {
      return replay;
    },
    stopCheck, exitReplay, goStep, showStep,
  };
}
