/// <reference lib="dom" />
/**
 * The Timeline tab's "At the cursor" panel: the event at the cursor (when, who, what), its source
 * line and every barrier's state after it (phase, parity, pending / expected, tx-count), the row of
 * the barrier the event touched highlighted. Rows are rebuilt only when the run changes; each
 * cursor move only sets their text.
 */
import type { MachineEvent } from '../machine/events.js';
import { fmt, h, replace, setText } from './dom.js';
import { barStateAt, describeEvent, eventBar, eventLoc, type RunModel } from './model.js';

export interface InspectorView {
  el: HTMLElement;
  /** Shows event `ev` (−1: before the first) of `m`; `srcLine` gives a location's source text. */
  show(m: RunModel, ev: number, names: Map<number, string>, srcLine: (loc: { line: number; file?: string } | undefined) => string | null): void;
}

/** Builds the panel. */
export function inspectorView(): InspectorView {
  const curEvent = h('p', { class: 'cur-event', id: 'cur-event', 'aria-live': 'polite' });
  const curSrc = h('pre', { class: 'cur-src', id: 'cur-src' });
  const barTable = h('tbody', {});
  const el = h('section', { class: 'inspector', 'aria-labelledby': 'insp-h' },
    h('h3', { id: 'insp-h' }, 'At the cursor'), curEvent, curSrc,
    h('table', { class: 'bar-table', id: 'bar-table', 'aria-label': 'barrier states at the cursor' },
      h('thead', {}, h('tr', {}, ...['barrier', 'phase', 'parity', 'pending / expected', 'tx-count'].map((c) => h('th', { scope: 'col' }, c)))), barTable));
  let rows: { tr: HTMLTableRowElement; cells: HTMLElement[] }[] = [];
  let rowsModel: RunModel | null = null;
  return {
    el,
    show(m, ev, names, srcLine) {
      const e: MachineEvent | undefined = ev >= 0 ? m.events[ev] : undefined;
      const when = e ? (m.trace ? `step ${m.trace.stepOf[ev]}` : `t = ${fmt(e.t)}`) : '';
      setText(curEvent, e ? `${when}: ${describeEvent(m, e, names)}` : 'Before the first event: barriers as initialized.');
      const loc = e ? eventLoc(e) : undefined;
      const src = srcLine(loc);
      setText(curSrc, loc && loc.line > 0 ? `line ${loc.line}${src !== null ? `:  ${src.trim()}` : ' (TypeScript builder)'}` : '');
      const hot = e ? eventBar(e) : -1;
      const lanes = m.barLanes.slice(0, 48);
      if (rows.length !== lanes.length || rowsModel !== m) {
        rowsModel = m;
        rows = lanes.map((l) => {
          const cells = [0, 1, 2, 3].map(() => h('td', {}));
          return { tr: h('tr', {}, h('th', { scope: 'row' }, l.label), ...cells), cells };
        });
        replace(barTable, ...rows.map((r) => r.tr));
      }
      lanes.forEach((l, i) => {
        const st = barStateAt(l, ev);
        const r = rows[i]!;
        r.tr.classList.toggle('hot', l.key === hot);
        setText(r.cells[0]!, st.valid ? String(st.phase) : '—');
        setText(r.cells[1]!, st.valid ? String(st.phase & 1) : '—');
        setText(r.cells[2]!, st.valid ? `${st.pending} / ${st.expected}` : '—');
        setText(r.cells[3]!, st.valid ? `${st.tx} B` : '—');
      });
    },
  };
}
