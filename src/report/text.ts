/**
 * Terminal renderings of a simulation: timeline lanes, the event log, the per-barrier ledger and
 * the summary. Plain strings; colors are applied by the caller's `paint` functions (identity when
 * output is not a terminal).
 */
import type { MachineEvent } from '../machine/events.js';
import type { Program } from '../machine/program.js';
import type { SimResult, Span } from '../sim/simulate.js';
import { actorNamer, eventsArg, type Ledger, type LedgerPhase } from './ledger.js';
import { argError, isRecord, programArg } from '../model/api-args.js';

/** Color hooks (identity by default). */
export interface Paint {
  bold(s: string): string;
  dim(s: string): string;
  red(s: string): string;
  green(s: string): string;
  yellow(s: string): string;
  cyan(s: string): string;
}

/** No colors. */
export const PLAIN: Paint = { bold: (s) => s, dim: (s) => s, red: (s) => s, green: (s) => s, yellow: (s) => s, cyan: (s) => s };

/**
 * `file:line` (file relative to the working directory) or `line N` for a source location, then the
 * source it was compiled from in parentheses when known (a PTX line's CUDA line: `k.ptx:147 (k.cu:37)`).
 */
export function locText(loc: { file?: string; line: number; origin?: string } | undefined): string {
  if (!loc) return '';
  const from = loc.origin ? ` (${loc.origin})` : '';
  if (!loc.file) return `line ${loc.line}${from}`;
  let f = loc.file;
  const cwd = typeof process !== 'undefined' ? `${process.cwd()}/` : '';
  if (cwd && f.startsWith(cwd)) f = f.slice(cwd.length);
  return `${f}:${loc.line}${from}`;
}

/** A SimResult (from simulate), else a TypeError naming `fn`. */
function simResultArg(fn: string, r: unknown): void {
  if (!isRecord(r) || !isRecord(r.program) || !Array.isArray(r.program.agents) || !isRecord(r.stats) || !isRecord(r.timing) || typeof r.cycles !== 'number') argError(fn, 'result', 'a SimResult (from simulate)', r);
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

function pad(s: string, n: number): string {
  return s.length >= n ? s.slice(0, n) : s + ' '.repeat(n - s.length);
}

/** The widest timeline {@link renderTimeline} draws (columns). */
export const TIMELINE_WIDTH_MAX = 1000;

/**
 * Timeline lanes: one row per agent (█ issuing, · stalled), per TMA engine and tensor core
 * (number of operations in flight, ▓ for one), and per barrier (its phase parity over time).
 * `width` is a whole number of columns from 20 to 1,000 (`TIMELINE_WIDTH_MAX`) (else a RangeError).
 */
export function renderTimeline(r: SimResult, width = 96, paint: Paint = PLAIN, stop?: () => boolean): string {
  simResultArg('renderTimeline', r);
  if (!Number.isInteger(width) || width < 20 || width > TIMELINE_WIDTH_MAX) throw new RangeError(`renderTimeline: width must be a whole number of columns from 20 to ${TIMELINE_WIDTH_MAX}, got ${String(width).slice(0, 40)}`);
  const p = r.program;
  const spans = r.spans ?? [];
  const end = Math.max(1, r.cycles);
  const col = (t: number) => Math.min(width - 1, Math.floor((t / end) * width));
  const laneNames = new Map<string, string>();
  for (const a of p.agents) laneNames.set(String(a.id), a.name);
  const lanes = new Map<string, Span[]>();
  // A long run has millions of spans and events: `stop` is asked once per 4096 of them, in every pass.
  let seen = 0;
  const due = () => (++seen & 4095) === 0 && !!stop?.();
  for (let i = 0; i < spans.length; i++) {
    if (due()) return paint.dim(`… (the timeline was cut: ${(spans.length - i).toLocaleString('en-US')} of ${spans.length.toLocaleString('en-US')} spans not drawn)`);
    const sp = spans[i]!;
    let l = lanes.get(sp.lane);
    if (!l) lanes.set(sp.lane, (l = []));
    l.push(sp);
  }
  const nameW = Math.max(12, ...[...laneNames.values()].map((n) => n.length), ...[...lanes.keys()].map((n) => n.length)) + 1;
  const rows: string[] = [];
  const cut = (left: string) => {
    rows.push(paint.dim(`… (the timeline stops here: ${left} left out)`));
    return rows.join('\n');
  };
  rows.push(`${pad('', nameW)}${paint.dim(`0${' '.repeat(Math.max(0, width - 2 - fmt(end).length))}${fmt(end)} cycles`)}`);
  // Agents (none after `stop` says so: a launch of 33,792 agents is as many rows).
  for (const a of p.agents) {
    const agentsLeft = () => `${(p.agents.length - a.id).toLocaleString('en-US')} of ${p.agents.length.toLocaleString('en-US')} agents`;
    if (stop?.()) return cut(agentsLeft());
    const cells = new Array<string>(width).fill(' ');
    for (const sp of lanes.get(String(a.id)) ?? []) {
      if (due()) return cut(agentsLeft());
      const c0 = col(sp.t0), c1 = Math.max(c0, col(sp.t1 - 1e-9));
      // A wait that passes is a barrier test, not work: drawn ▒ so stalls and tests read apart.
      const glyph = sp.label.startsWith('mbarrier.try_wait') || sp.label.startsWith('mbarrier.test_wait') ? '▒' : '█';
      for (let c = c0; c <= c1; c++) {
        if (sp.kind === 'op') {
          if (cells[c] !== '█') cells[c] = glyph;
        } else if (cells[c] === ' ') cells[c] = '·';
      }
    }
    rows.push(`${pad(a.name, nameW)}${cells.join('').replace(/[\u2588\u2592]+/g, (x) => paint.cyan(x))}`);
  }
  // Units.
  const unitLanes = [...lanes.keys()].filter((l) => !laneNames.has(l)).sort();
  for (const l of unitLanes) {
    const count = new Array<number>(width).fill(0);
    for (const sp of lanes.get(l)!) {
      if (due()) return cut('the units and barriers');
      const c0 = col(sp.t0), c1 = Math.max(c0, col(sp.t1 - 1e-9));
      for (let c = c0; c <= c1; c++) count[c]!++;
    }
    const cells = count.map((n) => (n === 0 ? ' ' : n === 1 ? '▓' : n < 10 ? String(n) : '+'));
    rows.push(`${pad(l, nameW)}${paint.yellow(cells.join(''))}`);
  }
  // Barriers: phase parity over time.
  if (r.events) {
    const flips = new Map<number, number[]>();
    for (const e of r.events) {
      if (due()) return cut('the barriers');
      if (e.e !== 'phase') continue;
      let f = flips.get(e.bar);
      if (!f) flips.set(e.bar, (f = []));
      f.push(e.t);
    }
    const keys = [...flips.keys()].sort((a, b) => a - b);
    const shown = keys.slice(0, 16);
    for (const k of shown) {
      const f = flips.get(k)!;
      const cells = new Array<string>(width).fill('0');
      let parity = 0;
      let fi = 0;
      for (let c = 0; c < width; c++) {
        const tEnd = ((c + 1) / width) * end;
        while (fi < f.length && f[fi]! < tEnd) {
          parity ^= 1;
          fi++;
        }
        cells[c] = String(parity);
      }
      rows.push(`${pad(p.barrierName(k), nameW)}${paint.dim(cells.join(''))}`);
    }
    if (keys.length > shown.length) rows.push(paint.dim(`(${keys.length - shown.length} more barriers not shown)`));
  }
  rows.push(paint.dim(`${pad('', nameW)}█ issuing  ▒ testing a barrier (a wait that passes)  · stalled  ▓/n operations in flight  0/1 phase parity`));
  return rows.join('\n');
}

/** One line per event: time, actor, what happened, the barrier state after it; at most `limit` lines, and none after `stop` says so. */
export function renderEventLog(program: Program, events: MachineEvent[], limit = 200, stop?: () => boolean): string {
  programArg('renderEventLog', program);
  eventsArg('renderEventLog', events);
  if (typeof limit !== 'number' || Number.isNaN(limit)) argError('renderEventLog', 'limit', 'a number of lines', limit);
  const who = actorNamer(program, events);
  const lines: string[] = [];
  let n = 0;
  // Operations shown by their effect (arrive, wait, copy issue, access) rather than their text.
  const byEffect = new Set(['cp.async.bulk', 'ld.shared', 'st.shared', 'tcgen05.ld']);
  for (let i = 0; i < events.length; i++) {
    if (stop?.()) {
      lines.push(`… (the log stops here: ${(events.length - i).toLocaleString('en-US')} of ${events.length.toLocaleString('en-US')} events left out)`);
      break;
    }
    const e = events[i]!;
    let line: string | null = null;
    // Does a phase of this barrier complete in the same step (the next events)?
    const completes = (bar: number) => {
      for (let j = i + 1; j < events.length && j <= i + 3; j++) {
        const x = events[j]!;
        if (x.e === 'phase' && x.bar === bar) return true;
      }
      return false;
    };
    switch (e.e) {
      case 'op':
        if (e.op.startsWith('mbarrier.') && e.op !== 'mbarrier.init' && e.op !== 'mbarrier.inval') break; // shown by their effect
        if (byEffect.has(e.op)) break;
        line = `${who(e.agent, e.async)}: ${e.text}`;
        break;
      case 'access':
        if (e.edge !== 'point') break;
        line = `${who(e.agent, e.async)}: ${e.rw === 'r' ? 'reads' : 'writes'} ${program.bufferName(e.buf)}`;
        break;
      case 'arrive': {
        const after = completes(e.bar) ? `→ pending 0, tx 0: the phase completes` : `→ pending ${e.pending}, tx ${e.tx}`;
        line = `${who(e.agent, e.async)}: arrive${e.expectTx ? `.expect_tx(${e.expectTx})` : ''}${e.drop ? '_drop' : ''} on ${program.barrierName(e.bar)}${e.count > 1 ? ` ×${e.count}` : ''} ${after}`;
        break;
      }
      case 'expect_tx':
        line = `${who(e.agent, e.async)}: expect_tx(${e.bytes}) on ${program.barrierName(e.bar)} → tx ${e.tx}`;
        break;
      case 'complete_tx':
        line = `${who(e.agent, e.async)}: complete_tx(${e.bytes}) on ${program.barrierName(e.bar)} → tx ${e.tx}`;
        break;
      case 'phase':
        line = `${program.barrierName(e.bar)}: phase ${e.completed} complete → phase ${e.completed + 1}, parity ${(e.completed + 1) & 1}`;
        break;
      case 'wait':
        line = `${program.agents[e.agent]!.name}: ${e.token ? 'token wait' : `wait parity ${e.parity}`} on ${program.barrierName(e.bar)} (phase ${e.phase}) → ${e.pass ? 'passes' : 'false'}`;
        break;
      case 'async':
        line = `${program.agents[e.agent]!.name}: issues ${e.kind}${e.bytes && e.kind !== 'tc.mma' && e.kind !== 'wgmma' ? ` of ${e.bytes} B` : ''}${e.buf >= 0 ? ` → ${program.bufferName(e.buf)}` : ''}${e.bar >= 0 ? ` signalling ${program.barrierName(e.bar)}` : ''}`;
        break;
      case 'diag':
        line = `${e.diag.severity.toUpperCase()} [${e.diag.code}] ${e.diag.message}`;
        break;
      case 'exit':
        line = `${program.agents[e.agent]!.name}: exits`;
        break;
      default:
        break;
    }
    if (line === null) continue;
    if (++n > limit) {
      lines.push(`… (${events.length} events in all; use --json for every one)`);
      break;
    }
    lines.push(`${pad(`t=${fmt(e.t)}`, 10)} ${line}`);
  }
  return lines.join('\n');
}

/** The most barriers {@link renderLedger} shows the phases of for `focus`. */
export const FOCUS_MAX = 32;

/**
 * The ledger as text: one block per barrier phase. `maxPhases` limits the output; `focus` (barrier
 * keys) shows only those barriers' last phases (e.g. the barriers of a hang).
 */
export function renderLedger(ledger: Ledger, maxPhases = 24, focus?: number[]): string {
  if (!isRecord(ledger) || !Array.isArray(ledger.phases) || !Array.isArray(ledger.vacuous)) argError('renderLedger', 'ledger', 'a Ledger (from buildLedger)', ledger);
  if (typeof maxPhases !== 'number') argError('renderLedger', 'maxPhases', 'a number of phases', maxPhases);
  if (maxPhases !== Infinity && !(Number.isInteger(maxPhases) && maxPhases >= 0)) throw new RangeError(`renderLedger: maxPhases must be a whole number of phases, 0 or more (Infinity for all), got ${maxPhases}`);
  if (focus !== undefined && !Array.isArray(focus)) argError('renderLedger', 'focus', 'an array of barrier keys', focus);
  const lines: string[] = [];
  let shown = ledger.phases.slice(0, maxPhases);
  if (focus && focus.length) {
    shown = [];
    // By barrier once (a filter per focused barrier was quadratic: 261,888 barriers of a hang).
    const byBar = new Map<number, LedgerPhase[]>();
    for (const p of ledger.phases) {
      let l = byBar.get(p.bar);
      if (!l) byBar.set(p.bar, (l = []));
      l.push(p);
    }
    const bars = [...new Set(focus)].filter((bar) => byBar.has(bar));
    for (const bar of bars.slice(0, FOCUS_MAX)) shown.push(...byBar.get(bar)!.slice(-3));
    if (bars.length > FOCUS_MAX) lines.push(`(the first ${FOCUS_MAX} of the ${bars.length.toLocaleString('en-US')} barriers the hang waits on)`);
    const hidden = ledger.phases.length - shown.length;
    if (hidden > 0) lines.push(`(the last phases of the barriers the hang waits on; ${hidden} other ${hidden === 1 ? 'phase' : 'phases'} with --events or --json)`);
  }
  for (const p of shown) {
    const done = p.completedAt === null ? 'NOT completed' : `completed at t=${fmt(p.completedAt)}`;
    lines.push(`${p.barrier} phase ${p.phase} (parity ${p.phase & 1}): ${done}`);
    const arr = p.arrivals.map((a) => `${a.who}${a.count > 1 ? ` ×${a.count}` : ''} t=${fmt(a.t)}${a.expectTx ? ` (+${a.expectTx} B expected)` : ''}`);
    lines.push(`  arrivals (${p.arrived}): ${arr.join('; ') || 'none'}`);
    if (p.txExpected || p.txCompleted) lines.push(`  tx: ${p.txExpected} B expected, ${p.txCompleted} B completed in ${p.credits.length} credit(s)`);
    if (p.waiters.length) lines.push(`  released: ${p.waiters.map((w) => `${w.who} (parity ${w.parity}) t=${fmt(w.t)}`).join('; ')}`);
  }
  if (!focus && ledger.phases.length > shown.length) {
    const more = ledger.phases.length - shown.length;
    lines.push(`… ${more} more ${more === 1 ? 'phase' : 'phases'} (--events shows all, --json too)`);
  }
  if (ledger.omittedEvents) lines.push(`… (the ledger was cut short: built from the run's first events, ${ledger.omittedEvents.toLocaleString('en-US')} later events left out)`);
  if (ledger.vacuous.length) {
    const byBar = new Map<string, number>();
    for (const v of ledger.vacuous) byBar.set(`${v.barrier} by ${v.who} (parity ${v.parity})`, (byBar.get(`${v.barrier} by ${v.who} (parity ${v.parity})`) ?? 0) + 1);
    lines.push(`waits that passed before any phase completed (parity 1 on a fresh barrier): ${[...byBar.entries()].map(([k, n]) => (n > 1 ? `${k} ×${n}` : k)).join('; ')}`);
  }
  return lines.join('\n');
}

/** Summary: verdict, total cycles, utilization of units and stall cycles per agent by cause. */
export function renderSummary(r: SimResult, paint: Paint = PLAIN): string {
  simResultArg('renderSummary', r);
  const p = r.program;
  const T = r.cycles || 1;
  const us = r.cycles / r.timing.clockMHz.value;
  const lines: string[] = [];
  const v = r.verdict === 'ok' ? paint.green('ok') : paint.red(r.verdict);
  lines.push(`${paint.bold('verdict')}: ${v}    ${paint.bold('total')}: ${fmt(r.cycles)} cycles (${us.toFixed(2)} µs at ${r.timing.clockMHz.value} MHz), ${fmt(r.eventCount)} events`);
  const pct = (x: number) => `${((100 * x) / T).toFixed(1)}%`;
  const ctasShown = Math.min(p.ctas, 4);
  for (let c = 0; c < ctasShown; c++) {
    const tag = p.ctas > 1 ? ` c${c}` : '';
    const parts: string[] = [];
    if (r.stats.tmaBusy[c]) parts.push(`TMA engine moving bytes ${pct(r.stats.tmaBusy[c]!)}`);
    if (r.stats.tcBusy[c]) parts.push(`tensor core computing ${pct(r.stats.tcBusy[c]!)}`);
    if (parts.length) lines.push(`utilization${tag} (share of the ${fmt(r.cycles)} cycles): ${parts.join(', ')}`);
  }
  if (p.ctas > ctasShown) lines.push(paint.dim(`(${p.ctas - ctasShown} more CTAs)`));
  const agentsShown = p.agents.slice(0, 12);
  const nameW = Math.max(16, ...agentsShown.map((a) => a.name.length)); // never cut a name (`device_kernel.w10`)
  for (const a of agentsShown) {
    const st = r.stats.stalls[a.id]!;
    const stalls = Object.entries(st).sort((x, y) => y[1] - x[1]).map(([k, n]) => `${k} ${fmt(n)}`).join(', ');
    lines.push(`  ${pad(a.name, nameW)} issuing ${pad(pct(r.stats.busy[a.id]!), 6)} stalled ${fmt(Object.values(st).reduce((x, y) => x + y, 0))} cycles${stalls ? ` (${stalls})` : ''}`);
  }
  if (p.agents.length > agentsShown.length) lines.push(paint.dim(`  (${p.agents.length - agentsShown.length} more agents)`));
  return lines.join('\n');
}
