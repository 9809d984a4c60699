/**
 * A PTX kernel that reads a parameter the launch gives no value (`--param`): the translation leaves
 * a `trap` carrying the parameters' names (`missingParams`, ptxi/translate.ts) where the value is
 * needed. When the check or the run reaches it, the kernel cannot run with this input: that is the
 * user's input error (exit 2, one located line naming the parameters and the flag, then the source
 * line and a caret; its place also as data for `--json` and `--sweep` rows), not a finding about the
 * kernel. A trap every agent meets first (straight-line code from its role's start) is decided from
 * the compiled code; any other from the check's or the run's own result: nothing runs twice.
 */
import { readFileSync } from 'node:fs';
import type { CheckResult } from '../check/check.js';
import { caretExcerpt, excerptColumn, lineAt } from '../lang/diagnostics.js';
import type { SrcLoc } from '../kernel/ir.js';
import { missingParamTraps as missingTraps, missingParamsAt } from '../machine/missing-params.js';
import type { Program } from '../machine/program.js';
import type { SimResult } from '../sim/result.js';
import { UsageError } from './errors.js';
import { PARAM_CODES } from './ptx-flags.js';
import { alignCaret } from './terminal.js';

export { missingParamsAt };

/**
 * The input error for parameters `names` first needed at `loc`: one located line naming them
 * (`param_2`, or `param_0+20`, the field at byte 20 of a struct parameter) and the flags that give
 * them, then the source line with a caret under the operation when the file can be read; `brief`
 * is the located line alone (a `--sweep` row, `--format short`), and `loc` the place as fields
 * (`--json`). `kernelName` stands for the file when `loc` names none.
 */
export function missingParamError(names: string[], loc: SrcLoc | undefined, kernelName: string): UsageError {
  const base = names[0]!.replace(/\+\d+$/, '');
  const fields = names[0]!.includes('+');
  const offsets = names.map((n) => n.slice(base.length + 1));
  const many = names.length > 1;
  const what = fields
    ? (many ? `the fields at bytes ${offsets.join(', ')} of kernel parameter ${base}` : `the field at byte ${offsets[0]!} of kernel parameter ${base}`)
    : many ? `kernel parameters ${names.join(', ')}` : `kernel parameter ${names[0]!}`;
  const file = loc ? loc.file ?? kernelName : '';
  const at = loc ? `${file}:${loc.line}:${loc.col}: ` : '';
  const give = names.map((n) => `--param ${n}=VALUE`).join(' ');
  const line = `${at}error: ${what} ${many ? 'have' : 'has'} no value, and a branch, an address or a count of the kernel depends on ${many ? 'them' : 'it'} here: give ${give}`;
  const shown = loc?.file !== undefined ? excerpt(loc.file, loc.line, loc.col) : null;
  const err = new UsageError(shown ? `${line}\n${shown}` : line, line).withCode(PARAM_CODES.missing);
  return loc ? err.withLoc({ file, line: loc.line, col: loc.col }) : err;
}

/**
 * Line `line` of file `file` (as given on the command line) and a caret row under the operation
 * from column `col` (1-based) to the line's end, indented two spaces as the front ends print them;
 * null when the file cannot be read again or has no such line.
 */
function excerpt(file: string, line: number, col: number): string | null {
  let text: string | undefined;
  try {
    text = lineAt(readFileSync(file, 'utf8'), line);
  } catch {
    return null;
  }
  if (text === undefined || !text.trim()) return null;
  // The operation from its first character (PTX lines are indented) to the last before a comment.
  const from = Math.max(col, text.search(/\S/) + 1);
  const end = text.replace(/\s*(\/\/.*)?$/, '').length + 1;
  const [quoted, caret] = caretExcerpt(text, from, Math.max(end, from + 1));
  return alignCaret(`  ${quoted}\n  ${caret}`, quoted, excerptColumn(text, from));
}

/**
 * The input error when an agent reaches a missing-parameter trap whatever the schedule: the trap
 * is the first operation of a role's code from its start, through assignments and unconditional
 * jumps only (nvcc's `ld.param` at an entry's top). Decided from the compiled code, running
 * nothing; null when no trap is reached that way (the check or the run then decides).
 */
export function staticMissingParams(program: Program): UsageError | null {
  for (const rc of program.roles) {
    const seen = new Set<number>();
    let pc = 0;
    while (pc < rc.code.length && !seen.has(pc)) {
      seen.add(pc);
      const ins = rc.code[pc]!;
      if (ins.i === 'set') pc++;
      else if (ins.i === 'jmp') pc = ins.to;
      else {
        if (ins.i === 'op' && ins.op.op === 'trap' && ins.op.missingParams?.length) return missingParamError(ins.op.missingParams, ins.loc, program.kernel.name);
        break;
      }
    }
  }
  return null;
}

/**
 * The input error when a finding of check result `r` is a missing-parameter trap that a schedule
 * reached (its `not-modelled` diagnostic at the trap), else null.
 */
export function checkMissingParams(r: CheckResult): UsageError | null {
  if (!missingTraps(r.program).length) return null;
  for (const h of [...r.hazards, ...r.warnings]) {
    if (h.kind !== 'not-modelled') continue;
    const names = missingParamsAt(r.program, h.locations[0], h.message);
    if (names) return missingParamError(names, h.locations[0], r.program.kernel.name);
  }
  return null;
}

/** The input error when simulation `r` of `program` stopped at a missing-parameter trap, else null. */
export function runMissingParams(program: Program, r: SimResult): UsageError | null {
  if (!r.final.trapped) return null;
  const d = r.diagnostics.find((x) => x.diag === r.final.trapped) ?? r.diagnostics.find((x) => x.diag.message === r.final.trapped!.message);
  const names = d ? missingParamsAt(program, d.loc, d.diag.message) : null;
  return names ? missingParamError(names, d!.loc, program.kernel.name) : null;
}
