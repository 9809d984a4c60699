/**
 * What running each warp as its own agent costs the checker: every example sketch and bug sketch
 * checked twice in the same run, once with the lockstep model (every role one agent whose warps
 * move together, {@link InstantiateOptions.lockstep}, and no stable-wait reduction: the model
 * before warps became agents) and once with warps as agents (the model),
 * with the state counts, times and their ratios.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { check } from '../check/check.js';
import { parseSketch } from '../lang/index.js';
import { instantiate } from '../machine/program.js';

/** One row of the comparison. */
export interface WarpRow {
  file: string;
  lockstep: { verdict: string; states: number; ms: number };
  warps: { verdict: string; states: number; ms: number };
}

/** Checks every `.mbk` under `dirs` both ways (default check options: first error, all reductions). */
export function warpRows(dirs: string[], maxStates = 2_000_000): WarpRow[] {
  const rows: WarpRow[] = [];
  for (const dir of dirs) {
    for (const name of readdirSync(dir).filter((f) => f.endsWith('.mbk')).sort()) {
      const file = join(dir, name);
      const k = parseSketch(readFileSync(file, 'utf8'), file).kernel;
      if (!k) continue;
      const run = (lockstep: boolean) => {
        const p = instantiate(k, {}, { lockstep });
        const t0 = performance.now();
        // The lockstep column is the model before warps became agents: no stable-wait reduction either.
        const r = check(p, lockstep ? { maxStates, stableWaits: false } : { maxStates });
        return { verdict: r.verdict, states: r.coverage.states, ms: performance.now() - t0 };
      };
      rows.push({ file, lockstep: run(true), warps: run(false) });
    }
  }
  return rows;
}

/** The printed table: one line per sketch, then the largest and the total ratios. */
export function warpReport(dirs: string[]): string[] {
  const rows = warpRows(dirs);
  const out = [`${'sketch'.padEnd(34)} ${'lockstep states'.padStart(15)} ${'ms'.padStart(7)}   ${'warp agents'.padStart(11)} ${'ms'.padStart(7)}  ${'states ×'.padStart(8)} ${'time ×'.padStart(7)}  verdicts`];
  let sl = 0, sw = 0, tl = 0, tw = 0, worst = 0;
  for (const r of rows) {
    const ratio = r.warps.states / r.lockstep.states;
    worst = Math.max(worst, ratio);
    sl += r.lockstep.states; sw += r.warps.states; tl += r.lockstep.ms; tw += r.warps.ms;
    const v = r.lockstep.verdict === r.warps.verdict ? r.warps.verdict : `${r.lockstep.verdict} → ${r.warps.verdict}`;
    out.push(`${r.file.padEnd(34)} ${String(r.lockstep.states).padStart(15)} ${r.lockstep.ms.toFixed(0).padStart(7)}   ${String(r.warps.states).padStart(11)} ${r.warps.ms.toFixed(0).padStart(7)}  ${ratio.toFixed(2).padStart(8)} ${(r.warps.ms / Math.max(1, r.lockstep.ms)).toFixed(2).padStart(7)}  ${v}`);
  }
  out.push(`total: ${sl} → ${sw} states (×${(sw / sl).toFixed(2)}), ${(tl / 1000).toFixed(2)} s → ${(tw / 1000).toFixed(2)} s (×${(tw / tl).toFixed(2)}); largest state ratio ×${worst.toFixed(2)} (target ≤ 1.5)`);
  return out;
}
