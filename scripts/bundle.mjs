#!/usr/bin/env node
/**
 * Bundles the `mbsim` CLI with esbuild into dist/bin/ (or the folder given):
 * - `cli.cjs`: the whole CLI in one CommonJS file (src/cli/start.ts and what it loads), which the
 *   command runs through V8's code cache (src/cli/code-cache.ts): one file to read and no module
 *   graph to resolve at start, and compiled code read from the cache instead of compiled again.
 *   What a verb loads on demand (the sketch parser, the checker) is evaluated only when that verb runs.
 * - `lsp.cjs` and `serve.cjs`: the language server of `mbsim lsp` and the explorer's server of
 *   `mbsim serve`, each with what it uses, which the CLI requires when that verb runs (esbuild-node.mjs's
 *   `splitVerbs`): not in `cli.cjs`, which every command reads.
 * - `mbsim.cjs`: the executable (package.json's `bin`, src/cli/bundle-bin.ts), which loads `cli.cjs`
 *   with the bundle's build id, a hash of its text. CommonJS as well: Node starts a CommonJS main
 *   module without setting up its ES module loader (~2 ms).
 * - `check-worker.js` (the entry of the parallel search's worker threads), `lsp-worker.js` (the
 *   entry of the language server's check thread) and `check-thread.js` (the thread of a long
 *   `mbsim check`, which Ctrl-C stops: src/cli/check-thread.ts), ES modules, and the chunks they share.
 * Dependencies are bundled too.
 *
 * Run by `npm run build` after `tsc`; `node scripts/bundle.mjs` alone rebuilds the bundle.
 * The files sit in dist/bin/ itself, two levels below the package root, as the modules of
 * dist/cli/ do: src/cli/load.ts and src/web/server/serve.ts find examples/ and dist-web/ from there.
 */
import { createHash } from 'node:crypto';
import { chmodSync, readFileSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { commonJsBundle, nodeBundle, splitVerbs, VERB_FILES } from './esbuild-node.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const outdir = resolve(process.argv[2] ?? `${root}dist/bin`);
// Identifiers too: a smaller file to read at every start (1.08 MB -> 0.80 MB for cli.cjs; ~10 M fewer
// instructions per start). Names in messages are data, never a function's or class's name.
const minify = { minifyWhitespace: true, minifySyntax: true, minifyIdentifiers: true, legalComments: 'none' };

rmSync(outdir, { recursive: true, force: true });
await build({ ...nodeBundle(root, { 'check-worker': 'src/check/worker-entry.ts', 'lsp-worker': 'src/lsp/worker-entry.ts', 'check-thread': 'src/cli/check-thread-worker.ts' }, outdir), ...minify });
await build({ ...commonJsBundle(root, 'src/cli/start.ts', `${outdir}/cli.cjs`, [splitVerbs(root)]), ...minify });
for (const [entry, out] of Object.entries(VERB_FILES)) await build({ ...commonJsBundle(root, entry, `${outdir}/${out}`), ...minify });
const cli = readFileSync(`${outdir}/cli.cjs`);
// The command reads it as Latin-1 (src/cli/code-cache.ts): it must be ASCII, as esbuild writes it.
if (cli.some((b) => b > 0x7f)) throw new Error('dist/bin/cli.cjs is not ASCII: src/cli/code-cache.ts reads it as Latin-1');
const id = createHash('sha256').update(cli).digest('hex').slice(0, 16);
const bin = commonJsBundle(root, 'src/cli/bundle-bin.ts', `${outdir}/mbsim.cjs`);
await build({ ...bin, define: { ...bin.define, MBSIM_CLI_ID: JSON.stringify(id) }, ...minify });
chmodSync(`${outdir}/mbsim.cjs`, 0o755);
