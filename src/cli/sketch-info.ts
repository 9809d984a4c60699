/**
 * `mbsim info SKETCH.mbk`: what a sketch declares (its kernel, parameters, launch, barriers,
 * buffers and roles), as `mbsim info` lists a PTX module's kernels. A sketch with errors is
 * reported as `run` and `check` report it (exit 2).
 */
import { showExpr } from '../kernel/expr.js';
import type { Kernel } from '../kernel/ir.js';
import { loadSketchFile } from './sketch.js';

/** The lines `mbsim info` prints for the sketch file at `path`. */
export function sketchInfo(path: string): string[] {
  return kernelLines(path, loadSketchFile(path));
}

function kernelLines(path: string, k: Kernel): string[] {
  const out = [`${path}: sketch, kernel '${k.name}' (${k.arch}), cluster ${showExpr(k.cluster)}${k.grid ? `, grid ${showExpr(k.grid)}` : ''}`];
  if (k.description) out.push(`  ${k.description}`);
  if (k.params.length) out.push(`  params: ${k.params.map((p) => `${p.name}=${p.value}`).join(' ')}`);
  for (const b of k.barriers) out.push(`  barrier ${b.name}${b.scalar ? '' : `[${showExpr(b.length)}]`} count=${showExpr(b.count)}${b.init === 'manual' ? ' init=manual' : ''}`);
  for (const b of k.buffers) out.push(`  ${b.space} ${b.name}${b.scalar ? '' : `[${showExpr(b.length)}]`} of ${showExpr(b.bytes)} bytes`);
  for (const r of k.roles) out.push(`  role ${r.name}: ${r.warps} warp${r.warps === 1 ? '' : 's'}, per=${r.per}${r.instances ? `, ${showExpr(r.instances)} instances` : ''}`);
  return out;
}
