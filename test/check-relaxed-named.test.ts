import { describe, expect, test } from 'vitest';
import { traceRaces, verdictUnder } from './support/relaxed-verdicts.js';

/**
 * A named barrier (`bar.sync`, `bar.arrive`, `barrier.sync`) orders each participant's earlier
 * accesses before the other participants' later ones (PTX ISA §9.7.13.1), but it is neither a
 * release on an mbarrier nor an acquire of one (§8.8): a leader warp's `.relaxed` arrive after it
 * releases the other warps' reads only with a release fence after the barrier (cumulativity,
 * §8.9), and a leader's `.relaxed` wait with no acquire fence before the barrier leaves the other
 * warps unordered after the phase's releases. The trial sketches c55-c69 (docs/CHECK.md, "Memory
 * model"; examples/bugs/M10.mbk).
 */
/** Error kinds with subjects, with every reduction setting (they must agree). */
const verdict = (src: string) => verdictUnder(src, [{}, { por: false, symmetry: false }, { por: true, symmetry: false }, { por: false, symmetry: true }]);

/** A TMA producer and a 4-warp consumer whose loop body is `body` (indented by 8). */
const leader = (body: string, consumerBarrier = 'empty count=1') => `kernel k arch=sm_90a
param K = 2
barrier full count=1
barrier ${consumerBarrier}
smem A bytes=4096
role producer warps=1 per=one:
    for i in range(0, K):
        mbarrier.try_wait.parity empty, (i & 1) ^ 1
        mbarrier.arrive.expect_tx full, 4096
        cp.async.bulk.tensor A, 4096, full
role consumer warps=4:
    for i in range(0, K):
${body.trim().split('\n').map((l) => `        ${l}`).join('\n')}
`;
const acquired = `if warp == 0:
    mbarrier.try_wait.parity.relaxed.cta full, i & 1
    fence.acq_rel.cta
bar.sync 1, 128`;

describe('release side: a leader warp frees the stage after a bar.sync', () => {
  test('c59: warps 1..3 read, bar.sync, relaxed arrive with no fence: the refill races with their reads', () => {
    const src = leader(`${acquired}
if warp != 0:
    ld.shared A
bar.sync 1, 128
if warp == 0:
    mbarrier.arrive.relaxed.cta empty per=one`);
    expect(verdict(src)).toEqual(['race A']);
  });

  test('c58: the release fence before the bar.sync covers only the leader\'s own read', () => {
    const src = leader(`${acquired}
ld.shared A
if warp == 0:
    fence.acq_rel.cta
bar.sync 1, 128
if warp == 0:
    mbarrier.arrive.relaxed.cta empty per=one`);
    expect(verdict(src)).toEqual(['race A']);
  });

  test('c57: every warp reads, relaxed arrive with no fence: race', () => {
    expect(verdict(leader(`${acquired}
ld.shared A
bar.sync 1, 128
if warp == 0:
    mbarrier.arrive.relaxed.cta empty per=one`))).toEqual(['race A']);
  });

  test('c55: a release fence after the bar.sync, then the relaxed arrive (or a release arrive): OK', () => {
    for (const tail of ['fence.acq_rel.cta\n    mbarrier.arrive.relaxed.cta empty per=one', 'fence.release.cta\n    mbarrier.arrive.relaxed.cta empty per=one', 'mbarrier.arrive empty per=one']) {
      expect(verdict(leader(`${acquired}
ld.shared A
bar.sync 1, 128
if warp == 0:
    ${tail}`))).toEqual([]);
    }
  });

  test('bar.arrive by the readers, bar.sync by the leader: the same two verdicts', () => {
    const body = (fence: string) => `${acquired}
if warp != 0:
    ld.shared A
    bar.arrive 2, 128
if warp == 0:
    bar.sync 2, 128
${fence}    mbarrier.arrive.relaxed.cta empty per=one`;
    expect(verdict(leader(body('')))).toEqual(['race A']);
    expect(verdict(leader(body('    fence.acq_rel.cta\n')))).toEqual([]);
  });

  test('barrier.sync (unaligned) orders like bar.sync', () => {
    const body = (fence: string) => `${acquired.replace('bar.sync', 'barrier.sync')}
if warp != 0:
    ld.shared A
barrier.sync 1, 128
if warp == 0:
${fence}    mbarrier.arrive.relaxed.cta empty per=one`;
    expect(verdict(leader(body('')))).toEqual(['race A']);
    expect(verdict(leader(body('    fence.acq_rel.cta\n')))).toEqual([]);
  });

  test('c66 / c67: a relaxed arrive per warp, without / with a release fence (no named barrier)', () => {
    const body = (fence: string) => `mbarrier.try_wait.parity full, i & 1
ld.shared A
${fence}mbarrier.arrive.relaxed.cta empty per=warp`;
    expect(verdict(leader(body(''), 'empty count=4'))).toEqual(['race A']);
    expect(verdict(leader(body('fence.release.cta\n'), 'empty count=4'))).toEqual([]);
  });

  test('a relaxed arrive per warp, each fenced before a bar.sync: the barrier does not undo their own release patterns', () => {
    expect(verdict(leader(`mbarrier.try_wait.parity full, i & 1
ld.shared A
fence.release.cta
bar.sync 1, 128
mbarrier.arrive.relaxed.cta empty per=warp`, 'empty count=4'))).toEqual([]);
  });
});

describe('acquire side: a leader warp waits for the stage before a bar.sync', () => {
  const tail = `bar.sync 1, 128
if warp == 0:
    mbarrier.arrive empty per=one`;
  test('c69: relaxed wait with no acquire fence, bar.sync, warps 1..3 read: race with the TMA write', () => {
    const src = leader(`if warp == 0:
    mbarrier.try_wait.parity.relaxed.cta full, i & 1
bar.sync 1, 128
if warp != 0:
    ld.shared A
${tail}`);
    expect(verdict(src)).toEqual(['race A']);
    expect(traceRaces(src)).toBeGreaterThan(0);
  });

  test('c56: the acquire fence after the bar.sync orders only the leader', () => {
    const src = leader(`if warp == 0:
    mbarrier.try_wait.parity.relaxed.cta full, i & 1
bar.sync 1, 128
if warp == 0:
    fence.acq_rel.cta
ld.shared A
${tail}`);
    expect(verdict(src)).toEqual(['race A']);
    // Only the leader reads: ordered by its own acquire pattern.
    expect(verdict(src.replace('ld.shared A', 'if warp == 0:\n            ld.shared A'))).toEqual([]);
  });

  test('only the leader reads after its own acquire fence; the warps acquire the last phase themselves before reading: OK', () => {
    // What the leader's relaxed wait passed to warps 1..3 at a bar.sync is forgotten at their next one.
    expect(verdict(leader(`if warp == 0:
    mbarrier.try_wait.parity.relaxed.cta full, i & 1
bar.sync 1, 128
if warp == 0:
    fence.acq_rel.cta
    ld.shared A
    mbarrier.arrive empty per=one`).replace('param K = 2', 'param K = 1') + `    mbarrier.try_wait.parity full, 0
    bar.sync 1, 128
    ld.shared A
`)).toEqual([]);
  });

  test('the acquire fence before the bar.sync (or an acquire wait) orders every warp', () => {
    for (const wait of ['mbarrier.try_wait.parity.relaxed.cta full, i & 1\n    fence.acq_rel.cta', 'mbarrier.try_wait.parity full, i & 1']) {
      expect(verdict(leader(`if warp == 0:
    ${wait}
bar.sync 1, 128
ld.shared A
${tail}`))).toEqual([]);
    }
  });
});
