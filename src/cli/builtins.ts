/**
 * Node's own modules that only some runs of the CLI use (the promise file API and random bytes of
 * an output file, V8's flags for a full garbage collection), taken when first used: loading them at
 * every start would cost milliseconds that `mbsim check` on a small sketch does not need.
 */
import { createRequire } from 'node:module';

const req = createRequire(import.meta.url);

/** A getter of Node's module `name` (`node:fs/promises`), which loads it on its first call. */
export function lazyBuiltin<T>(name: string): () => T {
  let mod: T | undefined;
  return () => (mod ??= req(name) as T);
}
