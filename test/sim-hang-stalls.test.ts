// Agents still blocked when a run ends (a hang) stalled from their blocking wait to the end: the
// summary's stall counts and the timeline's stall spans include them (src/sim/simulate.ts).
import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { parseSketch } from '../src/lang/index.js';
import { instantiate } from '../src/machine/program.js';
import { simulate } from '../src/sim/simulate.js';

describe('stalls of agents blocked at the end of a run', () => {
  test('B01: the consumers wait on full[0] from cycle 0 to the end of the hang', () => {
    const file = 'examples/bugs/B01.mbk';
    const r = parseSketch(readFileSync(file, 'utf8'), file);
    if (!r.kernel) throw new Error('B01 does not parse');
    const p = instantiate(r.kernel);
    const res = simulate(p);
    expect(res.verdict).toBe('hang');
    const consumers = p.agents.filter((a) => a.roleName === 'consumer');
    expect(consumers.length).toBe(4);
    for (const a of consumers) {
      expect(res.stats.stalls[a.id]).toEqual({ 'waiting on full': res.cycles });
      const spans = res.spans!.filter((s) => s.lane === String(a.id) && s.kind === 'stall');
      expect(spans.map((s) => [s.t0, s.t1, s.label])).toEqual([[0, res.cycles, 'waiting on full']]);
    }
    // the producer finished: no stall is added to it
    const producer = p.agents.find((a) => a.roleName === 'producer')!;
    expect(Object.values(res.stats.stalls[producer.id]!).reduce((x, y) => x + y, 0)).toBe(0);
  });
});
