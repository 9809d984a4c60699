/**
 * The fits of the held-out validation (`npm run heldout -- --fit`, `--fit-l2`): the gpipe kernel's
 * glue and the distinct-address L2 share, each on the train rows of `hw/results/model.json` only
 * (the split of {@link isHeldOut} in heldout.ts), by coordinate descent on one score: the mean
 * squared relative error plus a tenth of the squared max.
 */
import { mergeTiming, type Timing } from '../sim/timing.js';
import { GPIPE_GLUE, isHeldOut, predictGpipe, type GpipeConfig, type GpipeGlue } from './heldout.js';

/**
 * Fits the gpipe glue (every field of {@link GpipeGlue}) on the train rows only, by coordinate
 * descent on the mean squared relative error plus a tenth of the squared max (200 iterations a
 * run, enough for the steady state after the 64 warm-up passes).
 */
export function fitGlue(configs: GpipeConfig[], timing: Timing, log: (s: string) => void = () => {}): GpipeGlue {
  const held = isHeldOut(configs);
  const train = configs.filter((_, i) => !held[i]);
  const score = (g: GpipeGlue) => {
    const e = train.map((c) => predictGpipe(c, timing, g, 200).cycles / c.mean_cycles_per_iter - 1);
    const max = Math.max(...e.map(Math.abs));
    return e.reduce((a, x) => a + x * x, 0) / e.length + 0.1 * max * max;
  };
  let best = GPIPE_GLUE;
  let bs = score(best);
  const keys = Object.keys(best) as (keyof GpipeGlue)[];
  for (const step of [32, 8]) {
    let moved = true;
    while (moved) {
      moved = false;
      for (const k of keys) {
        for (const d of [step, -step]) {
          const g = { ...best, [k]: best[k] + d };
          if ((k === 'producer' || k === 'consumer') && g[k] < 0) continue;
          const sc = score(g);
          if (sc < bs) {
            bs = sc;
            best = g;
            moved = true;
            log(`glue ${JSON.stringify(g)} score ${sc.toFixed(5)}`);
            break;
          }
        }
      }
    }
  }
  return best;
}

/**
 * Fits the distinct-address L2 share (`tmaL2DistinctBytesPerCycle` B, `tmaL2DistinctHalfSms` n0:
 * B / (n − 1 + n0) bytes per cycle per SM) on the train rows that read distinct L2 addresses, by
 * coordinate descent from `timing`'s values (steps of 250 B/cycle and 4 SMs) on the score of
 * {@link fitGlue}, keeping B / n0 (one SM alone) at least `tmaBytesPerCycleSm`; returns the two values.
 */
export function fitL2Distinct(configs: GpipeConfig[], timing: Timing, glue: GpipeGlue = GPIPE_GLUE, log: (s: string) => void = () => {}): { bytesPerCycle: number; halfSms: number } {
  const held = isHeldOut(configs);
  const train = configs.filter((c, i) => !held[i] && c.source === 'l2_distinct');
  const score = (b: number, n0: number) => {
    const t = mergeTiming(timing, { tmaL2DistinctBytesPerCycle: b, tmaL2DistinctHalfSms: n0 });
    const e = train.map((c) => predictGpipe(c, t, glue, 200).cycles / c.mean_cycles_per_iter - 1);
    const max = Math.max(...e.map(Math.abs));
    return e.reduce((a, x) => a + x * x, 0) / e.length + 0.1 * max * max;
  };
  // A lone SM reads distinct addresses at its own limit (hw/results/plan.json load: 95.5 B/cycle
  // at 1-16 CTAs; lean.json: 98 at 8): the share B / n0 of one SM may not fall below it.
  const sm = timing.tmaBytesPerCycleSm.value;
  const ok = (b: number, n0: number) => b > 0 && n0 > 0 && b / n0 >= sm;
  let [b, n0] = [timing.tmaL2DistinctBytesPerCycle.value, timing.tmaL2DistinctHalfSms.value];
  if (!ok(b, n0)) n0 = Math.floor(b / sm);
  let bs = score(b, n0);
  for (let moved = true; moved; ) {
    moved = false;
    for (const [db, dn] of [[250, 0], [-250, 0], [0, 4], [0, -4], [250, 4], [-250, -4]] as const) {
      if (!ok(b + db, n0 + dn)) continue;
      const sc = score(b + db, n0 + dn);
      if (sc < bs) {
        [b, n0, bs, moved] = [b + db, n0 + dn, sc, true];
        log(`l2 distinct ${b} / (n - 1 + ${n0}) score ${sc.toFixed(5)}`);
        break;
      }
    }
  }
  return { bytesPerCycle: b, halfSms: n0 };
}
