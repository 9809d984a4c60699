/**
 * The real-kernel bench section (src/bench/kernels.ts): its row builder fits shared memory, and two
 * tiny rows (a kernel and a planted bug) run through the table in-process. No timing assertions.
 */
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { buildRows, KERNELS, PLANTED, runGrid } from '../src/bench/kernels.js';
import { checkRow } from '../src/bench/kernel-row.js';

const root = join(import.meta.dirname, '..');

describe('bench kernels section', () => {
  test('every grid kernel and planted bug has a row at the smallest size; 8 stages halve the tiles or are left out', () => {
    const small = buildRows([...KERNELS, ...PLANTED], root, { S: [2], K: [4], T: [1] });
    expect(small.map((r) => `${r.spec.name} C=${r.C}`)).toEqual([
      'cutlass-pingpong C=1', 'cutlass-cooperative C=1', 'cutlass-cooperative C=2', 'fa3-forward C=1', 'cutlass-sm100-2sm C=2',
      'deepgemm-fp8 C=1', 'deepgemm-fp8 C=2', 'pingpong-order-start C=1', 'pingpong-release-half C=1', 'cooperative-empty-short C=1', 'cooperative-empty-short C=2',
    ]);
    expect(small.every((r) => !r.shrunk)).toBe(true);
    const big = buildRows([KERNELS[0]!], root, { S: [8], K: [4], T: [1] });
    expect(big.map((r) => [r.shrunk, r.set.TILE_A])).toEqual([[true, 8192]]);
  });

  test('a planted bug whose code cannot run at a size is printed as inert, not run', () => {
    const rows = buildRows([PLANTED[0]!], root, { S: [2], K: [2], T: [1] });
    const lines: string[] = [];
    const results = runGrid(rows, { root, log: (l) => lines.push(l), runner: () => { throw new Error('not run'); } });
    expect(results.size).toBe(0);
    expect(lines[1]).toMatch(/pingpong-order-start\s+2\s+2\s+1\s+1\s+inert: with 1 tile/);
  });

  test('two tiny rows run and print', () => {
    const rows = buildRows([KERNELS[0]!, PLANTED[0]!], root, { S: [2], K: [2], T: [2] });
    const lines: string[] = [];
    const results = runGrid(rows, { root, log: (l) => lines.push(l), timeoutMs: 60_000, runner: checkRow });
    expect(lines).toHaveLength(3);
    expect(lines[1]).toMatch(/^cutlass-pingpong\s+2\s+2\s+2\s+1\s+OK\s+[\d,]+\s+[\d.]+\s+\d+$/);
    expect(lines[2]).toMatch(/^pingpong-order-start\s+2\s+2\s+2\s+1\s+found: race [AB]\[\d\]/);
    expect([...results.values()].map((r) => r.complete || r.stoppedBy === 'hazard')).toEqual([true, true]);
  }, 120_000);
});
