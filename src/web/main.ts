/// <reference lib="dom" />
/**
 * The mbsim explorer: the seed chapter's four figures made live for any kernel, computed in the
 * browser by the real model, machine and simulator. This module wires the views, the examples menu,
 * parameters and the share link (URL hash) together; the page's structure is `layout.ts`, the
 * checker's runs and the counterexample replay `replay.ts`, what follows the timeline's cursor
 * `cursor-follow.ts`.
 */
import { h, replace, setText, fmt } from './dom.js';
import { cancelSimulation } from './engine.js';
import { asyncNames, instantiateKernel, type RunModel } from './model.js';
import { decodeView, encodeView, type SourceRef, type Tab, type ViewState } from './share.js';
import { simulateRun } from './sim-run.js';
import { cursorFollower } from './cursor-follow.js';
import { openServedFile, sourceSummary } from './source-info.js';
import { paramInputs } from './param-inputs.js';
import { LEAD_SIM, LEAD_TRACE, layoutPage, tabBar } from './layout.js';
import { isExample, isFile, load, SKETCH_FILES, sketchTwin, type Loaded } from './sources.js';
import { inspectorView } from './inspector.js';
import { figuresNav } from './kernel-menu.js';
import { headerView } from './header.js';
import { runInfoParts } from './run-info.js';
import { missingParamNote, missingParamStop, missingParamVerdict } from './missing-param-note.js';
import type { Diagnostic } from '../model/diagnostics.js';
import { DEFAULT_BOUNDS } from '../check/engine.js';
import { checkAndReplay } from './replay.js';
import { checkView } from './views/check.js';
import { editorView } from './views/editor.js';
import { mechanismView } from './views/mechanism.js';
import { phasesView } from './views/phases.js';
import { ringView } from './views/ring.js';
import { timelineView } from './views/timeline.js';

let state: ViewState;
let loaded: Loaded | null = null;
/** The model the views show: the simulation, or a counterexample being replayed. */
let model: RunModel | null = null;
/** The simulation of the current kernel. */
let simModel: RunModel | null = null;
/** The simulation's stop at a served PTX kernel's missing parameter, with its note (null: none). */
let simStop: { diag: Diagnostic; note: HTMLElement } | null = null;
let runGen = 0;
let names = new Map<number, string>();
let lines: string[] = [];
const warnings: string[] = [];

// ---- views
const mech = mechanismView();
const timeline = timelineView();
const ring = ringView();
const editor = editorView();
const phases = phasesView(2, 4);
// The CLI's bounds (`mbsim check` without --max-states / --timeout).
const check = checkView({ maxStates: DEFAULT_BOUNDS.maxStates, timeoutS: DEFAULT_BOUNDS.timeoutMs / 1000 });
const ring2 = ringView('replay-ring');
check.ringSlot.appendChild(ring2.el);
check.lineText = (line) => (lines.length ? lines[line - 1] ?? null : null);

// ---- header
const { exampleSel, sketchOpt, summary, paramBox, paramNote, verdict, simProgress, simCancel, shareBtn, shareOut, warnBox, replayText, replayBar, header } = headerView({
  cancelSimulation,
  prevStep: () => cr.goStep(timeline.curStep - 1),
  nextStep: () => cr.goStep(timeline.curStep + 1),
  showTrace: () => selectTab('check'),
  stopReplay: () => cr.exitReplay(),
});

// ---- the chapter's four figures, one click each
const openFile = (path: string) => {
  if (!(state.source.kind === 'file' && state.source.path === path) || Object.keys(state.params).length) setSource({ kind: 'file', path }, {});
};
header.appendChild(figuresNav({
  mechanism: () => selectTab('mechanism'),
  phases: () => {
    phases.showChapter();
    selectTab('phases');
  },
  tma: () => {
    openFile('examples/mechanism.mbk');
    selectTab('timeline');
  },
  fullEmpty: () => {
    openFile('examples/pipeline.mbk');
    selectTab('timeline');
    ring.el.scrollIntoView({ block: 'start' });
  },
}));

// ---- tabs, panels and the timeline tab (layout.ts)
const { tabList, tabBtns } = tabBar((t) => selectTab(t), (t) => focusPanel(t));
const inspector = inspectorView();
const { tlLead, runInfo } = layoutPage(document.getElementById('app')!, {
  header, tabList, mechanism: mech.el, phases: phases.el, timeline: timeline.el, inspector: inspector.el, ring: ring.el, sketch: editor.el, check: check.el,
});

// ---- behaviour
/** Moves the keyboard focus into tab `t`'s panel (the timeline's canvas, or the panel itself). */
function focusPanel(t: Tab): void {
  if (t === 'timeline') timeline.focus();
  else document.getElementById(`panel-${t}`)?.focus({ preventScroll: true });
}

function selectTab(t: Tab): void {
  state.tab = t;
  for (const [k, b] of tabBtns) {
    const on = k === t;
    b.setAttribute('aria-selected', String(on));
    b.tabIndex = on ? 0 : -1;
    document.getElementById(`panel-${k}`)!.hidden = !on;
  }
  if (t === 'timeline') timeline.fit();
  if (t === 'sketch') editor.reveal();
  showParams();
  saveHash();
}

/**
 * The header's kernel parameters apply to the kernel; the mechanism tab and the chapter's loop on
 * the phase tab have their own inputs (the loop's S and N), so there the header's are hidden rather
 * than shown next to a different S.
 */
function showParams(): void {
  const own = state.tab === 'mechanism' || (state.tab === 'phases' && phases.mode === 'chapter');
  paramBox.hidden = own;
  paramNote.hidden = !own || paramBox.childElementCount === 0;
}

let hashTimer = 0;
function saveHash(now = false): void {
  const write = () => {
    hashTimer = 0;
    const hash = `#${encodeView(state)}`;
    if (location.hash !== hash) {
      history.replaceState(null, '', hash);
      // A link shown earlier no longer describes the view.
      if (!shareOut.hidden) shareOut.value = location.href;
      setText(shareBtn, 'Copy link');
    }
  };
  if (now) write();
  else if (!hashTimer) hashTimer = window.setTimeout(write, 250);
}

function showWarnings(): void {
  warnBox.hidden = warnings.length === 0;
  replace(warnBox, ...warnings.map((w) => h('p', {}, w)));
}

function sourceLine(loc: { line: number; file?: string } | undefined): string | null {
  if (!loc || !loc.line || lines.length === 0) return null;
  if (loc.file !== undefined && loc.file !== loaded?.file) return null;
  return lines[loc.line - 1] ?? null;
}

/** The text of the sketch `mbsim serve FILE` opened (the summary names it so until it is edited). */
let servedText: string | undefined;

function setSource(src: SourceRef, params: Record<string, number>, opts: { fromEditor?: boolean; ev?: number } = {}): void {
  state.source = src;
  state.params = { ...params };
  loaded = load(src);
  lines = loaded.text !== undefined ? loaded.text.split(/\r\n|\r|\n/) : [];
  const key = src.kind === 'example' ? `ex:${src.name}` : src.kind === 'file' ? `file:${src.path}` : 'sketch:';
  exampleSel.value = key;
  setText(sketchOpt, src.kind === 'sketch' ? `sketch: ${src.name}` : src.kind === 'ptx' ? `PTX: ${src.name}` : 'edited sketch');
  setText(summary, sourceSummary(src, loaded.text, servedText));
  if (!opts.fromEditor) {
    if (src.kind === 'example') editor.setSource({ builtin: src.name, ...(sketchTwin(src.name) ? { twin: sketchTwin(src.name)!.path } : {}) });
    else editor.setSource({ text: loaded.text ?? '', file: loaded.file, ...(src.kind === 'ptx' ? { launch: src.launch } : {}) });
  }
  renderParams();
  rerun(opts.ev ?? -1);
}

function renderParams(): void {
  paramInputs(paramBox, loaded?.kernel, state.params, () => rerun(-1));
  showParams();
}

function noRun(head: string, cls: string, ...body: (HTMLElement | string)[]): void {
  setText(verdict, head);
  verdict.className = `verdict ${cls}`;
  replace(runInfo, ...body);
  model = simModel = null;
  simStop = null;
  timeline.setModel(null, sourceLine);
  ring.setModel(null);
  phases.setKernel(null);
  saveHash();
}

/** Simulates the current kernel in the worker; the views update when it answers. */
function rerun(ev: number): void {
  cr.stopCheck();
  check.reset('');
  const k = loaded?.kernel;
  const gen = ++runGen;
  simProgress.hidden = simCancel.hidden = true;
  const done = () => {
    if (gen !== runGen) return;
    document.body.dataset.busy = '0';
    document.body.dataset.ready = '1';
  };
  if (!k) {
    const d = loaded?.diagnostics ?? [];
    noRun(d.length ? 'does not parse' : 'no kernel', 'bad', h('p', { class: 'error' }, `The sketch has ${d.length} problem(s); see the Sketch tab.`),
      h('ul', {}, ...d.slice(0, 8).map((x) => h('li', {}, `line ${x.line}:${x.col} [${x.code}] ${x.message}`))));
    return done();
  }
  const inst = instantiateKernel(k, state.params);
  if (!inst.program) {
    noRun('error', 'bad', h('p', { class: 'error' }, inst.error ?? 'error'));
    return done();
  }
  const program = inst.program;
  document.body.dataset.busy = '1';
  setText(verdict, 'simulating…');
  verdict.className = 'verdict busy';
  simulateRun(state.source, state.params, program, {
    current: () => gen === runGen,
    progress: simProgress,
    cancel: simCancel,
    done: (m) => {
      showSim(m, ev);
      phases.setKernel({ src: state.source, params: { ...state.params }, program });
      done();
    },
    failed: (head, body) => {
      noRun(head, 'bad', body);
      done();
    },
  });
}

function showSim(m: RunModel, ev: number): void {
  simModel = m;
  const src = state.source;
  const stop = src.kind === 'ptx' && m.sim.verdict === 'trap' ? missingParamStop(m.program, m.sim.diagnostics) : null;
  simStop = stop && src.kind === 'ptx' ? { diag: stop.diag, note: missingParamNote(stop, src.name, (values) => giveLaunchParams(src, values)) } : null;
  showModel(m);
  const sim = m.sim;
  setText(verdict, stop ? `${missingParamVerdict(stop)} · stopped at line ${stop.loc.line}` : `${sim.verdict} · ${fmt(sim.cycles)} cycles · ${fmt(m.events.length)} events`);
  verdict.className = `verdict ${sim.verdict === 'ok' ? 'good' : 'bad'}`;
  timeline.setEvent(ev, true);
  if (state.tab === 'timeline') timeline.fit();
  saveHash();
}

/** Points every view at `m` (the simulation or a replayed counterexample). */
function showModel(m: RunModel): void {
  model = m;
  names = asyncNames(m);
  follower.reset();
  renderRunInfo();
  setText(tlLead, m.trace ? LEAD_TRACE : LEAD_SIM);
  timeline.setModel(m, sourceLine);
  ring.setModel(m);
  if (m.trace) ring2.setModel(m);
}

// ---- the checker and counterexample replay (replay.ts)
const cr = checkAndReplay({
  kernel: () => loaded?.kernel,
  source: () => state.source,
  params: () => state.params,
  tab: () => state.tab,
  ev: () => state.ev,
  lines: () => lines,
  simModel: () => simModel,
  showModel: (m) => showModel(m),
}, { check, timeline, mech, replayBar, replayText });

function renderRunInfo(): void {
  if (!model) return;
  const replay = cr.replay;
  replace(runInfo, ...runInfoParts(model, replay && model.trace ? { index: replay.index, hazard: replay.hazard } : null, () => cr.exitReplay(), jumpToTime, model === simModel ? simStop : null));
}

/** Re-opens PTX source `src` with `values` added to its launch's parameters (the missing-parameter note's inputs). */
function giveLaunchParams(src: Extract<SourceRef, { kind: 'ptx' }>, values: Record<string, number>): void {
  setSource({ ...src, launch: { ...src.launch, params: { ...(src.launch.params ?? {}), ...values } } }, state.params);
}

function jumpToTime(t: number): void {
  if (!model) return;
  let i = 0;
  while (i < model.events.length && model.evT[i]! < t) i++;
  // The last event at that time.
  while (i + 1 < model.events.length && model.evT[i + 1] === t) i++;
  timeline.setEvent(i, true);
}

// ---- what follows the timeline's cursor (cursor-follow.ts)
const follower = cursorFollower({
  model: () => model,
  file: () => loaded?.file,
  ev: () => state.ev,
  setEv: (ev) => {
    state.ev = ev;
    saveHash();
  },
  names: () => names,
  sourceLine,
}, { ring, ring2, timeline, inspector, editor, cr: () => cr });
timeline.onCursor = (ev) => follower.inspect(ev);

exampleSel.addEventListener('change', () => {
  const v = exampleSel.value;
  if (v.startsWith('ex:')) setSource({ kind: 'example', name: v.slice(3) }, {});
  else if (v.startsWith('file:')) setSource({ kind: 'file', path: v.slice(5) }, {});
});
editor.onKernelText = (text) => {
  const name = state.source.kind === 'file' ? state.source.path.split('/').pop()! : state.source.kind === 'sketch' || state.source.kind === 'ptx' ? state.source.name : 'sketch.mbk';
  const same = (state.source.kind === 'file' && SKETCH_FILES.find((f) => f.path === (state.source as { path: string }).path)?.text === text)
    || ((state.source.kind === 'sketch' || state.source.kind === 'ptx') && state.source.text === text);
  if (same) return;
  if (state.source.kind === 'ptx') return setSource({ kind: 'ptx', name, text, launch: state.source.launch }, state.params, { fromEditor: true });
  setSource({ kind: 'sketch', name, text }, state.params, { fromEditor: true });
};
editor.onOpenTwin = (path) => setSource({ kind: 'file', path }, state.params);
phases.onMode = () => {
  if (state) showParams();
};
phases.onChange = (S, N) => {
  state.ps = S;
  state.pn = N;
  saveHash();
};
shareBtn.addEventListener('click', async () => {
  saveHash(true);
  shareOut.value = location.href;
  shareOut.hidden = false;
  shareOut.select();
  try {
    await navigator.clipboard.writeText(location.href);
    setText(shareBtn, 'Copied');
  } catch {
    setText(shareBtn, 'Copy link');
  }
});
document.addEventListener('keydown', (e) => {
  if (e.defaultPrevented) return;
  const t = e.target as HTMLElement | null;
  if (t && (t.closest('input, select, textarea, button, [contenteditable="true"], .cm-editor, [role="listbox"]'))) return;
  const replay = cr.replay;
  if (state.tab === 'timeline') timeline.key(e);
  else if (replay && (state.tab === 'check' || state.tab === 'mechanism')) {
    // Stepping a counterexample from the Check and Mechanism tabs too.
    const k = e.key === 'ArrowRight' ? timeline.curStep + 1 : e.key === 'ArrowLeft' ? timeline.curStep - 1 : e.key === 'Home' ? 0 : e.key === 'End' ? replay.hazard.trace.length : null;
    if (k === null) return;
    cr.goStep(k);
    e.preventDefault();
  }
});

function applyHash(hash: string): void {
  const { view, warnings: w } = decodeView(hash, isExample, isFile);
  warnings.length = 0;
  warnings.push(...w);
  showWarnings();
  state = view;
  phases.set(view.ps, view.pn);
  setSource(view.source, view.params, { ev: view.ev });
  selectTab(view.tab);
}
window.addEventListener('hashchange', () => {
  if (location.hash !== `#${encodeView(state)}`) applyHash(location.hash);
});

applyHash(location.hash);

// `mbsim serve FILE`: the file it opened (served.ts).
openServedFile((src, sketchText) => {
  if (sketchText !== undefined) servedText = sketchText;
  setSource(src, {});
});

/** Hooks for the browser tests and the frame-rate benchmark. */
(window as unknown as { __mbsim: unknown }).__mbsim = {
  timeline,
  get replaying() {
    const replay = cr.replay;
    return replay ? { index: replay.index, steps: replay.hazard.trace.length, step: timeline.curStep } : null;
  },
  get model() {
    return model;
  },
  get state() {
    return state;
  },
};
