import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { check } from '../src/check/index.js';
import { parseSketch } from '../src/lang/index.js';
import { instantiate } from '../src/machine/program.js';
import { kernel } from '../src/kernel/builder.js';
import { simulate } from '../src/sim/simulate.js';

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
    expect(r.coverage.states).toBeLessThan(20_000);
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
    expect(race.message).toContain('which a tcgen05.mma issued by mma was reading; that MMA has finished, but no tcgen05.commit after it has signalled a barrier yet');
    expect(race.locations.map((l) => l.line)).toEqual([23, 30, 31, 32, 33]);
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
    expect(r.hazards[0]!.message).toBe('division by zero in an expression of p');
  });
});

describe('wrong results a new user hit', () => {
  test('a wait on a never-initialized barrier is an error, not a trap: parity 1 passes, parity 0 blocks as on the H200\'s zero word', () => {
    const r = run('u1_wait_uninit.mbk', true);
    expect(r.verdict).toBe('uninitialized-wait');
    const w = r.hazards.filter((h) => h.kind === 'uninitialized-wait');
    expect(w.map((h) => h.locations[0]!.line).sort((x, y) => x - y)).toEqual([8, 10]);
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
    expect(last.barriers.map((b) => `${b.name} ${b.tx}`)).toEqual(['bar[0]@c0 0']);
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
