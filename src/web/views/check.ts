/// <reference lib="dom" />
/**
 * Check results: runs the exhaustive checker (src/check) on the current kernel in a worker, with
 * progress (states, states/s, depth, frontier) and Cancel; shows the verdict, coverage and every
 * hazard (kind, message, the barrier or buffer, source lines, the checker's explanation) and a
 * hazard's numbered shortest trace. Replaying a trace is driven by the app (src/web/main.ts): the
 * trace is re-run through the machine's step function and every view follows the current step.
 */
import type { Progress } from '../../check/explore.js';
import type { Hazard } from '../../check/check.js';
import { groupNoteText } from '../../check/report.js';
import { HAZARD_TEXT } from '../../check/kinds.js';
import { SEARCH_CAUSES } from '../../check/cause-static.js';
import type { PackedCheck } from '../engine-protocol.js';
import { fmt, h, replace, setText } from '../dom.js';

export interface CheckDefaults {
  maxStates: number;
  timeoutS: number;
}

/** What the app shows next to the trace for the current step. */
export interface StepDetail {
  /** `n. actor: op`, or the initial state. */
  head: string;
  notes: string[];
  /** `line N: text`, or ''. */
  source: string;
  bars: { name: string; text: string; hot: boolean }[];
  /** At the last step of a hang: who is blocked and why. */
  blocked: string[];
}

export interface CheckView {
  el: HTMLElement;
  /** Where the app mounts the replay's own full/empty ring. */
  ringSlot: HTMLElement;
  onRun?: (maxStates: number, timeoutMs: number) => void;
  onCancel?: () => void;
  /** A hazard's Replay button: its index in hazards followed by warnings. */
  onReplay?: (index: number) => void;
  onStep?: (k: number) => void;
  onExitReplay?: () => void;
  /** Source line text for a location (null: unknown). */
  lineText: (line: number) => string | null;
  /** The kernel changed: the last result no longer applies. */
  reset(note: string): void;
  running(inWorker: boolean): void;
  progress(p: Progress): void;
  cancelled(): void;
  failed(message: string): void;
  /** Shows result `r`; `missing`: the verdict line for a missing-parameter stop of a served PTX kernel, in place of the verdict's. */
  result(r: PackedCheck, missing?: string | null): void;
  /** Shows hazard `index`'s trace (null: none). */
  showTrace(index: number | null): void;
  /** Marks step k (0: before the first) of the shown trace and shows its detail. */
  setStep(k: number, detail: StepDetail): void;
  readonly hazards: Hazard[];
}


export function checkView(d: CheckDefaults): CheckView {
  let hazards: Hazard[] = [];
  let shown: number | null = null;
  let step = 0;
  let t0 = 0;

  // Named by its visible text (WCAG 2.5.3, label in name): a voice-control user says what they see.
  const runBtn = h('button', { type: 'button', class: 'primary', id: 'check-run' }, 'Check every schedule');
  const cancelBtn = h('button', { type: 'button', id: 'check-cancel', 'aria-label': 'Cancel the check', disabled: true }, 'Cancel');
  const maxIn = h('input', { type: 'number', min: 1000, max: 50_000_000, step: 1000, value: d.maxStates, class: 'num wide', 'aria-label': 'maximum states' });
  const toIn = h('input', { type: 'number', min: 1, max: 3600, step: 1, value: d.timeoutS, class: 'num', 'aria-label': 'time limit in seconds' });
  const bar = h('progress', { class: 'check-bar', 'aria-label': 'check progress', hidden: true });
  const prog = h('p', { class: 'check-progress', id: 'check-progress', role: 'status', 'aria-live': 'polite' });
  const verdict = h('p', { class: 'check-verdict', id: 'check-verdict', 'aria-live': 'polite' });
  const coverage = h('p', { class: 'check-coverage', id: 'check-coverage' });
  const list = h('ol', { class: 'hazards', id: 'hazards', 'aria-label': 'hazards' });
  const warnBox = h('details', { class: 'warn-box', hidden: true });
  const warnSum = h('summary', {});
  const warnList = h('ol', { class: 'hazards', id: 'check-warnings', 'aria-label': 'warnings' });
  warnBox.append(warnSum, warnList);

  const traceHead = h('h3', { id: 'trace-h' });
  const traceDetails = h('ul', { class: 'trace-details' });
  const stepOut = h('output', { class: 'trace-readout', id: 'trace-readout' });
  const sbtn = (label: string, aria: string, fn: () => void) => {
    const b = h('button', { type: 'button', 'aria-label': aria, title: aria }, label);
    b.addEventListener('click', fn);
    return b;
  };
  const traceList = h('ol', { class: 'trace', id: 'trace', tabindex: '0', role: 'listbox', 'aria-label': 'counterexample steps: arrow keys move through the trace', 'aria-describedby': 'trace-readout' });
  const before = h('li', { role: 'option', class: 'trace-init', 'data-step': '0' }, 'initial state: every barrier as initialized');
  const detHead = h('p', { class: 'step-head', id: 'step-head' });
  const detNotes = h('ul', { class: 'step-notes' });
  const detSrc = h('pre', { class: 'cur-src', id: 'step-src' });
  const detBars = h('tbody', {});
  const detBlocked = h('div', { class: 'step-blocked', id: 'step-blocked' });
  const ringSlot = h('div', { class: 'ring-slot' });
  const exitBtn = sbtn('Exit replay', 'exit replay', () => view.onExitReplay?.());
  const tracePanel = h('section', { class: 'trace-panel', 'aria-labelledby': 'trace-h', hidden: true },
    traceHead, traceDetails,
    h('div', { class: 'controls', role: 'toolbar', 'aria-label': 'trace controls' },
      sbtn('|◀', 'first step', () => view.onStep?.(0)),
      sbtn('◀ step', 'previous step', () => view.onStep?.(step - 1)),
      sbtn('step ▶', 'next step', () => view.onStep?.(step + 1)),
      sbtn('▶|', 'last step', () => view.onStep?.(Number.MAX_SAFE_INTEGER)),
      stepOut, exitBtn),
    h('div', { class: 'trace-grid' },
      traceList,
      h('div', { class: 'step-detail', 'aria-label': 'at this step' },
        h('h4', {}, 'At this step'), detHead, detNotes, detSrc, detBlocked,
        h('table', { class: 'bar-table', id: 'step-bars', 'aria-label': 'barrier states at this step' },
          h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'barrier'), h('th', { scope: 'col' }, 'state after this step'))), detBars))),
    // The ring below both columns: its figures keep their drawing's size (labels of 12 px or more).
    ringSlot);

  const el = h('section', { class: 'view check', id: 'view-check', 'aria-labelledby': 'check-h' },
    h('h2', { id: 'check-h' }, 'Check every schedule'),
    h('p', { class: 'lead' }, 'The exhaustive checker explores every interleaving of the agents and of the asynchronous completions (TMA landings, MMA and commit completions, remote signals) for the parameters above, and reports each hazard with its shortest schedule. It runs in a worker: the page stays responsive and Cancel stops it. Replay a hazard to step the timeline, the barrier states, the full/empty ring, the barrier mechanism and the sketch through its trace.'),
    h('div', { class: 'controls' }, runBtn, cancelBtn, h('label', {}, 'max states ', maxIn), h('label', {}, 'time limit (s) ', toIn), bar),
    prog, verdict, coverage,
    h('div', { class: 'check-grid' }, h('div', { class: 'hazard-col' }, list, warnBox), tracePanel));

  const intOf = (x: HTMLInputElement, lo: number, hi: number, dflt: number) => {
    const v = Math.trunc(Number(x.value));
    return Number.isFinite(v) && v >= lo ? Math.min(v, hi) : dflt;
  };
  runBtn.addEventListener('click', () => view.onRun?.(intOf(maxIn, 1000, 50_000_000, d.maxStates), intOf(toIn, 1, 3600, d.timeoutS) * 1000));
  cancelBtn.addEventListener('click', () => view.onCancel?.());

  // A PTX line names the CUDA line it was compiled from (`-lineinfo`), as the CLI's report does.
  const locText = (l: { line: number; origin?: string }) => {
    const t = view.lineText(l.line);
    return `line ${l.line}${l.origin ? ` (${l.origin})` : ''}${t !== null ? `:  ${t.trim()}` : ''}`;
  };
  /** The distinct lines of `locs` (each with the first CUDA line met for it), in order. */
  const distinct = (locs: readonly { line: number; origin?: string }[]) => {
    const by = new Map<number, { line: number; origin?: string }>();
    for (const l of locs) if (l.line > 0 && !by.has(l.line)) by.set(l.line, l);
    return [...by.values()];
  };

  const hazardItem = (hz: Hazard, index: number) => {
    // A static finding has no schedule: nothing to replay (it is found from the program's text).
    let action: HTMLElement;
    if (hz.static || hz.trace.length === 0) {
      action = h('span', { class: 'hz-static', title: 'found from the kernel’s code alone, without running a schedule' }, 'static finding: no schedule to replay');
    } else {
      const replayBtn = h('button', { type: 'button', class: 'replay', 'aria-label': `Replay (${hz.trace.length} step${hz.trace.length === 1 ? '' : 's'}): ${hz.kind} counterexample ${index + 1}` }, `Replay (${hz.trace.length} step${hz.trace.length === 1 ? '' : 's'})`);
      replayBtn.addEventListener('click', () => view.onReplay?.(index));
      action = replayBtn;
    }
    const lines = distinct(hz.locations);
    const causeLines = hz.cause ? distinct(hz.cause.locations) : [];
    // A hang (or race) that a static finding explains says so first.
    const cause = hz.cause
      ? h('div', { class: 'hz-cause', role: 'note' },
        hz.cause.kind === 'tx-mismatch'
          ? h('p', {}, h('strong', {}, 'Cause: the byte count. '), hz.cause.message)
          : SEARCH_CAUSES.has(hz.cause.kind)
          ? h('p', {}, h('strong', {}, 'Cause: the wait\'s parity. '), hz.cause.message)
          : h('p', {}, h('strong', {}, 'Cause: a static finding. '), `The checker's ${hz.cause.kind} check explains this ${hz.kind}: ${hz.cause.message}`),
        causeLines.length ? h('ul', { class: 'hz-locs', 'aria-label': 'lines of the cause' }, ...causeLines.map((l) => h('li', {}, h('code', {}, locText(l))))) : '')
      : '';
    return h('li', { class: `hazard sev-${hz.severity}${hz.static ? ' static' : ''}`, 'data-index': index },
      h('p', { class: 'hz-head' }, h('span', { class: `hz-kind k-${hz.severity}` }, hz.kind),
        hz.subject ? h('span', { class: 'hz-subject' }, ` ${hz.subject.type} ${hz.subject.name}`) : '', ' ', action),
      cause,
      HAZARD_TEXT[hz.kind] ? h('p', { class: 'hz-what' }, HAZARD_TEXT[hz.kind]!) : '',
      h('p', { class: 'hz-msg' }, hz.message),
      lines.length ? h('ul', { class: 'hz-locs', 'aria-label': 'source lines' }, ...lines.map((l) => h('li', {}, h('code', {}, locText(l))))) : '',
      hz.details.length ? h('ul', { class: 'hz-details' }, ...hz.details.filter((x) => !(hz.cause && x.startsWith('root cause (static'))).map((x) => h('li', {}, x))) : '');
  };

  const view: CheckView = {
    el,
    ringSlot,
    lineText: () => null,
    get hazards() {
      return hazards;
    },
    reset(note) {
      hazards = [];
      shown = null;
      replace(list);
      replace(warnList);
      warnBox.hidden = true;
      tracePanel.hidden = true;
      setText(verdict, '');
      verdict.className = 'check-verdict';
      setText(coverage, '');
      setText(prog, note);
      bar.hidden = true;
      runBtn.disabled = false;
      cancelBtn.disabled = true;
    },
    running(inWorker) {
      view.reset(inWorker ? 'Starting the checker in a worker…' : 'Checking on the page’s thread (workers are unavailable here)…');
      t0 = performance.now();
      runBtn.disabled = true;
      cancelBtn.disabled = !inWorker;
      bar.hidden = false;
      bar.removeAttribute('value');
    },
    progress(p) {
      const rate = p.elapsedMs > 0 ? Math.round((p.states / p.elapsedMs) * 1000) : 0;
      setText(prog, `${fmt(p.states)} states · ${fmt(rate)} states/s · depth ${p.depth} · frontier ${fmt(p.frontier)} · ${(p.elapsedMs / 1000).toFixed(1)} s · ~${(p.memory / 1048576).toFixed(0)} MB`);
    },
    cancelled() {
      runBtn.disabled = false;
      cancelBtn.disabled = true;
      bar.hidden = true;
      setText(prog, `${prog.textContent ? `${prog.textContent} — ` : ''}cancelled after ${((performance.now() - t0) / 1000).toFixed(1)} s.`);
      setText(verdict, 'Cancelled: no verdict.');
      verdict.className = 'check-verdict v-incomplete';
    },
    failed(message) {
      runBtn.disabled = false;
      cancelBtn.disabled = true;
      bar.hidden = true;
      setText(verdict, `The checker could not run: ${message}`);
      verdict.className = 'check-verdict v-bad';
    },
    result(r, missing) {
      runBtn.disabled = false;
      cancelBtn.disabled = true;
      bar.hidden = true;
      const c = r.coverage;
      setText(prog, `${fmt(c.states)} states, ${fmt(c.transitions)} transitions, depth ${c.depth}, in ${(c.elapsedMs / 1000).toFixed(2)} s.`);
      hazards = [...r.hazards, ...r.warnings];
      const v = r.verdict;
      setText(verdict, v === 'ok' ? `Verdict: ok — every schedule explored, no error${r.warnings.length ? ` (${r.warnings.length} warning${r.warnings.length > 1 ? 's' : ''})` : ''}.`
        : v === 'incomplete' ? `Verdict: incomplete — the search stopped (${r.stoppedBy}) before exploring every schedule; no error found so far.`
          : `Verdict: ${v} — ${r.hazards.length} error hazard${r.hazards.length > 1 ? 's' : ''}${r.stoppedBy !== 'hazard' ? '' : r.hazards.some((h) => h.randomRun) ? ', found by a random run beside the search (a shorter trace may exist)' : ' at the shortest depth'}.`);
      verdict.className = `check-verdict ${v === 'ok' ? 'v-good' : v === 'incomplete' ? 'v-incomplete' : 'v-bad'}`;
      if (missing) setText(verdict, missing);
      setText(coverage, `${r.complete ? 'Every schedule explored' : r.stoppedBy === 'hazard' ? 'Stopped at the depth of the first error' : `Stopped by ${r.stoppedBy}`}: ${fmt(c.states)} distinct states, ${fmt(c.terminalStates)} terminal, peak frontier ${fmt(c.peakFrontier)}; partial-order reduction ${c.por ? 'on' : 'off'}; symmetry: ${r.symmetryText}.`);
      replace(list, ...r.hazards.map((hz, i) => hazardItem(hz, i)));
      warnBox.hidden = r.warnings.length === 0;
      setText(warnSum, `${r.warnings.length} warning${r.warnings.length === 1 ? '' : 's'}`);
      replace(warnList, ...r.warnings.map((hz, i) => hazardItem(hz, r.hazards.length + i)));
    },
    showTrace(index) {
      shown = index;
      for (const li of Array.from(el.querySelectorAll('li.hazard'))) li.classList.toggle('selected', Number((li as HTMLElement).dataset.index) === index);
      if (index === null || !hazards[index]) {
        tracePanel.hidden = true;
        return;
      }
      const hz = hazards[index]!;
      tracePanel.hidden = false;
      setText(traceHead, `Counterexample ${index + 1}: ${hz.kind}${hz.subject ? ` on ${hz.subject.name}` : ''} — ${hz.trace.length} step${hz.trace.length === 1 ? '' : 's'}`);
      replace(traceDetails, h('li', {}, hz.message));
      replace(traceList, before, ...hz.trace.map((t) => {
        const li = h('li', { role: 'option', 'data-step': t.n, 'aria-selected': 'false' },
          h('span', { class: 'st-n' }, `${t.n}.`), ' ', h('span', { class: `st-actor ${t.kind}` }, t.actor), ': ', h('code', {}, t.op),
          t.loc && t.loc.line > 0 ? h('span', { class: 'st-line' }, ` (line ${t.loc.line}${t.loc.origin ? `, ${t.loc.origin}` : ''})`) : '',
          t.notes.length || t.groups ? h('div', { class: 'st-notes' }, [...t.notes, ...(t.groups ? [groupNoteText(t.groups)] : [])].join('; ')) : '');
        li.addEventListener('click', () => view.onStep?.(t.n));
        return li;
      }));
    },
    setStep(k, det) {
      step = k;
      const hz = shown !== null ? hazards[shown] : undefined;
      const N = hz?.trace.length ?? 0;
      setText(stepOut, `step ${k} of ${N}`);
      for (const li of Array.from(traceList.children)) {
        const on = Number((li as HTMLElement).dataset.step) === k;
        li.classList.toggle('current', on);
        li.setAttribute('aria-selected', String(on));
        if (on && !tracePanel.hidden) (li as HTMLElement).scrollIntoView({ block: 'nearest' });
      }
      traceList.setAttribute('aria-activedescendant', '');
      setText(detHead, det.head);
      replace(detNotes, ...det.notes.map((n) => h('li', {}, n)));
      setText(detSrc, det.source);
      detSrc.hidden = !det.source;
      replace(detBlocked, ...(det.blocked.length ? [h('p', { class: 'hang-head' }, 'Nothing can progress:'), h('ul', {}, ...det.blocked.map((b) => h('li', {}, b)))] : []));
      replace(detBars, ...det.bars.map((b) => h('tr', { class: b.hot ? 'hot' : '' }, h('th', { scope: 'row' }, b.name), h('td', {}, b.text))));
    },
  };
  before.addEventListener('click', () => view.onStep?.(0));
  traceList.addEventListener('keydown', (e) => {
    const N = shown !== null ? hazards[shown]?.trace.length ?? 0 : 0;
    let k = -1;
    if (e.key === 'ArrowDown' || e.key === 'ArrowRight') k = step + 1;
    else if (e.key === 'ArrowUp' || e.key === 'ArrowLeft') k = step - 1;
    else if (e.key === 'Home') k = 0;
    else if (e.key === 'End') k = N;
    else return;
    e.preventDefault();
    view.onStep?.(Math.max(0, Math.min(N, k)));
  });
  return view;
}
