import { describe, expect, test } from 'vitest';
import { COLLECT_MS_PER_MB, deadlineCollector, FRESH_SHARE, Governor, SAMPLE_MS } from '../src/machine/governor.js';

/** A governor on a fake clock and a fake resident set. */
function fake(limits: ConstructorParameters<typeof Governor>[0], every = 4) {
  const env = { t: 1000, rss: 100 as number | null };
  const g = new Governor(limits, { now: () => env.t, rss: () => env.rss, every });
  return { g, env };
}

describe('resource governor', () => {
  test('the deadline: tick reads the clock every `every` calls; the bound stays once hit', () => {
    const { g, env } = fake({ timeoutMs: 50 });
    expect(g.deadline).toBe(1050);
    for (let i = 0; i < 8; i++) expect(g.tick()).toBe(null);
    env.t = 1050;
    expect([g.tick(), g.tick(), g.tick()]).toEqual([null, null, null]);
    expect(g.tick()).toBe('timeout'); // the 4th call reads the clock
    env.t = 0;
    expect(g.check()).toBe('timeout');
    expect(g.stoppedBy).toBe('timeout');
  });

  test('slow ticks: the clock is read more often (64 ticks taking 640 ms), and less again when ticks are fast', () => {
    let t = 0;
    let reads = 0;
    const g = new Governor({ timeoutMs: 1e9 }, { now: () => (reads++, t), rss: () => 0, every: 64 });
    for (let i = 0; i < 64 * 16; i++) {
      t += 10;
      g.tick();
    }
    const slowReads = reads;
    reads = 0;
    for (let i = 0; i < 64 * 16; i++) g.tick(); // free ticks: the interval doubles back toward 64
    // With every = 64 throughout, 16 checks (two clock reads each); here one check every 2 ticks.
    expect(slowReads).toBeGreaterThan(500);
    expect(reads).toBeLessThan(slowReads / 2);
  });

  test('memory: the resident set above the bound stops; allow refuses a growth that would pass it', () => {
    const { g, env } = fake({ maxMemory: 1000 });
    expect(g.check()).toBe(null);
    expect(g.allow(900)).toBe(true); // 100 + 900 is the bound, not past it
    expect(g.stoppedBy).toBe(null);
    env.rss = 200;
    expect(g.allow(801)).toBe(false);
    expect(g.stoppedBy).toBe('max-memory');
    expect(g.peak).toBe(200);
  });

  test('memory is sampled at most every SAMPLE_MS ms; allow reads it afresh only near the bound', () => {
    const { g, env } = fake({ maxMemory: 1000 });
    expect(g.memory()).toBe(100);
    env.rss = 5000;
    env.t += SAMPLE_MS - 1;
    expect(g.memory()).toBe(100);
    expect(g.check()).toBe(null);
    // 100 + 600 is below FRESH_SHARE of the bound: decided on the last reading.
    expect(g.allow(1000 * FRESH_SHARE - 100)).toBe(true);
    expect(g.stoppedBy).toBe(null);
    // Past that share: read afresh, and the real 5000 refuses it.
    expect(g.allow(1000 * FRESH_SHARE - 99)).toBe(false);
    expect(g.stoppedBy).toBe('max-memory');
  });

  test('check reads the resident set again once SAMPLE_MS ms have passed', () => {
    const { g, env } = fake({ maxMemory: 1000 });
    expect(g.memory()).toBe(100);
    env.rss = 5000;
    env.t += SAMPLE_MS - 1;
    expect(g.check()).toBe(null);
    env.t += 1;
    expect(g.check()).toBe('max-memory');
  });

  test('where the resident set cannot be measured (a browser), the caller\'s estimate is the memory', () => {
    const { g, env } = fake({ maxMemory: 1000 });
    env.rss = null;
    env.t += 10;
    g.estimate = 999;
    expect(g.check()).toBe(null);
    g.estimate = 1001;
    env.t += 10;
    expect(g.check()).toBe('max-memory');
  });

  test('steps: step() counts to the bound', () => {
    const { g } = fake({ maxSteps: 3 });
    expect([g.step(), g.step(), g.step()]).toEqual([true, true, false]);
    expect(g.stoppedBy).toBe('max-steps');
  });

  test('linked governors share one stop: the first to hit a bound reports it, the others take it', () => {
    let flag: string | null = null;
    const env = { t: 0 };
    const mk = (deadline: number) => new Governor({ deadline, maxMemory: 1e12 }, {
      now: () => env.t, rss: () => 0, every: 1,
      linked: () => flag as 'timeout' | null, onStop: (b) => { flag ??= b; },
    });
    const a = mk(10);
    const b = mk(1e9);
    env.t = 11;
    expect(b.tick()).toBe(null);
    expect(a.tick()).toBe('timeout');
    expect(flag).toBe('timeout');
    expect(b.tick()).toBe('timeout');
  });

  test('no limits: never stops; the real resident set is read', () => {
    const g = new Governor();
    for (let i = 0; i < 1000; i++) expect(g.tick()).toBe(null);
    expect(g.memory(true)).toBeGreaterThan(10 * 1048576);
    expect(g.allow(1e15)).toBe(true);
  });
});

describe('forced collections near a deadline (issue 11)', () => {
  const MB = 1048576;
  test('one that would outlast the deadline at twice the slowest rate seen is skipped', () => {
    const env = { t: 0, runs: 0, cost: 0 };
    const collect = deadlineCollector(() => {
      env.runs++;
      env.t += env.cost;
    }, () => env.t);
    // No deadline: always. At first COLLECT_MS_PER_MB per MB: 100 MB is 200 ms.
    expect(collect(100 * MB, Infinity)).toBe(true);
    expect(collect(100 * MB, env.t + 100 * COLLECT_MS_PER_MB + 1)).toBe(true);
    expect(collect(100 * MB, env.t + 100 * COLLECT_MS_PER_MB)).toBe(false);
    // A collection that took 5 ms per MB: the next one needs 10 ms per MB before the deadline.
    env.cost = 500;
    expect(collect(100 * MB, env.t + 10_000)).toBe(true);
    expect(collect(100 * MB, env.t + 999)).toBe(false);
    expect(collect(100 * MB, env.t + 1001)).toBe(true);
    expect(env.runs).toBe(4);
  });

  test('the governor reads the resident set without collecting when the deadline is near', () => {
    const env = { t: 1000, rss: 900 * MB, runs: 0 };
    const g = new Governor({ maxMemory: 1000 * MB, timeoutMs: 1000 }, { now: () => env.t, rss: () => env.rss, collect: () => env.runs++ });
    expect(g.memory(true)).toBe(900 * MB); // 900 MB at 2 ms per MB: 1.8 s, past the deadline
    expect(env.runs).toBe(0);
    const far = new Governor({ maxMemory: 1000 * MB, timeoutMs: 10_000 }, { now: () => env.t, rss: () => env.rss, collect: () => env.runs++ });
    far.memory(true);
    expect(env.runs).toBe(1);
  });
});
