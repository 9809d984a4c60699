import { describe, expect, test } from 'vitest';
import { check, type CheckOptions } from '../src/check/index.js';
import { parseSketch } from '../src/lang/index.js';
import { instantiate, type Program } from '../src/machine/program.js';

/** Findings of the twelfth soak (per-warp code, asynchronous copies, the newer features). */

function program(src: string): Program {
  const r = parseSketch(src, 'soak12.mbk');
  expect(r.diagnostics.map((d) => d.message)).toEqual([]);
  return instantiate(r.kernel!, {});
}

/** Error kinds with their subjects, for each reduction setting. */
function verdicts(src: string): Record<string, string[]> {
  const p = program(src);
  const out: Record<string, string[]> = {};
  const modes: Record<string, CheckOptions> = { all: {}, none: { por: false, symmetry: false } };
  for (const [name, opts] of Object.entries(modes)) {
    const r = check(p, { all: true, randomRuns: false, ...opts });
    out[name] = [...new Set(r.hazards.filter((h) => h.severity === 'error').map((h) => `${h.kind} ${h.subject?.name ?? ''}`))].sort();
  }
  return out;
}

describe('warp-dependent byte ranges at one instruction', () => {
  const sketch = (offset: string) => `kernel r arch=sm_90a
smem A bytes=8192
role a warps=4:
    st.shared A + ${offset}, 2048
`;

  test('two warps whose computed ranges name the same bytes race (not slices of one range)', () => {
    const v = verdicts(sketch('(warp & 1) * 2048'));
    expect(v.all).toEqual(['race A[0:2048]', 'race A[2048:4096]']);
    expect(v.none).toEqual(v.all);
  });

  test('an element index computed from warp through a variable or a branch', () => {
    const v = verdicts(`kernel r arch=sm_90a
smem A[2] bytes=2048
role a warps=4:
    if warp < 2:
        q = 0
    else:
        q = 1
    st.shared A[q]
`);
    expect(v.all).toEqual(['race A[0]', 'race A[1]']);
    expect(v.none).toEqual(v.all);
    expect(verdicts(`kernel r arch=sm_90a
smem A[4] bytes=2048
role a warps=4:
    i = warp
    st.shared A[i]
`)).toEqual({ all: [], none: [] });
  });

  test('disjoint warp ranges, and one warp-independent range shared as slices, stay OK', () => {
    expect(verdicts(sketch('warp * 2048'))).toEqual({ all: [], none: [] });
    expect(verdicts(sketch('2048'))).toEqual({ all: [], none: [] });
  });
});

describe('Tensor Memory lanes of the warps of one role', () => {
  const epi = (writer: number, reader: number) => `kernel t arch=sm_100a
tmem acc bytes=65536
role epi warps=8:
    if warp == ${writer}:
        tcgen05.st acc
        tcgen05.wait::st
    if warp == ${reader}:
        tcgen05.ld acc
`;

  test('warps 0 and 4 reach the same lanes (warp % 4): the load races with the store', () => {
    expect(verdicts(epi(0, 4))).toEqual({ all: ['race acc'], none: ['race acc'] });
  });

  test('warps 0 and 1 reach different lanes: no race', () => {
    expect(verdicts(epi(0, 1))).toEqual({ all: [], none: [] });
  });

  test('five symmetric warps storing then loading: the same race with and without the reductions', () => {
    const v = verdicts(`kernel t arch=sm_100a
tmem acc bytes=65536
role epi warps=5:
    tcgen05.st acc
    tcgen05.wait::st
    tcgen05.ld acc
`);
    expect(v).toEqual({ all: ['race acc'], none: ['race acc'] });
  });
});

describe('a value computed from the warp, stored by several warps at one line', () => {
  const slot = (value: string) => `kernel v arch=sm_90a
smem slot bytes=4
smem A[2] bytes=4096
role w warps=2:
    st.shared slot value=${value}
    bar.sync 1, 64
    t = ld.shared slot
    ld.shared A[t]
`;

  test('value=warp: the warps store different words to one address, a race', () => {
    expect(verdicts(slot('warp'))).toEqual({ all: ['race slot'], none: ['race slot'] });
  });

  test('a value the warps agree on keeps the slice rule', () => {
    expect(verdicts(slot('1'))).toEqual({ all: [], none: [] });
  });
});

describe('barrier.cluster.arrive inside elect:', () => {
  const sketch = (arrive: string) => `kernel c arch=sm_90a cluster=2
role r warps=1:
${arrive}
    barrier.cluster.wait
`;

  test('one thread of the warp arrives, the others never do: cluster-arrive-partial', () => {
    const r = check(program(sketch('    elect:\n        barrier.cluster.arrive.aligned')), { all: true, randomRuns: false });
    expect(r.hazards.map((h) => h.kind)).toEqual(['cluster-arrive-partial']);
    expect(r.hazards[0]!.message).toContain('.aligned');
  });

  test('the whole warp, or a per=one role (one thread), arrives: OK', () => {
    expect(verdicts(sketch('    barrier.cluster.arrive'))).toEqual({ all: [], none: [] });
    expect(verdicts(sketch('    barrier.cluster.arrive').replace('warps=1:', 'warps=2 per=one:'))).toEqual({ all: [], none: [] });
  });
});

describe('per-thread asynchronous copies of two warps at one instruction', () => {
  test('cp.async A, 16 by two warps: each warp copies its own slice, no race', () => {
    expect(verdicts(`kernel c arch=sm_90a
smem A bytes=1024
role r warps=2:
    cp.async A, 16
    cp.async.wait_all
    bar.sync 1, 64
    ld.shared A
`)).toEqual({ all: [], none: [] });
  });

  test('a destination computed from the warp that two warps share: a race', () => {
    const v = verdicts(`kernel c arch=sm_90a
smem A bytes=1024
role r warps=4:
    cp.async A + (warp & 1) * 512, 16
    cp.async.wait_all
`);
    expect(v.all).toEqual(['race A[0:16]', 'race A[512:528]']);
    expect(v.none).toEqual(v.all);
  });

  test('two lines still race, and a bulk copy (one box) of two warps too', () => {
    expect(verdicts(`kernel c arch=sm_90a
smem A bytes=1024
role r warps=2:
    cp.async A, 16
    cp.async A, 16
    cp.async.wait_all
`).none).toEqual(['race A']);
    expect(verdicts(`kernel c arch=sm_90a
barrier full count=2
smem A bytes=4096
role r warps=2:
    mbarrier.arrive.expect_tx full, 4096 per=warp
    cp.async.bulk.tensor A, 4096, full per=warp
    mbarrier.try_wait.parity full, 0
`).none).toContain('race A');
  });
});

describe('a launch-control query of a buffer no response has reached', () => {
  test('is a race on the response, not an observed failure: the first try_cancel is not clc-after-fail', () => {
    const v = verdicts(`kernel l arch=sm_100a
barrier got count=1
smem resp bytes=16
role sched warps=2:
    if warp == 0:
        mbarrier.arrive.expect_tx got, 16 per=one
        clusterlaunchcontrol.try_cancel resp, got
        mbarrier.try_wait.parity got, 0
    else:
        ok = clusterlaunchcontrol.query_cancel.is_canceled resp
`);
    expect(v).toEqual({ all: ['race resp'], none: ['race resp'] });
  });

  test('a failed response observed still forbids the next request', () => {
    const v = verdicts(`kernel l arch=sm_100a
barrier got count=1
smem resp bytes=16
role sched warps=1 per=one:
    for i in range(0, 2):
        mbarrier.arrive.expect_tx got, 16
        clusterlaunchcontrol.try_cancel resp, got
        mbarrier.try_wait.parity got, i & 1
        ok = clusterlaunchcontrol.query_cancel.is_canceled resp
`);
    expect(v.all).toEqual(['clc-after-fail got']);
  });
});

describe('barrier.cluster.wait with no arrive of its own before it', () => {
  test('waits for its own arrival: a hang (it passed at once)', () => {
    const v = verdicts(`kernel c arch=sm_90a cluster=2
smem X bytes=256
role r warps=1:
    st.shared X
    barrier.cluster.wait
    ld.shared X@(1 - cta)
    barrier.cluster.arrive
    barrier.cluster.wait
`);
    expect(v).toEqual({ all: ['hang barrier.cluster'], none: ['hang barrier.cluster'] });
  });

  test('arrive, wait, then a second wait without an arrive: a hang; arrive and wait twice: OK', () => {
    const twice = (mid: string) => `kernel c arch=sm_90a cluster=2
role r warps=1:
    barrier.cluster.arrive
    barrier.cluster.wait
${mid}    barrier.cluster.wait
`;
    expect(verdicts(twice('')).all).toEqual(['hang barrier.cluster']);
    expect(verdicts(twice('    barrier.cluster.arrive.relaxed\n'))).toEqual({ all: [], none: [] });
  });
});

describe('a second barrier.cluster.arrive before the wait of the round (PTX ISA §9.7.13.3)', () => {
  const twice = (mid: string) => `kernel c arch=sm_90a cluster=2
role r warps=1:
    barrier.cluster.arrive
${mid}    barrier.cluster.arrive
    barrier.cluster.wait
`;

  test('arrive, arrive, wait: cluster-arrive-twice at the second arrive (the agent stops)', () => {
    const r = check(program(twice('')), { all: true, randomRuns: false });
    expect(r.hazards.map((h) => h.kind)).toEqual(['cluster-arrive-twice']);
    expect(r.hazards[0]!.message).toContain('a second time without a barrier.cluster.wait');
    expect(r.hazards[0]!.locations.map((l) => l.line)).toEqual([4]);
  });

  test('a wait between the two arrives: OK', () => {
    expect(verdicts(twice('    barrier.cluster.wait\n'))).toEqual({ all: [], none: [] });
  });
});
