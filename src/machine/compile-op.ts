/**
 * One operation statement of a role compiled to its instruction (compile-role.ts): its operands
 * checked (memory space, the PTX ISA's operand limits, a CTA pair for `.cta_group::2`, TMEM
 * allocation of `cols=` buffers, a wait's parity or token, `per=` inside `elect`), its integer
 * operands compiled, its references resolved to key functions, its token and destination slots,
 * its numeric code; in a role run one agent per warp, a one-thread operation is guarded to run on
 * warp 0 (its elected lane). Errors are {@link KernelError}s at the operation.
 */
import { memorySpaceProblem } from './values.js';
import { operandProblem } from '../kernel/op-limits.js';
import type { CompiledExpr } from '../kernel/expr.js';
import type { Expr, Op, RoleDecl, SrcLoc } from '../kernel/ir.js';
import { opText } from './optext.js';
import { OPC } from './ops/index.js';
import { KernelError, SINGLE_THREAD_OPS, WARP_SLOT, type BufferInfo, type Instr, type OpInstr } from './program.js';
import type { RoleFrame } from './role-frame.js';
import type { RefKeys } from './ref-keys.js';

/** What compiling one role's operations shares: the role, its frame and key functions, the code so far. */
export interface OpCompile {
  readonly role: RoleDecl;
  readonly frame: RoleFrame;
  readonly keys: RefKeys;
  readonly bufByName: Map<string, BufferInfo>;
  /** The scalar arrays (an operation's text names them without an index). */
  readonly scalars: Set<string>;
  readonly clusterSize: number;
  /** The role runs one agent per warp (roles.ts `roleSplits`). */
  readonly split: boolean;
  /** The next operation's unique id over the program. */
  readonly uids: { next: number };
  /** The role's code so far: the instruction (and its guard) is appended. */
  readonly code: Instr[];
}

/**
 * Compiles operation `op` at `loc` into `c.code` (see the module comment). `inElect`: inside an
 * `elect` block (the operation is one thread's).
 * `warpScoped`: the operation sits under an `if` whose condition reads `warp` or `warpgroup`
 * (directly or through a variable computed from them): the sketch has chosen the warps that run
 * it, so one thread's operation is the elected lane of each warp that reaches it, as PTX's
 * `if (warp_idx == k && elect_one_sync())`, not warp 0's alone.
 */
export function emitOp(c: OpCompile, op: Op, loc: SrcLoc, inElect: boolean, warpScoped: boolean): void {
  const { role: r, frame, bufByName, scalars, clusterSize, split, uids, code } = c;
  const { constOf, cx, declare, declared, slots } = frame;
  const { barKey, bufKey } = c.keys;
  const written = 'per' in op ? op.per : undefined;
  if (inElect && written && written !== 'one') {
    throw new KernelError(`role ${r.name}: ${op.op} per=${written} inside elect: only the elected thread runs the block, so the operation would be one thread's`, loc, 'per-in-elect');
  }
  const spaceWhy = memorySpaceProblem(op, (n) => bufByName.get(n)?.space);
  if (spaceWhy) throw new KernelError(spaceWhy, loc, 'memory-space');
  const bad = operandProblem(op, constOf, (n) => bufByName.get(n)?.bytes);
  if (bad) throw new KernelError(bad.message, loc, bad.code);
  const ints: Record<string, CompiledExpr> = {};
  const ins: OpInstr = { i: 'op', op, per: inElect ? 'one' : ('per' in op && op.per) || r.per, loc, ints, text: opText(op, scalars), opc: OPC[op.op], uid: uids.next++ };
  for (const key of ['count', 'expectTx', 'bytes', 'parity', 'n', 'id', 'threads', 'cycles', 'multicast', 'chunks', 'value', 'lo', 'hi', 'target', 'compare'] as const) {
    const e = (op as Record<string, unknown>)[key];
    if (e && typeof e === 'object') ints[key] = cx(e as Expr, loc);
  }
  if ('bar' in op) ins.bar = barKey(op.bar, loc);
  const opBytes = 'bytes' in op ? op.bytes : undefined;
  if ('dst' in op) ins.buf = bufKey(op.dst, loc, opBytes);
  if ('src' in op) {
    // A copy between two buffers (tcgen05.cp: shared memory → TMEM; shared::cta → shared::cluster): `buf` is its destination, `reads` its source.
    if ('dst' in op) ins.reads = [bufKey(op.src, loc, opBytes)];
    else ins.buf = bufKey(op.src, loc, opBytes);
  }
  if ((op.op === 'tcgen05.mma' || op.op === 'tcgen05.alloc' || op.op === 'tcgen05.dealloc' || op.op === 'tcgen05.relinquish_alloc_permit') && op.pair && clusterSize % 2 !== 0) {
    const launch = clusterSize === 1 ? '; this launch is not a cluster launch' : '';
    throw new KernelError(`${op.op}.cta_group::2 runs on a CTA pair: the cluster has ${clusterSize} CTA${clusterSize === 1 ? '' : 's'}, it needs an even number (ranks 2p and 2p + 1 of a cluster form a pair${launch}; write cluster=2 on the kernel line)`, loc, 'cta-pair');
  }
  if ((op.op === 'tcgen05.alloc' || op.op === 'tcgen05.dealloc') && bufByName.get(op.buf.name)?.cols === undefined) {
    throw new KernelError(`${op.op} ${op.buf.name}: only a TMEM buffer declared with cols=N is allocated (tmem ${op.buf.name}[...] bytes=... cols=N)`, loc, 'tmem-cols');
  }
  if ('buf' in op) ins.buf = bufKey(op.buf, loc, opBytes);
  if ('acc' in op) ins.buf = bufKey(op.acc, loc);
  if ('reads' in op) ins.reads = op.reads.map((x) => bufKey(x, loc));
  if ('token' in op && op.token !== undefined) {
    if (op.op === 'mbarrier.arrive') ins.token = declare(op.token, loc);
    else {
      if (!declared.has(op.token)) throw new KernelError(`token variable '${op.token}' is used before an arrive sets it`, loc, 'unknown-name');
      ins.token = slots.indexOf(op.token);
    }
  }
  if ('dest' in op && op.dest !== undefined) ins.dest = declare(op.dest, loc);
  if (op.op === 'mbarrier.wait' && op.parity === undefined && op.token === undefined) {
    throw new KernelError('a wait needs a phase parity or a token', loc, 'wait-operand');
  }
  // In a role that runs one agent per warp, one thread of the role is warp 0's elected lane:
  // the other warps step over the operation (unless the role's code is run as written, or a
  // condition on the warp chose the warps that reach it).
  const guard: Instr | null = split && !r.asWritten && !warpScoped && (ins.per === 'one' || SINGLE_THREAD_OPS.has(op.op))
    ? { i: 'jz', e: (f) => (f[WARP_SLOT] === 0 ? 1 : 0), to: -1, loc, src: { k: 'bin', op: '==', a: { k: 'var', name: 'warp' }, b: { k: 'num', v: 0 } } }
    : null;
  if (guard) code.push(guard);
  code.push(ins);
  if (guard) (guard as { to: number }).to = code.length;
}
