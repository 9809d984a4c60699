import { describe, expect, test } from 'vitest';
import { check } from '../src/check/index.js';
import { parseSketch } from '../src/lang/index.js';
import { instantiate } from '../src/machine/program.js';

/** Report wording a new user tripped over: hang headlines, hints, aggregated arrives, index faults. */
function run(src: string, all = true) {
  const parsed = parseSketch(src, 't.mbk');
  expect(parsed.diagnostics).toEqual([]);
  return check(instantiate(parsed.kernel!), { all });
}

const lap2 = (firstParity: string) => `kernel lap2 arch=sm_90a
smem X[1] bytes=1024
barrier full[1] count=1
barrier empty[1] count=1
role producer warps=1 per=one:
    for i in range(0, 2):
        mbarrier.try_wait.parity empty[0], ${firstParity}
        mbarrier.arrive.expect_tx full[0], 2048
        cp.async.bulk.tensor X[0], 1024, full[0]
role consumer warps=1 per=one:
    for i in range(0, 2):
        mbarrier.try_wait.parity full[0], i & 1
        ld.shared X[0]
        mbarrier.arrive empty[0]
`;

describe('hang reports', () => {
  test('the headline is the barrier that misses bytes, not the empty barrier waiting on it', () => {
    const r = run(lap2('(i & 1) ^ 1'));
    const hang = r.hazards.find((h) => h.kind === 'hang')!;
    expect(hang.subject?.name).toBe('full[0]');
    // The consumer (bytes missing) comes first, then the producer waiting on the consumer's release.
    expect(hang.message).toBe('no agent or asynchronous unit can make progress: consumer in mbarrier.try_wait.parity full[0], i & 1; producer in mbarrier.try_wait.parity empty[0], (i & 1) ^ 1');
    expect(hang.details[0]).toContain('1024 bytes were expected (expect_tx) but no copy in flight will deliver them');
  });
  test('no producer-start hint for a wait that passed on that barrier before', () => {
    // Lap 2 of the producer waits parity 0 on a phase-0 empty barrier: correct, not the start bug.
    const src = lap2('(i & 1) ^ 1').replace('mbarrier.arrive.expect_tx full[0], 2048', 'mbarrier.arrive.expect_tx full[0], 1024 + 1024 * (i == 0)');
    const r = run(src);
    const hang = r.hazards.find((h) => h.kind === 'hang')!;
    expect(hang.details.join('\n')).toContain('producer blocked in mbarrier.try_wait.parity empty[0], (i & 1) ^ 1');
    expect(hang.details.join('\n')).not.toContain('hint:');
  });
  test('the hint stays for the producer-start bug itself', () => {
    const src = `kernel start arch=sm_90a
smem X[1] bytes=1024
barrier full[1] count=1
barrier empty[1] count=1
role producer warps=1 per=one:
    for i in range(0, 2):
        mbarrier.try_wait.parity empty[0], i & 1
        mbarrier.arrive.expect_tx full[0], 1024
        cp.async.bulk.tensor X[0], 1024, full[0]
role consumer warps=1 per=one:
    for i in range(0, 2):
        mbarrier.try_wait.parity full[0], i & 1
        ld.shared X[0]
        mbarrier.arrive empty[0]
`;
    const hang = run(src).hazards.find((h) => h.kind === 'hang')!;
    expect(hang.details.join('\n')).toContain('hint: parity 0 on a barrier still in phase 0 waits for its first completion');
  });
  test('tx-mismatch lists the copies, and says a multicast mask must cover the CTA', () => {
    const src = `kernel mc arch=sm_90a cluster=3
smem B[3] bytes=1024
barrier full[1] count=1
role producer warps=1 per=one:
    mbarrier.arrive.expect_tx full[0], 3072
    cp.async.bulk.tensor B[cta], 1024, full[0] multicast=3
role consumer warps=1 per=one:
    mbarrier.try_wait.parity full[0], 0
`;
    const tx = run(src).hazards.filter((h) => h.kind === 'tx-mismatch' && h.subject?.name === 'full[0]@c2');
    expect(tx.length).toBe(1);
    expect(tx[0]!.details).toContain('copies completing on full at line 6: cp.async.bulk.tensor B[cta], 1024, full[0], multicast=3 (its multicast mask must include CTA rank 2 for these bytes to reach full[0]@c2)');
  });
});

describe('model diagnostics in the words of the kernel', () => {
  test('a warp-aggregated arrive says so', () => {
    const src = `kernel warps arch=sm_90a
barrier empty[1] count=8
role consumer warps=4:
    mbarrier.arrive empty[0]
`;
    const r = run(src, false);
    const over = r.hazards.find((h) => h.kind === 'over-arrival')!;
    expect(over.message).toBe('mbarrier.arrive by the 32 threads of one warp of consumer.w0 (the H200 makes a warp\'s lanes one arrive with their summed count, 32), but only 8 of 8 arrivals are pending in phase 0');
  });
  test('an index out of range at run time names the index value and the array', () => {
    const src = `kernel idx arch=sm_90a
param N = 3
barrier b[1] count=1
role r warps=1 per=one:
    for i in range(0, N):
        mbarrier.arrive b[i]
`;
    const r = run(src, false);
    expect(r.hazards.map((h) => h.message)).toContain('mbarrier.arrive b[i]: index i = 1 is outside b[1] (0..0)');
  });
  test('a CTA rank out of range too', () => {
    const src = `kernel rank arch=sm_90a cluster=2
barrier b[1] count=1
role r warps=1 per=one:
    mbarrier.arrive b[0]@(cta + 1)
`;
    const r = run(src, false);
    expect(r.hazards.map((h) => h.message)).toContain('mbarrier.arrive b[0]@(cta + 1): CTA rank cta + 1 = 2 is outside the cluster of 2 (0..1)');
  });
});

describe('roles and named barriers', () => {
  test('a role of threads alone arrives once per warp it fills', () => {
    const src = `kernel t arch=sm_90a
barrier b[1] count=4
role r threads=128 per=warp:
    mbarrier.arrive b[0]
    mbarrier.try_wait.parity b[0], 0
`;
    expect(run(src).verdict).toBe('ok');
  });
  test('named barrier ids outside 0..15 and thread counts that are not whole warps are errors', () => {
    const bad = (op: string) => run(`kernel n arch=sm_90a\nrole r warps=2:\n    ${op}\n`, false).hazards.map((h) => `${h.kind}: ${h.message}`);
    expect(bad('bar.sync 16')).toEqual(['named-barrier: bar.sync 16: the named barrier id 16 is outside 0..15']);
    expect(bad('bar.sync 1, 33')).toEqual(['named-barrier: bar.sync 1, 33: the named barrier thread count 33 is not a positive multiple of 32']);
    expect(bad('bar.arrive 2, 0')).toEqual(['named-barrier: bar.arrive 2, 0: the named barrier thread count 0 is not a positive multiple of 32']);
    expect(run('kernel n arch=sm_90a\nrole r warps=2:\n    bar.sync 15, 64\n').verdict).toBe('ok');
  });
});

describe('static trip counts', () => {
  const ring = (o: { preArrive: boolean; consumerTrips: string }) => `kernel trips arch=sm_90a
param S = 2
param K = 6
barrier full[S] count=1
barrier empty[S] count=1
smem A[S] bytes=1024
role producer warps=1 per=one:
    for i in range(0, K):
        s = i % S
        mbarrier.try_wait.parity empty[s], ${o.preArrive ? '(i / S) & 1' : '((i / S) & 1) ^ 1'}
        mbarrier.arrive.expect_tx full[s], 1024
        cp.async.bulk.tensor A[s], 1024, full[s]
role consumer warps=1 per=one:
${o.preArrive ? '    for s in range(0, S):\n        mbarrier.arrive empty[s]\n' : ''}    for i in range(0, ${o.consumerTrips}):
        s = i % S
        mbarrier.try_wait.parity full[s], (i / S) & 1
        ld.shared A[s]
        mbarrier.arrive empty[s]
`;
  test('the consumer pre-arrive idiom and the producer-start idiom are both clean', () => {
    for (const preArrive of [true, false]) {
      const r = run(ring({ preArrive, consumerTrips: 'K' }));
      expect(r.verdict).toBe('ok');
      expect(r.warnings).toEqual([]);
    }
  });
  test('a consumer that skips the last tile is a trip mismatch on the data barrier', () => {
    const r = run(ring({ preArrive: false, consumerTrips: 'K - 1' }));
    const w = r.warnings.filter((x) => x.kind === 'trip-mismatch').map((x) => x.message);
    expect(w).toContain('consumer waits on full[1] 2 time(s), observing 2 phase(s), but the arrivals on it (3, count 1) complete 3 phase(s): the roles disagree about the number of trips');
  });
});

describe('a parity operand other than 0 or 1', () => {
  test('a wait on parity 2 that never passes says only bit 0 counts', () => {
    const src = `kernel p2 arch=sm_90a
barrier b[1] count=1
role r warps=1 per=one:
    mbarrier.try_wait.parity b[0], 2
`;
    const hang = run(src).hazards.find((h) => h.kind === 'hang')!;
    expect(hang.details.join('\n')).toContain('its parity operand is 2, not 0 or 1: only bit 0 is used (docs/HARDWARE.md, Conformance vectors), so it waits on parity 0');
  });
});
