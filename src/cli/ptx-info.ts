/**
 * `mbsim info FILE.ptx`: parses a PTX module (src/ptx/) and prints its kernels and functions,
 * their parameters (a kernel's with the `--param` name that gives it a value), header directives and instruction counts. A parse error is printed like a
 * sketch's (file:line:col, the source line, a caret, what was expected) and exits 2.
 */
import { caretExcerpt, excerptColumn, lineAt } from '../lang/diagnostics.js';
import { unknownMnemonic } from '../ptxi/mnemonics.js';
import { demangle } from '../ptxi/names.js';
import { functionIndex, functions, instructionsOf, parsePtx, PTX_CODES, type Func, type Module, type Param, type PtxDiagnostic } from '../ptx/index.js';
import { readInput } from './input.js';
import { UsageError } from './errors.js';
import { echo } from './args.js';
import { weighParse, type ParseBounds } from './parse-budget.js';
import { alignCaret } from './terminal.js';
import { looksLikeSketch } from './sniff.js';

/**
 * Most bytes of PTX read: production kernels with debug sections are a few MiB. 16 MiB, as
 * `mbsim serve` takes (src/web/server/serve.ts): parsing them takes about 780 MB (64 MiB took 2.9 GB).
 */
export const PTX_MAX_BYTES = 16 << 20;

/** A PTX diagnostic as `file:line:col: error[code]: message` (`warning[…]` for a `W-` code), the source line and a caret. */
export function formatPtxDiagnostic(d: PtxDiagnostic, src: string): string {
  let out = `${d.file}:${d.line}:${d.col}: ${d.code.startsWith('W-') ? 'warning' : 'error'}[${d.code}]: ${d.message}`;
  const text = lineAt(src, d.line);
  if (text !== undefined) {
    const [shown, caret] = caretExcerpt(text, d.col, d.endCol);
    // The caret stays under its column when the boundary escapes control characters in the line.
    out = alignCaret(`${out}\n  ${shown}\n  ${caret}`, shown, excerptColumn(text, d.col));
  }
  return d.hint ? `${out}\nhint: ${d.hint}` : out;
}

/**
 * The error of a PTX file that does not parse; a sketch saved as `.ptx` (its first error is the
 * `#` of a comment or the `kernel` line) is named as one.
 */
export function ptxParseError(path: string, d: PtxDiagnostic, src: string): UsageError {
  const out = formatPtxDiagnostic(d, src);
  if (!looksLikeSketch(src)) return new UsageError(out);
  return new UsageError(`${out}\nhint: ${echo(path)} looks like a sketch (a 'kernel NAME' line and no PTX directive), not PTX: mbsim reads a file as PTX by its extension; save it as .mbk`);
}

/**
 * Reads and parses `path`; a read or parse error is a {@link UsageError} (exit 2), a file larger
 * than {@link PTX_MAX_BYTES} too (it was parsed cut short: a syntax error at its end). A parse that
 * would pass the command's `bounds` (--max-memory, --timeout) is an IncompleteError (exit 3, parse-budget.ts). The
 * warnings of its header values (formatted, with their carets) go to `warn`.
 */
export function loadPtxFile(path: string, warn: (text: string) => void = () => {}, bounds?: ParseBounds): { module: Module; src: string } {
  const { text: src, truncated } = readInput(path, 'PTX file', PTX_MAX_BYTES);
  if (truncated) throw new UsageError(`cannot read PTX file ${echo(path)}: it is larger than ${PTX_MAX_BYTES >> 20} MiB, the most mbsim reads (nvcc's PTX of a kernel is a few MiB; give the module of the kernel alone)`);
  weighParse(path, 'PTX', src.length, bounds);
  const r = parsePtx(src, path);
  if (!r.ok) throw ptxParseError(path, r.diagnostic, src);
  for (const w of r.warnings) warn(formatPtxDiagnostic(w, src));
  for (const fn of functions(r.module)) {
    for (const ins of instructionsOf(fn)) {
      const u = unknownMnemonic(ins);
      if (u === undefined) continue;
      const col = ins.opcodeCol ?? ins.pos.col;
      warn(formatPtxDiagnostic({ code: PTX_CODES.unknownWarning, message: `unknown instruction '${ins.opcode}': mbsim does not know '${u}' (a typo? ptxas would likely reject it); a run that reaches it stops there`, hint: u.startsWith('mbarrier') ? 'the mbarrier operations are init, inval, arrive, arrive_drop, expect_tx, complete_tx, test_wait, try_wait and pending_count' : 'check the spelling against the PTX ISA', file: ins.pos.file, line: ins.pos.line, col, endCol: col + ins.opcode.length }, src));
    }
  }
  return { module: r.module, src };
}

/** `1 kernel`, `2 kernels`. */
function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

function paramText(p: Param): string {
  const dims = p.dims ? p.dims.map((n) => `[${n ?? ''}]`).join('') : '';
  const ptr = p.ptr ? ` .ptr${p.ptr.space ? ` ${p.ptr.space}` : ''}${p.ptr.align !== undefined ? ` .align ${p.ptr.align}` : ''}` : '';
  return `${p.space}${p.align !== undefined ? ` .align ${p.align}` : ''}${p.vector ? ` ${p.vector}` : ''} ${p.type}${ptr} ${p.name}${dims}`;
}

function funcLines(f: Func): string[] {
  const kind = f.entry ? 'entry' : 'func';
  const link = f.linkage.length ? ` ${f.linkage.join(' ')}` : '';
  if (!f.body) return [`${kind} ${f.name}${link} (declared)`];
  const ins = instructionsOf(f);
  const idx = functionIndex(f);
  const labels = idx.scopes.reduce((n, s) => n + s.labels.size, 0);
  const opcodes = new Set(ins.map((i) => i.opcode)).size;
  // A mangled kernel's name as --kernel takes it (`ring` of `_Z4ringPKfPfi`).
  const short = demangle(f.name);
  const named = short !== f.name ? `${f.name} (${short})` : f.name;
  const out = [`${kind} ${named}${link}: ${count(ins.length, 'instruction')}, ${count(opcodes, 'distinct opcode')}, ${count(labels, 'label')}, ${count(idx.scopes.length - 1, 'nested scope')}`];
  for (const d of f.directives) out.push(`  ${d.name}${d.values ? ` ${d.values.map((v) => `"${v}"`).join(', ')}` : d.args.length ? ` ${d.args.join(', ')}` : ''}`);
  for (const p of f.returns) out.push(`  returns ${paramText(p)}`);
  // A kernel's parameter as `--param` names it: nvcc's `NAME_param_N` is `param_N`, another name its index.
  f.params.forEach((p, i) => out.push(`  param ${paramText(p)}${f.entry ? ` (--param ${new RegExp(`_param_${i}$`).test(p.name) ? `param_${i}` : i})` : ''}`));
  return out;
}

/** The lines `mbsim info` prints for a parsed module. */
export function ptxInfo(m: Module): string[] {
  const fs = functions(m);
  const total = fs.reduce((n, f) => n + instructionsOf(f).length, 0);
  const head = [`${m.file}: PTX ${m.version ?? '?'}, target ${m.targets.join(', ') || '?'}, ${m.addressSize ?? '?'}-bit addresses`];
  const kernels = fs.filter((f) => f.entry && f.body).length;
  const defined = fs.filter((f) => !f.entry && f.body).length;
  head.push(`${count(kernels, 'kernel')}, ${count(defined, 'function')} defined, ${fs.filter((f) => !f.body).length} declared; ${count(total, 'instruction')}`);
  return [...head, ...fs.flatMap(funcLines)];
}
