/**
 * A fifth hostile trial: errno codes in words, the hang explanation and the report of a run within
 * --max-memory / --timeout, `check --watch` on every input file, the library's arguments checked.
 */
import { describe, expect, test } from 'vitest';
import { errnoText } from '../src/cli/errno.js';
import { outputMode, OutputError } from '../src/cli/output.js';

describe('errno codes in words', () => {
  test('errnoText: the words, then the code (it printed EACCES, ENOENT, EISDIR bare)', () => {
    const e = (code: string, errno?: number) => Object.assign(new Error(`x ${code}`), { code, ...(errno !== undefined ? { errno } : {}) });
    expect(errnoText(e('EACCES'))).toBe('permission denied (EACCES)');
    expect(errnoText(e('EROFS'))).toBe('the file system is read-only (EROFS)');
    expect(errnoText(e('EISDIR'))).toBe('it is a directory (EISDIR)');
    expect(errnoText(e('ENOENT'), { ENOENT: 'no such directory' })).toBe('no such directory (ENOENT)');
    expect(errnoText(e('ECONNRESET', -104))).toBe('connection reset by peer (ECONNRESET)');
    expect(errnoText(new Error('plain'))).toBe('plain');
  });

  test('an output under a regular file: ENOTDIR in words', () => {
    expect(() => outputMode('package.json/x.json')).toThrow(OutputError);
    expect(() => outputMode('package.json/x.json')).toThrow('cannot write package.json/x.json: a part of the path before the name is not a directory (ENOTDIR)');
    expect(() => outputMode('/no-such-dir-mbsim/x.json')).toThrow('cannot write /no-such-dir-mbsim/x.json: no such directory (ENOENT)');
  });
});
