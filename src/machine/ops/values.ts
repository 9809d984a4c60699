/**
 * Values that steer control flow (machine/values.ts has the memory layout and residency):
 *
 * - `choose` (a modeling construct, no PTX instruction): a nondeterministic integer in LO..HI.
 *   The agent issues one `pick` per alternative and waits; the first pick to progress writes its
 *   value into the variable and withdraws the others, so the checker, which explores every order
 *   of the asynchronous steps, explores every value; the simulator takes the lowest (a pick's
 *   time grows with its value), or the value `--set NAME=V` pinned.
 * - global memory (`gmem` arrays, one location per launch): weak `ld.global` / `st.global` (data
 *   accesses: two of them unordered, one a write, are a `race`, PTX ISA §8.4, §9.7.9.8, §9.7.9.11),
 *   strong loads and stores `.relaxed` / `.acquire` / `.release` at a scope, `atom` / `red`
 *   (PTX ISA §9.7.13.5, §9.7.13.6) and spin loops of strong loads (`spin.global`: `while (ld.acquire
 *   < k);`), which the machine runs as one blocking wait: a spin whose value never comes is a
 *   hang. Strong operations on one location never race each other (they are morally strong,
 *   PTX ISA §8.7). A read of a location nothing initialized for this launch is `global-uninit`.
 *
 * The happens-before the strong operations create is the interleaving's: an access after a spin
 * that passed comes after the store it observed in every schedule the checker explores. The
 * memory-model detector does not tell `.relaxed` from `.acquire` / `.release` on global locations
 * (docs/CHECK.md, "Values").
 */
import { add as addExact, sub as subExact } from '../../kernel/arith.js';
import { diagnostic } from '../../model/mbarrier.js';
import { DIAG } from '../../model/diagnostics.js';
import type { AtomOp, SpinCmp } from '../../kernel/ir.js';
import type { OpInstr } from '../program.js';
import { PICKED, PICKING, type AsyncOp, type MachineState, type StepOut } from '../state.js';
import { cellValue, UNINIT } from '../values.js';
import type { AsyncDef, OpCtx, OpDef, OpK } from './types.js';

/** Most alternatives one `choose` explores. */
export const MAX_CHOICES = 64;

const F = 'values';

/** The location `ins` names, or -1 after a fault. */
function cell(m: OpCtx, s: MachineState, a: number, ins: OpInstr, out: StepOut): number {
  const key = ins.buf!(s.agents[a]!.frame);
  if (key < 0) m.keyFault(s, a, out, ins, 'buffer');
  return key;
}

/** Reads location `key` for agent `a`, reporting `global-uninit` when nothing initialized it. */
export function readCell(m: OpCtx, s: MachineState, a: number, ins: OpInstr, out: StepOut, key: number): number {
  const v = s.mem[key]!;
  if (v === UNINIT) {
    m.diag(s, out, diagnostic(DIAG.globalUninit, `${ins.text}: reads ${m.program.bufferName(key)}, which nothing initialized for this launch (no init= on its gmem declaration and no store before this read)`), a, -1, -1, ins.loc, key);
  }
  return cellValue(v);
}

/** `old aop v` on small integers (C semantics, exact; PTX ISA §9.7.13.5 for `inc` / `dec`, and `cas`: `v` when `old` equals `compare`). */
export function atomResult(aop: AtomOp, old: number, v: number, compare = 0): number {
  switch (aop) {
    case 'cas': return old === compare ? v : old;
    case 'add': return addExact(old, v);
    case 'exch': return v;
    case 'min': return Math.min(old, v);
    case 'max': return Math.max(old, v);
    case 'inc': return old >= v ? 0 : old + 1;
    case 'dec': return old === 0 || old > v ? v : subExact(old, 1);
    case 'and': return Number(BigInt(old) & BigInt(v));
    case 'or': return Number(BigInt(old) | BigInt(v));
    case 'xor': return Number(BigInt(old) ^ BigInt(v));
  }
}

/** Whether `v cmp target` holds. */
export function spinDone(cmp: SpinCmp, v: number, target: number): boolean {
  switch (cmp) {
    case 'eq': return v === target;
    case 'ne': return v !== target;
    case 'ge': return v >= target;
    case 'gt': return v > target;
    case 'le': return v <= target;
    case 'lt': return v < target;
  }
}

/** A point access event of agent `a` to `key` (weak global accesses, the response read of a query). */
export function pointEvent(m: OpCtx, s: MachineState, a: number, ins: OpInstr, out: StepOut, key: number, rw: 'r' | 'w'): void {
  m.emitted(s);
  if (out.events) out.events.push({ e: 'access', t: s.now, buf: key, rw, proxy: 'generic', edge: 'point', agent: a, async: -1, loc: ins.loc });
}

/** `choose`: pinned → the value at once; else one pick per alternative (see the module comment). */
function execChoose(m: OpCtx, s: MachineState, a: number, ins: OpInstr, out: StepOut): boolean {
  const ag = s.agents[a]!;
  if (ag.sub === PICKED) {
    ag.sub = -1;
    return true;
  }
  const op = ins.op as OpK<'choose'>;
  const lo = ins.ints.lo!(ag.frame);
  const hi = ins.ints.hi!(ag.frame);
  const pin = m.program.pins[op.dest];
  if (hi < lo || hi - lo >= MAX_CHOICES || (pin !== undefined && (pin < lo || pin > hi))) {
    const why = hi < lo ? `the range ${lo}..${hi} is empty` : pin !== undefined && hi - lo < MAX_CHOICES ? `--set ${op.dest}=${pin} is outside ${lo}..${hi}` : `${hi - lo + 1} alternatives; mbsim explores at most ${MAX_CHOICES}`;
    m.fault(s, a, out, diagnostic(DIAG.chooseRange, `${ins.text}: ${why}`), ins.loc, -1);
    return false;
  }
  if (pin !== undefined || lo === hi) {
    ag.frame[ins.dest!] = pin ?? lo;
    return true;
  }
  const group = s.nextId;
  for (let v = lo; v <= hi; v++) m.newAsync(s, out, 'pick', a, m.program.agents[a]!.cta, -1, -1, null, ins.dest!, 0, 0, group, v, null, null, ins.loc);
  ag.sub = PICKING;
  return false;
}

/**
 * A pick in flight: withdraws the other picks of its group, then writes its value (a `choose`:
 * `bar` < 0) or lets `decide` act on it (a try_cancel's outcome, clc.ts).
 */
export function makePick(decide: (m: OpCtx, s: MachineState, o: AsyncOp, out: StepOut) => boolean): AsyncDef {
  return {
    kind: 'pick', family: F, label: 'choice', stream: null, bufAccess: null,
    progress(m, s, o, out) {
      const fl = s.inflight;
      for (let i = fl.length - 1; i >= 0; i--) {
        const y = fl[i]!;
        if (y.kind === 'pick' && y.group === o.group && y !== o) fl.splice(i, 1);
      }
      out.other = true;
      if (o.bar >= 0) return decide(m, s, o, out) ? 'done' : 'trap';
      const ag = s.agents[o.agent]!;
      ag.frame[o.bytes] = o.count;
      ag.sub = PICKED;
      return 'done';
    },
    touched: () => -1,
  };
}

const strongText = (name: string, op: { sem: string; scope?: string }) => `${name}${op.sem === 'weak' ? '' : `.${op.sem}`}${op.scope ? `.${op.scope}` : ''}`;

/** The value operations: `choose`, global loads, stores, atomics and spin loops. */
export const VALUE_OPS: readonly OpDef[] = [
  {
    op: 'choose', family: F, por: 'sync', sync: 'local', timing: 'choose', issues: ['pick'],
    enabled: (_m, _s, _a, _ins, ag) => ag.sub !== PICKING,
    exec: execChoose,
    opEvent: 'first',
    text: (op, t) => `choose ${op.dest} in ${t.expr(op.lo)}..${t.expr(op.hi)}`,
  } satisfies OpDef<'choose'>,
  {
    op: 'ld.global', family: F, por: 'sync', sync: 'access', access: 'r', timing: 'ld.global',
    exec(m, s, a, ins, out) {
      const key = cell(m, s, a, ins, out);
      if (key < 0) return false;
      pointEvent(m, s, a, ins, out, key, 'r');
      const v = readCell(m, s, a, ins, out, key);
      if (ins.dest !== undefined) s.agents[a]!.frame[ins.dest] = v;
      return true;
    },
    text: (op, t) => `${op.dest !== undefined ? `${op.dest} = ` : ''}ld.global ${t.ref(op.buf)}`,
  } satisfies OpDef<'ld.global'>,
  {
    op: 'st.global', family: F, por: 'sync', sync: 'access', access: 'w', timing: 'st.global',
    exec(m, s, a, ins, out) {
      const key = cell(m, s, a, ins, out);
      if (key < 0) return false;
      pointEvent(m, s, a, ins, out, key, 'w');
      s.mem[key] = ins.ints.value!(s.agents[a]!.frame);
      out.other = true;
      return true;
    },
    text: (op, t) => `st.global ${t.ref(op.buf)}, ${t.expr(op.value)}`,
  } satisfies OpDef<'st.global'>,
  {
    op: 'ld.strong', family: F, por: 'sync', sync: 'access', timing: 'ld.global',
    exec(m, s, a, ins, out) {
      const key = cell(m, s, a, ins, out);
      if (key < 0) return false;
      const v = readCell(m, s, a, ins, out, key);
      if (ins.dest !== undefined) s.agents[a]!.frame[ins.dest] = v;
      return true;
    },
    text: (op, t) => `${op.dest !== undefined ? `${op.dest} = ` : ''}${strongText('ld', op)}.global ${t.ref(op.buf)}`,
  } satisfies OpDef<'ld.strong'>,
  {
    op: 'st.strong', family: F, por: 'sync', sync: 'release', timing: 'st.global',
    exec(m, s, a, ins, out) {
      const key = cell(m, s, a, ins, out);
      if (key < 0) return false;
      s.mem[key] = ins.ints.value!(s.agents[a]!.frame);
      out.other = true;
      return true;
    },
    text: (op, t) => `${strongText('st', op)}.global ${t.ref(op.buf)}, ${t.expr(op.value)}`,
  } satisfies OpDef<'st.strong'>,
  {
    op: 'atom.global', family: F, por: 'sync', sync: 'release', timing: 'atom.global',
    exec(m, s, a, ins, out) {
      const key = cell(m, s, a, ins, out);
      if (key < 0) return false;
      const op = ins.op as OpK<'atom.global'>;
      const f = s.agents[a]!.frame;
      const old = readCell(m, s, a, ins, out, key);
      s.mem[key] = atomResult(op.aop, old, ins.ints.value!(f), ins.ints.compare ? ins.ints.compare(f) : 0);
      if (ins.dest !== undefined) f[ins.dest] = old;
      out.other = true;
      return true;
    },
    text: (op, t) => `${op.dest !== undefined ? `${op.dest} = ` : ''}${op.red ? 'red' : 'atom'}.${op.sem}${op.scope ? `.${op.scope}` : ''}.global.${op.aop} ${t.ref(op.buf)}, ${op.compare ? `${t.expr(op.compare)}, ` : ''}${t.expr(op.value)}`,
  } satisfies OpDef<'atom.global'>,
  {
    // The first step reads (and reports an uninitialized location); it blocks until the value is
    // as the loop wants, then the agent moves on: `sub` is 0 while it spins.
    op: 'spin.global', family: F, por: 'sync', sync: 'access', timing: 'spin.global', opEvent: 'first',
    enabled(m, s, a, ins, ag) {
      if (ag.sub < 0) return true;
      const key = ins.buf!(ag.frame);
      return key < 0 || spinDone((ins.op as OpK<'spin.global'>).cmp, cellValue(s.mem[key]!), ins.ints.target!(ag.frame));
    },
    exec(m, s, a, ins, out) {
      const key = cell(m, s, a, ins, out);
      if (key < 0) return false;
      const ag = s.agents[a]!;
      const v = ag.sub < 0 ? readCell(m, s, a, ins, out, key) : cellValue(s.mem[key]!);
      if (!spinDone((ins.op as OpK<'spin.global'>).cmp, v, ins.ints.target!(ag.frame))) {
        ag.sub = 0;
        return false;
      }
      ag.sub = -1;
      if (ins.dest !== undefined) ag.frame[ins.dest] = v;
      return true;
    },
    text: (op, t) => `${op.dest !== undefined ? `${op.dest} = ` : ''}spin.${op.sem}${op.scope ? `.${op.scope}` : ''}.${op.cmp} ${t.ref(op.buf)}, ${t.expr(op.target)}`,
  } satisfies OpDef<'spin.global'>,
] as OpDef[];
