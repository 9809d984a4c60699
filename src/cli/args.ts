/**
 * Parsers of the CLI's numeric flags, and the one way an error message echoes what the user gave.
 * Every parser throws a {@link UsageError} (exit code 2) for a value of another form, and for an
 * integer beyond 2^53 − 1 (a double no longer holds it exactly: `--max-states 1e40` is refused, not
 * rounded).
 */
import { availableParallelism } from 'node:os';
import { UsageError } from './errors.js';

/** Characters of a user's value echoed in a message; a longer value is cut with its length. */
export const ECHO_MAX = 64;

/**
 * `s` as a message shows it: at most {@link ECHO_MAX} characters, a longer one cut and followed by
 * `… (N characters)`, so a 100 KB argument does not flood the terminal.
 */
export function echo(s: string): string {
  return s.length <= ECHO_MAX ? s : `${s.slice(0, ECHO_MAX)}… (${s.length.toLocaleString('en-US')} characters)`;
}

/**
 * Refuses an argument holding a line break (`\n`, `\r`, U+2028, U+2029): a file name or value with
 * one would be echoed in reports and messages, where it starts a line of its own (a forged
 * `verdict: OK`, a second `file:line:col` finding). One {@link UsageError} names the argument
 * with the breaks shown as escapes.
 */
export function refuseLineBreaks(argv: readonly string[]): void {
  argv.forEach((a, i) => {
    if (!/[\n\r\u2028\u2029]/.test(a)) return;
    const shown = echo(a).replace(/[\n\r\u2028\u2029]/g, (c) => ({ '\n': '\\n', '\r': '\\r' })[c] ?? `\\u${c.charCodeAt(0).toString(16)}`);
    throw new UsageError(`argument ${i + 1} ('${shown}') contains a line break: mbsim takes no file name or value with one (rename the file)`);
  });
}

/** The integer of `v` (already matched as digits) or a {@link UsageError} beyond ±(2^53 − 1). */
function exactInteger(name: string, v: string): number {
  const n = Number(v);
  if (!Number.isSafeInteger(n)) throw new UsageError(`${name} ${echo(v)} is beyond the integers mbsim handles exactly (at most 9,007,199,254,740,991)`);
  return n;
}

/** An integer, possibly negative (range checks are the caller's). */
export function parseIntArg(name: string) {
  return (v: string): number => {
    if (!/^-?\d+$/.test(v)) throw new UsageError(`${name} expects an integer, got '${echo(v)}'`);
    return exactInteger(name, v);
  };
}

/** Largest `--timeout` in seconds (about 11.6 days; its milliseconds stay below 2^31, what a timer holds). */
export const MAX_SECONDS = 1_000_000;

/** A positive number of seconds (fractions allowed), at most {@link MAX_SECONDS}. */
export function parseSecondsArg(name: string) {
  return (v: string): number => {
    if (!/^\d+(\.\d+)?$/.test(v) || Number(v) <= 0) throw new UsageError(`${name} expects a positive number of seconds, got '${echo(v)}'`);
    if (Number(v) > MAX_SECONDS) throw new UsageError(`${name} ${echo(v)} is too long (at most ${MAX_SECONDS.toLocaleString('en-US')} seconds)`);
    return Number(v);
  };
}

/** A count: a non-negative integer. */
export function parseCountArg(name: string) {
  return (v: string): number => {
    if (!/^\d+$/.test(v)) throw new UsageError(`${name} expects a non-negative integer, got '${echo(v)}'`);
    return exactInteger(name, v);
  };
}

/** A search bound: a positive integer. */
export function parsePositiveArg(name: string) {
  return (v: string): number => {
    if (!/^\d+$/.test(v) || Number(v) < 1) throw new UsageError(`${name} expects a positive integer, got '${echo(v)}'`);
    return exactInteger(name, v);
  };
}

/**
 * The worker threads `check --workers N` runs: N, or the machine's CPUs when N is more (a thread
 * per CPU is as fast as the search gets; each thread costs memory). Returns the count and, when it
 * was lowered, the note the CLI prints.
 */
export function workerCount(n: number, cpus: number = availableParallelism()): { workers: number; note: string | null } {
  if (n <= cpus) return { workers: n, note: null };
  return { workers: cpus, note: `mbsim: note: --workers ${n} is more than this machine's ${cpus} CPU${cpus === 1 ? '' : 's'}; using ${cpus} worker thread${cpus === 1 ? '' : 's'}` };
}

/**
 * Refuses a `--max-memory` (MB) that mbsim's own resident set (Node's runtime, mbsim's code, the
 * loaded kernel: `held` bytes, about 50–70 MB) already passes: the bound counts the whole process
 * (src/machine/governor.ts), so the work would stop at once with nothing done, an `incomplete`
 * that says nothing about the kernel. `share` is the part of the bound the work may fill (`run`'s
 * records: 0.5); `what` names the work (`the check`). Throws a {@link UsageError} (exit 2) naming
 * the least value that leaves the work room.
 */
export function refuseMemoryBelowFootprint(mb: number | undefined, held: number, share: number, what: string, defaultMb: number): void {
  if (mb === undefined || mb * 1048576 * share > held) return;
  const heldMb = Math.ceil(held / 1048576);
  const least = Math.floor(heldMb / share) + 1;
  const shareText = share < 1 ? `, of which ${what}'s records may fill ${Math.round(share * 100)}%` : '';
  throw new UsageError(`--max-memory ${mb} MB is below what mbsim itself holds before ${what} starts (${heldMb} MB: Node's runtime, mbsim's code and the kernel): the bound counts the whole process${shareText}, so ${what} would stop at once with nothing done; give more than ${least - 1} (the default is ${defaultMb})`);
}
