/**
 * The CUDA lines of a PTX kernel's findings in the SARIF log that `check --sarif` writes: each
 * result gets, as `relatedLocations`, the CUDA line of every PTX line it cites and the call sites
 * that line was inlined at (the `origin` of the text and JSON reports, docs/PTX.md), and each step
 * of its code flow names them in its message. A log of a kernel without CUDA lines (a sketch, PTX
 * without `.loc`) is written unchanged.
 */
import { dirname, isAbsolute, join } from 'node:path';
import type { Kernel, SrcLoc, Stmt } from '../kernel/ir.js';
import { artifactLocation } from '../check/sarif.js';

/** The CUDA origin of each PTX line of `kernel` (`inlined.cuh:19, inlined at inlined.cu:22`). */
export function cudaOrigins(kernel: Kernel): Map<number, string> {
  const out = new Map<number, string>();
  const note = (loc: SrcLoc | undefined) => { if (loc?.origin && loc.file === kernel.file) out.set(loc.line, loc.origin); };
  const walk = (ss: readonly Stmt[]): void => {
    for (const s of ss) {
      note(s.loc);
      if (s.s === 'if') { walk(s.then); walk(s.else ?? []); }
      else if (s.s === 'for' || s.s === 'elect') walk(s.body);
    }
  };
  for (const r of kernel.roles) walk(r.body);
  return out;
}

interface SarifPhysical { artifactLocation?: { uri?: string }; region?: { startLine?: number } }
interface SarifLocation { id?: number; physicalLocation?: SarifPhysical; message?: { text: string } }
interface SarifResult {
  locations?: SarifLocation[];
  relatedLocations?: SarifLocation[];
  codeFlows?: { threadFlows?: { locations?: { location?: SarifLocation }[] }[] }[];
}

/** `path:line` frames of an origin text, innermost first. */
function frames(origin: string): { path: string; line: number }[] {
  return origin.split(', inlined at ').flatMap((f) => {
    const m = /^(.*):(\d+)$/.exec(f);
    return m ? [{ path: m[1]!, line: Number(m[2]) }] : [];
  });
}

/**
 * `sarif` (the text `check --sarif` writes) with the CUDA lines of `kernel`'s PTX lines added
 * (see the module comment); CUDA paths relative to the PTX file's folder, `root` the SARIF log's
 * `%SRCROOT%` (the working folder).
 */
export function withCudaLocations(sarif: string, kernel: Kernel, root: string = process.cwd()): string {
  const origins = kernel.file?.endsWith('.ptx') ? cudaOrigins(kernel) : new Map<number, string>();
  if (!origins.size) return sarif;
  let log: { runs?: { results?: SarifResult[] }[] };
  try {
    log = JSON.parse(sarif) as typeof log;
  } catch {
    return sarif;
  }
  const dir = dirname(kernel.file!);
  const originOf = (l: SarifLocation | undefined) => { const n = l?.physicalLocation?.region?.startLine; return n === undefined ? undefined : origins.get(n); };
  let changed = false;
  for (const run of log.runs ?? []) {
    for (const r of run.results ?? []) {
      const cited = [...(r.locations ?? []), ...(r.relatedLocations ?? [])];
      let id = Math.max(0, ...(r.relatedLocations ?? []).map((l) => l.id ?? 0));
      const added: SarifLocation[] = [];
      const seen = new Set<string>();
      for (const l of cited) {
        const o = originOf(l);
        const line = l.physicalLocation?.region?.startLine;
        if (!o || seen.has(o)) continue;
        seen.add(o);
        frames(o).forEach((f, i) => {
          if (f.path.startsWith('<')) return; // a toolkit header: no file to point at
          const file = isAbsolute(f.path) ? f.path : join(dir, f.path);
          added.push({ id: ++id, physicalLocation: { artifactLocation: artifactLocation(file, root), region: { startLine: f.line } }, message: { text: i === 0 ? `CUDA source of PTX line ${line}: ${o}` : `inlined at ${f.path}:${f.line}` } });
        });
      }
      if (added.length) { r.relatedLocations = [...(r.relatedLocations ?? []), ...added]; changed = true; }
      for (const flow of r.codeFlows ?? []) for (const t of flow.threadFlows ?? []) for (const step of t.locations ?? []) {
        const o = originOf(step.location);
        if (o && step.location?.message) { step.location.message.text += ` (${o})`; changed = true; }
      }
    }
  }
  return changed ? `${JSON.stringify(log, null, 2)}\n` : sarif;
}
