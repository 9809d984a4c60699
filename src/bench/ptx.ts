/**
 * `npm run bench -- ptx`: the PTX parser's speed (src/ptx/) on the committed fixtures, on a
 * synthetic module of about 7,300 instructions (the wgmma fixture's kernel repeated under new
 * names: the size of the largest production kernels nvcc writes), and on any further files named
 * in `PTX_BENCH_FILES` (colon-separated paths, e.g. PTX compiled locally from public kernels).
 * Best of 5 parses, wall and CPU. Target: a 7,000-instruction module well under a second.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { functions, instructionsOf, parsePtx } from '../ptx/index.js';

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
  return out;
}
