/**
 * The values of a PTX module's header and of a kernel's performance and cluster directives,
 * checked as they are parsed (PTX ISA "PTX Module Directives" and "Performance-Tuning
 * Directives"): a value ptxas rejects is an `E-ptx-header` error at its token; one PTX allows and
 * ptxas accepts, but that means nothing or is likely a mistake, is a warning. Each message names
 * the rule. Launch-dependent checks (`.reqnctapercluster` and `.maxclusterrank` against the
 * launch's cluster) are the translation's (src/ptxi/translate.ts).
 */
import type { Cursor } from './cursor.js';
import { Tok } from './lexer.js';

/** The last minor version of each PTX ISA major version (9: the newest mbsim knows). */
const LAST_MINOR: Readonly<Record<number, number>> = { 1: 5, 2: 3, 3: 2, 4: 3, 5: 0, 6: 5, 7: 8, 8: 8, 9: 1 };
/** The newest PTX ISA version mbsim knows. */
export const NEWEST_PTX = '9.1';

/** Architectures of `.target` (PTX ISA "Target ISA notes"), without the `a` / `f` suffixes. */
const SM = new Set([10, 11, 12, 13, 20, 21, 30, 32, 35, 37, 50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 88, 89, 90, 100, 101, 103, 110, 120, 121]);
/** Architectures with an `a` (architecture-specific) variant; the `f` (family) ones are those from 100 on. */
const SM_A = new Set([90, 100, 101, 103, 110, 120, 121]);
/** The other words of `.target`. */
const TARGET_OPTIONS = ['texmode_unified', 'texmode_independent', 'debug', 'map_f64_to_f32'];

/** Registers a thread can have (sm_20 on); `.maxnreg` past it bounds nothing. */
export const MAX_REGS_PER_THREAD = 255;
/** CTAs a cluster can have (16 with the non-portable size; 8 portable). */
export const MAX_CLUSTER_CTAS = 16;

/** Checks the `.version` at the current token (a number token); throws or warns there. */
export function checkVersion(c: Cursor): void {
  const text = c.text();
  const m = /^(\d+)\.(\d)$/.exec(text);
  if (!m) c.headerError(`.version ${text}: a PTX ISA version is MAJOR.MINOR with a one-digit minor (e.g. 9.0)`);
  const major = Number(m[1]);
  const minor = Number(m[2]);
  const last = LAST_MINOR[major];
  if (last === undefined) c.headerError(`.version ${text}: no such PTX ISA version (they run from 1.0 to ${NEWEST_PTX}); ptxas rejects a .version it does not know`, 'nvcc writes the version of its PTX ISA here (CUDA 13.0: .version 9.0)');
  if (minor > last) {
    if (major < 9) c.headerError(`.version ${text}: no such PTX ISA version (PTX ISA ${major}.x ends at ${major}.${last}); ptxas rejects a .version it does not know`);
    c.warn(`.version ${text} is newer than PTX ISA ${NEWEST_PTX}, the newest mbsim knows: read as ${NEWEST_PTX} (a ptxas older than it rejects the file)`);
  }
}

/** Checks one `.target` word at the current token (an identifier); throws there. */
export function checkTarget(c: Cursor): void {
  const w = c.text();
  if (TARGET_OPTIONS.includes(w)) return;
  const m = /^sm_(\d+)([af]?)$/.exec(w);
  const n = m ? Number(m[1]) : NaN;
  if (m && SM.has(n) && (m[2] === '' || (m[2] === 'a' ? SM_A.has(n) : n >= 100 && SM_A.has(n)))) return;
  const known = m && SM.has(n) ? `sm_${n} has no '${m[2]}' variant` : `no such architecture`;
  c.headerError(`.target ${w.length > 40 ? `${w.slice(0, 40)}…` : w}: ${known}; ptxas rejects an unknown target (PTX ISA "Target ISA notes": sm_20 … sm_121, sm_90a, sm_100a, sm_100f, …; or ${TARGET_OPTIONS.join(', ')})`, 'mbsim models sm_90a (Hopper) and sm_100a (Blackwell)');
}

/** Directives of a kernel's header that take integers, with what their values mean. */
const INT_DIRECTIVES: Readonly<Record<string, string>> = {
  '.maxnreg': 'registers per thread',
  '.maxntid': 'threads per CTA (x[, y[, z]])',
  '.reqntid': 'threads per CTA (x[, y[, z]])',
  '.minnctapersm': 'CTAs per SM',
  '.maxnctapersm': 'CTAs per SM',
  '.reqnctapercluster': 'CTAs per cluster (x[, y[, z]])',
  '.maxclusterrank': 'CTAs per cluster',
};

/**
 * Parses the integer arguments of the header directive `name` (the cursor past its word) and
 * checks their values; returns them. A directive that takes none returns [].
 */
export function directiveArgs(c: Cursor, name: string): number[] {
  const what = INT_DIRECTIVES[name];
  const args: number[] = [];
  if (what === undefined) {
    if (c.kind() === Tok.Int) do args.push(c.int(`a number in ${name}`)); while (c.accept(','));
    return args;
  }
  const first = c.p;
  const ntid = name === '.maxntid' || name === '.reqntid';
  do {
    if (c.kind() !== Tok.Int) c.headerError(`${name} expects ${what} as whole numbers, found ${c.kind() === Tok.Float ? `'${c.text()}'` : `'${c.text().slice(0, 40)}'`}`);
    const at = c.p;
    const v = c.int(`a number in ${name}`);
    // The block's directives are checked with the launch, which a --block overrides (translate.ts).
    if (!ntid && (!Number.isSafeInteger(v) || v < 0 || v > 0xffffffff)) c.headerError(`${name} ${c.t.text(at)}: a 32-bit unsigned value (PTX ISA "Performance-Tuning Directives")`, '', at);
    args.push(v);
  } while (c.accept(','));
  if (ntid) return args;
  const dims = name === '.reqnctapercluster';
  if (args.length > (dims ? 3 : 1)) c.headerError(`${name} takes ${dims ? '1 to 3 values' : 'one value'} (${what}), found ${args.length}`, '', first);
  if (args.some((v) => v === 0)) c.headerError(`${name} ${args.join(', ')}: each value is at least 1 (${what})`, '', first);
  if (name === '.maxnreg' && args[0]! > MAX_REGS_PER_THREAD) c.warn(`.maxnreg ${args[0]} bounds nothing: a thread has at most ${MAX_REGS_PER_THREAD} registers (ptxas accepts it and allocates at most ${MAX_REGS_PER_THREAD})`, '', first);
  if (name === '.maxclusterrank' && args[0]! > MAX_CLUSTER_CTAS) c.warn(`.maxclusterrank ${args[0]} bounds nothing: a cluster has at most ${MAX_CLUSTER_CTAS} CTAs (ptxas accepts it)`, '', first);
  if (name === '.reqnctapercluster') {
    const ctas = args.reduce((a, b) => a * b, 1);
    if (ctas > MAX_CLUSTER_CTAS) c.headerError(`${name} ${args.join(', ')}: a cluster has at most ${MAX_CLUSTER_CTAS} CTAs (8 portable, 16 with the non-portable size on sm_90 and later)${args.length > 1 ? `, these are ${ctas}` : ''}`, '', first);
  }
  return args;
}
