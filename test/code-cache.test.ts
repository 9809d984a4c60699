import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { cacheDir, loadCommonJs } from '../src/cli/code-cache.js';

/** The code cache of the installed command (src/cli/code-cache.ts): a faster start, never another result. */
const dir = mkdtempSync(join(tmpdir(), 'mbsim-code-cache-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const file = join(dir, 'mod.cjs');
writeFileSync(file, `const path = require('node:path');
exports.answer = () => 6 * 7;
exports.where = () => [path.basename(__filename), path.basename(__dirname), typeof module.exports];
exports.line = () => new Error('here').stack.split('\\n')[1];
`);

/**
 * One load in a fresh process, as the command does it (within one process V8 would find the
 * script in its own compilation cache and never look at the cached data).
 */
function loadInChild(id: string, key: string, caches: string | null): { cached: boolean; answer: number } {
  const code = `import { loadCommonJs } from ${JSON.stringify(new URL('../src/cli/code-cache.ts', import.meta.url).href)};
const l = loadCommonJs(${JSON.stringify(file)}, ${JSON.stringify(id)}, ${JSON.stringify(key)}, ${JSON.stringify(caches)});
console.log(JSON.stringify({ cached: l.cached, answer: l.exports.answer() }));
l.save();`;
  const r = spawnSync(process.execPath, ['--import', new URL('./support/ts-register.mjs', import.meta.url).href, '--input-type=module', '-e', code], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout) as { cached: boolean; answer: number };
}

describe('loadCommonJs', () => {
  test('runs the file as Node would', () => {
    const l = loadCommonJs(file, 'id1', 'check', null);
    expect((l.exports.answer as () => number)()).toBe(42);
    expect((l.exports.where as () => unknown)()).toEqual(['mod.cjs', dir.split('/').pop(), 'object']);
    // Stack traces name the file and its own line.
    expect((l.exports.line as () => string)()).toContain(`${file}:4:`);
  });

  test('writes the cache once the work is done; the next process takes it; a cache V8 rejects is compiled past and written anew', () => {
    const caches = join(dir, 'caches');
    expect(loadInChild('id1', 'check', caches)).toEqual({ cached: false, answer: 42 });
    const files = readdirSync(caches);
    expect(files).toEqual([`id1-${process.version}-${process.arch}-check.v8cache`]);
    expect(loadInChild('id1', 'check', caches)).toEqual({ cached: true, answer: 42 });
    expect(readdirSync(caches)).toEqual(files);
    // Another build id or verb has its own file.
    expect(loadInChild('id2', 'check', caches).cached).toBe(false);
    expect(loadInChild('id1', 'run', caches).cached).toBe(false);
    expect(readdirSync(caches)).toHaveLength(3);
    // Garbage in place of a cache: rejected, the file runs, and a good cache replaces it.
    writeFileSync(join(caches, files[0]!), 'not a code cache at all');
    expect(loadInChild('id1', 'check', caches)).toEqual({ cached: false, answer: 42 });
    expect(loadInChild('id1', 'check', caches)).toEqual({ cached: true, answer: 42 });
  }, 60_000);

  test('no cache folder (off), or one that cannot be made: the file runs, nothing is written, nothing thrown', () => {
    const off = loadCommonJs(file, 'id1', 'check', null);
    expect(off.cached).toBe(false);
    expect((off.exports.answer as () => number)()).toBe(42);
    off.save();
    writeFileSync(join(dir, 'plain-file'), '');
    const blocked = loadCommonJs(file, 'id1', 'check', join(dir, 'plain-file', 'sub'));
    expect(blocked.cached).toBe(false);
    expect(() => blocked.save()).not.toThrow();
  });
});

describe('cacheDir', () => {
  test('the user cache folder per platform, MBSIM_CACHE_DIR, and off with NODE_DISABLE_COMPILE_CACHE', () => {
    expect(cacheDir({ XDG_CACHE_HOME: '/x/cache' }, 'linux')).toBe(join('/x/cache', 'mbsim'));
    expect(cacheDir({ LOCALAPPDATA: 'C:\\\\Users\\\\u\\\\AppData\\\\Local' }, 'win32')).toBe(join('C:\\\\Users\\\\u\\\\AppData\\\\Local', 'mbsim'));
    expect(cacheDir({}, 'linux')).toMatch(/[\\\\/]\.cache[\\\\/]mbsim$/);
    expect(cacheDir({ MBSIM_CACHE_DIR: '/somewhere' }, 'linux')).toBe('/somewhere');
    expect(cacheDir({ NODE_DISABLE_COMPILE_CACHE: '1', MBSIM_CACHE_DIR: '/somewhere' }, 'linux')).toBeNull();
  });
});
