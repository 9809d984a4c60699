/**
 * The bounds a launch is held to (the per-CTA resources of Hopper / Blackwell, and the sizes mbsim
 * simulates at most), the {@link KernelError} of a kernel that cannot be instantiated, and the two
 * helpers of its messages: a declaration's static expression evaluated (a fault is a
 * {@link KernelError}) and a count printed exactly.
 */
import { EvalFault } from '../kernel/arith.js';
import { evalExpr, showExpr } from '../kernel/expr.js';
import type { Expr, SrcLoc } from '../kernel/ir.js';

/** A kernel that cannot be instantiated: the message names the problem, `loc` where it is. */
export class KernelError extends Error {
  constructor(message: string, readonly loc?: SrcLoc, readonly code = 'kernel') {
    super(message);
  }
}

/** Most CTAs one simulation holds: 8 per SM of an H200 (132 SMs). */
export const MAX_CTAS = 1056;
/** Shared memory a CTA can use on Hopper / Blackwell: 227 KiB. */
export const MAX_SMEM_PER_CTA = 227 * 1024;
/** Tensor memory of an SM on Blackwell: 128 lanes × 512 columns × 4 bytes. */
export const MAX_TMEM_PER_CTA = 256 * 1024;
/** Threads a CTA can have: 1024. */
export const MAX_THREADS_PER_CTA = 1024;
/**
 * Most agents one program has: 32 per CTA of the largest launch (a warp of each of 32 warps in
 * {@link MAX_CTAS} CTAs). A CTA may have more (1024 one-thread roles), the launch as a whole not:
 * every agent is a record in every state the checker holds.
 */
export const MAX_AGENTS = MAX_CTAS * 32;
/**
 * Most mbarriers one program has over all its CTAs: 2^18 (each is an object of every state). A
 * CTA's own are bounded by shared memory (8 bytes each, {@link MAX_SMEM_PER_CTA}).
 */
export const MAX_BARRIERS = 1 << 18;
/**
 * Most buffer keys one program has over all its CTAs (declared elements and the byte ranges
 * accessed, views.ts): 2^22; the checker keeps tables indexed by them.
 */
export const MAX_BUFFER_KEYS = 1 << 22;

/** Tensor Memory columns of a CTA (PTX ISA §9.7.16.7.1: 128 lanes × 512 columns of 32 bits). */
export const TMEM_COLUMNS = 512;
/** Managed TMEM buffer elements a CTA may declare (one bit each in the agents' allocation masks). */
export const MAX_TMEM_SLOTS = 30;

/**
 * The value of `e`, an expression of `params` only (a size, a count, the cluster's shape); `what`
 * and `loc` name it in the {@link KernelError} of a fault or of a name that is not a parameter.
 */
export function evalStatic(e: Expr, params: Record<string, number>, what: string, loc?: SrcLoc): number {
  try {
    return evalExpr(e, (n) => params[n]);
  } catch (err) {
    if (err instanceof EvalFault) throw new KernelError(`${what}: ${err.message}`, loc, 'arith');
    throw new KernelError(`${what}: ${(err as Error).message} (only parameters may appear here)`, loc, 'static-expr');
  }
}

/**
 * A count for a message: with thousands separators, or `more than 9,007,199,254,740,991` past
 * 2^53 − 1, where a double no longer holds it exactly (a product of sizes would print rounded).
 */
export function countText(n: number): string {
  return n > Number.MAX_SAFE_INTEGER ? `more than ${Number.MAX_SAFE_INTEGER.toLocaleString('en-US')}` : n.toLocaleString('en-US');
}

/** A size for a message: its value, and the expression it came from when that is not a literal. */
export function sizeText(e: Expr, v: number): string {
  return e.k === 'num' ? String(v) : `${showExpr(e)} = ${v}`;
}
