/**
 * Buggy protocols written from the README and docs alone (test/fixtures/trial/), each with its
 * corrected twin: the report's first hazard leads with the root cause (the cause line or the fix
 * names the real mistake and its line), and every corrected twin checks OK.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { check, type CheckResult } from '../src/check/check.js';
import { parseSketch } from '../src/lang/index.js';
import { instantiate } from '../src/machine/program.js';

const run = (f: string, set: Record<string, number> = {}): CheckResult => {
  const src = readFileSync(join(__dirname, 'fixtures', 'trial', f), 'utf8');
  const k = parseSketch(src, f);
  expect(k.diagnostics).toEqual([]);
  return check(instantiate(k.kernel!, set), { timeout: 120_000 });
};

describe('the first hazard is the root cause', () => {
  test('a wgmma wait_group too shallow before the release: the fix names the wait_group depth and its line', () => {
    const r = run('p1_wgmma_depth.mbk');
    expect(r.verdict).toBe('race');
    expect(r.hazards[0]!.race!.fix).toMatch(/^wait_group depth: consumer\.w0's wgmma\.wait_group 1 \(line 33\)/);
  });

  test('expect_tx short of the copies: TX-MISMATCH on the full barrier, naming the expect_tx line', () => {
    const r = run('p2_expect_tx.mbk');
    expect(r.verdict).toBe('tx-mismatch');
    expect(r.hazards[0]!.subject?.name).toBe('full[0]');
    expect(r.hazards[0]!.details).toContain('bytes registered at line 29: mbarrier.arrive.expect_tx full[s], TILE_A + TILE_B');
  });

  test('a multicast producer released by its own CTA only: the fix is the cluster-wide arrival count, not another wait', () => {
    const r = run('p3_cluster_peer.mbk');
    expect(r.verdict).toBe('race');
    const fix = r.hazards[0]!.race!.fix;
    expect(fix).toMatch(/^arrival count across the cluster: .* lands in A\[0\]@c1 \(CTA 1\), but producer@c0 was let go by empty\[0\]@c0, whose phase completed on CTA 0's arrivals alone/);
    expect(fix).not.toMatch(/a wait on the right barrier/);
  });

  test('trip counts that differ: the hang leads with the trip mismatch; so does the copy left in flight at exit', () => {
    const hang = run('p4_trip_count.mbk');
    expect(hang.verdict).toBe('hang');
    expect(hang.hazards[0]!.cause?.kind).toBe('trip-mismatch');
    const exit = run('p4_trip_count.mbk', { TILES: 2 });
    expect(exit.verdict).toBe('inflight-at-exit');
    expect(exit.hazards[0]!.cause?.kind).toBe('trip-mismatch');
    expect(exit.hazards[0]!.details[0]).toMatch(/^root cause \(static trip-mismatch\): consumer waits on full\[0\] 4 time\(s\)/);
  });

  test('a commit to the wrong barrier: the hang leads with the barrier no one arrives on, without talk of bytes', () => {
    const r = run('p5_commit_wrong_bar.mbk');
    expect(r.verdict).toBe('hang');
    expect(r.hazards[0]!.cause?.kind).toBe('count-mismatch');
    expect(r.hazards[0]!.cause?.message).toMatch(/^acc_full\[0\] expects 1 arrival\(s\) per phase, but no operation ever arrives on it, so/);
    expect(r.hazards[0]!.cause?.message).not.toMatch(/bytes|tx/);
  });

  test('two consumer warpgroups arriving on an empty barrier of count 1: a count mismatch with the count it should be, not a trip mismatch', () => {
    const r = run('count_two_consumers.mbk');
    expect(r.verdict).toBe('race');
    expect(r.hazards[0]!.cause?.kind).toBe('count-mismatch');
    expect(r.hazards[0]!.cause?.message).toMatch(/2 agents arrive on it \(consumer\[0\]\.w0, consumer\[1\]\.w0\).*the count should be 2$/);
    expect(r.warnings.filter((w) => w.kind === 'trip-mismatch')).toEqual([]);
  });

  test('a generic write handed to a bulk store without a proxy fence: the fix says the fence goes between the write and the bar.sync', () => {
    const r = run('epilogue_fence.mbk');
    expect(r.verdict).toBe('missing-fence');
    const h = r.hazards[0]!;
    expect(h.details[0]).toMatch(/^fix: fence\.proxy\.async after consumer\.w\d's generic write of C\[0\] \(line 25\), before bar\.sync 1, 128 \(line 26\)/);
    expect(h.sites?.fix?.line).toBe(26);
  });
});

describe('the corrected twins check OK', () => {
  for (const f of ['p1_wgmma_depth', 'p2_expect_tx', 'p3_cluster_peer', 'p4_trip_count', 'p5_commit_wrong_bar']) {
    test(f, () => {
      const r = run(`${f}.fixed.mbk`);
      expect(r.verdict).toBe('ok');
      expect(r.complete).toBe(true);
    });
  }
});
