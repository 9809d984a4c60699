/// <reference lib="dom" />
/**
 * Phase tracking (the seed's second figure, made live): the phase-tracking loop run by the machine
 * for S stages and N iterations (src/report/phases.ts `phaseTable` on the `phase-tracking`
 * example), an iteration selector, and the stages' barrier parities after the chosen iteration.
 */
import { phaseTracking } from '../../examples/index.js';
import { instantiate } from '../../machine/program.js';
import { phaseTable, type PhaseRow } from '../../report/phases.js';
import { h, replace, s, setText } from '../dom.js';

export interface PhasesView {
  el: HTMLElement;
  /** Sets S and N (clamped) and recomputes. */
  set(S: number, N: number): void;
  onChange?: (S: number, N: number) => void;
}

export const SEED_HEAD = ['iteration', 'stage', 'phase parity waited on', 'barrier parity after completion', 'phase_tma after iteration'];

export function phasesView(S0: number, N0: number): PhasesView {
  let S = S0, N = N0, rows: PhaseRow[] = [], sel = 0;
  const sIn = h('input', { type: 'number', min: 1, max: 16, value: S, 'aria-label': 'stages S', class: 'num' });
  const nIn = h('input', { type: 'number', min: 1, max: 256, value: N, 'aria-label': 'iterations N', class: 'num' });
  const range = h('input', { type: 'range', min: 0, max: 0, value: 0, 'aria-label': 'iteration', class: 'iter-range' });
  const prev = h('button', { type: 'button', 'aria-label': 'previous iteration' }, '◀');
  const next = h('button', { type: 'button', 'aria-label': 'next iteration' }, '▶');
  const iterLabel = h('output', { class: 'iter-label', id: 'iter-label', 'aria-live': 'polite' });
  const code = h('pre', { class: 'code' });
  const tbody = h('tbody', {});
  const table = h('table', { class: 'phase-table', id: 'phase-table', 'aria-label': 'phase tracking table' },
    h('thead', {}, h('tr', {}, ...SEED_HEAD.map((c) => h('th', { scope: 'col' }, c)))), tbody);
  const diagram = s('svg', { class: 'phase-diagram', role: 'img', 'aria-label': 'stage barriers after the selected iteration' });
  const explain = h('p', { class: 'phase-explain', id: 'phase-explain', 'aria-live': 'polite' });
  const err = h('p', { class: 'error', hidden: true });

  const view: PhasesView = {
    el: h('section', { class: 'view phases', id: 'view-phases', 'aria-labelledby': 'phases-h' },
      h('h2', { id: 'phases-h' }, 'Phase tracking'),
      h('p', { class: 'lead' }, 'The phase-tracking loop of the chapter, run by the machine: each iteration waits on the barrier of its stage with phase_tma, and phase_tma flips after the last stage. Select an iteration to see the parity alternate.'),
      h('div', { class: 'controls' }, h('label', {}, 'stages S ', sIn), h('label', {}, 'iterations N ', nIn), prev, range, next, iterLabel),
      err,
      h('div', { class: 'phase-grid' }, h('div', {}, table), h('div', {}, diagram, explain, code))),
    set(s2, n2) {
      S = Math.max(1, Math.min(16, Math.trunc(s2) || 1));
      N = Math.max(1, Math.min(256, Math.trunc(n2) || 1));
      sIn.value = String(S);
      nIn.value = String(N);
      compute();
    },
  };

  const compute = () => {
    try {
      rows = phaseTable(instantiate(phaseTracking(), { S, N }), 'consumer', 'tma_bar', 'phase_tma');
      err.hidden = true;
    } catch (e) {
      rows = [];
      err.hidden = false;
      setText(err, String((e as Error).message));
    }
    sel = Math.min(sel, Math.max(0, rows.length - 1));
    range.max = String(Math.max(0, rows.length - 1));
    replace(tbody, ...rows.map((r) => {
      const tr = h('tr', { 'data-iter': r.iteration }, ...[r.iteration, r.stage, r.parityWaited, r.parityAfter, r.phaseVar].map((v) => h('td', {}, String(v))));
      tr.addEventListener('click', () => select(r.iteration));
      return tr;
    }));
    setText(code, [
      `stage = iteration % ${S}`,
      'T.ptx.mbarrier.try_wait(tma_bar.ptr_to([stage]), phase_tma)',
      '',
      `if stage == ${S - 1}:`,
      '    phase_tma ^= 1',
    ].join('\n'));
    select(sel);
  };

  const select = (i: number) => {
    if (rows.length === 0) return;
    sel = Math.max(0, Math.min(rows.length - 1, i));
    range.value = String(sel);
    prev.disabled = sel === 0;
    next.disabled = sel === rows.length - 1;
    setText(iterLabel, `iteration ${sel} of ${rows.length - 1}`);
    for (const tr of Array.from(tbody.children)) {
      const on = Number((tr as HTMLElement).dataset.iter) === sel;
      tr.classList.toggle('selected', on);
      tr.setAttribute('aria-selected', String(on));
    }
    // Each stage's barrier parity after iteration `sel`: the last completion of that stage so far.
    const parity = Array.from({ length: S }, () => 0);
    for (const r of rows.slice(0, sel + 1)) parity[r.stage] = r.parityAfter;
    const r = rows[sel]!;
    const W = Math.max(300, S * 104 + 40), H = 130;
    diagram.setAttribute('viewBox', `0 0 ${W} ${H}`);
    diagram.setAttribute('width', String(W));
    diagram.setAttribute('height', String(H));
    const kids: SVGElement[] = [];
    for (let st = 0; st < S; st++) {
      const x = 20 + st * 104;
      const cur = st === r.stage;
      kids.push(s('rect', { x, y: 20, width: 92, height: 60, rx: 8, class: `stage-box p${parity[st]}${cur ? ' current' : ''}` }));
      kids.push(s('text', { x: x + 46, y: 16, 'text-anchor': 'middle', class: 'svg-small' }, `tma_bar[${st}]`));
      kids.push(s('text', { x: x + 46, y: 48, 'text-anchor': 'middle', class: 'svg-big' }, `parity ${parity[st]}`));
      kids.push(s('text', { x: x + 46, y: 68, 'text-anchor': 'middle', class: 'svg-small' }, cur ? 'waited on now' : ''));
    }
    kids.push(s('text', { x: 20, y: 110, class: 'svg-big' }, `phase_tma = ${r.phaseVar}`));
    replace(diagram, ...kids);
    const flip = r.stage === S - 1;
    setText(explain, `Iteration ${sel} waits for phase parity ${r.parityWaited} of stage ${r.stage}. When that phase completes, tma_bar[${r.stage}] advances to parity ${r.parityAfter}. ${flip ? `Stage ${r.stage} is the last stage, so the pass through the circular buffer is finished and phase_tma flips to ${r.phaseVar}.` : `The pass through the circular buffer is not finished, so phase_tma stays ${r.phaseVar}.`}`);
  };

  range.addEventListener('input', () => select(Number(range.value)));
  prev.addEventListener('click', () => select(sel - 1));
  next.addEventListener('click', () => select(sel + 1));
  const onInputs = () => {
    view.set(Number(sIn.value), Number(nIn.value));
    view.onChange?.(S, N);
  };
  sIn.addEventListener('change', onInputs);
  nIn.addEventListener('change', onInputs);
  view.el.addEventListener('keydown', (e) => {
    if (e.target instanceof HTMLInputElement && e.target.type === 'number') return;
    if (e.key === 'ArrowRight' || e.key === 'ArrowDown') select(sel + 1);
    else if (e.key === 'ArrowLeft' || e.key === 'ArrowUp') select(sel - 1);
    else return;
    e.preventDefault();
  });
  compute();
  return view;
}
