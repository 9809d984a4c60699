/// <reference lib="dom" />
/**
 * Painting the timeline's rows on a 2-D canvas: span lanes (agents and units), barrier phase lanes
 * and barrier count rows (pending arrivals and tx-count). Each painter walks only the visible
 * window (binary search for the first visible entry), merges what is thinner than a pixel into the
 * rectangle before it and queues rectangles per colour ({@link RectBuf}) and labels ({@link Label})
 * for the caller to flush: the work per frame is bounded by the pixels, not the events.
 */
import type { BarrierLane, RunModel, SpanLane } from '../model.js';
import { firstGE, lastLE } from '../model.js';

/** Width of the lane labels, in CSS pixels. */
export const LABEL_W = 176;
/** Height of the ruler. */
export const RULER_H = 28;
/** Height of an agent lane and of a barrier phase lane. */
export const ROW_H = 24;
/** Height of one sub-row of a unit lane (overlapping asynchronous operations). */
export const SUB_H = 14;
/** Height of a barrier's count row (pending arrivals above, tx-count below): two 12-px labels and their bars. */
export const COUNT_H = 52;
/** Smallest font of any canvas label, in CSS pixels. */
export const FONT_PX = 12;
export const FONT = `${FONT_PX}px system-ui, sans-serif`;

export const KIND_COLOR = ['#3b6fd8', '#c9ced8', '#e08a1e', '#8a55c9', '#1f9e8f', '#3aa655', '#c0392b'];
export const PARITY_COLOR = ['#dfe7f5', '#f6dfb8'];
/** Span kind index of a wait that never ends (model.ts SPAN_KINDS). */
export const K_BLOCKED = 6;
const PENDING_COLOR = '#8fb0ec', TX_COLOR = '#efb266', BASE_COLOR = '#d5dae2';
/** Indexes into the rectangle buffers of {@link newBufs}. */
const KB = 0, PB = KIND_COLOR.length, INVALID = PB + 2, TICK = PB + 3, PEND = PB + 4, TXB = PB + 5, BASE = PB + 6;

/** A label to draw inside [x0, x1]: the first of `alts` that fits, else the last elided with "…", else nothing. */
export interface Label {
  x0: number;
  x1: number;
  y0: number;
  h: number;
  y: number;
  alts: string[];
  color: string;
}

/** What a painter needs: the run, the visible time window [v0, v1], the canvas width and the queues. */
export interface Paint {
  m: RunModel;
  v0: number;
  v1: number;
  /** Canvas width in CSS pixels. */
  W: number;
  /** Pixels per time unit. */
  scale: number;
  bufs: RectBuf[];
  texts: Label[];
  /** Largest |tx-count| of each barrier lane (the scale of its count row), filled lazily. */
  txMax: WeakMap<BarrierLane, number>;
}

/** One rectangle buffer per colour the painters use. */
export function newBufs(): RectBuf[] {
  return [...KIND_COLOR, ...PARITY_COLOR, '#eeeeee', '#2a9d4b', PENDING_COLOR, TX_COLOR, BASE_COLOR].map((color) => new RectBuf(color));
}

/**
 * Draws lane `l` in the rectangle at `y` of height `hh`. `compact`: a warp's strip in its role row:
 * every span fills the strip's height, without labels.
 */
export function drawSpans(p: Paint, l: SpanLane, y: number, hh: number, compact = false): void {
  const { scale, v0, v1, W, bufs, texts } = p;
  const n = l.n;
  if (n === 0) return;
  const lastX = [-1e9, -1e9, -1e9, -1e9];
  const pk = [-1, -1, -1, -1], px0 = [0, 0, 0, 0], px1 = [0, 0, 0, 0];
  const unit = l.group === 'unit';
  let labels = 0;
  const flushSpan = (sub: number) => {
    const k = pk[sub]!;
    if (k < 0) return;
    const buf = bufs[KB + k]!, xa = px0[sub]!;
    const w0 = px1[sub]! - xa, w = w0 > 4 ? w0 - 1 : w0; // a 1-px gap between visible spans
    if (compact) buf.rect(xa, y, w, hh);
    else if (unit) buf.rect(xa, y + 3 + sub * SUB_H, w, SUB_H - 2);
    else if (k === 1) buf.rect(xa, y + hh / 2 - 2, w, 4);
    else if (k === K_BLOCKED) buf.rect(xa, y + hh / 2 - 1, w, 6);
    else buf.rect(xa, y + 4, w, hh - 8);
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
    if (!compact && xb - xa > 24 && labels < 100) {
      labels++;
      const sp = p.m.spans[l.src[i]!]!;
      const thin = k === 1 || k === K_BLOCKED;
      const ty = unit ? y + 3 + sub * SUB_H + (SUB_H - 2) / 2 : thin ? y + hh / 2 - 6 : y + hh / 2;
      texts.push({ x0: xa, x1: xb, y0: y, h: hh, y: ty, alts: [sp.label], color: k === K_BLOCKED ? '#a32016' : k === 1 ? '#555' : '#fff' });
    }
  }
  for (let sub = 0; sub < 4; sub++) flushSpan(sub);
}

export function drawBar(p: Paint, b: BarrierLane, y: number, hh: number): void {
  const { scale, v0, v1, W, bufs, texts } = p;
  const n = b.n;
  let i = Math.max(0, lastLE(b.t, v0, n));
  let lastX = -1e9, lastTick = -1e9, labels = 0;
  let pc = -1, p0 = 0, p1 = 0;
  for (; i < n; i++) {
    const t0 = b.t[i]!;
    if (t0 > v1) break;
    const t1 = i + 1 < n ? b.t[i + 1]! : p.m.end;
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
      const xe = Math.min(W, LABEL_W + ((k < n ? b.t[k]! : p.m.end) - v0) * scale);
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
export function drawCounts(p: Paint, b: BarrierLane, y: number, hh: number): void {
  const { scale, v0, v1, W, bufs, texts, txMax } = p;
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
    const t1 = i + 1 < n ? b.t[i + 1]! : p.m.end;
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


/** A growable list of rectangles of one colour. */
export class RectBuf {
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

/** A round tick interval near `raw` (1, 2 or 5 times a power of ten). */
export function niceStep(raw: number): number {
  const p = Math.pow(10, Math.floor(Math.log10(Math.max(raw, 1e-9))));
  const f = raw / p;
  return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * p;
}

/** Measures texts once per string (one font) and picks the form of a label that fits. */
export class LabelFitter {
  private widths = new Map<string, number>();
  measure(c: CanvasRenderingContext2D, t: string): number {
    let w = this.widths.get(t);
    if (w === undefined) {
      w = c.measureText(t).width;
      if (this.widths.size > 20_000) this.widths.clear();
      this.widths.set(t, w);
    }
    return w;
  }
  /** The text of `alts` that fits in `room` pixels (the last one elided with "…" if need be), or null. */
  fit(c: CanvasRenderingContext2D, alts: readonly string[], room: number): string | null {
    for (const a of alts) if (this.measure(c, a) <= room) return a;
    const last = alts[alts.length - 1]!;
    let lo = 1, hi = last.length - 1, best = '';
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const t = `${last.slice(0, mid).trimEnd()}…`;
      if (this.measure(c, t) <= room) {
        best = t;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    // Four characters and the ellipsis at least (or the whole of a short last form), or nothing.
    return best.length >= Math.min(5, last.length) ? best : null;
  }
}
