/**
 * A fourth hostile trial: the largest launch the limits allow, checked and run under
 * --max-memory and --timeout (the setup of the check — static checks, the search's analysis and
 * initial state, the traces — is governed like the search itself), and the new cases of the trial.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { check } from '../src/check/index.js';
import { parseSketch } from '../src/lang/index.js';
import { instantiate } from '../src/machine/program.js';
import { buildCli, measureCli } from './support/measured-cli.js';

const MiB = 1048576;
const dir = mkdtempSync(join(tmpdir(), 'mbsim-trial3-'));
const file = (name: string, text: string) => {
  const f = join(dir, name);
  writeFileSync(f, text);
  return f;
};

/**
 * The largest launch: 1,056 CTAs of 1,024 threads (33,792 warps, the agent limit), 248 mbarriers
 * per CTA (261,888 of the 262,144 allowed) each waited on by every warp, 3,971 buffer elements per
 * CTA (4,193,376 of the 4,194,304 buffer keys).
 */
const LARGEST = `kernel k arch=sm_90a grid=1056
barrier b[248] count=32
smem A[3971] bytes=1
role p threads=1024:
    for i in range(0, 248):
        mbarrier.arrive b[i]
        mbarrier.try_wait.parity b[i], 0
    ld.shared A[0]
`;

beforeAll(() => {
  buildCli();
}, 180_000);

describe('the largest allowed launch stays under --max-memory and --timeout', () => {
  const largest = file('largest.mbk', LARGEST);

  test('check --max-memory 300: incomplete (exit 3, max-memory named), peak resident set under 315 MiB (it was 937 MB and 68 s)', async () => {
    const r = await measureCli(['check', largest, '--max-memory', '300'], 170_000);
    expect(r.err).toBe('');
    expect(r.code).toBe(3);
    expect(r.out).toContain('verdict: INCOMPLETE');
    expect(r.out).toContain('stopped by max-memory');
    expect(r.out).toContain('raise --max-memory MB');
    expect(r.peakRss).toBeLessThan(315 * MiB);
    expect(r.wallMs).toBeLessThan(45_000);
  }, 180_000);

  test('check --timeout 3: incomplete by timeout within a few seconds (the static checks and the analysis ran 60 s before)', { timeout: 120_000, retry: 2 }, async () => {
    const r = await measureCli(['check', largest, '--timeout', '3'], 110_000);
    expect(r.code).toBe(3);
    expect(r.out).toContain('stopped by timeout');
    expect(r.wallMs).toBeLessThan(3000 + 4000);
  });

  test('run --max-memory 300: incomplete by max-memory, under 315 MiB', async () => {
    const r = await measureCli(['run', largest, '--max-memory', '300'], 110_000);
    expect(r.code).toBe(3);
    expect(r.out).toMatch(/stopped by --max-memory after [\d,]+ steps/);
    expect(r.peakRss).toBeLessThan(315 * MiB);
  }, 120_000);

  test('PTX with --block 1024 --grid 1056 --max-memory 300: under 315 MiB (it was 457 MB)', async () => {
    const r = await measureCli(['check', 'test/fixtures/ptx/tma_pipeline.ptx', '--kernel', 'tma_pipeline', '--block', '1024', '--grid', '1056',
      '--param', 'param_2=4', '--tensor-map', 'param_0=16384', '--max-memory', '300'], 170_000);
    expect(r.code).toBe(3);
    expect(r.out).toMatch(/stopped by (max-memory|timeout)/);
    expect(r.peakRss).toBeLessThan(315 * MiB);
  }, 180_000);
});

describe('the check of a large launch, in process', () => {
  const kernelOf = (src: string) => {
    const r = parseSketch(src, 'k.mbk');
    if (!r.kernel) throw new Error(r.diagnostics.map((d) => d.message).join('\n'));
    return r.kernel;
  };

  test('static findings are capped at 256 (one finding per CTA: an unused array of 1,056 CTAs made 260,832)', () => {
    const src = `kernel k arch=sm_90a grid=132\nbarrier b[2] count=1\nbarrier unused[200] count=1\nrole p per=one:\n    mbarrier.arrive b[0]\n    mbarrier.try_wait.parity b[0], 0\n`;
    const r = check(instantiate(kernelOf(src)), { maxStates: 1, timeout: 60_000 });
    const unused = r.warnings.filter((w) => w.kind === 'unused-barrier');
    expect(unused).toHaveLength(256);
    expect(unused[0]!.message).toBe('b[1]@c0 is initialized but no operation ever arrives on, waits on or signals it');
  }, 60_000);

  test('a bound hit in the setup of the search: no state, the bound named, no symmetry groups', () => {
    const r = check(instantiate(kernelOf(LARGEST)), { maxMemory: 1 });
    expect(r.verdict).toBe('incomplete');
    expect(r.stoppedBy).toBe('max-memory');
    expect(r.coverage.states).toBe(0);
    expect(r.coverage.symmetry).toEqual([]);
  }, 60_000);
});
