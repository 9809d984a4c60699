/**
 * The grid of the checker against SPIN on the full/empty pipeline (bench/spin/pipeline.pml and its
 * builder twin {@link spinPipeline}): S stages 2-6, N iterations 8-24, C consumer warps 2-4, K copies
 * per fill 1-3, every BUG variant. Each row runs both tools in the same process run and prints the
 * time to verdict of each and the ratio (SPIN's pan run / mbsim's `check` call). Targets: mbsim at
 * least 10x faster than SPIN on every row, 100x on the correct S=4 N=16 C=4 K=2.
 *
 * mbsim's time is the fastest of at least `reps` `check` calls on a freshly instantiated program,
 * more on rows whose calls take well under a second ({@link MIN_ROW_MS}) (the first calls pay JIT compilation; the CLI's own start-up is measured separately, src/bench/startup.ts). Only
 * the first call is preceded by a forced garbage collection: one before every call would discard
 * the optimized code each time and time a half-cold checker. SPIN's
 * is one `./pan` run (compile excluded, as in pipeline.pml's measured table), stopped after
 * `spinTimeoutMs`: a stopped row gives a lower bound on the ratio (`>`).
 */
import { benchCheckSpin, defaultPml, runSpin, type SpinParams } from './check-spin.js';

/** The values of each grid dimension (the full product is {@link fullGrid}). */
export const GRID_AXES = { S: [2, 3, 4, 5, 6], N: [8, 12, 16, 20, 24], C: [2, 3, 4], K: [1, 2, 3], BUG: [0, 1, 2, 3] } as const;

/** Every row of the product of {@link GRID_AXES} (900 rows; `BENCH_SPIN_FULL=1`). */
export function fullGrid(): SpinParams[] {
  const rows: SpinParams[] = [];
  for (const S of GRID_AXES.S) for (const N of GRID_AXES.N) for (const C of GRID_AXES.C) for (const K of GRID_AXES.K)
    for (const BUG of GRID_AXES.BUG) rows.push({ S, N, C, K, BUG });
  return rows;
}

/**
 * The default sample: every BUG variant on each of eight shapes that together reach every value of
 * every axis — the corners of the small end, the anchor S=4 N=16 C=4 K=2, and the large S, N, C and
 * K values, each with the others at sizes SPIN finishes in about a minute.
 */
export const SAMPLE_SHAPES: Omit<SpinParams, 'BUG'>[] = [
  { S: 2, N: 8, C: 2, K: 1 },
  { S: 4, N: 8, C: 2, K: 2 },
  { S: 3, N: 12, C: 3, K: 2 },
  { S: 3, N: 12, C: 4, K: 3 },
  { S: 4, N: 16, C: 4, K: 2 },
  { S: 5, N: 20, C: 2, K: 3 },
  { S: 6, N: 24, C: 2, K: 1 },
  { S: 2, N: 24, C: 3, K: 3 },
];

/** The default rows: {@link SAMPLE_SHAPES} × BUG 0..3. */
export function sampleGrid(): SpinParams[] {
  return SAMPLE_SHAPES.flatMap((s) => GRID_AXES.BUG.map((BUG) => ({ ...s, BUG })));
}

/** One row of the grid: both tools' verdicts and times (ms); SPIN's fields are null without spin. */
export interface GridRow {
  params: SpinParams;
  mbsim: { verdict: string; states: number; ms: number; firstMs: number };
  spin: { verdict: string; states: number; ms: number; stopped: boolean } | null;
  /** SPIN ms / mbsim ms (a lower bound when SPIN was stopped). */
  ratio: number | null;
}

/**
 * Checks of one row go on past `reps` while they have taken less than this (ms) in all, up to
 * {@link MAX_REPS}: a check of 10-50 ms is still being compiled by V8 over its first few calls
 * (on S=4 N=16 C=4 K=2 BUG=2, 12 states: 150, 76, 50, 48, 49, 53, 29, 22 ms), so five calls
 * timed the JIT more than the checker on the fast rows.
 */
export const MIN_ROW_MS = 1_000;
/** The most checks one row runs. */
export const MAX_REPS = 40;

/** Runs one row: at least `reps` mbsim checks (more on fast rows, {@link MIN_ROW_MS}; fastest kept) and one SPIN run. */
export function gridRow(prm: SpinParams, pml = defaultPml(), reps = 3, spinTimeoutMs = 60_000): GridRow {
  let best = Infinity;
  let first = NaN;
  let total = 0;
  let r = benchCheckSpin(prm);
  for (let i = 0; i < MAX_REPS && (i < reps || total < MIN_ROW_MS); i++) {
    if (i > 0) r = benchCheckSpin(prm, {}, false);
    if (i === 0) first = r.wallMs;
    total += r.wallMs;
    best = Math.min(best, r.wallMs);
  }
  const s = runSpin(prm, pml, spinTimeoutMs);
  const spin = s ? { verdict: s.verdict, states: s.states, ms: s.wallMs, stopped: s.wallMs >= spinTimeoutMs } : null;
  return { params: prm, mbsim: { verdict: r.verdict, states: r.states, ms: best, firstMs: first }, spin, ratio: spin ? spin.ms / best : null };
}

/** The grid's report lines; `log` receives each row as it is measured (the grid takes minutes). */
export function gridReport(rows: SpinParams[], log: (line: string) => void, pml = defaultPml(), spinTimeoutMs = 60_000): GridRow[] {
  const out: GridRow[] = [];
  const n = (x: number) => (Number.isFinite(x) ? x.toLocaleString('en-US') : '-');
  log(`${'S N C K BUG'.padEnd(14)} ${'mbsim'.padEnd(6)} ${'states'.padStart(8)} ${'ms'.padStart(8)}   ${'spin'.padEnd(6)} ${'states'.padStart(11)} ${'ms'.padStart(8)}   ratio`);
  for (const prm of rows) {
    const g = gridRow(prm, pml, 5, spinTimeoutMs);
    out.push(g);
    const p = `${prm.S} ${prm.N} ${prm.C} ${prm.K} ${prm.BUG}`.padEnd(14);
    const sp = g.spin ? `${g.spin.verdict.padEnd(6)} ${n(g.spin.states).padStart(11)} ${g.spin.ms.toFixed(0).padStart(8)}` : 'no spin'.padEnd(28);
    const target = prm.S === 4 && prm.N === 16 && prm.C === 4 && prm.K === 2 && prm.BUG === 0 ? 100 : 10;
    const ratio = g.ratio === null ? '' : `${g.spin!.stopped ? '>' : ''}${g.ratio.toFixed(1)}x${g.ratio < target ? `  below ${target}x` : ''}`;
    log(`${p} ${g.mbsim.verdict.padEnd(6)} ${n(g.mbsim.states).padStart(8)} ${g.mbsim.ms.toFixed(1).padStart(8)}   ${sp}   ${ratio}`);
  }
  const r = out.filter((g) => g.ratio !== null).map((g) => g.ratio!).sort((a, b) => a - b);
  if (r.length) log(`ratio over ${r.length} rows: min ${r[0]!.toFixed(1)}x, median ${r[r.length >> 1]!.toFixed(1)}x, max ${r[r.length - 1]!.toFixed(1)}x; rows below 10x: ${out.filter((g) => g.ratio !== null && g.ratio < 10).length}`);
  return out;
}
