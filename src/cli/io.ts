/**
 * What every verb of the CLI shares: where it writes ({@link IO}), its colors, the time left of
 * `--timeout` and how a usage error is printed.
 */
import type { Command } from 'commander';
import type { ProgressStream } from '../check/index.js';
import { PLAIN, type Paint } from '../report/text.js';
import type { UsageError } from './errors.js';
import { markPaint } from './terminal.js';

/** Where the CLI writes. */
export interface IO {
  out(s: string): void;
  err(s: string): void;
  /** Colors on? */
  color: boolean;
  /** `check`'s progress bar stream (stderr); drawn only when its `isTTY` is true. */
  progress?: ProgressStream;
  /**
   * Resolves once what `out` queued is written far enough that more may be queued (stdout's
   * backpressure: a pipe whose reader is slower than the CLI would otherwise hold every chunk of
   * a large `--json` document in memory at once). Absent: `out` never queues.
   */
  drain?: () => Promise<void>;
  /**
   * True for the process's own IO: `check` listens for SIGINT and SIGTERM and stops the search
   * with the partial result (src/cli/check-thread.ts). Absent (tests' IO): the process's signals
   * are left alone.
   */
  signals?: boolean;
}

/** Bytes stdout may hold queued before {@link IO.drain} waits for it to be written. */
export const STDOUT_QUEUE_MAX = 4 << 20;

/** The process's IO: stdout, stderr, colors on a terminal unless NO_COLOR, the progress bar unless TERM=dumb. */
export function nodeIO(): IO {
  return {
    out: (s) => process.stdout.write(s.endsWith('\n') ? s : `${s}\n`),
    // A line starting with \r redraws a status line in place (progress); others end with a newline.
    err: (s) => process.stderr.write(s.startsWith('\r') || s.endsWith('\n') ? s : `${s}\n`),
    color: !!process.stdout.isTTY && !process.env.NO_COLOR,
    // A terminal that cannot move the cursor gets no bar.
    ...(process.env.TERM === 'dumb' ? {} : { progress: process.stderr }),
    drain: () => drainStream(process.stdout, STDOUT_QUEUE_MAX),
    signals: true,
  };
}

/**
 * Resolves once `stream` holds at most `max` bytes queued (at once when it does), or once it
 * closes or fails (its 'error' handler reports that).
 */
export function drainStream(stream: NodeJS.WritableStream & { writableLength: number; destroyed?: boolean }, max: number): Promise<void> {
  if (stream.writableLength <= max || stream.destroyed) return Promise.resolve();
  return new Promise((done) => {
    const end = () => {
      stream.off('drain', end);
      stream.off('close', end);
      stream.off('error', end);
      done();
    };
    stream.on('drain', end);
    stream.on('close', end);
    stream.on('error', end);
  });
}

/** The CLI's colors: markers that only its output boundary turns into SGR sequences (src/cli/terminal.ts). */
export function paintFor(io: IO): Paint {
  return io.color ? markPaint : PLAIN;
}

/**
 * Milliseconds of `--timeout SECONDS` left for the work itself: the timeout counts from the
 * command's start (`started`, ms since the epoch; the process's start for the real CLI), so loading
 * and instantiating the kernel are in it.
 */
export function timeLeft(seconds: number, started: number): number {
  return Math.max(0, seconds * 1000 - (Date.now() - started));
}

/** Longest line of an error message printed (characters). */
const MESSAGE_LINE_MAX = 1000;

/** A usage error as printed: `mbsim: error: …`, or as is when it already names a place. */
export function usageText(err: UsageError): string {
  const text = err.message.startsWith('mbsim') || /^\S+:\d+:\d+: /.test(err.message) ? err.message : `mbsim: error: ${err.message}`;
  // Whatever a message echoes (a parameter name, a path), no line of it floods the terminal.
  return text.split('\n').map((l) => (l.length > MESSAGE_LINE_MAX ? `${l.slice(0, MESSAGE_LINE_MAX)}… (${l.length.toLocaleString('en-US')} characters)` : l)).join('\n');
}

/** What a verb's registration gets from `main`. */
export interface VerbContext {
  /** The CLI's IO (already through the terminal-safe boundary). */
  io: IO;
  /** When the command started (ms since the epoch): `--timeout` counts from here. */
  started: number;
  /** Sets the exit code `main` returns. */
  exit(code: number): void;
}

/** A verb: adds its command, options and action to `program`. */
export type Verb = (program: Command, ctx: VerbContext) => void;
