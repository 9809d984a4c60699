/**
 * `mbsim check --watch FILE`: checks the file, then again each time it is saved, until Ctrl-C.
 * Editors save in bursts (truncate + write, or write a temp file and rename it over the original),
 * so changes are debounced and the file's directory is watched (a rename replaces the watched
 * file's inode); a save that leaves the file unchanged is not checked again.
 */
import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { LIMITS } from '../lang/limits.js';
import { UsageError } from './errors.js';
import { inputProblem, readInput } from './input.js';

/** Quiet time after the last change before a recheck, in milliseconds. */
export const WATCH_DEBOUNCE_MS = 150;

/** What {@link watchFile} needs of its caller. */
export interface WatchOptions {
  /** Runs one check of the file and prints its report; returns the exit code (2: bad input). */
  check: () => Promise<number>;
  /** Where the "rechecking" separator lines go. */
  out: (s: string) => void;
  debounceMs?: number;
  /** Resolves when watching should stop (default: SIGINT or SIGTERM). */
  until?: Promise<void>;
}

/**
 * What the watched file holds now, read with the same guards as the first read (a regular file,
 * at most what a sketch may hold): its text; for a path that is no longer a readable file (a
 * directory, a link to a device), that problem's message, so that the check runs and reports it;
 * null while nothing is there (an editor's save in progress).
 */
export function readForWatch(path: string): string | null {
  if (inputProblem(path) === 'no such file') return null;
  try {
    return readInput(path, 'sketch file', LIMITS.fileChars * 4 + 4).text;
  } catch (err) {
    if (err instanceof UsageError) return `\u0000${err.message}`;
    throw err;
  }
}

function stopSignal(): Promise<void> {
  return new Promise((done) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      done();
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}

/**
 * Checks `file` now and after every save until `until` resolves. Returns the exit code of the last
 * check. A check that throws (a sketch error) is reported by `check` itself as exit code 2; the
 * watch goes on.
 */
export async function watchFile(file: string, o: WatchOptions): Promise<number> {
  const path = resolve(file);
  const name = basename(path);
  const read = () => readForWatch(path);
  let last = read();
  let code = await o.check();
  o.out(`\n-- watching ${file} (Ctrl-C to stop)`);
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> = Promise.resolve();
  const recheck = () => {
    timer = null;
    running = running.then(async () => {
      const now = read();
      if (now === null || now === last) return;
      last = now;
      o.out(`\n-- ${file} changed at ${new Date().toTimeString().slice(0, 8)}: checking again`);
      code = await o.check();
      o.out(`\n-- watching ${file} (Ctrl-C to stop)`);
    });
  };
  const watcher: FSWatcher = watch(dirname(path), (_event, changed) => {
    if (changed !== null && changed !== name) return;
    if (timer) clearTimeout(timer);
    timer = setTimeout(recheck, o.debounceMs ?? WATCH_DEBOUNCE_MS);
  });
  try {
    await (o.until ?? stopSignal());
  } finally {
    watcher.close();
    if (timer) clearTimeout(timer);
    await running;
  }
  return code;
}
