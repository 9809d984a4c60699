/**
 * In Node: blocked waits become events where they begin (src/web/wait-starts.ts), and one stage's
 * full/empty cycle files each run event under its handoff (src/web/cycle-model.ts); a kernel of one
 * role whose warps specialize by index has its producer and consumer warps told apart.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { parseSketch } from '../../src/lang/index.js';
import { instantiate } from '../../src/machine/program.js';
import { simulate } from '../../src/sim/simulate.js';
import { cycleAt, cycleIndex } from '../../src/web/cycle-model.js';
import { barrierEvents, barStateAt } from '../../src/web/model.js';
import { buildModel } from '../../src/web/sim-model.js';
import { detectPair, ringIndex } from '../../src/web/ring-model.js';
import { clip } from '../../src/web/views/cycle.js';
import { parsePtx } from '../../src/ptx/index.js';
import { translatePtx } from '../../src/ptxi/index.js';
import { servedPtxLaunch } from '../../src/cli/ptx-load.js';

const REPO = join(__dirname, '..', '..');
const program = (file: string, params: Record<string, number> = {}) => {
  const r = parseSketch(readFileSync(join(REPO, file), 'utf8'), file);
  if (!r.kernel) throw new Error(`${file} does not parse`);
  return instantiate(r.kernel, params);
};

describe('wait starts', () => {
  test('figure 3: the consumer begins waiting at t = 0, after the producer\'s arrive.expect_tx, and passes at 499 (H200 costs of the timing model)', () => {
    const m = buildModel(program('examples/mechanism.mbk'));
    const sim = simulate(program('examples/mechanism.mbk'), {});
    expect(m.events.length).toBe(sim.events!.length + 1);
    const waits = m.events.map((e, i) => ({ e, i })).filter((x) => x.e.e === 'wait');
    expect(waits.map((x) => [x.i, x.e.t, (x.e as { pass: boolean }).pass])).toEqual([[2, 0, false], [17, 499, true]]);
    const start = waits[0]!.e as Extract<typeof m.events[number], { e: 'wait' }>;
    expect([start.agent, start.bar, start.parity, start.phase, start.loc.line]).toEqual([1, 0, 0, 0, 16]);
    // The state at the wait start is the barrier after the arrive.expect_tx: pending 0, 4096 bytes due.
    const st = barStateAt(m.barLanes[0]!, 2);
    expect([st.phase, st.pending, st.tx]).toEqual([0, 0, 4096]);
    expect([...barrierEvents(m)]).toEqual([1, 2, 11, 14, 15, 17]);
  });

  test('every stall that ends in a passing wait has a wait start at its beginning (pipeline)', () => {
    const m = buildModel(program('examples/pipeline.mbk'));
    const stalls = m.spans.filter((s) => s.kind === 'stall' && /^\d+$/.test(s.lane));
    const starts = m.events.filter((e) => e.e === 'wait' && !e.pass);
    expect(starts.length).toBeGreaterThan(10);
    expect(starts.length).toBeLessThanOrEqual(stalls.length);
    for (const w of starts) expect(stalls.some((s) => s.t0 === w.t && Number(s.lane) === (w as { agent: number }).agent)).toBe(true);
    // Events stay in time order.
    for (let i = 1; i < m.events.length; i++) expect(m.evT[i]!).toBeGreaterThanOrEqual(m.evT[i - 1]!);
  });

  test('a hang\'s waiter begins waiting where it blocked (B01)', () => {
    const m = buildModel(program('examples/bugs/B01.mbk'));
    expect(m.sim.verdict).toBe('hang');
    const starts = m.events.filter((e) => e.e === 'wait' && !e.pass);
    expect(starts.length).toBe(m.sim.hang!.waiters.length);
  });
});

describe('one stage\'s full/empty cycle', () => {
  test('pipeline: the producer\'s first wait on empty passes at once, then it arrives on full; every arrow is reached for every stage', () => {
    const m = buildModel(program('examples/pipeline.mbk'));
    const idx = ringIndex(m, detectPair(m)!, 0);
    const c = cycleIndex(m, idx);
    expect(c.steps[0]).toMatchObject({ stage: 0, arrow: 3 });
    expect(c.steps[0]!.what).toBe('the producer\'s wait on empty[0] passed at once (the buffer starts free: no phase has completed yet)');
    expect(c.steps[1]).toMatchObject({ stage: 0, arrow: 0 });
    expect(c.steps[1]!.what).toMatch(/^the producer arrived with expect_tx\(32768 B\) on full\[0\] \(pending 0\)$/);
    for (let s = 0; s < 4; s++) expect(new Set(c.steps.filter((x) => x.stage === s).map((x) => x.arrow))).toEqual(new Set([0, 1, 2, 3]));
    // The first completion of a full barrier: arrow 1, data ready.
    const phase = c.steps.find((x) => x.arrow === 1 && /completed phase 0/.test(x.what))!;
    expect(phase.what).toMatch(/^full\[\d\] completed phase 0: the data is ready$/);
    expect(cycleAt(c, phase.ev)).toBe(phase);
    expect(cycleAt(c, -1)).toBeNull();
  });

  test('without an empty array only the full arrows light (figure 3)', () => {
    const m = buildModel(program('examples/mechanism.mbk'));
    const c = cycleIndex(m, ringIndex(m, detectPair(m)!, 0));
    expect(c.steps.map((x) => [x.ev, x.arrow])).toEqual([[1, 0], [11, 0], [14, 0], [15, 1], [17, 1]]);
  });

  test('a PTX kernel of one role: the ring names the producer and consumer warps, and places both', () => {
    const file = join(REPO, 'examples/ptx/tma_pipeline.ptx');
    const text = readFileSync(file, 'utf8');
    const r = parsePtx(text, file);
    if (!r.ok) throw new Error('tma_pipeline.ptx does not parse');
    const m = buildModel(instantiate(translatePtx(r.module, servedPtxLaunch(file, {}, text)).kernel));
    const pair = detectPair(m)!;
    expect([pair.full, pair.empty, pair.producer, pair.consumer]).toEqual(['full', 'empty', 'tma_pipeline.w0', 'tma_pipeline.w1–w3']);
    expect(pair.agentSide).toEqual(['producer', 'consumer', 'consumer', 'consumer']);
    const idx = ringIndex(m, pair, 0);
    expect(idx.places.producer.at.length).toBeGreaterThan(0);
    expect(idx.places.consumer.at.length).toBeGreaterThan(0);
    // The consumers' arrivals on empty are the cycle's fourth arrow.
    expect(cycleIndex(m, idx).steps.some((x) => x.arrow === 3)).toBe(true);
    // The figure's boxes cut the role's name, not the warps.
    expect([clip(pair.producer, 15), clip(pair.consumer, 15)]).toEqual(['tma_pipeline.w0', 'tma_pipe….w1–w3']);
    expect(clip('a_very_long_role_name', 15)).toBe('a_very_long_ro…');
  });
});

