/**
 * How the installed `mbsim` starts fast: its bundle (`dist/bin/cli.cjs`, one CommonJS file) runs
 * through V8's code cache. Compiling the bundle's functions is about half of what a start costs
 * beyond Node's own (`mbsim check` on a small sketch); with the cache V8 reads the compiled
 * functions instead. Node 20 keeps no such cache for modules (Node 22's `module.enableCompileCache`
 * does), so the command keeps its own, as a `vm.Script`'s cached data.
 *
 * The cache is written after the first run of each verb (so it holds the functions that verb ran)
 * into the user's cache folder (`$XDG_CACHE_HOME/mbsim`, `~/.cache/mbsim`, `%LOCALAPPDATA%\mbsim`
 * on Windows; `MBSIM_CACHE_DIR` names another; `NODE_DISABLE_COMPILE_CACHE` turns it off), one
 * file per bundle build, Node version, architecture and verb. V8 checks a cache against its own
 * version, flags and the source's length and rejects one that does not fit; the bundle's build id
 * (a hash of its text) in the file name keeps a rebuilt bundle from meeting an old cache. Whatever
 * goes wrong with the cache (missing, rejected, unreadable, a folder that cannot be written) only
 * means a slower start: the bundle is then compiled as any script is, and the cache written anew.
 *
 * Each write of a new cache (a new build, Node version or verb) also prunes the folder
 * ({@link pruneCaches}): other builds' caches not written for a week, the oldest beyond
 * {@link MAX_CACHE_FILES} files, and temporary files a killed process left.
 */
import { lstatSync, mkdirSync, opendirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { Script } from 'node:vm';

/** The folder of mbsim's code caches, or null when caching is off. */
export function cacheDir(env: NodeJS.ProcessEnv = process.env, platform: string = process.platform): string | null {
  if (env.NODE_DISABLE_COMPILE_CACHE) return null;
  if (env.MBSIM_CACHE_DIR) return env.MBSIM_CACHE_DIR;
  let base: string;
  try {
    base = platform === 'win32' ? env.LOCALAPPDATA || join(homedir(), 'AppData', 'Local') : env.XDG_CACHE_HOME || join(homedir(), '.cache');
  } catch {
    return null; // no home folder
  }
  return join(base, 'mbsim');
}

/** The name of a cache file: build id, Node version, architecture, verb. */
function cacheName(id: string, key: string): string {
  return `${id}-${process.version}-${process.arch}-${key.replace(/[^A-Za-z0-9_-]/g, '_')}.v8cache`;
}

/** Cache files (the names {@link cacheName} gives) and the temporary files they are written as. */
const CACHE_FILE = /^[A-Za-z0-9_]+-v\d+\.\d+\.\d+-[A-Za-z0-9_]+-[A-Za-z0-9_-]+\.v8cache(\.\d+\.tmp)?$/;
/** The most cache files the folder keeps (about 1.1 MB each; one per verb of a build). */
export const MAX_CACHE_FILES = 32;
/** Another build's cache not written for this long is removed. */
export const MAX_CACHE_AGE_MS = 7 * 24 * 3600 * 1000;
/** A temporary file this old is a killed writer's. */
const MAX_TMP_AGE_MS = 3600 * 1000;
/** The most folder entries one pruning looks at (a folder shared with other files stays cheap). */
const MAX_SCAN = 1000;

/**
 * Removes stale files from the cache folder `dir`: caches whose name does not start with `keep`
 * (other builds, Node versions or architectures) last written more than {@link MAX_CACHE_AGE_MS}
 * ago, then the oldest of those beyond {@link MAX_CACHE_FILES} files in all, and temporary files
 * older than an hour. Only regular files with a cache file's name are touched, at most
 * {@link MAX_SCAN} entries are looked at, and nothing is thrown: a file that cannot be removed
 * stays. Returns the names removed.
 */
export function pruneCaches(dir: string, keep: string, now = Date.now(), maxFiles = MAX_CACHE_FILES): string[] {
  const removed: string[] = [];
  const others: { name: string; mtime: number }[] = [];
  let total = 0;
  const remove = (name: string) => {
    try {
      rmSync(join(dir, name));
      removed.push(name);
      return true;
    } catch {
      return false;
    }
  };
  try {
    const d = opendirSync(dir);
    try {
      for (let i = 0; i < MAX_SCAN; i++) {
        const e = d.readSync();
        if (e === null) break;
        if (!CACHE_FILE.test(e.name)) continue;
        let mtime: number;
        try {
          const st = lstatSync(join(dir, e.name));
          if (!st.isFile()) continue;
          mtime = st.mtimeMs;
        } catch {
          continue;
        }
        if (e.name.endsWith('.tmp')) {
          if (now - mtime > MAX_TMP_AGE_MS) remove(e.name);
          continue;
        }
        total++;
        if (!e.name.startsWith(keep)) others.push({ name: e.name, mtime });
      }
    } finally {
      d.closeSync();
    }
  } catch {
    return removed;
  }
  others.sort((a, b) => a.mtime - b.mtime);
  for (const f of others) {
    if (now - f.mtime > MAX_CACHE_AGE_MS || total > maxFiles) {
      if (remove(f.name)) total--;
    }
  }
  return removed;
}

/** A CommonJS file run through the code cache. */
export interface Loaded {
  /** Its `module.exports`. */
  exports: Record<string, unknown>;
  /** Whether V8 took the cached code (false: compiled from the source). */
  cached: boolean;
  /** Writes the cache when there was none or V8 rejected it (call after the work: it holds what was compiled). Never throws. */
  save(): void;
}

/**
 * Runs the CommonJS file `file` (ASCII only; built with id `id`) through the code cache `key`.cache of
 * `dir` (null: no cache), as Node would run it: with `require`, `module`, `exports`,
 * `__filename` and `__dirname`.
 */
export function loadCommonJs(file: string, id: string, key: string, dir: string | null = cacheDir()): Loaded {
  // The bundle is ASCII (esbuild escapes every other character; scripts/bundle.mjs checks): read as
  // Latin-1 it is the same text, without UTF-8 decoding (~5 ms for the CLI's 1.4 MB).
  const source = readFileSync(file, 'latin1');
  const cacheFile = dir === null ? null : join(dir, cacheName(id, key));
  let cachedData: Buffer | undefined;
  if (cacheFile !== null) {
    try {
      cachedData = readFileSync(cacheFile);
    } catch {
      // none yet
    }
  }
  // Node's own CommonJS wrapper, so that line and column numbers in stack traces are the file's.
  const script = new Script(`(function (exports, require, module, __filename, __dirname) { ${source}\n})`, { filename: file, ...(cachedData ? { cachedData } : {}) });
  const cached = cachedData !== undefined && !script.cachedDataRejected;
  const module = { exports: {} as Record<string, unknown> };
  (script.runInThisContext() as (e: unknown, r: unknown, m: unknown, f: string, d: string) => void).call(module.exports, module.exports, createRequire(file), module, file, dirname(file));
  let saved = cached || cacheFile === null;
  return {
    exports: module.exports,
    cached,
    save() {
      if (saved) return;
      saved = true;
      try {
        const data = script.createCachedData();
        mkdirSync(dirname(cacheFile!), { recursive: true });
        // Written whole under a temporary name, then renamed: a reader never sees part of it.
        const tmp = `${cacheFile}.${process.pid}.tmp`;
        try {
          writeFileSync(tmp, data);
          renameSync(tmp, cacheFile!);
        } finally {
          rmSync(tmp, { force: true });
        }
        pruneCaches(dir!, `${id}-${process.version}-${process.arch}-`);
      } catch {
        // no cache this time: the next start compiles again
      }
    },
  };
}
