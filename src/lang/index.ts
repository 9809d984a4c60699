/**
 * The kernel sketch language (`.mbk` files): a text front end producing the kernel IR.
 *
 * ```
 * kernel pipeline arch=sm_100a
 * param S = 4
 * barrier full[S] count=1
 * smem A[S] bytes=16384
 * role producer warps=1 per=one:
 *     for i in range(0, 16):
 *         s = i % S
 *         mbarrier.try_wait.parity empty[s], ((i / S) & 1) ^ 1
 *         mbarrier.arrive.expect_tx full[s], 16384
 *         cp.async.bulk.tensor A[s], 16384, full[s]
 * ```
 *
 * `parseSketch` never throws: every problem becomes a {@link SketchDiagnostic}. The language is
 * documented in docs/LANGUAGE.md.
 */
import type { Kernel } from '../kernel/ir.js';
import { instantiate, KernelError } from '../machine/program.js';
import { stringArg } from '../model/api-args.js';
import { SKETCH_CODES, type SketchDiagnostic } from './diagnostics.js';
import { lex } from './lexer.js';
import { LIMITS, StopLowering } from './limits.js';
import { lower } from './lower.js';
import { parseTokens } from './parser.js';
import { splitHint } from './parse-messages.js';

export { formatDiagnostic, SKETCH_CODES, type SketchCode, type SketchDiagnostic } from './diagnostics.js';
export { OPS } from './ops.js';
export { ALIASES, findOp, parseArriveQualifiers, parseQualifiers, type Qualified } from './ops-spelling.js';
export { LIMITS } from './limits.js';

/** At most this many diagnostics are reported per file (then one more says that the check stopped). */
export const MAX_DIAGNOSTICS = LIMITS.errors;

/** Result of {@link parseSketch}: the kernel when there is no error, and the diagnostics. */
export interface SketchResult {
  kernel?: Kernel;
  diagnostics: SketchDiagnostic[];
}

/**
 * Parses and checks a sketch. Returns the kernel only when there are no diagnostics; the checks
 * include instantiating the kernel with its default parameters. Whatever the text, a mistake in it
 * is a diagnostic, never an exception; a `source` or `file` that is not a string (API misuse, as
 * for `parsePtx`) is a TypeError naming the argument.
 */
export function parseSketch(source: string, file: string): SketchResult {
  stringArg('parseSketch', 'source', source);
  stringArg('parseSketch', 'file', file);
  const diagnostics: SketchDiagnostic[] = [];
  try {
    // A UTF-8 byte-order mark is not part of the text (editors on Windows add one).
    if (source.charCodeAt(0) === 0xfeff) source = source.slice(1);
    const lx = lex(source, file);
    diagnostics.push(...lx.diagnostics);
    if (lx.fatal || lx.stopped) return done(diagnostics, !!lx.stopped);
    const { cst, errors, stopped } = parseTokens(lx.tokens);
    const seenLines = new Set<number>();
    for (const e of errors) {
      const t = e.token;
      const real = t && Number.isFinite(t.startLine) && t.tokenType?.name !== 'EOF';
      const line = real ? t.startLine! : lx.end.line;
      const col = real ? t.startColumn! : lx.end.col;
      const endCol = real && t.image ? col + t.image.length : col + 1;
      if (seenLines.has(line)) continue; // one syntax error per line: the rest are consequences
      // An error at the end of a block or file after an earlier error is a consequence of it.
      const synthetic = !real || !t.image;
      if (synthetic && seenLines.size > 0) continue;
      seenLines.add(line);
      const { message, hint } = splitHint(e.message);
      diagnostics.push({ code: SKETCH_CODES.syntax, message, hint: hint || 'see the grammar in docs/LANGUAGE.md', file, line, col, endCol: Math.max(endCol, col + 1) });
    }
    if (!cst || stopped) return done(diagnostics, true);
    const syntaxErrors = diagnostics.length > 0;
    let kernel: Kernel | undefined;
    try {
      kernel = lower(cst, file, diagnostics, syntaxErrors, lx.lineEnd);
    } catch (err) {
      if (!(err instanceof StopLowering)) throw err;
      return done(diagnostics, true);
    }
    if (kernel && diagnostics.length === 0) {
      try {
        instantiate(kernel);
      } catch (err) {
        if (!(err instanceof KernelError)) throw err;
        const l = err.loc;
        const kdecl = kernel.loc ?? kernel.roles[0]?.loc;
        const at = l ?? kdecl ?? { line: 1, col: 1 };
        diagnostics.push({
          code: `E-kernel-${err.code}`, message: err.message, hint: 'the kernel cannot be instantiated with its default parameters',
          file, line: at.line, col: at.col, endCol: at.endCol ?? at.col + 1,
        });
      }
    }
    const res = done(diagnostics, false);
    return diagnostics.length === 0 && kernel ? { kernel, diagnostics } : res;
  } catch (err) {
    if (err instanceof RangeError) {
      // The input limits keep the recursion well inside the stack; this is the last line of defence.
      diagnostics.length = 0;
      const at = deepest(source);
      diagnostics.push({
        code: SKETCH_CODES.limit, message: `the sketch is nested too deeply to be parsed (${at.depth} levels of blocks or parentheses here)`,
        hint: 'compute inner parts of deep expressions into variables; move deeply nested blocks into their own role', file, line: at.line, col: at.col, endCol: at.col + 1,
      });
      return { diagnostics };
    }
    diagnostics.push({
      code: SKETCH_CODES.internal, message: `internal error: ${(err as Error)?.message ?? String(err)}`,
      hint: 'this is a bug in mbsim; please report it with the sketch', file, line: 1, col: 1, endCol: 2,
    });
    finish(diagnostics);
    return { diagnostics };
  }
}

/**
 * Sorts and caps the diagnostics (see {@link finish}); when the check stopped early (`stopped`) or
 * more than {@link MAX_DIAGNOSTICS} were found, one more diagnostic says so, after the last.
 */
function done(d: SketchDiagnostic[], stopped: boolean): SketchResult {
  const many = stopped || d.length > MAX_DIAGNOSTICS;
  finish(d);
  const last = d[d.length - 1];
  if (many && last) {
    d.push({
      code: SKETCH_CODES.limit, message: `too many errors: stopped after ${d.length} (the limit is ${LIMITS.errors} errors per file)`,
      hint: 'fix these first; the rest of the file was not checked', file: last.file, line: last.line, col: last.col, endCol: last.endCol,
    });
  }
  return { diagnostics: d };
}

function finish(d: SketchDiagnostic[]): void {
  d.sort((a, b) => a.line - b.line || a.col - b.col);
  const seen = new Set<string>();
  const out = d.filter((x) => {
    const key = `${x.line}:${x.col}:${x.code}:${x.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  d.length = 0;
  d.push(...out.slice(0, MAX_DIAGNOSTICS));
}

/**
 * Where the source nests deepest: the first point of maximum parenthesis depth, or of block
 * nesting (indentation levels, whatever their width) when that is deeper. For the diagnostic of a
 * parse that ran out of stack.
 */
function deepest(source: string): { line: number; col: number; depth: number } {
  let best = { line: 1, col: 1, depth: 0 };
  let depth = 0;
  const widths = [0];
  const lines = source.split(/\r\n|\r|\n/);
  lines.forEach((text, i) => {
    const indent = /^[ \t]*/.exec(text)![0].length;
    if (text.trim() && !text.trimStart().startsWith('#') && depth === 0) {
      while (widths.length > 1 && widths[widths.length - 1]! > indent) widths.pop();
      if (indent > widths[widths.length - 1]!) widths.push(indent);
      if (widths.length - 1 > best.depth) best = { line: i + 1, col: indent + 1, depth: widths.length - 1 };
    }
    for (let c = 0; c < text.length; c++) {
      const ch = text[c];
      if (ch === '#') break;
      if (ch === '(' || ch === '[') {
        depth++;
        if (depth > best.depth) best = { line: i + 1, col: c + 1, depth };
      } else if (ch === ')' || ch === ']') depth = Math.max(0, depth - 1);
    }
  });
  return best;
}
