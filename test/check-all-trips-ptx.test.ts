/**
 * `--all-trips` on PTX input: its loops are branches, not trip loops the checker recognizes, and
 * the CLI says so (exit 2) instead of claiming no loop is bounded by the parameter.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { expect, test } from 'vitest';

test('mbsim check kernel.ptx --all-trips NAME: not available for PTX, with what to do instead', () => {
  const p = spawnSync(process.execPath, ['--import', './test/support/ts-register.mjs', 'src/cli/bin.ts', 'check', 'examples/ptx/tma_pipeline.ptx', '--all-trips', 'param_2'], { cwd: join(__dirname, '..'), encoding: 'utf8' });
  expect(p.status).toBe(2);
  expect(p.stderr).toMatch(/^mbsim: error: --all-trips param_2: not available for PTX input yet \(its loops are branches the checker does not recognize as trip loops\); check each value with --param param_2=N/);
  expect(p.stderr).not.toMatch(/no loop of the kernel is bounded/);
  expect(p.stdout).toBe('');
}, 60_000);
