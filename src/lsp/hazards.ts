/**
 * The checker's findings as LSP diagnostics: `mbsim check` on a sketch that parses, within small
 * bounds, each hazard at its first source location with the other sites as related locations (a
 * race's other access, the release that let the later access go and the wait that observed it; a
 * hang's other blocked waiters and its static root cause).
 *
 * The search runs under the resource governor (src/machine/governor.ts) with the bounds given
 * here: a deadline, a state count and the process's memory. When a bound stops it, one
 * information diagnostic on the kernel line says how far it got.
 */
import type { Diagnostic, DiagnosticRelatedInformation } from 'vscode-languageserver';
import type { Kernel, SrcLoc } from '../kernel/ir.js';
import { check, type CheckResult, type Hazard } from '../check/check.js';
import { instantiate, KernelError } from '../machine/program.js';
import { SEARCH_CAUSES } from '../check/cause-static.js';
import { locationOf, rangeOf, SEVERITY } from './features.js';

/** Bounds of one check the server runs (each passed to the search's governor). */
export interface HazardBounds {
  /** Milliseconds for the whole check (static checks, search, traces). */
  timeoutMs: number;
  /** Distinct states at most. */
  maxStates: number;
  /** Bytes of process memory (resident set) at most. */
  maxMemory: number;
}

/** The server's default bounds: small enough to run on every save of a small sketch. */
export const DEFAULT_HAZARD_BOUNDS: HazardBounds = { timeoutMs: 2000, maxStates: 200_000, maxMemory: 1024 * 1024 * 1024 };

/** The `source` of the checker's diagnostics. */
export const CHECK_SOURCE = 'mbsim check';

const sameLoc = (a: SrcLoc, b: SrcLoc) => a.line === b.line && a.col === b.col;

/** The related locations of hazard `h` (its primary location excluded), each with what it is. */
function related(uri: string, h: Hazard, primary: SrcLoc | undefined): DiagnosticRelatedInformation[] {
  const out: DiagnosticRelatedInformation[] = [];
  const seen: SrcLoc[] = primary ? [primary] : [];
  const add = (l: SrcLoc | undefined, message: string) => {
    if (!l || l.line < 1 || seen.some((s) => sameLoc(s, l))) return;
    seen.push(l);
    out.push({ location: locationOf(uri, l), message });
  };
  if (h.sites?.release) add(h.sites.release, `the release: ${h.race?.release ?? 'the arrive or commit that let the later access go'}`);
  if (h.sites?.wait) add(h.sites.wait, 'the wait that observed that release');
  if (h.sites?.fix) add(h.sites.fix, `where the fix goes: ${h.race?.fix ?? 'the wait_group or fence that should order the accesses'}`);
  const others = h.kind === 'race' ? `the other access of the race${h.race ? `: ${h.race.first}` : ''}`
    : h.kind === 'hang' || h.kind === 'cycle' ? 'blocked here too'
      : `related site of this ${h.kind}`;
  for (const l of h.locations.slice(1)) add(l, others);
  if (h.also) for (const l of h.also.locations) add(l, `this ${h.kind} is also reached here (another schedule)`);
  if (h.cause) for (const l of h.cause.locations) add(l, `root cause (${SEARCH_CAUSES.has(h.cause.kind) ? '' : 'static '}${h.cause.kind}): ${h.cause.message}`);
  return out;
}

/** One hazard as an LSP diagnostic in document `uri`; `fallback` is where a finding without a location goes. */
export function hazardDiagnostic(uri: string, h: Hazard, fallback: SrcLoc): Diagnostic {
  const primary = h.locations[0] ?? [...h.trace].reverse().find((s) => s.loc)?.loc;
  const subject = h.subject ? `${h.subject.type} ${h.subject.name}: ` : '';
  const lines = [`${subject}${h.message}`];
  if (h.cause) lines.push(`root cause (${SEARCH_CAUSES.has(h.cause.kind) ? '' : 'static '}${h.cause.kind}): ${h.cause.message}`);
  if (h.race?.fix) lines.push(`fix: ${h.race.fix}`);
  if (h.schedule.length) lines.push(`shortest schedule: ${h.trace.length} steps (mbsim check prints it)`);
  const d: Diagnostic = {
    range: rangeOf(primary && primary.line >= 1 ? primary : fallback),
    severity: h.severity === 'error' ? SEVERITY.error : SEVERITY.warning,
    code: h.kind, source: CHECK_SOURCE, message: lines.join('\n'),
  };
  const rel = related(uri, h, primary);
  if (rel.length) d.relatedInformation = rel;
  return d;
}

/** The outcome of {@link hazardDiagnostics}. */
export interface HazardReport {
  diagnostics: Diagnostic[];
  /** The check's result; absent when the kernel could not be instantiated. */
  result?: CheckResult;
}

/**
 * Checks `kernel` (with its default parameters) within `bounds` and returns every hazard and
 * warning as a diagnostic of document `uri`; a check a bound stopped adds one information
 * diagnostic on the kernel line. Never throws for a kernel that parsed.
 */
export function hazardDiagnostics(kernel: Kernel, uri: string, bounds: HazardBounds = DEFAULT_HAZARD_BOUNDS): HazardReport {
  const at: SrcLoc = kernel.loc ?? { line: 1, col: 1, endCol: 2 };
  let result: CheckResult;
  try {
    result = check(instantiate(kernel), { timeout: bounds.timeoutMs, maxStates: bounds.maxStates, maxMemory: bounds.maxMemory });
  } catch (err) {
    if (!(err instanceof KernelError)) throw err;
    return { diagnostics: [{ range: rangeOf(err.loc ?? at), severity: SEVERITY.error, code: `E-kernel-${err.code}`, source: CHECK_SOURCE, message: err.message }] };
  }
  const diagnostics = [...result.hazards, ...result.warnings].map((h) => hazardDiagnostic(uri, h, at));
  if (!result.complete && result.stoppedBy !== 'hazard') {
    const c = result.coverage;
    diagnostics.push({
      range: rangeOf(at), severity: SEVERITY.information, code: 'incomplete', source: CHECK_SOURCE,
      message: `the editor's check stopped by ${result.stoppedBy ?? 'a bound'} after ${c.states.toLocaleString('en-US')} states (${Math.round(c.elapsedMs)} ms): ${result.hazards.length ? 'more hazards may exist' : 'no hazard in the part explored'}; run mbsim check for the full search`,
    });
  }
  return { diagnostics, result };
}
