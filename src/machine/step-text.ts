/**
 * The text of an operation as one agent executes it in one state: the one rendering of a step that
 * the hang explanation (hang.ts), the checker's counterexample traces, the simulator's timeline
 * labels and the web explorer share. An operation of a role run as written (`RoleDecl.asWritten`:
 * a front end's instructions, PTX, whose operands are its registers) says nothing with its source-like text
 * (`mbarrier.arrive.expect_tx empty[(%r12 - 10240) / 8], %r11`): there every operand is written
 * with its value in the agent's frame — the barrier and buffer element it names (a byte range of an
 * element as `smem[1][8192:16384]`), the parity, the byte count, the arrival count —
 * `mbarrier.arrive.expect_tx empty[0], 16384 B`. Any other role keeps its text as written.
 */
import { evalExpr, showExpr } from '../kernel/expr.js';
import type { BarRef, BufRef, Expr, Op } from '../kernel/ir.js';
import { opDef } from './ops/index.js';
import type { KeyFn, OpInstr, Program } from './program-types.js';
import type { MachineState } from './state.js';

/**
 * Whether agent `a`'s operands are a front end's registers: its role runs as written
 * (`RoleDecl.asWritten`, set by the PTX front end only), so {@link stepText} writes their values.
 */
export function registerOperands(p: Program, a: number): boolean {
  const info = p.agents[a];
  return info !== undefined && p.roles[info.role]!.decl.asWritten === true;
}

/** Slot of each variable name, per role's slot list (built once per list). */
const SLOTS = new WeakMap<readonly string[], Map<string, number>>();

function slotMap(slots: readonly string[]): Map<string, number> {
  let m = SLOTS.get(slots);
  if (!m) {
    m = new Map();
    for (let i = slots.length - 1; i >= 0; i--) m.set(slots[i]!, i);
    SLOTS.set(slots, m);
  }
  return m;
}

/** The key function compiled for reference `r` of `op` (compile-role.ts: `dst`, `src`, `buf`, `acc` and `reads`), or undefined. */
function keyFnOf(op: Op, ins: OpInstr, r: BarRef | BufRef): KeyFn | undefined {
  const o = op as unknown as Record<string, unknown>;
  if (r === o.bar) return ins.bar;
  if (r === o.dst || r === o.buf || r === o.acc) return ins.buf;
  if (r === o.src) return 'dst' in o ? ins.reads?.[0] : ins.buf;
  const reads = o.reads;
  if (Array.isArray(reads)) {
    const i = reads.indexOf(r);
    if (i >= 0) return ins.reads?.[i];
  }
  return undefined;
}

/** How a resolved integer operand is written, by its field in the operation. */
function labelled(field: string | undefined, v: number): string {
  switch (field) {
    case 'parity': return v === 0 || v === 1 ? `parity ${v}` : `parity ${v & 1} (operand ${v})`;
    case 'bytes': case 'expectTx': return `${v} B`;
    case 'count': return `count ${v}`;
    default: return String(v);
  }
}

/**
 * The text of operation `ins` that agent `a` rests on in `s` (before it runs), as the module
 * comment says: `ins.text` unless the agent's operands are registers ({@link registerOperands}); then each reference as the
 * name of the key it resolves to (`Program.barrierName` / `bufferName`), each integer operand as its
 * value (`parity 1`, `16384 B`, `count 32`), a token wait's token as the phase it was taken in.
 * An operand whose evaluation faults or is out of range keeps its written form: the step reports it.
 */
export function stepText(p: Program, s: MachineState, a: number, ins: OpInstr): string {
  if (!registerOperands(p, a)) return ins.text;
  const ag = s.agents[a];
  const info = p.agents[a];
  if (!ag || !info) return ins.text;
  const frame = ag.frame;
  const slots = slotMap(p.roles[info.role]!.slots);
  const env = (n: string): number | undefined => {
    const i = slots.get(n);
    return i !== undefined ? frame[i] : Object.hasOwn(p.params, n) ? p.params[n] : undefined;
  };
  let op = ins.op;
  const fields = new Map<Expr, string>();
  for (const [k, e] of Object.entries(op as unknown as Record<string, unknown>)) if (e && typeof e === 'object' && 'k' in e) fields.set(e as Expr, k);
  const value = (e: Expr): number | undefined => {
    try {
      return evalExpr(e, env);
    } catch (err) {
      // A fault (EvalFault) or a name the frame lacks: the operand keeps its written form.
      if (err instanceof Error) return undefined;
      throw err;
    }
  };
  const expr = (e: Expr): string => {
    const x = value(e);
    return x === undefined ? showExpr(e) : labelled(fields.get(e), x);
  };
  const ref = (r: BarRef | BufRef): string => {
    const fn = keyFnOf(op, ins, r);
    const key = fn ? fn(frame) : -1;
    if (key >= 0) return 'bar' in op && r === (op as { bar?: unknown }).bar ? p.barrierName(key) : p.bufferName(key);
    const idx = value(r.index);
    return `${r.name}[${idx ?? showExpr(r.index)}]`;
  };
  if (op.op === 'mbarrier.wait' && op.token !== undefined) op = { ...op, token: `token of phase ${ag.tokens?.[ins.token!]?.phase ?? 0}` };
  return opDef(op.op).text(op as never, { ref, expr });
}
