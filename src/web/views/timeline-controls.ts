/// <reference lib="dom" />
/**
 * The timeline's controls: its toolbar (first / previous / play / next / last, zoom, fit, the
 * scrubber, the readout and the count-row, barrier-events and every-warp switches) and its input
 * on the canvas: keys (arrows step, +/− zoom, space plays), pointer (drag on the ruler scrubs,
 * drag elsewhere pans, a click moves the cursor, a click on a role's name expands or collapses its
 * warps), the wheel (zoom, horizontal pan) and hover (the tooltip of timeline-hover.ts).
 */
import { h, replace } from '../dom.js';
import { hoverLines } from './timeline-hover.js';
import { LABEL_W, RULER_H } from './timeline-paint.js';
import type { Timeline } from './timeline.js';

/** The toolbar's elements the timeline updates. */
export interface TimelineToolbar {
  toolbar: HTMLElement;
  playBtn: HTMLButtonElement;
  barBox: HTMLInputElement;
  warpsBox: HTMLInputElement;
  countsBox: HTMLInputElement;
  scrub: HTMLInputElement;
  readout: HTMLElement;
}

/** Builds the toolbar of timeline `tl`, its buttons and switches calling `tl`'s methods. */
export function timelineToolbar(tl: Timeline): TimelineToolbar {
  const readout = h('output', { class: 'tl-readout', id: 'tl-readout', 'aria-live': 'off' });
  const btn = (label: string, aria: string, fn: () => void) => {
    const b = h('button', { type: 'button', 'aria-label': aria, title: aria }, label);
    b.addEventListener('click', fn);
    return b;
  };
  const playBtn = btn('▶ play', 'play', () => tl.togglePlay());
  const barBox = h('input', { type: 'checkbox', id: 'tl-bar-only' });
  barBox.addEventListener('change', () => {
    tl.barOnly = barBox.checked;
    // Back to the canvas, so ← → step in the new mode at once.
    tl.canvas.focus({ preventScroll: true });
    tl.request();
  });
  const warpsBox = h('input', { type: 'checkbox', id: 'tl-warps' });
  warpsBox.addEventListener('change', () => tl.showWarps(null, warpsBox.checked));
  const countsBox = h('input', { type: 'checkbox', id: 'tl-counts' });
  countsBox.addEventListener('change', () => tl.showCounts(countsBox.checked));
  const scrub = h('input', { type: 'range', min: 0, max: 1000, value: 0, 'aria-label': 'scrub timeline', class: 'tl-scrub' });
  const toolbar = h('div', { class: 'tl-toolbar', role: 'toolbar', 'aria-label': 'timeline controls' },
    btn('|◀', 'first event', () => tl.setEvent(-1, true)),
    btn('◀ prev', 'previous event', () => tl.step(-1)),
    playBtn,
    btn('next ▶', 'next event', () => tl.step(1)),
    btn('▶|', 'last event', () => tl.toEnd()),
    btn('zoom +', 'zoom in', () => tl.zoom(2)),
    btn('zoom −', 'zoom out', () => tl.zoom(0.5)),
    btn('fit', 'zoom to fit', () => tl.fit()),
    scrub, readout, h('label', { class: 'tl-counts', title: 'a row under each barrier: its pending arrival count and tx-count over time' }, countsBox, ' pending & tx rows'),
    h('label', { class: 'tl-counts', title: '← → and the prev/next buttons step only through barrier events: arrivals, expect_tx, complete_tx, phase completions and waits' }, barBox, ' barrier events only'),
    h('label', { class: 'tl-counts', title: 'a lane for every warp of a role of several warps (click a role\'s name on the timeline to expand or collapse that role alone)' }, warpsBox, ' every warp'));
  return { toolbar, playBtn, barBox, warpsBox, countsBox, scrub, readout };
}

/** Keyboard handler of timeline `tl`; returns true if handled. */
export function timelineKey(tl: Timeline, e: KeyboardEvent): boolean {
  if (!tl.m) return false;
  const k = e.key;
  if (k === 'ArrowRight') tl.step(e.shiftKey ? 10 : 1);
  else if (k === 'ArrowLeft') tl.step(e.shiftKey ? -10 : -1);
  else if (k === 'Home') tl.setEvent(-1, true);
  else if (k === 'End') tl.toEnd();
  else if (k === '+' || k === '=') tl.zoom(1.5);
  else if (k === '-' || k === '_') tl.zoom(1 / 1.5);
  else if (k === ' ' || k === 'k') tl.togglePlay();
  else if (k === 'f') tl.fit();
  else return false;
  e.preventDefault();
  return true;
}

/** Binds the keyboard, scrubber, pointer, wheel, scroll and resize input of timeline `tl`. */
export function bindTimelineInput(tl: Timeline): void {
  const { canvas, scrub, scroller } = tl;
  canvas.addEventListener('keydown', (e) => tl.key(e));
  scrub.addEventListener('input', () => {
    if (!tl.m) return;
    tl.setPlaying(false);
    tl.setTimeInternal((Number(scrub.value) / 1000) * tl.m.end);
    tl.follow();
    tl.request();
  });
  bindPointer(tl);
  // The wheel zooms (and a horizontal wheel pans) only while the canvas has the focus (a click on it
  // gives it) or with Ctrl / ⌘ / Alt held; otherwise it scrolls the page as usual. Shift+wheel
  // scrolls the lanes.
  canvas.addEventListener('wheel', (e) => {
    if (!tl.m) return;
    if (e.shiftKey && !e.ctrlKey) return; // native vertical scroll of the lanes
    const mine = document.activeElement === canvas || e.ctrlKey || e.metaKey || e.altKey;
    if (!mine) return;
    e.preventDefault();
    if (Math.abs(e.deltaX) > Math.abs(e.deltaY)) {
      const dt = (e.deltaX / tl.plotW()) * (tl.v1 - tl.v0);
      tl.v0 += dt;
      tl.v1 += dt;
      tl.clampView();
    } else tl.zoom(Math.exp(-e.deltaY * 0.002), localXY(tl, e).x);
    tl.request();
  }, { passive: false });
  scroller.addEventListener('scroll', () => tl.request());
  new ResizeObserver(() => tl.resize()).observe(scroller);
}

/** A pointer event's position on the canvas in CSS pixels. */
function localXY(tl: Timeline, e: MouseEvent): { x: number; y: number } {
  const r = tl.canvas.getBoundingClientRect();
  return { x: e.clientX - r.left, y: e.clientY - r.top };
}

/** Pointer input: scrub on the ruler, pan by dragging, click to move the cursor, hover for the tooltip. */
function bindPointer(tl: Timeline): void {
  const { canvas, scroller, tip } = tl;
  let drag: { mode: 'scrub' | 'pan' | 'maybe'; x0: number; v0: number; v1: number } | null = null;
  canvas.addEventListener('pointerdown', (e) => {
    if (!tl.m) return;
    canvas.focus();
    const { x, y } = localXY(tl, e);
    if (x < LABEL_W) {
      // A click on a role's name expands or collapses its warps.
      const row = y >= RULER_H ? tl.rows.find((r) => y + scroller.scrollTop >= r.y && y + scroller.scrollTop < r.y + r.h) : undefined;
      if (row?.group) tl.showWarps(row.group.name, !row.group.open);
      return;
    }
    canvas.setPointerCapture(e.pointerId);
    tl.setPlaying(false);
    drag = { mode: y < RULER_H ? 'scrub' : 'maybe', x0: x, v0: tl.v0, v1: tl.v1 };
    if (drag.mode === 'scrub') {
      tl.setTimeInternal(tl.tOf(x));
      tl.request();
    }
  });
  canvas.addEventListener('pointermove', (e) => {
    const { x, y } = localXY(tl, e);
    if (drag && tl.m) {
      if (drag.mode === 'scrub') {
        tl.setTimeInternal(tl.tOf(Math.max(LABEL_W, Math.min(tl.W, x))));
        tl.request();
      } else {
        if (drag.mode === 'maybe' && Math.abs(x - drag.x0) > 3) drag.mode = 'pan';
        if (drag.mode === 'pan') {
          const dt = ((x - drag.x0) / tl.plotW()) * (drag.v1 - drag.v0);
          tl.v0 = drag.v0 - dt;
          tl.v1 = drag.v1 - dt;
          tl.clampView();
          tl.request();
        }
      }
      tip.hidden = true;
      return;
    }
    hover(tl, x, y);
  });
  canvas.addEventListener('pointerup', (e) => {
    if (drag?.mode === 'maybe' && tl.m) {
      tl.setTimeInternal(tl.tOf(localXY(tl, e).x));
      tl.request();
    }
    drag = null;
  });
  canvas.addEventListener('pointerleave', () => {
    tip.hidden = true;
  });
}

/** Shows the tooltip of the row and time under canvas position (x, y), or hides it. */
function hover(tl: Timeline, x: number, y: number): void {
  const { m, canvas, scroller, tip, wrap } = tl;
  const vy = scroller.scrollTop;
  const row = m && x >= LABEL_W && y >= RULER_H ? tl.rows.find((r) => y + vy >= r.y && y + vy < r.y + r.h) : undefined;
  const lines = m && row ? hoverLines(m, row, tl.tOf(x), y + vy - row.y, (4 / tl.plotW()) * (tl.v1 - tl.v0), tl.srcLine) : null;
  if (!lines || lines.length === 0) {
    tip.hidden = true;
    return;
  }
  replace(tip, ...lines.map((l) => h('div', { class: l.cls ?? '' }, l.text)));
  tip.hidden = false;
  const wr = wrap.getBoundingClientRect();
  const cr = canvas.getBoundingClientRect();
  const left = Math.min(cr.left - wr.left + x + 14, wr.width - 360);
  tip.style.left = `${Math.max(0, left)}px`;
  tip.style.top = `${cr.top - wr.top + y + 16}px`;
}
