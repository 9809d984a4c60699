/**
 * `npm run bench -- ptx`: the PTX parser's speed (src/ptx/) on the committed fixtures, on a
 * synthetic module of about 7,300 instructions (the wgmma fixture's kernel repeated under new
 * names: the size of the largest production kernels nvcc writes), and on any further files named
 * in `PTX_BENCH_FILES` (colon-separated paths, e.g. PTX compiled locally from public kernels).
 * Best of 5 parses, wall and CPU. Target: a 7,000-instruction module well under a second. Then
 * the PTX front end on the GEMM kernel's PTX (hw/kernels/tma_wgmma.ptx): translation and a
 * simulation at K = 64, 4 stages (target: under a second); then `check` of the reference kernels'
 * PTX (hw/kernels/) at 4 stages and 8 k-iterations (2 tiles for the persistent kernel) within the
 * default bounds (the 2-CTA multicast kernel under a 60 s bound): verdict, states, seconds.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { check } from '../check/index.js';
import { instantiate } from '../machine/program.js';
import { functions, instructionsOf, parsePtx } from '../ptx/index.js';
import { translatePtx, type PtxLaunch } from '../ptxi/index.js';
import { simulate } from '../sim/simulate.js';

/** The fixture folder (the bench runs from the repository root, as `npm run bench` does). */
const FIXTURES = 'test/fixtures/ptx';

/** The wgmma fixture's kernel repeated until the module holds at least `min` instructions. */
export function syntheticModule(min = 7000): string {
  const src = readFileSync(join(FIXTURES, 'wgmma.ptx'), 'utf8');
  const start = src.indexOf('.visible .entry');
  const end = src.lastIndexOf('\n}\n') + 3; // the kernel's own closing brace: the last one
  const kernel = src.slice(start, end);
  const per = instructionsOf(functions(parseOrThrow(src, 'wgmma.ptx'))[0]!).length;
  const copies = Math.ceil(min / per);
  const bodies = Array.from({ length: copies }, (_, i) => kernel.replaceAll('_Z10wgmma_tilePf', `_Z10wgmma_tilePf_${i}`));
  return `${src.slice(0, start)}${bodies.join('\n')}${src.slice(end)}`;
}

function parseOrThrow(src: string, file: string) {
  const r = parsePtx(src, file);
  if (!r.ok) throw new Error(`${file}:${r.diagnostic.line}:${r.diagnostic.col}: ${r.diagnostic.message}`);
  return r.module;
}

/** One row: lines, instructions, distinct opcodes, best wall and CPU milliseconds of `reps` parses. */
function measure(name: string, src: string, reps = 5): string {
  let wall = Infinity, cpu = Infinity;
  let m = parseOrThrow(src, name);
  for (let i = 0; i < reps; i++) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    m = parseOrThrow(src, name);
    wall = Math.min(wall, performance.now() - t0);
    const c = process.cpuUsage(c0);
    cpu = Math.min(cpu, (c.user + c.system) / 1000);
  }
  const ins = functions(m).flatMap(instructionsOf);
  const lines = src.split('\n').length;
  return `${name.padEnd(34)} ${String(lines).padStart(7)} lines ${String(ins.length).padStart(6)} instructions ${String(new Set(ins.map((i) => i.opcode)).size).padStart(4)} opcodes  ${wall.toFixed(1).padStart(7)} ms wall ${cpu.toFixed(1).padStart(7)} ms CPU`;
}

/** The lines of the report. */
export function ptxReport(): string[] {
  const out: string[] = [];
  for (const f of readdirSync(FIXTURES).filter((n) => n.endsWith('.ptx')).sort()) out.push(measure(f, readFileSync(join(FIXTURES, f), 'utf8')));
  out.push(measure('synthetic (wgmma kernel × 23)', syntheticModule()));
  for (const f of (process.env.PTX_BENCH_FILES ?? '').split(':').filter(Boolean)) out.push(measure(f.split('/').pop()!, readFileSync(f, 'utf8')));
  out.push('target: a 7,000-instruction module well under a second');
  out.push(...simRows());
  out.push(...checkRows());
  return out;
}

/**
 * The GEMM kernels' PTX (384 threads a CTA) at K = 64 with 4 stages, as `mbsim run` takes them: one
 * CTA, and the 2-CTA cluster with TMA multicast (both CTAs simulated).
 */
const GEMMS: Array<{ file: string; launch: PtxLaunch }> = [
  { file: 'hw/kernels/tma_wgmma.ptx', launch: { block: 384, params: { param_4: 128, param_5: 64, param_6: 4 }, tensorMaps: { param_0: 16384, param_1: 16384 }, dynamicSmem: 1024 + 4 * 32768 } },
  { file: 'hw/kernels/cluster_mc.ptx', launch: { block: 384, cluster: 2, params: { param_4: 128, param_5: 64, param_6: 4 }, tensorMaps: { param_0: 16384, param_1: 8192 }, dynamicSmem: 1024 + 4 * 32768 } },
];

/** Translation (src/ptxi/) and simulation of each GEMM's PTX: best wall milliseconds of 3. */
function simRows(): string[] {
  return GEMMS.map((g) => {
    const m = parseOrThrow(readFileSync(g.file, 'utf8'), g.file);
    let tr = Infinity, sim = Infinity, steps = 0, agents = 0;
    for (let i = 0; i < 3; i++) {
      const t0 = performance.now();
      const p = instantiate(translatePtx(m, g.launch).kernel);
      const t1 = performance.now();
      const r = simulate(p, { recordEvents: false, recordSpans: false });
      const t2 = performance.now();
      tr = Math.min(tr, t1 - t0);
      sim = Math.min(sim, t2 - t1);
      steps = r.steps;
      agents = p.agents.length;
    }
    return `${g.file} K=64 S=4${g.launch.cluster ? `, cluster ${g.launch.cluster}` : ''}: translated in ${tr.toFixed(0)} ms, ${agents} warps simulated in ${sim.toFixed(0)} ms (${steps.toLocaleString('en-US')} steps); target: under 1 s`;
  });
}

/** The reference kernels' PTX at 4 stages and 8 k-iterations: their launch line with these parameters. */
const CHECKED: Array<{ file: string; params: Record<string, number> }> = [
  { file: 'hw/kernels/tma_wgmma.ptx', params: { param_5: 8, param_6: 4 } },
  { file: 'hw/kernels/persistent.ptx', params: { param_6: 8, param_7: 4, param_8: 2 } },
  { file: 'hw/kernels/tcgen05.ptx', params: { param_4: 8, param_5: 4 } },
  { file: 'hw/kernels/cluster_mc.ptx', params: { param_5: 8, param_6: 4 } },
];

/** `check` of each {@link CHECKED} kernel (its `// # launch:` line, the parameters above, 4 stages of shared memory). */
function checkRows(): string[] {
  return CHECKED.map(({ file, params }) => {
    const text = readFileSync(file, 'utf8');
    const launch = JSON.parse(/\/\/ # launch: (\{.*\})/.exec(text)![1]!) as PtxLaunch;
    const m = parseOrThrow(text, file);
    const p = instantiate(translatePtx(m, { ...launch, params: { ...launch.params, ...params }, dynamicSmem: 1024 + 4 * 32768 }).kernel);
    const t0 = performance.now();
    const r = check(p, { timeout: 60_000, randomRuns: false });
    const s = (performance.now() - t0) / 1000;
    const shown = Object.entries(params).map(([k, v]) => `${k}=${v}`).join(' ');
    return `check ${file} ${shown}: ${r.verdict}${r.complete ? '' : ' (incomplete)'}, ${r.coverage.states.toLocaleString('en-US')} states, ${s.toFixed(1)} s`;
  });
}
