import { describe, expect, test } from 'vitest';
import fc from 'fast-check';
import {
  arrive, arriveEach, cloneBarrier, completeTx, cpAsyncArriveIssue, expectTx, init, inval, MAX_COUNT, newBarrier,
  pendingCount, testParity, testToken, TRAP, TX_MIN, type MBarrier, type Token,
} from '../src/model/mbarrier.js';
import { DIAG, H200_BEHAVIOUR, type Diagnostic } from '../src/model/diagnostics.js';

const fresh = (count: number): MBarrier => {
  const b = newBarrier();
  init(b, count);
  return b;
};
const state = (b: MBarrier) => ({ phase: b.phase, pending: b.pending, expected: b.expected, tx: b.tx });
const codes = (d: Diagnostic[]) => d.map((x) => x.code);

describe('operations', () => {
  test('init sets phase 0, pending = expected = count, tx 0', () => {
    const b = fresh(3);
    expect(b.status).toBe('valid');
    expect(state(b)).toEqual({ phase: 0, pending: 3, expected: 3, tx: 0 });
  });

  test('arrive counts down and completes the phase at pending 0 and tx 0', () => {
    const b = fresh(2);
    expect(arrive(b, 1)).toBe(0);
    expect(state(b)).toEqual({ phase: 0, pending: 1, expected: 2, tx: 0 });
    expect(arrive(b, 1)).toBe(1);
    expect(state(b)).toEqual({ phase: 1, pending: 2, expected: 2, tx: 0 });
  });

  test('arrive with a count: init(4) arrive(3) leaves 1; arrive(4) completes a phase at once (FINDINGS A1)', () => {
    const b = fresh(4);
    arrive(b, 3);
    expect(b.pending).toBe(1);
    const c = fresh(4);
    expect(arrive(c, 4)).toBe(1);
    expect(c.phase).toBe(1);
  });

  test('arrive.expect_tx adds bytes before arriving: the seed mechanism (init 1, 4096 B, two 2048 B credits)', () => {
    const b = fresh(1);
    expect(arrive(b, 1, { expectTx: 4096 })).toBe(0);
    expect(state(b)).toEqual({ phase: 0, pending: 0, expected: 1, tx: 4096 });
    expect(completeTx(b, 2048)).toBe(0);
    expect(b.tx).toBe(2048);
    expect(completeTx(b, 2048)).toBe(1);
    expect(state(b)).toEqual({ phase: 1, pending: 1, expected: 1, tx: 0 });
  });

  test('expect_tx adds bytes without an arrival', () => {
    const b = fresh(1);
    expect(expectTx(b, 512)).toBe(0);
    expect(state(b)).toEqual({ phase: 0, pending: 1, expected: 1, tx: 512 });
  });

  test('complete_tx before expect_tx: tx goes negative, phase stays open (FINDINGS T3)', () => {
    const b = fresh(1);
    completeTx(b, 1024);
    expect(b.tx).toBe(-1024);
    expect(arrive(b, 1)).toBe(0); // pending 0 but tx != 0: not complete (T1)
    expect(b.phase).toBe(0);
  });

  test('arrive_drop lowers expected for later phases (FINDINGS A2)', () => {
    const b = fresh(3);
    arrive(b, 1, { drop: true });
    expect(state(b)).toEqual({ phase: 0, pending: 2, expected: 2, tx: 0 });
    arrive(b, 1);
    expect(arrive(b, 1)).toBe(1);
    expect(state(b)).toEqual({ phase: 1, pending: 2, expected: 2, tx: 0 });
  });

  test('arrive_drop that completes the phase re-arms with the reduced count', () => {
    const b = fresh(2);
    arrive(b, 1);
    expect(arrive(b, 1, { drop: true })).toBe(1);
    expect(state(b)).toEqual({ phase: 1, pending: 1, expected: 1, tx: 0 });
  });

  test('arrive.noComplete counts like an arrive with a count', () => {
    const b = fresh(4);
    const d: Diagnostic[] = [];
    expect(arrive(b, 2, { noComplete: true }, d)).toBe(0);
    expect(b.pending).toBe(2);
    expect(d).toEqual([]);
  });

  test('inval ends the barrier; init after inval works (FINDINGS M1)', () => {
    const b = fresh(1);
    expect(inval(b)).toBe(0);
    expect(b.status).toBe('inval');
    const d: Diagnostic[] = [];
    init(b, 2, d);
    expect(d).toEqual([]);
    expect(state(b)).toEqual({ phase: 0, pending: 2, expected: 2, tx: 0 });
  });

  test('test_wait.parity is true iff the current parity differs (FINDINGS P1)', () => {
    const b = fresh(1);
    expect(testParity(b, 1)).toBe(true);
    expect(testParity(b, 0)).toBe(false);
    arrive(b, 1);
    expect(testParity(b, 0)).toBe(true);
    expect(testParity(b, 1)).toBe(false);
  });

  test('token waits compare parity only: own token, p-1, p-2 aliases, p-3 (FINDINGS P3)', () => {
    const b = fresh(1);
    const toks: Token[] = [];
    for (let i = 0; i < 4; i++) {
      const t: Token = { barrier: 7, phase: 0, pendingBefore: 0, txBefore: 0, noComplete: false };
      arrive(b, 1, {}, undefined, t);
      toks.push(t);
    }
    // b is at phase 4 now; tokens are from phases 0,1,2,3.
    expect(b.phase).toBe(4);
    const d: Diagnostic[] = [];
    expect(testToken(b, 7, toks[3]!, d)).toBe(true); // p-1
    expect(d).toEqual([]);
    expect(testToken(b, 7, toks[2]!, d)).toBe(false); // p-2 aliases the current phase
    expect(codes(d)).toEqual([DIAG.staleToken]);
    expect(testToken(b, 7, toks[1]!)).toBe(true); // p-3
  });

  test('pending_count returns the pending count before the arrive (FINDINGS P4)', () => {
    const b = fresh(5);
    const seen: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t: Token = { barrier: 0, phase: 0, pendingBefore: 0, txBefore: 0, noComplete: true };
      arrive(b, 1, { noComplete: i < 4 }, undefined, t);
      seen.push(pendingCount(t));
    }
    expect(seen).toEqual([5, 4, 3, 2, 1]);
  });

  test('cp.async.mbarrier.arrive raises pending at issue; .noinc does not', () => {
    const b = fresh(1);
    cpAsyncArriveIssue(b, false);
    expect(b.pending).toBe(2);
    cpAsyncArriveIssue(b, true);
    expect(b.pending).toBe(2);
  });

  test('arriveEach: per-thread arrivals past the phase boundary spill into the next phase', () => {
    const b = fresh(2);
    const d: Diagnostic[] = [];
    expect(arriveEach(b, 3, 1, {}, d)).toBe(1);
    expect(state(b)).toEqual({ phase: 1, pending: 1, expected: 2, tx: 0 });
    expect(codes(d)).toEqual([DIAG.arrivalSpill]);
    expect(d[0]!.message).toBe('3 arrive instructions on a barrier with 2 pending: the first 2 complete phase 0, the other 1 count toward phase 1');
  });

  test('arriveEach: spilled arrivals that complete further phases say which', () => {
    const b = fresh(1);
    const d: Diagnostic[] = [];
    expect(arriveEach(b, 4, 1, {}, d)).toBe(4);
    expect(state(b)).toEqual({ phase: 4, pending: 1, expected: 1, tx: 0 });
    expect(d.map((x) => x.message)).toEqual(['4 arrive instructions on a barrier with 1 pending: the first 1 complete phase 0, the other 3 count toward phase 1 and complete 3 phases (1 to 3)']);
  });

  test('arriveEach fast path: 128 threads on a count-128 barrier complete one phase', () => {
    const b = fresh(128);
    expect(arriveEach(b, 128, 1)).toBe(1);
    expect(state(b)).toEqual({ phase: 1, pending: 128, expected: 128, tx: 0 });
  });
});

describe('diagnostics (one per code)', () => {
  const run = (f: (d: Diagnostic[]) => number) => {
    const d: Diagnostic[] = [];
    const r = f(d);
    return { r, d, codes: codes(d) };
  };

  test('over-arrival: count > pending traps (FINDINGS O1)', () => {
    const b = fresh(2);
    const { r, d } = run((x) => arrive(b, 3, {}, x));
    expect(r).toBe(TRAP);
    expect(d[0]).toMatchObject({ code: 'over-arrival', trap: true, severity: 'error', state: { phase: 0, pending: 2, expected: 2, tx: 0 } });
    expect(d[0]!.message).toBe('mbarrier.arrive with count 3, but only 2 of 2 arrivals are pending in phase 0');
  });

  test('over-arrival: arrive while pending 0 and the phase waits on tx traps', () => {
    const b = fresh(1);
    arrive(b, 1, { expectTx: 64 });
    const { r, d } = run((x) => arrive(b, 1, {}, x));
    expect(r).toBe(TRAP);
    expect(d[0]!.message).toBe('mbarrier.arrive with count 1, but all 1 arrivals of phase 0 are in and it waits on 64 tx bytes');
  });

  test('tx-range: beyond +2^20 traps, +2^20 exactly is reported but accepted (FINDINGS T8)', () => {
    const b = fresh(1);
    expectTx(b, (1 << 20) - 1);
    const { r, d } = run((x) => expectTx(b, 1, x));
    expect(r).toBe(0);
    expect(d[0]).toMatchObject({ code: 'tx-range', trap: false });
    expect(b.tx).toBe(1 << 20);
    const t = run((x) => expectTx(b, 1, x));
    expect(t.r).toBe(TRAP);
    expect(t.d[0]).toMatchObject({ code: 'tx-range', trap: true });
  });

  test('tx-range: below −(2^20 − 1) traps; an expect_tx operand ≥ 2^20 traps', () => {
    const b = fresh(1);
    completeTx(b, -TX_MIN);
    expect(b.tx).toBe(TX_MIN);
    expect(run((x) => completeTx(b, 16, x)).r).toBe(TRAP);
    expect(run((x) => expectTx(fresh(1), 1 << 20, x)).codes).toEqual(['tx-range']);
  });

  test('uninitialized: arrive on a never-initialized barrier traps (FINDINGS O4)', () => {
    const { r, codes: c } = run((x) => arrive(newBarrier(), 1, {}, x));
    expect(r).toBe(TRAP);
    expect(c).toEqual(['uninitialized']);
  });

  test('invalidated: arrive after inval', () => {
    const b = fresh(1);
    inval(b);
    expect(run((x) => arrive(b, 1, {}, x)).codes).toEqual(['invalidated']);
  });

  test('reinit: init of a valid barrier is reported and overwrites', () => {
    const b = fresh(2);
    arrive(b, 1);
    const { codes: c } = run((x) => init(b, 4, x));
    expect(c).toEqual(['reinit']);
    expect(state(b)).toEqual({ phase: 0, pending: 4, expected: 4, tx: 0 });
  });

  test('count-range: init(0) starts with parity 1 and pending 0 (FINDINGS O3)', () => {
    const b = newBarrier();
    const { codes: c } = run((x) => init(b, 0, x));
    expect(c).toEqual(['count-range']);
    expect(testParity(b, 0)).toBe(true);
    expect(run((x) => arrive(b, 1, {}, x)).r).toBe(TRAP);
  });

  test('count-range: init above 2^20 − 1; arrive count 0 is a no-op', () => {
    expect(run((x) => init(newBarrier(), MAX_COUNT + 1, x)).codes).toEqual(['count-range']);
    const b = fresh(2);
    const { r, codes: c } = run((x) => arrive(b, 0, {}, x));
    expect(r).toBe(0);
    expect(c).toEqual(['count-range']);
    expect(b.pending).toBe(2);
  });

  test('nocomplete-completes: the phase just completes (FINDINGS A3)', () => {
    const b = fresh(2);
    arrive(b, 1);
    const { r, codes: c } = run((x) => arrive(b, 1, { noComplete: true }, x));
    expect(r).toBe(1);
    expect(c).toEqual(['nocomplete-completes']);
  });

  test('expect-tx-completes: expect_tx bringing negative tx to 0 completes (FINDINGS T2)', () => {
    const b = fresh(1);
    completeTx(b, 32);
    arrive(b, 1);
    const { r, codes: c } = run((x) => expectTx(b, 32, x));
    expect(r).toBe(1);
    expect(c).toEqual(['expect-tx-completes']);
    expect(b.phase).toBe(1);
  });

  test('foreign-token: a token from another barrier compares parity only', () => {
    const b = fresh(1);
    const t: Token = { barrier: 1, phase: 0, pendingBefore: 1, txBefore: 0, noComplete: false };
    const d: Diagnostic[] = [];
    expect(testToken(b, 2, t, d)).toBe(false);
    expect(codes(d)).toEqual(['foreign-token']);
  });

  test('stale-token is reported (see the token test above for the value)', () => {
    const b = fresh(1);
    arrive(b, 1);
    arrive(b, 1);
    const d: Diagnostic[] = [];
    testToken(b, 0, { barrier: 0, phase: 0, pendingBefore: 1, txBefore: 0, noComplete: false }, d);
    expect(codes(d)).toEqual(['stale-token']);
  });

  test('drop-to-zero: later phases never complete and the next arrive traps (FINDINGS O2)', () => {
    const b = fresh(1);
    const { r, codes: c } = run((x) => arrive(b, 1, { drop: true }, x));
    expect(r).toBe(1);
    expect(c).toEqual(['drop-to-zero']);
    expect(state(b)).toEqual({ phase: 1, pending: 0, expected: 0, tx: 0 });
    expect(run((x) => arrive(b, 1, {}, x)).r).toBe(TRAP);
  });

  test('pending-count-token: pending_count of a token not from .noComplete', () => {
    const d: Diagnostic[] = [];
    expect(pendingCount({ barrier: 0, phase: 0, pendingBefore: 3, txBefore: 0, noComplete: false }, d)).toBe(3);
    expect(codes(d)).toEqual(['pending-count-token']);
  });

  test('pending-overflow: cp.async.mbarrier.arrive past 2^20 − 1', () => {
    const b = fresh(MAX_COUNT);
    expect(run((x) => cpAsyncArriveIssue(b, false, x)).codes).toEqual(['pending-overflow']);
  });

  test('every code has H200 behaviour text', () => {
    for (const code of Object.values(DIAG)) {
      expect(H200_BEHAVIOUR[code].h200.length).toBeGreaterThan(20);
    }
  });
});

describe('invariants (property tests)', () => {
  type Op = { k: 'arrive'; n: number } | { k: 'expect'; n: number } | { k: 'complete'; n: number } | { k: 'drop' };
  const opArb: fc.Arbitrary<Op> = fc.oneof(
    fc.record({ k: fc.constant('arrive' as const), n: fc.integer({ min: 1, max: 4 }) }),
    fc.record({ k: fc.constant('expect' as const), n: fc.integer({ min: 0, max: 4096 }) }),
    fc.record({ k: fc.constant('complete' as const), n: fc.integer({ min: 0, max: 4096 }) }),
    fc.record({ k: fc.constant('drop' as const) }),
  );

  test('ranges hold, phase never decreases, completion happens exactly at pending 0 and tx 0', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 6 }), fc.array(opArb, { maxLength: 40 }), (count, ops) => {
        const b = fresh(count);
        for (const op of ops) {
          const before = cloneBarrier(b);
          const d: Diagnostic[] = [];
          const r = op.k === 'arrive' ? arrive(b, op.n, {}, d) : op.k === 'expect' ? expectTx(b, op.n, d) : op.k === 'complete' ? completeTx(b, op.n, d) : arrive(b, 1, { drop: true }, d);
          if (r === TRAP) {
            expect(d.some((x) => x.trap)).toBe(true);
            return;
          }
          expect(b.phase).toBeGreaterThanOrEqual(before.phase);
          expect(b.phase - before.phase).toBe(r);
          if (r === 1) {
            expect(b.pending).toBe(b.expected);
            expect(b.tx).toBe(0);
          } else {
            expect(b.pending === 0 && b.tx === 0 && b.expected > 0).toBe(false);
          }
          expect(b.pending).toBeGreaterThanOrEqual(0);
          expect(b.pending).toBeLessThanOrEqual(MAX_COUNT);
          expect(b.tx).toBeGreaterThanOrEqual(TX_MIN);
          expect(b.tx).toBeLessThanOrEqual(1 << 20);
        }
      }),
    );
  });

  test('one arrive of n equals n arrives of 1 when n ≤ pending', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 64 }), fc.integer({ min: 1, max: 64 }), (count, n) => {
        fc.pre(n <= count);
        const a = fresh(count);
        const b = fresh(count);
        arrive(a, n);
        for (let i = 0; i < n; i++) arrive(b, 1);
        expect(state(a)).toEqual(state(b));
      }),
    );
  });

  test('the order of complete_tx credits does not matter for completion (sum reaches expectation)', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 64 }).map((x) => x * 16), { minLength: 1, maxLength: 8 }), fc.integer(), (chunks, seed) => {
        const total = chunks.reduce((x, y) => x + y, 0);
        const order = [...chunks].sort((x, y) => ((x * 31 + seed) % 7) - ((y * 31 + seed) % 7));
        const b = fresh(1);
        arrive(b, 1, { expectTx: total });
        let done = 0;
        for (const c of order) done += completeTx(b, c);
        expect(done).toBe(1);
        expect(b.phase).toBe(1);
      }),
    );
  });

  test('parity waits: exactly one of parity 0 and parity 1 passes at any time', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 4 }), fc.integer({ min: 0, max: 20 }), (count, arrivals) => {
        const b = fresh(count);
        for (let i = 0; i < arrivals; i++) arrive(b, 1);
        expect(testParity(b, 0) !== testParity(b, 1)).toBe(true);
        expect(b.phase).toBe(Math.floor(arrivals / count));
      }),
    );
  });
});
