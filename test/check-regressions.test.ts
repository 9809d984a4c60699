import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { check } from '../src/check/index.js';
import { parseSketch } from '../src/lang/index.js';
import { instantiate } from '../src/machine/program.js';
import { kernel } from '../src/kernel/builder.js';
import { simulate } from '../src/sim/simulate.js';
import { analyse } from '../src/check/analysis.js';
import type { Kernel } from '../src/kernel/ir.js';

/** Pipelines a new user wrote (fixtures/check/), with what the checker must say about them. */
const run = (f: string, all = false) => {
  const src = readFileSync(join(__dirname, 'fixtures', 'check', f), 'utf8');
  const k = parseSketch(src, f);
  expect(k.diagnostics).toEqual([]);
  return check(instantiate(k.kernel!), { all, maxStates: 1_000_000 });
};

describe('checker regressions', () => {
  test('expect_tx counting one of two tiles: the larger copy can land first and complete the phase early (tx-mismatch, race on the other tile)', () => {
    const r = run('p1_expect_tx_one_tile.mbk', true);
    expect(r.verdict).toBe('tx-mismatch');
    const kinds = new Set(r.hazards.map((h) => `${h.kind} ${h.subject?.name}`));
    expect(kinds.has('race B[0]')).toBe(true);
    expect(kinds.has('tx-mismatch full[0]')).toBe(true);
  });
  test('the fixed version is clean', () => {
    expect(run('p1_fixed.mbk').verdict).toBe('ok');
  });
  test('a final cluster barrier orders earlier remote arrives: no inflight-at-exit', () => {
    const r = run('p3_fixed.mbk');
    expect(r.verdict).toBe('ok');
    expect(r.hazards).toEqual([]);
  });
  test('without it, a CTA can exit while its peer\'s remote arrive is in flight', () => {
    const r = run('p3_cluster_exit.mbk');
    expect(r.verdict).toBe('inflight-at-exit');
  });
  test('a multicast mask that misses a CTA: the hang names the barrier that misses the bytes, and the mask', () => {
    const r = run('p4_mcast_mask.mbk', true);
    expect(r.verdict).toBe('hang');
    expect(r.hazards[0]!.subject?.name).toBe('full[0]@c2');
    const tx = r.hazards.find((h) => h.kind === 'tx-mismatch' && h.subject?.name === 'full[0]@c2')!;
    expect(tx.details.some((d) => d.includes('multicast=3 (its multicast mask must include CTA rank 2'))).toBe(true);
  });
  test('its fix checks ok: remote arrives and multicast landings that cannot complete a phase are reduced', () => {
    const r = run('p4_fixed.mbk');
    expect(r.verdict).toBe('ok');
    expect(r.hazards).toEqual([]);
    // 34,436 states with remote arrives postponed only while all of them in flight together cannot
    // complete the phase (10,291 under the earlier single-landing rule, which lost schedules).
    expect(r.coverage.states).toBeLessThan(40_000);
  });
  test('a copy that the reduction lands early is still in flight at exit in another schedule', () => {
    const r = run('p5_copy_before_arrive_exit.mbk', true);
    expect(r.verdict).toBe('inflight-at-exit');
    expect(r.hazards[0]!.subject?.name).toBe('full[0]');
  });
  test('a commit before the stage\'s last MMA: the race names the access, the MMAs and the commits', () => {
    const r = run('p6_commit_before_last_mma.mbk');
    expect(r.verdict).toBe('race');
    const race = r.hazards.find((h) => h.kind === 'race')!;
    // The copy (line 23) writes while the stage's last MMA (line 32) still reads; the commit that
    // released the producer (line 31) is cited.
    expect(race.message).toContain('TMA copy issued by producer writes A[0] while the tcgen05.mma issued by mma (line 32) is still reading it');
    expect(race.locations.map((l) => l.line)).toEqual([23, 32, 31]);
    // Without the stable steps the shortest trace lets the MMAs finish first: the race then names
    // the finished MMAs (30, 32) that no commit has signalled, and the commits (31, 33).
    const k = parseSketch(readFileSync(join(__dirname, 'fixtures', 'check', 'p6_commit_before_last_mma.mbk'), 'utf8'), 'p6');
    const plain = check(instantiate(k.kernel!), { maxStates: 1_000_000, stableWaits: false }).hazards.find((h) => h.kind === 'race')!;
    expect(plain.message).toContain('which a tcgen05.mma issued by mma was reading; that MMA has finished, but no tcgen05.commit after it has signalled a barrier yet');
    expect(plain.locations.map((l) => l.line)).toEqual([23, 30, 31, 32, 33]);
  });
  test('only the elected thread waits on the full barrier: the other warps\' reads race', () => {
    const r = run('p7_elect_wait.mbk', true);
    expect(r.verdict).toBe('race');
    expect(r.hazards.map((h) => `${h.kind} ${h.subject?.name}`)).toContain('race X[0]');
  });
  test('an agent that faults before its first operation (division by zero) is reported, not ok', () => {
    const k = kernel('div');
    k.barriers('b', 1, { count: 1 });
    k.role('p', { warps: 1, per: 'one' }, (r) => { r.let('z', 0); r.let('x', '4 / z'); r.arrive('b[0]'); });
    const r = check(instantiate(k.build()));
    expect(r.verdict).toBe('arith');
    expect(r.hazards[0]!.message).toBe('division by zero: 4 / 0 in an expression of p');
  });
});

describe('wrong results a new user hit', () => {
  test('a wait on a never-initialized barrier is an error, not a trap: parity 1 passes, parity 0 blocks as on the H200\'s zero word', () => {
    const r = run('u1_wait_uninit.mbk', true);
    expect(r.verdict).toBe('uninitialized-wait');
    const w = r.hazards.filter((h) => h.kind === 'uninitialized-wait');
    // One finding per (kind, subject): the wait at line 8 (shortest), the one at line 10 merged into it.
    expect(w.map((h) => h.locations[0]!.line)).toEqual([8]);
    expect(w[0]!.also?.locations.map((l) => l.line)).toEqual([10]);
    expect(w.every((h) => h.severity === 'error' && h.subject?.name === 'full[0]')).toBe(true);
    expect(w.find((h) => h.locations[0]!.line === 8)!.message).toContain('on a zero word it passes (parity 1');
    expect(r.hazards.some((h) => h.kind === 'hang')).toBe(true);
    const k = parseSketch(readFileSync(join(__dirname, 'fixtures', 'check', 'u1_wait_uninit.mbk'), 'utf8'), 'u1');
    const sim = simulate(instantiate(k.kernel!));
    expect(sim.verdict).toBe('hang');
    expect(sim.final.agents[0]!.status).toBe('run');
    expect(sim.diagnostics.map((d) => d.diag.code)).toEqual(['uninitialized-wait', 'uninitialized-wait']);
  });
});

describe('copies and barriers of other CTAs', () => {
  test('a copy into CTA 1 naming CTA 0\'s barrier is tma-barrier-cta, never credited to CTA 1\'s own barrier', () => {
    const r = run('u2_tma_remote_barrier.mbk', true);
    expect(r.verdict).toBe('tma-barrier-cta');
    const h = r.hazards.find((x) => x.kind === 'tma-barrier-cta')!;
    expect(h.subject?.name).toBe('bar[0]@c0');
    expect(h.message).toContain('its mbarrier bar[0]@c0 is in CTA 0 but its destination R[0]@c1 is in CTA 1');
    expect(h.locations[0]!.line).toBe(10);
    // The step that names bar[0]@c0 leaves CTA 1's own barrier without the bytes.
    const last = h.trace.at(-1)!;
    expect(last.barriers.map((b) => `${b.name} ${b.tx}`)).toEqual(['bar[0]@c0 4096']);
    expect(r.hazards.some((x) => x.kind === 'tx-mismatch' && x.subject?.name === 'bar[0]@c1')).toBe(false);
  });
  test('the same-CTA barrier and a multicast by offset check ok', () => {
    const r = run('u2_fixed.mbk', true);
    expect(r.verdict).toBe('ok');
    expect(r.hazards).toEqual([]);
  });
});

describe('distributed shared memory of an exited CTA', () => {
  test('a read of CTA 0\'s buffer after CTA 0 has exited is exited-cta, on that buffer', () => {
    const r = run('u3_dsmem_after_exit.mbk', true);
    expect(r.verdict).toBe('exited-cta');
    const h = r.hazards.find((x) => x.kind === 'exited-cta')!;
    expect(h.subject).toEqual({ type: 'buffer', name: 'X[0]@c0' });
    expect(h.locations[0]!.line).toBe(14);
    expect(h.trace.some((t) => t.notes.some((n) => n.includes('main@c0 exits')))).toBe(true);
  });
  test('a cluster barrier before exit fixes it', () => {
    expect(run('u3_fixed.mbk', true).verdict).toBe('ok');
  });
});

describe('reductions that lost a hazard (differential fixtures)', () => {
  const fixture = (f: string) => instantiate(JSON.parse(readFileSync(join(__dirname, 'fixtures', 'differential', f), 'utf8')) as Kernel);
  test('warps of two instances of a split role are not one symmetry group: the race between instances is found with every reduction', () => {
    const p = fixture('sibling-warps-expect-tx-race.json');
    // r2: 2 instances of 2 warps; the warps of one instance are slice siblings, those of two instances are not.
    expect(analyse(p).groups.map((g) => g.agents)).toEqual([[0, 1], [2, 3]]);
    for (const opts of [{}, { por: false }, { symmetry: false }]) {
      const r = check(p, { all: true, ...opts });
      expect(r.coverage.symmetry.length, JSON.stringify(opts)).toBe('symmetry' in opts ? 0 : 2);
      const race = r.hazards.find((h) => h.kind === 'race')!;
      expect(race.subject?.name).toBe('S1[0]');
      expect(race.message).toMatch(/^r2\[\d\]\.w\d writes S1\[0\]/);
    }
  });
  test('an expect_tx of another warp raises the tx-count a passing wait reads: the wait is not stable, and the second fresh pass after it is a phase-alias with every reduction', () => {
    for (const f of ['expect-tx-before-second-fresh-pass.json', 'expect-tx-raise-on-stable-wait.json']) {
      const p = fixture(f);
      for (const opts of [{}, { symmetry: false }, { por: false }, { por: false, symmetry: false }]) {
        const kinds = check(p, { all: true, ...opts }).hazards.map((h) => h.kind);
        expect(kinds, `${f} ${JSON.stringify(opts)}`).toContain('phase-alias');
      }
    }
  });
  test('commits landed early that let another commit complete the phase stay in flight until a wait observes it: the exit with them in flight is found with every reduction', () => {
    const p = fixture('forced-commits-enable-completion-exit.json');
    for (const opts of [{}, { symmetry: false }, { por: false }, { por: false, symmetry: false }]) {
      const h = check(p, { all: true, ...opts }).hazards.find((x) => x.kind === 'inflight-at-exit');
      expect(h?.subject, JSON.stringify(opts)).toEqual({ type: 'barrier', name: 'b1[0]' });
    }
  });
  test('an arrive is not taken alone while another agent can still change the tx-count: the over-arrival after a complete_tx between the arrivals is found with every reduction', () => {
    const p = fixture('stable-arrive-before-complete-tx.json');
    for (const opts of [{}, { symmetry: false }, { por: false, symmetry: false }]) {
      const kinds = check(p, { all: true, ...opts }).hazards.map((h) => `${h.kind}|${h.subject?.name}`);
      expect(kinds, JSON.stringify(opts)).toContain('over-arrival|b0[0]');
    }
  });
  test('a remote arrive whose issuer waits at barrier.cluster.arrive lands in every order: the peer\'s read after that CTA exited is found with partial-order reduction', () => {
    const p = fixture('remote-read-after-peer-exit.json');
    for (const opts of [{}, { symmetry: false }, { por: false, symmetry: false }]) {
      const h = check(p, { all: true, ...opts }).hazards.find((x) => x.kind === 'exited-cta');
      expect(h?.subject, JSON.stringify(opts)).toEqual({ type: 'buffer', name: 'S0[0]@c0' });
      expect(h!.trace.length).toBe(6);
    }
  });
});

describe('wait-for analysis by barrier key and remaining code', () => {
  test('three CTAs signalling in a chain: a hang rooted at CTA 0\'s barrier, no cycle', () => {
    const r = run('u4_three_cta_no_cycle.mbk', true);
    expect(r.verdict).toBe('hang');
    expect(r.hazards.some((h) => h.kind === 'cycle')).toBe(false);
    const hang = r.hazards.find((h) => h.kind === 'hang')!;
    expect(hang.subject?.name).toBe('go[0]@c0');
    // The static finding that explains it comes first.
    expect(hang.cause?.kind).toBe('count-mismatch');
    expect(hang.details[0]).toBe('root cause (static count-mismatch): go[0]@c0 expects 1 arrival(s) per phase, but no operation ever arrives on it, so a wait for its phase 0 can never pass; the arrive on go at line 11 runs but never names go[0]@c0 with these parameters (its index, or a branch around it, leaves it out)');
    expect(hang.details[1]).toContain('no agent arrives on go[0]@c0 anywhere in the kernel');
    expect(hang.details[2]).toContain('agents that can still arrive on go[0]@c1: main@c0 (blocked in');
    expect(hang.details.join('\n')).not.toContain('wait-for cycle');
  });
  test('a waiter missing bytes that no one can send is the root cause, not a cycle', () => {
    const r = run('u5_bytes_nobody_sends.mbk', true);
    expect(r.hazards.map((h) => h.kind)).toEqual(['hang', 'tx-mismatch']);
    const hang = r.hazards[0]!;
    expect(hang.subject?.name).toBe('full[0]');
    expect(hang.details[0]).toContain('4096 bytes were expected (expect_tx) but no copy in flight will deliver them; no running agent\'s remaining code delivers more bytes to it than it expects');
  });
  test('a real ring still is a cycle: each side waits for the other\'s release', () => {
    const src = `kernel ring arch=sm_90a
barrier a[1] count=1
barrier b[1] count=1
role p warps=1 per=one:
    mbarrier.try_wait.parity a[0], 0
    mbarrier.arrive b[0]
role q warps=1 per=one:
    mbarrier.try_wait.parity b[0], 0
    mbarrier.arrive a[0]
`;
    const r = check(instantiate(parseSketch(src, 'ring.mbk').kernel!), { all: true });
    const cyc = r.hazards.find((h) => h.kind === 'cycle')!;
    expect(cyc.message).toMatch(/^wait-for cycle: (p → q → p|q → p → q)/);
  });
  test('hangs on a named barrier and on the cluster barrier have subjects', () => {
    const r = run('u6_named_cluster_hang.mbk', true);
    const hang = r.hazards.find((h) => h.kind === 'hang')!;
    expect(hang.subject).toEqual({ type: 'barrier', name: 'bar.sync 1@c0' });
    expect(hang.cause?.message).toBe('named barrier 1 has 32 participating threads per use (producer@c0 32) but count 64');
    expect(hang.details[1]).toContain('no running agent of the CTA can still join it');
    const src = `kernel cl arch=sm_90a cluster=2
role p warps=1 per=one:
    barrier.cluster.arrive
    barrier.cluster.wait
    if cta == 0:
        barrier.cluster.arrive
        barrier.cluster.wait
`;
    const r2 = check(instantiate(parseSketch(src, 'cl.mbk').kernel!), { all: true });
    expect(r2.verdict).toBe('ok'); // an exited agent no longer counts for the cluster barrier
    const r3 = check(instantiate(parseSketch(src.replace('        barrier.cluster.wait\n', '        barrier.cluster.wait\n    else:\n        bar.sync 2, 64\n'), 'cl.mbk').kernel!), { all: true });
    const h3 = r3.hazards.find((h) => h.kind === 'hang')!;
    expect(h3.subject).toEqual({ type: 'barrier', name: 'barrier.cluster' });
    expect(h3.details[0]).toBe('p@c0 blocked in barrier.cluster.wait (line 7): barrier.cluster.wait: p@c1 (blocked in bar.sync 2, 64, line 9) has not arrived');
    expect(r3.hazards.some((h) => h.kind === 'cycle')).toBe(false);
  });
});

describe('hang reports that lead with the cause', () => {
  test('a waiter two phases behind is said to be so, right after what it waits for', () => {
    const r = run('u7_two_phases_behind.mbk', true);
    const hang = r.hazards.find((h) => h.kind === 'hang')!;
    expect(hang.details[0]).toContain('waits for phase 3 of full[0] (parity 1) to complete; consumer is 2 phases behind: its waits last observed phase 0 of full[0], and phases 1..2 completed without it');
    expect(hang.details[0]).toContain('(the agents that arrive on it have finished: producer (exited))');
  });
});

describe('race reports name the release and the fix', () => {
  /**
   * The race `check` reports first in a sketch (parsed with no diagnostic, instantiated with
   * `params`): the harness of the fix-text tests, which then read its `race.fix`.
   */
  const firstRace = (src: string, file: string, params: Record<string, number> = {}) => {
    const parsed = parseSketch(src, file);
    expect(parsed.diagnostics).toEqual([]);
    const race = check(instantiate(parsed.kernel!, params)).hazards.find((h) => h.kind === 'race');
    expect(race?.race).toBeDefined();
    return race!;
  };
  test('B15: the arrive after wgmma.wait_group 1 released the stage; the fix is the wait_group depth', async () => {
    const src = readFileSync(join(__dirname, '..', 'examples', 'bugs', 'B15.mbk'), 'utf8');
    const r = check(instantiate(parseSketch(src, 'B15.mbk').kernel!));
    const race = r.hazards.find((h) => h.kind === 'race')!;
    expect(race.race!.release).toBe('producer went on after its wait on empty[0] (line 17), which observed phase 0; that phase was completed by mbarrier.arrive empty[s] of consumer.w0 (line 29)');
    expect(race.race!.fix).toMatch(/^wait_group depth: consumer\.w0's wgmma.wait_group 1 \(line 28\) leaves 1 group\(s\) in flight/);
    expect(race.locations.map((l) => l.line)).toContain(29);
    const { checkJson } = await import('../src/check/report.js');
    const doc = checkJson(r) as { hazards: { race?: { fix: string } }[] };
    expect(doc.hazards[0]!.race!.fix).toBe(race.race!.fix);
  });
  test('a copy that lands after the consumer passed a wait on another barrier: a wait on the right barrier', () => {
    const src = `kernel wrongbar arch=sm_90a
barrier full[1] count=1
barrier other[1] count=1
smem A[1] bytes=1024
role producer warps=1 per=one:
    mbarrier.arrive other[0]
    mbarrier.arrive.expect_tx full[0], 1024
    cp.async.bulk.tensor A[0], 1024, full[0]
role consumer warps=1 per=one:
    mbarrier.try_wait.parity other[0], 0
    ld.shared A[0]
    mbarrier.try_wait.parity full[0], 0
`;
    const race = firstRace(src, 'w.mbk');
    expect(race.race!.fix).toMatch(/^a wait on the right barrier: the write by TMA \(from producer\) \(line 8\) completes on full\[0\], but consumer waited on other\[0\]/);
    expect(race.race!.release).toContain('that phase was completed by mbarrier.arrive other[0] of producer (line 6)');
  });
  test('a reader that never waited on full (its wait removed from examples/pipeline.mbk): the fix names full[0] and the read, not the parity of its other wait', () => {
    const src = readFileSync(join(__dirname, '..', 'examples', 'pipeline.mbk'), 'utf8');
    const cut = src.replace('            mbarrier.try_wait.parity full[s], (i / S) & 1\n', '');
    expect(cut).not.toBe(src);
    const race = firstRace(cut, 'pipeline.mbk', { K: 2, TILES: 1, S: 2 });
    expect(race.race!.fix).toBe("a wait on the right barrier: the write by TMA (from producer) (line 27) completes on full[0], but mma waited on acc_empty[0] (line 32) and never on full[0] before the read by tcgen05.mma (from mma) (line 36): wait on full[0] for the phase that write completes before line 36. (read by tcgen05.mma (from mma) (line 36) against write by TMA (from producer) (line 27))");
    expect(race.details).toContain(`fix: ${race.race!.fix}`);
  });
  test('a consumer whose only wait before its read is the fresh empty barrier: the fix is a wait on full[0], not that wait\'s parity', () => {
    const src = `kernel nowait arch=sm_90a
barrier full[1] count=1
barrier empty[1] count=1
smem A[1] bytes=1024
role producer warps=1 per=one:
    mbarrier.try_wait.parity empty[0], 1
    mbarrier.arrive.expect_tx full[0], 1024
    cp.async.bulk.tensor A[0], 1024, full[0]
role consumer warps=1 per=one:
    mbarrier.try_wait.parity empty[0], 1
    ld.shared A[0]
    mbarrier.arrive empty[0]
`;
    const race = firstRace(src, 'n.mbk');
    expect(race.race!.fix).toBe('a wait on the right barrier: the write by TMA (from producer) (line 8) completes on full[0], but consumer waited on empty[0] (line 10) and never on full[0] before the read by consumer (line 11): wait on full[0] for the phase that write completes before line 11. (read by consumer (line 11) against write by TMA (from producer) (line 8))');
  });
  test('a generic write handed on by an arrive on full, read after a wait on empty only: the fix names full and the arrive', () => {
    const src = `kernel gen arch=sm_90a
barrier full[1] count=1
barrier empty[1] count=1
smem A[1] bytes=1024
role producer warps=1 per=one:
    mbarrier.try_wait.parity empty[0], 1
    st.shared A[0]
    mbarrier.arrive full[0]
role consumer warps=1 per=one:
    mbarrier.try_wait.parity empty[0], 1
    ld.shared A[0]
    mbarrier.arrive empty[0]
    mbarrier.try_wait.parity full[0], 0
`;
    const race = firstRace(src, 'g.mbk');
    expect(race.race!.fix).toBe("a wait on the right barrier: the write by producer (line 7) is handed on by producer's arrive on full (line 8), but consumer waited on empty[0] (line 10) and never on full before the read by consumer (line 11): wait on full for the phase that arrive completes before line 11. (read by consumer (line 11) against write by producer (line 7))");
  });
  test('a wait on full with the fresh-barrier parity: the fix stays the wait\'s parity', () => {
    const src = `kernel wrongparity arch=sm_90a
barrier full[1] count=1
smem A[1] bytes=1024
role producer warps=1 per=one:
    mbarrier.arrive.expect_tx full[0], 1024
    cp.async.bulk.tensor A[0], 1024, full[0]
role consumer warps=1 per=one:
    mbarrier.try_wait.parity full[0], 1
    ld.shared A[0]
    mbarrier.try_wait.parity full[0], 0
`;
    const race = firstRace(src, 'p.mbk');
    expect(race.race!.fix).toBe("the wait's parity: consumer's wait on full[0] (line 8) passed on the fresh barrier (parity 1 in phase 0) before any phase completed, so nothing orders it after the write by TMA (from producer) (line 6): wait with the parity of a phase completed after that access (parity 0 for the first). (read by consumer (line 9) against write by TMA (from producer) (line 6))");
  });
  test('the strict cross-proxy race (B24) names the hand-off that let the copy go and where the proxy fence goes', () => {
    const src = readFileSync(join(__dirname, '..', 'examples', 'bugs', 'B24.mbk'), 'utf8');
    const r = check(instantiate(parseSketch(src, 'B24.mbk').kernel!), { strict: true });
    const race = r.hazards.find((h) => h.kind === 'race')!;
    expect(race.details[0]).toBe('released by: producer went on after its wait on empty[0] (line 16), which observed phase 0; that phase was completed by mbarrier.arrive empty[0] of consumer.w0 (line 25)');
    expect(race.details[1]).toMatch(/^fix: a proxy fence: fence\.proxy\.async by the threads that accessed the buffer, before their release \(line 25\), or by producer after its wait on empty\[0\] \(line 16\) and before the copy \(line 19\)/);
    expect(race.sites).toEqual({ release: expect.objectContaining({ line: 25 }), wait: expect.objectContaining({ line: 16 }), fix: expect.objectContaining({ line: 16 }) });
    expect(race.locations.map((l) => l.line)).toEqual([19, 25, 16]);
  });
  test('an overwrite race that is the only race keeps its place by trace length: --all gives the verdict of the first-error search (B15)', () => {
    const src = readFileSync(join(__dirname, '..', 'examples', 'bugs', 'B15.mbk'), 'utf8');
    const k = parseSketch(src, 'B15.mbk').kernel!;
    const first = check(instantiate(k));
    const all = check(instantiate(k), { all: true });
    expect(first.verdict).toBe('race');
    expect(all.verdict).toBe('race');
    expect(all.hazards.map((h) => h.kind)).toEqual(['race', 'hang', 'race', 'inflight-at-exit']);
  });
  test('a TMA overwrite of a buffer a consumer read ranks after other errors (a symptom, not the cause)', async () => {
    const { causeRank } = await import('../src/check/cause-static.js');
    expect(causeRank({ kind: 'race' }, true)).toBe(1);
    expect(causeRank({ kind: 'race' }, false)).toBe(0);
    expect(causeRank({ kind: 'race' }, undefined)).toBe(0);
    expect(causeRank({ kind: 'hang' }, true)).toBe(0);
  });
});

describe('hang subjects in JSON and SARIF', () => {
  test('a named-barrier hang carries its subject into the SARIF result', async () => {
    const r = run('u6_named_cluster_hang.mbk');
    const { checkSarif } = await import('../src/check/report.js');
    const sarif = checkSarif(r) as { runs: { results: { ruleId: string; properties: { subject: unknown; cause?: { kind: string } } }[] }[] };
    const res = sarif.runs[0]!.results.find((x) => x.ruleId === 'hang')!;
    expect(res.properties.subject).toEqual({ type: 'barrier', name: 'bar.sync 1@c0' });
    expect(res.properties.cause?.kind).toBe('count-mismatch');
  });
});

describe('the release that let the other side go', () => {
  test('a count too small for two consumers: the producer was released by one consumer while the other still reads', () => {
    const r = run('u8_release_count.mbk', true);
    const race = r.hazards.find((h) => h.kind === 'race' && h.subject?.name === 'A[0]')!;
    expect(race.race!.release).toBe('producer went on after its wait on empty[0] (line 10), which observed phase 0; that phase was completed by mbarrier.arrive empty[0] of consumer[0] (line 17)');
    expect(race.race!.fix).toMatch(/^arrival count: producer was released by consumer\[0\]'s arrive on empty\[0\] \(line 17\) while consumer\[1\] still used A\[0\]: the count of empty\[0\] \(1\)/);
    expect(race.locations.map((l) => l.line)).toContain(17);
  });
});

describe('a race that a count explains leads with the count', () => {
  // Protocols written from the docs by a new user (fixtures/causes/: larger than the fixtures the
  // parallel and hash tests sweep).
  const run = (f: string, all = false) => {
    const k = parseSketch(readFileSync(join(__dirname, 'fixtures', 'causes', f), 'utf8'), f);
    expect(k.diagnostics).toEqual([]);
    return check(instantiate(k.kernel!), { all, maxStates: 1_000_000 });
  };
  test('a multicast empty barrier whose count lacks the multicast factor: the count mismatch of empty[0] is the cause, the fix is the arrival count', () => {
    const r = run('multicast-empty-count.mbk');
    expect(r.verdict).toBe('race');
    const h = r.hazards[0]!;
    expect(h.cause?.kind).toBe('count-mismatch');
    expect(h.cause?.message).toMatch(/^empty\[0\]@c0 expects 1 arrival\(s\) per phase, but 2 agents arrive on it \(consumer@c0, consumer@c1\).*the count should be 2$/);
    expect(h.race!.fix).toMatch(/^arrival count across the cluster: .*\(CTA 1's arrivals on it come, but the phase completes before them\)/);
    expect(h.details[0]).toMatch(/^root cause \(static count-mismatch\)/);
  });
  test('a race whose own fix is already the arrival count keeps that fix', () => {
    const r = run('multicast-empty-count.mbk', true);
    for (const h of r.hazards.filter((x) => x.kind === 'race' && x.cause)) expect(h.race!.fix.startsWith('arrival count')).toBe(true);
  });
});
