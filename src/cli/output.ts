/**
 * The one way the CLI writes a file (`--trace FILE`, `--sarif FILE`): never clobbers what is at
 * the path with something else, never leaves a half-written or temporary file behind.
 *
 * What is at the path decides how it is written:
 * - nothing, or a regular file: the data goes to a temporary file in the same directory
 *   (`.NAME.tmp-PID-RANDOM`, NAME cut at 100 characters), which is then renamed over the path (atomic: a reader sees the old
 *   file or the new one, never a part). A replaced file keeps its permission bits.
 * - a symbolic link: followed; its target is written in place (the link stays a link).
 * - a FIFO or a character device (`/dev/stdout`, `/dev/null`, a terminal): written in place,
 *   streaming. A FIFO waits for its reader at most {@link FIFO_WAIT_MS} ms (then one line, exit 2,
 *   rather than blocking forever); a reader that closes it before the end is one line (EPIPE).
 * - `-`, or the file that is the process's standard output or error (`/dev/stdout`,
 *   `/proc/self/fd/2`, or the very file stdout is redirected to): the data goes through the CLI's
 *   own `out` / `err`, in order with the rest of its output (a second descriptor would write at
 *   its own offset and overwrite the report, or be overwritten by it).
 * - a directory, a block device, a socket, a missing directory or an unwritable place: an
 *   {@link OutputError} with one line (`cannot write PATH: REASON`), which the CLI reports with
 *   exit code 2.
 *
 * A temporary file is removed on every error and on SIGINT/SIGTERM/SIGHUP while it exists (a handler is
 * installed only for the duration of the write). The signal is then raised again, so the process
 * still ends as the signal asks, unless another listener of it decides (`check --watch`): then the
 * write stops at its next chunk with a {@link WriteInterrupted}, leaving the target as it was.
 */
import { closeSync, constants, fstatSync, lstatSync, openSync, readlinkSync, realpathSync, statSync, unlinkSync, type Stats } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { lazyBuiltin } from './builtins.js';
import { errnoText } from './errno.js';
import { echo } from './args.js';
import { UsageError } from './errors.js';

// Loaded by the first file written (not by a run that prints only).
const fsp = lazyBuiltin<typeof import('node:fs/promises')>('node:fs/promises');
const crypto = lazyBuiltin<typeof import('node:crypto')>('node:crypto');

/** A path the CLI cannot write: one line, exit code 2. */
export class OutputError extends UsageError {}

/** How {@link writeOutput} will write a path. */
export type OutputMode = 'stdout' | 'stderr' | 'replace' | 'in-place';

/** Where {@link writeOutput} sends data for `-` and for the process's own stdout / stderr. */
export interface OutputSinks {
  out(s: string): void;
  err(s: string): void;
}

/** UTF-16 code units written per chunk (the handler for a signal runs between chunks). */
const CHUNK = 1 << 20;

/** Why a path cannot be written, in words with the code (an output's ENOENT: its directory is missing). */
const reason = (err: unknown): string => errnoText(err, { ENOENT: 'no such directory' });

/**
 * Decides how `path` is written, without writing anything; throws {@link OutputError} for a path
 * that cannot be written (empty name, directory, block device, socket, missing directory). The CLI
 * calls it before a long run, so a bad path fails at once rather than after the work.
 */
export function outputMode(path: string): OutputMode {
  if (path.trim() === '') throw new OutputError('an output file needs a name');
  if (path === '-') return 'stdout';
  let st: Stats;
  try {
    st = lstatSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw new OutputError(`cannot write ${echo(path)}: ${reason(err)}`);
    let dir: Stats;
    try {
      dir = statSync(dirname(path));
    } catch (e) {
      throw new OutputError(`cannot write ${echo(path)}: ${reason(e)}`);
    }
    if (!dir.isDirectory()) throw new OutputError(`cannot write ${echo(path)}: ${reason({ code: 'ENOTDIR' })}`);
    return 'replace';
  }
  const target = st.isSymbolicLink() ? followed(path) : st;
  if (target === null) return 'in-place'; // a dangling link: opening it creates its target
  const std = standardStream(target);
  if (std) return std;
  if (st.isFile()) return 'replace';
  if (target.isDirectory()) throw new OutputError(`cannot write ${echo(path)}: it is a directory`);
  if (target.isBlockDevice()) throw new OutputError(`cannot write ${echo(path)}: it is a block device`);
  if (target.isSocket()) throw new OutputError(`cannot write ${echo(path)}: it is a socket`);
  return 'in-place';
}

/** 'stdout' or 'stderr' when `st` is the very file of descriptor 1 or 2 (same device and inode). */
function standardStream(st: Stats): 'stdout' | 'stderr' | null {
  for (const [fd, name] of [[1, 'stdout'], [2, 'stderr']] as const) {
    try {
      const s = fstatSync(fd);
      if (s.dev === st.dev && s.ino === st.ino && !st.isDirectory()) return name;
    } catch {
      // descriptor closed
    }
  }
  return null;
}

/** The stats of a link's target, or null when it dangles. */
function followed(path: string): Stats | null {
  try {
    return statSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new OutputError(`cannot write ${echo(path)}: ${reason(err)}`);
  }
}

/**
 * A write that SIGINT or SIGTERM stopped while the process goes on (another listener of the
 * signal, such as `check --watch`, decides how it ends): the target is left as it was, no
 * temporary file remains. The CLI stops without reporting it as an error.
 */
export class WriteInterrupted extends OutputError {}

/**
 * Writes `data` (UTF-8) to `path` as described in the module comment; `sinks` receive the data for
 * `-` and the process's own stdout / stderr. Resolves once the data is on disk (or handed to the
 * device); rejects with an {@link OutputError} (one line) when it cannot be written, with no
 * temporary file left, and with a {@link WriteInterrupted} when a signal stopped it.
 */
export async function writeOutput(path: string, data: string | Iterable<string>, sinks: OutputSinks, o: WriteOptions = {}): Promise<void> {
  const mode = outputMode(path);
  if (mode === 'stdout' || mode === 'stderr') {
    const sink = mode === 'stdout' ? sinks.out : sinks.err;
    if (typeof data === 'string') sink(data);
    else for (const chunk of data) sink(chunk);
    return;
  }
  if (refused) throw new WriteInterrupted(`${echo(path)} not written: stopped by ${refused}`);
  const w = track(path, mode === 'replace' ? tempName(path) : null);
  try {
    if (mode === 'in-place') await writeInPlace(w, data, o);
    else await replace(w, data);
  } catch (err) {
    if (err instanceof OutputError) throw err;
    if (w.signal) throw interrupted(w);
    // ENOENT from a directory that is there (a /proc or /sys file): it takes no new (temporary) file.
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' && isDirectory(dirname(path))) throw new OutputError(`cannot write ${echo(path)}: its directory accepts no new file, such as the temporary file written first (ENOENT)`);
    throw new OutputError(`cannot write ${echo(path)}: ${reason(err)}`);
  } finally {
    untrack(w);
  }
}

/** Whether `path` is a directory now. */
function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** Options of {@link writeOutput}. */
export interface WriteOptions {
  /**
   * How long (ms) to wait for a process to open a FIFO for reading (default
   * {@link FIFO_WAIT_MS}); then the write fails with one line instead of blocking forever.
   */
  fifoWaitMs?: number;
}

/** Longest wait (ms) for a reader of a FIFO output. */
export const FIFO_WAIT_MS = 30_000;
/** Interval (ms) between looks for a FIFO's reader. */
const FIFO_POLL_MS = 20;

/** One write in progress: its target, its temporary file (replace mode), and the signal that stopped it. */
interface LiveWrite {
  path: string;
  tmp: string | null;
  signal: NodeJS.Signals | null;
}

const interrupted = (w: LiveWrite) => new WriteInterrupted(`writing ${w.path} was interrupted by ${w.signal}; it is left as it was`);

/** Throws {@link WriteInterrupted} once a signal stopped `w`. */
function going(w: LiveWrite): void {
  if (w.signal) throw interrupted(w);
}

async function writeInPlace(w: LiveWrite, data: string | Iterable<string>, o: WriteOptions): Promise<void> {
  const fifo = await openFifoWriter(w, o.fifoWaitMs ?? FIFO_WAIT_MS);
  // O_TRUNC means nothing to a FIFO or a device; it empties a symlink's regular target first.
  const fh = await fsp().open(w.path, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC, 0o666);
  // The reader is there and our blocking descriptor holds the FIFO open: the probe may go.
  if (fifo !== null) closeSync(fifo);
  try {
    going(w);
    await writeChunks(w, fh, data);
  } finally {
    await fh.close();
  }
}

/**
 * For a FIFO at `w.path` (through links): waits up to `waitMs` for a reader, opening it without
 * blocking (ENXIO while nobody reads), and returns that descriptor, to be closed once a blocking
 * one is open (the reader never sees the writers drop to zero in between). Null for anything else.
 * Throws an {@link OutputError} when no reader comes, a {@link WriteInterrupted} on a signal.
 */
async function openFifoWriter(w: LiveWrite, waitMs: number): Promise<number | null> {
  let st: Stats;
  try {
    st = statSync(w.path);
  } catch {
    return null;
  }
  if (!st.isFIFO()) return null;
  const until = Date.now() + waitMs;
  for (;;) {
    going(w);
    try {
      return openSync(w.path, constants.O_WRONLY | constants.O_NONBLOCK);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENXIO') throw err;
    }
    if (Date.now() >= until) throw new OutputError(`cannot write ${w.path}: it is a FIFO and no process opened it for reading within ${(waitMs / 1000).toLocaleString('en-US')} s`);
    await new Promise((done) => setTimeout(done, FIFO_POLL_MS));
  }
}

/** `.NAME.tmp-PID-RANDOM` next to `path`. */
function tempName(path: string): string {
  // The name's first 100 characters only: a name near the file system's limit (255 bytes) must
  // not make the temporary name too long.
  return join(dirname(path), `.${basename(path).slice(0, 100)}.tmp-${process.pid}-${crypto().randomBytes(4).toString('hex')}`);
}

async function replace(w: LiveWrite, data: string | Iterable<string>): Promise<void> {
  const tmp = w.tmp!;
  let mode: number | undefined;
  try {
    mode = statSync(w.path).mode & 0o7777;
  } catch {
    mode = undefined;
  }
  const fh = await fsp().open(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o666);
  try {
    going(w);
    await writeChunks(w, fh, data);
    if (mode !== undefined) await fsp().chmod(tmp, mode);
    await fh.close();
    going(w);
    await fsp().rename(tmp, w.path);
    w.tmp = null;
  } catch (err) {
    await fh.close().catch(() => undefined);
    await fsp().unlink(tmp).catch(() => undefined);
    w.tmp = null;
    throw err;
  }
}

async function writeChunks(w: LiveWrite, fh: FileHandle, data: string | Iterable<string>): Promise<void> {
  if (typeof data !== 'string') {
    for (const chunk of data) await writeChunks(w, fh, chunk);
    return;
  }
  for (let i = 0; i < data.length;) {
    let end = Math.min(data.length, i + CHUNK);
    // Never split a surrogate pair between two chunks.
    if (end < data.length && (data.charCodeAt(end - 1) & 0xfc00) === 0xd800) end--;
    await writeAll(fh, Buffer.from(data.slice(i, end), 'utf8'));
    going(w);
    i = end;
  }
}

/**
 * Writes all of `buf`: a FIFO or a device may take part of a write (a pipe whose reader went away
 * returns the bytes it took; the next write fails with EPIPE), so the rest is written again.
 */
async function writeAll(fh: FileHandle, buf: Buffer): Promise<void> {
  for (let off = 0; off < buf.length;) {
    const { bytesWritten } = await fh.write(buf, off, buf.length - off);
    off += bytesWritten;
  }
}

/** Writes in progress. */
const live = new Set<LiveWrite>();

/**
 * The signals after which no temporary file stays: Ctrl-C, kill, and SIGHUP (the terminal or the
 * ssh session closed mid-write left a 120 MB `.out.json.tmp-…`).
 */
const CLEANUP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

function track(path: string, tmp: string | null): LiveWrite {
  if (live.size === 0) {
    for (const sig of CLEANUP_SIGNALS) process.on(sig, onSignal);
    process.on('exit', removeLive);
  }
  const w: LiveWrite = { path, tmp, signal: null };
  live.add(w);
  return w;
}

function untrack(w: LiveWrite): void {
  live.delete(w);
  if (live.size === 0) stopListening();
}

function stopListening(): void {
  for (const sig of CLEANUP_SIGNALS) process.off(sig, onSignal);
  process.off('exit', removeLive);
}

/** Removes the temporary file of every write in progress (synchronously: it runs from signal and exit handlers). */
function removeLive(): void {
  for (const w of live) {
    if (w.tmp === null) continue;
    try {
      unlinkSync(w.tmp);
    } catch {
      // not created yet, or already gone
    }
  }
}

/**
 * SIGINT / SIGTERM / SIGHUP during a write: every temporary file goes. When nobody else listens for the
 * signal, it is raised again, so the process ends as it would have without this handler; when
 * someone does (they decide how the process ends), each write stops at its next chunk with a
 * {@link WriteInterrupted} (its descriptor stays open until then: closing it under a pending
 * write would fail that write with EBADF).
 */
function onSignal(signal: NodeJS.Signals): void {
  removeLive();
  for (const w of live) w.signal ??= signal;
  if (process.listenerCount(signal) > 1) return;
  stopListening();
  live.clear();
  process.kill(process.pid, signal);
}

/** The signal after which {@link writeOutput} writes no file (null: it writes). */
let refused: NodeJS.Signals | null = null;

/**
 * For a process that handles `signal` itself and stops cleanly (`check --watch` on Ctrl-C): every
 * write in progress stops at its next chunk with a {@link WriteInterrupted}, its temporary file
 * removed, and every later {@link writeOutput} of a file is refused the same way (a FIFO's reader
 * is not awaited), until {@link resumeOutputs}.
 */
export function interruptOutputs(signal: NodeJS.Signals): void {
  refused = signal;
  removeLive();
  for (const w of live) w.signal ??= signal;
}

/** Undoes {@link interruptOutputs}: files are written again. */
export function resumeOutputs(): void {
  refused = null;
}

/** An input file of a command and how a message names it (`the kernel file being checked`). */
export type InputFile = readonly [path: string | undefined, what: string];

/**
 * The input files of a command on `kernelFile`: the kernel, the `.launch.json` beside a PTX
 * kernel, and the `--timing` file, each named for {@link refuseInput}.
 */
export function inputFiles(kernelFile: string | undefined, timing?: string, verb: 'checked' | 'run' = 'checked'): InputFile[] {
  const out: InputFile[] = [[kernelFile, `the kernel file being ${verb}`]];
  if (kernelFile !== undefined && /\.ptx$/i.test(kernelFile)) out.push([`${kernelFile}.launch.json`, 'the launch file of the kernel']);
  if (timing !== undefined) out.push([timing, 'the --timing file']);
  return out;
}

/**
 * Refuses output `path` when it is one of the command's `inputs` (the same file, through any
 * name or link): writing it would destroy what the command reads. Throws {@link OutputError}.
 */
export function refuseInput(path: string, inputs: readonly InputFile[]): void {
  if (path === '-') return;
  let a: Stats;
  try {
    a = statSync(path);
  } catch {
    return; // the output does not exist: it is no input
  }
  for (const [input, what] of inputs) {
    if (input === undefined) continue;
    let b: Stats;
    try {
      b = statSync(input);
    } catch {
      continue;
    }
    if (a.dev === b.dev && a.ino === b.ino) throw new OutputError(`cannot write ${echo(path)}: it is ${what} (${input}); choose another output path`);
  }
}

/**
 * Refuses output `path` of `flag` when it is the process's stdout (`-`, /dev/stdout,
 * /proc/self/fd/1, or any path to what fd 1 is) while the verb writes its report there too: two
 * documents concatenated on one stream are neither. Throws {@link OutputError}.
 */
export function refuseStdout(flag: string, path: string, reportOnStdout: boolean, instead = '--quiet to print no report'): void {
  if (!reportOnStdout || outputMode(path) !== 'stdout') return;
  throw new OutputError(`${flag} ${echo(path)} is the standard output, where the report is written: give ${flag} a file of its own (or ${instead})`);
}

/** Where `p` leads: its real path, or a dangling link's target, or `p` resolved. */
function linkTarget(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    try {
      return lstatSync(p).isSymbolicLink() ? resolve(dirname(p), readlinkSync(p)) : resolve(p);
    } catch {
      return resolve(p);
    }
  }
}

/** True when `a` and `b` name one file: the same path, or the same inode through links. */
export function sameFile(a: string, b: string): boolean {
  if (resolve(a) === resolve(b) || linkTarget(a) === linkTarget(b)) return true;
  try {
    const x = statSync(a);
    const y = statSync(b);
    return x.dev === y.dev && x.ino === y.ino;
  } catch {
    return false;
  }
}
