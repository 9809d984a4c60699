/// <reference lib="dom" />
/**
 * The mbsim explorer: the seed chapter's four figures made live for any kernel, computed in the
 * browser by the real model, machine and simulator. This module wires the views, the examples menu,
 * parameters and the share link (URL hash) together.
 */
import type { MachineEvent } from '../machine/events.js';
import { h, replace, setText, fmt } from './dom.js';
import { asyncNames, barStateAt, describeEvent, eventBar, eventLoc, runKernel, type RunModel } from './model.js';
import { decodeView, encodeView, MAX_SKETCH, TABS, type SourceRef, type Tab, type ViewState } from './share.js';
import { EXAMPLES, isExample, isFile, load, SKETCH_FILES, sketchTwin, type Loaded } from './sources.js';
import { editorView } from './views/editor.js';
import { mechanismView } from './views/mechanism.js';
import { phasesView } from './views/phases.js';
import { ringView } from './views/ring.js';
import { timelineView } from './views/timeline.js';

const TAB_LABEL: Record<Tab, string> = { mechanism: 'Barrier mechanism', phases: 'Phase tracking', timeline: 'Timeline & full/empty', sketch: 'Sketch' };

let state: ViewState;
let loaded: Loaded | null = null;
let model: RunModel | null = null;
let names = new Map<number, string>();
let lines: string[] = [];
const warnings: string[] = [];

// ---- views
const mech = mechanismView();
const timeline = timelineView();
const ring = ringView();
const editor = editorView();
const phases = phasesView(2, 4);

// ---- header
const exampleSel = h('select', { id: 'example', 'aria-label': 'example' });
const sketchOpt = h('option', { value: 'sketch:', disabled: true, hidden: true }, 'edited sketch');
{
  const gBuiltin = h('optgroup', { label: 'Built-in (TypeScript builder)' });
  for (const ex of EXAMPLES) gBuiltin.appendChild(h('option', { value: `ex:${ex.name}`, title: ex.summary }, ex.name));
  const gSk = h('optgroup', { label: 'Sketches (examples/*.mbk)' });
  const gBug = h('optgroup', { label: 'Buggy sketches (examples/bugs)' });
  for (const f of SKETCH_FILES) (f.group === 'bugs' ? gBug : gSk).appendChild(h('option', { value: `file:${f.path}`, title: f.summary }, f.path.replace(/^examples\//, '')));
  exampleSel.append(gSk, gBug, gBuiltin, sketchOpt);
}
const summary = h('p', { class: 'ex-summary', id: 'ex-summary' });
const paramBox = h('div', { class: 'params', role: 'group', 'aria-label': 'kernel parameters' });
const verdict = h('span', { class: 'verdict', id: 'verdict', 'aria-live': 'polite' });
const shareBtn = h('button', { type: 'button', 'aria-label': 'copy share link' }, 'Copy link');
const shareOut = h('input', { type: 'text', readonly: true, class: 'share-out', 'aria-label': 'share link', hidden: true });
const warnBox = h('div', { class: 'warnings', role: 'status', hidden: true });
const header = h('header', {},
  h('div', { class: 'brand' }, h('h1', {}, 'mbsim explorer'), h('span', { class: 'tag' }, 'mbarrier on Hopper & Blackwell, computed by the model')),
  h('div', { class: 'bar' }, h('label', {}, 'Kernel ', exampleSel), paramBox, verdict, shareBtn, shareOut),
  summary, warnBox);

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
  h('span', { class: 'sw p0' }), ' barrier parity 0 ', h('span', { class: 'sw p1' }), ' parity 1 ', h('span', { class: 'sw k-done' }), ' phase completed');

panels.set('mechanism', mech.el);
panels.set('phases', phases.el);
panels.set('timeline', h('section', { class: 'view timeline-view', id: 'view-timeline', 'aria-labelledby': 'tl-h' },
  h('h2', { id: 'tl-h' }, 'Timeline'),
  h('p', { class: 'lead' }, 'Every lane comes from the timed simulation of the kernel: agents issue (blue) or stall (grey), TMA copies and MMAs run on their units, and each barrier’s parity changes when a phase completes. Step with ← →, drag the ruler to scrub, wheel to zoom, drag to pan; hover for details.'),
  runInfo, legend, timeline.el, h('div', { class: 'below' }, inspector, ring.el)));
panels.set('sketch', editor.el);
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
  saveHash();
}

let hashTimer = 0;
function saveHash(now = false): void {
  const write = () => {
    hashTimer = 0;
    const hash = `#${encodeView(state)}`;
    if (location.hash !== hash) history.replaceState(null, '', hash);
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
  const firstComment = (loaded.text ?? '').split(/\r?\n/).find((l) => l.startsWith('#'))?.replace(/^#\s*/, '') ?? '';
  setText(sketchOpt, src.kind === 'sketch' ? `sketch: ${src.name}` : 'edited sketch');
  setText(summary, ex ? ex.summary : file ? file.summary : src.kind === 'sketch' ? `${src.name} (edited or shared sketch)${firstComment ? `: ${firstComment}` : ''}` : '');
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
}

function rerun(ev: number): void {
  model = null;
  const k = loaded?.kernel;
  replace(runInfo);
  if (!k) {
    const d = loaded?.diagnostics ?? [];
    setText(verdict, d.length ? 'does not parse' : 'no kernel');
    verdict.className = 'verdict bad';
    replace(runInfo, h('p', { class: 'error' }, `The sketch has ${d.length} problem(s); see the Sketch tab.`),
      h('ul', {}, ...d.slice(0, 8).map((x) => h('li', {}, `line ${x.line}:${x.col} [${x.code}] ${x.message}`))));
    timeline.setModel(null, sourceLine);
    ring.setModel(null);
    saveHash();
    return;
  }
  const r = runKernel(k, state.params);
  if (r.error || !r.model) {
    setText(verdict, 'error');
    verdict.className = 'verdict bad';
    replace(runInfo, h('p', { class: 'error' }, r.error ?? 'error'));
    timeline.setModel(null, sourceLine);
    ring.setModel(null);
    saveHash();
    return;
  }
  model = r.model;
  names = asyncNames(model);
  const sim = model.sim;
  setText(verdict, `${sim.verdict} · ${fmt(sim.cycles)} cycles · ${fmt(model.events.length)} events`);
  verdict.className = `verdict ${sim.verdict === 'ok' ? 'good' : 'bad'}`;
  renderRunInfo();
  timeline.setModel(model, sourceLine);
  ring.setModel(model);
  timeline.setEvent(ev, true);
  if (state.tab === 'timeline') timeline.fit();
  saveHash();
}

function renderRunInfo(): void {
  if (!model) return;
  const sim = model.sim;
  const parts: HTMLElement[] = [];
  parts.push(h('p', { class: `run-verdict v-${sim.verdict}` }, `verdict: ${sim.verdict}`, ` — ${fmt(sim.cycles)} cycles, ${fmt(model.events.length)} events, ${model.program.agents.length} agents, simulated in ${model.simMs.toFixed(0)} ms${sim.stopped ? ` (${sim.stopped})` : ''}`));
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
function inspect(ev: number): void {
  ring.update(ev);
  if (ev !== state.ev) {
    state.ev = ev;
    saveHash();
  }
  if (!model || (ev === lastInspected && barRowsModel === model)) return;
  lastInspected = ev;
  const e: MachineEvent | undefined = ev >= 0 ? model.events[ev] : undefined;
  setText(curEvent, e ? `t = ${fmt(e.t)}: ${describeEvent(model, e, names)}` : 'Before the first event: barriers as initialized.');
  const loc = e ? eventLoc(e) : undefined;
  const src = sourceLine(loc);
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
  if (state.tab !== 'timeline' || e.defaultPrevented) return;
  const t = e.target as HTMLElement | null;
  if (t && (t.closest('input, select, textarea, button, [contenteditable="true"], .cm-editor'))) return;
  timeline.key(e);
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
  timeline.setEvent(view.ev, true);
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
  get model() {
    return model;
  },
  get state() {
    return state;
  },
};
document.body.dataset.ready = '1';
