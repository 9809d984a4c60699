/**
 * The replay of a hazard's schedule (`replay`): the schedule run again through the machine from
 * the initial state, recording each numbered trace step with its operation text, the barriers it
 * touched as they are after it, its notes and, for wait_group steps and group completions, the
 * pending groups. `check` builds every counterexample's trace with it.
 */
import { asyncDef } from '../machine/ops/index.js';
import { Machine, type Choice, type MachineState, newStepOut, nextCredit, pendingAsyncGroups } from '../machine/machine.js';
import type { MachineEvent } from '../machine/events.js';
import { registerOperands, stepText } from '../machine/step-text.js';
import type { OpInstr, Program } from '../machine/program.js';
import { tryInt, type CompiledExpr } from '../kernel/expr.js';
import { actorNamer } from '../report/ledger.js';
import { decodeChoice, keyOf } from './explore.js';
import type { SrcLoc } from '../kernel/ir.js';
import { argError, programArg } from '../model/api-args.js';
import type { GroupNote, TraceStep } from './check.js';

/**
 * Replays a schedule from the initial state; returns the states, events and trace steps. A
 * `machine` of `program` may be given (the machine keeps nothing between runs: one serves many replays).
 */
export function replay(program: Program, schedule: readonly number[], machine?: Machine): { final: MachineState; events: MachineEvent[]; steps: TraceStep[]; machine: Machine } {
  programArg('replay', program);
  if (!Array.isArray(schedule) || !schedule.every((c) => Number.isInteger(c))) argError('replay', 'schedule', 'an array of integer choices', schedule);
  const m = machine ?? new Machine(program);
  const s = m.initial();
  const events: MachineEvent[] = [];
  const steps: TraceStep[] = [];
  const namer = (evs: MachineEvent[]) => actorNamer(program, evs);
  schedule.forEach((code, i) => {
    const c: Choice = decodeChoice(code);
    if (c.kind === 'agent' ? c.agent >= program.agents.length || !m.agentEnabled(s, c.agent) : !m.findAsync(s, c.id) || !m.asyncEnabled(s, m.findAsync(s, c.id)!)) {
      const what = c.kind === 'agent' ? (c.agent >= program.agents.length ? `agent ${c.agent}, and the program has ${program.agents.length} agent${program.agents.length === 1 ? '' : 's'}` : `agent ${c.agent} (${program.agents[c.agent]!.name}), which cannot step there`) : `async operation ${c.id}, which is not in flight and ready there`;
      throw new RangeError(`replay: schedule[${i}] = ${code} chooses ${what} (a schedule comes from a check's hazard or witness)`);
    }
    let actor: string;
    let op: string;
    let loc: SrcLoc | undefined;
    if (c.kind === 'agent') {
      const ins = m.nextOp(s, c.agent);
      actor = program.agents[c.agent]!.name;
      const ag = s.agents[c.agent]!;
      // A kernel of registers (PTX) is written with its operands' values (stepText); a sketch as written, its values after it.
      const text = ins ? stepText(program, s, c.agent, ins) : '';
      op = ins ? (ins.op.op === 'bar.sync' && ag.sub >= 0 ? `${text} (generation complete, released)` : text) : '(exit)';
      if (ins && !registerOperands(program, c.agent)) {
        // Resolved operands, so a reader need not evaluate the expressions.
        const res = resolvedOperands(program, ins, ag.frame);
        if (res.length) op += `  [${res.join(', ')}]`;
      }
      loc = ins?.loc;
    } else {
      const o = s.inflight.find((x) => x.id === c.id);
      actor = o ? `${asyncDef(o.kind).label} (from ${program.agents[o.agent]!.name})` : `async#${c.id}`;
      loc = o?.loc;
      if (!o) op = 'completes';
      else if (o.kind === 'tma') {
        const chunk = nextCredit(o);
        op = `${chunk} B land in ${program.bufferName(o.buf)} → complete_tx ${program.barrierName(o.bar)}${chunk < o.left ? ` (${o.left - chunk} B still to come)` : ''}`;
      } else if (o.kind === 'tc.commit') op = `arrive on ${(o.targets ?? [o.bar]).map((k) => program.barrierName(k)).join(', ')} (earlier tcgen05 ops done)`;
      else if (o.kind === 'remote') op = `${o.remote} lands on ${program.barrierName(o.bar)}`;
      else if (o.kind === 'cpa.arrive') op = `arrive on ${program.barrierName(o.bar)}`;
      else if (o.kind === 'bulk.store') op = `finished reading ${program.bufferName(o.buf)}`;
      else if (o.kind === 'cp.async') op = `${o.bytes} B land in ${program.bufferName(o.buf)}`;
      else if (o.kind === 'st.async' || o.kind === 'dsmem') op = `${o.bytes} B land in ${program.bufferName(o.buf)} → complete_tx ${program.barrierName(o.bar)}`;
      else if (o.kind === 'pick') op = o.bar < 0 ? `picks ${program.roles[program.agents[o.agent]!.role]!.slots[o.bytes]} = ${o.count}` : `try_cancel ${o.count ? 'succeeds' : 'fails'}`;
      else if (o.kind === 'clc') op = `response (${o.count ? `canceled, first CTA ${o.count - 1}` : 'failed'}) lands in ${program.bufferName(o.buf)} → complete_tx ${program.barrierName(o.bar)}`;
      else op = `completes (read ${(o.reads ?? []).map((r) => program.bufferName(r)).join(', ')}${o.kind === 'tc.mma' && o.buf >= 0 ? `, wrote ${program.bufferName(o.buf)}` : ''})`;
    }
    // One state, changed in place (a clone per step dominated the replay of short searches).
    const before = groupsBefore(m, s, c);
    const out = newStepOut(true);
    m.apply(s, c, out, i + 1, true);
    const r = { events: out.events! };
    const groups = groupNote(m, before, s, c, r.events);
    for (const e of r.events) events.push(e);
    const touched = new Set<number>();
    const notes: string[] = [];
    let who: ReturnType<typeof namer> | null = null;
    for (const e of r.events) {
      if ('bar' in e && typeof e.bar === 'number' && e.bar >= 0) touched.add(e.bar);
      if (e.e === 'phase') notes.push(`phase ${e.completed} of ${program.barrierName(e.bar)} completes`);
      else if (e.e === 'wait') notes.push(e.pass ? `wait passes (parity ${e.parity}, barrier in phase ${e.phase})` : `test fails (parity ${e.parity}, barrier in phase ${e.phase})`);
      else if (e.e === 'diag') notes.push(`${e.diag.severity} ${e.diag.code}: ${e.diag.message}`);
      else if (e.e === 'exit') notes.push(`${(who ??= namer(events))(e.agent, -1)} exits`);
      else if (e.e === 'sync' && e.kind === 'named.done') notes.push(`named barrier ${e.id}: generation complete`);
      else if (e.e === 'sync' && e.kind === 'cluster.done') notes.push(`cluster barrier round ${e.id} complete`);
    }
    const barriers = [...touched].sort((a, b) => a - b).map((k) => {
      const b = s.bars[k]!;
      return { name: program.barrierName(k), phase: b.phase, pending: b.pending, expected: b.expected, tx: b.tx };
    });
    const step: TraceStep = { n: i + 1, actor, kind: c.kind, op, barriers, notes };
    if (loc) step.loc = loc;
    if (groups) step.groups = groups;
    steps.push(step);
  });
  return { final: s, events, steps, machine: m };
}

/** The group kind a wait_group operation waits on, or null for any other operation. */
/**
 * The operands of `ins` in `f` as a trace prints them (barrier and buffer names, parity, bytes, id,
 * threads). One whose expression faults is left out: the step evaluates it again and the machine
 * reports the fault as the step's `arith` diagnostic ({@link tryInt}).
 */
function resolvedOperands(program: Program, ins: OpInstr, f: number[]): string[] {
  const res: string[] = [];
  const bk = ins.bar ? keyOf(ins.bar, f) : -1;
  if (bk >= 0) res.push(program.barrierName(bk));
  const fk = ins.buf ? keyOf(ins.buf, f) : -1;
  if (fk >= 0) res.push(program.bufferName(fk));
  if (ins.reads) for (const rd of ins.reads) {
    const k = keyOf(rd, f);
    if (k >= 0) res.push(program.bufferName(k));
  }
  const int = (fn: CompiledExpr | undefined, show: (v: number) => string) => {
    const v = fn ? tryInt(fn, f) : undefined;
    if (v !== undefined) res.push(show(v));
  };
  int(ins.ints.parity, (v) => `parity ${v}`);
  if (ins.ints.expectTx) int(ins.ints.expectTx, (v) => `${v} B`);
  else int(ins.ints.bytes, (v) => `${v} B`);
  int(ins.ints.id, (v) => `id ${v}`);
  int(ins.ints.threads, (v) => `${v} threads`);
  return res;
}

function groupWaitKind(op: string): GroupNote['kind'] | null {
  return op === 'wgmma.wait_group' ? 'wgmma' : op === 'cp.async.bulk.wait_group' ? 'bulk.store' : op === 'cp.async.wait_group' ? 'cp.async' : null;
}

/** N of the wait_group of `kind` agent `a` is parked at in `s`, or null (not at one, or N cannot be evaluated). */
function parkedWaitN(m: Machine, s: MachineState, a: number, kind: GroupNote['kind']): number | null {
  if (s.agents[a]!.status !== 'run') return null;
  const ins = m.nextOp(s, a);
  if (!ins || groupWaitKind(ins.op.op) !== kind || !ins.ints.n) return null;
  return tryInt(ins.ints.n, s.agents[a]!.frame) ?? null;
}

/**
 * The {@link GroupNote} of step `c` from `before` to `after` (with the step's `events`), or null:
 * a wait_group step, or the completion of a wgmma / bulk store that changes its issuer's pending
 * count. Counts are the machine's ({@link pendingAsyncGroups}); whether a wait passes is
 * {@link Machine.agentEnabled}'s verdict.
 */
/** What {@link groupNote} needs of the state before a step (the replay changes the state in place). */
interface GroupsBefore {
  /** The agent whose groups the step may change. */
  agent: number;
  /** The async op's kind (an async step), or null (an agent step). */
  kind: GroupNote['kind'] | null;
  wgmma: number;
  bulk: number;
  cp: number;
  /** Whether that agent was enabled before (async steps). */
  enabled: boolean;
}

function groupsBefore(m: Machine, s: MachineState, c: Choice): GroupsBefore | null {
  if (c.kind === 'agent') {
    // Only a wait_group step has a note: other agent steps need nothing of the state before.
    const ins = m.nextOp(s, c.agent);
    if (!ins || groupWaitKind(ins.op.op) === null) return null;
    return { agent: c.agent, kind: null, wgmma: pendingAsyncGroups(s, c.agent, 'wgmma', m.program.agents[c.agent]!.wgLeader), bulk: pendingAsyncGroups(s, c.agent, 'bulk.store'), cp: pendingAsyncGroups(s, c.agent, 'cp.async'), enabled: true };
  }
  const o = s.inflight.find((x) => x.id === c.id);
  if (!o || (o.kind !== 'wgmma' && o.kind !== 'bulk.store' && o.kind !== 'cp.async')) return null;
  return { agent: o.agent, kind: o.kind, wgmma: pendingAsyncGroups(s, o.agent, 'wgmma'), bulk: pendingAsyncGroups(s, o.agent, 'bulk.store'), cp: pendingAsyncGroups(s, o.agent, 'cp.async'), enabled: m.agentEnabled(s, o.agent) };
}

function groupNote(m: Machine, before: GroupsBefore | null, after: MachineState, c: Choice, events: MachineEvent[]): GroupNote | null {
  if (!before) return null;
  const name = (a: number) => m.program.agents[a]!.name;
  const lead = (a: number, kind: GroupNote['kind']) => (kind === 'wgmma' ? m.program.agents[a]!.wgLeader : a);
  const pendingBefore = (kind: GroupNote['kind']) => (kind === 'wgmma' ? before.wgmma : kind === 'cp.async' ? before.cp : before.bulk);
  if (c.kind === 'agent') {
    const e = events.find((x) => x.e === 'op' && x.agent === c.agent && groupWaitKind(x.op) !== null);
    if (!e || e.e !== 'op') return null;
    const kind = groupWaitKind(e.op)!;
    return {
      agent: name(c.agent), kind, before: pendingBefore(kind), after: pendingAsyncGroups(after, c.agent, kind, lead(c.agent, kind)),
      waitN: e.n ?? null, wait: 'passes',
    };
  }
  const kind = before.kind!;
  const b = pendingBefore(kind);
  const a = pendingAsyncGroups(after, before.agent, kind);
  if (a === b) return null;
  const waitN = after.trapped ? null : parkedWaitN(m, after, before.agent, kind);
  const wait = waitN === null ? null : !m.agentEnabled(after, before.agent) ? 'waits' : before.enabled ? null : 'wakes';
  return { agent: name(before.agent), kind, before: b, after: a, waitN, wait };
}

