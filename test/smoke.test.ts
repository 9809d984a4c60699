import { test } from 'vitest';
import { EXAMPLES } from '../src/examples/index.js';
import { instantiate } from '../src/machine/program.js';
import { simulate } from '../src/sim/simulate.js';
test('smoke', () => {
  for (const ex of EXAMPLES) {
    const p = instantiate(ex.build());
    const r = simulate(p);
    console.log(ex.name, r.verdict, r.cycles, r.steps, r.eventCount, r.diagnostics.map(d=>d.diag.message), JSON.stringify(r.hang?.waiters.map(w=>[w.name,w.reasons])));
  }
});
