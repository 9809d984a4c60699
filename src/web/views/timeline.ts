/// <reference lib="dom" />
/**
 * Timeline (the seed's third figure, for any kernel): canvas lanes for every agent, each CTA's TMA
 * engine, tensor core and cluster network, and every barrier's state over time, from the timed
 * simulation. A cursor (an event index and its time) is moved by stepping (arrow keys), scrubbing
 * (drag on the ruler), clicking, or playing; zoom with the wheel or +/−, pan by dragging or
 * shift-wheel. Drawing touches only the visible window: each lane is searched by binary search
 * over its sorted spans and sub-pixel spans are merged, so 100,000 events stay fast.
 */
import type { RunModel, BarrierLane } from '../model.js';
import { barrierEvents, firstGE, lastLE } from '../model.js';
import { fmt, h, setText } from '../dom.js';
import { drawFrame } from './timeline-frame.js';
import type { Row, WarpGroup } from './timeline-hover.js';
import { LabelFitter, LABEL_W, newBufs } from './timeline-paint.js';
import { laneInfo, layoutRows, warpGroups, type LaneInfo } from './timeline-rows.js';
import { bindTimelineInput, timelineKey, timelineToolbar } from './timeline-controls.js';

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
  readonly lanes: LaneInfo[];
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

/** A new timeline (no run until {@link TimelineView.setModel}). */
export function timelineView(): TimelineView {
  return new Timeline();
}

/**
 * The timeline's state (run, rows, visible window, cursor, playback) and drawing; its toolbar and
 * input live in timeline-controls.ts, its rows in timeline-rows.ts. Times are in cycles, positions
 * in CSS pixels.
 */
export class Timeline implements TimelineView {
  /** The run shown (null: none). */
  m: RunModel | null = null;
  /** The source line of a location, for the tooltip. */
  srcLine: (loc: { line: number } | undefined) => string | null = () => null;
  /** The rows as laid out (timeline-rows.ts). */
  rows: Row[] = [];
  /** The visible time window. */
  v0 = 0;
  v1 = 1;
  private cursorT = 0;
  private cursorEv = -1;
  private playing = false;
  private lastPlay = 0;
  private raf = 0;
  /** Canvas width and height in CSS pixels, and the device pixel ratio. */
  W = 800;
  private H = 400;
  private dpr = 1;
  /** Rectangles to fill, batched per colour (fillRect per rectangle; one fillStyle per colour). */
  private readonly bufs = newBufs();
  private readonly fitter = new LabelFitter();
  private rectCount = 0;
  private countsPref: boolean | null = null;
  /** Largest |tx-count| of each barrier lane (the scale of its count row). */
  private readonly txMax = new WeakMap<BarrierLane, number>();
  /** The role rows of the current run: a role instance whose several warps are agents of their own, by key. */
  private groups = new Map<string, WarpGroup>();
  /** The role row of each agent lane in one (by lane id). */
  private groupOf = new Map<string, WarpGroup>();
  /** Stepping visits only barrier events (arrivals, expect_tx, complete_tx, phase completions, waits). */
  barOnly = false;
  private barEvs: Int32Array = new Int32Array(0);
  onCursor?: (ev: number, t: number) => void;

  readonly el: HTMLElement;
  readonly canvas: HTMLCanvasElement;
  private readonly spacer: HTMLElement;
  readonly scroller: HTMLElement;
  readonly tip: HTMLElement;
  readonly wrap: HTMLElement;
  readonly scrub: HTMLInputElement;
  private readonly tb: ReturnType<typeof timelineToolbar>;

  constructor() {
    this.canvas = h('canvas', { class: 'tl-canvas', tabindex: '0', role: 'application', 'aria-label': 'timeline: arrow keys step through events, shift+arrow 10 events, +/- zoom (or the wheel while focused, or Ctrl+wheel), space play/pause, Home/End', 'aria-describedby': 'tl-readout' });
    this.spacer = h('div', { class: 'tl-spacer' }, this.canvas);
    this.scroller = h('div', { class: 'tl-scroll' }, this.spacer);
    this.tip = h('div', { class: 'tl-tip', role: 'tooltip', hidden: true });
    this.wrap = h('div', { class: 'tl-wrap' }, this.scroller, this.tip);
    this.tb = timelineToolbar(this);
    this.scrub = this.tb.scrub;
    this.el = h('div', { class: 'timeline' }, this.tb.toolbar, this.wrap);
    bindTimelineInput(this);
  }

  private countsOn(): boolean {
    return this.countsPref ?? (!!this.m && this.m.barLanes.length <= 6);
  }
  /** Width of the plot (right of the labels). */
  plotW(): number {
    return Math.max(10, this.W - LABEL_W);
  }
  private xOf(t: number): number {
    return LABEL_W + ((t - this.v0) / (this.v1 - this.v0)) * this.plotW();
  }
  /** The time at canvas x. */
  tOf(x: number): number {
    return this.v0 + ((x - LABEL_W) / this.plotW()) * (this.v1 - this.v0);
  }

  private layout(): void {
    const { rows, contentH } = layoutRows(this.m, this.groupOf, this.countsOn());
    this.rows = rows;
    const warpsBox = this.tb.warpsBox;
    const vals = [...this.groups.values()];
    warpsBox.checked = vals.length > 0 && vals.every((g) => g.open);
    warpsBox.indeterminate = vals.some((g) => g.open) && !warpsBox.checked;
    warpsBox.disabled = vals.length === 0;
    const viewH = Math.min(contentH, 540);
    this.spacer.style.height = `${contentH}px`;
    this.scroller.style.height = `${viewH}px`;
    this.resize(viewH);
  }

  /** Sizes the canvas to the scroller's width and `viewH` (or the current height). */
  resize(viewH?: number): void {
    const { canvas } = this;
    this.dpr = window.devicePixelRatio || 1;
    this.W = Math.max(300, Math.floor(this.scroller.clientWidth || this.wrap.clientWidth || 900));
    this.H = viewH ?? this.H;
    // Setting a canvas's size clears it: only when it changes, and then draw again.
    const cw = Math.floor(this.W * this.dpr), ch = Math.floor(this.H * this.dpr);
    if (canvas.width !== cw || canvas.height !== ch) {
      canvas.width = cw;
      canvas.height = ch;
      this.request();
    }
    canvas.style.width = `${this.W}px`;
    canvas.style.height = `${this.H}px`;
  }

  /** Keeps the visible window within the run (a little margin) and at least 8 cycles wide. */
  clampView(): void {
    const m = this.m;
    if (!m) return;
    const span = Math.min(Math.max(this.v1 - this.v0, 8), m.end * 1.05 + 10);
    const lo = -m.end * 0.02, hi = m.end * 1.03;
    this.v0 = Math.min(Math.max(this.v0, lo), hi - span);
    this.v1 = this.v0 + span;
  }

  private draw(): void {
    const c = this.canvas.getContext('2d');
    if (!c) return;
    const { m, rows, v0, v1, W, H, dpr, cursorT, bufs, fitter, txMax } = this;
    this.rectCount = drawFrame(c, { m, rows, v0, v1, W, H, dpr, vy: this.scroller.scrollTop, cursorT, bufs, fitter, txMax });
  }

  /** Draws at the next animation frame. */
  request(): void {
    if (!this.raf) this.raf = requestAnimationFrame(this.frame);
  }
  private readonly frame = (now: number): void => {
    this.raf = 0;
    const m = this.m;
    if (this.playing && m) {
      const dt = this.lastPlay ? Math.min(100, now - this.lastPlay) : 16;
      this.lastPlay = now;
      const t = this.cursorT + ((this.v1 - this.v0) / 5000) * dt;
      if (t >= m.end) {
        this.setTimeInternal(m.end);
        this.setPlaying(false);
      } else this.setTimeInternal(t);
      this.follow();
      this.request();
    }
    this.draw();
    this.updateReadout();
    this.onCursor?.(this.cursorEv, this.cursorT);
  };

  private updateReadout(): void {
    const { m, cursorEv, cursorT, barEvs } = this;
    const readout = this.tb.readout;
    if (!m) return setText(readout, '');
    if (m.trace) setText(readout, `step ${this.stepOfCursor()} of ${m.trace.steps} · event ${fmt(cursorEv + 1)} of ${fmt(m.events.length)}`);
    else if (this.barOnly) {
      const j = lastLE(barEvs, cursorEv);
      const on = j >= 0 && barEvs[j] === cursorEv;
      setText(readout, `t = ${fmt(cursorT)} cycles · barrier event ${on ? fmt(j + 1) : '–'} of ${fmt(barEvs.length)} · event ${fmt(cursorEv + 1)} of ${fmt(m.events.length)}`);
    } else setText(readout, `t = ${fmt(cursorT)} cycles · event ${fmt(cursorEv + 1)} of ${fmt(m.events.length)}`);
    this.scrub.value = String(Math.round((cursorT / m.end) * 1000));
  }

  /** Starts or stops playback (and shows it on the play button). */
  setPlaying(p: boolean): void {
    const playBtn = this.tb.playBtn;
    this.playing = p;
    this.lastPlay = 0;
    setText(playBtn, p ? '⏸ pause' : '▶ play');
    playBtn.setAttribute('aria-label', p ? 'pause' : 'play');
    playBtn.setAttribute('aria-pressed', String(p));
    if (p) this.request();
  }

  /** Moves the window to show the cursor (and, while playing, ahead of it). */
  follow(): void {
    const span = this.v1 - this.v0;
    const t = this.cursorT;
    if (t < this.v0 || t > this.v1 || (this.playing && t > this.v0 + span * 0.85)) {
      this.v0 = t - span * 0.3;
      this.v1 = this.v0 + span;
      this.clampView();
    }
  }

  /** The trace step the cursor is on (0: before the first). */
  private stepOfCursor(): number {
    const m = this.m;
    return m?.trace && this.cursorEv >= 0 ? m.trace.stepOf[this.cursorEv]! : 0;
  }
  private goStep(k: number): void {
    const tr = this.m!.trace!;
    k = Math.max(0, Math.min(tr.steps, k));
    // A step that emitted no event keeps the cursor on the previous event, but at the step's time.
    this.cursorEv = k === 0 ? -1 : tr.stepEnd[k]!;
    this.cursorT = k === 0 ? 0 : k - 0.5;
    this.follow();
    this.request();
  }

  /** Moves the cursor to time `t` (clamped to the run) and the last event at or before it. */
  setTimeInternal(t: number): void {
    const m = this.m;
    if (!m) return;
    this.cursorT = Math.max(0, Math.min(m.end, t));
    this.cursorEv = lastLE(m.evT, this.cursorT);
  }

  /** Moves the cursor to the last event (the last trace step of a replay). */
  toEnd(): void {
    const m = this.m;
    if (m?.trace) this.goStep(m.trace.steps);
    else if (m) this.setEvent(m.events.length - 1, true);
  }

  get ev(): number {
    return this.cursorEv;
  }
  get time(): number {
    return this.cursorT;
  }
  get rects(): number {
    return this.rectCount;
  }
  get window(): [number, number] {
    return [this.v0, this.v1];
  }
  get curStep(): number {
    return this.stepOfCursor();
  }
  setStep(k: number): void {
    if (this.m?.trace) this.goStep(k);
  }
  showCounts(on: boolean | null): void {
    this.countsPref = on;
    this.tb.countsBox.checked = this.countsOn();
    this.layout();
    this.request();
  }
  get lanes(): LaneInfo[] {
    return laneInfo(this.rows);
  }
  showWarps(name: string | null, open: boolean): void {
    for (const g of this.groups.values()) if (name === null || g.name === name) g.open = open;
    this.layout();
    this.request();
  }
  setModel(model: RunModel | null, sl: (loc: { line: number } | undefined) => string | null): void {
    this.m = model;
    this.groups = model ? warpGroups(model) : new Map();
    this.groupOf = new Map();
    for (const g of this.groups.values()) for (const l of g.lanes) this.groupOf.set(l.id, g);
    this.barEvs = model ? barrierEvents(model) : new Int32Array(0);
    this.srcLine = sl;
    this.tb.countsBox.checked = this.countsOn();
    this.setPlaying(false);
    this.cursorEv = -1;
    this.cursorT = 0;
    this.v0 = 0;
    this.v1 = model ? model.end * 1.02 : 1;
    this.layout();
    this.request();
  }
  setEvent(ev: number, doFollow = true): void {
    const m = this.m;
    if (!m) return;
    this.cursorEv = Math.max(-1, Math.min(m.events.length - 1, ev));
    this.cursorT = this.cursorEv >= 0 ? m.evT[this.cursorEv]! : 0;
    if (doFollow) this.follow();
    this.request();
  }
  setTime(t: number): void {
    this.setTimeInternal(t);
    this.request();
  }
  step(d: number): void {
    const m = this.m;
    this.setPlaying(false);
    if (m?.trace) this.goStep(this.stepOfCursor() + d);
    else if (m && this.barOnly) {
      // The |d|-th barrier event after (or before) the cursor; before the first one: −1.
      const barEvs = this.barEvs;
      const n = barEvs.length;
      let j = d > 0 ? firstGE(barEvs, this.cursorEv + 1) + d - 1 : lastLE(barEvs, this.cursorEv - 1) + d + 1;
      j = Math.max(-1, Math.min(n - 1, j));
      this.setEvent(j < 0 ? -1 : barEvs[j]!, true);
    } else this.setEvent(this.cursorEv + d, true);
  }
  togglePlay(): void {
    const m = this.m;
    if (!m) return;
    if (!this.playing && this.cursorT >= m.end) this.setEvent(-1, true);
    this.setPlaying(!this.playing);
  }
  zoom(f: number, atX?: number): void {
    if (!this.m) return;
    const cx = atX ?? this.xOf(this.cursorT);
    const pivot = cx >= LABEL_W && cx <= this.W ? this.tOf(cx) : (this.v0 + this.v1) / 2;
    const span = (this.v1 - this.v0) / f;
    this.v0 = pivot - (pivot - this.v0) / f;
    this.v1 = this.v0 + span;
    this.clampView();
    this.request();
  }
  fit(): void {
    const m = this.m;
    if (!m) return;
    this.v0 = 0;
    this.v1 = m.end * 1.02;
    this.request();
  }
  renderNow(): number {
    const t = performance.now();
    if (this.raf) {
      cancelAnimationFrame(this.raf);
      this.raf = 0;
    }
    this.draw();
    this.updateReadout();
    this.onCursor?.(this.cursorEv, this.cursorT);
    return performance.now() - t;
  }
  focus(): void {
    this.canvas.focus({ preventScroll: true });
  }
  key(e: KeyboardEvent): boolean {
    return timelineKey(this, e);
  }
}
