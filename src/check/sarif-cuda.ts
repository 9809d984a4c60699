/**
 * The CUDA lines of a PTX kernel's findings in the SARIF log of {@link checkSarif} (the library's
 * and `check --sarif`'s one log): each result gets, as `relatedLocations`, the CUDA line of every
 * PTX line it cites and the call sites that line was inlined at (the `origin` of the text and JSON
 * reports, from `.loc` and its `inlined_at` chain, PTX ISA §11.4 `.loc`; docs/PTX.md), and each
 * step of its code flow names them in its message. A log of a kernel without CUDA lines (a sketch,
 * PTX without `.loc`) is left unchanged. No `node:` import: the explorer bundles this layer.
 */
import type { Kernel, SrcLoc, Stmt } from '../kernel/ir.js';

/** An artifact location relative to the SARIF root, or absolute (check/sarif.ts `artifactLocation`). */
export type ArtifactOf = (file: string) => { uri: string; uriBaseId?: string };

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
/** The part of a SARIF log this module reads and extends. */
export interface SarifLog { runs?: { results?: SarifResult[] }[] }

/** `path:line` frames of an origin text, innermost first. */
function frames(origin: string): { path: string; line: number }[] {
  return origin.split(', inlined at ').flatMap((f) => {
    const m = /^(.*):(\d+)$/.exec(f);
    return m ? [{ path: m[1]!, line: Number(m[2]) }] : [];
  });
}

/** The folder of a `/`-separated path (`.` for a bare file name), as `node:path` `dirname`. */
function dirOf(path: string): string {
  const i = path.replace(/\/+$/, '').lastIndexOf('/');
  return i < 0 ? '.' : i === 0 ? '/' : path.slice(0, i);
}

/** `rel` under `dir`, normalized (`.` and `..` resolved, no doubled `/`), as `node:path` `join`. */
function joinPath(dir: string, rel: string): string {
  const abs = dir.startsWith('/');
  const out: string[] = [];
  for (const part of `${dir}/${rel}`.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..' && out.length && out[out.length - 1] !== '..') out.pop();
    else if (part !== '..' || !abs) out.push(part);
  }
  const joined = out.join('/');
  return abs ? `/${joined}` : joined || '.';
}

/** The related locations of one result's CUDA lines and call sites, ids after `id`. */
function cudaRelated(r: SarifResult, originOf: (l: SarifLocation | undefined) => string | undefined, dir: string, artifact: ArtifactOf): SarifLocation[] {
  let id = Math.max(0, ...(r.relatedLocations ?? []).map((l) => l.id ?? 0));
  const added: SarifLocation[] = [];
  const seen = new Set<string>();
  for (const l of [...(r.locations ?? []), ...(r.relatedLocations ?? [])]) {
    const o = originOf(l);
    const line = l.physicalLocation?.region?.startLine;
    if (!o || seen.has(o)) continue;
    seen.add(o);
    frames(o).forEach((f, i) => {
      if (f.path.startsWith('<')) return; // a toolkit header: no file to point at
      const file = f.path.startsWith('/') ? f.path : joinPath(dir, f.path);
      added.push({ id: ++id, physicalLocation: { artifactLocation: artifact(file), region: { startLine: f.line } }, message: { text: i === 0 ? `CUDA source of PTX line ${line}: ${o}` : `inlined at ${f.path}:${f.line}` } });
    });
  }
  return added;
}

/**
 * Adds the CUDA lines of `kernel`'s PTX lines to `log` in place (see the module comment): CUDA
 * paths relative to the PTX file's folder, each written by `artifact`. A kernel that is not PTX,
 * or has no `.loc` lines, leaves `log` as it is.
 */
export function addCudaLocations(log: SarifLog, kernel: Kernel, artifact: ArtifactOf): void {
  const origins = kernel.file?.endsWith('.ptx') ? cudaOrigins(kernel) : new Map<number, string>();
  if (!origins.size) return;
  const dir = dirOf(kernel.file!);
  const originOf = (l: SarifLocation | undefined) => { const n = l?.physicalLocation?.region?.startLine; return n === undefined ? undefined : origins.get(n); };
  for (const run of log.runs ?? []) {
    for (const r of run.results ?? []) {
      const added = cudaRelated(r, originOf, dir, artifact);
      if (added.length) r.relatedLocations = [...(r.relatedLocations ?? []), ...added];
      for (const flow of r.codeFlows ?? []) for (const t of flow.threadFlows ?? []) for (const step of t.locations ?? []) {
        const o = originOf(step.location);
        if (o && step.location?.message) step.location.message.text += ` (${o})`;
      }
    }
  }
}
