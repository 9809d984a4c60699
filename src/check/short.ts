/**
 * `mbsim check --format short`: one line per finding, as compilers print them, so editors, grep
 * and CI annotations pick them up:
 *
 * ```
 * examples/bugs/B01.mbk:14:5: error[hang]: barrier full[0]: consumer waits for a phase that never completes
 * examples/bugs/B24.mbk:9:5: warning[missing-fence]: buffer tile: …
 * ```
 *
 * then one summary line (verdict, counts, states). A finding of a PTX kernel compiled with
 * -lineinfo is followed by a note at its CUDA line (`ring.cu:52: note: CUDA source of ring.ptx:343`).
 * A finding without a source location is written
 * against the kernel's file (line 1, column 1), or the kernel's name when it has no file.
 */
import type { SrcLoc } from '../kernel/ir.js';
import type { CheckResult, Hazard } from './check.js';
import type { TripsResult } from './trips.js';

/** A finding's location: its first, else the last step of its trace that has one. */
function locOf(h: Hazard): SrcLoc | undefined {
  return h.locations[0] ?? [...h.trace].reverse().find((s) => s.loc)?.loc;
}

/** `file:line:col` of a finding: its first location, else the last step of its trace that has one. */
function whereOf(h: Hazard, r: CheckResult): string {
  const loc = locOf(h);
  const file = loc?.file ?? r.program.kernel.file ?? r.program.kernel.name;
  if (!loc || loc.line < 1) return `${file}:1:1`;
  return `${file}:${loc.line}:${Math.max(1, loc.col)}`;
}

/** `line 12`, `lines 12 and 20`, `lines 12, 20 and 31` (a location in another file by its file). */
function linesText(ls: readonly SrcLoc[], r: CheckResult): string {
  const own = r.program.kernel.file;
  const t = [...new Set([...ls].filter((l) => l.line >= 1).sort((a, b) => (a.file ?? '').localeCompare(b.file ?? '') || a.line - b.line).map((l) => `${l.file && l.file !== own ? `${l.file}:${l.line}` : String(l.line)}${l.origin ? ` (${l.origin})` : ''}`))];
  if (!t.length) return '';
  return t.length === 1 ? `line ${t[0]}` : `lines ${t.slice(0, -1).join(', ')} and ${t[t.length - 1]}`;
}

/**
 * One finding as one line: `file:line:col: error[kind]: subject: message`, then what else the text
 * report says about it: the static root cause of a hang or race (`; cause (count-mismatch at line
 * 12): …`), a race's fix with the line it goes to (`; fix at line 28: …`, the wait_group or the
 * release a fence must precede), and the finding's other lines (`; see lines 26 and 29`: the other
 * access, the release, other schedules' sites).
 */
export function shortLine(h: Hazard, r: CheckResult): string {
  const sev = h.severity === 'error' ? 'error' : 'warning';
  const subject = h.subject ? `${h.subject.type} ${h.subject.name}: ` : '';
  const flat = (t: string) => t.replace(/\s*\n\s*/g, ' ');
  let line = `${whereOf(h, r)}: ${sev}[${h.kind}]: ${subject}${flat(h.message)}`;
  if (h.cause) {
    const at = linesText(h.cause.locations, r);
    line += `; cause (${h.cause.kind}${at ? ` at ${at}` : ''}): ${flat(h.cause.message)}`;
  }
  // A race's fix, or another finding's `fix:` detail (a missing fence: where it goes).
  const fix = h.race?.fix ?? h.details.find((d) => d.startsWith('fix: '))?.slice(5);
  if (fix) {
    const at = h.sites?.fix ? linesText([h.sites.fix], r) : '';
    line += `; fix${at ? ` at ${at}` : ''}: ${flat(fix)}`;
  }
  const first = h.locations[0];
  const others = [...h.locations.slice(1), ...(h.also?.locations ?? [])].filter((l) => !(first && l.line === first.line && l.file === first.file));
  const see = linesText(others, r);
  if (see) line += `; see ${see}`;
  return line;
}

const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;

/** The short report: the findings' lines (errors first) and a summary line. */
export function renderShort(r: CheckResult): string {
  // A PTX kernel compiled with -lineinfo: each finding's CUDA line follows as a note of its own,
  // located at that line (`ring.cu:52: note: CUDA source of ring.ptx:343`), as compilers print notes.
  const lines = [...r.hazards, ...r.warnings].flatMap((h) => {
    const origin = locOf(h)?.origin;
    if (!origin) return [shortLine(h, r)];
    // `ring.cu:24, inlined at ring.cu:53`: the note is located at the first, the rest follows it.
    const m = /^(.*?:\d+)(?:, (.*))?$/s.exec(origin);
    const at = m ? m[1]! : origin;
    return [shortLine(h, r), `${at}: note: CUDA source of ${whereOf(h, r).replace(/:\d+$/, '')}${m?.[2] ? ` (${m[2]})` : ''}`];
  });
  const how = r.complete ? 'every schedule explored' : r.stoppedBy === 'hazard' ? (r.hazards.some((h) => h.randomRun) ? 'found by a random run beside the search' : 'stopped at the first error\'s depth') : r.stoppedBy === 'interrupt' ? 'interrupted: coverage is partial' : `stopped by ${r.stoppedBy}: coverage is partial`;
  // The all-trip-counts check (trips.ts): which counts the verdict covers, or the finding's.
  const t = 'trips' in r ? (r as TripsResult).trips : null;
  const first = (r as TripsResult).hazards[0]?.tripCount;
  const trips = !t ? '' : first !== undefined ? `; with ${t.param} = ${first}` : t.complete ? `; for every ${t.param} ≥ ${t.from}` : `; not every ${t.param} covered`;
  lines.push(`mbsim check ${r.program.kernel.name}: ${r.verdict.toUpperCase()}, ${plural(r.hazards.length, 'error')}, ${plural(r.warnings.length, 'warning')}; ${plural(r.coverage.states, 'state')}, ${how}${trips}`);
  return `${lines.join('\n')}\n`;
}
