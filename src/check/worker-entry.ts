/**
 * The entry of the parallel search's worker threads in the bundled CLI (scripts/bundle.mjs builds
 * it as `check-worker.js` next to the CLI's chunks): the bundle renames a shared chunk's exports,
 * so the workers load this file, which exports {@link workerMain} under its own name.
 */
export { workerMain } from './par-worker.js';
