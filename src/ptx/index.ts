/**
 * The PTX front end's parser (docs/ARCHITECTURE.md): `parsePtx` turns PTX text into a
 * {@link Module} or a located diagnostic, and never throws. Unknown opcodes are not errors: an
 * instruction is its opcode words and operands, and the interpreter decides what they mean.
 * `resolve.ts` answers what a later pass asks of the tree: labels per scope, register
 * declarations, the CUDA line of an instruction.
 */
import type { Module } from './ast.js';
import { SyntaxFail } from './cursor.js';
import { lex } from './lexer.js';
import { parseTokens } from './parser.js';

export type * from './ast.js';
export { cudaLocation, debugString, fileTable, functionIndex, functions, instructionsOf, type CudaLocation, type FunctionIndex, type RegInfo, type Scope } from './resolve.js';
export { cudaOrigin, inlineChain, isLibraryPath, originText, type InlineFrame } from './inlined.js';
export { printExpr, printInstruction, printModule, printOperand } from './printer.js';

/** Stable codes of PTX parse diagnostics. Never rename; add new codes at the end. */
export const PTX_CODES = {
  /** A character or token that is not PTX (an unknown character, an unterminated string, a malformed number). */
  lex: 'E-ptx-lex',
  /** A token where the grammar expects another. */
  syntax: 'E-ptx-syntax',
  /** Nesting deeper than the parser follows. */
  limit: 'E-ptx-limit',
  /** A defect of the parser itself (reported, never thrown): please report the input. */
  internal: 'E-ptx-internal',
  /** A header value ptxas rejects (`.version 99.9`, `.target sm_9999`, `.maxnreg 0`): src/ptx/header.ts. */
  header: 'E-ptx-header',
  /** A file with no `.entry` that has a body (empty, only comments, only header directives): nothing to run, reported at its end by `run` and `check` (src/cli/ptx-load.ts). */
  noEntry: 'E-ptx-no-entry',
  /** A header value PTX allows and ptxas accepts but that means nothing (`.maxnreg 1000`): a warning. */
  headerWarning: 'W-ptx-header',
  /** A launch that leaves out something the kernel needs and the PTX does not carry (the dynamic shared memory's size): src/cli/ptx-load.ts. */
  launchWarning: 'W-ptx-launch',
  /** An instruction whose mnemonic mbsim does not recognize at all (a typo ptxas rejects: `mbarrier.try_wiat`): src/ptxi/mnemonics.ts. */
  unknownWarning: 'W-ptx-unknown',
} as const;

/** One of {@link PTX_CODES}. */
export type PtxCode = (typeof PTX_CODES)[keyof typeof PTX_CODES];

/**
 * A parse error: the same shape as the sketch language's diagnostics (1-based line and column,
 * `endCol` one past the span), so the CLI prints both with the source line and a caret.
 */
export interface PtxDiagnostic {
  code: PtxCode;
  message: string;
  /** What to do about it (may be empty). */
  hint: string;
  file: string;
  line: number;
  col: number;
  endCol: number;
}

/** The result of {@link parsePtx}: the module and its warnings (code `W-ptx-header`), or the first error. */
export type PtxParse = { ok: true; module: Module; warnings: PtxDiagnostic[] } | { ok: false; diagnostic: PtxDiagnostic };

/**
 * What `v` is, in words, for a TypeError's message ("null", "an array", "a number (3)"): the
 * wording of the library's other argument checks (model/api-args.ts, which this layer may not import).
 */
function argKind(v: unknown): string {
  if (v === null || v === undefined) return String(v);
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'number') return `a number (${v})`;
  return typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}

/**
 * Parses PTX source text. `file` names the input in positions and diagnostics. Returns the module,
 * or the first lexical or syntax error with its position and what was expected: whatever the text,
 * never throws. A `src` or `file` that is not a string (API misuse, as for `parseSketch`) is a
 * TypeError naming the argument.
 */
export function parsePtx(src: string, file = '<ptx>'): PtxParse {
  if (typeof src !== 'string') throw new TypeError(`parsePtx: src must be a string, got ${argKind(src)}`);
  if (typeof file !== 'string') throw new TypeError(`parsePtx: file must be a string, got ${argKind(file)}`);
  const t = lex(src);
  if (!('count' in t)) return { ok: false, diagnostic: { code: PTX_CODES.lex, hint: '', file, ...t } };
  try {
    const found: { message: string; hint: string; at: number }[] = [];
    const module = parseTokens(t, file, found);
    const warnings = found.map((w): PtxDiagnostic => {
      const col = t.col[w.at]!;
      return { code: PTX_CODES.headerWarning, message: w.message, hint: w.hint, file, line: t.line[w.at]!, col, endCol: col + Math.max(1, Math.min(t.end[w.at]! - t.start[w.at]!, 200)) };
    });
    return { ok: true, module, warnings };
  } catch (e) {
    if (!(e instanceof SyntaxFail)) {
      const message = `internal error of the PTX parser: ${e instanceof Error ? e.message : String(e)}`;
      return { ok: false, diagnostic: { code: PTX_CODES.internal, message, hint: 'this is a defect of mbsim; please report it with the input', file, line: 1, col: 1, endCol: 2 } };
    }
    const i = Math.min(e.at, t.count - 1);
    const width = t.end[i]! - t.start[i]!;
    const len = e.after ? 1 : Math.max(1, Math.min(width, 200));
    const col = t.col[i]! + (e.after ? width : 0);
    return { ok: false, diagnostic: { code: e.code, message: e.message, hint: e.hint, file, line: t.line[i]!, col, endCol: col + len } };
  }
}
