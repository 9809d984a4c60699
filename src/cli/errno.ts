/**
 * What a failed file-system call means, in words: the CLI never prints a bare errno code
 * (`EACCES`) for a path it cannot read or write. The code follows in parentheses, for searching.
 */
import { getSystemErrorMap } from 'node:util';

/** The words for the codes a path met on the command line may give (else the system's own). */
const TEXT: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  ENOENT: 'no such file or directory',
  EISDIR: 'it is a directory',
  ENOTDIR: 'a part of the path before the name is not a directory',
  ELOOP: 'a loop of symbolic links',
  ENAMETOOLONG: 'the name is too long',
  EROFS: 'the file system is read-only',
  ENOSPC: 'no space left on the device',
  EDQUOT: 'the disk quota is exceeded',
  EFBIG: 'the file would be too large',
  EMFILE: 'too many open files',
  ENFILE: 'too many open files in the system',
  EIO: 'an input/output error',
  EBUSY: 'the device or file is busy',
  ETXTBSY: 'it is a program being run',
  ENXIO: 'no such device or address',
  ENODEV: 'no such device',
  EINVAL: 'the file does not accept writes of this kind',
  EEXIST: 'a file of that name appeared meanwhile',
  EXDEV: 'it is on another file system',
  EAGAIN: 'the device is not ready (it would block)',
  EPIPE: 'the reader closed it before the end',
  ESPIPE: 'it cannot be written at an offset',
  EOPNOTSUPP: 'the file system does not support it',
  ENOTSUP: 'the file system does not support it',
};

/**
 * A failure of a file-system call in words: `permission denied (EACCES)`; an error with no code
 * gives its message. `codeText` overrides the words of some codes (`ENOENT` of an output path:
 * its directory is missing).
 */
export function errnoText(err: unknown, codeText: Record<string, string> = {}): string {
  const e = err as NodeJS.ErrnoException | null | undefined;
  const code = typeof e?.code === 'string' ? e.code : undefined;
  if (code === undefined) return String((e as Error | undefined)?.message ?? err);
  const words = codeText[code] ?? TEXT[code] ?? systemText(e!.errno);
  return words ? `${words} (${code})` : `error ${code}`;
}

/** The system's description of a (negative) errno, e.g. 'no such file or directory'. */
function systemText(errno: number | undefined): string | undefined {
  if (typeof errno !== 'number') return undefined;
  try {
    return getSystemErrorMap().get(errno)?.[1];
  } catch {
    return undefined;
  }
}
