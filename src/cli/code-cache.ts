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
 */
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
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
  const cacheFile = dir === null ? null : join(dir, `${id}-${process.version}-${process.arch}-${key.replace(/[^A-Za-z0-9_-]/g, '_')}.v8cache`);
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
      } catch {
        // no cache this time: the next start compiles again
      }
    },
  };
}
