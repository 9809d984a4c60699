/// <reference lib="dom" />
/**
 * The mbsim explorer: the seed chapter's four figures made live for any kernel, computed in the
 * browser by the real model, machine and simulator. This module wires the views, the examples menu,
 * parameters and the share link (URL hash) together.
 */
import type { MachineEvent } from '../machine/events.js';
import type { Hazard } from '../check/check.js';
import { h, replace, setText, fmt } from './dom.js';
import { checkIn, Dropped, simulateIn, type CheckRun } from './engine.js';
import type { PackedCheck } from './engine-protocol.js';
import { asyncNames, barStateAt, describeEvent, eventBar, eventLoc, instantiateKernel, traceModel, unpackModel, type RunModel } from './model.js';
import { decodeView, encodeView, MAX_SKETCH, TABS, type SourceRef, type Tab, type ViewState } from './share.js';
import { EXAMPLES, isExample, isFile, leadComment, load, SKETCH_FILES, sketchTwin, type Loaded } from './sources.js';
import { checkView, type StepDetail } from './views/check.js';
import { editorView } from './views/editor.js';
import { mechanismView } from './views/mechanism.js';
import { phasesView } from './views/phases.js';
import { ringView } from './views/ring.js';
import { timelineView } from './views/timeline.js';

const TAB_LABEL: Record<Tab, string> = { mechanism: 'Barrier mechanism', phases: 'Phase tracking', timeline: 'Timeline & full/empty', check: 'Check', sketch: 'Sketch' };

let state: ViewState;
let loaded: Loaded | null = null;
/** The model the views show: the simulation, or a counterexample being replayed. */
let model: RunModel | null = null;
/** The simulation of the current kernel. */
let simModel: RunModel | null = null;
let runGen = 0;
let checkRun: CheckRun | null = null;
let checkResult: PackedCheck | null = null;
/** The counterexample being replayed. */
let replay: { index: number; hazard: Hazard; model: RunModel; subject: string | null; lastBar: string | null } | null = null;
let names = new Map<number, string>();
let lines: string[] = [];
const warnings: string[] = [];

// ---- views
const mech = mechanismView();
const timeline = timelineView();
const ring = ringView();
const editor = editorView();
const phases = phasesView(2, 4);
const check = checkView({ maxStates: 2_000_000, timeoutS: 60 });
const ring2 = ringView('replay-ring');
check.ringSlot.appendChild(ring2.el);
check.lineText = (line) => (lines.length ? lines[line - 1] ?? null : null);

// ---- header
const exampleSel = h('select', { id: 'example', 'aria-label': 'example' });
const sketchOpt = h('option', { value: 'sketch:', disabled: true, hidden: true }, 'edited sketch');
{
  // Sketch files first. A built-in (TypeScript builder) example whose sketch file is bundled is the
  // same kernel: it is not listed (it would look like a duplicate), but stays selectable for links
  // (#ex=NAME) as a hidden option that names itself "(built-in)".
  const gSk = h('optgroup', { label: 'Sketch files (examples/*.mbk)' });
  const gBug = h('optgroup', { label: 'Buggy sketch files (examples/bugs)' });
  const gBuiltin = h('optgroup', { label: 'Built-in (TypeScript builder)' });
  for (const f of SKETCH_FILES) (f.group === 'bugs' ? gBug : gSk).appendChild(h('option', { value: `file:${f.path}`, title: f.summary }, f.path.replace(/^examples\//, '')));
  const twins: HTMLOptionElement[] = [];
  for (const ex of EXAMPLES) {
    const twin = !!sketchTwin(ex.name);
    const o = h('option', { value: `ex:${ex.name}`, title: ex.summary, ...(twin ? { hidden: true } : {}) }, `${ex.name} (built-in)`);
    if (twin) twins.push(o);
    else gBuiltin.appendChild(o);
  }
  exampleSel.append(gSk, gBug, ...(gBuiltin.children.length ? [gBuiltin] : []), ...twins, sketchOpt);
}
const summary = h('p', { class: 'ex-summary', id: 'ex-summary' });
const paramBox = h('div', { class: 'params', role: 'group', 'aria-label': 'kernel parameters' });
const paramNote = h('span', { class: 'param-note', id: 'param-note', hidden: true }, 'kernel parameters: on the Timeline, Check and Sketch tabs');
const verdict = h('span', { class: 'verdict', id: 'verdict', 'aria-live': 'polite' });
const shareBtn = h('button', { type: 'button', 'aria-label': 'copy share link' }, 'Copy link');
const shareOut = h('input', { type: 'text', readonly: true, class: 'share-out', 'aria-label': 'share link', hidden: true });
const warnBox = h('div', { class: 'warnings', role: 'status', hidden: true });
const replayText = h('span', { class: 'replay-text', id: 'replay-text' });
const replayBtn = (label: string, aria: string, fn: () => void) => {
  const b = h('button', { type: 'button', 'aria-label': aria, title: aria }, label);
  b.addEventListener('click', fn);
  return b;
};
const replayBar = h('div', { class: 'replay-bar', id: 'replay-bar', role: 'region', 'aria-label': 'counterexample replay', hidden: true },
  replayText,
  replayBtn('◀', 'replay: previous step', () => goStep(timeline.curStep - 1)),
  replayBtn('▶', 'replay: next step', () => goStep(timeline.curStep + 1)),
  replayBtn('Show trace', 'show the trace in the Check tab', () => selectTab('check')),
  replayBtn('Stop replay', 'stop replaying', () => exitReplay()));
const header = h('header', {},
  h('div', { class: 'brand' }, h('h1', {}, 'mbsim explorer'), h('span', { class: 'tag' }, 'mbarrier on Hopper & Blackwell, computed by the model')),
  h('div', { class: 'bar' }, h('label', {}, 'Kernel ', exampleSel), paramBox, paramNote, verdict, shareBtn, shareOut),
  summary, warnBox, replayBar);

// ---- the chapter's four figures, one click each (for a reader of the seed chapter)
// The accessible name is the visible text; the title says which figure it opens.
const figBtn = (label: string, title: string, fn: () => void) => {
  const b = h('button', { type: 'button', class: 'fig', title }, label);
  b.addEventListener('click', fn);
  return b;
};
const openFile = (path: string) => {
  if (!(state.source.kind === 'file' && state.source.path === path) || Object.keys(state.params).length) setSource({ kind: 'file', path }, {});
};
header.appendChild(h('nav', { class: 'figures', 'aria-label': 'the chapter’s figures' }, h('span', { class: 'fig-lead' }, 'The chapter’s figures:'),
  figBtn('1 · mbarrier state and operations', 'Chapter figure 1: one mbarrier, its fields and operations (Barrier mechanism tab)', () => selectTab('mechanism')),
  figBtn('2 · phase tracking', 'Chapter figure 2: the phase-tracking loop (Phase tracking tab)', () => {
    phases.showChapter();
    selectTab('phases');
  }),
  figBtn('3 · TMA loads tracked by an mbarrier', 'Chapter figure 3: the timeline of examples/mechanism.mbk', () => {
    openFile('examples/mechanism.mbk');
    selectTab('timeline');
  }),
  figBtn('4 · full/empty protocol', 'Chapter figure 4: the timeline and full/empty ring of examples/pipeline.mbk', () => {
    openFile('examples/pipeline.mbk');
    selectTab('timeline');
    ring.el.scrollIntoView({ block: 'start' });
  })));

// ---- tabs
const tabBtns = new Map<Tab, HTMLButtonElement>();
const panels = new Map<Tab, HTMLElement>();
const tabList = h('div', { class: 'tabs', role: 'tablist', 'aria-label': 'views' });
for (const t of TABS) {
  const b = h('button', { type: 'button', role: 'tab', id: `tab-${t}`, 'aria-controls': `panel-${t}`, 'aria-selected': 'false', tabindex: '-1' }, TAB_LABEL[t]);
  b.addEventListener('click', () => selectTab(t));
  b.addEventListener('keydown', (e) => {
    const i = TABS.indexOf(t);
    if (e.key === 'ArrowRight' || e.key === 'ArrowLeft') {
      const n = TABS[(i + (e.key === 'ArrowRight' ? 1 : TABS.length - 1)) % TABS.length]!;
      selectTab(n);
      tabBtns.get(n)!.focus();
      e.preventDefault();
    }
  });
  tabBtns.set(t, b);
  tabList.appendChild(b);
}

// ---- timeline tab: run summary, timeline, inspector, ring
const LEAD_SIM = 'Every lane comes from the timed simulation of the kernel: agents issue (blue) or stall (grey), TMA copies and MMAs run on their units, and each barrier’s parity changes when a phase completes. Step with ← →, drag the ruler to scrub, wheel to zoom, drag to pan; hover for details.';
const LEAD_TRACE = 'A counterexample found by the checker, replayed through the machine: one column per step of its schedule (not cycles). Agents issue (blue) or are blocked (grey); asynchronous operations run on their units from issue to completion. Step with ← →; the trace, the ring, the mechanism and the sketch follow.';
const tlLead = h('p', { class: 'lead', id: 'tl-lead' }, LEAD_SIM);
const runInfo = h('div', { class: 'run-info', id: 'run-info' });
const curEvent = h('p', { class: 'cur-event', id: 'cur-event', 'aria-live': 'polite' });
const curSrc = h('pre', { class: 'cur-src', id: 'cur-src' });
const barTable = h('tbody', {});
const inspector = h('section', { class: 'inspector', 'aria-labelledby': 'insp-h' },
  h('h3', { id: 'insp-h' }, 'At the cursor'), curEvent, curSrc,
  h('table', { class: 'bar-table', id: 'bar-table', 'aria-label': 'barrier states at the cursor' },
    h('thead', {}, h('tr', {}, ...['barrier', 'phase', 'parity', 'pending / expected', 'tx-count'].map((c) => h('th', { scope: 'col' }, c)))), barTable));
const legend = h('p', { class: 'legend' },
  h('span', { class: 'sw k-op' }), ' issuing ', h('span', { class: 'sw k-stall' }), ' stalled ', h('span', { class: 'sw k-tma' }), ' TMA copy ',
  h('span', { class: 'sw k-mma' }), ' MMA ', h('span', { class: 'sw k-store' }), ' bulk store ', h('span', { class: 'sw k-signal' }), ' remote signal ',
  h('span', { class: 'sw k-blocked' }), ' blocked forever (hang) ',
  h('span', { class: 'sw p0' }), ' barrier parity 0 ', h('span', { class: 'sw p1' }), ' parity 1 ', h('span', { class: 'sw k-done' }), ' phase completed ',
  h('span', { class: 'sw k-pend' }), ' pending arrivals ', h('span', { class: 'sw k-txc' }), ' tx-count (a phase completes when both are 0)');

panels.set('mechanism', mech.el);
panels.set('phases', phases.el);
panels.set('timeline', h('section', { class: 'view timeline-view', id: 'view-timeline', 'aria-labelledby': 'tl-h' },
  h('h2', { id: 'tl-h' }, 'Timeline'),
  tlLead,
  runInfo, legend, timeline.el, h('div', { class: 'below' }, inspector, ring.el)));
panels.set('sketch', editor.el);
panels.set('check', check.el);
const main = h('main', {});
for (const t of TABS) {
  const p = panels.get(t)!;
  main.appendChild(h('div', { role: 'tabpanel', id: `panel-${t}`, 'aria-labelledby': `tab-${t}`, hidden: true }, p));
}
const app = document.getElementById('app')!;
replace(app, header, tabList, main, h('footer', {}, 'mbsim — the model follows the PTX ISA 9.1 and H200 measurements. Links carry the kernel; nothing in a link is executed.'));

// ---- behaviour
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

function setSource(src: SourceRef, params: Record<string, number>, opts: { fromEditor?: boolean; ev?: number } = {}): void {
  state.source = src;
  state.params = { ...params };
  loaded = load(src);
  lines = loaded.text !== undefined ? loaded.text.split(/\r\n|\r|\n/) : [];
  const key = src.kind === 'example' ? `ex:${src.name}` : src.kind === 'file' ? `file:${src.path}` : 'sketch:';
  exampleSel.value = key;
  const ex = src.kind === 'example' ? EXAMPLES.find((e) => e.name === src.name) : undefined;
  const file = src.kind === 'file' ? SKETCH_FILES.find((f) => f.path === src.path) : undefined;
  const firstComment = leadComment(loaded.text ?? '');
  setText(sketchOpt, src.kind === 'sketch' ? `sketch: ${src.name}` : 'edited sketch');
  setText(summary, ex ? `${ex.summary} (built-in, written with the TypeScript builder)` : file ? file.summary : src.kind === 'sketch' ? `${src.name} (edited or shared sketch)${firstComment ? `: ${firstComment}` : ''}` : '');
  if (!opts.fromEditor) {
    if (src.kind === 'example') editor.setSource({ builtin: src.name, ...(sketchTwin(src.name) ? { twin: sketchTwin(src.name)!.path } : {}) });
    else editor.setSource({ text: loaded.text ?? '', file: loaded.file });
  }
  renderParams();
  rerun(opts.ev ?? -1);
}

function renderParams(): void {
  replace(paramBox);
  const k = loaded?.kernel;
  if (!k) return;
  for (const p of k.params) {
    const v = state.params[p.name] ?? p.value;
    const inp = h('input', { type: 'number', value: v, step: 1, 'aria-label': `parameter ${p.name}`, class: 'num', 'data-param': p.name });
    inp.addEventListener('change', () => {
      const n = Number(inp.value);
      if (!Number.isSafeInteger(n)) return;
      if (n === p.value) delete state.params[p.name];
      else state.params[p.name] = n;
      rerun(-1);
    });
    paramBox.appendChild(h('label', {}, `${p.name} `, inp));
  }
  showParams();
}

function noRun(head: string, cls: string, ...body: (HTMLElement | string)[]): void {
  setText(verdict, head);
  verdict.className = `verdict ${cls}`;
  replace(runInfo, ...body);
  model = simModel = null;
  timeline.setModel(null, sourceLine);
  ring.setModel(null);
  phases.setKernel(null);
  saveHash();
}

/** Simulates the current kernel in the worker; the views update when it answers. */
function rerun(ev: number): void {
  stopCheck();
  check.reset('');
  const k = loaded?.kernel;
  const gen = ++runGen;
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
  const t0 = performance.now();
  simulateIn(state.source, state.params).then((packed) => {
    if (gen !== runGen) return;
    const m = unpackModel(packed, program);
    m.simMs = performance.now() - t0;
    showSim(m, ev);
    phases.setKernel({ src: state.source, params: { ...state.params }, program });
    done();
  }).catch((err: unknown) => {
    if (err instanceof Dropped || gen !== runGen) return;
    noRun('error', 'bad', h('p', { class: 'error' }, String((err as Error)?.message ?? err)));
    done();
  });
}

function showSim(m: RunModel, ev: number): void {
  simModel = m;
  showModel(m);
  const sim = m.sim;
  setText(verdict, `${sim.verdict} · ${fmt(sim.cycles)} cycles · ${fmt(m.events.length)} events`);
  verdict.className = `verdict ${sim.verdict === 'ok' ? 'good' : 'bad'}`;
  timeline.setEvent(ev, true);
  if (state.tab === 'timeline') timeline.fit();
  saveHash();
}

/** Points every view at `m` (the simulation or a replayed counterexample). */
function showModel(m: RunModel): void {
  model = m;
  names = asyncNames(m);
  lastInspected = -2;
  renderRunInfo();
  setText(tlLead, m.trace ? LEAD_TRACE : LEAD_SIM);
  timeline.setModel(m, sourceLine);
  ring.setModel(m);
  if (m.trace) ring2.setModel(m);
}

// ---- the checker and counterexample replay
function stopCheck(): void {
  const r = checkRun;
  checkRun = null;
  r?.cancel();
  checkResult = null;
  if (replay) exitReplay();
}

check.onRun = (maxStates, timeoutMs) => {
  if (!loaded?.kernel) return;
  stopCheck();
  const run = checkIn(state.source, { ...state.params }, { maxStates, timeoutMs, maxMemory: 768 * 1024 * 1024 }, (p) => {
    if (checkRun === run) check.progress(p);
  });
  checkRun = run;
  check.running(run.inWorker);
  run.done.then((r) => {
    if (checkRun !== run) return;
    checkRun = null;
    checkResult = r;
    check.result(r);
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
  const k = loaded?.kernel;
  if (!hz || !k || !checkResult) return;
  const inst = instantiateKernel(k, state.params);
  if (!inst.program) return;
  let tm: RunModel;
  try {
    // The machine's own step function re-runs the schedule (src/web/model.ts traceModel).
    tm = traceModel(inst.program, hz.schedule, hz.trace);
  } catch (err) {
    check.failed(`the trace does not replay: ${String((err as Error)?.message ?? err)}`);
    return;
  }
  replay = { index: i, hazard: hz, model: tm, subject: hz.subject?.type === 'barrier' ? hz.subject.name : null, lastBar: null };
  check.showTrace(i);
  replayBar.hidden = false;
  showModel(tm);
  timeline.fit();
  goStep(0);
  if (state.tab === 'check') (document.getElementById('trace') as HTMLElement | null)?.focus();
}

function exitReplay(): void {
  if (!replay) return;
  replay = null;
  replayBar.hidden = true;
  check.showTrace(null);
  mech.showBarrier(null);
  if (simModel) {
    const ev = state.ev;
    showModel(simModel);
    timeline.setEvent(ev, true);
  }
}

function goStep(k: number): void {
  if (!replay) return;
  timeline.setStep(Math.max(0, Math.min(replay.hazard.trace.length, k)));
  timeline.renderNow();
}

const stateText = (st: { valid: boolean; phase: number; pending: number; expected: number; tx: number }) =>
  st.valid ? `phase ${st.phase} (parity ${st.phase & 1}) · pending ${st.pending} of ${st.expected} · tx-count ${st.tx} B` : 'not initialized';

/** The replay's step `k`: the trace, the mechanism, the editor. */
function showStep(k: number): void {
  const r = replay!;
  const tm = r.model;
  const hz = r.hazard;
  const t = k > 0 ? hz.trace[k - 1] : undefined;
  const ev = k === 0 ? -1 : tm.trace!.stepEnd[k]!;
  const touched = new Set((t?.barriers ?? []).map((b) => b.name));
  const bars = tm.barLanes.slice(0, 64).map((l) => ({ name: l.label, text: stateText(barStateAt(l, ev)), hot: touched.has(l.label) || l.label === r.subject }));
  const line = t?.loc?.line ?? 0;
  const src = line > 0 ? lines[line - 1] : undefined;
  const blocked = k === hz.trace.length && tm.sim.hang
    ? tm.sim.hang.waiters.map((w) => `${w.name} is blocked in ${w.op}${w.loc.line ? ` (line ${w.loc.line})` : ''}: ${w.reasons.join(' ')}`)
    : [];
  const det: StepDetail = {
    head: t ? `${t.n}. ${t.actor}: ${t.op}` : 'Before the first step: every barrier as initialized.',
    notes: t?.notes ?? [],
    source: line > 0 ? `line ${line}${src !== undefined ? `:  ${src.trim()}` : ' (TypeScript builder)'}` : '',
    bars, blocked,
  };
  check.setStep(k, det);
  setText(replayText, `Replaying counterexample ${r.index + 1} (${hz.kind}${hz.subject ? ` on ${hz.subject.name}` : ''}): step ${k} of ${hz.trace.length}${t ? ` — ${t.actor}: ${t.op.replace(/\s+\[.*$/, '')}` : ''}`);
  // The mechanism shows the barrier concerned: the hazard's barrier, else the one this step touched.
  const name = r.subject ?? t?.barriers[0]?.name ?? r.lastBar ?? tm.barLanes[0]?.label ?? null;
  r.lastBar = name;
  const lane = tm.barLanes.find((l) => l.label === name);
  if (lane) {
    const st = barStateAt(lane, ev);
    mech.showBarrier({ status: st.valid ? 'valid' : 'uninit', phase: st.phase, pending: st.pending, expected: st.expected, tx: st.tx },
      `${lane.label} ${k === 0 ? 'before the first step' : `after step ${k}`} of counterexample ${r.index + 1} (${hz.kind})`);
  }
}

function renderRunInfo(): void {
  if (!model) return;
  const sim = model.sim;
  const parts: HTMLElement[] = [];
  if (model.trace && replay) {
    const back = h('button', { type: 'button', 'aria-label': 'back to the simulation' }, 'Back to the simulation');
    back.addEventListener('click', () => exitReplay());
    parts.push(h('p', { class: 'run-verdict v-hang' }, `Counterexample ${replay.index + 1}: ${replay.hazard.kind}${replay.hazard.subject ? ` on ${replay.hazard.subject.name}` : ''}`,
      ` — the checker's schedule, ${model.trace.steps} steps replayed through the machine; the time axis counts steps, not cycles. `, back));
  } else parts.push(h('p', { class: `run-verdict v-${sim.verdict}` }, `verdict: ${sim.verdict}`, ` — ${fmt(sim.cycles)} cycles, ${fmt(model.events.length)} events, ${model.program.agents.length} agents, simulated in ${model.simMs.toFixed(0)} ms${sim.stopped ? ` (${sim.stopped})` : ''}`));
  if (sim.diagnostics.length) {
    const ul = h('ul', { class: 'diags', 'aria-label': 'diagnostics' });
    for (const d of sim.diagnostics.slice(0, 12)) {
      const b = h('button', { type: 'button', class: 'link', title: 'move the cursor here' }, `t=${fmt(d.t)}`);
      b.addEventListener('click', () => jumpToTime(d.t));
      ul.appendChild(h('li', { class: `sev-${d.diag.severity}` }, b, ` ${d.diag.severity} [${d.diag.code}] ${d.diag.message}`, d.loc ? ` (line ${d.loc.line})` : '', h('br', {}), h('span', { class: 'h200' }, `H200: ${d.diag.h200}`)));
    }
    parts.push(ul);
  }
  if (sim.hang) {
    const ul = h('ul', { class: 'hang', 'aria-label': 'hang report' });
    for (const w of sim.hang.waiters) ul.appendChild(h('li', {}, `${w.name} blocked in ${w.op} (line ${w.loc.line})`, ...w.reasons.map((r) => h('div', { class: 'reason' }, r))));
    parts.push(h('div', {}, h('p', { class: 'hang-head' }, 'Hang: nothing can progress.'), ul, sim.hang.cycle ? h('p', {}, `wait-for cycle: ${sim.hang.cycle.join(' → ')}`) : ''));
  }
  replace(runInfo, ...parts);
}

function jumpToTime(t: number): void {
  if (!model) return;
  let i = 0;
  while (i < model.events.length && model.evT[i]! < t) i++;
  // The last event at that time.
  while (i + 1 < model.events.length && model.evT[i + 1] === t) i++;
  timeline.setEvent(i, true);
}

let lastInspected = -2;
let barRows: { tr: HTMLTableRowElement; cells: HTMLElement[] }[] = [];
let barRowsModel: RunModel | null = null;
let lastStep = -1;
function inspect(ev: number): void {
  ring.update(ev);
  const inReplay = !!replay && model === replay.model;
  if (inReplay) {
    ring2.update(ev);
    const k = timeline.curStep;
    if (k !== lastStep || ev !== lastInspected) {
      lastStep = k;
      showStep(k);
    }
  } else {
    lastStep = -1;
    if (ev !== state.ev) {
      state.ev = ev;
      saveHash();
    }
  }
  // In a replay the editor's line depends on the step too (a step may emit no event).
  if (!model || (ev === lastInspected && barRowsModel === model && !inReplay)) return;
  lastInspected = ev;
  const e: MachineEvent | undefined = ev >= 0 ? model.events[ev] : undefined;
  const when = e ? (model.trace ? `step ${model.trace.stepOf[ev]}` : `t = ${fmt(e.t)}`) : '';
  setText(curEvent, e ? `${when}: ${describeEvent(model, e, names)}` : 'Before the first event: barriers as initialized.');
  const loc = e ? eventLoc(e) : undefined;
  const src = sourceLine(loc);
  // The editor highlights the line of the event at the cursor (or of the replay's step).
  const stepLoc = inReplay ? replay!.hazard.trace[timeline.curStep - 1]?.loc : undefined;
  const mark = inReplay ? stepLoc : loc;
  const lineOk = (l: { line: number; file?: string } | undefined) => !!l && l.line > 0 && (l.file === undefined || l.file === loaded?.file);
  const hang = inReplay && timeline.curStep === replay!.hazard.trace.length ? model?.sim.hang : null;
  if (hang && hang.waiters.some((w) => lineOk(w.loc))) {
    // The end of a hang: what matters is where the agents are stuck, not the last step.
    const ws = hang.waiters.filter((w) => lineOk(w.loc));
    editor.markLine(ws.map((w) => w.loc.line), `where ${ws.map((w) => w.name).join(', ')} ${ws.length > 1 ? 'are' : 'is'} blocked forever (the last step of the counterexample)`);
  } else editor.markLine(lineOk(mark) ? mark!.line : 0, inReplay ? `step ${timeline.curStep} of the counterexample` : `the event at the timeline cursor (event ${ev + 1})`);
  setText(curSrc, loc && loc.line > 0 ? `line ${loc.line}${src !== null ? `:  ${src.trim()}` : ' (TypeScript builder)'}` : '');
  const hot = e ? eventBar(e) : -1;
  // Rows are rebuilt only when the run changes; each cursor move only sets their text.
  const lanes = model.barLanes.slice(0, 48);
  if (barRows.length !== lanes.length || barRowsModel !== model) {
    barRowsModel = model;
    barRows = lanes.map((l) => {
      const cells = [0, 1, 2, 3].map(() => h('td', {}));
      return { tr: h('tr', {}, h('th', { scope: 'row' }, l.label), ...cells), cells };
    });
    replace(barTable, ...barRows.map((r) => r.tr));
  }
  lanes.forEach((l, i) => {
    const st = barStateAt(l, ev);
    const r = barRows[i]!;
    r.tr.classList.toggle('hot', l.key === hot);
    setText(r.cells[0]!, st.valid ? String(st.phase) : '—');
    setText(r.cells[1]!, st.valid ? String(st.phase & 1) : '—');
    setText(r.cells[2]!, st.valid ? `${st.pending} / ${st.expected}` : '—');
    setText(r.cells[3]!, st.valid ? `${st.tx} B` : '—');
  });
}
timeline.onCursor = (ev) => inspect(ev);

exampleSel.addEventListener('change', () => {
  const v = exampleSel.value;
  if (v.startsWith('ex:')) setSource({ kind: 'example', name: v.slice(3) }, {});
  else if (v.startsWith('file:')) setSource({ kind: 'file', path: v.slice(5) }, {});
});
editor.onKernelText = (text) => {
  const name = state.source.kind === 'file' ? state.source.path.split('/').pop()! : state.source.kind === 'sketch' ? state.source.name : 'sketch.mbk';
  const same = (state.source.kind === 'file' && SKETCH_FILES.find((f) => f.path === (state.source as { path: string }).path)?.text === text)
    || (state.source.kind === 'sketch' && state.source.text === text);
  if (same) return;
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
  if (state.tab === 'timeline') timeline.key(e);
  else if (replay && (state.tab === 'check' || state.tab === 'mechanism')) {
    // Stepping a counterexample from the Check and Mechanism tabs too.
    const k = e.key === 'ArrowRight' ? timeline.curStep + 1 : e.key === 'ArrowLeft' ? timeline.curStep - 1 : e.key === 'Home' ? 0 : e.key === 'End' ? replay.hazard.trace.length : null;
    if (k === null) return;
    goStep(k);
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

// `mbsim serve FILE`: the server offers the file as mbsim-file.json; a plain static server has none.
if (!location.hash) {
  fetch('mbsim-file.json', { cache: 'no-store' }).then(async (r) => {
    if (!r.ok) return;
    const j = (await r.json()) as unknown;
    const o = j as { name?: unknown; text?: unknown };
    if (typeof o?.text !== 'string' || o.text.length > MAX_SKETCH) return;
    const name = typeof o.name === 'string' && /^[A-Za-z0-9_.\- ]{1,120}$/.test(o.name) ? o.name : 'file.mbk';
    setSource({ kind: 'sketch', name, text: o.text }, {});
  }).catch(() => undefined);
}

/** Hooks for the browser tests and the frame-rate benchmark. */
(window as unknown as { __mbsim: unknown }).__mbsim = {
  timeline,
  get replaying() {
    return replay ? { index: replay.index, steps: replay.hazard.trace.length, step: timeline.curStep } : null;
  },
  get model() {
    return model;
  },
  get state() {
    return state;
  },
};
