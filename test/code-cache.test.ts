import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { cacheDir, loadCommonJs, MAX_CACHE_FILES, pruneCaches } from '../src/cli/code-cache.js';

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

describe('pruneCaches', () => {
  const DAY = 24 * 3600 * 1000;
  const now = Date.now();
  const v = `${process.version}-${process.arch}`;
  /** A file `name` in `folder` last written `age` ms ago. */
  function put(folder: string, name: string, age: number): void {
    writeFileSync(join(folder, name), 'x');
    utimesSync(join(folder, name), (now - age) / 1000, (now - age) / 1000);
  }

  test("removes other builds' caches older than a week and killed writers' temporary files; keeps this build's, fresh ones and every other file", () => {
    const folder = mkdtempSync(join(dir, 'prune-'));
    put(folder, `aaaa000000000000-${v}-check.v8cache`, 30 * DAY); // this build, old: kept
    put(folder, `bbbb000000000000-${v}-check.v8cache`, 8 * DAY); // another build, old: removed
    put(folder, `bbbb000000000000-v18.0.0-arm64-run.v8cache`, 9 * DAY); // another Node: removed
    put(folder, `cccc000000000000-${v}-check.v8cache`, 1 * DAY); // another build, fresh: kept
    put(folder, `cccc000000000000-${v}-check.v8cache.123.tmp`, 2 * 3600 * 1000); // a killed writer's: removed
    put(folder, `aaaa000000000000-${v}-run.v8cache.456.tmp`, 60 * 1000); // being written now: kept
    put(folder, 'notes.txt', 30 * DAY); // not a cache: kept
    put(folder, 'old.v8cache', 30 * DAY); // not a cache's name: kept
    mkdirSync(join(folder, `dddd000000000000-${v}-check.v8cache`)); // a folder: kept
    const removed = pruneCaches(folder, `aaaa000000000000-${v}-`, now);
    expect(removed.sort()).toEqual([`bbbb000000000000-${v}-check.v8cache`, 'bbbb000000000000-v18.0.0-arm64-run.v8cache', `cccc000000000000-${v}-check.v8cache.123.tmp`].sort());
    expect(readdirSync(folder).sort()).toEqual([
      `aaaa000000000000-${v}-check.v8cache`, `aaaa000000000000-${v}-run.v8cache.456.tmp`, `cccc000000000000-${v}-check.v8cache`,
      `dddd000000000000-${v}-check.v8cache`, 'notes.txt', 'old.v8cache',
    ].sort());
  });

  test(`keeps at most ${MAX_CACHE_FILES} caches: the oldest of other builds go first`, () => {
    const folder = mkdtempSync(join(dir, 'prune-'));
    for (let i = 0; i < 8; i++) put(folder, `aaaa000000000000-${v}-verb${i}.v8cache`, 10 * DAY);
    for (let i = 0; i < 40; i++) put(folder, `${String(i).padStart(4, '0')}000000000000-${v}-check.v8cache`, (40 - i) * 60 * 1000);
    const removed = pruneCaches(folder, `aaaa000000000000-${v}-`, now);
    expect(removed.sort()).toEqual(Array.from({ length: 16 }, (_, i) => `${String(i).padStart(4, '0')}000000000000-${v}-check.v8cache`));
    expect(readdirSync(folder)).toHaveLength(MAX_CACHE_FILES);
  });

  test('a missing folder, or a file in place of one: nothing removed, nothing thrown', () => {
    expect(pruneCaches(join(dir, 'no-such-folder'), 'x-')).toEqual([]);
    writeFileSync(join(dir, 'a-file'), '');
    expect(pruneCaches(join(dir, 'a-file'), 'x-')).toEqual([]);
  });

  test('the command prunes when it writes a new cache (a new build), not at a start that reads one', () => {
    const caches = join(dir, 'caches-prune');
    mkdirSync(caches);
    const stale = `eeee000000000000-${v}-check.v8cache`;
    put(caches, stale, 8 * DAY);
    expect(loadInChild('ffff000000000000', 'check', caches).cached).toBe(false);
    expect(readdirSync(caches)).toEqual([`ffff000000000000-${v}-check.v8cache`]);
    put(caches, stale, 8 * DAY);
    expect(loadInChild('ffff000000000000', 'check', caches).cached).toBe(true);
    expect(readdirSync(caches).sort()).toEqual([stale, `ffff000000000000-${v}-check.v8cache`].sort());
  }, 60_000);
});
