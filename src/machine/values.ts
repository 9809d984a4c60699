/**
 * Values that steer control flow: the machine's memory cells (`MachineState.mem`), the
 * co-residency of a grid's clusters, and the `choose` variables the simulator takes from
 * `--set NAME=V`.
 *
 * Memory cells exist only in a program that uses values (a `gmem` array, an `ld.shared` with a
 * result, an `st.shared value=`, cluster launch control); otherwise `MachineState.mem` is empty and
 * nothing here costs anything. The cells are indexed by buffer key (every CTA's shared-memory
 * keys, then the global arrays, which live in CTA 0's key block: one location per launch), then
 * one flag per CTA ("this CTA observed a failed try_cancel response", PTX ISA §9.7.13.17), then
 * the id the next successful try_cancel hands out. Values are small integers (C's 64-bit
 * arithmetic of `kernel/arith.ts` within ±(2^53 − 1)); a global location that nothing initialized
 * holds {@link UNINIT}.
 *
 * Residency (`kernel ... resident=R`): clusters launch in index order, and cluster i becomes
 * resident (its agents may step) only once fewer than R clusters with a lower index are still
 * running, i.e. have an agent that has not finished. A spin wait on a flag that only a
 * non-resident cluster sets is then a hang (split-K / stream-K fix-up, the "ordered" semaphore
 * waiting on a later CTA). Without `resident=` every cluster is resident.
 */
import { evalExpr } from '../kernel/expr.js';
import type { Kernel, Op, Stmt } from '../kernel/ir.js';
import type { OpInstr, Program } from './program.js';
import type { MachineState } from './state.js';

/** The value of a global location that nothing initialized for this launch. */
export const UNINIT = Number.MIN_SAFE_INTEGER;

/** Where the machine's memory cells are (see the module comment). */
export interface ValueLayout {
  /** Cells in all. */
  size: number;
  /** Cell of CTA 0's "observed a failed try_cancel" flag (CTA c: `clcFailed + c`). */
  clcFailed: number;
  /** Cell of the id the next successful try_cancel returns (first CTA id of the canceled cluster). */
  clcNext: number;
  /** The cells at launch. */
  init: number[];
}

/** Every operation of a list of statements, with nested blocks. */
export function opsOf(stmts: readonly Stmt[], out: Op[] = []): Op[] {
  for (const st of stmts) {
    if (st.s === 'op') out.push(st.op);
    else if (st.s === 'for' || st.s === 'elect') opsOf(st.body, out);
    else if (st.s === 'if') { opsOf(st.then, out); if (st.else) opsOf(st.else, out); }
  }
  return out;
}

/** Whether `op` reads or writes a memory cell (so the program needs {@link ValueLayout}). */
function usesValue(op: Op): boolean {
  switch (op.op) {
    case 'ld.shared': return op.dest !== undefined;
    case 'st.shared': return op.value !== undefined;
    case 'ld.global': case 'st.global': case 'ld.strong': case 'st.strong': case 'atom.global': case 'spin.global': case 'clc.try_cancel': case 'clc.query': return true;
    default: return false;
  }
}

/** The names of the kernel's `choose` variables. */
export function chooseNames(kernel: Kernel): Set<string> {
  const out = new Set<string>();
  for (const r of kernel.roles) for (const op of opsOf(r.body)) if (op.op === 'choose') out.add(op.dest);
  return out;
}

/**
 * Splits `instantiate`'s overrides into parameters and pinned `choose` values (a name that is a
 * `choose` variable and not a parameter); returns the pins.
 */
export function splitPins(kernel: Kernel, overrides: Record<string, number>): { params: Record<string, number>; pins: Record<string, number> } {
  const names = chooseNames(kernel);
  // Null-prototype maps: `__proto__` or `constructor` are names like any other.
  const params: Record<string, number> = Object.create(null) as Record<string, number>;
  const pins: Record<string, number> = Object.create(null) as Record<string, number>;
  for (const [n, v] of Object.entries(overrides)) {
    if (names.has(n) && !kernel.params.some((p) => p.name === n)) {
      if (!Number.isSafeInteger(v)) throw new TypeError(`choose variable ${n} must be pinned to an integer, got ${v}`);
      pins[n] = v;
    } else params[n] = v;
  }
  return { params, pins };
}

/**
 * The memory layout of a program (null when it uses no values): `gmem` arrays (`info.space`,
 * offset, length, `init`) start at their `init=` value or {@link UNINIT}.
 */
export function valueLayout(
  kernel: Kernel, ctas: number, buffersPerCta: number,
  gmem: readonly { offset: number; length: number; init: number | null }[],
): ValueLayout | null {
  if (!gmem.length && !kernel.roles.some((r) => opsOf(r.body).some(usesValue))) return null;
  const keys = ctas * buffersPerCta;
  const size = keys + ctas + 1;
  const init = new Array<number>(size).fill(0);
  for (const g of gmem) for (let i = 0; i < g.length; i++) init[g.offset + i] = g.init ?? UNINIT;
  init[keys + ctas] = ctas; // canceled clusters are numbered after the CTAs the sketch runs
  return { size, clcFailed: keys, clcNext: keys + ctas, init };
}

/** The clusters that may run at once: `resident=` evaluated, or every cluster of the grid. */
export function residentOf(kernel: Kernel, params: Record<string, number>, grid: number): number {
  if (!kernel.resident) return grid;
  const r = evalExpr(kernel.resident, (n) => params[n]);
  if (!Number.isSafeInteger(r) || r < 1) throw new RangeError(`resident=${r}: at least one cluster must be resident`);
  return Math.min(r, grid);
}

/**
 * Whether cluster `cl` is resident in `s`: fewer than `resident` clusters with a lower index have
 * an agent still running (`clusterAgents`: the agents of each cluster).
 */
export function clusterResident(s: MachineState, cl: number, resident: number, clusterAgents: readonly (readonly number[])[]): boolean {
  if (cl < resident) return true;
  let running = 0;
  for (let j = 0; j < cl; j++) {
    for (const a of clusterAgents[j]!) {
      if (s.agents[a]!.status === 'run') { running++; break; }
    }
    if (running >= resident) return false;
  }
  return true;
}

/** The value of cell `v` for comparisons and arithmetic: an uninitialized location reads as 0. */
export function cellValue(v: number): number {
  return v === UNINIT ? 0 : v;
}

/** What {@link explainValueWait} fills in of a blocked waiter (hang.ts's `BlockedWaiter`). */
export interface ValueWaiter {
  op: string;
  reasons: string[];
  signallers: number[];
  subject: string | null;
}

/**
 * Explains agent `a` that is blocked by residency (its cluster is not resident) or in a spin loop
 * on a global location; returns false for any other wait. `describe` names an agent with where it
 * stands; `m` gives the program, the cluster agents and the operation `a` rests on.
 */
export function explainValueWait(
  m: { program: Program; clusterAgents: readonly (readonly number[])[]; gated: boolean; nextOp(s: MachineState, a: number): OpInstr | null },
  s: MachineState, a: number, w: ValueWaiter, describe: (a: number) => string,
): boolean {
  const p = m.program;
  const cl = p.agents[a]!.cluster;
  if (m.gated && !clusterResident(s, cl, p.resident, m.clusterAgents)) {
    const ahead = m.clusterAgents.slice(0, cl).flat().filter((o) => s.agents[o]!.status === 'run');
    w.subject = `cluster ${cl} (not resident)`;
    w.signallers = ahead;
    w.reasons.push(`${p.agents[a]!.name} has not started: its cluster ${cl} becomes resident only when fewer than resident=${p.resident} clusters with a lower index still run, and ${ahead.map(describe).join(', ')} ${ahead.length === 1 ? 'is' : 'are'} still running`);
    return true;
  }
  const ins = m.nextOp(s, a);
  if (!ins || ins.op.op !== 'spin.global') return false;
  const op = ins.op;
  const f = s.agents[a]!.frame;
  const key = ins.buf!(f);
  const name = key >= 0 ? p.bufferName(key) : op.buf.name;
  const v = key >= 0 ? s.mem[key]! : 0;
  w.subject = name;
  const writes = (o: number) => p.roles[p.agents[o]!.role]!.code.some((x) => x.i === 'op' && (x.op.op === 'st.strong' || x.op.op === 'st.global' || x.op.op === 'atom.global') && x.op.buf.name === op.buf.name);
  w.signallers = s.agents.map((_, o) => o).filter((o) => o !== a && s.agents[o]!.status === 'run' && writes(o));
  const cmp = { eq: '==', ne: '!=', ge: '>=', gt: '>', le: '<=', lt: '<' }[op.cmp];
  const who = w.signallers.length ? `; agents that may still write it: ${w.signallers.map(describe).join(', ')}` : '; no running agent writes it any more';
  w.reasons.push(`spins until ${name} ${cmp} ${ins.ints.target!(f)}, and ${name} holds ${v === UNINIT ? 'a value no one initialized' : v}${who}`);
  return true;
}

const GLOBAL_OPS: ReadonlySet<Op['op']> = new Set<Op['op']>(['ld.global', 'st.global', 'ld.strong', 'st.strong', 'atom.global', 'spin.global']);

/**
 * Why `op` names a buffer in the wrong memory, or null: the global operations take a `gmem` array
 * (one location per launch, no `@CTA`); every other operation takes shared or tensor memory.
 */
export function memorySpaceProblem(op: Op, spaceOf: (name: string) => string | undefined): string | null {
  const refs: { name: string; cta?: unknown }[] = [];
  for (const k of ['buf', 'dst', 'src', 'acc'] as const) {
    const r = (op as Record<string, unknown>)[k] as { name: string; cta?: unknown } | undefined;
    if (r && typeof r === 'object' && 'name' in r) refs.push(r);
  }
  if ('reads' in op) refs.push(...op.reads);
  for (const r of refs) {
    const space = spaceOf(r.name);
    if (space === undefined) continue;
    if (GLOBAL_OPS.has(op.op) && space !== 'gmem') return `${op.op} accesses global memory: '${r.name}' is ${space}; declare it with gmem ${r.name}[N]`;
    if (GLOBAL_OPS.has(op.op) && r.cta) return `'${r.name}' is global memory, one location per launch: it takes no @CTA`;
    if (!GLOBAL_OPS.has(op.op) && space === 'gmem') return `'${r.name}' is global memory (gmem): ${op.op} does not access it; use ld.global / st.global, ld.acquire / st.release, atom, red or spin`;
  }
  return null;
}
