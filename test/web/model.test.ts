/**
 * The explorer's run model (src/web/model.ts, src/web/ring-model.ts, src/web/phase-rows.ts) in Node:
 * the barrier state at a cursor includes the cursor's event (a complete_tx that completes a phase
 * shows the new phase at once), a hang's waiters are drawn blocked to the end, the ring says "TMA
 * filling" only while a copy is in flight, and waits that pass at once on a fresh barrier are told
 * apart from waits whose phase completed.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { parseSketch } from '../../src/lang/index.js';
import { instantiate } from '../../src/machine/program.js';
import { barStateAt } from '../../src/web/model.js';
import { buildModel } from '../../src/web/sim-model.js';
import { phaseRows, passedAtOnce } from '../../src/web/phase-rows.js';
import { detectPair, ringIndex, stagesAt } from '../../src/web/ring-model.js';
import { leadComment } from '../../src/web/sources.js';
import { readdirSync } from 'node:fs';

const REPO = join(__dirname, '..', '..');
const program = (file: string, params: Record<string, number> = {}) => {
  const r = parseSketch(readFileSync(join(REPO, file), 'utf8'), file);
  if (!r.kernel) throw new Error(`${file} does not parse`);
  return instantiate(r.kernel, params);
};

describe('explorer run model', () => {
  test('the barrier state at an event includes that event (complete_tx, phase completion, arrivals)', () => {
    for (const f of ['examples/mechanism.mbk', 'examples/pipeline.mbk', 'examples/cluster.mbk']) {
      const m = buildModel(program(f));
      let checked = 0;
      m.events.forEach((e, i) => {
        if (e.e !== 'complete_tx' && e.e !== 'arrive' && e.e !== 'expect_tx' && e.e !== 'phase') return;
        const lane = m.barLaneByKey.get(e.bar);
        if (!lane) return;
        const st = barStateAt(lane, i);
        if (e.e === 'phase') expect(st.phase, `${f} event ${i}`).toBeGreaterThan(e.completed);
        else {
          // The event's own tx-count, unless a later signal in the same step moved it again.
          expect(st.phase, `${f} event ${i}`).toBeGreaterThanOrEqual(e.phase);
          if (st.phase === e.phase) expect(st.tx, `${f} event ${i}`).toBe(e.tx);
        }
        checked++;
      });
      expect(checked).toBeGreaterThanOrEqual(4);
    }
    // The chapter's figure 3: at the phase completion, phase 1, tx 0, pending re-armed.
    const m = buildModel(program('examples/mechanism.mbk'));
    const done = m.events.findIndex((e) => e.e === 'phase');
    const lastTx = m.events.findIndex((e) => e.e === 'complete_tx' && e.tx === 0);
    expect(lastTx).toBeGreaterThan(0);
    for (const i of [lastTx, done]) expect(barStateAt(m.barLanes[0]!, i)).toEqual({ phase: 1, pending: 1, expected: 1, tx: 0, valid: true });
    const firstTx = m.events.findIndex((e) => e.e === 'complete_tx');
    expect(barStateAt(m.barLanes[0]!, firstTx).tx).toBe(2048);
  });

  test('a hang draws its waiter blocked until the end of the run', () => {
    const m = buildModel(program('examples/bugs/B01.mbk'));
    expect(m.sim.verdict).toBe('hang');
    const blocked = m.spans.filter((s) => s.kind === 'blocked');
    // Every warp of the consumer role is blocked, each on a lane of its own.
    expect(blocked.map((b) => b.lane)).toEqual(m.program.agents.filter((a) => a.roleName === 'consumer').map((a) => String(a.id)));
    expect(blocked[0]!.t1).toBe(m.end);
    expect(m.end).toBeGreaterThan(m.sim.cycles);
    expect(blocked[0]!.label).toMatch(/^blocked forever: mbarrier\.try_wait\.parity full\[0\], 0/);
  });

  test('the ring says TMA filling only while a copy is in flight, not when expect_tx is armed', () => {
    const m = buildModel(program('examples/mechanism.mbk'));
    const idx = ringIndex(m, detectPair(m)!, 0);
    const armed = m.events.findIndex((e) => e.e === 'arrive' && e.expectTx > 0);
    const issued = m.events.findIndex((e) => e.e === 'async' && e.kind === 'tma');
    expect(armed).toBeLessThan(issued);
    expect(stagesAt(m, idx, armed)[0]!.holder).toBe('producer');
    expect(stagesAt(m, idx, armed)[0]!.fullTx).toBe(4096);
    expect(stagesAt(m, idx, issued)[0]!.holder).toBe('tma');
    expect(stagesAt(m, idx, m.events.findIndex((e) => e.e === 'phase'))[0]!.holder).toBe('consumer');
    // Where the roles are: the consumer blocks on bar[0] first, the producer arms it.
    expect(idx.places.consumer.at[0]).toMatchObject({ stage: 0, blocked: true });
    expect(idx.handoffs).toHaveLength(1);
  });

  test('waits that pass at once on a fresh barrier are marked; the chapter loop has none', () => {
    const rows = phaseRows(program('examples/pipeline.mbk'), 'producer', 'empty', 'i');
    expect(rows.length).toBe(32);
    expect(rows.slice(0, 4).every(passedAtOnce)).toBe(true);
    expect(rows.slice(4).some(passedAtOnce)).toBe(false);
    expect(rows[4]!.phase).toBe(1);
    const chapter = phaseRows(program('examples/phase-tracking.mbk'), 'consumer', 'tma_bar', 'phase_tma');
    expect(chapter.map((r) => [r.iteration, r.stage, r.parityWaited, r.parityAfter, r.phaseVar])).toEqual([[0, 0, 0, 1, 0], [1, 1, 0, 1, 1], [2, 0, 1, 0, 1], [3, 1, 1, 0, 0]]);
    expect(chapter.some(passedAtOnce)).toBe(false);
  });

  test('kernel descriptions are whole and speak of the chapter', () => {
    const d = leadComment(readFileSync(join(REPO, 'examples/mechanism.mbk'), 'utf8'));
    expect(d).toBe('The chapter\'s mechanism figure: a barrier initialized with count 1, one arrive.expect_tx(4096), two 2,048-byte TMA copies; the phase flips when both the arrival and all bytes are in.');
    expect(leadComment(readFileSync(join(REPO, 'examples/bugs/B01.mbk'), 'utf8'))).not.toMatch(/expect:/);
    // Reader-facing text calls the book chapter "the chapter", never the project-internal "seed".
    for (const dir of ['examples', 'examples/bugs']) {
      for (const f of readdirSync(join(REPO, dir)).filter((n) => n.endsWith('.mbk'))) {
        expect(readFileSync(join(REPO, dir, f), 'utf8'), `${dir}/${f}`).not.toMatch(/\bseed\b/i);
      }
    }
  });
});
