/**
 * The seed's phase-tracking table, computed by running the machine: for each iteration of an
 * agent's loop, the stage, the phase parity it waited on, the barrier's parity after that phase
 * completed, and the loop's phase variable after the iteration.
 */
import type { MachineEvent } from '../machine/events.js';
import type { MachineState } from '../machine/machine.js';
import type { Program, RoleCode } from '../machine/program.js';
import type { Expr } from '../kernel/ir.js';
import { simulate } from '../sim/simulate.js';
import { argError, isRecord, programArg, stringArg } from '../model/api-args.js';

/** One row of the table. */
export interface PhaseRow {
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
 * Runs `program` and records, for agent `role` (first agent of that role), each passing parity
 * wait on barrier array `barrier` and the value of variable `phaseVar` right after it: the variable
 * holding the phase parity those waits wait for (`phase_tma` in the phase-tracking example).
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
  const agent = program.agents.find((a) => a.roleName === role);
  if (!agent) throw new RangeError(`phaseTable: role '${cut(role)}' is no role of the program (its roles: ${[...new Set(program.agents.map((a) => a.roleName))].join(', ')})`);
  if (!program.barriers.some((b) => b.name === barrier)) throw new RangeError(`phaseTable: barrier '${cut(barrier)}' is no barrier array of the program (its barriers: ${program.barriers.map((b) => b.name).join(', ')})`);
  const slots = program.roles[agent.role]!.slots;
  const slot = slots.indexOf(phaseVar);
  if (slot < 0) throw new RangeError(`phaseTable: phaseVar '${cut(phaseVar)}' is no variable of role '${cut(role)}': ${parityHint(program.roles[agent.role]!, barrier, slots)}`);
  const rows: PhaseRow[] = [];
  const onStep = (s: MachineState, events: readonly MachineEvent[]) => {
    for (const e of events) {
      if (e.e !== 'wait' || e.agent !== agent.id || !e.pass) continue;
      const info = program.barrierOf(e.bar);
      if (info.info.name !== barrier) continue;
      const phase = s.bars[e.bar]!.phase;
      rows.push({ iteration: rows.length, stage: info.index, parityWaited: e.parity, parityAfter: phase & 1, phaseVar: s.agents[agent.id]!.frame[slot]!, phase });
    }
  };
  return { onStep, rows };
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

/** The table as text, with the seed's column names (`phaseVar` names the last column). */
export function renderPhaseTable(rows: PhaseRow[], phaseVar = 'phase_tma'): string {
  if (!Array.isArray(rows) || !rows.every((x) => isRecord(x))) argError('renderPhaseTable', 'rows', 'an array of PhaseRows (from phaseTable)', rows);
  stringArg('renderPhaseTable', 'phaseVar', phaseVar);
  const head = ['iteration', 'stage', 'phase parity waited on', 'barrier parity after completion', `${phaseVar} after iteration`];
  const body = rows.map((r) => [r.iteration, r.stage, r.parityWaited, r.parityAfter, r.phaseVar].map(String));
  const w = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(w[i]!)).join('  ').trimEnd();
  return [line(head), ...body.map(line)].join('\n');
}
