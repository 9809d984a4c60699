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
  /**
   * Runs one check of the file and prints its report; returns the exit code (2: bad input), or
   * null when Ctrl-C stopped it before its end (its output files not written).
   */
  check: () => Promise<number | null>;
  /**
   * The other input files of the check (a PTX kernel's `.launch.json`): a change to one, its
   * creation or its removal, checks again too.
   */
  inputs?: string[];
  /** Where the "rechecking" separator lines go. */
  out: (s: string) => void;
  debounceMs?: number;
  /** Resolves when watching should stop (default: SIGINT or SIGTERM). */
  until?: Promise<void>;
  /** Called with the first SIGINT or SIGTERM (without `until`), before the check in progress ends. */
  onStop?: (signal: NodeJS.Signals) => void;
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

/**
 * The first SIGINT or SIGTERM: calls `onStop`, resolves `stopped`. The listeners stay until `release`, so an
 * output file being written meanwhile stops cleanly (src/cli/output.ts leaves the process to its
 * listeners); a second signal before then ends the process as the signal asks.
 */
function stopSignal(onStop?: (signal: NodeJS.Signals) => void): { stopped: Promise<void>; release: () => void } {
  let seen = false;
  let done!: () => void;
  const stopped = new Promise<void>((d) => (done = d));
  const release = () => {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  };
  const onSignal = (signal: NodeJS.Signals) => {
    if (!seen) {
      seen = true;
      onStop?.(signal);
      done();
      return;
    }
    release();
    process.kill(process.pid, signal);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return { stopped, release };
}

/**
 * Checks `file` now and after every save until `until` resolves. Returns the exit code of the last
 * check that completed (a check stopped by Ctrl-C does not count). A check that throws (a sketch
 * error) is reported by `check` itself as exit code 2; the watch goes on.
 */
export async function watchFile(file: string, o: WatchOptions): Promise<number> {
  const path = resolve(file);
  const others = [...new Set((o.inputs ?? []).map((f) => resolve(f)))].filter((f) => f !== path);
  // Every input, by directory: the directory is watched (a rename replaces the file's inode).
  const names = new Map<string, Set<string>>();
  for (const f of [path, ...others]) {
    const d = dirname(f);
    if (!names.has(d)) names.set(d, new Set());
    names.get(d)!.add(basename(f));
  }
  // The kernel file's text and every other input's (absent: none): a change to any is a change.
  const read = (): string | null => {
    const main = readForWatch(path);
    if (main === null || !others.length) return main;
    return JSON.stringify([main, ...others.map((f) => readForWatch(f))]);
  };
  let last = read();
  // The signal listeners come after the first check: Ctrl-C during it ends the process at once, as
  // for a check without --watch (null, a first check stopped before its end, is incomplete: 3).
  let code = (await o.check()) ?? 3;
  o.out(`\n-- watching ${file} (Ctrl-C to stop)`);
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> = Promise.resolve();
  const recheck = () => {
    timer = null;
    running = running.then(async () => {
      const now = read();
      if (now === null || now === last) return;
      last = now;
      o.out(`\n-- ${others.length ? `${file} or its inputs` : file} changed at ${new Date().toTimeString().slice(0, 8)}: checking again`);
      const result = await o.check();
      if (result === null) return;
      code = result;
      o.out(`\n-- watching ${file} (Ctrl-C to stop)`);
    });
  };
  const watchers: FSWatcher[] = [...names].map(([d, files]) => watch(d, (_event, changed) => {
    if (changed !== null && !files.has(changed)) return;
    if (timer) clearTimeout(timer);
    timer = setTimeout(recheck, o.debounceMs ?? WATCH_DEBOUNCE_MS);
  }));
  const signals = o.until ? null : stopSignal(o.onStop);
  try {
    await (o.until ?? signals!.stopped);
  } finally {
    for (const w of watchers) w.close();
    if (timer) clearTimeout(timer);
    await running.finally(() => signals?.release());
  }
  return code;
}
