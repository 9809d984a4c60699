#!/usr/bin/env node
/**
 * The installed `mbsim` command (`dist/bin/mbsim.cjs`, built by scripts/bundle.mjs): runs the
 * bundled CLI `cli.cjs` next to it through the code cache (`code-cache.ts`) and writes the cache
 * after a run that had none. On Node 22 and later, Node's own compile cache serves the modules it
 * loads itself (the worker threads of `check --workers` and of `mbsim lsp`).
 */
import module from 'node:module';
import { fileURLToPath } from 'node:url';
import { loadCommonJs } from './code-cache.js';

/** The bundle's build id (a hash of cli.cjs), set by scripts/bundle.mjs. */
declare const MBSIM_CLI_ID: string;

try {
  (module as { enableCompileCache?: () => unknown }).enableCompileCache?.();
} catch {
  // a start without it
}
const argv = process.argv.slice(2);
// One cache per verb: each holds the functions its verb runs.
const verb = ['run', 'check', 'examples', 'decode', 'info', 'serve', 'lsp'].includes(argv[0] ?? '') ? argv[0]! : 'other';
const cli = loadCommonJs(fileURLToPath(new URL('./cli.cjs', import.meta.url)), MBSIM_CLI_ID, verb);
process.once('exit', () => cli.save());
(cli.exports.start as (argv: string[]) => void)(argv);
