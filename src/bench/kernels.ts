/**
 * `npm run bench -- kernels`: the sketches of production kernels' protocols (examples/) checked at a
 * grid of sizes: stages, k-blocks, tiles and CTAs per cluster. Each row prints the verdict, the
 * states stored, the wall time and the search's memory estimate, under one time bound per row
 * (BENCH_KERNELS_TIMEOUT_S, default 60 s) and the default memory bound (2 GiB).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { check } from '../check/index.js';
import { parseSketch } from '../lang/index.js';
import { instantiate } from '../machine/program.js';

/** One row of the grid: a sketch file (relative to the repository) and its parameters. */
export interface KernelRow {
  file: string;
  set: Record<string, number>;
}

/** The default grid: every kernel sketch at small, medium and real sizes, 1 and 2 CTAs where the sketch has a cluster. */
export function kernelGrid(): KernelRow[] {
  const rows: KernelRow[] = [];
  for (const [S, K, TILES] of [[2, 4, 1], [2, 4, 2], [4, 8, 2], [4, 16, 2], [8, 64, 4]] as const) {
    rows.push({ file: 'examples/cutlass-pingpong.mbk', set: { S, K, TILES, EPI: 1 } });
  }
  for (const [C, S, K, TILES] of [[1, 2, 4, 1], [1, 2, 4, 2], [1, 4, 8, 2], [2, 2, 2, 1], [2, 4, 8, 2]] as const) {
    rows.push({ file: 'examples/cutlass-cooperative.mbk', set: { C, S, K, TILES, EPI: 1 } });
  }
  for (const [S, NB, TILES] of [[1, 3, 1], [2, 2, 1], [2, 4, 2]] as const) rows.push({ file: 'examples/fa3-forward.mbk', set: { S, NB, TILES } });
  return rows;
}

/** Checks each row; returns one text line per row. `root`: the repository. */
export function kernelReport(rows: KernelRow[], root: string, timeoutMs = Number(process.env.BENCH_KERNELS_TIMEOUT_S ?? 60) * 1000): string[] {
  const lines = ['kernel                  parameters                         verdict      states      time     memory'];
  for (const row of rows) {
    const parsed = parseSketch(readFileSync(join(root, row.file), 'utf8'), row.file);
    const set = Object.entries(row.set).map(([k, v]) => `${k}=${v}`).join(' ');
    const name = row.file.replace(/^examples\//, '').replace(/\.mbk$/, '');
    if (!parsed.kernel) {
      lines.push(`${name.padEnd(24)}${set.padEnd(35)}parse error`);
      continue;
    }
    const t0 = performance.now();
    const r = check(instantiate(parsed.kernel, row.set), { timeout: timeoutMs });
    const ms = performance.now() - t0;
    const verdict = r.complete ? r.verdict.toUpperCase() : `(${r.verdict}, bound)`;
    const mem = `${Math.round(r.coverage.memoryBytes / 2 ** 20)} MB`;
    lines.push(`${name.padEnd(24)}${set.padEnd(35)}${verdict.padEnd(13)}${r.coverage.states.toLocaleString('en-US').padStart(9)}${(ms / 1000).toFixed(1).padStart(9)} s${mem.padStart(10)}`);
  }
  return lines;
}
