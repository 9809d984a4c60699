/// <reference lib="dom" />
/**
 * Timeline (the seed's third figure, for any kernel): canvas lanes for every agent, each CTA's TMA
 * engine, tensor core and cluster network, and every barrier's state over time, from the timed
 * simulation. A cursor (an event index and its time) is moved by stepping (arrow keys), scrubbing
 * (drag on the ruler), clicking, or playing; zoom with the wheel or +/−, pan by dragging or
 * shift-wheel. Drawing touches only the visible window: each lane is searched by binary search
 * over its sorted spans and sub-pixel spans are merged, so 100,000 events stay fast.
 */
import type { RunModel, BarrierLane, SpanLane } from '../model.js';
import { barrierEvents, firstGE, lastLE } from '../model.js';
import { fmt, h, replace, setText } from '../dom.js';
import { drawFrame } from './timeline-frame.js';
import { hoverLines, stripH, type Row, type WarpGroup } from './timeline-hover.js';
import { COUNT_H, LabelFitter, LABEL_W, newBufs, ROW_H, RULER_H, SUB_H } from './timeline-paint.js';

export interface TimelineView {
  el: HTMLElement;
  setModel(m: RunModel | null, sourceLine: (loc: { line: number } | undefined) => string | null): void;
  /** Cursor: event index (−1: before the first). */
  readonly ev: number;
  readonly time: number;
  setEvent(ev: number, follow?: boolean): void;
  setTime(t: number): void;
  step(d: number): void;
  togglePlay(): void;
  zoom(f: number, atX?: number): void;
  fit(): void;
  /** In a counterexample replay: the trace step at the cursor (0: before the first). */
  readonly curStep: number;
  /** In a counterexample replay: moves the cursor to trace step `k` (0: before the first). */
  setStep(k: number): void;
  /** The visible time window [v0, v1] (for tests). */
  readonly window: [number, number];
  /** Rectangles filled by the last draw (for the benchmark). */
  readonly rects: number;
  /** Whether each barrier has a row for its pending arrival count and tx-count (null: automatic). */
  showCounts(on: boolean | null): void;
  /** The rows as laid out (for tests): label, kind, and for a role row whether its warps are shown. */
  readonly lanes: { label: string; kind: 'role' | 'warp' | 'agent' | 'unit' | 'barrier' | 'counts'; open?: boolean; y: number; h: number }[];
  /** Expands (true) or collapses (false) the role row named `name` (e.g. `consumer@c0`), or every role row (`name` null). */
  showWarps(name: string | null, open: boolean): void;
  /** Draws now (synchronously); returns the milliseconds it took. */
  renderNow(): number;
  onCursor?: (ev: number, t: number) => void;
  /** Gives the canvas the keyboard focus (arrow keys step, the wheel zooms). */
  focus(): void;
  /** Keyboard handler (also installed on the canvas); returns true if handled. */
  key(e: KeyboardEvent): boolean;
}

export function timelineView(): TimelineView {
  let m: RunModel | null = null;
  let srcLine: (loc: { line: number } | undefined) => string | null = () => null;
  let rows: Row[] = [];
  let contentH = RULER_H;
  let v0 = 0, v1 = 1; // visible time window
  let cursorT = 0, cursorEv = -1;
  let playing = false;
  let lastPlay = 0;
  let raf = 0;
  let W = 800, H = 400, dpr = 1;
  // Rectangles to fill, batched per colour (fillRect per rectangle; one fillStyle per colour).
  const bufs = newBufs();
  const fitter = new LabelFitter();
  let rectCount = 0;
  let countsPref: boolean | null = null;
  /** Largest |tx-count| of each barrier lane (the scale of its count row). */
  const txMax = new WeakMap<BarrierLane, number>();
  const countsOn = () => (countsPref ?? (!!m && m.barLanes.length <= 6));
  /** The role rows of the current run: a role instance whose several warps are agents of their own, by key. */
  let groups = new Map<string, WarpGroup>();
  /** The role row of each agent lane in one (by lane id). */
  let groupOf = new Map<string, WarpGroup>();

  const canvas = h('canvas', { class: 'tl-canvas', tabindex: '0', role: 'application', 'aria-label': 'timeline: arrow keys step through events, shift+arrow 10 events, +/- zoom (or the wheel while focused, or Ctrl+wheel), space play/pause, Home/End', 'aria-describedby': 'tl-readout' });
  const spacer = h('div', { class: 'tl-spacer' }, canvas);
  const scroller = h('div', { class: 'tl-scroll' }, spacer);
  const tip = h('div', { class: 'tl-tip', role: 'tooltip', hidden: true });
  const wrap = h('div', { class: 'tl-wrap' }, scroller, tip);
  const readout = h('output', { class: 'tl-readout', id: 'tl-readout', 'aria-live': 'off' });
  const btn = (label: string, aria: string, fn: () => void) => {
    const b = h('button', { type: 'button', 'aria-label': aria, title: aria }, label);
    b.addEventListener('click', fn);
    return b;
  };
  const playBtn = btn('▶ play', 'play', () => view.togglePlay());
  /** Stepping visits only barrier events (arrivals, expect_tx, complete_tx, phase completions, waits). */
  let barOnly = false;
  let barEvs: Int32Array = new Int32Array(0);
  const barBox = h('input', { type: 'checkbox', id: 'tl-bar-only' });
  barBox.addEventListener('change', () => {
    barOnly = barBox.checked;
    // Back to the canvas, so ← → step in the new mode at once.
    canvas.focus({ preventScroll: true });
    request();
  });
  const warpsBox = h('input', { type: 'checkbox', id: 'tl-warps' });
  warpsBox.addEventListener('change', () => view.showWarps(null, warpsBox.checked));
  const countsBox = h('input', { type: 'checkbox', id: 'tl-counts' });
  countsBox.addEventListener('change', () => view.showCounts(countsBox.checked));
  const scrub = h('input', { type: 'range', min: 0, max: 1000, value: 0, 'aria-label': 'scrub timeline', class: 'tl-scrub' });
  const toolbar = h('div', { class: 'tl-toolbar', role: 'toolbar', 'aria-label': 'timeline controls' },
    btn('|◀', 'first event', () => view.setEvent(-1, true)),
    btn('◀ prev', 'previous event', () => view.step(-1)),
    playBtn,
    btn('next ▶', 'next event', () => view.step(1)),
    btn('▶|', 'last event', () => {
      if (m?.trace) setStep(m.trace.steps);
      else if (m) view.setEvent(m.events.length - 1, true);
    }),
    btn('zoom +', 'zoom in', () => view.zoom(2)),
    btn('zoom −', 'zoom out', () => view.zoom(0.5)),
    btn('fit', 'zoom to fit', () => view.fit()),
    scrub, readout, h('label', { class: 'tl-counts', title: 'a row under each barrier: its pending arrival count and tx-count over time' }, countsBox, ' pending & tx rows'),
    h('label', { class: 'tl-counts', title: '← → and the prev/next buttons step only through barrier events: arrivals, expect_tx, complete_tx, phase completions and waits' }, barBox, ' barrier events only'),
    h('label', { class: 'tl-counts', title: 'a lane for every warp of a role of several warps (click a role\'s name on the timeline to expand or collapse that role alone)' }, warpsBox, ' every warp'));
  const el = h('div', { class: 'timeline' }, toolbar, wrap);

  const plotW = () => Math.max(10, W - LABEL_W);
  const xOf = (t: number) => LABEL_W + ((t - v0) / (v1 - v0)) * plotW();
  const tOf = (x: number) => v0 + ((x - LABEL_W) / plotW()) * (v1 - v0);

  const layout = () => {
    rows = [];
    let y = RULER_H;
    if (m) {
      for (const l of m.spanLanes) {
        const g = groupOf.get(l.id);
        if (g) {
          if (g.lanes[0] !== l) continue;
          const n = g.lanes.length;
          const hh = Math.max(ROW_H, n * stripH(n) + 4);
          rows.push({ y, h: hh, group: g, label: `${g.open ? '▾' : '▸'} ${g.name} · ${n} warps` });
          y += hh;
          if (g.open) {
            for (const w of g.lanes) {
              rows.push({ y, h: ROW_H, span: w, label: w.label, indent: true });
              y += ROW_H;
            }
          }
          continue;
        }
        const hh = l.group === 'unit' ? Math.max(ROW_H, l.subRows * SUB_H + 6) : ROW_H;
        rows.push({ y, h: hh, span: l, label: l.label });
        y += hh;
      }
      const counts = countsOn();
      for (const b of m.barLanes) {
        rows.push({ y, h: ROW_H, bar: b, label: b.label });
        y += ROW_H;
        if (counts) {
          rows.push({ y, h: COUNT_H, counts: b, label: `${b.label} pending · tx` });
          y += COUNT_H;
        }
      }
    }
    contentH = y + 4;
    const vals = [...groups.values()];
    warpsBox.checked = vals.length > 0 && vals.every((g) => g.open);
    warpsBox.indeterminate = vals.some((g) => g.open) && !warpsBox.checked;
    warpsBox.disabled = vals.length === 0;
    const viewH = Math.min(contentH, 540);
    spacer.style.height = `${contentH}px`;
    scroller.style.height = `${viewH}px`;
    resize(viewH);
  };

  const resize = (viewH?: number) => {
    dpr = window.devicePixelRatio || 1;
    W = Math.max(300, Math.floor(scroller.clientWidth || wrap.clientWidth || 900));
    H = viewH ?? H;
    // Setting a canvas's size clears it: only when it changes, and then draw again.
    const cw = Math.floor(W * dpr), ch = Math.floor(H * dpr);
    if (canvas.width !== cw || canvas.height !== ch) {
      canvas.width = cw;
      canvas.height = ch;
      request();
    }
    canvas.style.width = `${W}px`;
    canvas.style.height = `${H}px`;
  };

  const clampView = () => {
    if (!m) return;
    const span = Math.min(Math.max(v1 - v0, 8), m.end * 1.05 + 10);
    const lo = -m.end * 0.02, hi = m.end * 1.03;
    v0 = Math.min(Math.max(v0, lo), hi - span);
    v1 = v0 + span;
  };

  function draw(): void {
    const c = canvas.getContext('2d');
    if (!c) return;
    rectCount = drawFrame(c, { m, rows, v0, v1, W, H, dpr, vy: scroller.scrollTop, cursorT, bufs, fitter, txMax });
  }

  const request = () => {
    if (!raf) raf = requestAnimationFrame(frame);
  };
  const frame = (now: number) => {
    raf = 0;
    if (playing && m) {
      const dt = lastPlay ? Math.min(100, now - lastPlay) : 16;
      lastPlay = now;
      const t = cursorT + ((v1 - v0) / 5000) * dt;
      if (t >= m.end) {
        setTimeInternal(m.end);
        setPlaying(false);
      } else setTimeInternal(t);
      follow();
      request();
    }
    draw();
    updateReadout();
    view.onCursor?.(cursorEv, cursorT);
  };

  const updateReadout = () => {
    if (!m) return setText(readout, '');
    if (m.trace) setText(readout, `step ${stepOfCursor()} of ${m.trace.steps} · event ${fmt(cursorEv + 1)} of ${fmt(m.events.length)}`);
    else if (barOnly) {
      const j = lastLE(barEvs, cursorEv);
      const on = j >= 0 && barEvs[j] === cursorEv;
      setText(readout, `t = ${fmt(cursorT)} cycles · barrier event ${on ? fmt(j + 1) : '–'} of ${fmt(barEvs.length)} · event ${fmt(cursorEv + 1)} of ${fmt(m.events.length)}`);
    } else setText(readout, `t = ${fmt(cursorT)} cycles · event ${fmt(cursorEv + 1)} of ${fmt(m.events.length)}`);
    scrub.value = String(Math.round((cursorT / m.end) * 1000));
  };

  const setPlaying = (p: boolean) => {
    playing = p;
    lastPlay = 0;
    setText(playBtn, p ? '⏸ pause' : '▶ play');
    playBtn.setAttribute('aria-label', p ? 'pause' : 'play');
    playBtn.setAttribute('aria-pressed', String(p));
    if (p) request();
  };

  const follow = () => {
    const span = v1 - v0;
    if (cursorT < v0 || cursorT > v1) {
      v0 = cursorT - span * 0.3;
      v1 = v0 + span;
      clampView();
    } else if (playing && cursorT > v0 + span * 0.85) {
      v0 = cursorT - span * 0.3;
      v1 = v0 + span;
      clampView();
    }
  };

  /** The trace step the cursor is on (0: before the first). */
  const stepOfCursor = () => (m?.trace && cursorEv >= 0 ? m.trace.stepOf[cursorEv]! : 0);
  const setStep = (k: number) => {
    const tr = m!.trace!;
    k = Math.max(0, Math.min(tr.steps, k));
    // A step that emitted no event keeps the cursor on the previous event, but at the step's time.
    cursorEv = k === 0 ? -1 : tr.stepEnd[k]!;
    cursorT = k === 0 ? 0 : k - 0.5;
    follow();
    request();
  };

  const setTimeInternal = (t: number) => {
    if (!m) return;
    cursorT = Math.max(0, Math.min(m.end, t));
    cursorEv = lastLE(m.evT, cursorT);
  };

  const view: TimelineView = {
    el,
    get ev() {
      return cursorEv;
    },
    get time() {
      return cursorT;
    },
    get rects() {
      return rectCount;
    },
    get window(): [number, number] {
      return [v0, v1];
    },
    get curStep() {
      return stepOfCursor();
    },
    setStep(k) {
      if (m?.trace) setStep(k);
    },
    showCounts(on) {
      countsPref = on;
      countsBox.checked = countsOn();
      layout();
      request();
    },
    get lanes() {
      return rows.map((r) => ({
        label: r.group ? r.group.name : r.label,
        kind: r.group ? 'role' as const : r.indent ? 'warp' as const : r.span ? (r.span.group === 'unit' ? 'unit' as const : 'agent' as const) : r.bar ? 'barrier' as const : 'counts' as const,
        ...(r.group ? { open: r.group.open } : {}),
        y: r.y,
        h: r.h,
      }));
    },
    showWarps(name, open) {
      for (const g of groups.values()) if (name === null || g.name === name) g.open = open;
      layout();
      request();
    },
    setModel(model, sl) {
      m = model;
      groups = model ? warpGroups(model) : new Map();
      groupOf = new Map();
      for (const g of groups.values()) for (const l of g.lanes) groupOf.set(l.id, g);
      barEvs = model ? barrierEvents(model) : new Int32Array(0);
      srcLine = sl;
      countsBox.checked = countsOn();
      setPlaying(false);
      cursorEv = -1;
      cursorT = 0;
      v0 = 0;
      v1 = model ? model.end * 1.02 : 1;
      layout();
      request();
    },
    setEvent(ev, doFollow = true) {
      if (!m) return;
      cursorEv = Math.max(-1, Math.min(m.events.length - 1, ev));
      cursorT = cursorEv >= 0 ? m.evT[cursorEv]! : 0;
      if (doFollow) follow();
      request();
    },
    setTime(t) {
      setTimeInternal(t);
      request();
    },
    step(d) {
      setPlaying(false);
      if (m?.trace) setStep(stepOfCursor() + d);
      else if (m && barOnly) {
        // The |d|-th barrier event after (or before) the cursor; before the first one: −1.
        const n = barEvs.length;
        let j = d > 0 ? firstGE(barEvs, cursorEv + 1) + d - 1 : lastLE(barEvs, cursorEv - 1) + d + 1;
        j = Math.max(-1, Math.min(n - 1, j));
        view.setEvent(j < 0 ? -1 : barEvs[j]!, true);
      } else view.setEvent(cursorEv + d, true);
    },
    togglePlay() {
      if (!m) return;
      if (!playing && cursorT >= m.end) view.setEvent(-1, true);
      setPlaying(!playing);
    },
    zoom(f, atX) {
      if (!m) return;
      const cx = atX ?? xOf(cursorT);
      const pivot = cx >= LABEL_W && cx <= W ? tOf(cx) : (v0 + v1) / 2;
      const span = (v1 - v0) / f;
      v0 = pivot - (pivot - v0) / f;
      v1 = v0 + span;
      clampView();
      request();
    },
    fit() {
      if (!m) return;
      v0 = 0;
      v1 = m.end * 1.02;
      request();
    },
    renderNow() {
      const t = performance.now();
      if (raf) {
        cancelAnimationFrame(raf);
        raf = 0;
      }
      draw();
      updateReadout();
      view.onCursor?.(cursorEv, cursorT);
      return performance.now() - t;
    },
    focus() {
      canvas.focus({ preventScroll: true });
    },
    key(e) {
      if (!m) return false;
      const k = e.key;
      if (k === 'ArrowRight') view.step(e.shiftKey ? 10 : 1);
      else if (k === 'ArrowLeft') view.step(e.shiftKey ? -10 : -1);
      else if (k === 'Home') view.setEvent(-1, true);
      else if (k === 'End') {
        if (m.trace) setStep(m.trace.steps);
        else view.setEvent(m.events.length - 1, true);
      }
      else if (k === '+' || k === '=') view.zoom(1.5);
      else if (k === '-' || k === '_') view.zoom(1 / 1.5);
      else if (k === ' ' || k === 'k') view.togglePlay();
      else if (k === 'f') view.fit();
      else return false;
      e.preventDefault();
      return true;
    },
  };

  // Interaction.
  canvas.addEventListener('keydown', (e) => view.key(e));
  scrub.addEventListener('input', () => {
    if (!m) return;
    setPlaying(false);
    setTimeInternal((Number(scrub.value) / 1000) * m.end);
    follow();
    request();
  });
  let drag: { mode: 'scrub' | 'pan' | 'maybe'; x0: number; v0: number; v1: number } | null = null;
  const localXY = (e: MouseEvent) => {
    const r = canvas.getBoundingClientRect();
    return { x: e.clientX - r.left, y: e.clientY - r.top };
  };
  canvas.addEventListener('pointerdown', (e) => {
    if (!m) return;
    canvas.focus();
    const { x, y } = localXY(e);
    if (x < LABEL_W) {
      // A click on a role's name expands or collapses its warps.
      const row = y >= RULER_H ? rows.find((r) => y + scroller.scrollTop >= r.y && y + scroller.scrollTop < r.y + r.h) : undefined;
      if (row?.group) view.showWarps(row.group.name, !row.group.open);
      return;
    }
    canvas.setPointerCapture(e.pointerId);
    setPlaying(false);
    drag = { mode: y < RULER_H ? 'scrub' : 'maybe', x0: x, v0, v1 };
    if (drag.mode === 'scrub') {
      setTimeInternal(tOf(x));
      request();
    }
  });
  canvas.addEventListener('pointermove', (e) => {
    const { x, y } = localXY(e);
    if (drag && m) {
      if (drag.mode === 'scrub') {
        setTimeInternal(tOf(Math.max(LABEL_W, Math.min(W, x))));
        request();
      } else {
        if (drag.mode === 'maybe' && Math.abs(x - drag.x0) > 3) drag.mode = 'pan';
        if (drag.mode === 'pan') {
          const dt = ((x - drag.x0) / plotW()) * (drag.v1 - drag.v0);
          v0 = drag.v0 - dt;
          v1 = drag.v1 - dt;
          clampView();
          request();
        }
      }
      tip.hidden = true;
      return;
    }
    hover(x, y);
  });
  canvas.addEventListener('pointerup', (e) => {
    if (drag?.mode === 'maybe' && m) {
      setTimeInternal(tOf(localXY(e).x));
      request();
    }
    drag = null;
  });
  canvas.addEventListener('pointerleave', () => {
    tip.hidden = true;
  });
  // The wheel zooms (and a horizontal wheel pans) only while the canvas has the focus (a click on it
  // gives it) or with Ctrl / ⌘ / Alt held; otherwise it scrolls the page as usual. Shift+wheel
  // scrolls the lanes.
  canvas.addEventListener('wheel', (e) => {
    if (!m) return;
    if (e.shiftKey && !e.ctrlKey) return; // native vertical scroll of the lanes
    const mine = document.activeElement === canvas || e.ctrlKey || e.metaKey || e.altKey;
    if (!mine) return;
    e.preventDefault();
    if (Math.abs(e.deltaX) > Math.abs(e.deltaY)) {
      const dt = (e.deltaX / plotW()) * (v1 - v0);
      v0 += dt;
      v1 += dt;
      clampView();
    } else view.zoom(Math.exp(-e.deltaY * 0.002), localXY(e).x);
    request();
  }, { passive: false });
  scroller.addEventListener('scroll', () => request());
  new ResizeObserver(() => resize()).observe(scroller);

  function hover(x: number, y: number): void {
    const vy = scroller.scrollTop;
    const row = m && x >= LABEL_W && y >= RULER_H ? rows.find((r) => y + vy >= r.y && y + vy < r.y + r.h) : undefined;
    const lines = m && row ? hoverLines(m, row, tOf(x), y + vy - row.y, (4 / plotW()) * (v1 - v0), srcLine) : null;
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

  return view;
}

/**
 * The role rows of run `m`: each role instance of a CTA whose warps are agents of their own (two or
 * more lanes). A role row starts expanded when its warps' lanes differ (their spans are not the
 * same), collapsed when the warps did the same thing at the same times.
 */
function warpGroups(m: RunModel): Map<string, WarpGroup> {
  const byKey = new Map<string, SpanLane[]>();
  for (const l of m.spanLanes) {
    if (l.group !== 'agent' || l.agent < 0) continue;
    const a = m.program.agents[l.agent];
    if (!a) continue;
    const key = `${a.role}|${a.instance}|${a.cta}`;
    let g = byKey.get(key);
    if (!g) byKey.set(key, (g = []));
    g.push(l);
  }
  const out = new Map<string, WarpGroup>();
  for (const [key, lanes] of byKey) {
    if (lanes.length < 2) continue;
    const name = lanes[0]!.label.replace(/\.w\d+(?=@|$)/, '');
    out.set(key, { key, name, lanes, open: lanes.some((l) => !sameSpans(l, lanes[0]!)) });
  }
  return out;
}

/** Whether two lanes have the same spans (kinds and times). */
function sameSpans(a: SpanLane, b: SpanLane): boolean {
  if (a.n !== b.n) return false;
  for (let i = 0; i < a.n; i++) if (a.t0[i] !== b.t0[i] || a.t1[i] !== b.t1[i] || a.kind[i] !== b.kind[i]) return false;
  return true;
}
