/**
 * `--phase-table ROLE:BARRIER:VAR` / `phaseTable`: VAR is the variable holding the phase parity
 * the role's waits wait for. A wrong VAR names the variables those waits read as their parity
 * (not every variable of the role: a PTX role has thousands of registers), a fallback list capped.
 */
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { main } from '../src/cli/main.js';
import * as M from '../src/index.js';

async function cli(args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (s) => out.push(s), err: (s) => err.push(s), color: false });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

const thrown = (f: () => unknown): Error => {
  try {
    f();
  } catch (e) {
    return e as Error;
  }
  throw new Error('no error');
};

describe('phase-table variable', () => {
  test('a loop index where the phase variable belongs: the message names the variable the waits read as parity', () => {
    const p = M.instantiate(M.findExample('phase-tracking')!.build());
    const e = thrown(() => M.phaseTable(p, 'consumer', 'tma_bar', 'i'));
    expect(e).toBeInstanceOf(RangeError);
    expect(e.message).toBe("phaseTable: phaseVar 'i' is no variable of role 'consumer': the phase variable holds the parity its waits on tma_bar wait for, and those waits read phase_tma");
    expect(M.phaseTable(p, 'consumer', 'tma_bar', 'phase_tma').length).toBeGreaterThan(0);
  });

  test('waits that read no variable as parity: the role\'s variables, at most 12, then how many more', () => {
    const lets = Array.from({ length: 30 }, (_, i) => `    v${i} = ${i}\n`).join('');
    const src = `kernel k arch=sm_90a\nbarrier b[1] count=1\nrole p per=one:\n${lets}    mbarrier.arrive b[0]\n    mbarrier.try_wait.parity b[0], 0\n`;
    const parsed = M.parseSketch(src, 'k.mbk');
    expect(parsed.diagnostics).toEqual([]);
    const e = thrown(() => M.phaseTable(M.instantiate(parsed.kernel!), 'p', 'b', 'q'));
    expect(e.message).toMatch(/^phaseTable: phaseVar 'q' is no variable of role 'p': its waits on b read no variable as their parity \(its variables: warp, warpgroup, v0, v1, [v0-9, ]+ and \d+ more\)$/);
    expect(e.message.length).toBeLessThan(300);
  });

  test('PTX: the register the waits read as parity, not every register of the role', async () => {
    const file = join(__dirname, 'fixtures', 'ptx', 'tma_pipeline.ptx');
    const r = await cli(['run', file, '--phase-table', 'tma_pipeline:full:i']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^mbsim: error: --phase-table: phaseVar 'i' is no variable of role 'tma_pipeline': the phase variable holds the parity its waits on full wait for, and those waits read %r\d+$/);
    const reg = /read (%r\d+)$/.exec(r.err)![1]!;
    const ok = await cli(['run', file, '--phase-table', `tma_pipeline:full:${reg}`]);
    // The register is taken, and the table covers every warp of the role: w1-w3 wait on full (w0, the producer, does not).
    expect(ok.err).toBe('');
    expect(ok.code).toBe(0);
    expect(ok.out).toContain('all 3 warps with these waits agree (tma_pipeline.w1–w3)');
  }, 60_000);

  test('--help says what VAR is, with the built-in example', async () => {
    const r = await cli(['run', '--help']);
    const text = (r.out + r.err).replace(/\s+/g, ' ');
    expect(text).toContain("VAR is the role's variable holding the phase parity those waits wait for");
    expect(text).toContain('consumer:tma_bar:phase_tma');
  });
});
