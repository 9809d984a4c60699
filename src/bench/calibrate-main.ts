/**
 * `npm run calibrate`: refits the H200 timing defaults to hw/results/pipeline.json and prints the
 * fitted parameters (paste them into src/sim/timing.ts) and the error report.
 */
import { errorReport, fit, FIT_PARAMS, loadConfigs } from './calibrate.js';
import { H200 } from '../sim/timing.js';

const configs = loadConfigs();
const before = errorReport(configs, H200);
console.log(`before: median |error| ${(before.median * 100).toFixed(1)}%, max ${(before.max * 100).toFixed(1)}%`);
const { timing: t, glue } = fit(configs, H200, Number(process.env.ROUNDS ?? 4), (s) => console.log(s));
const after = errorReport(configs, t, glue);
console.log(`after: median |error| ${(after.median * 100).toFixed(1)}%, max ${(after.max * 100).toFixed(1)}%`);
const rec = t as unknown as Record<string, { value: number }>;
console.log(JSON.stringify(Object.fromEntries(Object.keys(FIT_PARAMS).map((k) => [k, k === 'probeGlue' ? glue.consumer : k === 'probeProducerGlue' ? glue.producer : rec[k]!.value])), null, 1));
for (const r of after.rows) console.log(`${r.config.padEnd(52)} measured ${String(r.measured).padStart(7)}  predicted ${String(r.predicted).padStart(7)}  ${(r.error * 100).toFixed(1).padStart(6)}%`);
