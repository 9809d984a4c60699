/**
 * The CLI's advice after a bound stops it: a PTX kernel's sizes are its launch's (`--param`,
 * `--cluster`), a sketch's are `--set` parameters; a count of one step is singular.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';

const root = join(__dirname, '..');
const mbsim = (...args: string[]): string => {
  try {
    return execFileSync(process.execPath, ['--import', './test/support/ts-register.mjs', 'src/cli/bin.ts', ...args], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (e) {
    const x = e as { stdout?: string; stderr?: string };
    return `${x.stdout ?? ''}${x.stderr ?? ''}`;
  }
};

describe('hints after a bound', () => {
  test('a PTX check stopped by a bound points at --param and --cluster, not --set', () => {
    const out = mbsim('check', 'examples/ptx/tma_pipeline.ptx', '--max-states', '3');
    expect(out).toContain('to finish: raise --max-states N, or check a smaller launch (--param: fewer iterations or stages; --cluster: fewer CTAs)');
    expect(out).not.toContain('--set');
  });
  test('a sketch check stopped by a bound points at --set and --sweep', () => {
    const out = mbsim('check', 'examples/pipeline.mbk', '--max-states', '3');
    expect(out).toContain('(--set: fewer iterations, stages or CTAs; --sweep shows how the states grow)');
  });
  test('run --max-steps 1: one step, singular', () => {
    expect(mbsim('run', 'examples/pipeline.mbk', '--max-steps', '1')).toContain('stopped after 1 step (');
  });
});
