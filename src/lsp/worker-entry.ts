/**
 * The entry of the language server's check thread in the bundled CLI (scripts/bundle.mjs builds it
 * as `lsp-worker.js` next to the CLI's chunks): the bundle renames a shared chunk's exports, so the
 * thread loads this file, which exports {@link hazardWorkerMain} under its own name.
 */
export { hazardWorkerMain } from './check-thread.js';
