/**
 * The parse of an input file under `--max-memory`. Parsing holds far more than the file: a 1 MiB
 * sketch of statements took 250 MB (the lexer's tokens, the parser's tree), 16 MiB of PTX about
 * 780 MB, and the 64 MiB PTX then accepted 2.9 GB under `--max-memory 1000`. The parse runs
 * before any governor can look, so the file's size is weighed first: when the resident set plus
 * what the parse will take passes the bound, the command stops there, incomplete (exit 3), with
 * one line saying so; the search or simulation would have stopped at once anyway.
 */
import { IncompleteError } from './errors.js';
import { echo } from './args.js';

/** Resident bytes a parse takes per character of its input, measured with margin (docs/CHECK.md, "Bounds"). */
export const PARSE_BYTES_PER_CHAR = { sketch: 256, PTX: 48 } as const;

/** A parse expected to take less than this is not weighed (a sketch under 64 K characters, PTX under 350 KB). */
export const PARSE_WEIGH_FROM = 16 << 20;

/** `--max-memory` of run and check when none is given (MB). */
export const DEFAULT_MAX_MEMORY_MB = 2048;

/**
 * Throws an {@link IncompleteError} when parsing `chars` characters of `what` at `path` would take
 * the process's resident set past `maxMemoryMb` (default {@link DEFAULT_MAX_MEMORY_MB}).
 * `rss` reads the resident set (for tests).
 */
export function weighParse(path: string, what: keyof typeof PARSE_BYTES_PER_CHAR, chars: number, maxMemoryMb = DEFAULT_MAX_MEMORY_MB, rss: () => number = () => process.memoryUsage.rss()): void {
  const need = chars * PARSE_BYTES_PER_CHAR[what];
  if (need < PARSE_WEIGH_FROM) return;
  const held = rss();
  if (held + need <= maxMemoryMb * 1048576) return;
  const mb = (n: number) => Math.ceil(n / 1048576).toLocaleString('en-US');
  throw new IncompleteError(`mbsim: incomplete: stopped by --max-memory ${maxMemoryMb} before parsing ${echo(path)}: ${chars.toLocaleString('en-US')} characters of ${what} take about ${mb(need)} MB to parse, and the process holds ${mb(held)} MB; raise --max-memory MB or give a smaller file`);
}
