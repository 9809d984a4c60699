/**
 * Production-kernel sketches (examples/cutlass-pingpong.mbk, cutlass-cooperative.mbk, fa3-forward.mbk) check clean
 * at several sizes, including the sizes where their skipping consumers used to be reported as
 * `phase-alias`; the planted bugs beside them (examples/planted/) and the small skipping-consumer
 * fixtures (test/fixtures/skip/) are still found.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { check, type CheckResult } from '../src/check/index.js';
import { parseSketch } from '../src/lang/index.js';
import { instantiate } from '../src/machine/program.js';

const repo = join(import.meta.dirname, '..');

function run(file: string, set: Record<string, number>, all = false): CheckResult {
  const src = readFileSync(join(repo, file), 'utf8');
  const parsed = parseSketch(src, file);
  expect(parsed.diagnostics).toEqual([]);
  return check(instantiate(parsed.kernel!, set), { all, maxStates: 2_000_000, timeout: 600_000 });
}

const errorsOf = (r: CheckResult) => [...new Set(r.hazards.map((h) => `${h.kind} ${h.subject?.name ?? ''}`.trim()))].sort();

describe('skipping consumers are not phase aliases', () => {
  test.each([
    { S: 2, K: 2, TILES: 2 },
    { S: 2, K: 4, TILES: 3 },
    { S: 2, K: 8, TILES: 4 },
    { S: 4, K: 8, TILES: 4 },
  ])('two consumers on alternate tiles check clean: %o', (set) => {
    const r = run('test/fixtures/skip/alternating.mbk', set);
    expect([r.verdict, r.complete, r.hazards, r.warnings]).toEqual(['ok', true, [], []]);
  });

  test.each([
    { S: 2, K: 4, TILES: 3 },
    { S: 4, K: 8, TILES: 4 },
  ])('a phase no consumer observed is still an alias (the second consumer releases without waiting): %o', (set) => {
    const r = run('test/fixtures/skip/release-unseen.mbk', set, true);
    const alias = r.hazards.filter((h) => h.kind === 'phase-alias' && h.subject?.name.startsWith('full['));
    expect(alias.length).toBeGreaterThan(0);
    expect(alias[0]!.message).toMatch(/consumer\[0\] passed wait\(full\[\d\], parity \d\) on phase \d+ while it was due to wait for phase \d+/);
  });

  test.each([
    { S: 2, K: 2, TILES: 2 },
    { S: 2, K: 4, TILES: 3 },
  ])('a turn barrier whose second start phase is off by one is a race: %o', (set) => {
    const r = run('test/fixtures/skip/turn-start.mbk', set);
    expect(r.verdict).toBe('race');
    expect(errorsOf(r)).toContain('race X[0]');
  });
});

describe('CUTLASS SM90 pingpong GEMM', () => {
  test.each([
    { S: 2, K: 2, TILES: 2, EPI: 1 },
    { S: 2, K: 4, TILES: 3, EPI: 1 },
  ])('checks clean: %o', (set) => {
    const r = run('examples/cutlass-pingpong.mbk', set);
    expect([r.verdict, r.complete, r.hazards, r.warnings]).toEqual(['ok', true, [], []]);
  }, 600_000);

  test.each([
    { S: 2, K: 2, TILES: 2, EPI: 1 },
    { S: 2, K: 2, TILES: 3, EPI: 1 },
    { S: 4, K: 4, TILES: 2, EPI: 1 },
  ])('ordered barrier start phase off by one: a race on the mainloop stages: %o', (set) => {
    const r = run('examples/planted/pingpong-order-start.mbk', set);
    expect(r.verdict).toBe('race');
    expect(errorsOf(r).some((e) => e === 'race A[0]' || e === 'race B[0]')).toBe(true);
  }, 600_000);

  test.each([
    { S: 2, K: 2, TILES: 2, EPI: 1 },
    { S: 2, K: 4, TILES: 3, EPI: 1 },
    { S: 4, K: 4, TILES: 2, EPI: 1 },
    { S: 4, K: 8, TILES: 4, EPI: 2 },
  ])('consumer release count halved: the producer aliases or hangs on empty[0]: %o', (set) => {
    const r = run('examples/planted/pingpong-release-half.mbk', set);
    expect(['phase-alias', 'hang']).toContain(r.verdict);
    expect(r.hazards[0]!.subject?.name).toBe('empty[0]');
  }, 600_000);
});

describe('CUTLASS SM90 cooperative GEMM', () => {
  test.each([
    { C: 1, S: 2, K: 4, TILES: 1, EPI: 1 },
    { C: 1, S: 2, K: 2, TILES: 2, EPI: 1 },
  ])('checks clean: %o', (set) => {
    const r = run('examples/cutlass-cooperative.mbk', set);
    expect([r.verdict, r.complete, r.hazards]).toEqual(['ok', true, []]);
    // The releases to other CTAs never run in a 1-CTA cluster: `if C > 1` leaves them out, a
    // specialization on a parameter, not a forgotten arrive (no unreachable-arrive warning).
    expect(r.warnings.map((w) => `${w.kind} ${w.locations[0]!.line}`)).toEqual([]);
  }, 600_000);

  test('an empty barrier one warpgroup short: a race on a mainloop stage', () => {
    const r = run('examples/planted/cooperative-empty-short.mbk', { C: 1, S: 2, K: 4, TILES: 1, EPI: 1 });
    expect(r.verdict).toBe('race');
    expect(errorsOf(r).some((e) => /^race [AB]\[[01]\]$/.test(e))).toBe(true);
  }, 600_000);
});

describe('FlashAttention-3 forward', () => {
  test('checks clean where its second warpgroup skips the first one\'s phases (S=1, NB=3)', () => {
    const r = run('examples/fa3-forward.mbk', { S: 1, NB: 3 });
    expect([r.verdict, r.complete, r.hazards, r.warnings]).toEqual(['ok', true, [], []]);
  }, 600_000);
});

describe('bulk stores at exit (docs/CHECK.md, "Bulk stores at exit")', () => {
  const src = (wait: boolean) => `kernel store_exit arch=sm_90a\nsmem C bytes=4096\nrole epi warps=1 per=one:\n    st.shared C\n    fence.proxy.async\n    cp.async.bulk.store C, 4096\n    cp.async.bulk.commit_group\n${wait ? '    cp.async.bulk.wait_group.read 0\n' : ''}`;
  const checkSrc = (text: string, strict: boolean) => check(instantiate(parseSketch(text, 't.mbk').kernel!), { all: true, strict });
  test('a store still reading at exit is a warning, an error under strict', () => {
    const loose = checkSrc(src(false), false);
    expect(loose.verdict).toBe('ok');
    expect(loose.warnings.map((w) => `${w.kind} ${w.severity}`)).toEqual(['inflight-at-exit warning']);
    expect(loose.warnings[0]!.message).toBe('every agent of the CTA has exited while a bulk store issued by epi (line 6) may still be reading C: nothing waited for its reads of shared memory (cp.async.bulk.wait_group.read 0) before the exit');
    const strict = checkSrc(src(false), true);
    expect(strict.verdict).toBe('inflight-at-exit');
  });
  test('wait_group.read 0 before the exit (what CUTLASS and FlashAttention-3 do) is clean', () => {
    for (const strict of [false, true]) {
      const r = checkSrc(src(true), strict);
      expect([r.verdict, r.hazards, r.warnings]).toEqual(['ok', [], []]);
    }
  });
});
