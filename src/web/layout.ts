/// <reference lib="dom" />
/**
 * The explorer page's structure: the tab bar (click or ← → between tabs), the tab panels, and the
 * timeline tab's lead, run summary, legend, timeline, inspector and ring. Behaviour stays with the
 * caller (main.ts): the tab bar reports a selection and a click that hands the keys to a panel.
 */
import { h, replace } from './dom.js';
import { legendKey as key, legendRow } from './legend.js';
import { TABS, type Tab } from './share.js';

const TAB_LABEL: Record<Tab, string> = { mechanism: 'Barrier mechanism', phases: 'Phase tracking', timeline: 'Timeline & full/empty', check: 'Check', sketch: 'Sketch' };

/** The timeline tab's lead for a simulation. */
export const LEAD_SIM = 'Every lane comes from the timed simulation of the kernel: agents issue (blue) or stall (grey), TMA copies and MMAs run on their units, and each barrier’s parity changes when a phase completes. Step with ← → (tick “barrier events only” to skip the rest), drag the ruler to scrub, drag to pan; the wheel zooms once the timeline has the focus (click it) or with Ctrl held; hover for details.';
/** The timeline tab's lead for a replayed counterexample. */
export const LEAD_TRACE = 'A counterexample found by the checker, replayed through the machine: one column per step of its schedule (not cycles). Agents issue (blue) or are blocked (grey); asynchronous operations run on their units from issue to completion. Step with ← →; the trace, the ring, the mechanism and the sketch follow.';

/**
 * The tab bar: one button per tab. `select(t)` on a click or ← →; `focus(t)` after a mouse click
 * (not the keyboard's Enter/Space), which hands the keys to the panel.
 */
export function tabBar(select: (t: Tab) => void, focus: (t: Tab) => void): { tabList: HTMLElement; tabBtns: Map<Tab, HTMLButtonElement> } {
  const tabBtns = new Map<Tab, HTMLButtonElement>();
  const tabList = h('div', { class: 'tabs', role: 'tablist', 'aria-label': 'views' });
  for (const t of TABS) {
    const b = h('button', { type: 'button', role: 'tab', id: `tab-${t}`, 'aria-controls': `panel-${t}`, 'aria-selected': 'false', tabindex: '-1' }, TAB_LABEL[t]);
    b.addEventListener('click', (e) => {
      select(t);
      // A click (not the keyboard's Enter/Space) hands the keys to the panel: ← → then step the
      // timeline or the replay instead of moving between tabs.
      if (e.detail > 0) focus(t);
    });
    b.addEventListener('keydown', (e) => {
      const i = TABS.indexOf(t);
      if (e.key === 'ArrowRight' || e.key === 'ArrowLeft') {
        const n = TABS[(i + (e.key === 'ArrowRight' ? 1 : TABS.length - 1)) % TABS.length]!;
        select(n);
        tabBtns.get(n)!.focus();
        e.preventDefault();
      }
    });
    tabBtns.set(t, b);
    tabList.appendChild(b);
  }
  return { tabList, tabBtns };
}

/**
 * The colour legend of the timeline, in two rows: the agents' and units' lanes, then the barriers'
 * rows. Each row wraps between entries, never inside one.
 */
function legend(): HTMLElement {
  return h('div', { class: 'legend tl-legend' },
    legendRow('lanes:', key('k-op', 'issuing'), key('k-stall', 'stalled'), key('k-tma', 'TMA copy'), key('k-mma', 'MMA'), key('k-store', 'bulk store'),
      key('k-signal', 'remote signal'), key('k-blocked', 'blocked forever (hang)')),
    legendRow('barriers:', key('p0', 'parity 0'), key('p1', 'parity 1'), key('k-done', 'phase completed'),
      key('k-pend', 'pending arrivals'), key('k-txc', 'tx-count (a phase completes when both are 0)')));
}

/** The views' elements the page is made of. */
export interface PageParts {
  header: HTMLElement;
  tabList: HTMLElement;
  mechanism: HTMLElement;
  phases: HTMLElement;
  timeline: HTMLElement;
  inspector: HTMLElement;
  ring: HTMLElement;
  sketch: HTMLElement;
  check: HTMLElement;
}

/**
 * Builds the page into `app`: the header, the tab bar, one hidden panel per tab and the footer.
 * Returns the timeline tab's lead and run summary, which the caller fills.
 */
export function layoutPage(app: HTMLElement, p: PageParts): { tlLead: HTMLElement; runInfo: HTMLElement } {
  const tlLead = h('p', { class: 'lead', id: 'tl-lead' }, LEAD_SIM);
  const runInfo = h('div', { class: 'run-info', id: 'run-info' });
  const panels = new Map<Tab, HTMLElement>();
  panels.set('mechanism', p.mechanism);
  panels.set('phases', p.phases);
  panels.set('timeline', h('section', { class: 'view timeline-view', id: 'view-timeline', 'aria-labelledby': 'tl-h' },
    h('h2', { id: 'tl-h' }, 'Timeline'),
    tlLead,
    runInfo, legend(), p.timeline, h('div', { class: 'below' }, p.inspector, p.ring)));
  panels.set('sketch', p.sketch);
  panels.set('check', p.check);
  const main = h('main', {});
  for (const t of TABS) {
    const el = panels.get(t)!;
    main.appendChild(h('div', { role: 'tabpanel', id: `panel-${t}`, 'aria-labelledby': `tab-${t}`, tabindex: '-1', hidden: true }, el));
  }
  replace(app, p.header, p.tabList, main, h('footer', {}, 'mbsim — the model follows the PTX ISA 9.1 and H200 measurements. Links carry the kernel; nothing in a link is executed.'));
  return { tlLead, runInfo };
}
