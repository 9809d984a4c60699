/**
 * The Timeline tab's hang list (src/report/hang-groups.ts): waiters blocked the same way (the warps of
 * two consumer warpgroups on one full barrier) are one entry naming them as warp ranges; waiters
 * blocked elsewhere or for other reasons stay apart, in the order of the hang report.
 */
import { describe, expect, test } from 'vitest';
import { parseSketch } from '../src/lang/index.js';
import { instantiate } from '../src/machine/program.js';
import { simulate } from '../src/sim/simulate.js';
import { waiterGroups } from '../src/report/hang-groups.js';

/** Two consumer warpgroups on a 3-stage ring whose expect_tx asks 1024 bytes more than the copies bring. */
const SKETCH = `kernel ring arch=sm_90a
param S = 3
param K = 9
barrier full[S] count=1
barrier empty[S] count=2
smem A[S] bytes=8192

role producer warps=1 per=one:
    for k in range(0, K):
        s = k % S
        mbarrier.try_wait.parity empty[s], ((k / S) & 1) ^ 1
        mbarrier.arrive.expect_tx full[s], 8192 + 1024
        cp.async.bulk.tensor A[s], 8192, full[s]

role mma warps=4 per=thread instances=2:
    for k in range(0, K):
        s = k % S
        mbarrier.try_wait.parity full[s], (k / S) & 1
        wgmma.mma_async A[s] shape=64x128x16
        wgmma.commit_group
        wgmma.wait_group 0
        elect:
            mbarrier.arrive empty[s]
`;

describe('hang list groups', () => {
  test('eight warps blocked on full[0] for the same reason are one entry; the producer is its own', () => {
    const r = parseSketch(SKETCH, 'ring.mbk');
    expect(r.diagnostics).toEqual([]);
    const sim = simulate(instantiate(r.kernel!));
    expect(sim.verdict).toBe('hang');
    expect(sim.hang!.waiters).toHaveLength(9);
    const groups = waiterGroups(sim.hang!.waiters);
    expect(groups.map((g) => [g.label, g.count, g.op, g.line])).toEqual([
      ['mma[0].w0–w3, mma[1].w0–w3 (8 agents)', 8, 'mbarrier.try_wait.parity full[s], (k / S) & 1', 18],
      ['producer', 1, 'mbarrier.try_wait.parity empty[s], ((k / S) & 1) ^ 1', 11],
    ]);
    expect(groups[0]!.reasons).toEqual(sim.hang!.waiters.find((w) => w.name === 'mma[1].w3')!.reasons);
    expect(groups[0]!.reasons.join(' ')).toContain('1024 bytes were expected');
  });
  test('waiters at different lines, or for different reasons, stay apart', () => {
    const w = (name: string, line: number, reasons: string[]) => ({ agent: 0, name, op: 'bar.sync 0', loc: { line, col: 1 }, kind: 'bar.sync' as const, reasons, signallers: [], subject: null, bytesMissing: false });
    const groups = waiterGroups([w('a.w0', 3, ['r']), w('a.w1', 4, ['r']), w('a.w2', 3, ['r']), w('a.w3', 3, ['other'])]);
    expect(groups.map((g) => [g.label, g.line, g.reasons])).toEqual([
      ['a.w0, a.w2 (2 agents)', 3, ['r']],
      ['a.w1', 4, ['r']],
      ['a.w3', 3, ['other']],
    ]);
  });
});

describe('warp runs in a cluster', () => {
  test('consecutive warps of one CTA fold with their CTA kept; runs stop at a CTA change', async () => {
    const { warpRuns } = await import('../src/machine/warp-runs.js');
    expect(warpRuns(['consumer.w0@c0', 'consumer.w1@c0', 'consumer.w2@c0', 'consumer.w0@c1', 'consumer.w1@c1', 'producer@c0']))
      .toEqual(['consumer.w0–w2@c0', 'consumer.w0–w1@c1', 'producer@c0']);
    expect(warpRuns(['mma[0].w0', 'mma[0].w1', 'mma[1].w0'])).toEqual(['mma[0].w0–w1', 'mma[1].w0']);
  });
});
