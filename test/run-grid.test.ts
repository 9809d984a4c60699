import { describe, expect, test } from 'vitest';
import { main } from '../src/cli/main.js';
import { kernel } from '../src/kernel/builder.js';
import { instantiate } from '../src/machine/program.js';
import { simulate } from '../src/sim/simulate.js';
import { loopSummary } from '../src/report/loop.js';

async function run(args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (s) => out.push(s), err: (s) => err.push(s), color: false });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

/** A 2-stage pipeline whose consumer spins W cycles an iteration (consumer-bound for large W). */
function spinPipe(W: number, tile = 16384) {
  const k = kernel('spin', { arch: 'sm_90a', params: { S: 2, N: 40 } });
  k.barriers('full', 'S', { count: 1 });
  k.barriers('empty', 'S', { count: 1 });
  k.smem('stage', 'S', tile);
  k.role('producer', { warps: 1, per: 'one' }, (r) =>
    r.for('it', 0, 'N', (r) => {
      r.let('s', 'it % S');
      r.if('it >= S', (r) => r.wait('empty[s]', '((it / S) & 1) ^ 1'));
      r.arriveExpectTx('full[s]', tile);
      r.tma('stage[s]', tile, 'full[s]', { tensor: false });
    }));
  k.role('consumer', { warps: 1, per: 'one' }, (r) =>
    r.for('it', 0, 'N', (r) => {
      r.let('s', 'it % S');
      r.wait('full[s]', '(it / S) & 1');
      r.work(W);
      r.arrive('empty[s]');
    }));
  return instantiate(k.build(), {});
}

describe('loop summary', () => {
  test('a consumer-bound loop: cycles per iteration just above W, bound by the consumer, bytes/cycle = tile / period', () => {
    const r = simulate(spinPipe(3000));
    const l = loopSummary(r)!;
    expect(l.iterations).toBe(40);
    expect(l.cyclesPerIteration).toBeGreaterThan(3000);
    expect(l.cyclesPerIteration).toBeLessThan(3200);
    expect(l.bound.resource).toBe('consumer issuing');
    expect(l.bound.share).toBeGreaterThan(0.95);
    expect(l.bytesPerCyclePerSm).toBeCloseTo(16384 / l.cyclesPerIteration, 0);
    expect(l.tflops).toBeNull();
  });

  test('without events there is no loop summary', () => {
    expect(loopSummary(simulate(spinPipe(100), { recordEvents: false }))).toBeNull();
  });
});

describe('mbsim run --grid / --active-sms / --omit', () => {
  test('--json --omit events,spans leaves them out and keeps the loop summary and ledger', async () => {
    const r = await run(['run', 'pipeline', '--json', '--omit', 'events,spans']);
    expect(r.code).toBe(0);
    const j = JSON.parse(r.out);
    expect(j.events).toBeUndefined();
    expect(j.spans).toBeUndefined();
    expect(j.ledger.phases.length).toBeGreaterThan(0);
    expect(j.loop.iterations).toBeGreaterThan(3);
    expect(j.loop.cyclesPerIteration).toBeGreaterThan(0);
  });

  test('--grid 132 shares the L2 bandwidth: a copy-heavy kernel is not faster than alone, and says so', async () => {
    const one = JSON.parse((await run(['run', 'pipeline', '--json', '--omit', 'events,spans,ledger'])).out);
    const full = JSON.parse((await run(['run', 'pipeline', '--json', '--omit', 'events,spans,ledger', '--grid', '132'])).out);
    expect(full.activeSms).toBe(132);
    expect(full.grid).toBe(132);
    expect(full.cycles).toBeGreaterThanOrEqual(one.cycles);
    expect(full.ledger).toBeUndefined();
    const text = await run(['run', 'pipeline', '--active-sms', '66']);
    expect(text.out).toMatch(/main loop \(.*\): [\d.]+ cycles\/iteration, [\d.]+ B\/cycle per SM loaded by TMA.*\(shared bandwidth of 66 active SMs\)/);
    expect(text.out).toMatch(/bound: /);
  });

  test('--grid past CUDA\'s largest grid (gridDim.x ≤ 2^31 − 1) is refused, naming the bound and why; 2^31 − 1 and 132 run', async () => {
    for (const g of ['99999999999999', String(2 ** 31)]) {
      const r = await run(['run', 'mechanism', '--grid', g]);
      expect([r.code, r.out]).toEqual([2, '']);
      expect(r.err).toBe(`mbsim: error: --grid ${g} is more than 2,147,483,647 CTAs, the largest grid CUDA launches along x (gridDim.x ≤ 2^31 − 1); the bandwidth model uses only the CTAs on the GPU at once (--grid 132 fills its SMs)`);
    }
    for (const g of [String(2 ** 31 - 1), '132']) {
      const r = await run(['run', 'mechanism', '--grid', g, '--json', '--omit', 'events,spans,ledger']);
      expect([r.code, JSON.parse(r.out).grid, JSON.parse(r.out).activeSms]).toEqual([0, Number(g), 132]);
    }
  });

  test('bad values are usage errors (exit 2)', async () => {
    for (const args of [['--omit', 'foo', '--json'], ['--omit', 'events'], ['--grid', '0'], ['--active-sms', '500'], ['--grid', '4', '--active-sms', '4']]) {
      const r = await run(['run', 'pipeline', ...args]);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.err).toMatch(/mbsim: /);
    }
  });
});

describe('TFLOP/s of a grid larger than the GPU', () => {
  test('a grid past the SMs runs in waves: TFLOP/s is that of the SMs at once (2^31 - 1 CTAs, the largest grid: as 132)', async () => {
    const tf = (out: string) => Number(/([\d.]+) TFLOP\/s/.exec(out)?.[1]);
    const full = await run(['run', 'examples/pipeline.mbk', '--grid', '132']);
    const huge = await run(['run', 'examples/pipeline.mbk', '--grid', String(2 ** 31 - 1)]);
    const half = await run(['run', 'examples/pipeline.mbk', '--grid', '66']);
    expect(full.code).toBe(0);
    expect(tf(full.out)).toBeGreaterThan(0);
    expect(tf(huge.out)).toBe(tf(full.out));
    // 66 CTAs: half the SMs (each with more of the shared bandwidth: at least half the TFLOP/s)
    expect(tf(half.out)).toBeLessThan(tf(full.out));
    expect(tf(half.out)).toBeGreaterThanOrEqual(tf(full.out) / 2 - 0.1);
  });
});
