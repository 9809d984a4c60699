import { describe, expect, test } from 'vitest';
import { traceRaces, verdictUnder } from './support/relaxed-verdicts.js';

/**
 * A release orders the accesses before it only before what synchronizes with its own location
 * (PTX ISA §8.8, release patterns): a release arrive on one barrier followed by a `.relaxed` arrive
 * on another releases nothing to the second one's waiters, while a release followed by a relaxed
 * arrive on the same barrier is a release pattern. Checked by the search's detector (every
 * reduction setting) and by the trace's vector clocks.
 */
/** Error kinds with subjects, with all reductions and with none (they must agree). */
const verdict = (src: string) => verdictUnder(src, [{}, { por: false, symmetry: false }]);

/** The producer stores A, arrives on `side` (`first`) then on `full` (`second`); the consumer waits on full and reads A. */
const twoBarriers = (first: string, second: string, between = '') => `kernel k arch=sm_90a
barrier full count=1
barrier side count=1
smem A bytes=4096
role producer warps=1 per=one:
    st.shared A
    ${first}
${between ? `    ${between}\n` : ''}    ${second}
role watcher warps=1 per=one:
    mbarrier.try_wait.parity side, 0
role consumer warps=1 per=one:
    mbarrier.try_wait.parity full, 0
    ld.shared A
`;

describe('a release on another barrier does not release to this one', () => {
  test('release arrive on side, relaxed arrive on full: the consumer\'s read races', () => {
    const src = twoBarriers('mbarrier.arrive side', 'mbarrier.arrive.relaxed full');
    expect(verdict(src)).toEqual(['race A']);
    expect(traceRaces(src)).toBe(1);
  });

  test('its twins are OK: a release arrive on full, a release fence before the relaxed arrive, both release', () => {
    for (const src of [
      twoBarriers('mbarrier.arrive.relaxed side', 'mbarrier.arrive.release full'),
      twoBarriers('mbarrier.arrive side', 'mbarrier.arrive.relaxed full', 'fence.acq_rel.cta'),
      twoBarriers('mbarrier.arrive side', 'mbarrier.arrive full'),
    ]) {
      expect(verdict(src)).toEqual([]);
      expect(traceRaces(src)).toBe(0);
    }
  });

  test('both arrives relaxed: a race (no release anywhere)', () => {
    expect(verdict(twoBarriers('mbarrier.arrive.relaxed side', 'mbarrier.arrive.relaxed full'))).toEqual(['race A']);
  });

  test('a named barrier\'s release does not reach full\'s waiters either', () => {
    const src = (sync: string) => `kernel k arch=sm_90a
barrier full count=1
smem A bytes=4096
role producer warps=1 per=one:
    st.shared A
    ${sync}
    mbarrier.arrive.relaxed full
role consumer warps=1 per=one:
    mbarrier.try_wait.parity full, 0
    ld.shared A
`;
    expect(verdict(src('bar.sync 1, 32'))).toEqual(['race A']);
    expect(verdict(src('fence.acq_rel.cta'))).toEqual([]);
  });

  test('a release on side then a relaxed cluster arrive: the peer CTA\'s read after the cluster wait races', () => {
    const src = (arrive: string) => `kernel k arch=sm_90a cluster=2
barrier side count=1
smem X bytes=256
role writer warps=1 per=one cta=0:
    st.shared X
    mbarrier.arrive side
    ${arrive}
    barrier.cluster.wait
    mbarrier.try_wait.parity side, 0
    barrier.cluster.arrive
    barrier.cluster.wait
role reader warps=1 per=one cta=1:
    barrier.cluster.arrive
    barrier.cluster.wait
    ld.shared X@0
    barrier.cluster.arrive
    barrier.cluster.wait
`;
    expect(verdict(src('barrier.cluster.arrive.relaxed'))).toEqual(['race X@c0']);
    expect(verdict(src('barrier.cluster.arrive'))).toEqual([]);
  });
});

describe('a waiter that acquired the first release has the access ordered', () => {
  /** The producer stores A, arrives on side (release) then on full (relaxed), with `mid` between; the consumer waits on both (`waits`, in order) and reads A. */
  const both = (waits: string[], mid = '') => `kernel k arch=sm_90a
barrier full count=1
barrier side count=1
smem A bytes=4096
role producer warps=1 per=one:
    st.shared A
    mbarrier.arrive side
${mid}    mbarrier.arrive.relaxed full
role consumer warps=1 per=one:
${waits.map((b) => `    mbarrier.try_wait.parity ${b}, 0\n`).join('')}    ld.shared A
`;

  test('waits on side then full, or full then side: OK (ordered through side)', () => {
    expect(verdict(both(['side', 'full']))).toEqual([]);
    expect(verdict(both(['full', 'side']))).toEqual([]);
    expect(traceRaces(both(['side', 'full']))).toBe(0);
  });

  test('a second store of A after the release on side is released nowhere: a race even so', () => {
    expect(verdict(both(['side', 'full'], '    st.shared A\n'))).toEqual(['race A']);
    expect(traceRaces(both(['side', 'full'], '    st.shared A\n'))).toBe(1);
  });
});

describe('a release then a relaxed arrive on the same barrier is a release pattern (PTX ISA §8.8)', () => {
  /** full counts two arrivals of the producer: a release one, then a relaxed one; `mid` between them. */
  const same = (mid: string) => `kernel k arch=sm_90a
barrier full count=2
smem A bytes=4096
smem B bytes=4096
role producer warps=1 per=one:
    st.shared A
    mbarrier.arrive full
${mid}    mbarrier.arrive.relaxed full
role consumer warps=1 per=one:
    mbarrier.try_wait.parity full, 0
    ld.shared A
    ld.shared B
`;

  test('what preceded the release arrive is released to the phase the relaxed arrive completes', () => {
    expect(verdict(same(''))).toEqual([]);
    expect(traceRaces(same(''))).toBe(0);
  });

  test('a store between the two arrives is not: a race on it alone', () => {
    expect(verdict(same('    st.shared B\n'))).toEqual(['race B']);
    expect(traceRaces(same('    st.shared B\n'))).toBe(1);
  });

  test('a store of A again between them is unreleased too (the newest access counts)', () => {
    expect(verdict(same('    st.shared A\n'))).toEqual(['race A']);
  });
});

describe('in a loop', () => {
  test('each trip\'s store released on side only, published by a relaxed arrive on full: a race', () => {
    const src = (full: string) => `kernel k arch=sm_90a
barrier full count=1
barrier empty count=1
barrier side count=1
smem A bytes=4096
role producer warps=1 per=one:
    for i in range(0, 2):
        mbarrier.try_wait.parity empty, (i & 1) ^ 1
        st.shared A
        mbarrier.arrive side
        ${full}
role consumer warps=1 per=one:
    for i in range(0, 2):
        mbarrier.try_wait.parity full, i & 1
        ld.shared A
        mbarrier.arrive empty
`;
    expect(verdict(src('mbarrier.arrive.relaxed full'))).toEqual(['race A']);
    expect(verdict(src('mbarrier.arrive full'))).toEqual([]);
  });
});

describe('the record of what a waiter acquired is per access, not per publisher and buffer', () => {
  /** The producer stores A, releases it on X, stores A again and releases that on `second`, then arrives relaxed on full; the consumer waits on X then full and reads A. */
  const again = (second: string, mid = '    mbarrier.arrive Y\n') => `kernel k arch=sm_90a
barrier full count=1
barrier X count=1
barrier Y count=1
smem A bytes=4096
role producer warps=1 per=one:
    st.shared A
    mbarrier.arrive X
    ${second}
${mid}    mbarrier.arrive.relaxed full
role consumer warps=1 per=one:
    mbarrier.try_wait.parity X, 0
    mbarrier.try_wait.parity full, 0
    ld.shared A
role watcher warps=1 per=one:
    mbarrier.try_wait.parity Y, 0
`;

  test('the second store, released on Y only, races with the read ordered after X (PTX ISA §8.8)', () => {
    const src = again('st.shared A');
    expect(verdict(src)).toEqual(['race A']);
    expect(traceRaces(src)).toBe(1);
  });

  test('no second store: the store the consumer acquired through X is ordered (OK)', () => {
    const src = again('work 1');
    expect(verdict(src)).toEqual([]);
    expect(traceRaces(src)).toBe(0);
  });

  test('a second release on the same barrier, in a phase the consumer never observed: a race', () => {
    const src = `kernel k arch=sm_90a
barrier full count=1
barrier side count=1
barrier ack count=1
smem A bytes=4096
role producer warps=1 per=one:
    st.shared A
    mbarrier.arrive side
    mbarrier.try_wait.parity ack, 0
    st.shared A
    mbarrier.arrive side
    mbarrier.arrive.relaxed full
role consumer warps=1 per=one:
    mbarrier.try_wait.parity side, 0
    mbarrier.arrive ack
    mbarrier.try_wait.parity full, 0
    ld.shared A
role watcher warps=1 per=one:
    mbarrier.try_wait.parity side, 1
`;
    expect(verdict(src)).toEqual(['race A']);
    expect(traceRaces(src)).toBe(1);
    // Waiting on side's second phase instead acquires the second store: OK.
    expect(verdict(src.replace('mbarrier.try_wait.parity full, 0', 'mbarrier.try_wait.parity side, 1\n    mbarrier.try_wait.parity full, 0'))).toEqual([]);
  });

  test('three stores, each released on its own barrier: the consumer that acquired the second still races with the third', () => {
    const src = `kernel k arch=sm_90a
barrier full count=1
barrier X count=1
barrier Y count=1
barrier Z count=1
smem A bytes=4096
role producer warps=1 per=one:
    st.shared A
    mbarrier.arrive X
    st.shared A
    mbarrier.arrive Y
    st.shared A
    mbarrier.arrive Z
    mbarrier.arrive.relaxed full
role consumer warps=1 per=one:
    mbarrier.try_wait.parity Y, 0
    mbarrier.try_wait.parity full, 0
    ld.shared A
role watcher warps=1 per=one:
    mbarrier.try_wait.parity X, 0
    mbarrier.try_wait.parity Z, 0
`;
    expect(verdict(src)).toEqual(['race A']);
    expect(verdict(src.replace('    mbarrier.try_wait.parity Y, 0\n', '    mbarrier.try_wait.parity Z, 0\n'))).toEqual([]);
  });
});
