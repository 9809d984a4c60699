import { describe, expect, test } from 'vitest';
import { check, type CheckOptions } from '../src/check/index.js';
import { parseSketch } from '../src/lang/index.js';
import { Machine, type MachineState } from '../src/machine/machine.js';
import { instantiate, roleSplits, type Program } from '../src/machine/program.js';

/** Warps as agents: each warp of a role is its own agent (docs/LANGUAGE.md §5). */

function program(src: string, lockstep = false): Program {
  const r = parseSketch(src, 'w.mbk');
  expect(r.diagnostics.map((d) => d.message)).toEqual([]);
  return instantiate(r.kernel!, {}, { lockstep });
}

function verdict(src: string, opts: CheckOptions = {}): ReturnType<typeof check> {
  return check(program(src), { all: true, ...opts });
}

/** A producer refilling one stage K times; the consumer role's tail after its read is `release`. */
const ring = (release: string, emptyCount = 1) => `kernel ring arch=sm_90a
param K = 2
barrier full[1] count=1
barrier empty[1] count=${emptyCount}
smem R[1] bytes=4096
role producer warps=1 per=one:
    for i in range(0, K):
        mbarrier.try_wait.parity empty[0], (i & 1) ^ 1
        mbarrier.arrive.expect_tx full[0], 4096
        cp.async.bulk.tensor R[0], 4096, full[0]
role consumer warps=4:
    for i in range(0, K):
        mbarrier.try_wait.parity full[0], i & 1
        ld.shared R[0]
${release}
`;

describe('the agents of a role', () => {
  test('a 4-warp role is four agents of 32 threads; a per=one role stays one agent', () => {
    const p = program(ring('        elect:\n            mbarrier.arrive empty[0]'));
    expect(p.agents.map((a) => [a.name, a.threads, a.warps, a.warp])).toEqual([
      ['producer', 32, 1, 0], ['consumer.w0', 32, 1, 0], ['consumer.w1', 32, 1, 1], ['consumer.w2', 32, 1, 2], ['consumer.w3', 32, 1, 3],
    ]);
    const q = program(`kernel k arch=sm_90a
barrier b[1] count=1
role p warps=4 per=one:
    mbarrier.arrive b[0]
role c warps=2 threads=40:
    mbarrier.try_wait.parity b[0], 0
`);
    expect(q.agents.map((a) => [a.name, a.threads, a.warps])).toEqual([['p', 128, 4], ['c.w0', 32, 1], ['c.w1', 8, 1]]);
    expect(roleSplits(q.kernel.roles[0]!)).toBe(false);
    expect(roleSplits(q.kernel.roles[1]!)).toBe(true);
  });

  test('per=thread arrivals come from each warp; per=one from warp 0 only', () => {
    const p = program(`kernel k arch=sm_90a
barrier b[1] count=256
role r warps=4:
    mbarrier.arrive b[0]
    mbarrier.arrive b[0] per=warp
    mbarrier.arrive b[0] per=one
`);
    const m = new Machine(p);
    let s: MachineState = m.initial();
    for (let a = 0; a < 4; a++) s = m.step(s, { kind: 'agent', agent: a }).state; // the per-thread arrives
    expect(s.bars[0]!.pending).toBe(256 - 128);
    for (let a = 0; a < 4; a++) s = m.step(s, { kind: 'agent', agent: a }).state; // per=warp
    expect(s.bars[0]!.pending).toBe(256 - 132);
    // per=one: only warp 0 still has an operation; warps 1-3 stepped over it and finished.
    expect(s.agents.map((x) => x.status)).toEqual(['run', 'done', 'done', 'done']);
    s = m.step(s, { kind: 'agent', agent: 0 }).state;
    expect(s.bars[0]!.pending).toBe(256 - 133);
  });
});

describe('races between the warps of a role', () => {
  test('every warp reads, warp 0 alone releases a count-1 empty barrier: a race on the stage, with the warp named', () => {
    const r = verdict(ring('        elect:\n            mbarrier.arrive empty[0]'));
    expect(r.verdict).toBe('race');
    const race = r.hazards.find((h) => h.kind === 'race')!;
    expect(race.subject?.name).toBe('R[0]');
    expect(race.message).toMatch(/consumer\.w[123] reads R\[0\]/);
    // The lockstep model (one agent per role) says OK: the bug it could not see.
    expect(check(program(ring('        elect:\n            mbarrier.arrive empty[0]'), true), { all: true }).verdict).toBe('ok');
  });

  test('the fixes real kernels use: a bar.sync of the role before the elected arrive, or an arrive from every warp', () => {
    expect(verdict(ring('        bar.sync 1, 128\n        elect:\n            mbarrier.arrive empty[0]')).verdict).toBe('ok');
    expect(verdict(ring('        mbarrier.arrive empty[0] per=warp', 4)).verdict).toBe('ok');
    // Every warp arrives, but the count still says one: the other warps' arrivals run into the next phase.
    expect(verdict(ring('        mbarrier.arrive empty[0] per=warp', 1)).verdict).not.toBe('ok');
  });

  test('leader warp arms the barrier and issues the copy, then every warp waits: OK; a warp that reads before waiting races', () => {
    const lead = (tail: string) => `kernel lead arch=sm_90a
barrier bar[1] count=1
smem R[1] bytes=4096
role main warps=4:
    if warp == 0:
        elect:
            mbarrier.arrive.expect_tx bar[0], 4096
            cp.async.bulk.tensor R[0], 4096, bar[0]
${tail}
`;
    expect(verdict(lead('    mbarrier.try_wait.parity bar[0], 0\n    ld.shared R[0]')).verdict).toBe('ok');
    const bad = verdict(lead('    if warp == 3:\n        ld.shared R[0]\n    mbarrier.try_wait.parity bar[0], 0\n    ld.shared R[0]'));
    expect(bad.verdict).toBe('race');
    expect(bad.hazards[0]!.message).toMatch(/main\.w3 reads R\[0\]/);
  });

  test('one thread\'s operation under a condition on the warp is the elected lane of each warp that reaches it (PTX: if (warp_idx == k && elect_one_sync()))', () => {
    const leaders = (cond: string, count: number, body = '        elect:\n            mbarrier.arrive b') => `kernel leaders arch=sm_90a
barrier b count=${count}
role r warps=8:
    ${cond}
${body}
    mbarrier.try_wait.parity b, 0
`;
    // warp 1's elected lane arrives: OK (it was warp 0's lane only, which never reaches the block: a hang)
    expect(verdict(leaders('if warp == 1:', 1)).verdict).toBe('ok');
    // the leaders of the two warpgroups, through a variable computed from the warp
    expect(verdict(leaders('w = warp % 4\n    if w == 0:', 2)).verdict).toBe('ok');
    // each of warpgroup 1's four warps
    expect(verdict(leaders('if warpgroup == 1:', 4, '        mbarrier.arrive b per=one')).verdict).toBe('ok');
    expect(verdict(leaders('if warp % 4 == 0:', 1)).verdict).not.toBe('ok');
    // without a condition on the warp, one thread of the role is warp 0's elected lane
    expect(verdict(leaders('if 1 == 1:', 1)).verdict).toBe('ok');
    expect(verdict(leaders('if 1 == 1:', 2)).verdict).toBe('hang');
  });

  test('warpgroup-collective wgmma: a release by warp 2 after its own wait_group is ordered after the MMA', () => {
    const wg = (n: number) => `kernel wg arch=sm_90a
param K = 2
barrier full[1] count=1
barrier empty[1] count=4
smem A[1] bytes=4096
role producer warps=1 per=one:
    for i in range(0, K):
        mbarrier.try_wait.parity empty[0], (i & 1) ^ 1
        mbarrier.arrive.expect_tx full[0], 4096
        cp.async.bulk.tensor A[0], 4096, full[0]
role consumer warps=4:
    for i in range(0, K):
        mbarrier.try_wait.parity full[0], i & 1
        wgmma.mma_async A[0], A[0] shape=64x64x16
        wgmma.commit_group
        wgmma.wait_group ${n}
        mbarrier.arrive empty[0] per=warp
`;
    expect(verdict(wg(0)).verdict).toBe('ok');
    // wait_group 1 lets the MMA still be reading when each warp releases the stage.
    const r = verdict(wg(1));
    expect(r.hazards.filter((h) => h.kind === 'race').map((h) => h.subject?.name)).toContain('A[0]');
  });

  test('the MMA of a warpgroup completes only after every warp issued it', () => {
    const p = program(`kernel wg arch=sm_90a
smem A[1] bytes=4096
role c warps=4:
    wgmma.mma_async A[0], A[0] shape=64x64x16
    wgmma.commit_group
    wgmma.wait_group 0
`);
    const m = new Machine(p);
    let s = m.initial();
    s = m.step(s, { kind: 'agent', agent: 0 }).state; // the leader issues
    expect(s.inflight.map((o) => o.kind)).toEqual(['wgmma']);
    expect(m.enabled(s).filter((c) => c.kind === 'async')).toEqual([]);
    for (let a = 1; a < 4; a++) s = m.step(s, { kind: 'agent', agent: a }).state;
    expect(m.enabled(s).filter((c) => c.kind === 'async').length).toBe(1);
    // Warp 1 committed its group; its wait_group waits for the leader's MMA.
    s = m.step(s, { kind: 'agent', agent: 1 }).state;
    expect(m.agentEnabled(s, 1)).toBe(false);
  });
});

describe('the cost of warps as agents', () => {
  test('symmetric warps are one class; stable waits keep the reduced search equal to the full one', () => {
    const src = ring('        bar.sync 1, 128\n        elect:\n            mbarrier.arrive empty[0]');
    const full = verdict(src, { por: false, symmetry: false });
    const reduced = verdict(src);
    expect(reduced.verdict).toBe(full.verdict);
    expect(reduced.coverage.symmetry).toEqual([{ role: 'consumer', cta: 0, agents: 3 }]);
    expect(reduced.coverage.states).toBeLessThan(full.coverage.states);
    const noStable = verdict(src, { stableWaits: false });
    expect(noStable.verdict).toBe('ok');
    expect(reduced.coverage.states).toBeLessThan(noStable.coverage.states);
  });
});
