/// <reference lib="dom" />
/**
 * One frame of the timeline: the rows that are vertically visible (painted by timeline-paint.ts),
 * their labels, the lane names, the ruler (cycles, or trace steps for a replayed counterexample)
 * and the cursor. Every text is drawn at `FONT_PX` (12) px or more (timeline-paint.ts).
 */
import type { BarrierLane, RunModel } from '../model.js';
import { fmt } from '../dom.js';
import { stripH, type Row } from './timeline-hover.js';
import { drawBar, drawCounts, drawSpans, FONT, LABEL_W, niceStep, RULER_H, type Label, type LabelFitter, type Paint, type RectBuf } from './timeline-paint.js';

/** What a frame shows: the run and its rows, the window [v0, v1] of W × H CSS pixels scrolled down by vy, the cursor's time. */
export interface Frame {
  m: RunModel | null;
  rows: Row[];
  v0: number;
  v1: number;
  W: number;
  H: number;
  dpr: number;
  vy: number;
  cursorT: number;
  bufs: RectBuf[];
  fitter: LabelFitter;
  txMax: WeakMap<BarrierLane, number>;
}

/** Draws frame `f` on `c`; returns the number of rectangles filled (for the benchmark). */
export function drawFrame(c: CanvasRenderingContext2D, f: Frame): number {
  const { m, rows, v0, v1, W, H, dpr, vy, cursorT, bufs, fitter, txMax } = f;
  c.setTransform(dpr, 0, 0, dpr, 0, 0);
  c.fillStyle = '#ffffff';
  c.fillRect(0, 0, W, H);
  if (!m) {
    c.fillStyle = '#666';
    c.font = '14px system-ui, sans-serif';
    c.fillText('no run', 12, 40);
    return 0;
  }
  const pw = Math.max(10, W - LABEL_W);
  const scale = pw / (v1 - v0);
  const xOf = (t: number) => LABEL_W + (t - v0) * scale;
  const texts: Label[] = [];
  const p: Paint = { m, v0, v1, W, scale, bufs, texts, txMax };
  c.font = FONT;
  c.textBaseline = 'middle';
  // Rows (only those vertically visible). Shapes are collected into one path per colour and
  // filled once; sub-pixel spans are merged, so the work per frame is bounded by the pixels.
  for (const b of bufs) b.n = 0;
  c.fillStyle = '#f7f8fa';
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r]!;
    const y = row.y - vy;
    if (y + row.h < RULER_H || y > H) continue;
    if (r % 2 === 0) c.fillRect(LABEL_W, y, pw, row.h);
    if (row.group) {
      const g = row.group, sh = stripH(g.lanes.length);
      for (let i = 0; i < g.lanes.length; i++) drawSpans(p, g.lanes[i]!, y + 2 + i * sh, sh - 1, true);
    } else if (row.span) drawSpans(p, row.span, y, row.h);
    else if (row.bar) drawBar(p, row.bar, y, row.h);
    else if (row.counts) drawCounts(p, row.counts, y, row.h);
  }
  for (const b of bufs) b.flush(c);
  const rectCount = bufs.reduce((a, b) => a + b.drawn, 0);
  // Labels: whole when they fit, else a shorter form or elided with "…", else none (never cut).
  for (const t of texts) {
    const x0 = Math.max(LABEL_W, t.x0), x1 = Math.min(W, t.x1);
    const text = fitter.fit(c, t.alts, x1 - x0 - 6);
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
      c.fillText(fitter.fit(c, [`${row.counts.label} pending arrivals`, `${row.counts.label} pending`, 'pending'], LABEL_W - 16) ?? '', 12, y + 3 + half / 2 + 1);
      c.fillText(fitter.fit(c, [`${row.counts.label} tx-count`, 'tx-count'], LABEL_W - 16) ?? '', 12, y + 5 + half + half / 2 + 1);
    } else {
      c.fillStyle = row.bar ? '#6b4e16' : row.span?.group === 'unit' ? '#7a3f00' : '#1d3557';
      const x = row.indent ? 20 : 6;
      c.fillText(fitter.fit(c, [row.label], LABEL_W - x - 6) ?? '', x, y + row.h / 2);
      if (row.indent) {
        // The tree line from the role row down to its warps.
        c.fillStyle = '#b8c0cc';
        c.fillRect(10, y, 1, row.h);
        c.fillRect(10, y + row.h / 2, 6, 1);
      }
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
      const text = fmt(t), w = fitter.measure(c, text);
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
  return rectCount;
}
