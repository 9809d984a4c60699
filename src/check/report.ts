/**
 * Renderings of a {@link CheckResult}: the terminal report, the `--json` document (schema
 * `mbsim.check/1`, documented in docs/CHECK.md) and SARIF 2.1.0 for code-review tools.
 */
import type { SrcLoc } from '../kernel/ir.js';
import type { Ledger } from '../report/ledger.js';
import { locText, PLAIN, type Paint } from '../report/text.js';
import type { CheckResult, GroupNote, Hazard } from './check.js';
import type { TripsResult } from './trips.js';
import { argError, isRecord } from '../model/api-args.js';

/** Color hooks (identity when not a terminal): the same as `mbsim run`'s. */
export type CheckPaint = Paint;

/** No colors. */
export const NO_PAINT: CheckPaint = PLAIN;

// Digit grouping by hand: the first toLocaleString call loads ICU data (~20 ms of a short check).
const fmt = (n: number) => String(Math.round(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ',');

function pad(s: string, n: number): string {
  return s.length >= n ? s : s + ' '.repeat(n - s.length);
}

function bytesText(b: number): string {
  return b >= 1 << 20 ? `${(b / (1 << 20)).toFixed(1)} MB` : `${(b / 1024).toFixed(0)} KB`;
}

/** The ledger of a trace, as lines. */
export function ledgerLines(ledger: Ledger): string[] {
  const out: string[] = [];
  for (const ph of ledger.phases) {
    const arr = ph.arrivals.map((a) => `${a.who}${a.count > 1 ? ` ×${a.count}` : ''}@${a.t}`).join(', ') || 'none';
    const tx = ph.txExpected || ph.txCompleted ? `, tx ${ph.txCompleted}/${ph.txExpected} B credited/expected` : '';
    const done = ph.completedAt !== null ? `completed at step ${ph.completedAt}` : 'not completed';
    const waits = ph.waiters.length ? `; observed by ${ph.waiters.map((w) => `${w.who}@${w.t}`).join(', ')}` : '';
    out.push(`${ph.barrier} phase ${ph.phase}: arrivals ${ph.arrived} (${arr})${tx}; ${done}${waits}`);
  }
  // Passes before any phase completed (parity 1 on a fresh barrier: the producer-start idiom on empty
  // barriers; a vacuous-wait warning says when it hits a data barrier): one line for all of them.
  if (ledger.vacuous.length) out.push(`passed before any phase completed (parity 1 on a fresh barrier): ${ledger.vacuous.map((v) => `${v.barrier} by ${v.who} at step ${v.t}`).join(', ')}`);
  return out;
}

/**
 * A trace step's async-group note as one line, e.g. `pending bulk-store groups of store: 1 → 0
 * (≤ 0: store's wait_group can pass now)` or, on the wait_group step itself, `pending wgmma groups
 * of consumer: 1 (≤ 1: wait_group 1 passes)`.
 */
export function groupNoteText(g: GroupNote): string {
  const count = g.before === g.after ? String(g.after) : `${g.before} → ${g.after}`;
  const head = `pending ${g.kind === 'bulk.store' ? 'bulk-store' : g.kind === 'cp.async' ? 'cp.async' : 'wgmma'} groups of ${g.agent}: ${count}`;
  if (g.waitN === null || g.wait === null) return head;
  if (g.wait === 'passes') return `${head} (≤ ${g.waitN}: wait_group ${g.waitN} passes)`;
  if (g.wait === 'wakes') return `${head} (≤ ${g.waitN}: ${g.agent}'s wait_group ${g.waitN} can pass now)`;
  return `${head} (> ${g.waitN}: ${g.agent}'s wait_group ${g.waitN} still waits)`;
}

/** `line 21`, `lines 21 and 31`, `lines 12, 21 and 31` (the files are named only when the lines are in several). */
function linesText(ls: readonly Hazard['locations'][number][]): string {
  const oneFile = new Set(ls.map((l) => l.file ?? '')).size <= 1;
  const t = [...new Set(ls.map((l) => (l.file && !oneFile ? locText(l) : String(l.line))))];
  return t.length === 1 ? `line ${t[0]}` : `lines ${t.slice(0, -1).join(', ')} and ${t[t.length - 1]}`;
}

/** The line about the other sites merged into a finding (`Hazard.also`), or null. */
function alsoText(h: Hazard): string | null {
  if (!h.also) return null;
  const n = h.also.count;
  const where = h.also.locations.length ? ` at ${linesText(h.also.locations)}` : ' at the same lines';
  return `also reached by ${n} other schedule${n === 1 ? '' : 's'}${where} (one finding per kind and subject: the shortest trace is shown)`;
}

/**
 * One finding's lines. `sameAs`: the number of an earlier finding whose trace (the same schedule)
 * is already printed: the trace is referred to instead of printed again (a hang and its wait-for cycle).
 * The lines are appended to `out` (returned); without `withTrace`, only those up to the trace (header,
 * message, details, location).
 */
function hazardText(h: Hazard, n: number, paint: CheckPaint, sameAs: number | undefined, kernelFile: string | undefined, out: string[], withTrace: boolean): string[] {
  const sev = h.severity === 'error' ? paint.red(h.kind.toUpperCase()) : paint.yellow(`warning ${h.kind}`);
  out.push(`${paint.bold(`${n}.`)} ${sev}${h.subject ? ` on ${h.subject.type} ${paint.bold(h.subject.name)}` : ''}`);
  // The root cause first: the static finding that explains it, then the message and details
  // (a race's release and fix lead its details).
  if (h.cause) {
    // Each line once, with its CUDA line when the PTX carries -lineinfo (`line 111 (kernel.cu:42)`), as the `at` lines show it.
    const ls = [...new Set(h.cause.locations.map((l) => `${l.line}${l.origin ? ` (${l.origin})` : ''}`))];
    const where = ls.length === 0 ? '' : ls.length === 1 ? ` at line ${ls[0]}` : ` at lines ${ls.slice(0, -1).join(', ')} and ${ls[ls.length - 1]}`;
    out.push(`   ${paint.bold('cause')} (${h.cause.kind}${where}): ${h.cause.message}`);
  }
  out.push(`   ${h.message}`);
  for (const d of h.details) if (!(h.cause && d.startsWith('root cause (static'))) out.push(`   - ${d}`);
  const also = alsoText(h);
  if (h.static) {
    for (const l of h.locations) out.push(`   ${paint.dim(`at ${findingLocText(l, kernelFile)}`)}`);
    if (also) out.push(`   ${paint.dim(also)}`);
    // A static not-modelled error is the check's refusal of the launch's size (check/relaxed.ts), no solo run's.
    out.push(`   ${paint.dim(h.kind === 'not-modelled' ? '(static check of the launch\'s sizes: no schedule)' : '(static check over the agents\' solo runs: no schedule)')}`);
    return out;
  }
  // Where it happened (file:line:col, and the CUDA line of a PTX kernel with -lineinfo): the
  // finding's locations, else the last step of its trace that has one, else the kernel's file.
  const locs = h.locations.length ? h.locations : [...h.trace].reverse().filter((s) => s.loc).slice(0, 1).map((s) => s.loc!);
  const at = locs.length ? [...new Set(locs.map((l) => findingLocText(l, kernelFile)))].join(', ') : kernelFile ? locText({ file: kernelFile, line: 1 }) : '';
  if (at) out.push(`   ${paint.dim(`at ${at}`)}`);
  if (also) out.push(`   ${paint.dim(also)}`);
  if (h.untraced) {
    const why = h.untracedBy === 'max-memory' ? 'it would pass the memory bound; raise --max-memory MB to build it'
      : h.untracedBy === 'interrupt' ? 'the check was interrupted before it was built'
        : 'the time bound ran out after the search; raise --timeout SECONDS to build it';
    out.push(`   ${paint.dim(`(trace of ${h.schedule.length} step${h.schedule.length === 1 ? '' : 's'} not built: ${why})`)}`);
    return out;
  }
  if (!withTrace) return out;
  const title = traceTitle(h);
  if (sameAs !== undefined) {
    out.push(`   ${paint.bold(title)} the trace of ${sameAs} above (the same schedule)`);
    return out;
  }
  out.push(`   ${paint.bold(title)}`);
  if (!h.trace.length) out.push('     (the initial state)');
  // A loop, not Math.max(...trace): a trace can have hundreds of thousands of steps, more
  // arguments than one call takes.
  let actorW = 8;
  for (const s of h.trace) if (s.actor.length > actorW) actorW = s.actor.length;
  actorW = Math.min(36, actorW);
  for (const s of h.trace) {
    const bars = s.barriers.map((b) => `${b.name}: ph ${b.phase} pend ${b.pending}/${b.expected} tx ${b.tx}`).join('; ');
    out.push(`   ${pad(String(s.n), 4)}${pad(s.actor, actorW)}  ${s.op}${s.loc ? paint.dim(`  (${locText(s.loc)})`) : ''}`);
    if (bars) out.push(`   ${' '.repeat(4 + actorW)}  ${paint.dim(`→ ${bars}`)}`);
    if (s.groups) out.push(`   ${' '.repeat(4 + actorW)}  ${paint.cyan(groupNoteText(s.groups))}`);
    for (const note of s.notes) out.push(`   ${' '.repeat(4 + actorW)}  ${paint.cyan(note)}`);
  }
  const ll = ledgerLines(h.ledger);
  if (ll.length) {
    out.push(`   ${paint.bold('ledger of this trace:')}`);
    for (const l of ll) out.push(`     ${l}`);
  }
  return out;
}

/**
 * What the depth counts, when a trace of the report is longer than it: the search's depth is the
 * number of schedule choices, and a trace also shows the steps no choice was made for (an agent
 * the only one able to move, replayed forced steps).
 */
function depthNote(r: CheckResult): string {
  let longest = 0;
  for (const h of r.hazards) if (!h.randomRun && h.trace.length > longest) longest = h.trace.length;
  return longest > r.coverage.depth ? ' (schedule choices; a trace also shows the forced steps between them)' : '';
}

/**
 * A finding's location as `file:line:col`, then its CUDA line in parentheses when the kernel is
 * PTX compiled with -lineinfo (`ring.ptx:343:5 (ring.cu:52)`). A location without a file (a sketch
 * built in code) is written against the kernel's file when there is one.
 */
export function findingLocText(l: SrcLoc, kernelFile?: string): string {
  const file = l.file ?? kernelFile;
  if (!file) return locText(l);
  const t = locText({ file, line: l.line });
  return `${t}${l.line >= 1 && l.col >= 1 ? `:${l.col}` : ''}${l.origin ? ` (${l.origin})` : ''}`;
}

/** The heading of a finding's trace: the shortest, or a random run's (docs/CHECK.md, "Random runs"). */
function traceTitle(h: Hazard): string {
  const n = `${h.trace.length} step${h.trace.length === 1 ? '' : 's'}`;
  return h.randomRun ? `trace of a random run (${n}; a shorter one may exist):` : `shortest trace (${n}):`;
}

/**
 * The terminal report. The first `maxTraces` findings with a schedule get their shortest trace and
 * ledger; the others get their header, message and location, and one closing line says how many
 * traces were left out (`--max-traces N`). Default: every trace.
 */
export function renderCheck(r: CheckResult, paint: CheckPaint = NO_PAINT, maxTraces = Infinity): string {
  checkResultArg('renderCheck', r);
  const p = r.program;
  const out: string[] = [];
  const trips = 'trips' in r ? (r as TripsResult).trips : null;
  // The all-trip-counts check: its parameter is every value from the least on (or the first finding's).
  const params = Object.entries(p.params).map(([k, v]) => (trips && k === trips.param && !r.hazards.length ? `${k}≥${trips.from}` : `${k}=${v}`)).join(' ');
  out.push(`${paint.bold('mbsim check')} ${p.kernel.name} (${p.kernel.arch})${params ? `  ${params}` : ''}`);
  const v = r.verdict;
  const vt = v === 'ok' ? paint.green('OK') : v === 'incomplete' ? paint.yellow('INCOMPLETE') : paint.red(v.toUpperCase());
  out.push(`verdict: ${vt}`);
  const c = r.coverage;
  const sym = symmetrySummary(r);
  const how = r.complete ? 'every schedule explored'
    : r.stoppedBy === 'hazard' && r.hazards.some((h) => h.randomRun) ? `stopped when ${c.randomRuns.runs <= 1 ? 'a random run' : `one of ${fmt(c.randomRuns.runs)} random runs`} beside the search found an error the search had not reached (its trace: from the start, through the searched state the run began in)`
      : r.stoppedBy === 'hazard' ? 'stopped after the depth of the first error (shortest traces); --all explores everything'
      : r.stoppedBy === 'interrupt' ? 'interrupted: coverage is partial'
        : `stopped by ${r.stoppedBy}: coverage is partial`;
  out.push(paint.dim(`${fmt(c.states)} states, ${fmt(c.transitions)} transitions, depth ${c.depth}${depthNote(r)}, ${(c.elapsedMs / 1000).toFixed(2)} s, ~${bytesText(c.memoryBytes)}; ${how}; partial-order reduction ${c.por ? 'on' : 'off'}, symmetry: ${sym}`));
  const tt = tripsText(r);
  if (tt) out.push(tt);
  if (!r.complete && r.stoppedBy !== 'hazard' && r.stoppedBy !== 'interrupt') {
    const bound = r.stoppedBy === 'timeout' ? '--timeout SECONDS' : r.stoppedBy === 'max-memory' ? '--max-memory MB' : '--max-states N';
    // A PTX kernel's sizes are its launch's (--param values, --cluster), not sketch parameters.
    const ptx = p.kernel.roles.some((x) => x.asWritten === true);
    out.push(paint.dim(ptx
      ? `to finish: raise ${bound}, or check a smaller launch (--param: fewer iterations or stages; --cluster: fewer CTAs)`
      : `to finish: raise ${bound}, or check smaller parameters (--set: fewer iterations, stages or CTAs; --sweep shows how the states grow)`));
  }
  if (!r.hazards.length && !r.warnings.length) {
    out.push(v === 'ok' ? 'No hang, race, phase alias, tx mismatch or undefined barrier operation in any schedule.' : 'No hazard found in the part explored.');
  }
  let n = 1;
  let traced = 0;
  let omitted = 0;
  // Schedules whose trace is printed, and the finding that printed it.
  const printed = new Map<string, number>();
  for (const h of [...r.hazards, ...r.warnings]) {
    out.push('');
    const key = h.static || h.untraced || !h.schedule.length ? null : h.schedule.join(',');
    const sameAs = key === null ? undefined : printed.get(key);
    const full = h.static || sameAs !== undefined || traced < maxTraces;
    if (!h.static && sameAs === undefined && full) traced++;
    if (!full) omitted++;
    if (key !== null && full && sameAs === undefined) printed.set(key, n);
    // Appended in place (no out.push(...lines): a long trace has more lines than one call takes arguments).
    hazardText(h, n++, paint, full ? sameAs : undefined, p.kernel.file, out, full);
  }
  if (omitted) {
    const traces = `${omitted} trace${omitted === 1 ? '' : 's'}`;
    out.push('', paint.dim(maxTraces === 0
      ? `(${traces} left out: --max-traces 0 prints none; --max-traces N prints N, --json prints all)`
      : `(${traces} left out after the first ${maxTraces === 1 ? 'one' : maxTraces}: --max-traces N prints more, --json prints all)`));
  }
  return `${out.join('\n')}\n`;
}

/** The `--json` document. */
/** A CheckResult (from check), else a TypeError naming `fn`. */
const checkResultArg = (fn: string, r: unknown): void => {
  if (!isRecord(r) || !Array.isArray(r.hazards) || !Array.isArray(r.warnings) || !isRecord(r.program)) argError(fn, 'result', 'a CheckResult (from check)', r);
};

/** See the module comment. */
export function checkJson(r: CheckResult): unknown {
  checkResultArg('checkJson', r);
  const p = r.program;
  const hz = (h: Hazard) => ({
    kind: h.kind,
    severity: h.severity,
    message: h.message,
    subject: h.subject,
    details: h.details,
    locations: h.locations,
    schedule: h.schedule,
    trace: h.trace,
    ledger: h.ledger,
    ...(h.race ? { race: h.race } : {}),
    ...(h.cause ? { cause: h.cause } : {}),
    ...(h.static ? { static: true } : {}),
    ...(h.untraced ? { untraced: true, untracedBy: h.untracedBy ?? 'timeout' } : {}),
    ...(h.also ? { also: h.also } : {}),
    ...((h as { tripCount?: number }).tripCount !== undefined ? { tripCount: (h as { tripCount?: number }).tripCount } : {}),
  });
  return {
    schema: 'mbsim.check/1',
    kernel: p.kernel.name,
    arch: p.kernel.arch,
    params: p.params,
    verdict: r.verdict,
    complete: r.complete,
    stoppedBy: r.stoppedBy,
    coverage: r.coverage,
    hazards: r.hazards.map(hz),
    warnings: r.warnings.map(hz),
    ...('trips' in r ? { trips: (r as TripsResult).trips } : {}),
  };
}

/** The summary of an all-trip-counts check (check/trips.ts): which trip counts the verdict covers, and why not all when not. */
export function tripsText(r: CheckResult): string | null {
  if (!('trips' in r)) return null;
  const t = (r as TripsResult).trips;
  const first = (r as TripsResult).hazards[0]?.tripCount;
  const steady = t.period !== null ? `steady state identified: period ${t.period} iterations from ${t.threshold} on${t.halfPeriod ? ' (states half a period apart identified with their stage barriers one phase apart)' : ''}` : `steady state not identified: ${t.noShift?.why ?? 'unknown'}${t.noShift?.line ? ` (line ${t.noShift.line})` : ''}`;
  const counts = t.tripCounts.length ? `; the last trip searched with ${t.param} = ${rangeText(t.tripCounts)} from ${fmt(t.starts)} states` : '';
  const what = first !== undefined ? `first finding with ${t.param} = ${first} (its trace runs with that count)`
    : t.complete ? `the verdict holds for every ${t.param} ≥ ${t.from}`
      : `not every ${t.param} is covered (stopped by ${r.stoppedBy ?? 'a bound'})`;
  const mod = t.modulus > 1 ? `; ${t.param} taken modulo ${t.modulus} before the last trip (one search per residue)` : '';
  const direct = t.direct > 0 ? `; ${t.param} < ${t.from + t.direct} searched directly` : '';
  return `trip counts: ${what}; ${steady}${mod}${direct}; ${fmt(t.statesBefore)} states before the last trip${counts}`;
}

/** `1 … 11` for consecutive integers, else the list. */
function rangeText(ns: number[]): string {
  const consecutive = ns.every((n, i) => i === 0 || n === ns[i - 1]! + 1);
  return consecutive && ns.length > 2 ? `${ns[0]} … ${ns[ns.length - 1]}` : ns.join(', ');
}

// SARIF 2.1.0 lives in ./sarif.ts.
export { checkSarif, type SarifOptions } from './sarif.js';

/**
 * The symmetry between the CTAs of a cluster, for the summary line: `; CTAs: 2 interchangeable
 * (rank swap)`, `; CTAs: 4 interchangeable (3 rank rotations)`, `; CTAs: not interchangeable
 * (REASON)` or `; CTAs: off`; nothing for a cluster of one CTA.
 */
function ctaSymmetryText(clusterSize: number, cs: CheckResult['coverage']['ctaSymmetry']): string {
  if (clusterSize < 2) return '';
  if (cs.permutations.length) return `; CTAs: ${clusterSize} interchangeable (${clusterSize === 2 ? 'rank swap' : `${cs.permutations.length} rank rotation${cs.permutations.length === 1 ? '' : 's'}`})`;
  return cs.reason === 'off' ? '; CTAs: off' : `; CTAs: not interchangeable (${cs.reason})`;
}

/**
 * The reductions by symmetry of a check, as the summary line words them (after `symmetry: `):
 * `off`, `none`, the groups of interchangeable agents (`2 groups of 3 interchangeable math warps`)
 * and the CTA symmetry (`; CTAs: 2 interchangeable (rank swap)`). One text for the CLI and the
 * explorer.
 */
export function symmetrySummary(r: CheckResult): string {
  const c = r.coverage;
  const p = r.program;
  return (!c.symmetryOn ? 'off' : c.symmetry.length ? symmetryText(p, c.symmetry) : 'none') + (c.symmetryOn ? ctaSymmetryText(p.clusterSize, c.ctaSymmetry) : '');
}

/**
 * The symmetry groups, one entry per role and group size: `4 interchangeable epilogue warps`,
 * `2 groups of 3 interchangeable consumer warps` (one group per role instance and CTA: the warps of
 * different instances are never interchangeable), `3 interchangeable consumer instances` (a role
 * that runs as one agent per instance). Each group's states are explored once per arrangement of
 * its members (docs/CHECK.md, "Symmetry").
 */
function symmetryText(p: CheckResult['program'], groups: readonly { role: string; agents: number }[]): string {
  const counts = new Map<string, number>();
  for (const g of groups) {
    const split = p.roles.find((rc) => rc.name === g.role)?.split ?? false;
    const k = `${g.agents} interchangeable ${g.role} ${split ? 'warps' : 'instances'}`;
    counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  return [...counts].map(([k, n]) => (n > 1 ? `${n.toLocaleString('en-US')} groups of ${k}` : k)).join(', ');
}
