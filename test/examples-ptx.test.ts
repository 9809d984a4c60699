/**
 * The PTX example the package ships (examples/ptx/): nvcc's output for tma_pipeline.cu with its
 * launch beside it, and the same PTX with a planted expect_tx bug. They are the test fixtures of
 * the PTX front end, byte for byte, so that the installed package gives a user a PTX kernel to
 * check without nvcc; the clean one is OK in every schedule, the planted one hangs on full[0].
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { check, instantiate, parsePtx, translatePtx, type PtxLaunch } from '../src/index.js';

const REPO = join(__dirname, '..');
const read = (f: string) => readFileSync(join(REPO, f), 'utf8');

/** The verdict and first hazard of `mbsim check FILE` with the launch beside it. */
function checkPtx(file: string) {
  const p = parsePtx(read(file), file);
  if (!p.ok) throw new Error(p.diagnostic.message);
  const launch = JSON.parse(read(`${file}.launch.json`)) as PtxLaunch;
  const r = check(instantiate(translatePtx(p.module, launch).kernel));
  return { verdict: r.verdict, first: r.hazards[0] };
}

describe('examples/ptx', () => {
  test('the shipped files are the front end\'s fixtures, byte for byte', () => {
    for (const [ex, fixture] of [
      ['examples/ptx/tma_pipeline.cu', 'test/fixtures/ptx/src/tma_pipeline.cu'],
      ['examples/ptx/tma_pipeline.ptx', 'test/fixtures/ptx/tma_pipeline.ptx'],
      ['examples/ptx/tma_pipeline.ptx.launch.json', 'test/fixtures/ptx/tma_pipeline.ptx.launch.json'],
      ['examples/ptx/tma_pipeline.expect_tx.ptx', 'test/fixtures/ptx/planted/tma_pipeline.expect_tx.ptx'],
      ['examples/ptx/tma_pipeline.expect_tx.ptx.launch.json', 'test/fixtures/ptx/planted/tma_pipeline.expect_tx.ptx.launch.json'],
    ] as const) expect(read(ex), ex).toBe(read(fixture));
  });
  test('tma_pipeline.ptx is OK in every schedule; the planted expect_tx hangs on full[0]', () => {
    expect(checkPtx('examples/ptx/tma_pipeline.ptx').verdict).toBe('ok');
    const bug = checkPtx('examples/ptx/tma_pipeline.expect_tx.ptx');
    expect(bug.verdict).toBe('hang');
    expect(bug.first!.kind).toBe('hang');
    expect(bug.first!.subject?.name).toBe('full[0]');
    expect(bug.first!.locations[0]!.file).toBe('examples/ptx/tma_pipeline.expect_tx.ptx');
  });
});
