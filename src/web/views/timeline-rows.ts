/**
 * The timeline's rows: which lanes it shows, in which order and at which heights (agents, role rows
 * of several warps with their warps' lanes when open, asynchronous units, barriers and their count
 * rows), and the role rows of a run (a role instance whose warps are agents of their own).
 */
import type { RunModel, SpanLane } from '../model.js';
import { stripH, type Row, type WarpGroup } from './timeline-hover.js';
import { COUNT_H, ROW_H, RULER_H, SUB_H } from './timeline-paint.js';

/** One laid-out row as tests see it: label, kind, and for a role row whether its warps are shown; y and height in CSS pixels. */
export interface LaneInfo {
  label: string;
  kind: 'role' | 'warp' | 'agent' | 'unit' | 'barrier' | 'counts';
  open?: boolean;
  y: number;
  h: number;
}

/**
 * The rows of run `m` from the top of the content (below the ruler) and the content's height in CSS
 * pixels: span lanes (a lane of a role row in `groupOf` is drawn by its role row, followed by the
 * warps' lanes when the row is open), then each barrier and, when `counts`, its count row.
 */
export function layoutRows(m: RunModel | null, groupOf: Map<string, WarpGroup>, counts: boolean): { rows: Row[]; contentH: number } {
  const rows: Row[] = [];
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
    for (const b of m.barLanes) {
      rows.push({ y, h: ROW_H, bar: b, label: b.label });
      y += ROW_H;
      if (counts) {
        rows.push({ y, h: COUNT_H, counts: b, label: `${b.label} pending · tx` });
        y += COUNT_H;
      }
    }
  }
  return { rows, contentH: y + 4 };
}

/** The rows as {@link LaneInfo} records. */
export function laneInfo(rows: readonly Row[]): LaneInfo[] {
  return rows.map((r) => ({
    label: r.group ? r.group.name : r.label,
    kind: r.group ? 'role' as const : r.indent ? 'warp' as const : r.span ? (r.span.group === 'unit' ? 'unit' as const : 'agent' as const) : r.bar ? 'barrier' as const : 'counts' as const,
    ...(r.group ? { open: r.group.open } : {}),
    y: r.y,
    h: r.h,
  }));
}

/**
 * The role rows of run `m`: each role instance of a CTA whose warps are agents of their own (two or
 * more lanes). A role row starts expanded when its warps' lanes differ (their spans are not the
 * same), collapsed when the warps did the same thing at the same times.
 */
export function warpGroups(m: RunModel): Map<string, WarpGroup> {
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
