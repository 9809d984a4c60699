/**
 * The seed's phase-tracking table, computed by running the machine: for each iteration of an
 * agent's loop, the stage, the phase parity it waited on, the barrier's parity after that phase
 * completed, and the loop's phase variable after the iteration. A role of several warps (a PTX
 * role, whose warps run the same code, or a sketch role of W warps) is one agent per warp: each
 * has its own rows, and {@link mergePhaseRows} shows one row where the warps agree.
 */
import type { MachineEvent } from '../machine/events.js';
import type { MachineState } from '../machine/machine.js';
import type { Program, RoleCode } from '../machine/program.js';
import type { Expr } from '../kernel/ir.js';
import { simulate } from '../sim/simulate.js';
import { warpRuns } from '../machine/warp-runs.js';
import { argError, isRecord, programArg, stringArg } from '../model/api-args.js';

/** One row of the table: one passing parity wait of one agent (warp). */
export interface PhaseRow {
  /** The agent's display name (`consumer`, or a warp of a split role: `tma_pipeline.w1`). */
  agent: string;
  /** The agent's own count of its passing waits on the barrier array before this one. */
  iteration: number;
  stage: number;
  parityWaited: number;
  parityAfter: number;
  phaseVar: number;
  /**
   * The barrier's phase when the wait passed: 0 means no phase had completed, i.e. the wait passed
   * at once (parity 1 on a fresh barrier) and `parityAfter` describes no completion.
   */
  phase: number;
}

/** A name as a message quotes it: at most 40 characters. */
const cut = (s: string): string => (s.length > 40 ? `${s.slice(0, 40)}…` : s);

/** True when the wait passed without any phase of its barrier completing (it passed at once). */
export const passedAtOnce = (r: PhaseRow): boolean => r.phase === 0;

/**
 * Runs `program` and records, for every agent of role `role` (each warp of it, in every CTA), each
 * passing parity wait on barrier array `barrier` and the value of variable `phaseVar` right after
 * it: the variable holding the phase parity those waits wait for (`phase_tma` in the
 * phase-tracking example). Rows come in the order the waits passed; `iteration` counts per agent.
 * Throws a RangeError naming the argument if the role, barrier array or variable does not exist
 * (for a variable: naming those the role's waits on `barrier` read as their parity).
 */
export function phaseTable(program: Program, role = 'consumer', barrier = 'tma_bar', phaseVar = 'phase_tma'): PhaseRow[] {
  const rec = phaseRecorder(program, role, barrier, phaseVar);
  simulate(program, { recordSpans: false, onStep: rec.onStep });
  return rec.rows;
}

/** What {@link phaseRecorder} gives: the step hook of a simulation and the rows it has recorded. */
export interface PhaseRecorder {
  /** Give it to `simulate` as `onStep`. */
  onStep: (s: MachineState, events: readonly MachineEvent[]) => void;
  rows: PhaseRow[];
  /** The names of the role's agents (its warps), by agent id: those with no row passed no such wait. */
  warps: string[];
}

/**
 * The rows of {@link phaseTable}, recorded by a simulation the caller runs (with its own bounds:
 * `mbsim run` records them in its one simulation, so the table stops where the run stops).
 * Throws a RangeError naming the argument, as {@link phaseTable} does.
 */
export function phaseRecorder(program: Program, role: string, barrier: string, phaseVar: string): PhaseRecorder {
  programArg('phaseTable', program);
  stringArg('phaseTable', 'role', role);
  stringArg('phaseTable', 'barrier', barrier);
  stringArg('phaseTable', 'phaseVar', phaseVar);
  const agents = program.agents.filter((a) => a.roleName === role);
  const agent = agents[0];
  if (!agent) throw new RangeError(`phaseTable: role '${cut(role)}' is no role of the program (its roles: ${[...new Set(program.agents.map((a) => a.roleName))].join(', ')})`);
  if (!program.barriers.some((b) => b.name === barrier)) throw new RangeError(`phaseTable: barrier '${cut(barrier)}' is no barrier array of the program (its barriers: ${program.barriers.map((b) => b.name).join(', ')})`);
  const slots = program.roles[agent.role]!.slots;
  const slot = slots.indexOf(phaseVar);
  if (slot < 0) throw new RangeError(`phaseTable: phaseVar '${cut(phaseVar)}' is no variable of role '${cut(role)}': ${parityHint(program.roles[agent.role]!, barrier, slots)}`);
  const rows: PhaseRow[] = [];
  // Per agent id: its rows so far (-1: not an agent of the role).
  const count = new Int32Array(program.agents.length).fill(-1);
  for (const a of agents) count[a.id] = 0;
  const onStep = (s: MachineState, events: readonly MachineEvent[]) => {
    for (const e of events) {
      if (e.e !== 'wait' || !e.pass || e.agent < 0 || !(count[e.agent]! >= 0)) continue;
      const info = program.barrierOf(e.bar);
      if (info.info.name !== barrier) continue;
      const phase = s.bars[e.bar]!.phase;
      rows.push({ agent: program.agents[e.agent]!.name, iteration: count[e.agent]!++, stage: info.index, parityWaited: e.parity, parityAfter: phase & 1, phaseVar: s.agents[e.agent]!.frame[slot]!, phase });
    }
  };
  return { onStep, rows, warps: agents.map((a) => a.name) };
}

/** Names a message lists at most; the rest are counted. */
const MAX_LISTED = 12;

/** `names` joined, at most {@link MAX_LISTED} of them, then how many more. */
function listed(names: readonly string[]): string {
  const shown = names.slice(0, MAX_LISTED).join(', ');
  return names.length > MAX_LISTED ? `${shown} and ${(names.length - MAX_LISTED).toLocaleString('en-US')} more` : shown;
}

/** The variable names an expression reads, in order, each once. */
function varsOf(e: Expr | undefined, out: string[]): string[] {
  if (!e) return out;
  if (e.k === 'var') { if (!out.includes(e.name)) out.push(e.name); }
  else if (e.k === 'bin') { varsOf(e.a, out); varsOf(e.b, out); }
  else if (e.k === 'un') varsOf(e.a, out);
  return out;
}

/**
 * What a wrong `phaseVar` could have been: the role's variables that its parity waits on
 * `barrier` read as their parity (the phase variable is one of them), else a few of its variables.
 */
function parityHint(code: RoleCode, barrier: string, slots: readonly string[]): string {
  const used: string[] = [];
  for (const ins of code.code) {
    if (ins.i === 'op' && ins.op.op === 'mbarrier.wait' && ins.op.bar.name === barrier) varsOf(ins.op.parity, used);
  }
  const vars = used.filter((v) => slots.includes(v));
  if (vars.length) return `the phase variable holds the parity its waits on ${cut(barrier)} wait for, and those waits read ${listed(vars)}`;
  const own = slots.slice(6);
  return `its waits on ${cut(barrier)} read no variable as their parity (its variables: ${own.length ? listed(own) : 'none'})`;
}

/**
 * A row of the table as shown: the row of one warp, or of a group of warps that passed the same
 * wait with the same values at this iteration.
 */
export interface PhaseLine extends PhaseRow {
  /** `all` when every warp with rows agrees here, else the group's names (`math[0].w0–w3`). */
  warp: string;
  /** The agents the line stands for, in the table's order. */
  warps: string[];
}

/** The rows of several warps merged ({@link mergePhaseRows}). */
export interface MergedPhaseRows {
  /** The agents with at least one row, in the order given (else of their first row). */
  warps: string[];
  /** True when every one of `warps` has the same rows: then each line stands for all of them. */
  agree: boolean;
  /** By iteration: one line marked 'all' where the warps agree, else one line per group of warps that agree. */
  lines: PhaseLine[];
}

/** Two rows agree when everything but the agent is equal. */
const sameRow = (a: PhaseRow, b: PhaseRow): boolean =>
  a.stage === b.stage && a.parityWaited === b.parityWaited && a.parityAfter === b.parityAfter && a.phaseVar === b.phaseVar && a.phase === b.phase;

/**
 * Agent names as one label: runs of warps of one role instance (`math[0].w0`, `math[0].w1`, …)
 * as a range, `math[0].w0–w3`; other names as they are, separated by commas (past 12 parts, counted).
 */
export function warpLabel(names: readonly string[]): string {
  return listed(warpRuns(names));
}

/**
 * The rows of a role's warps as a kernel engineer reads a pipeline's parity table: per iteration,
 * one line (warp `all`) where every warp with rows passed the same wait with the same values, else
 * one line per group of warps that agree (a warp alone, or a range such as `math[1].w0–w3`). A
 * single warp's rows are its lines, marked with its name. `order`: the role's agents (a recorder's
 * `warps`); agents not in it follow in the order of their first row.
 */
export function mergePhaseRows(rows: readonly PhaseRow[], order: readonly string[] = []): MergedPhaseRows {
  const byAgent = new Map<string, PhaseRow[]>();
  for (const w of order) byAgent.set(w, []);
  for (const r of rows) {
    const list = byAgent.get(r.agent);
    if (list) list.push(r);
    else byAgent.set(r.agent, [r]);
  }
  const warps = [...byAgent.keys()].filter((w) => byAgent.get(w)!.length > 0);
  const lists = warps.map((w) => byAgent.get(w)!.slice().sort((a, b) => a.iteration - b.iteration));
  const n = Math.max(0, ...lists.map((l) => l.length));
  const lines: PhaseLine[] = [];
  let agree = true;
  for (let it = 0; it < n; it++) {
    const groups: { row: PhaseRow; warps: string[] }[] = [];
    for (let w = 0; w < warps.length; w++) {
      const r = lists[w]![it];
      if (!r) continue;
      const g = groups.find((x) => sameRow(x.row, r));
      if (g) g.warps.push(warps[w]!);
      else groups.push({ row: r, warps: [warps[w]!] });
    }
    const all = warps.length > 1 && groups.length === 1 && groups[0]!.warps.length === warps.length;
    if (!all && warps.length > 1) agree = false;
    for (const g of groups) lines.push({ ...g.row, warp: all ? 'all' : warpLabel(g.warps), warps: g.warps });
  }
  return { warps, agree, lines };
}

/** What {@link renderPhaseTable} shows beyond the rows. */
export interface PhaseTableOptions {
  /** The role's agents (a recorder's `warps`): the header names those that passed no such wait. */
  warps?: readonly string[];
  /** Lines shown at most (the rest are left out; `mergePhaseRows(rows).lines.length` counts them). */
  maxLines?: number;
}

/**
 * The table as text, with the seed's column names (`phaseVar` names the last column). Rows of one
 * warp print as they are. Rows of several warps print one row per iteration where the warps agree:
 * when they agree at every iteration a header line says so (and no warp column is needed),
 * otherwise a `warp` column says which warp a row is of, or `all`.
 */
export function renderPhaseTable(rows: PhaseRow[], phaseVar = 'phase_tma', opts: PhaseTableOptions = {}): string {
  if (!Array.isArray(rows) || !rows.every((x) => isRecord(x))) argError('renderPhaseTable', 'rows', 'an array of PhaseRows (from phaseTable)', rows);
  stringArg('renderPhaseTable', 'phaseVar', phaseVar);
  const m = mergePhaseRows(rows.map((r, i) => (typeof r.agent === 'string' ? r : { ...r, agent: '', iteration: r.iteration ?? i })), opts.warps);
  const silent = (opts.warps ?? []).filter((w) => !m.warps.includes(w));
  const header: string[] = [];
  const none = silent.length ? `; ${warpLabel(silent)} passed no such wait` : '';
  if (m.warps.length > 1 && m.agree) header.push(`all ${m.warps.length} warps with these waits agree (${warpLabel(m.warps)}): each row stands for every one of them${none}`);
  else if (m.warps.length > 1) header.push(`the warps differ (${warpLabel(m.warps)}): per iteration a row per group of warps with the same values, marked 'all' where every warp agrees${none}`);
  else if (silent.length) header.push(`only ${m.warps[0] ?? 'no warp'} of the role's ${silent.length + m.warps.length} warps passed these waits`);
  const perWarp = m.warps.length > 1 && !m.agree;
  const head = ['iteration', ...(perWarp ? ['warp'] : []), 'stage', 'phase parity waited on', 'barrier parity after completion', `${phaseVar} after iteration`];
  const shown = opts.maxLines !== undefined ? m.lines.slice(0, opts.maxLines) : m.lines;
  const body = shown.map((r) => [r.iteration, ...(perWarp ? [r.warp] : []), r.stage, r.parityWaited, r.parityAfter, r.phaseVar].map(String));
  // Column widths by a loop (no Math.max(...body): a long run has more rows than one call takes arguments).
  const w = head.map((h) => h.length);
  for (const b of body) for (let i = 0; i < w.length; i++) if (b[i]!.length > w[i]!) w[i] = b[i]!.length;
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(w[i]!)).join('  ').trimEnd();
  return [...header, line(head), ...body.map(line)].join('\n');
}
