/**
 * Resolves what the user named on the command line (a built-in example or a sketch file) to a
 * kernel, and parses `--set NAME=VALUE`. Every failure is a {@link UsageError}: one clear message,
 * exit code 2.
 */
import { existsSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EXAMPLES, findExample } from '../examples/index.js';
import type { Kernel } from '../kernel/ir.js';
import { caretExcerpt, didYouMean, excerptColumn, lineAt } from '../lang/diagnostics.js';
import { instantiate, KernelError, type Program } from '../machine/program.js';
import { UsageError } from './errors.js';
import { alignCaret } from './terminal.js';
import { echo } from './args.js';
import { inputProblem, readInput } from './input.js';
import { LIMITS } from '../lang/limits.js';
import { isPtx, refusePtxFlags, type PtxFlags } from './ptx-flags.js';
import { parseSet } from './set-arg.js';
import type { ParseBounds } from './parse-budget.js';

export { parseSet, UsageError };

/** Formats a kernel error with its location and, when the source is at hand, the line and a caret. */
export function formatKernelError(err: KernelError): string {
  const loc = err.loc;
  if (!loc || !loc.line) return `mbsim: error: ${err.message}`;
  const where = `${loc.file ?? '<kernel>'}:${loc.line}:${loc.col}`;
  let out = `${where}: error[${err.code}]: ${err.message}`;
  if (loc.file && inputProblem(loc.file) === null) {
    let source: string;
    try {
      source = readInput(loc.file, 'sketch file', LIMITS.fileChars * 4 + 4).text;
    } catch {
      return out; // gone or replaced since it was parsed: the location alone
    }
    const line = lineAt(source, loc.line);
    if (line !== undefined) {
      const [text, caret] = caretExcerpt(line, loc.col, loc.endCol ?? loc.col + 1);
      // The caret under the excerpt, kept aligned when the boundary escapes control characters in it.
      out = alignCaret(`${out}\n  ${text}\n  ${caret}`, text, excerptColumn(line, loc.col));
    }
  }
  return out;
}

/** A kernel and where it came from. */
export interface Loaded {
  kernel: Kernel;
  /** `example` or the file path. */
  origin: string;
}

/** The `examples/` folder of this package (next to `src/` and `dist/`). */
export function examplesDir(): string {
  return join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'examples');
}

/**
 * `cannot read WHAT SPEC: no such file` (the wording of every input file's read failure, `input.ts`),
 * and where the package's own copy is when SPEC names a file of its `examples/` folder relative to
 * a checkout (`examples/bugs/B01.mbk`, as README.md writes the commands): in a project that
 * installed the package that folder is `node_modules/mbsim/examples/`.
 */
export function noSuchFile(spec: string, cwd = process.cwd(), what = 'sketch file'): string {
  const msg = `cannot read ${what} ${echo(spec)}: no such file`;
  const m = /^(?:\.[/\\])?examples[/\\](.+)$/.exec(spec);
  if (!m || m[1]!.split(/[/\\]/).includes('..')) return msg;
  if (inputProblem(join(examplesDir(), m[1]!)) !== null) return msg;
  const rel = relative(cwd, examplesDir());
  const dir = rel.startsWith('..') || rel === '' ? examplesDir() : rel;
  return `${msg} (the package's examples are in ${echo(dir)}/: ${echo(join(dir, m[1]!))})`;
}

/**
 * Loads an example by name or a sketch file by path. A built-in example runs from its sketch file
 * (`examples/NAME.mbk`, identical to the builder version, test/lang-examples.test.ts), so that
 * locations point at a file the user can open and edit; the builder version is the fallback.
 * `warn` gets the warnings of a PTX file's header values. A file whose parse would pass the
 * command's `bounds` (--max-memory, --timeout) stops the command, incomplete.
 */
export async function loadKernel(spec: string, ptx?: PtxFlags, ptxGrid = true, warn?: (text: string) => void, bounds?: ParseBounds): Promise<Loaded> {
  if (ptx && isPtx(spec)) {
    // The PTX parser and front end are loaded only for PTX input.
    const { loadPtxKernel } = await import('./ptx-load.js');
    return { kernel: loadPtxKernel(spec, ptx, warn, bounds), origin: spec };
  }
  if (ptx) refusePtxFlags(ptx, ptxGrid);
  const ex = findExample(spec);
  if (ex) {
    const file = join(examplesDir(), `${ex.name}.mbk`);
    if (existsSync(file)) {
      const { loadSketchFile } = await import('./sketch.js');
      const rel = relative(process.cwd(), file);
      return { kernel: loadSketchFile(rel.startsWith('..') ? file : rel), origin: 'example' };
    }
    return { kernel: ex.build(), origin: 'example' };
  }
  const why = inputProblem(spec);
  if (why === null) {
    const { loadSketchFile } = await import('./sketch.js');
    return { kernel: loadSketchFile(spec, bounds), origin: spec };
  }
  // Something is there, but not a file: say what it is (a link to /dev/zero is a device).
  if (why !== 'no such file') throw new UsageError(`cannot read sketch file ${echo(spec)}: ${why}`);
  const names = EXAMPLES.map((e) => e.name).join(', ');
  if (/\.[a-z]+$/i.test(spec)) throw new UsageError(noSuchFile(spec));
  const near = /^[\w-]+$/.test(spec) ? didYouMean(spec, EXAMPLES.map((e) => e.name)) : undefined;
  throw new UsageError(`'${echo(spec)}' is neither a built-in example nor a file (${near ? `did you mean ${near}? ` : ''}examples: ${names}; see 'mbsim examples')`);
}

/**
 * Instantiates with parameter overrides, turning kernel errors into usage errors. Errors in a
 * built-in example (`origin` 'example') come from the parameters, so they name the example rather
 * than a line of its TypeScript source.
 */
export function instantiateOrExplain(kernel: Kernel, sets: Record<string, number>, origin = 'file'): Program {
  return explainKernelErrors(kernel, origin, () => instantiate(kernel, sets));
}

/** Runs `f`; a {@link KernelError} it throws becomes a {@link UsageError} with the place and a caret (exit 2). */
export function explainKernelErrors<T>(kernel: Kernel, origin: string, f: () => T): T {
  try {
    return f();
  } catch (err) {
    if (err instanceof KernelError) {
      if (origin === 'example' || !err.loc) throw new UsageError(`mbsim: error: ${origin === 'example' ? `example '${kernel.name}': ` : ''}${err.message}`);
      throw new UsageError(formatKernelError(err));
    }
    throw err;
  }
}
