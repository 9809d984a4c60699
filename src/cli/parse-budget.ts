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

/**
 * Seconds a parse takes per character of its input, measured on a loaded 2-core machine (a 1 MiB
 * sketch about 2 s, 16 MiB of PTX about 4 s); the parse cannot be interrupted, so a `--timeout`
 * it would overrun stops the command before it.
 */
export const PARSE_SECONDS_PER_CHAR = { sketch: 2e-6, PTX: 0.25e-6 } as const;

/** A parse expected to take less than this (seconds) is not weighed against the time left. */
export const PARSE_WEIGH_FROM_S = 0.25;

/** `--max-memory` of run and check when none is given (MB). */
export const DEFAULT_MAX_MEMORY_MB = 2048;

/** The bounds a parse is weighed against: the command's --max-memory, --timeout and start. */
export interface ParseBounds {
  /** MB (default {@link DEFAULT_MAX_MEMORY_MB}). */
  maxMemoryMb?: number | undefined;
  /** Seconds from `started` (default: none). */
  timeoutS?: number | undefined;
  /** When the command started (ms since the epoch; default now). */
  started?: number | undefined;
}

/**
 * Throws an {@link IncompleteError} when parsing `chars` characters of `what` at `path` would take
 * the process's resident set past `--max-memory`, or run past `--timeout`. `rss` and `now` read
 * the resident set and the clock (for tests).
 */
export function weighParse(path: string, what: keyof typeof PARSE_BYTES_PER_CHAR, chars: number, bounds: ParseBounds = {}, rss: () => number = () => process.memoryUsage.rss(), now: () => number = Date.now): void {
  const maxMemoryMb = bounds.maxMemoryMb ?? DEFAULT_MAX_MEMORY_MB;
  const need = chars * PARSE_BYTES_PER_CHAR[what];
  if (need >= PARSE_WEIGH_FROM) {
    const held = rss();
    if (held + need > maxMemoryMb * 1048576) {
      const mb = (n: number) => Math.ceil(n / 1048576).toLocaleString('en-US');
      throw new IncompleteError(`mbsim: incomplete: stopped by --max-memory ${maxMemoryMb} before parsing ${echo(path)}: ${chars.toLocaleString('en-US')} characters of ${what} take about ${mb(need)} MB to parse, and the process holds ${mb(held)} MB; raise --max-memory MB or give a smaller file`);
    }
  }
  const secs = chars * PARSE_SECONDS_PER_CHAR[what];
  if (bounds.timeoutS === undefined || secs < PARSE_WEIGH_FROM_S) return;
  const left = (bounds.started ?? now()) / 1000 + bounds.timeoutS - now() / 1000;
  if (secs > left) {
    throw new IncompleteError(`mbsim: incomplete: stopped by --timeout ${bounds.timeoutS} before parsing ${echo(path)}: ${chars.toLocaleString('en-US')} characters of ${what} take about ${secs.toFixed(1)} s to parse, and ${Math.max(0, left).toFixed(1)} s are left; raise --timeout SECONDS or give a smaller file`);
  }
}
