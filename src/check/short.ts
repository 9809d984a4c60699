/**
 * `mbsim check --format short`: one line per finding, as compilers print them, so editors, grep
 * and CI annotations pick them up:
 *
 * ```
 * examples/bugs/B01.mbk:14:5: error[hang]: barrier full[0]: consumer waits for a phase that never completes
 * examples/bugs/B24.mbk:9:5: warning[missing-fence]: buffer tile: …
 * ```
 *
 * then one summary line (verdict, counts, states). A finding without a source location is written
 * against the kernel's file (line 1, column 1), or the kernel's name when it has no file.
 */
import type { SrcLoc } from '../kernel/ir.js';
import type { CheckResult, Hazard } from './check.js';

/** `file:line:col` of a finding: its first location, else the last step of its trace that has one. */
function whereOf(h: Hazard, r: CheckResult): string {
  const loc: SrcLoc | undefined = h.locations[0] ?? [...h.trace].reverse().find((s) => s.loc)?.loc;
  const file = loc?.file ?? r.program.kernel.file ?? r.program.kernel.name;
  if (!loc || loc.line < 1) return `${file}:1:1`;
  return `${file}:${loc.line}:${Math.max(1, loc.col)}`;
}

/** One finding as one line: `file:line:col: error[kind]: subject: message`. */
export function shortLine(h: Hazard, r: CheckResult): string {
  const sev = h.severity === 'error' ? 'error' : 'warning';
  const subject = h.subject ? `${h.subject.type} ${h.subject.name}: ` : '';
  return `${whereOf(h, r)}: ${sev}[${h.kind}]: ${subject}${h.message.replace(/\s*\n\s*/g, ' ')}`;
}

const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;

/** The short report: the findings' lines (errors first) and a summary line. */
export function renderShort(r: CheckResult): string {
  const lines = [...r.hazards, ...r.warnings].map((h) => shortLine(h, r));
  const how = r.complete ? 'every schedule explored' : r.stoppedBy === 'hazard' ? 'stopped at the first error\'s depth' : `stopped by ${r.stoppedBy}: coverage is partial`;
  lines.push(`mbsim check ${r.program.kernel.name}: ${r.verdict.toUpperCase()}, ${plural(r.hazards.length, 'error')}, ${plural(r.warnings.length, 'warning')}; ${plural(r.coverage.states, 'state')}, ${how}`);
  return `${lines.join('\n')}\n`;
}
