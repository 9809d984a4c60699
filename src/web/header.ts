/// <reference lib="dom" />
/**
 * The page's header: the brand line, the kernel menu and its parameters, the run's verdict, a long
 * simulation's progress with its Cancel button, the share link, the kernel's summary, warnings
 * about the link, and the replay bar (visible on every tab while a counterexample is replayed).
 * Built empty; the app fills and wires it (src/web/main.ts).
 */
import { h } from './dom.js';
import { kernelMenu } from './kernel-menu.js';

/** What the header's own buttons do. */
export interface HeaderActions {
  cancelSimulation(): void;
  prevStep(): void;
  nextStep(): void;
  showTrace(): void;
  stopReplay(): void;
}

/** Builds the header; returns it and the elements the app updates. */
export function headerView(a: HeaderActions) {
  const { select: exampleSel, sketchOpt } = kernelMenu();
  const summary = h('p', { class: 'ex-summary', id: 'ex-summary' });
  const paramBox = h('div', { class: 'params', role: 'group', 'aria-label': 'kernel parameters' });
  const paramNote = h('span', { class: 'param-note', id: 'param-note', hidden: true }, 'kernel parameters: on the Timeline, Check and Sketch tabs');
  const verdict = h('span', { class: 'verdict', id: 'verdict', 'aria-live': 'polite' });
  // A long simulation: how far it has come, and a button that stops it.
  const simProgress = h('span', { class: 'sim-progress', id: 'sim-progress', role: 'status', hidden: true });
  const simCancel = h('button', { type: 'button', id: 'sim-cancel', hidden: true }, 'Cancel simulation');
  simCancel.addEventListener('click', () => a.cancelSimulation());
  const shareBtn = h('button', { type: 'button', title: 'copy a link that carries the kernel, its parameters and the tab' }, 'Copy link');
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
    replayBtn('◀', 'replay: previous step', a.prevStep),
    replayBtn('▶', 'replay: next step', a.nextStep),
    replayBtn('Show trace', 'show the trace in the Check tab', a.showTrace),
    replayBtn('Stop replay', 'stop replaying', a.stopReplay));
  const header = h('header', {},
    h('div', { class: 'brand' }, h('h1', {}, 'mbsim explorer'), h('span', { class: 'tag' }, 'mbarrier on Hopper & Blackwell, computed by the model')),
    h('div', { class: 'bar' }, h('label', {}, 'Kernel ', exampleSel), paramBox, paramNote, verdict, simProgress, simCancel, shareBtn, shareOut),
    summary, warnBox, replayBar);
  return { exampleSel, sketchOpt, summary, paramBox, paramNote, verdict, simProgress, simCancel, shareBtn, shareOut, warnBox, replayText, replayBar, header };
}
