/**
 * A timing parameter rejected wherever it is checked (at load, or later where it is used) is bad
 * input: exit 2 with one line, never the internal-error exit 70.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test, vi } from 'vitest';

test('a TimingError thrown by the simulator is reported as bad input', async () => {
  vi.resetModules();
  vi.doMock('../src/sim/simulate.js', async () => {
    const { TimingError } = await import('../src/sim/timing.js');
    const actual = await vi.importActual<Record<string, unknown>>('../src/sim/simulate.js');
    return { ...actual, simulate: () => { throw new TimingError("timing parameter 'clockMHz' must be finite and positive"); } };
  });
  const { main } = await import('../src/cli/main.js');
  const f = join(mkdtempSync(join(tmpdir(), 'mbsim-timing-')), 't.json');
  writeFileSync(f, '{}'); // valid at load: the simulator itself throws
  const err: string[] = [];
  const code = await main(['run', 'mechanism', '--timing', f], { out: () => {}, err: (s) => err.push(s), color: false });
  expect(code).toBe(2);
  expect(err).toHaveLength(1);
  expect(err[0]).toMatch(/^mbsim: error: (--timing: )?timing parameter 'clockMHz' must be finite and positive$/);
  vi.doUnmock('../src/sim/simulate.js');
});
