/**
 * The all-trip-counts check (check/trips.ts, `mbsim check --all-trips N`): against direct checks
 * of the trip counts on generated pipelines (an `ok` for every count must hold at every count
 * checked directly, and a finding must name a count at which the direct check finds an error),
 * on the production-kernel sketches and the planted bugs, and its refusals with their places.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import fc from 'fast-check';
import { check } from '../src/check/check.js';
import { checkAllTrips, TripsScopeError } from '../src/check/trips.js';
import { renderCheck, checkJson } from '../src/check/report.js';
import { parseSketch } from '../src/lang/index.js';
import { instantiate } from '../src/machine/program.js';
import type { Kernel } from '../src/kernel/ir.js';
import { pipelineShapeArb, pipelineSketch, type PipelineShape } from './support/gen-pipeline.js';
import { main } from '../src/cli/main.js';

async function runCli(args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (s) => out.push(s), err: (s) => err.push(s), color: false });
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

const kernelOf = (file: string): Kernel => parseSketch(readFileSync(file, 'utf8'), file).kernel!;

/** A generated pipeline whose trip count is the parameter K. */
function tripSketch(g: PipelineShape): Kernel {
  const text = pipelineSketch(g)
    .replaceAll(`range(${g.iters}, ${g.iters + g.stages})`, `range(K, K + ${g.stages})`)
    .replaceAll(`range(${g.iters})`, 'range(K)')
    .replace(/^(kernel [^\n]*\n)/, `$1param K = ${g.iters}\n`);
  const k = parseSketch(text, 'trips.mbk').kernel;
  if (!k) throw new Error(text);
  return k;
}

describe('every trip count', () => {
  test('generated pipelines (seed 20261206): the verdict for every K agrees with direct checks of K = 1 .. 2S + 3', () => {
    const tally = { ok: 0, found: 0, incomplete: 0 };
    fc.assert(fc.property(pipelineShapeArb, (g) => {
      const k = tripSketch(g);
      const r = checkAllTrips(k, {}, { param: 'K', timeout: 20_000 });
      if (!r.trips.complete && r.verdict === 'incomplete') {
        tally.incomplete++;
        return;
      }
      const direct = new Map<number, string>();
      for (let K = 1; K <= 2 * g.stages + 3; K++) direct.set(K, check(instantiate(k, { K }), { timeout: 20_000, randomRuns: false }).verdict);
      const errors = [...direct].filter(([, v]) => v !== 'ok' && v !== 'incomplete');
      if (r.verdict === 'ok') {
        expect(r.trips.complete).toBe(true);
        expect(errors, `every K is ok, but not directly:\n${pipelineSketch(g)}`).toEqual([]);
        tally.ok++;
      } else {
        const n = r.hazards[0]!.tripCount!;
        expect(n).toBeGreaterThanOrEqual(1);
        // The finding's trace runs with K = n: the direct check of that count finds an error too.
        if (n <= 2 * g.stages + 3) expect(direct.get(n), `finding with K = ${n}:\n${pipelineSketch(g)}`).not.toBe('ok');
        expect(errors.length, pipelineSketch(g)).toBeGreaterThan(0);
        tally.found++;
      }
    }), { numRuns: 60, seed: 20261206 });
    expect(tally.ok).toBeGreaterThanOrEqual(10);
    expect(tally.found).toBeGreaterThanOrEqual(10);
    expect(tally.incomplete).toBeLessThanOrEqual(3);
  }, 600_000);

  test('the production sketches: OK for every trip count, with the steady state identified', () => {
    const cases: [string, string, Record<string, number>][] = [
      ['examples/pipeline.mbk', 'K', { TILES: 1 }],
      ['examples/cutlass-cooperative.mbk', 'K', { C: 2, S: 2, TILES: 1, EPI: 1 }],
      ['examples/cutlass-cooperative.mbk', 'TILES', { C: 1, S: 2, K: 2, EPI: 1 }],
    ];
    for (const [file, param, set] of cases) {
      const r = checkAllTrips(kernelOf(file), set, { param, timeout: 120_000 });
      expect(r.verdict, `${file} ${param}`).toBe('ok');
      expect(r.trips.complete).toBe(true);
      expect(r.trips.period).toBeGreaterThan(0);
      expect(r.trips.tripCounts[0]).toBe(1);
      const text = renderCheck(r);
      expect(text).toContain(`trip counts: the verdict holds for every ${param} ≥ 1; steady state identified: period ${r.trips.period} iterations`);
      expect(text).toContain(`${param}≥1`);
      expect((checkJson(r) as { trips: unknown }).trips).toEqual(r.trips);
    }
  }, 300_000);

  test('the planted bugs are found with the trip count of their trace', () => {
    const r = checkAllTrips(kernelOf('examples/planted/cooperative-empty-short.mbk'), { C: 1, S: 2, TILES: 1, EPI: 1 }, { param: 'K', timeout: 120_000 });
    expect(r.verdict).toBe('race');
    const h = r.hazards[0]!;
    expect(h.tripCount).toBeGreaterThanOrEqual(1);
    expect(h.details[0]).toBe(`with K = ${h.tripCount}`);
    expect(r.program.params.K).toBe(h.tripCount);
    // The trace replays in the kernel with that count: the same finding, directly.
    const direct = check(instantiate(kernelOf('examples/planted/cooperative-empty-short.mbk'), { C: 1, S: 2, TILES: 1, EPI: 1, K: h.tripCount! }));
    expect(direct.verdict).not.toBe('ok');
    expect(renderCheck(r)).toContain(`trip counts: first finding with K = ${h.tripCount}`);
  }, 300_000);

  test('refusals: a parameter that sizes a declaration, one used inside the loop, one that bounds no loop', () => {
    const bad = (text: string, param: string) => {
      try {
        checkAllTrips(parseSketch(text, 'r.mbk').kernel!, {}, { param, timeout: 10_000 });
      } catch (e) {
        expect(e).toBeInstanceOf(TripsScopeError);
        return e as TripsScopeError;
      }
      throw new Error('not refused');
    };
    const head = 'kernel r arch=sm_90a\nparam N = 4\nbarrier b[1] count=1\nsmem X[1] bytes=1024\n';
    const sized = bad('kernel r arch=sm_90a\nparam N = 4\nbarrier b[N] count=1\nrole p warps=1 per=one:\n    for i in range(N):\n        mbarrier.arrive b[0]\n', 'N');
    expect(sized.message).toContain('N sizes a declaration');
    expect(sized.loc?.line).toBe(3);
    const used = bad(`${head}role p warps=1 per=one:\n    for i in range(N):\n        if i == N - 1:\n            mbarrier.arrive b[0]\n`, 'N');
    expect(used.message).toContain('N is used here before its loops end');
    expect(used.loc?.line).toBe(7);
    expect(bad(`${head}role p warps=1 per=one:\n    mbarrier.arrive b[0]\n`, 'N').message).toContain('no loop of the kernel is bounded by N');
    expect(bad(`${head}role p warps=1 per=one:\n    mbarrier.arrive b[0]\n`, 'M').message).toContain('the kernel has no parameter M');
  });

  test('counters with offsets and t * K in a comparison: the race at K ≥ 6 is found, not covered by an OK', () => {
    const race = (body: string) => {
      const k = parseSketch(`kernel o arch=sm_90a\nparam K = 4\nparam TILES = 1\nsmem X[1] bytes=64\nrole producer warps=1 per=one:\n${body}role consumer warps=1 per=one:\n    ld.shared X[0]\n`, 'o.mbk').kernel!;
      expect(check(instantiate(k, { K: 9 }), { randomRuns: false }).verdict).toBe('race');
      const r = checkAllTrips(k, {}, { param: 'K', timeout: 30_000 });
      expect(r.verdict).toBe('race');
    };
    race('    for i in range(0, K):\n        work 1\n        if i - 5 >= 0:\n            st.shared X[0]\n        work 2\n');
    race('    for i in range(0, K):\n        if (i - 3) % 4 == 3:\n            st.shared X[0]\n        work 1\n');
    race('    for t in range(0, TILES):\n        for kk in range(0, K):\n            if kk % 4 == 3 and kk >= t * K + 5:\n                st.shared X[0]\n            work 10\n');
  }, 120_000);

  test('trip loops that end, or never start, with the huge count are refused at their line', () => {
    for (const [loop, why] of [['range(K, K + 1)', 'start at a value of the other parameters'], ['range(0, 1 - K)', 'a ≥ 1'], ['range(0, (K % 2) * (K / 2))', 'a ≥ 1'], ['range(K - 1, K)', 'start at a value']]) {
      const k = parseSketch(`kernel u arch=sm_90a\nparam K = 4\nsmem X[1] bytes=64\nrole p warps=1 per=one:\n    for i in ${loop}:\n        st.shared X[0]\nrole q warps=1 per=one:\n    ld.shared X[0]\n`, 'u.mbk').kernel!;
      let err: unknown = null;
      try {
        checkAllTrips(k, {}, { param: 'K', timeout: 10_000 });
      } catch (e) {
        err = e;
      }
      expect(err, loop).toBeInstanceOf(TripsScopeError);
      expect((err as Error).message, loop).toContain(why);
      expect((err as TripsScopeError).loc?.line, loop).toBe(5);
    }
  });

  test('CLI: --all-trips K prints what the verdict covers; a refusal is exit 2 with the place and a caret', async () => {
    const ok = await runCli(['check', 'examples/pipeline.mbk', '--set', 'TILES=1', '--all-trips', 'K']);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain('trip counts: the verdict holds for every K ≥ 1');
    const json = await runCli(['check', 'examples/pipeline.mbk', '--set', 'TILES=1', '--all-trips', 'K', '--json']);
    expect(JSON.parse(json.stdout).trips).toMatchObject({ param: 'K', from: 1, complete: true });
    const refused = await runCli(['check', 'examples/cutlass-pingpong.mbk', '--all-trips', 'TILES']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/cutlass-pingpong\.mbk:\d+:\d+: error\[all-trips\]: --all-trips TILES: role math: a loop bounded by TILES before its trip loops end must start at a value of the other parameters/);
    expect(refused.stderr).toContain('^');
    const both = await runCli(['check', 'examples/pipeline.mbk', '--all-trips', 'K', '--sweep', 'S=2..3']);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--all-trips cannot be combined with --sweep');
  }, 120_000);
});

