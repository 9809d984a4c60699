/// <reference lib="dom" />
/**
 * Timeline (the seed's third figure, for any kernel): canvas lanes for every agent, each CTA's TMA
 * engine, tensor core and cluster network, and every barrier's state over time, from the timed
 * simulation. A cursor (an event index and its time) is moved by stepping (arrow keys), scrubbing
 * (drag on the ruler), clicking, or playing; zoom with the wheel or +/−, pan by dragging or
 * shift-wheel. Drawing touches only the visible window: each lane is searched by binary search
 * over its sorted spans and sub-pixel spans are merged, so 100,000 events stay fast.
 */
import type { RunModel, SpanLane, BarrierLane } from '../model.js';
import { agentEventsAt, barStateAt, eventBar, firstGE, lastLE, spanAt } from '../model.js';
import { fmt, h, replace, setText } from '../dom.js';

const LABEL_W = 168;
const RULER_H = 26;
const ROW_H = 22;
const SUB_H = 12;

const KIND_COLOR = ['#3b6fd8', '#c9ced8', '#e08a1e', '#8a55c9', '#1f9e8f', '#3aa655', '#c0392b'];
const PARITY_COLOR = ['#dfe7f5', '#f6dfb8'];
/** Span kind index of a wait that never ends (model.ts SPAN_KINDS). */
const K_BLOCKED = 6;
/** Height of a barrier's count row (pending arrivals above, tx-count below). */
const COUNT_H = 30;
const PENDING_COLOR = '#8fb0ec', TX_COLOR = '#efb266', BASE_COLOR = '#d5dae2';

interface Row {
  y: number;
  h: number;
  span?: SpanLane;
  bar?: BarrierLane;
  /** A barrier's pending arrival count and tx-count over time. */
  counts?: BarrierLane;
  label: string;
}

/** A label to draw inside [x0, x1]: the first of `alts` that fits, else the last elided with "…", else nothing. */
interface Label {
  x0: number;
  x1: number;
  y0: number;
  h: number;
  y: number;
  alts: string[];
  color: string;
}

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
  /** Rectangles filled by the last draw (for the benchmark). */
  readonly rects: number;
  /** Whether each barrier has a row for its pending arrival count and tx-count (null: automatic). */
  showCounts(on: boolean | null): void;
  /** Draws now (synchronously); returns the milliseconds it took. */
  renderNow(): number;
  onCursor?: (ev: number, t: number) => void;
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
  const bufs = [...KIND_COLOR, ...PARITY_COLOR, '#eeeeee', '#2a9d4b', PENDING_COLOR, TX_COLOR, BASE_COLOR].map((color) => new RectBuf(color));
  const KB = 0, PB = KIND_COLOR.length, INVALID = PB + 2, TICK = PB + 3, PEND = PB + 4, TXB = PB + 5, BASE = PB + 6;
  let rectCount = 0;
  let texts: Label[] = [];
  let countsPref: boolean | null = null;
  /** Largest |tx-count| of each barrier lane (the scale of its count row). */
  const txMax = new WeakMap<BarrierLane, number>();
  const countsOn = () => (countsPref ?? (!!m && m.barLanes.length <= 6));
  // Text widths, measured once per string and font.
  const widths = new Map<string, number>();
  const measure = (c: CanvasRenderingContext2D, t: string) => {
    let w = widths.get(t);
    if (w === undefined) {
      w = c.measureText(t).width;
      if (widths.size > 20_000) widths.clear();
      widths.set(t, w);
    }
    return w;
  };
  /** The text of `alts` that fits in `room` pixels (the last one elided with "…" if need be), or null. */
  const fit = (c: CanvasRenderingContext2D, alts: readonly string[], room: number): string | null => {
    for (const a of alts) if (measure(c, a) <= room) return a;
    const last = alts[alts.length - 1]!;
    let lo = 1, hi = last.length - 1, best = '';
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const t = `${last.slice(0, mid).trimEnd()}…`;
      if (measure(c, t) <= room) {
        best = t;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    // Four characters and the ellipsis at least (or the whole of a short last form), or nothing.
    return best.length >= Math.min(5, last.length) ? best : null;
  };

  const canvas = h('canvas', { class: 'tl-canvas', tabindex: '0', role: 'application', 'aria-label': 'timeline: arrow keys step through events, shift+arrow 10 events, +/- zoom, space play/pause, Home/End', 'aria-describedby': 'tl-readout' });
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
    scrub, readout, h('label', { class: 'tl-counts', title: 'a row under each barrier: its pending arrival count and tx-count over time' }, countsBox, ' pending & tx rows'));
  const el = h('div', { class: 'timeline' }, toolbar, wrap);

  const plotW = () => Math.max(10, W - LABEL_W);
  const xOf = (t: number) => LABEL_W + ((t - v0) / (v1 - v0)) * plotW();
  const tOf = (x: number) => v0 + ((x - LABEL_W) / plotW()) * (v1 - v0);

  const layout = () => {
    rows = [];
    let y = RULER_H;
    if (m) {
      for (const l of m.spanLanes) {
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
    c.setTransform(dpr, 0, 0, dpr, 0, 0);
    c.fillStyle = '#ffffff';
    c.fillRect(0, 0, W, H);
    if (!m) {
      c.fillStyle = '#666';
      c.font = '13px system-ui, sans-serif';
      c.fillText('no run', 12, 40);
      return;
    }
    const vy = scroller.scrollTop;
    const pw = plotW();
    const scale = pw / (v1 - v0);
    c.font = '11px system-ui, sans-serif';
    c.textBaseline = 'middle';
    // Rows (only those vertically visible). Shapes are collected into one path per colour and
    // filled once; sub-pixel spans are merged, so the work per frame is bounded by the pixels.
    for (const b of bufs) b.n = 0;
    texts = [];
    c.fillStyle = '#f7f8fa';
    for (let r = 0; r < rows.length; r++) {
      const row = rows[r]!;
      const y = row.y - vy;
      if (y + row.h < RULER_H || y > H) continue;
      if (r % 2 === 0) c.fillRect(LABEL_W, y, pw, row.h);
      if (row.span) drawSpans(row.span, y, row.h, scale);
      else if (row.bar) drawBar(row.bar, y, row.h, scale);
      else if (row.counts) drawCounts(row.counts, y, row.h, scale);
    }
    for (const b of bufs) b.flush(c);
    rectCount = bufs.reduce((a, b) => a + b.drawn, 0);
    // Labels: whole when they fit, else a shorter form or elided with "…", else none (never cut).
    for (const t of texts) {
      const x0 = Math.max(LABEL_W, t.x0), x1 = Math.min(W, t.x1);
      const text = fit(c, t.alts, x1 - x0 - 6);
      if (text === null) continue;
      c.fillStyle = t.color;
      c.fillText(text, x0 + 3, t.y);
    }
    for (let r = 0; r < rows.length; r++) {
      const row = rows[r]!;
      const y = row.y - vy;
      if (y + row.h < RULER_H || y > H) continue;
      c.fillStyle = '#ffffff';
      c.fillRect(0, y, LABEL_W - 1, row.h);
      if (row.counts) {
        const half = (row.h - 8) / 2;
        c.fillStyle = '#52627a';
        c.fillText(fit(c, [`${row.counts.label} pending arrivals`, `${row.counts.label} pending`, 'pending'], LABEL_W - 16) ?? '', 12, y + 3 + half / 2 + 1);
        c.fillText(fit(c, [`${row.counts.label} tx-count`, 'tx-count'], LABEL_W - 16) ?? '', 12, y + 5 + half + half / 2 + 1);
      } else {
        c.fillStyle = row.bar ? '#6b4e16' : row.span?.group === 'unit' ? '#7a3f00' : '#1d3557';
        c.fillText(fit(c, [row.label], LABEL_W - 12) ?? '', 6, y + row.h / 2);
      }
      c.fillStyle = row.bar ? '#eef0f3' : '#e3e6eb';
      c.fillRect(0, y + row.h - 1, W, 1);
    }
    // Ruler.
    c.fillStyle = '#eef1f5';
    c.fillRect(0, 0, W, RULER_H);
    c.fillStyle = '#333';
    c.textBaseline = 'middle';
    if (m.trace) {
      // Step n occupies [n − 1, n]: ticks at the boundaries, the number in the middle.
      const every = Math.max(1, niceStep((v1 - v0) / Math.max(2, pw / 40)));
      for (let n = Math.max(1, Math.ceil(v0 / every) * every); n - 1 <= v1 && n <= m.trace.steps + 1; n += every) {
        c.fillRect(xOf(n - 1), RULER_H - 7, 1, 7);
        if (n <= m.trace.steps) c.fillText(String(n), xOf(n - 0.5) - 3, 14);
      }
    } else {
      const step = niceStep((v1 - v0) / Math.max(2, pw / 110));
      const first = Math.ceil(v0 / step) * step;
      let lastEnd = LABEL_W;
      for (let t = first; t <= v1; t += step) {
        const x = xOf(t);
        if (x < LABEL_W) continue;
        c.fillRect(x, RULER_H - 7, 1, 7);
        // A label right of its tick, or left of it at the right edge; never clipped, never overlapping.
        const text = fmt(t), w = measure(c, text);
        let lx = x + 3;
        if (lx + w > W - 2) lx = x - 3 - w;
        if (lx < lastEnd + 6 || lx + w > W - 2) continue;
        c.fillText(text, lx, 10);
        lastEnd = lx + w;
      }
    }
    c.fillText(m.trace ? 'trace steps' : 'cycles', 6, 10);
    c.fillStyle = '#c5cad3';
    c.fillRect(0, RULER_H - 1, W, 1);
    c.fillRect(LABEL_W - 1, 0, 1, H);
    // Cursor.
    const cx = xOf(cursorT);
    if (cx >= LABEL_W && cx <= W) {
      c.fillStyle = '#d62828';
      c.fillRect(Math.round(cx) - 1, 0, 2, H);
      c.beginPath();
      c.moveTo(cx - 6, 0);
      c.lineTo(cx + 6, 0);
      c.lineTo(cx, 9);
      c.fill();
    }
  }

  function drawSpans(l: SpanLane, y: number, hh: number, scale: number): void {
    const n = l.n;
    if (n === 0) return;
    const lastX = [-1e9, -1e9, -1e9, -1e9];
    const pk = [-1, -1, -1, -1], px0 = [0, 0, 0, 0], px1 = [0, 0, 0, 0];
    const unit = l.group === 'unit';
    let labels = 0;
    const flushSpan = (sub: number) => {
      const k = pk[sub]!;
      if (k < 0) return;
      const p = bufs[KB + k]!, xa = px0[sub]!;
      const w0 = px1[sub]! - xa, w = w0 > 4 ? w0 - 1 : w0; // a 1-px gap between visible spans
      if (unit) p.rect(xa, y + 3 + sub * SUB_H, w, SUB_H - 2);
      else if (k === 1) p.rect(xa, y + hh / 2 - 2, w, 4);
      else if (k === K_BLOCKED) p.rect(xa, y + hh / 2 - 1, w, 6);
      else p.rect(xa, y + 4, w, hh - 8);
      pk[sub] = -1;
    };
    for (let i = firstGE(l.maxEnd, v0, n); i < n; i++) {
      const t0 = l.t0[i]!;
      if (t0 > v1) break;
      let xa = LABEL_W + (t0 - v0) * scale;
      let xb = LABEL_W + (l.t1[i]! - v0) * scale;
      if (xb < LABEL_W) continue;
      if (xa < LABEL_W) xa = LABEL_W;
      if (xb > W) xb = W;
      const sub = l.sub[i]!;
      if (xb <= lastX[sub]!) continue; // entirely inside what this sub-row already covers
      if (xa < lastX[sub]!) xa = lastX[sub]!;
      const k = l.kind[i]!;
      // Extend the pending rectangle when this span touches it and is the same kind or too thin
      // to see (dense regions become one rectangle instead of one per pixel).
      if (pk[sub]! >= 0 && xa <= px1[sub]! + 0.5 && (xb - xa < 1.5 || (k === pk[sub] && px1[sub]! - px0[sub]! < 1.5))) {
        px1[sub] = Math.max(px1[sub]!, xb, px0[sub]! + 1);
        lastX[sub] = px1[sub]!;
      } else {
        flushSpan(sub);
        pk[sub] = k;
        px0[sub] = xa;
        px1[sub] = Math.max(xb, xa + 1);
        lastX[sub] = px1[sub]!;
      }
      if (xb - xa > 24 && labels < 100) {
        labels++;
        const sp = m!.spans[l.src[i]!]!;
        const thin = k === 1 || k === K_BLOCKED;
        const ty = unit ? y + 3 + sub * SUB_H + (SUB_H - 2) / 2 : thin ? y + hh / 2 - 6 : y + hh / 2;
        texts.push({ x0: xa, x1: xb, y0: y, h: hh, y: ty, alts: [sp.label], color: k === K_BLOCKED ? '#a32016' : k === 1 ? '#555' : '#fff' });
      }
    }
    for (let sub = 0; sub < 4; sub++) flushSpan(sub);
  }

  function drawBar(b: BarrierLane, y: number, hh: number, scale: number): void {
    const n = b.n;
    let i = Math.max(0, lastLE(b.t, v0, n));
    let lastX = -1e9, lastTick = -1e9, labels = 0;
    let pc = -1, p0 = 0, p1 = 0;
    for (; i < n; i++) {
      const t0 = b.t[i]!;
      if (t0 > v1) break;
      const t1 = i + 1 < n ? b.t[i + 1]! : m!.end;
      let xa = LABEL_W + (t0 - v0) * scale;
      let xb = LABEL_W + (t1 - v0) * scale;
      if (xa < LABEL_W) xa = LABEL_W;
      if (xb > W) xb = W;
      const startsPhase = i === 0 || b.phase[i] !== b.phase[i - 1] || b.valid[i] !== b.valid[i - 1];
      if (startsPhase && i > 0 && b.phase[i]! > b.phase[i - 1]! && xa - lastTick >= 3) {
        bufs[TICK]!.rect(xa, y + 1, 2, hh - 2);
        lastTick = xa;
      }
      if (startsPhase || xa === LABEL_W) {
        // One label per phase run, where the run is wide enough.
        let k = i + 1;
        while (k < n && b.phase[k] === b.phase[i] && b.valid[k] === b.valid[i] && b.t[k]! <= v1) k++;
        const xe = Math.min(W, LABEL_W + ((k < n ? b.t[k]! : m!.end) - v0) * scale);
        if (xe - xa >= 14 && labels < 100) {
          labels++;
          const ph = b.phase[i]!;
          texts.push({ x0: xa + 2, x1: xe, y0: y, h: hh, y: y + hh / 2, alts: b.valid[i] ? [`phase ${ph} · parity ${ph & 1}`, `ph ${ph} · p${ph & 1}`, `p${ph & 1}`] : ['not initialized', 'uninit.'], color: '#333' });
        }
      }
      if (xb <= lastX) continue;
      if (xa < lastX) xa = lastX;
      const col = b.valid[i] ? PB + (b.phase[i]! & 1) : INVALID;
      if (pc >= 0 && xa <= p1 + 0.5 && (col === pc || xb - xa < 1.5)) p1 = Math.max(p1, xb, p0 + 1);
      else {
        if (pc >= 0) bufs[pc]!.rect(p0, y + 3, p1 - p0, hh - 6);
        pc = col;
        p0 = xa;
        p1 = Math.max(xb, xa + 1);
      }
      lastX = p1;
    }
    if (pc >= 0) bufs[pc]!.rect(p0, y + 3, p1 - p0, hh - 6);
  }

  /**
   * A barrier's count row: its pending arrival count (upper half, as a share of the expected count)
   * and its tx-count (lower half, as a share of the largest it reaches) over time, labelled where
   * there is room. Both reach zero exactly where the barrier lane shows a phase completing.
   */
  function drawCounts(b: BarrierLane, y: number, hh: number, scale: number): void {
    const n = b.n;
    let mx = txMax.get(b);
    if (mx === undefined) {
      mx = 1;
      for (let j = 0; j < n; j++) mx = Math.max(mx, Math.abs(b.tx[j]!));
      txMax.set(b, mx);
    }
    const half = (hh - 8) / 2;
    const yP = y + 3, yT = y + 5 + half;
    bufs[BASE]!.rect(LABEL_W, yP + half - 1, W - LABEL_W, 1);
    bufs[BASE]!.rect(LABEL_W, yT + half - 1, W - LABEL_W, 1);
    let lastX = -1e9, labels = 0;
    for (let i = Math.max(0, lastLE(b.t, v0, n)); i < n; i++) {
      const t0 = b.t[i]!;
      if (t0 > v1) break;
      const t1 = i + 1 < n ? b.t[i + 1]! : m!.end;
      let xa = LABEL_W + (t0 - v0) * scale;
      let xb = LABEL_W + (t1 - v0) * scale;
      if (xb < LABEL_W) continue;
      if (xa < LABEL_W) xa = LABEL_W;
      if (xb > W) xb = W;
      // At most one state per pixel column: the first one that starts there.
      if (xb - xa < 1) {
        if (xa < lastX) continue;
        xb = xa + 1;
      }
      if (xa < lastX) xa = lastX;
      lastX = xb;
      if (!b.valid[i]) continue;
      const pend = b.pending[i]!, exp = Math.max(1, b.expected[i]!), tx = b.tx[i]!;
      const w = xb - xa > 3 ? xb - xa - 1 : xb - xa;
      if (pend > 0) {
        const ph = Math.max(2, half * Math.min(1, pend / exp));
        bufs[PEND]!.rect(xa, yP + half - ph, w, ph);
      }
      if (tx !== 0) {
        const th = Math.max(2, half * Math.min(1, Math.abs(tx) / mx));
        bufs[TXB]!.rect(xa, yT + half - th, w, th);
      }
      if (xb - xa >= 14 && labels < 200) {
        labels += 2;
        texts.push({ x0: xa, x1: xb, y0: yP, h: half, y: yP + half / 2 + 1, alts: [`pending ${pend} of ${b.expected[i]}`, `pending ${pend}`, String(pend)], color: '#1d3557' });
        texts.push({ x0: xa, x1: xb, y0: yT, h: half, y: yT + half / 2 + 1, alts: tx < 0 ? [`tx ${tx} B (credited early)`, `tx ${tx} B`, String(tx)] : [`tx-count ${tx} B`, `tx ${tx} B`, String(tx)], color: '#5a3500' });
      }
    }
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
    else setText(readout, `t = ${fmt(cursorT)} cycles · event ${fmt(cursorEv + 1)} of ${fmt(m.events.length)}`);
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
    setModel(model, sl) {
      m = model;
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
      else view.setEvent(cursorEv + d, true);
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
    if (x < LABEL_W) return;
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
  canvas.addEventListener('wheel', (e) => {
    if (!m) return;
    if (e.shiftKey && !e.ctrlKey) return; // native vertical scroll of the lanes
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
    if (!m || x < LABEL_W) {
      tip.hidden = true;
      return;
    }
    const vy = scroller.scrollTop;
    const row = rows.find((r) => y + vy >= r.y && y + vy < r.y + r.h && y >= RULER_H);
    if (!row) {
      tip.hidden = true;
      return;
    }
    const t = tOf(x);
    const slack = (4 / plotW()) * (v1 - v0);
    const lines: { text: string; cls?: string }[] = [];
    const barRow = row.bar ?? row.counts;
    if (barRow) {
      const ev = lastLE(m.evT, t);
      const st = barStateAt(barRow, ev);
      lines.push({ text: `${barRow.label} at ${fmt(t)} ${m.trace ? 'steps' : 'cycles'}`, cls: 'tip-head' });
      lines.push({ text: st.valid ? `phase ${st.phase} (parity ${st.phase & 1}) · pending ${st.pending} of ${st.expected} · tx-count ${st.tx} B` : 'not initialized' });
      if (st.valid) lines.push({ text: st.pending === 0 && st.tx !== 0 ? 'all arrivals in; waiting for bytes' : st.pending > 0 ? `waiting for ${st.pending} arrival(s)${st.tx ? ` and ${st.tx} B` : ''}` : '' });
    } else if (row.span) {
      const l = row.span;
      let sub = -1;
      if (l.group === 'unit') sub = Math.max(0, Math.min(l.subRows - 1, Math.floor((y + vy - row.y - 3) / SUB_H)));
      const i = spanAt(l, t, slack, sub);
      if (i < 0) {
        tip.hidden = true;
        return;
      }
      const sp = m.spans[l.src[i]!]!;
      lines.push({ text: `${l.label}: ${sp.kind === 'stall' ? `stalled (${sp.label})` : sp.label}`, cls: 'tip-head' });
      lines.push({ text: `${fmt(sp.t0)} – ${fmt(sp.t1)} cycles (${fmt(sp.t1 - sp.t0)})` });
      const src = srcLine(sp.loc);
      if (sp.loc && sp.loc.line > 0) lines.push({ text: `line ${sp.loc.line}${src !== null ? `: ${src.trim()}` : ''}`, cls: 'tip-src' });
      // The barrier this operation touched, and its state after it.
      let bar = -1, evAt = -1;
      if (l.agent >= 0 && sp.kind === 'op') {
        for (const j of agentEventsAt(m, l.agent, sp.t0)) {
          const b = eventBar(m.events[j]!);
          if (b >= 0) {
            bar = b;
            evAt = j;
          }
        }
      } else if (sp.kind === 'blocked') {
        lines.push({ text: 'this wait never ends: the run hangs here', cls: 'tip-bar' });
      } else if (sp.kind === 'stall') {
        const nm = /^wait (.+)$/.exec(sp.label);
        if (nm) lines.push({ text: `blocked in a wait on ${nm[1]} until the phase completed` });
      } else if (sp.id !== undefined) {
        for (let j = firstGE(m.evT, sp.t0); j < m.events.length && m.evT[j]! <= sp.t1; j++) {
          const e = m.events[j]!;
          if ((e.e === 'complete_tx' || e.e === 'arrive') && e.async === sp.id) {
            bar = e.bar;
            evAt = j;
          }
        }
      }
      const bl = bar >= 0 ? m.barLaneByKey.get(bar) : undefined;
      if (bl) {
        const st = barStateAt(bl, evAt);
        lines.push({ text: `${bl.label} after it: phase ${st.phase} (parity ${st.phase & 1}), pending ${st.pending}/${st.expected}, tx ${st.tx} B`, cls: 'tip-bar' });
      }
    }
    replace(tip, ...lines.filter((l) => l.text).map((l) => h('div', { class: l.cls ?? '' }, l.text)));
    tip.hidden = false;
    const wr = wrap.getBoundingClientRect();
    const cr = canvas.getBoundingClientRect();
    const left = Math.min(cr.left - wr.left + x + 14, wr.width - 360);
    tip.style.left = `${Math.max(0, left)}px`;
    tip.style.top = `${cr.top - wr.top + y + 16}px`;
  }

  return view;
}

/** A growable list of rectangles of one colour. */
class RectBuf {
  a = new Float64Array(4 * 1024);
  n = 0;
  drawn = 0;
  constructor(readonly color: string) {}
  rect(x: number, y: number, w: number, h: number): void {
    if (4 * (this.n + 1) > this.a.length) {
      const b = new Float64Array(this.a.length * 2);
      b.set(this.a);
      this.a = b;
    }
    const o = 4 * this.n++;
    this.a[o] = x;
    this.a[o + 1] = y;
    this.a[o + 2] = w;
    this.a[o + 3] = h;
  }
  flush(c: CanvasRenderingContext2D): void {
    this.drawn = this.n;
    if (this.n === 0) return;
    c.fillStyle = this.color;
    const a = this.a;
    for (let i = 0, o = 0; i < this.n; i++, o += 4) c.fillRect(a[o]!, a[o + 1]!, a[o + 2]!, a[o + 3]!);
  }
}

function niceStep(raw: number): number {
  const p = Math.pow(10, Math.floor(Math.log10(Math.max(raw, 1e-9))));
  const f = raw / p;
  return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * p;
}
