// `mbsim run | check FILE.ptx`: the launch flags, the verdicts and exit codes, bad launches.
import { copyFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';

async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (s) => out.push(s), err: (s) => err.push(s), color: false });
  return { code, out: out.join(''), err: err.join('') };
}

const LAUNCH = ['--kernel', 'tma_pipeline', '--block', '128', '--param', 'param_2=4', '--tensor-map', '0=16384'];

describe('mbsim check / run on PTX', () => {
  it('check: the launch file beside the fixture is its launch: no flags needed (exit 0)', async () => {
    const r = await cli(['check', 'test/fixtures/ptx/tma_pipeline.ptx']);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toContain('mbsim check tma_pipeline (sm_90a)  param_2=4');
  });

  it('check: the pipeline is OK (exit 0)', async () => {
    const r = await cli(['check', 'test/fixtures/ptx/tma_pipeline.ptx', ...LAUNCH]);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toContain('verdict: OK');
  });

  it('check: the planted expect_tx twin hangs (exit 1); the report names the PTX line and the CUDA line', async () => {
    const r = await cli(['check', 'test/fixtures/ptx/planted/tma_pipeline.expect_tx.ptx', ...LAUNCH]);
    expect(r.code).toBe(1);
    expect(r.out).toContain('HANG on barrier full[0]');
    expect(r.out).toContain('test/fixtures/ptx/planted/tma_pipeline.expect_tx.ptx:147 (tma_pipeline.cu:37)');
  });

  it('run: simulates the pipeline (exit 0)', async () => {
    const r = await cli(['run', 'test/fixtures/ptx/tma_pipeline.ptx', ...LAUNCH]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/verdict: OK/i);
  });

  it('a file with two kernels needs --kernel; bad launches exit 2 with one message', async () => {
    // A copy without the fixture's tma_pipeline.ptx.launch.json (which names the kernel).
    const bare = join(mkdtempSync(join(tmpdir(), 'mbsim-ptx-')), 'two.ptx');
    copyFileSync('test/fixtures/ptx/tma_pipeline.ptx', bare);
    const two = await cli(['check', bare, '--block', '128']);
    expect(two.code).toBe(2);
    expect(two.err).toMatch(/has 2 kernels: choose one with --kernel NAME/);
    const block = await cli(['check', 'test/fixtures/ptx/tma_pipeline.ptx', '--kernel', 'tma_pipeline', '--block', '100']);
    expect(block.code).toBe(2);
    expect(block.err).toMatch(/--block 100: mbsim runs whole warps/);
    const param = await cli(['check', 'test/fixtures/ptx/tma_pipeline.ptx', ...LAUNCH, '--param', 'tiles=3']);
    expect(param.code).toBe(2);
    expect(param.err).toMatch(/--param tiles: kernel \S+ has no such parameter/);
    const sketch = await cli(['check', 'examples/pipeline.mbk', '--block', '128']);
    expect(sketch.code).toBe(2);
    expect(sketch.err).toMatch(/--block is a launch flag of PTX files/);
  });
});
