// The text report and the phase table of very long runs: no call spreads a whole trace or table
// into its arguments (a stack overflow past about 65,000 steps was an internal error, exit 70).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { parseSketch } from '../src/lang/index.js';
import { instantiate } from '../src/machine/program.js';
import { check } from '../src/check/check.js';
import { NO_PAINT, renderCheck } from '../src/check/report.js';
import { main } from '../src/cli/main.js';
import { renderPhaseTable } from '../src/report/phases.js';

describe('text report of a long trace', () => {
  const HANG = `kernel k arch=sm_90a
param N = 2
barrier b count=1
role p warps=1 per=one:
    for i in range(N):
        work 1
    mbarrier.try_wait.parity b, 0
`;

  test('renderCheck prints a 300000-step trace, and none with maxTraces 0', () => {
    const r = check(instantiate(parseSketch(HANG, 'hang.mbk').kernel!));
    expect(r.verdict).toBe('hang');
    const h = r.hazards.find((z) => z.kind === 'hang')!;
    const step = h.trace[0]!;
    const long = Array.from({ length: 300_000 }, (_, i) => ({ ...step, n: i + 1 }));
    const r2 = { ...r, hazards: r.hazards.map((z) => (z === h ? { ...z, trace: long } : z)) };
    const text = renderCheck(r2, NO_PAINT);
    expect(text).toContain('shortest trace (300000 steps):');
    expect(text).toMatch(/\n {3}300000p +work 1/);
    const none = renderCheck(r2, NO_PAINT, 0);
    expect(none).not.toContain('shortest trace (');
    expect(none).toContain('--max-traces 0 prints none');
  });

  test('renderPhaseTable prints 150000 rows', () => {
    const rows = Array.from({ length: 150_000 }, (_, i) => ({ agent: 'p', iteration: i, stage: 0, parityWaited: i & 1, parityAfter: (i + 1) & 1, phaseVar: i + 1, phase: i + 1 }));
    const lines = renderPhaseTable(rows).split('\n');
    expect(lines.length).toBe(150_001);
    expect(lines[150_000]).toMatch(/^149999 +0 +1 +0 +150000$/);
  });

  test('the CLI prints the report of a 140000-step trace (exit 1, no internal error)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mbsim-longtrace-'));
    const f = join(dir, 'long.mbk');
    writeFileSync(f, HANG.replace('param N = 2', 'param N = 140000'));
    for (const extra of [[], ['--max-traces', '0']]) {
      const out: string[] = [];
      const err: string[] = [];
      const code = await main(['check', f, ...extra], { out: (x) => out.push(x), err: (x) => err.push(x), color: false });
      const text = out.join('\n');
      expect(err.join('\n')).not.toContain('internal error');
      expect(code).toBe(1);
      expect(text).toContain('verdict: HANG');
      if (extra.length) expect(text).not.toContain('shortest trace (');
      else expect(text).toContain('shortest trace (140000 steps):');
    }
  }, 180_000);
});
