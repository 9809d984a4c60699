import { describe, expect, test } from 'vitest';
import { check, type CheckOptions } from '../src/check/index.js';
import { variantOf } from '../src/check/check.js';
import { findOp, parseArriveQualifiers, parseSketch } from '../src/lang/index.js';
import { instantiate, opText } from '../src/machine/program.js';

/**
 * The hazards that need more than the lockstep schedule: release scope of remote arrives (`scope`),
 * data barriers nobody waits on (`missing-wait`), stale passes of one wait instruction
 * (`phase-alias`, B13), wait_groups of the elected thread alone (B18) and the strict cross-proxy
 * WAR. Each has a negative control that must stay clean.
 */
function run(src: string, opts: CheckOptions = {}) {
  const parsed = parseSketch(src, 't.mbk');
  expect(parsed.diagnostics).toEqual([]);
  return check(instantiate(parsed.kernel!), { all: true, ...opts });
}
const kinds = (r: ReturnType<typeof run>) => r.hazards.map((h) => `${h.kind} ${h.subject?.name ?? ''}`.trim()).sort();
const warnKinds = (r: ReturnType<typeof run>) => r.warnings.map((h) => `${h.kind} ${h.subject?.name ?? ''}`.trim()).sort();

describe('arrive qualifiers in the sketch language', () => {
  test('semantics, scope and state space are parsed after the suffixes', () => {
    expect(parseArriveQualifiers('mbarrier.arrive.release.cluster.shared::cluster.b64')).toMatchObject({ sem: 'release', scope: 'cluster' });
    expect(parseArriveQualifiers('mbarrier.arrive.expect_tx.relaxed.cta')).toMatchObject({ sem: 'relaxed', scope: 'cta' });
    expect(parseArriveQualifiers('mbarrier.arrive_drop.shared::cta.b64')!.spec.name).toBe('mbarrier.arrive_drop');
    expect(parseArriveQualifiers('mbarrier.arrive.release')).toMatchObject({ sem: 'release' });
    expect(parseArriveQualifiers('mbarrier.arrive.release')!.scope).toBeUndefined();
    // Wrong order or unknown qualifiers are not arrive forms.
    expect(parseArriveQualifiers('mbarrier.arrive.cluster.release')).toBeUndefined();
    expect(parseArriveQualifiers('mbarrier.arrive.gpu')).toBeUndefined();
    expect(findOp('mbarrier.arrive.release.gpu')).toBeUndefined();
    expect(findOp('mbarrier.arrive.expect_tx.release.cluster')!.name).toBe('mbarrier.arrive.expect_tx');
  });
  test('the operation keeps them and prints them back', () => {
    const src = `kernel q cluster=2
barrier b[1] count=1 cta=0
role r warps=1 per=one cta=1:
    mbarrier.arrive.release.cluster.shared::cluster.b64 b[0]@0
    mbarrier.arrive.expect_tx.relaxed.cta b[0]@0, 16
`;
    const parsed = parseSketch(src, 'q.mbk');
    expect(parsed.diagnostics).toEqual([]);
    const ops = parsed.kernel!.roles[0]!.body.map((s) => (s as { op: Parameters<typeof opText>[0] }).op);
    expect(ops[0]).toMatchObject({ op: 'mbarrier.arrive', sem: 'release', scope: 'cluster' });
    expect(opText(ops[0]!)).toBe('mbarrier.arrive.release.cluster b[0]@0');
    expect(opText(ops[1]!)).toBe('mbarrier.arrive.expect_tx.relaxed.cta b[0]@0, 16');
  });
  test('an unknown qualifier is an unknown operation with a caret', () => {
    const parsed = parseSketch('kernel q\nbarrier b[1] count=1\nrole r warps=1 per=one:\n    mbarrier.arrive.release.gpu b[0]\n', 'q.mbk');
    expect(parsed.diagnostics.map((d) => `${d.line}:${d.col}-${d.endCol}`)).toEqual(['4:5-32']);
    expect(parsed.diagnostics[0]!.message).toBe("unknown operation 'mbarrier.arrive.release.gpu'");
  });
});

const remote = (qual: string) => `kernel remote_signal arch=sm_90a cluster=2
smem A[1] bytes=256
barrier ready[1] count=1 cta=0
role writer warps=1 per=one cta=1:
    st.shared A[0]
    mbarrier.arrive${qual} ready[0]@0
    barrier.cluster.arrive
    barrier.cluster.wait
role reader warps=1 per=one cta=0:
    mbarrier.try_wait.parity ready[0], 0
    ld.shared A[0]@1
    barrier.cluster.arrive
    barrier.cluster.wait
`;

describe('scope: release scope of remote arrives (B20)', () => {
  test('an explicit .release.cta on another CTA\'s barrier is an error', () => {
    const r = run(remote('.release.cta'));
    expect(r.verdict).toBe('scope');
    expect(kinds(r)).toEqual(['scope ready[0]@c0']);
    expect(r.hazards[0]!.message).toContain('with .release.cta: a release at CTA scope does not order');
    expect(r.hazards[0]!.locations.map((l) => l.line)).toEqual([6]);
    expect(r.hazards[0]!.trace.at(-1)!.op).toContain('mbarrier.arrive.release.cta ready[0]@0');
  });
  test('.release.cluster is clean, .relaxed is no scope hazard but releases nothing; no scope at all is a warning under --strict only', () => {
    expect(run(remote('.release.cluster'), { strict: true }).verdict).toBe('ok');
    expect(warnKinds(run(remote('.release.cluster'), { strict: true }))).toEqual([]);
    // A relaxed remote arrive is not a release: the store before it races with the peer's read,
    // unless a cluster-scope release fence precedes it (then it is a release pattern).
    expect(kinds(run(remote('.relaxed.cluster'), { strict: true }))).toEqual(['race A[0]@c1']);
    expect(run(remote('.relaxed.cluster').replace('    mbarrier.arrive.relaxed', '    fence.acq_rel.cluster\n    mbarrier.arrive.relaxed'), { strict: true }).hazards).toEqual([]);
    expect(kinds(run(remote('.relaxed.cluster').replace('    mbarrier.arrive.relaxed', '    fence.acq_rel.cta\n    mbarrier.arrive.relaxed'), { strict: true }))).toEqual(['race A[0]@c1']);
    const plain = run(remote(''));
    expect(plain.verdict).toBe('ok');
    expect(plain.warnings).toEqual([]);
    const strict = run(remote(''), { strict: true });
    expect(strict.verdict).toBe('ok');
    expect(warnKinds(strict)).toEqual(['scope ready[0]@c0']);
    expect(strict.warnings[0]!.severity).toBe('warning');
  });
  test('a local arrive with .release.cta is fine', () => {
    const src = `kernel local arch=sm_90a
smem A[1] bytes=256
barrier ready[1] count=1
role writer warps=1 per=one:
    st.shared A[0]
    mbarrier.arrive.release.cta ready[0]
role reader warps=1 per=one:
    mbarrier.try_wait.parity ready[0], 0
    ld.shared A[0]
`;
    expect(run(src, { strict: true }).verdict).toBe('ok');
  });
});

const oneLoad = (readerWaits: boolean) => `kernel ml arch=sm_90a
smem X[1] bytes=1024
barrier full[1] count=1
role load warps=1 per=one:
    mbarrier.arrive.expect_tx full[0], 1024
    cp.async.bulk.tensor X[0], 1024, full[0]
role use warps=1 per=one:
${readerWaits ? '    mbarrier.try_wait.parity full[0], 0\n' : ''}    ld.shared X[0]
`;

describe('missing-wait', () => {
  test('a data barrier that completes a phase nobody waits on, and the reader that never waits', () => {
    const r = run(oneLoad(false));
    // Two variants of one detector, two fixes: the phase nobody waits on (the CTA lacks the wait)
    // and the reader that never waits (this reader lacks it) stay two missing-wait findings.
    expect(kinds(r)).toEqual(['inflight-at-exit full[0]', 'missing-wait full[0]', 'missing-wait full[0]', 'race X[0]']);
    const w = r.hazards.filter((h) => h.kind === 'missing-wait');
    expect(w.map((h) => h.message).sort()).toEqual([
      'phase 0 of full[0] completed, but no thread of its CTA ever waits on full[0]: the data its copies deliver is never acquired, so nothing orders a reader after them',
      'use reads X[0], which the TMA copy at line 6 fills with its completion on full[0], but use never waits on full[0]: nothing orders its access after the copy',
    ]);
    expect(w.map((h) => h.also)).toEqual([undefined, undefined]);
  });
  test('the detector variant that keeps two causes apart: a word as the key\'s last field, not a site', () => {
    expect(['full[0]|never', 'X[0]|k.mbk:6:5|war', 'X[0]|:6:5|ghost2', 'full[0]|3', 'X[0]|k.mbk:6:5', 'init|:4:1', 'acc'].map(variantOf))
      .toEqual(['never', 'war', 'ghost', '', '', '', '']);
  });
  test('with the wait: ok', () => {
    expect(run(oneLoad(true)).verdict).toBe('ok');
  });
  test('an arrive-only barrier nobody waits on is not a missing wait', () => {
    const src = `kernel arrive_only arch=sm_90a
barrier done[1] count=1
role r warps=1 per=one:
    mbarrier.arrive done[0]
`;
    expect(run(src).hazards).toEqual([]);
  });
});

describe('phase-alias: a wait that re-observes its phase (B13)', () => {
  const persistent = (parity: string, tiles = 2) => `kernel pp arch=sm_90a
param TILES = ${tiles}
smem X[1] bytes=4096
barrier full[1] count=1
barrier empty[1] count=1
role producer warps=1 per=one:
    for t in range(0, TILES):
        mbarrier.try_wait.parity empty[0], (t & 1) ^ 1
        mbarrier.arrive.expect_tx full[0], 4096
        cp.async.bulk.tensor X[0], 4096, full[0]
role consumer warps=1 per=one:
    for t in range(0, TILES):
        mbarrier.try_wait.parity full[0], ${parity}
        ld.shared X[0]
        mbarrier.arrive empty[0]
`;
  test('a parity restarted per tile is reported on the re-observing wait', () => {
    const r = run(persistent('0'));
    const alias = r.hazards.filter((h) => h.kind === 'phase-alias');
    expect(alias.map((h) => h.subject?.name)).toContain('full[0]');
    expect(alias[0]!.message).toMatch(/^consumer passed wait\(full\[0\], parity 0\) at line 13 on phase 0, the phase this same wait had already returned for/);
    expect(alias[0]!.locations.map((l) => l.line)).toEqual([13]);
  });
  test('the correct parity is ok', () => {
    expect(run(persistent('t & 1')).verdict).toBe('ok');
    expect(run(persistent('t & 1', 4)).verdict).toBe('ok');
  });
  test('a one-shot barrier waited on in every iteration is not an alias', () => {
    const src = `kernel one_shot arch=sm_90a
smem W[1] bytes=1024
barrier weights[1] count=1
role load warps=1 per=one:
    mbarrier.arrive.expect_tx weights[0], 1024
    cp.async.bulk.tensor W[0], 1024, weights[0]
role use warps=1 per=one:
    for t in range(0, 3):
        mbarrier.try_wait.parity weights[0], 0
        ld.shared W[0]
`;
    const r = run(src);
    expect(r.verdict).toBe('ok');
    expect(r.warnings.filter((w) => w.kind === 'phase-alias')).toEqual([]);
  });
  test('a redundant wait from two instructions is not an alias', () => {
    const src = `kernel redundant arch=sm_90a
smem X[1] bytes=1024
barrier full[1] count=1
barrier empty[1] count=1
role load warps=1 per=one:
    for t in range(0, 2):
        mbarrier.try_wait.parity empty[0], (t & 1) ^ 1
        mbarrier.arrive.expect_tx full[0], 1024
        cp.async.bulk.tensor X[0], 1024, full[0]
role use warps=1 per=one:
    for t in range(0, 2):
        mbarrier.try_wait.parity full[0], t & 1
        mbarrier.try_wait.parity full[0], t & 1
        ld.shared X[0]
        mbarrier.arrive empty[0]
`;
    expect(run(src).verdict).toBe('ok');
  });
});

describe('wait_group of the elected thread alone (B18)', () => {
  const staging = (sync: boolean, warps = 4) => `kernel staging arch=sm_90a
smem C[1] bytes=16384
role wg warps=${warps}:
    for w in range(0, 2):
        st.shared C[0]
        fence.proxy.async
        bar.sync 1, ${warps * 32}
        elect:
            cp.async.bulk.store C[0], 16384
            cp.async.bulk.commit_group
            cp.async.bulk.wait_group.read 0
${sync ? `        bar.sync 1, ${warps * 32}\n` : ''}`;
  test('the other warps refill the buffer while the store may still read it', () => {
    const r = run(staging(false));
    expect(r.verdict).toBe('race');
    expect(kinds(r)).toEqual(['race C[0]']);
    // Each warp is an agent: warp 1 goes round the loop and writes while warp 0's store reads.
    expect(r.hazards[0]!.message).toBe('wg.w1 writes C[0] while the bulk store issued by wg.w0 (line 9) is still reading it');
    expect(r.hazards[0]!.trace.map((s) => s.op).at(-1)).toBe('st.shared C[0]  [C[0]]');
    // Related locations: the access and the store.
    expect(r.hazards[0]!.locations.map((l) => l.line)).toEqual([5, 9]);
  });
  test('a bar.sync of the role after the wait orders every thread', () => {
    expect(run(staging(true)).verdict).toBe('ok');
  });
  test('in a one-warp role the lanes are converged: ok', () => {
    expect(run(staging(false, 1)).verdict).toBe('ok');
  });
  test('a wait_group of every thread still waits only for its own groups: race (bulk async-groups are per thread)', () => {
    const src = `kernel all_wait arch=sm_90a
smem C[1] bytes=16384
role wg warps=4:
    for w in range(0, 2):
        st.shared C[0]
        fence.proxy.async
        bar.sync 1, 128
        elect:
            cp.async.bulk.store C[0], 16384
            cp.async.bulk.commit_group
        cp.async.bulk.wait_group.read 0
`;
    // PTX ISA §9.7.9.25.4: bulk async-groups are per thread; the other warps committed no store,
    // so their wait_group returns at once and they write C[0] while warp 0's store may read it.
    const r = run(src);
    expect(r.verdict).toBe('race');
    expect(r.hazards[0]!.message).toBe('wg.w1 writes C[0] while the bulk store issued by wg.w0 (line 9) is still reading it');
  });
});

describe('mbarrier wait of the elected thread alone', () => {
  const electWait = (o: { sync?: boolean; allWait?: boolean; warps?: number }) => `kernel elect_wait arch=sm_90a
smem X[2] bytes=4096
barrier full[2] count=1
barrier empty[2] count=1
role load warps=1 per=one:
    for i in range(0, 4):
        mbarrier.try_wait.parity empty[i % 2], ((i / 2) & 1) ^ 1
        mbarrier.arrive.expect_tx full[i % 2], 4096
        cp.async.bulk.tensor X[i % 2], 4096, full[i % 2]
role use warps=${o.warps ?? 4}:
    for i in range(0, 4):
${o.allWait ? '        mbarrier.try_wait.parity full[i % 2], (i / 2) & 1\n' : '        elect:\n            mbarrier.try_wait.parity full[i % 2], (i / 2) & 1\n'}${o.sync ? `        bar.sync 1, ${(o.warps ?? 4) * 32}\n` : ''}        ld.shared X[i % 2]
        bar.sync 2, ${(o.warps ?? 4) * 32}
        mbarrier.arrive empty[i % 2] per=one
`;
  test('the other warps read the stage without having waited: race', () => {
    const r = run(electWait({}));
    expect(r.verdict).toBe('race');
    expect(kinds(r)).toEqual(['race X[0]', 'race X[1]']); // both stages, each its own subject
    expect(r.hazards[0]!.message).toBe('use.w1 reads X[0] while the TMA copy issued by load (line 9) is still writing it; its completion signals full[0], and nothing orders this access after that signal');
    expect(r.hazards[0]!.locations.map((l) => l.line)).toEqual([14, 9]);
  });
  test('a bar.sync after the elected wait, every thread waiting, or one warp: ok', () => {
    expect(run(electWait({ sync: true })).verdict).toBe('ok');
    expect(run(electWait({ allWait: true })).verdict).toBe('ok');
    expect(run(electWait({ warps: 1 })).verdict).toBe('ok');
  });
});

describe('phase-alias: a second pass on a fresh barrier', () => {
  test('a producer whose parity comes from another counter passes its empty barrier twice before any release', () => {
    const src = `kernel wrong_counter arch=sm_90a
param S = 2
param K = 4
barrier full[S] count=1
barrier empty[S] count=1
smem A[S] bytes=1024
role producer warps=1 per=one:
    for i in range(0, K):
        s = i % S
        mbarrier.try_wait.parity empty[s], ((i / (S + 1)) & 1) ^ 1
        mbarrier.arrive.expect_tx full[s], 1024
        cp.async.bulk.tensor A[s], 1024, full[s]
role consumer warps=1 per=one:
    for i in range(0, K):
        s = i % S
        mbarrier.try_wait.parity full[s], (i / S) & 1
        ld.shared A[s]
        mbarrier.arrive empty[s]
`;
    const alias = run(src).hazards.filter((h) => h.kind === 'phase-alias' && h.subject?.name === 'empty[0]');
    expect(alias.length).toBe(1);
    expect(alias[0]!.message).toBe('producer passed wait(empty[0], parity 1) at line 10 a second time on the fresh barrier (no phase completed), as it had already returned: its parity did not advance, and empty[0] went on to complete phase 0, which producer never waited for');
  });
});
