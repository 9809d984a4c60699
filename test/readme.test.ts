import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { parseSketch } from '../src/lang/index.js';
import { instantiate } from '../src/machine/program.js';
import { simulate } from '../src/sim/simulate.js';

test('the sketch shown in README.md parses and simulates ok', () => {
  const readme = readFileSync(join(__dirname, '..', 'README.md'), 'utf8');
  const m = /```\n(kernel [\s\S]*?)```/.exec(readme);
  expect(m).not.toBeNull();
  const r = parseSketch(m![1]!, 'README.md');
  expect(r.diagnostics).toEqual([]);
  const sim = simulate(instantiate(r.kernel!));
  expect(sim.verdict).toBe('ok');
  expect(sim.events!.filter((e) => e.e === 'phase').length).toBe(32); // 16 full + 16 empty phases
});
