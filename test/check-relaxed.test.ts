import { describe, expect, test } from 'vitest';
import { check, happensBefore, replay, type CheckOptions } from '../src/check/index.js';
import { parseSketch } from '../src/lang/index.js';
import { instantiate } from '../src/machine/program.js';
import { kernel } from '../src/kernel/builder.js';
import { simulate } from '../src/sim/simulate.js';
import { H200 } from '../src/sim/timing.js';
import { ISSUE_COST } from '../src/sim/issue-cost.js';

/**
 * The memory model of the coordination operations (PTX ISA §8.8, §9.7.13.3, §9.7.13.4,
 * §9.7.13.15.16): relaxed cluster and mbarrier arrives, relaxed and scoped waits, and the thread
 * fences that turn relaxed operations into release / acquire patterns. Each case has its control.
 */
function run(src: string, opts: CheckOptions = {}) {
  const parsed = parseSketch(src, 't.mbk');
  expect(parsed.diagnostics).toEqual([]);
  return check(instantiate(parsed.kernel!), { all: true, ...opts });
}
const kinds = (r: ReturnType<typeof run>) => r.hazards.map((h) => `${h.kind} ${h.subject?.name ?? ''}`.trim()).sort();

/** CTA 0 writes X, both CTAs meet at a cluster barrier (the writer's arrive is `arrive`, with `before` ahead of it), CTA 1 reads X@0. */
const cluster = (arrive: string, before = '') => `kernel k arch=sm_90a cluster=2
smem X bytes=256
role writer warps=1 per=one cta=0:
    st.shared X
${before ? `    ${before}\n` : ''}    ${arrive}
    barrier.cluster.wait
    barrier.cluster.arrive
    barrier.cluster.wait
role reader warps=1 per=one cta=1:
    barrier.cluster.arrive.aligned
    barrier.cluster.wait.acquire.aligned
    ld.shared X@0
    barrier.cluster.arrive
    barrier.cluster.wait
`;

describe('barrier.cluster.arrive .release / .relaxed (PTX ISA §9.7.13.3)', () => {
  test('the default and .release order the write before the peer\'s read', () => {
    expect(run(cluster('barrier.cluster.arrive')).verdict).toBe('ok');
    expect(run(cluster('barrier.cluster.arrive.release.aligned')).verdict).toBe('ok');
  });
  test('.relaxed releases nothing: a race the interleavings do not show', () => {
    const r = run(cluster('barrier.cluster.arrive.relaxed'));
    expect(kinds(r)).toEqual(['race X@c0']);
    expect(r.hazards[0]!.message).toContain('a relaxed arrive releases nothing');
    expect(r.hazards[0]!.race!.explanation).toContain('ordered in time but not by happens-before');
    expect(r.hazards[0]!.race!.fix).toMatch(/^make the arrive \.release, or put fence\.acq_rel/);
    expect(r.hazards[0]!.locations.map((l) => l.line)).toEqual([12, 5]);
  });
  test('a release fence before it makes it a release pattern, at the fence\'s scope', () => {
    expect(run(cluster('barrier.cluster.arrive.relaxed', 'fence.acq_rel.cluster')).verdict).toBe('ok');
    expect(run(cluster('barrier.cluster.arrive.relaxed', 'fence.sc.gpu')).verdict).toBe('ok');
    expect(run(cluster('barrier.cluster.arrive.relaxed', 'fence.release.sync_restrict::shared::cta.cluster')).verdict).toBe('ok');
    // A CTA-scope fence does not reach the other CTA; an acquire-only fence releases nothing.
    expect(kinds(run(cluster('barrier.cluster.arrive.relaxed', 'fence.acq_rel.cta')))).toEqual(['race X@c0']);
    expect(kinds(run(cluster('barrier.cluster.arrive.relaxed', 'fence.acquire.cluster')))).toEqual(['race X@c0']);
  });
  test('the builder writes the same kernels', () => {
    const k = (sem: 'release' | 'relaxed', fence: boolean) => kernel('k', { arch: 'sm_90a', cluster: 2 })
      .smem('X', 1, 256)
      .role('writer', { warps: 1, per: 'one', where: 'cta == 0' }, (b) => {
        b.write('X[0]');
        if (fence) b.fence('cluster');
        b.clusterArrive({ sem, aligned: true }).clusterWait().clusterArrive().clusterWait();
      })
      .role('reader', { warps: 1, per: 'one', where: 'cta == 1' }, (b) => b.clusterArrive().clusterWait({ aligned: true }).read('X[0]@0').clusterArrive().clusterWait())
      .build();
    expect(check(instantiate(k('release', false)), { all: true }).verdict).toBe('ok');
    expect(check(instantiate(k('relaxed', false)), { all: true }).verdict).toBe('race');
    expect(check(instantiate(k('relaxed', true)), { all: true }).verdict).toBe('ok');
  });
  test('a relaxed arrive costs less than a release arrive (no fence before it) and fences cost by scope', () => {
    const p = instantiate(parseSketch(cluster('barrier.cluster.arrive.relaxed', 'fence.acq_rel.cta'), 't.mbk').kernel!);
    const code = p.roles[0]!.code.filter((i) => i.i === 'op');
    const cost = (i: number) => ISSUE_COST[code[i]!.op.op]({ T: H200, ins: code[i]!, frame: [] } as never);
    expect(cost(1)).toBe(H200.fenceCta.value);
    expect(cost(2)).toBe(H200.clusterArriveRelaxed.value);
    expect(cost(4)).toBe(H200.clusterArrive.value);
    expect(H200.clusterArriveRelaxed.value).toBeLessThan(H200.clusterArrive.value);
    const r = simulate(p);
    expect(r.verdict).toBe('ok');
  });
});

/** `producer` stores buf and arrives on ready (`arrive`, with `pre` before it); `consumer` waits (`wait`, then `post`) and loads buf. */
const handoff = (arrive: string, wait: string, pre = '', post = '') => `kernel k arch=sm_90a
smem buf bytes=256
barrier ready count=1
role producer warps=1 per=one:
    st.shared buf
${pre ? `    ${pre}\n` : ''}    ${arrive} ready
role consumer warps=1 per=one:
    ${wait} ready, 0
${post ? `    ${post}\n` : ''}    ld.shared buf
`;

describe('mbarrier waits .acquire / .relaxed and the fence patterns (PTX ISA §9.7.13.15.16, §8.8)', () => {
  const A = 'mbarrier.arrive';
  const AR = 'mbarrier.arrive.relaxed.cta';
  const W = 'mbarrier.try_wait.parity';
  const WR = 'mbarrier.try_wait.parity.relaxed.cta';
  test('release arrive + acquire wait (the defaults, or written out): ok', () => {
    expect(run(handoff(A, W)).verdict).toBe('ok');
    expect(run(handoff('mbarrier.arrive.release.cta', 'mbarrier.try_wait.parity.acquire.cta')).verdict).toBe('ok');
  });
  test('a relaxed wait acquires nothing until an acquire fence after it', () => {
    const r = run(handoff(A, WR));
    expect(kinds(r)).toEqual(['race buf']);
    expect(r.hazards[0]!.message).toContain('a relaxed wait acquires nothing');
    expect(r.hazards[0]!.race!.fix).toBe('make the wait .acquire, or put fence.acq_rel.cta after it.');
    expect(run(handoff(A, WR, '', 'fence.acq_rel.cta')).verdict).toBe('ok');
    expect(run(handoff(A, WR, '', 'fence.acquire.cta')).verdict).toBe('ok');
    expect(kinds(run(handoff(A, WR, '', 'fence.release.cta')))).toEqual(['race buf']);
  });
  test('the fence-fence pattern: relaxed arrive after a release fence, relaxed wait before an acquire fence', () => {
    expect(kinds(run(handoff(AR, W)))).toEqual(['race buf']);
    expect(run(handoff(AR, W, 'fence.acq_rel.cta')).verdict).toBe('ok');
    expect(kinds(run(handoff(AR, WR, 'fence.acq_rel.cta')))).toEqual(['race buf']);
    expect(run(handoff(AR, WR, 'fence.acq_rel.cta', 'fence.acq_rel.cta')).verdict).toBe('ok');
    expect(run(handoff(AR, WR, 'fence.sc.cta', 'membar.cta')).verdict).toBe('ok');
  });
  test('program order needs no fence: one agent that arrives relaxed and waits', () => {
    const src = `kernel k arch=sm_90a
smem buf bytes=256
barrier ready count=1
role r warps=1 per=one:
    st.shared buf
    mbarrier.arrive.relaxed.cta ready
    mbarrier.try_wait.parity.relaxed.cta ready, 0
    ld.shared buf
`;
    expect(run(src).verdict).toBe('ok');
  });
  test('happens-before over the trace agrees: no edge through the relaxed arrive, an edge with the fence', () => {
    const p = instantiate(parseSketch(handoff(AR, W), 't.mbk').kernel!);
    const r = check(p, { all: true });
    const hb = happensBefore(p, replay(p, r.hazards[0]!.schedule).events);
    expect(hb.races.map((x) => [x.first.rw, x.first.loc?.line, x.second.rw, x.second.loc?.line])).toEqual([['w', 5, 'r', 9]]);
    const q = instantiate(parseSketch(handoff(AR, W, 'fence.acq_rel.cta'), 't.mbk').kernel!);
    const sched = check(q, { all: true });
    expect(sched.verdict).toBe('ok');
    // Replay the same interleaving (producer first, then consumer) on the fenced kernel: ordered.
    const hb2 = happensBefore(q, replay(q, [0, 0, 0, 1, 1]).events);
    expect(hb2.accesses.map((a) => a.rw)).toEqual(['w', 'r']);
    expect(hb2.races).toEqual([]);
  });
  test('the TMA tile read after a relaxed wait is a race; M02-fixed\'s fence orders it', () => {
    const tma = (post: string) => `kernel k arch=sm_90a
smem tile bytes=1024
barrier full count=1
role producer warps=1 per=one:
    mbarrier.arrive.expect_tx full, 1024
    cp.async.bulk.tensor tile, 1024, full
role consumer warps=1 per=one:
    mbarrier.try_wait.parity.relaxed.cluster full, 0
${post}    ld.shared tile
`;
    expect(kinds(run(tma('')))).toEqual(['race tile']);
    expect(run(tma('    fence.acq_rel.cta\n')).verdict).toBe('ok');
  });
});

describe('asynchronous operations issued after a relaxed hand-off', () => {
  test('a TMA refill after a relaxed release of the stage races with the read (WAR); a release fence orders it', () => {
    const war = (pre: string) => `kernel k arch=sm_90a
smem tile bytes=1024
barrier full count=1
barrier empty count=1
role consumer warps=1 per=one:
    mbarrier.try_wait.parity full, 0
    ld.shared tile
${pre}    mbarrier.arrive.relaxed.cta empty
role producer warps=1 per=one:
    mbarrier.arrive.expect_tx full, 1024
    cp.async.bulk.tensor tile, 1024, full
    mbarrier.try_wait.parity empty, 0
    mbarrier.arrive.expect_tx full, 1024
    cp.async.bulk.tensor tile, 1024, full
    mbarrier.try_wait.parity full, 1
`;
    const r = run(war(''));
    expect(kinds(r)).toEqual(['race tile']);
    expect(r.hazards[0]!.message).toMatch(/^producer writes tile \(TMA copy writing it\), but the read of tile by another agent reached this agent's wait only through a \.relaxed arrive/);
    expect(r.hazards[0]!.locations[0]!.line).toBe(14);
    expect(run(war('    fence.acq_rel.cta\n')).verdict).toBe('ok');
  });
  test('a wgmma reading a stage after a relaxed wait races with the TMA write', () => {
    const src = (post: string) => `kernel k arch=sm_90a
smem A bytes=1024
barrier full count=1
role producer warps=1 per=one:
    mbarrier.arrive.expect_tx full, 1024
    cp.async.bulk.tensor A, 1024, full
role mma warps=4:
    mbarrier.try_wait.parity.relaxed.cta full, 0
${post}    wgmma.mma_async A shape=64x64x16
    wgmma.commit_group
    wgmma.wait_group 0
`;
    expect(kinds(run(src('')))).toEqual(['race A']);
    expect(run(src('    fence.acq_rel.cta\n')).verdict).toBe('ok');
  });
});

/** CTA 1 stores buf@0 and arrives remotely (`arrive`) on ready@0; CTA 0 waits (`wait`, then `post`) and loads buf. */
const remote = (arrive: string, wait: string, post = '') => `kernel k arch=sm_90a cluster=2
smem buf bytes=256
barrier ready count=1 cta=0
role producer warps=1 per=one cta=1:
    st.shared buf@0
    ${arrive} ready@0
role consumer warps=1 per=one cta=0:
    ${wait} ready, 0
${post ? `    ${post}\n` : ''}    ld.shared buf
`;

describe('the scope of the acquire against the scope of the release (PTX ISA §8.7)', () => {
  const REL = 'mbarrier.arrive.release.cluster';
  test('an explicit .cta acquire of another CTA\'s release is a scope error and the read races', () => {
    const r = run(remote(REL, 'mbarrier.try_wait.parity.acquire.cta'));
    expect(kinds(r)).toEqual(['race buf@c0', 'scope ready@c0']);
    const sc = r.hazards.find((h) => h.kind === 'scope')!;
    expect(sc.message).toContain('a .cta acquire does not include that thread, so the two are not morally strong');
    expect(sc.locations.map((l) => l.line)).toEqual([8]);
  });
  test('.acquire.cluster, or no scope written (lenient, as CUTLASS writes its waits), synchronizes', () => {
    expect(run(remote(REL, 'mbarrier.try_wait.parity.acquire.cluster')).verdict).toBe('ok');
    expect(run(remote(REL, 'mbarrier.try_wait.parity')).verdict).toBe('ok');
  });
  test('a relaxed wait of a remote release needs a cluster-scope acquire fence', () => {
    expect(kinds(run(remote(REL, 'mbarrier.try_wait.parity.relaxed.cluster')))).toEqual(['race buf@c0']);
    expect(kinds(run(remote(REL, 'mbarrier.try_wait.parity.relaxed.cluster', 'fence.acq_rel.cta')))).toEqual(['race buf@c0']);
    expect(run(remote(REL, 'mbarrier.try_wait.parity.relaxed.cluster', 'fence.acquire.sync_restrict::shared::cluster.cluster')).verdict).toBe('ok');
  });
});

describe('the detector\'s checker data in the state hash', () => {
  test('incremental record hashes agree with full rehashes, and the reductions change no finding', async () => {
    const { readFileSync } = await import('node:fs');
    for (const f of ['M01', 'M02', 'M03', 'M04']) {
      const p = instantiate(parseSketch(readFileSync(`examples/bugs/${f}.mbk`, 'utf8'), `${f}.mbk`).kernel!);
      const set = (r: ReturnType<typeof check>) => r.hazards.map((h) => `${h.kind} ${h.subject?.name ?? ''}`).sort();
      const a = check(p, { all: true, verifyHash: true } as CheckOptions);
      const b = check(p, { all: true, por: false, symmetry: false } as CheckOptions);
      expect(set(a), f).toEqual(set(b));
      expect(a.verdict, f).not.toBe('ok');
    }
  });
});

describe('global flags: st.release / ld.acquire and their relaxed forms (PTX ISA §8.7, §8.8, §9.7.9.8, §9.7.9.11)', () => {
  /** Role a writes data and then the flag (`store`, after `before`); role b waits on the flag (`load`, then `after`) and reads data. */
  const flag = (store: string, load: string, before = '', after = '', bClause = '') => `kernel k arch=sm_90a${bClause}
smem data bytes=64
gmem flag[1] init=0
role a warps=1 per=one:
    st.shared data
${before ? `    ${before}\n` : ''}    ${store} flag[0], 1
role b warps=1 per=one:
    ${load} flag[0], 1
${after ? `    ${after}\n` : ''}    ld.shared data
`;

  test('release store + acquire spin: ok; a relaxed store releases nothing', () => {
    expect(run(flag('st.release.gpu.global', 'spin.acquire.gpu.eq')).verdict).toBe('ok');
    const r = run(flag('st.relaxed.gpu.global', 'spin.acquire.gpu.eq'));
    expect(kinds(r)).toEqual(['race data']);
    expect(r.hazards[0]!.message).toMatch(/^b reads data \(ld\.shared data\), but the write of data by another agent reached this agent only through a global store that releases nothing/);
    // a relaxed atomic is no release either; an atom.release is
    expect(kinds(run(flag('red.relaxed.gpu.global.add', 'spin.acquire.gpu.eq')))).toEqual(['race data']);
    expect(run(flag('red.release.gpu.global.add', 'spin.acquire.gpu.eq')).verdict).toBe('ok');
  });

  test('the fence patterns: a release fence before the relaxed store, an acquire fence after the relaxed load', () => {
    expect(run(flag('st.relaxed.gpu.global', 'spin.acquire.gpu.eq', 'fence.acq_rel.gpu')).verdict).toBe('ok');
    const relaxedLoad = run(flag('st.release.gpu.global', 'spin.relaxed.gpu.eq'));
    expect(kinds(relaxedLoad)).toEqual(['race data']);
    expect(relaxedLoad.hazards[0]!.message).toMatch(/with a \.relaxed load and no acquire fence followed it/);
    expect(run(flag('st.release.gpu.global', 'spin.relaxed.gpu.eq', '', 'fence.acq_rel.gpu')).verdict).toBe('ok');
    expect(run(flag('st.relaxed.gpu.global', 'spin.relaxed.gpu.eq', 'fence.acq_rel.gpu', 'fence.acq_rel.gpu')).verdict).toBe('ok');
  });
});
