/**
 * `npm run bench [-- SECTION...]`: every section, or the named ones (sim, startup, warps,
 * calibration, heldout, web, spin, ptx, kernels). `sim`: the simulator's speed and memory on the full/empty
 * pipeline (132 CTAs × 1,024 iterations, no trace kept); target ≥ 10 M simulated events/s on one
 * core, memory flat in the iteration count. Prints figures; asserts nothing (targets live here,
 * not in tests).
 */
import { pipeline } from '../examples/index.js';
import { instantiate } from '../machine/program.js';
import { simulate } from '../sim/simulate.js';
import { H200 } from '../sim/timing.js';
import { errorReport, loadConfigs } from './calibrate.js';
import { gpipeRows, loadGpipe, summarize, type HeldRow } from './heldout.js';
import { calibrateLean, leanRows, loadLean } from './lean.js';
import { kernelSection } from './kernels.js';
import { ptxReport } from './ptx.js';
import { startupBench, startupReport } from './startup.js';
import { warpReport } from './warps.js';

const gc = (globalThis as { gc?: () => void }).gc;
const mib = (b: number) => (b / 1048576).toFixed(1);

function simBench(ctas: number, iterations: number, reps = 3) {
  const p = instantiate(pipeline(), { CTAS: ctas, K: iterations, TILES: 1 });
  let best = Infinity;
  let events = 0;
  let peakHeap = 0;
  let cycles = 0;
  for (let i = 0; i < reps; i++) {
    gc?.();
    const before = process.memoryUsage().heapUsed;
    const t0 = process.hrtime.bigint();
    const r = simulate(p, { recordEvents: false, recordSpans: false });
    const dt = Number(process.hrtime.bigint() - t0) / 1e9;
    gc?.();
    // Retained by the run's result (final state, statistics) while it is still alive.
    const heap = process.memoryUsage().heapUsed - before;
    if (r.verdict !== 'ok') throw new Error(`bench kernel verdict ${r.verdict}`);
    events = r.eventCount;
    cycles = r.cycles;
    peakHeap = Math.max(peakHeap, heap);
    best = Math.min(best, dt);
  }
  return { events, seconds: best, rate: events / best, heapGrowth: peakHeap, cycles };
}

function main() {
  console.log('mbsim bench — simulator');
  console.log(`node ${process.version}, ${gc ? 'with' : 'without'} --expose-gc`);
  const big = simBench(132, 1024);
  console.log(`pipeline 132 CTAs × 1,024 iterations: ${big.events.toLocaleString('en-US')} events in ${big.seconds.toFixed(3)} s = ${(big.rate / 1e6).toFixed(2)} M events/s (target ≥ 10 M/s); simulated ${big.cycles.toLocaleString('en-US')} cycles`);
  const small = simBench(132, 256);
  console.log(`memory retained by a run (no trace kept): 256 iterations ${mib(small.heapGrowth)} MiB, 1,024 iterations ${mib(big.heapGrowth)} MiB (target: flat in the iteration count)`);
  console.log(`peak RSS of this process: ${mib(process.resourceUsage().maxRSS * 1024)} MiB`);
}

function calibrationReport() {
  console.log('\nmbsim bench — timing model vs H200 (hw/results/pipeline.json; cycles per iteration)');
  const r = errorReport(loadConfigs(), H200);
  for (const x of r.rows) console.log(`  ${x.config.padEnd(52)} measured ${String(x.measured).padStart(7)}  predicted ${String(x.predicted).padStart(7)}  ${(x.error * 100).toFixed(1).padStart(6)}%`);
  console.log(`median |error| ${(r.median * 100).toFixed(1)}% (target ≤ 5%), max ${(r.max * 100).toFixed(1)}% (target ≤ 15%) — these are the configurations the defaults were fitted on`);
}

/** Held-out validation (src/bench/heldout.ts): hw/results/model.json, never used by the timing fit. */
function heldOutReport() {
  console.log('\nmbsim bench — held-out validation vs H200 (hw/results/model.json gpipe; every third configuration per family held out)');
  const rows = gpipeRows(loadGpipe(), H200);
  const held = rows.filter((r) => r.heldOut);
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`.padStart(7);
  console.log(`  ${'kind'.padEnd(16)} ${'held-out n'.padStart(10)} ${'median'.padStart(7)} ${'max'.padStart(7)}   (train n, median, max)`);
  const train = new Map(summarize(rows.filter((r) => !r.heldOut)).map((s) => [s.kind, s]));
  for (const s of summarize(held)) {
    const t = train.get(s.kind);
    console.log(`  ${s.kind.padEnd(16)} ${String(s.n).padStart(10)} ${pct(s.median)} ${pct(s.max)}   (${t?.n ?? 0}, ${t ? pct(t.median).trim() : '-'}, ${t ? pct(t.max).trim() : '-'})`);
  }
  console.log('  targets on the held-out part: median ≤ 3%, max ≤ 15%');
  worstRows(held);
  leanReport();
}

/** The 10 held-out rows with the largest |error|, with the side that bounds the simulated loop. */
function worstRows(held: HeldRow[]) {
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`.padStart(7);
  console.log('  10 worst held-out rows (cause: the side that bounds the simulated loop):');
  for (const x of [...held].sort((a, b) => Math.abs(b.error) - Math.abs(a.error)).slice(0, 10))
    console.log(`    ${x.config.padEnd(64)} measured ${x.measured.toFixed(0).padStart(5)} predicted ${x.predicted.toFixed(0).padStart(5)} ${pct(x.error)}  model bound: ${x.bound}`);
}

/** The lean pipelines (src/bench/lean.ts): a kernel the model was never fitted on. */
function leanReport() {
  console.log('\nmbsim bench — a kernel never fitted on: lean pipelines vs H200 (hw/results/lean.json; only the kernel\'s own code per iteration is calibrated, on producer_only and one-warp consumer-bound rows)');
  const configs = loadLean();
  const code = calibrateLean(configs, H200);
  console.log(`  kernel code per iteration (cycles): producer ${code.producerBulk} (bulk copy), ${code.producerTensor} (two tensor boxes), consumer ${code.consumer}`);
  const held = leanRows(configs, H200, code).filter((r) => r.heldOut);
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`.padStart(7);
  console.log(`  ${'kind'.padEnd(16)} ${'held-out n'.padStart(10)} ${'median'.padStart(7)} ${'max'.padStart(7)}`);
  for (const s of summarize(held)) console.log(`  ${s.kind.padEnd(16)} ${String(s.n).padStart(10)} ${pct(s.median)} ${pct(s.max)}`);
  worstRows(held);
}

async function webReport() {
  console.log('\nmbsim bench — explorer: bundle size, first view and timeline scrubbing (headless Chromium, production build)');
  const { existsSync } = await import('node:fs');
  if (!existsSync(process.env.MBSIM_CHROMIUM ?? '/usr/bin/chromium')) {
    console.log('skipped: no Chromium at /usr/bin/chromium (apt-get install chromium)');
    return;
  }
  const { benchScrubFps } = await import('../web/bench.js');
  const fps = await benchScrubFps({ log: (s: string) => console.log(`  ${s}`) });
  console.log(`scrub frame rate on a ≥100,000-event timeline: ${fps.toFixed(1)} frames/s (target 60)`);
}

async function checkReport() {
  console.log('\nmbsim bench — checker vs SPIN (the full/empty pipeline model, pipeline.pml)');
  const { execSync, spawnSync } = await import('node:child_process');
  if (spawnSync('sh', ['-c', 'command -v spin']).status !== 0) {
    console.log('  installing spin with apt-get …');
    try {
      execSync('DEBIAN_FRONTEND=noninteractive apt-get install -y -qq spin >/dev/null 2>&1 || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq spin >/dev/null 2>&1)', { stdio: 'ignore' });
    } catch {
      console.log('  could not install spin; SPIN columns are skipped');
    }
  }
  const { checkSpinReport } = await import('./check-spin.js');
  for (const line of checkSpinReport()) console.log(`  ${line}`);
  const { fullGrid, gridReport, sampleGrid } = await import('./spin-grid.js');
  const full = process.env.BENCH_SPIN_FULL === '1';
  const rows = full ? fullGrid() : sampleGrid();
  const spinTimeout = Number(process.env.BENCH_SPIN_TIMEOUT_S ?? 60) * 1000;
  console.log(`\n  grid (${full ? 'full product' : 'sample; BENCH_SPIN_FULL=1 for all 900 rows'}, ${rows.length} rows): time to verdict, mbsim check (fastest of at least 5 calls, more until a row has run 1 s) against SPIN's pan (stopped after ${spinTimeout / 1000} s: ratio is a lower bound)`);
  gridReport(rows, (l) => console.log(`  ${l}`), undefined, spinTimeout);
  const tiny = startupBench(5);
  if (tiny) console.log(`  the CLI's own wall time, \`mbsim check\` on a 10-line kernel as a fresh process: ${tiny.bundled.minMs.toFixed(0)} ms (median ${tiny.bundled.medianMs.toFixed(0)}; node -e 0: ${tiny.node.minMs.toFixed(0)} ms)`);
}

function startupSection() {
  console.log(`\nmbsim bench — start time of \`mbsim check\` on a 10-line sketch (wall, ${15} runs each, taking turns)`);
  for (const line of startupReport(15)) console.log(`  ${line}`);
}

function warpsSection() {
  console.log('\nmbsim bench — warps as agents: every example and bug sketch checked with the lockstep model (one agent per role) and with one agent per warp');
  for (const line of warpReport(['examples', 'examples/bugs'])) console.log(`  ${line}`);
}

function kernelsSection() {
  const timeoutS = Number(process.env.BENCH_KERNELS_TIMEOUT_S ?? 20);
  const budgetS = Number(process.env.BENCH_KERNELS_BUDGET_S ?? 600);
  const plantedS = Number(process.env.BENCH_KERNELS_PLANTED_BUDGET_S ?? 360);
  console.log(`\nmbsim bench — production kernels' protocols at real sizes (examples/; issue 13): S 2,4,8 × K 4,8,16,64 × T 1,2,4 × C 1,2 where the kernel has them`);
  kernelSection({ root: '.', log: (l) => console.log(`  ${l}`), timeoutMs: timeoutS * 1000, budgetMs: budgetS * 1000, plantedBudgetMs: plantedS * 1000 });
}

function ptxSection() {
  console.log('\nmbsim bench — PTX parser (best of 5 parses) and front end (translation, simulation)');
  for (const line of ptxReport()) console.log(`  ${line}`);
}

// `npm run bench -- spin warps` runs only the named sections (all of them without names).
const SECTIONS = ['sim', 'startup', 'warps', 'calibration', 'heldout', 'web', 'spin', 'ptx', 'kernels'] as const;
const only = process.argv.slice(2);
for (const n of only) {
  if (!(SECTIONS as readonly string[]).includes(n)) {
    console.error(`mbsim bench: unknown section '${n}' (sections: ${SECTIONS.join(', ')})`);
    process.exit(2);
  }
}
const run = (n: (typeof SECTIONS)[number]) => only.length === 0 || only.includes(n);
if (run('sim')) main();
if (run('startup')) startupSection();
if (run('warps')) warpsSection();
if (run('calibration')) calibrationReport();
if (run('heldout')) heldOutReport();
if (run('web')) await webReport();
if (run('spin')) await checkReport();
if (run('ptx')) ptxSection();
if (run('kernels')) kernelsSection();
