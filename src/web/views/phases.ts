/// <reference lib="dom" />
/**
 * Phase tracking (the seed's second figure, made live): the phase-tracking loop run by the machine
 * for S stages and N iterations (src/report/phases.ts `phaseTable` on the `phase-tracking`
 * example), an iteration selector, and the stages' barrier parities after the chosen iteration.
 */
import { phaseTracking } from '../../examples/index.js';
import { BUILTINS, instantiate, type Program } from '../../machine/program.js';
import { phasesIn, Dropped } from '../engine.js';
import type { SourceRef } from '../share.js';
import { phaseRows, passedAtOnce, type PhaseRowX } from '../phase-rows.js';
import { h, replace, s, setText } from '../dom.js';

/** The current kernel, for tracking its own loop. */
export interface PhaseKernel {
  src: SourceRef;
  params: Record<string, number>;
  program: Program;
}

/** A loop the view can track: a role's passing parity waits on a barrier array and one of its variables. */
export interface LoopChoice {
  role: string;
  barrier: string;
  variable: string;
}

/** Roles with parity waits, the barrier arrays they wait on, and their variables (those in the parity first). */
export function loopChoices(p: Program): { role: string; barriers: string[]; variables: string[] }[] {
  const out: { role: string; barriers: string[]; variables: string[] }[] = [];
  const builtins = new Set<string>(BUILTINS);
  for (const r of p.roles) {
    const bars: string[] = [];
    const inParity = new Set<string>();
    const names = (x: unknown, acc: Set<string>) => {
      if (!x || typeof x !== 'object') return;
      for (const [k, v] of Object.entries(x as Record<string, unknown>)) {
        if (typeof v === 'string' && (k === 'name' || k === 'v' || k === 'var')) acc.add(v);
        else if (typeof v === 'object') names(v, acc);
      }
    };
    for (const ins of r.code) {
      if (ins.i !== 'op' || ins.op.op !== 'mbarrier.wait' || ins.op.parity === undefined) continue;
      if (!bars.includes(ins.op.bar.name)) bars.push(ins.op.bar.name);
      names(ins.op.parity, inParity);
    }
    if (!bars.length) continue;
    const vars = r.slots.filter((v) => !builtins.has(v));
    vars.sort((a, b) => Number(inParity.has(b) || /phase/i.test(b)) - Number(inParity.has(a) || /phase/i.test(a)));
    if (vars.length) out.push({ role: r.name, barriers: bars, variables: vars });
  }
  return out;
}

export interface PhasesView {
  el: HTMLElement;
  /** Sets S and N (clamped) and recomputes. */
  set(S: number, N: number): void;
  /** The current kernel (null: none); its loops become selectable. */
  setKernel(k: PhaseKernel | null): void;
  /** Shows the chapter's loop. */
  showChapter(): void;
  /** What the table shows: the chapter's loop (its own S and N) or a loop of the current kernel. */
  readonly mode: 'chapter' | 'kernel';
  onChange?: (S: number, N: number) => void;
  onMode?: (mode: 'chapter' | 'kernel') => void;
}

export const SEED_HEAD = ['iteration', 'stage', 'phase parity waited on', 'barrier parity after completion', 'phase_tma after iteration'];

export function phasesView(S0: number, N0: number): PhasesView {
  let S = S0, N = N0, rows: PhaseRowX[] = [], sel = 0;
  /** What the table shows: the chapter's loop, or a loop of the current kernel. */
  let mode: 'chapter' | 'kernel' = 'chapter';
  let kernel: PhaseKernel | null = null;
  let choice: LoopChoice = { role: 'consumer', barrier: 'tma_bar', variable: 'phase_tma' };
  let gen = 0;
  const modeSel = h('select', { 'aria-label': 'loop to track', id: 'phase-mode' },
    h('option', { value: 'chapter' }, 'the chapter’s loop (S stages, N iterations)'), h('option', { value: 'kernel' }, 'a loop of the current kernel'));
  const roleSel = h('select', { 'aria-label': 'role whose loop is tracked', id: 'phase-role' });
  const barSel = h('select', { 'aria-label': 'barrier array waited on', id: 'phase-barrier' });
  const varSel = h('select', { 'aria-label': 'phase variable', id: 'phase-var' });
  const chapterCtl = h('span', { class: 'controls inline' });
  const kernelCtl = h('span', { class: 'controls inline', hidden: true }, h('label', {}, 'role ', roleSel), h('label', {}, 'barrier ', barSel), h('label', {}, 'variable ', varSel));
  const kernelNote = h('p', { class: 'phase-note', id: 'phase-note' });
  const headRow = h('tr', {});
  const sIn = h('input', { type: 'number', min: 1, max: 16, value: S, 'aria-label': 'stages S', class: 'num' });
  const nIn = h('input', { type: 'number', min: 1, max: 256, value: N, 'aria-label': 'iterations N', class: 'num' });
  const range = h('input', { type: 'range', min: 0, max: 0, value: 0, 'aria-label': 'iteration', class: 'iter-range' });
  const prev = h('button', { type: 'button', 'aria-label': 'previous iteration' }, '◀');
  const next = h('button', { type: 'button', 'aria-label': 'next iteration' }, '▶');
  const iterLabel = h('output', { class: 'iter-label', id: 'iter-label', 'aria-live': 'polite' });
  const code = h('pre', { class: 'code' });
  const tbody = h('tbody', {});
  const table = h('table', { class: 'phase-table', id: 'phase-table', 'aria-label': 'phase tracking table' },
    h('thead', {}, headRow), tbody);
  const diagram = s('svg', { class: 'phase-diagram', role: 'img', 'aria-label': 'stage barriers after the selected iteration' });
  const explain = h('p', { class: 'phase-explain', id: 'phase-explain', 'aria-live': 'polite' });
  const err = h('p', { class: 'error', hidden: true });
  const clampNote = h('p', { class: 'clamp-note', id: 'phase-clamped', role: 'status', hidden: true });

  const view: PhasesView = {
    el: h('section', { class: 'view phases', id: 'view-phases', 'aria-labelledby': 'phases-h' },
      h('h2', { id: 'phases-h' }, 'Phase tracking'),
      h('p', { class: 'lead' }, 'The phase-tracking loop of the chapter, run by the machine: each iteration waits on the barrier of its stage with phase_tma, and phase_tma flips after the last stage. Select an iteration to see the parity alternate. Choose “a loop of the current kernel” to track the kernel chosen above: a role, the barrier array it waits on and one of its variables.'),
      h('div', { class: 'controls' }, h('label', {}, 'Track ', modeSel), chapterCtl, kernelCtl),
      clampNote, kernelNote,
      h('div', { class: 'controls' }, prev, range, next, iterLabel),
      err,
      h('div', { class: 'phase-grid' }, h('div', {}, table), h('div', {}, diagram, explain, code))),
    set(s2, n2) {
      S = Math.max(1, Math.min(16, Math.trunc(s2) || 1));
      N = Math.max(1, Math.min(256, Math.trunc(n2) || 1));
      // Say what was clamped, so a typed 40 that shows as 16 is not a surprise.
      const notes: string[] = [];
      if (Number.isFinite(s2) && Math.trunc(s2) !== S) notes.push(`S = ${Math.trunc(s2)} is out of range (1–16): clamped to ${S}.`);
      if (Number.isFinite(n2) && Math.trunc(n2) !== N) notes.push(`N = ${Math.trunc(n2)} is out of range (1–256): clamped to ${N}.`);
      clampNote.hidden = notes.length === 0;
      setText(clampNote, notes.join(' '));
      sIn.value = String(S);
      nIn.value = String(N);
      if (mode === 'chapter') compute();
    },
    get mode() {
      return mode;
    },
    showChapter() {
      if (mode !== 'chapter') setMode('chapter');
    },
    setKernel(k) {
      kernel = k;
      if (mode === 'kernel') setMode('kernel');
    },
  };

  const render = () => {
    const chapter = mode === 'chapter';
    const bar = chapter ? 'tma_bar' : choice.barrier;
    const v = chapter ? 'phase_tma' : choice.variable;
    // Several warps that differ somewhere: a warp column (`all` where they agree).
    const perWarp = new Set(rows.map((r) => r.warp)).size > 1;
    const head = [...SEED_HEAD.slice(0, 4), `${v} after iteration`];
    if (perWarp) head.splice(1, 0, 'warp');
    replace(headRow, ...head.map((c) => h('th', { scope: 'col' }, c)));
    sel = Math.min(sel, Math.max(0, rows.length - 1));
    range.max = String(Math.max(0, rows.length - 1));
    replace(tbody, ...rows.map((r, line) => {
      const once = passedAtOnce(r);
      const tr = h('tr', { 'data-iter': line, class: once ? 'at-once' : '' },
        ...[r.iteration, ...(perWarp ? [r.warp] : []), r.stage, r.parityWaited].map((x) => h('td', {}, String(x))),
        once ? h('td', { class: 'at-once', title: `parity ${r.parityWaited} names the phase before phase 0, which never ran: the wait does not block` }, `passed at once (no phase completed; the barrier is still in phase 0)`) : h('td', {}, String(r.parityAfter)),
        h('td', {}, String(r.phaseVar)));
      tr.addEventListener('click', () => select(line));
      return tr;
    }));
    if (chapter) {
      setText(code, [
        `stage = iteration % ${S}`,
        'mbarrier.try_wait.parity tma_bar[stage], phase_tma',
        '',
        `if stage == ${S - 1}:`,
        '    phase_tma ^= 1',
      ].join('\n'));
    } else {
      // The role's waits on the chosen array, as the sketch says them.
      const role = kernel?.program.roles.find((r) => r.name === choice.role);
      const waits = (role?.code ?? []).filter((i) => i.i === 'op' && i.op.op === 'mbarrier.wait' && i.op.bar.name === choice.barrier);
      setText(code, waits.map((i) => (i.i === 'op' ? `${i.loc.line ? `line ${i.loc.line}: ` : ''}${i.text}` : '')).join('\n') || '(no wait)');
    }
    if (rows.length === 0) {
      replace(diagram);
      setText(iterLabel, 'no iterations');
      setText(explain, chapter ? '' : `${choice.role} never passes a parity wait on ${choice.barrier} in the simulation.`);
      return;
    }
    select(sel, bar, v);
  };

  /** Iterations the rows cover (a line per warp where warps differ: more lines than iterations). */
  const iterations = () => (rows.length ? Math.max(...rows.map((r) => r.iteration)) + 1 : 0);
  /** What the kernel note says of a role of several warps. */
  const warpNote = () => {
    const warps = new Set(rows.map((r) => r.warp));
    if (rows.length && warps.size === 1 && warps.has('all')) return ' Every warp of the role that passes these waits agrees: each row stands for all of them.';
    if (warps.size > 1) return " The role's warps differ: a row per warp where their values differ, one row marked 'all' where they agree.";
    return '';
  };

  const compute = () => {
    if (mode === 'chapter') {
      gen++;
      try {
        rows = phaseRows(instantiate(phaseTracking(), { S, N }), 'consumer', 'tma_bar', 'phase_tma');
        err.hidden = true;
      } catch (e) {
        rows = [];
        err.hidden = false;
        setText(err, String((e as Error).message));
      }
      render();
      return;
    }
    if (!kernel) {
      rows = [];
      render();
      return;
    }
    const g = ++gen;
    setText(kernelNote, `Tracking ${choice.role}'s waits on ${choice.barrier}[·] and its variable ${choice.variable}, in the simulation of ${kernel.program.kernel.name} (computing…)`);
    phasesIn(kernel.src, kernel.params, choice.role, choice.barrier, choice.variable).then((r) => {
      if (g !== gen) return;
      rows = r;
      err.hidden = true;
      setText(kernelNote, `Tracking ${choice.role}'s passing waits on ${choice.barrier}[·] and its variable ${choice.variable}, in the simulation of ${kernel!.program.kernel.name}: ${iterations()} iteration${iterations() === 1 ? '' : 's'}.${warpNote()}`);
      render();
    }).catch((e: unknown) => {
      if (e instanceof Dropped || g !== gen) return;
      rows = [];
      err.hidden = false;
      setText(err, String((e as Error)?.message ?? e));
      render();
    });
  };

  const fillKernelSelects = () => {
    const ch = kernel ? loopChoices(kernel.program) : [];
    const opt = (v: string, on: boolean) => h('option', { value: v, selected: on }, v);
    let r = ch.find((c) => c.role === choice.role) ?? ch.find((c) => c.variables.some((v) => /phase/i.test(v))) ?? ch[0];
    if (!r) {
      replace(roleSel);
      replace(barSel);
      replace(varSel);
      return false;
    }
    if (r.role !== choice.role) choice = { role: r.role, barrier: '', variable: '' };
    if (!r.barriers.includes(choice.barrier)) {
      // Prefer an array with several stages.
      const arrays = kernel!.program.barriers;
      choice.barrier = [...r.barriers].sort((a, b) => (arrays.find((x) => x.name === b)?.length ?? 0) - (arrays.find((x) => x.name === a)?.length ?? 0))[0]!;
    }
    if (!r.variables.includes(choice.variable)) choice.variable = r.variables[0]!;
    replace(roleSel, ...ch.map((c) => opt(c.role, c.role === r!.role)));
    replace(barSel, ...r.barriers.map((b) => opt(b, b === choice.barrier)));
    replace(varSel, ...r.variables.map((v) => opt(v, v === choice.variable)));
    return true;
  };

  const setMode = (m: 'chapter' | 'kernel') => {
    mode = m;
    view.onMode?.(m);
    modeSel.value = m;
    chapterCtl.hidden = m !== 'chapter';
    kernelCtl.hidden = m !== 'kernel';
    kernelNote.hidden = m !== 'kernel';
    if (m === 'kernel' && !fillKernelSelects()) {
      setText(kernelNote, kernel ? `No role of ${kernel.program.kernel.name} waits on a barrier with a parity; nothing to track.` : 'No kernel is loaded.');
      rows = [];
      render();
      return;
    }
    compute();
  };
  modeSel.addEventListener('change', () => setMode(modeSel.value === 'kernel' ? 'kernel' : 'chapter'));
  roleSel.addEventListener('change', () => {
    choice = { role: roleSel.value, barrier: '', variable: '' };
    setMode('kernel');
  });
  barSel.addEventListener('change', () => {
    choice.barrier = barSel.value;
    compute();
  });
  varSel.addEventListener('change', () => {
    choice.variable = varSel.value;
    compute();
  });

  let lastBar = 'tma_bar', lastVar = 'phase_tma';
  const select = (i: number, barName = lastBar, varName = lastVar) => {
    lastBar = barName;
    lastVar = varName;
    if (rows.length === 0) return;
    sel = Math.max(0, Math.min(rows.length - 1, i));
    range.value = String(sel);
    prev.disabled = sel === 0;
    next.disabled = sel === rows.length - 1;
    const r = rows[sel]!;
    const n = iterations();
    setText(iterLabel, `iteration ${r.iteration}${new Set(rows.map((x) => x.warp)).size > 1 ? `, ${r.warp === 'all' ? 'all warps' : r.warp}` : ''} (of ${n}: 0–${n - 1})`);
    for (const tr of Array.from(tbody.children)) {
      const on = Number((tr as HTMLElement).dataset.iter) === sel;
      tr.classList.toggle('selected', on);
      tr.setAttribute('aria-selected', String(on));
    }
    // Each stage's barrier parity after iteration `sel`: the last completion of that stage so far.
    const S = mode === 'chapter' ? view_S() : Math.max(1, ...rows.map((x) => x.stage + 1), kernel?.program.barriers.find((b) => b.name === barName)?.length ?? 1);
    const parity = Array.from({ length: S }, () => 0);
    for (const x of rows.slice(0, sel + 1)) parity[x.stage] = x.parityAfter;
    // Boxes 104 wide, 116 apart: their 12 px texts fit inside.
    const W = Math.max(300, S * 116 + 40), H = 150;
    const once = passedAtOnce(r);
    diagram.setAttribute('viewBox', `0 0 ${W} ${H}`);
    diagram.setAttribute('width', String(W));
    diagram.setAttribute('height', String(H));
    const kids: SVGElement[] = [];
    for (let st = 0; st < S; st++) {
      const x = 20 + st * 116;
      const cur = st === r.stage;
      // The current stage shows the parity its wait named (the badge sits on it) and, below, what
      // the barrier's parity is after the wait; the other stages show their parity after the iteration.
      const shown = cur ? r.parityWaited : parity[st]!;
      kids.push(s('rect', { x, y: 20, width: 104, height: 60, rx: 8, class: `stage-box p${shown}${cur ? ' current' : ''}` }));
      kids.push(s('text', { x: x + 52, y: 16, 'text-anchor': 'middle', class: 'svg-small' }, `${barName}[${st}]`));
      kids.push(s('text', { x: x + 52, y: 48, 'text-anchor': 'middle', class: 'svg-big' }, `parity ${shown}`));
      if (cur) {
        kids.push(s('text', { x: x + 52, y: 68, 'text-anchor': 'middle', class: 'svg-small', id: 'waited-badge' }, 'waited on now'));
        kids.push(s('text', { x: x + 52, y: 96, 'text-anchor': 'middle', class: 'svg-small' }, once ? 'passed at once' : `→ parity ${r.parityAfter}`));
        kids.push(s('text', { x: x + 52, y: 110, 'text-anchor': 'middle', class: 'svg-tiny' }, once ? '(still phase 0)' : 'after completion'));
      }
    }
    kids.push(s('text', { x: 20, y: 136, class: 'svg-big' }, `${varName} = ${r.phaseVar}`));
    replace(diagram, ...kids);
    const flip = r.stage === S - 1;
    // The same warp's line before (a line of every warp counts for each).
    const before = rows.slice(0, sel).reverse().find((x) => x.warp === r.warp || x.warp === 'all' || r.warp === 'all');
    const prevVar = before ? before.phaseVar : null;
    if (mode === 'chapter') setText(explain, `Iteration ${sel} waits for phase parity ${r.parityWaited} of stage ${r.stage}. When that phase completes, tma_bar[${r.stage}] advances to parity ${r.parityAfter}. ${flip ? `Stage ${r.stage} is the last one, so this round over the ${S} stages ends here and phase_tma flips to ${r.phaseVar}.` : `More stages follow in this round over the ring, so phase_tma keeps the value ${r.phaseVar}.`}`);
    else {
      const what = once
        ? `${barName}[${r.stage}] is still in phase 0 (parity 0): no phase has completed, and parity ${r.parityWaited} names the phase before it, which never ran, so the wait passes at once and the barrier does not advance.`
        : `When that phase completes, ${barName}[${r.stage}] advances to parity ${r.parityAfter} (phase ${r.phase}).`;
      setText(explain, `Iteration ${r.iteration} of ${r.warp === 'all' ? `every warp of ${choice.role}` : r.warp} waits for phase parity ${r.parityWaited} of ${barName}[${r.stage}]. ${what} ${varName} is ${r.phaseVar} right after the wait${prevVar !== null && prevVar !== r.phaseVar ? ` (it was ${prevVar})` : ''}.`);
    }
  };

  chapterCtl.append(h('label', {}, 'stages S ', sIn), h('label', {}, 'iterations N ', nIn));
  const view_S = () => S;
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
  setMode('chapter');
  return view;
}
