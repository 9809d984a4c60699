/**
 * Operand rules that the PTX ISA puts on the values of some operations, in one place (the kernel
 * layer, which every other one may import) for every front end: the machine applies them when it
 * instantiates a kernel (machine/compile-role.ts: the values the launch's parameters make
 * constant), the sketch language to the constants it knows, at their operand, the builder to the
 * numbers it is given, and the PTX translation to the immediates it reads. Each function returns
 * what is wrong (a sentence for a located error), or null.
 */
import type { Expr, Op } from './ir.js';

/** The cp-sizes of a non-bulk `cp.async` (PTX ISA §9.7.9.25.3.1: `cp-size` is 4, 8 or 16 bytes). */
export const CP_ASYNC_SIZES: readonly number[] = [4, 8, 16];
/** Bytes of a `clusterlaunchcontrol.try_cancel` response (PTX ISA §9.7.13.17: a 16-byte opaque response). */
export const CLC_RESPONSE_BYTES = 16;

/** `cp.async DST, BYTES` copies BYTES per thread: 4, 8 or 16 (PTX ISA §9.7.9.25.3.1, `cp-size`). */
export function cpAsyncSizeProblem(bytes: number): string | null {
  return CP_ASYNC_SIZES.includes(bytes) ? null : `cp.async copies 4, 8 or 16 bytes per thread (its cp-size, PTX ISA §9.7.9.25.3.1), not ${bytes}`;
}

/** `cp.async.wait_group N`: N is a non-negative integer constant (PTX ISA §9.7.9.25.3.3). */
export function waitGroupProblem(n: number): string | null {
  return Number.isInteger(n) && n >= 0 ? null : `cp.async.wait_group N takes a non-negative integer (the most recent groups left pending, PTX ISA §9.7.9.25.3.3), not ${n}`;
}

/** A try_cancel response buffer of `bytes` bytes from its offset: at least 16 (PTX ISA §9.7.13.17). */
export function clcResponseProblem(name: string, bytes: number): string | null {
  return bytes >= CLC_RESPONSE_BYTES ? null : `clusterlaunchcontrol.try_cancel writes a 16-byte response (PTX ISA §9.7.13.17), but ${name} has ${bytes} byte${bytes === 1 ? '' : 's'} there`;
}

/**
 * The operand problem of `op` that instantiation can see (the values of `constOf`, null where an
 * operand is not constant; `bufBytes`: a buffer's element bytes) with its KernelError code: a
 * `cp.async` cp-size other than 4, 8 or 16 (PTX ISA §9.7.9.25.3.1; not where the PTX translation
 * folded the lanes into its bytes, `lanes`: it checks its immediate itself), a negative
 * `cp.async.wait_group` (§9.7.9.25.3.3), a try_cancel response buffer of fewer than 16 bytes
 * (§9.7.13.17). So a size that only a launch's parameters (`--set`) make wrong is rejected too.
 */
export function operandProblem(op: Op, constOf: (e: Expr) => number | null, bufBytes: (name: string) => number | undefined): { message: string; code: string } | null {
  if (op.op === 'cp.async' && !op.lanes) {
    const n = constOf(op.bytes);
    const why = n === null ? null : cpAsyncSizeProblem(n);
    if (why) return { message: why, code: 'cp-size' };
  }
  if (op.op === 'cp.async.wait_group' && !op.all) {
    const n = constOf(op.n);
    const why = n === null ? null : waitGroupProblem(n);
    if (why) return { message: why, code: 'wait-group' };
  }
  if (op.op === 'clc.try_cancel') {
    const bytes = bufBytes(op.dst.name);
    const off = op.dst.offset ? constOf(op.dst.offset) : 0;
    const why = bytes === undefined || off === null ? null : clcResponseProblem(op.dst.name, bytes - off);
    if (why) return { message: why, code: 'clc-response' };
  }
  return null;
}
