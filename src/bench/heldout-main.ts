/**
 * `npm run heldout`: the held-out report of {@link gpipeRows} (every row, then the summary per kind);
 * with `--fit`, refits the gpipe kernel's glue on the train rows first and prints it; with `--fit-l2`,
 * the distinct-address L2 share before that (train rows too). Then the same summary for the lean
 * pipelines of lean.json ({@link leanRows}: only their calibration rows set the kernel's own code).
 */
import { gpipeRows, GPIPE_GLUE, loadGpipe, summarize } from './heldout.js';
import { fitGlue, fitL2Distinct, withL2Distinct } from './heldout-fit.js';
import { calibrateLean, leanRows, loadLean } from './lean.js';
import { H200 } from '../sim/timing.js';

const configs = loadGpipe();
// --fit-l2: the distinct-L2 share first (on the train rows, with the current glue), then --fit the glue under it
let timing = H200;
if (process.argv.includes('--fit-l2')) {
  const l2 = fitL2Distinct(configs, H200, GPIPE_GLUE, (s) => console.log(s));
  console.log(`tmaL2DistinctBytesPerCycleSm ${l2.perSm}, tmaL2DistinctSharedBytesPerCycle ${l2.shared}, tmaL2DistinctBytesPerCycle ${l2.cap}, tmaQueueLatencyL2Distinct ${l2.queue}`);
  timing = withL2Distinct(H200, l2);
}
const glue = process.argv.includes('--fit') ? fitGlue(configs, timing, (s) => console.log(s)) : GPIPE_GLUE;
const rows = gpipeRows(configs, timing, glue);
for (const r of rows) console.log(`${r.heldOut ? 'held' : 'train'} ${r.config.padEnd(72)} measured ${r.measured.toFixed(1).padStart(7)} predicted ${r.predicted.toFixed(1).padStart(7)} ${(r.error * 100).toFixed(1).padStart(6)}% ${r.bound}`);
for (const part of [true, false]) {
  console.log(part ? 'held out:' : 'train:');
  for (const s of summarize(rows.filter((r) => r.heldOut === part))) console.log(`  ${s.kind.padEnd(16)} n=${String(s.n).padStart(3)} median ${(s.median * 100).toFixed(1)}% max ${(s.max * 100).toFixed(1)}%`);
}
console.log(`glue ${JSON.stringify(glue)}`);
if (process.argv.includes('--markdown')) {
  const train = new Map(summarize(rows.filter((r) => !r.heldOut)).map((s) => [s.kind, s]));
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
  console.log('| kind | held-out rows | median | max | train rows | median | max |\n|---|---|---|---|---|---|---|');
  for (const s of summarize(rows.filter((r) => r.heldOut))) {
    const t = train.get(s.kind)!;
    console.log(`| ${s.kind} | ${s.n} | ${pct(s.median)} | ${pct(s.max)} | ${t.n} | ${pct(t.median)} | ${pct(t.max)} |`);
  }
}
const lean = loadLean();
const leanHeld = leanRows(lean, timing, calibrateLean(lean, timing)).filter((r) => r.heldOut);
console.log('lean.json held out:');
for (const s of summarize(leanHeld)) console.log(`  ${s.kind.padEnd(16)} n=${String(s.n).padStart(3)} median ${(s.median * 100).toFixed(1)}% max ${(s.max * 100).toFixed(1)}%`);
