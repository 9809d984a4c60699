/**
 * The timeline's hover text: for a barrier row, the barrier's state at the pointer's time; for a
 * span, what it is, when, its source line and the barrier it touched with that barrier's state
 * after it. Pure (no DOM): the view puts the lines in its tooltip.
 */
import type { BarrierLane, RunModel, SpanLane } from '../model.js';
import { agentEventsAt, barStateAt, eventBar, firstGE, lastLE, spanAt } from '../model.js';
import { fmt } from '../dom.js';
import { SUB_H } from './timeline-paint.js';

/**
 * The warps of one role instance in one CTA (each warp is an agent with a lane of its own): shown
 * as a role row, collapsed into one strip per warp or expanded into the warps' lanes.
 */
export interface WarpGroup {
  key: string;
  /** The role instance's name (its warps' names without `.wN`), e.g. `consumer@c0`. */
  name: string;
  lanes: SpanLane[];
  open: boolean;
}

/** Height of one warp's strip in a role row of `n` warps. */
export function stripH(n: number): number {
  return Math.max(3, Math.min(8, Math.floor((24 - 4) / n)));
}

/** A row of the timeline: a span lane, a role's row of warps, a barrier's phase lane or its count row. */
export interface Row {
  y: number;
  h: number;
  span?: SpanLane;
  /** A role row: its warps' strips (and, when open, the warps' lanes follow it). */
  group?: WarpGroup;
  /** A warp's lane under its role row (drawn indented). */
  indent?: boolean;
  bar?: BarrierLane;
  /** A barrier's pending arrival count and tx-count over time. */
  counts?: BarrierLane;
  label: string;
}

/** "warp 2 of 4 of role consumer (CTA 0)" for an agent that is one warp of a role of several, else null. */
function warpOf(m: RunModel, agent: number): string | null {
  if (agent < 0) return null;
  const ags = m.program.agents;
  const a = ags[agent];
  if (!a) return null;
  let n = 0;
  for (const o of ags) if (o.role === a.role && o.instance === a.instance && o.cta === a.cta) n++;
  if (n < 2) return null;
  return `warp ${a.warp} of ${n} of role ${a.roleName}${m.program.ctas > 1 ? ` (CTA ${m.program.grid > 1 ? a.cta : a.rank})` : ''}`;
}

/** One line of the tooltip; `cls` styles it (tip-head, tip-src, tip-bar). */
export interface TipLine {
  text: string;
  cls?: string;
}

/**
 * The tooltip's lines for time `t` on `row` (`yIn`: the pointer's height inside the row, to pick a
 * unit lane's sub-row; `slack`: how far from a span still counts as on it, in time units), or null
 * when there is nothing there.
 */
export function hoverLines(m: RunModel, row: Row, t: number, yIn: number, slack: number, srcLine: (loc: { line: number } | undefined) => string | null): TipLine[] | null {
  const lines: TipLine[] = [];
  const barRow = row.bar ?? row.counts;
  if (barRow) {
    const ev = lastLE(m.evT, t);
    const st = barStateAt(barRow, ev);
    lines.push({ text: `${barRow.label} at ${fmt(t)} ${m.trace ? 'steps' : 'cycles'}`, cls: 'tip-head' });
    lines.push({ text: st.valid ? `phase ${st.phase} (parity ${st.phase & 1}) · pending ${st.pending} of ${st.expected} · tx-count ${st.tx} B` : 'not initialized' });
    if (st.valid) lines.push({ text: st.pending === 0 && st.tx !== 0 ? 'all arrivals in; waiting for bytes' : st.pending > 0 ? `waiting for ${st.pending} arrival(s)${st.tx ? ` and ${st.tx} B` : ''}` : '' });
  } else if (row.group) {
    // The warp whose strip the pointer is on: its own lane's tooltip.
    const g = row.group;
    const i = Math.max(0, Math.min(g.lanes.length - 1, Math.floor((yIn - 2) / stripH(g.lanes.length))));
    const l = g.lanes[i]!;
    return hoverLines(m, { y: row.y, h: row.h, span: l, label: l.label }, t, 0, slack, srcLine);
  } else if (row.span) {
    const l = row.span;
    let sub = -1;
    if (l.group === 'unit') sub = Math.max(0, Math.min(l.subRows - 1, Math.floor((yIn - 3) / SUB_H)));
    const i = spanAt(l, t, slack, sub);
    if (i < 0) return null;
    const sp = m.spans[l.src[i]!]!;
    lines.push({ text: `${l.label}: ${sp.kind === 'stall' ? `stalled (${sp.label})` : sp.label}`, cls: 'tip-head' });
    const warp = warpOf(m, l.agent);
    if (warp) lines.push({ text: warp });
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
      const nm = /^wait(?:ing on)? (.+)$/.exec(sp.label);
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
  return lines.filter((l) => l.text);
}
