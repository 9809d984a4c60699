/**
 * The mbarrier object: phase, pending arrival count, expected arrival count and tx-count, with the
 * PTX operations as functions over plain data.
 *
 * Semantics: PTX ISA 9.1 §9.7.13.15 (contents §.2, phase §.4, tx tracking §.5, completion §.6,
 * arrive-on §.7, init §.9, inval §.10, expect_tx §.11, complete_tx §.12, arrive §.13,
 * arrive_drop §.14, cp.async.mbarrier.arrive §.15, test_wait/try_wait §.16, pending_count §.17),
 * as docs/SEMANTICS.md states it; undefined cases resolved by what an H200
 * does (docs/HARDWARE.md).
 *
 * Every mutating operation works in place on the `MBarrier` it is given (the machine owns its
 * state and copies it where it branches) and returns the number of phases it completed, or
 * {@link TRAP} when the H200 would trap the kernel. Undefined cases push a {@link Diagnostic} to the
 * optional `diags` array; they never throw. Pure copies: {@link cloneBarrier}.
 */
import { DIAG, H200_BEHAVIOUR, type DiagCode, type Diagnostic } from './diagnostics.js';

/** Largest arrival count (pending or expected): 2^20 − 1 (PTX ISA §9.7.13.15.2). */
export const MAX_COUNT = (1 << 20) - 1;
/** Largest tx-count in the PTX range: 2^20 − 1 bytes (PTX ISA §9.7.13.15.2). */
export const TX_MAX_SPEC = (1 << 20) - 1;
/** Largest tx-count the H200 accepts without trapping: +2^20 (docs/HARDWARE.md, Conformance vectors). */
export const TX_MAX_H200 = 1 << 20;
/** Smallest tx-count, spec and H200 alike: −(2^20 − 1) (docs/HARDWARE.md, Conformance vectors). */
export const TX_MIN = -((1 << 20) - 1);

/** Returned by an operation after which the H200 traps the kernel. */
export const TRAP = -1;

/** Lifecycle of the 8 bytes of shared memory (PTX ISA §9.7.13.15.3). */
export type BarrierStatus = 'uninit' | 'valid' | 'inval';

/**
 * An mbarrier's state.
 * - `phase`: the current phase number, unbounded (0, 1, 2 …); its parity (`phase & 1`) is what
 *   parity waits observe (bit 63 of the word, docs/HARDWARE.md, Encoding).
 * - `pending`: arrivals still needed for the current phase, 0 … 2^20 − 1.
 * - `expected`: the arrival count that re-arms `pending` at each phase completion, 1 … 2^20 − 1.
 * - `tx`: the signed tx-count in bytes still outstanding for the current phase (negative when
 *   `complete_tx` ran ahead of `expect_tx`).
 */
export interface MBarrier {
  status: BarrierStatus;
  phase: number;
  pending: number;
  expected: number;
  tx: number;
}

/**
 * The result an arrive returns (the `state` operand of `mbarrier.arrive`): on the H200 the upper
 * 32 bits of the word before the arrive (docs/HARDWARE.md, Encoding). The model keeps the absolute phase
 * too, so that a stale token can be diagnosed, and which barrier produced it.
 */
export interface Token {
  /** Identity of the barrier that produced the token (the machine's barrier key). */
  barrier: number;
  /** Absolute phase of the barrier before the arrive. */
  phase: number;
  /** Pending arrival count before the arrive. */
  pendingBefore: number;
  /** tx-count before the arrive, in bytes. */
  txBefore: number;
  /** True when the token came from a `.noComplete` arrive (the only legal input of pending_count). */
  noComplete: boolean;
}

/** A fresh, never-initialized barrier (the 8 bytes hold no barrier yet). */
export function newBarrier(): MBarrier {
  return { status: 'uninit', phase: 0, pending: 0, expected: 0, tx: 0 };
}

/** A copy of `b` (the state is plain data). */
export function cloneBarrier(b: MBarrier): MBarrier {
  return { status: b.status, phase: b.phase, pending: b.pending, expected: b.expected, tx: b.tx };
}

/** Phase parity: 0 in even phases, 1 in odd ones (PTX ISA §9.7.13.15.16). */
export function parity(b: MBarrier): 0 | 1 {
  return (b.phase & 1) as 0 | 1;
}

function snapshot(b: MBarrier): Diagnostic['state'] {
  return { phase: b.phase, pending: b.pending, expected: b.expected, tx: b.tx, status: b.status };
}

/** Builds a diagnostic of `code` for barrier `b` (state taken before the operation). */
export function diagnostic(code: DiagCode, message: string, b?: MBarrier): Diagnostic {
  const beh = H200_BEHAVIOUR[code];
  const d: Diagnostic = { code, severity: beh.severity, message, h200: beh.h200, trap: beh.trap };
  if (b) d.state = snapshot(b);
  return d;
}

function report(diags: Diagnostic[] | undefined, code: DiagCode, message: string, b: MBarrier): boolean {
  if (diags) diags.push(diagnostic(code, message, b));
  return H200_BEHAVIOUR[code].trap;
}

/** Completes the phase if pending == 0 and tx == 0 exactly (PTX ISA §9.7.13.15.6). Returns 1 if it did. */
function tryComplete(b: MBarrier): number {
  if (b.pending === 0 && b.tx === 0) {
    b.phase += 1;
    b.pending = b.expected;
    return 1;
  }
  return 0;
}

/** Checks that `b` is a valid barrier; reports `uninitialized` / `invalidated` otherwise. */
function requireValid(b: MBarrier, op: string, diags?: Diagnostic[]): boolean {
  if (b.status === 'valid') return true;
  if (b.status === 'uninit') report(diags, DIAG.uninitialized, `${op} on a barrier that was never initialized`, b);
  else report(diags, DIAG.invalidated, `${op} on a barrier after mbarrier.inval`, b);
  return false;
}

/**
 * `mbarrier.init [b], count` (PTX ISA §9.7.13.15.9): phase 0, pending = expected = count, tx 0.
 * `count` must lie in [1, 2^20 − 1]; outside it the H200 behaves as docs/HARDWARE.md, Conformance vectors, describes
 * (init(0): phase bit already set, pending 0; the model reproduces that). Re-init of a valid barrier
 * is reported (`reinit`) and overwrites the state, as the H200's SYNCS.EXCH does.
 */
export function init(b: MBarrier, count: number, diags?: Diagnostic[]): number {
  if (b.status === 'valid') report(diags, DIAG.reinit, 'mbarrier.init on a barrier that is still valid (no mbarrier.inval before it)', b);
  if (!Number.isInteger(count) || count < 1 || count > MAX_COUNT) {
    report(diags, DIAG.countRange, `mbarrier.init count ${count} is outside [1, ${MAX_COUNT}]`, b);
    b.status = 'valid';
    b.tx = 0;
    if (count === 0) {
      // H200 (conformance init_count0_ub; docs/HARDWARE.md, Conformance vectors): (2^20)<<11 overflows into bit 63 and
      // (2^20)<<1 into the tx field: phase parity 1, pending 0, expected field 0, tx-count −1.
      b.phase = 1;
      b.pending = 0;
      b.expected = 0;
      b.tx = -1;
    } else {
      b.phase = 0;
      b.pending = 0;
      b.expected = 0;
    }
    return 0;
  }
  b.status = 'valid';
  b.phase = 0;
  b.pending = count;
  b.expected = count;
  b.tx = 0;
  return 0;
}

/** `mbarrier.inval [b]` (PTX ISA §9.7.13.15.10): the memory stops being a barrier. */
export function inval(b: MBarrier, diags?: Diagnostic[]): number {
  if (!requireValid(b, 'mbarrier.inval', diags)) return TRAP;
  b.status = 'inval';
  return 0;
}

function addTx(b: MBarrier, delta: number, op: string, diags?: Diagnostic[]): boolean {
  const next = b.tx + delta;
  if (next > TX_MAX_SPEC || next < TX_MIN) {
    const trap = next > TX_MAX_H200 || next < TX_MIN;
    if (diags) {
      const d = diagnostic(DIAG.txRange, `${op} takes the tx-count to ${next} bytes, outside ±${TX_MAX_SPEC}`, b);
      d.trap = trap;
      if (!trap) d.h200 = `+2^20 exactly is accepted by the H200 without a trap (docs/HARDWARE.md, Conformance vectors); the PTX range ends at 2^20 − 1`;
      diags.push(d);
    }
    if (trap) return false;
  }
  b.tx = next;
  return true;
}

/**
 * `mbarrier.expect_tx [b], bytes` (PTX ISA §9.7.13.15.11): tx-count += bytes, no arrival.
 * On the H200 an expect_tx that brings a negative tx-count back to 0 with pending 0 completes the
 * phase (docs/HARDWARE.md, Conformance vectors); the spec does not list it as a trigger, so it is reported as
 * `expect-tx-completes` (warning).
 */
export function expectTx(b: MBarrier, bytes: number, diags?: Diagnostic[]): number {
  if (!requireValid(b, 'mbarrier.expect_tx', diags)) return TRAP;
  if (bytes >= 1 << 20 || bytes < 0) {
    report(diags, DIAG.txRange, `mbarrier.expect_tx operand ${bytes} bytes is ≥ 2^20 or negative`, b);
    return TRAP;
  }
  const before = cloneBarrier(b);
  if (!addTx(b, bytes, 'mbarrier.expect_tx', diags)) return TRAP;
  const done = tryComplete(b);
  if (done && diags) diags.push(diagnostic(DIAG.expectTxCompletes, `mbarrier.expect_tx(${bytes}) brought tx back to 0 with no arrival pending and completed phase ${before.phase}`, before));
  return done;
}

/**
 * `mbarrier.complete_tx [b], bytes`, and the complete-tx a `cp.async.bulk{.tensor}` performs as
 * its bytes land (PTX ISA §9.7.13.15.12, §9.7.9.25.4.1): tx-count −= bytes, then the completion check.
 */
export function completeTx(b: MBarrier, bytes: number, diags?: Diagnostic[]): number {
  if (!requireValid(b, 'complete_tx', diags)) return TRAP;
  if (!addTx(b, -bytes, 'complete_tx', diags)) return TRAP;
  return tryComplete(b);
}

/** Options of an arrive-on. */
export interface ArriveOptions {
  /** `.expect_tx` form: tx-count += this many bytes before the arrive (count is then 1). */
  expectTx?: number;
  /** `arrive_drop`: also lower the expected count by the arrive count, before the arrive-on. */
  drop?: boolean;
  /** `.noComplete`: the arrive must not complete the phase (UB if it does; H200 completes). */
  noComplete?: boolean;
}

/**
 * One arrive instruction (`mbarrier.arrive`, `.expect_tx`, `.noComplete`, `arrive_drop`) with
 * `count` arrivals applied atomically (PTX ISA §9.7.13.15.13/.14). `count > pending` is an
 * over-arrival: the H200 traps (docs/HARDWARE.md, Conformance vectors), so this returns {@link TRAP}. `token`, if given,
 * receives the state before the arrive.
 */
export function arrive(b: MBarrier, count: number, opts: ArriveOptions = {}, diags?: Diagnostic[], token?: Token): number {
  const op = opts.drop ? 'mbarrier.arrive_drop' : 'mbarrier.arrive';
  if (!requireValid(b, op, diags)) return TRAP;
  if (token) {
    token.phase = b.phase;
    token.pendingBefore = b.pending;
    token.txBefore = b.tx;
    token.noComplete = !!opts.noComplete;
  }
  if (!Number.isInteger(count) || count < 0 || count > MAX_COUNT) {
    report(diags, DIAG.countRange, `${op} count ${count} is outside [1, ${MAX_COUNT}]`, b);
    return count > MAX_COUNT ? TRAP : 0;
  }
  if (count === 0) {
    // H200 (conformance arrive_drop_to_zero_probe_completes_phase): no arrival, but the completion
    // check runs, so a phase with pending 0 and tx 0 (expected dropped to 0) completes.
    report(diags, DIAG.countRange, `${op} with count 0 (out of range; the H200 arrives nothing but runs the completion check)`, b);
    return tryComplete(b);
  }
  const before = diags ? cloneBarrier(b) : b;
  if (opts.expectTx !== undefined) {
    if (opts.expectTx >= 1 << 20 || opts.expectTx < 0) {
      report(diags, DIAG.txRange, `${op}.expect_tx operand ${opts.expectTx} bytes is ≥ 2^20 or negative`, b);
      return TRAP;
    }
    if (!addTx(b, opts.expectTx, `${op}.expect_tx`, diags)) return TRAP;
  }
  if (count > b.pending) {
    const why = b.pending === 0
      ? `all ${b.expected} arrivals of phase ${b.phase} are in and it waits on ${b.tx} tx bytes`
      : `only ${b.pending} of ${b.expected} arrivals are pending in phase ${b.phase}`;
    report(diags, DIAG.overArrival, `${op} with count ${count}, but ${why}`, before);
    return TRAP;
  }
  if (opts.drop) {
    b.expected -= count;
    if (b.expected <= 0) {
      report(diags, DIAG.dropToZero, `${op} lowers the expected arrival count to 0: later phases can never complete`, before);
      b.expected = 0;
    }
  }
  b.pending -= count;
  const done = tryComplete(b);
  if (done && opts.noComplete) report(diags, DIAG.noCompleteCompletes, `${op}.noComplete completed phase ${before.phase}`, before);
  return done;
}

/**
 * `n` separate arrive instructions of `count` arrivals each, in sequence: what one arrive executed
 * by `n` warps does (the lanes of one warp that execute an arrive together make ONE arrive with the
 * summed count, conformance vector arrive_threads_spill_3_lanes_on_pending_2; separate warps make
 * separate arrives, arrive_warps_*). Unlike one arrive of `n × count`, arrivals past the phase
 * boundary land in the next phase (reported as `arrival-spill`); an arrive whose count exceeds
 * pending traps (docs/HARDWARE.md, Conformance vectors).
 */
export function arriveEach(b: MBarrier, n: number, count: number, opts: ArriveOptions = {}, diags?: Diagnostic[]): number {
  if (n === 1) return arrive(b, count, opts, diags);
  const total = n * count;
  if (b.status === 'valid' && count >= 1 && total <= b.pending && !opts.drop && !opts.noComplete && opts.expectTx === undefined) {
    // Fast path: every arrival lands in the current phase.
    b.pending -= total;
    return tryComplete(b);
  }
  let completed = 0;
  const start = diags ? cloneBarrier(b) : b;
  const phase0 = b.phase;
  let spillAt = -1;
  for (let j = 0; j < n; j++) {
    const r = arrive(b, count, opts, diags);
    if (r === TRAP) return TRAP;
    completed += r;
    if (r > 0 && j < n - 1 && completed === 1) spillAt = j;
  }
  if (spillAt >= 0) {
    // The first spillAt + 1 arrive instructions complete phase0; the rest land in the phases after it.
    const rest = n - 1 - spillAt;
    const more = completed - 1;
    report(diags, DIAG.arrivalSpill, `${n} arrive instructions on a barrier with ${start.pending} pending: the first ${spillAt + 1} complete phase ${phase0}, the other ${rest} count toward phase ${phase0 + 1}${more > 0 ? ` and complete ${more === 1 ? `it` : `${more} phases (${phase0 + 1} to ${phase0 + more})`}` : ''}`, start);
  }
  return completed;
}

/**
 * `cp.async.mbarrier.arrive{.noinc} [b]` at issue time (PTX ISA §9.7.13.15.15): without `.noinc`
 * pending += 1 now (the asynchronous arrive later nets it out); with `.noinc` nothing happens now.
 */
export function cpAsyncArriveIssue(b: MBarrier, noinc: boolean, diags?: Diagnostic[]): number {
  if (!requireValid(b, 'cp.async.mbarrier.arrive', diags)) return TRAP;
  if (noinc) return 0;
  if (b.pending + 1 > MAX_COUNT) {
    report(diags, DIAG.pendingOverflow, `cp.async.mbarrier.arrive raises pending above ${MAX_COUNT}`, b);
    return 0;
  }
  b.pending += 1;
  return 0;
}

/**
 * `test_wait.parity` / `try_wait.parity` truth value (PTX ISA §9.7.13.15.16, docs/HARDWARE.md, Conformance vectors):
 * true iff the current phase parity differs from `parityOperand & 1` — the phase with that parity is
 * the immediately preceding, completed one. A fresh barrier passes parity 1 at once.
 */
export function testParity(b: MBarrier, parityOperand: number): boolean {
  return (b.phase & 1) !== (parityOperand & 1);
}

/**
 * Token `test_wait` / `try_wait` truth value. The H200 compares only the token's parity bit
 * (docs/HARDWARE.md, Conformance vectors), so a token two phases old aliases the current phase. `barrierId` is the barrier
 * waited on; a token from another barrier or two or more phases old is reported.
 */
export function testToken(b: MBarrier, barrierId: number, token: Token, diags?: Diagnostic[]): boolean {
  if (token.barrier !== barrierId) report(diags, DIAG.foreignToken, 'token wait with a token returned by an arrive on another barrier', b);
  else if (token.phase <= b.phase - 2) report(diags, DIAG.staleToken, `token from phase ${token.phase} while the barrier is in phase ${b.phase}`, b);
  return (b.phase & 1) !== (token.phase & 1);
}

/**
 * `mbarrier.pending_count` (PTX ISA §9.7.13.15.17): the pending count captured before the arrive
 * that produced `token` (docs/HARDWARE.md, Encoding). Only defined for `.noComplete` tokens. The H200 extracts
 * `2^20 − bits[62:43]` of the token, so a token taken with no arrival pending (its field is 0)
 * reads 2^20 = 1048576, not 0.
 */
export function pendingCount(token: Token, diags?: Diagnostic[]): number {
  if (!token.noComplete && diags) diags.push(diagnostic(DIAG.pendingCountToken, 'mbarrier.pending_count on a token not produced by a .noComplete arrive'));
  return token.pendingBefore === 0 ? 1 << 20 : token.pendingBefore;
}

/**
 * True when the barrier is valid and its current phase can no longer complete by arrivals alone:
 * pending == 0 and tx != 0 (waits on bytes), or expected == 0 (after a drop to zero).
 */
export function waitsOnTx(b: MBarrier): boolean {
  return b.status === 'valid' && b.pending === 0 && b.tx !== 0;
}
