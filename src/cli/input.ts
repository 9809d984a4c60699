/**
 * The one way the CLI reads an input file (a sketch, a `--timing` file (`timing-file.ts`), every
 * re-read of `check --watch`): the path must name a regular file (a link is followed; a device such as
 * `/dev/zero`, a FIFO, a directory or a socket is refused by what it is, before anything is read),
 * at most `maxBytes` bytes are read whatever the file claims (it may grow while it is read), and a
 * UTF-8 byte-order mark at its start is dropped. Every failure is one {@link UsageError} line.
 */
import { closeSync, fstatSync, openSync, readSync, statSync, type Stats } from 'node:fs';
import { constants } from 'node:fs';
import { echo } from './args.js';
import { errnoText } from './errno.js';
import { UsageError } from './errors.js';

/** What a path is, in words (for "X is a character device"). */
export function fileKind(st: Stats): string {
  if (st.isDirectory()) return 'a directory';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isFIFO()) return 'a FIFO';
  if (st.isSocket()) return 'a socket';
  return st.isFile() ? 'a regular file' : 'not a regular file';
}


/** Why `path` cannot be read as an input file, or null when it names a regular file. */
export function inputProblem(path: string): string | null {
  let st: Stats;
  try {
    st = statSync(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === 'ENOENT' ? 'no such file' : errnoText(err);
  }
  return st.isFile() ? null : `it is ${fileKind(st)}, not a regular file`;
}

/** An input file: its text (without a leading BOM) and whether it was cut at `maxBytes`. */
export interface InputText {
  text: string;
  /** True when the file holds more than `maxBytes` bytes (only `maxBytes` were read). */
  truncated: boolean;
}

/**
 * Reads at most `maxBytes` bytes of the regular file `path` (see the module comment). `what`
 * names the file in messages (`timing file`). Opened without blocking and checked again once open,
 * so a FIFO or device swapped in after the check is refused too.
 */
export function readInput(path: string, what: string, maxBytes: number): InputText {
  const why = inputProblem(path);
  if (why) throw new UsageError(`cannot read ${what} ${echo(path)}: ${why}`);
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    throw new UsageError(`cannot read ${what} ${echo(path)}: ${errnoText(err)}`);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new UsageError(`cannot read ${what} ${echo(path)}: it is ${fileKind(st)}, not a regular file`);
    const buf = Buffer.alloc(Math.min(maxBytes + 1, Math.max(st.size + 1, 1 << 16)));
    let total = 0;
    for (;;) {
      if (total === buf.length) break;
      const n = readSync(fd, buf, total, buf.length - total, null);
      if (n <= 0) break;
      total += n;
    }
    const truncated = total > maxBytes;
    // A UTF-16 or UTF-32 file (Windows editors save "Unicode" so) would show as NULs and U+FFFD at 1:1.
    const bom = total >= 2 ? (buf[0] === 0xff && buf[1] === 0xfe ? (total >= 4 && buf[2] === 0 && buf[3] === 0 ? 'UTF-32' : 'UTF-16') : buf[0] === 0xfe && buf[1] === 0xff ? 'UTF-16' : total >= 4 && buf[0] === 0 && buf[1] === 0 && buf[2] === 0xfe && buf[3] === 0xff ? 'UTF-32' : null) : null;
    if (bom) throw new UsageError(`cannot read ${what} ${echo(path)}: it is ${bom} text (its byte order mark says so); mbsim reads UTF-8: save it as UTF-8`);
    let text = buf.subarray(0, Math.min(total, maxBytes)).toString('utf8');
    if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    return { text, truncated };
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw new UsageError(`cannot read ${what} ${echo(path)}: ${errnoText(err)}`);
  } finally {
    closeSync(fd);
  }
}
