#!/usr/bin/env node
/**
 * Bundles the `mbsim` CLI with esbuild into dist/bin/: `mbsim.js` (the executable, package.json's
 * `bin`), `check-worker.js` (the entry of the parallel search's worker threads), `lsp-worker.js`
 * (the entry of the language server's check thread) and the chunks they
 * share. Code splitting keeps what a verb loads on demand (the sketch parser, the checker, the
 * language server of `mbsim lsp`, the explorer's server) in chunks of their own, so `mbsim check` does not pay for the simulator's
 * reports nor `mbsim decode` for the parser. Dependencies are bundled too: one file per chunk
 * instead of hundreds of ES modules to resolve at start.
 *
 * Run by `npm run build` after `tsc`; `node scripts/bundle.mjs` alone rebuilds the bundle.
 * The chunks sit in dist/bin/ itself, two levels below the package root, as the modules of
 * dist/cli/ do: src/cli/load.ts and src/web/server/serve.ts find examples/ and dist-web/ from there.
 */
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { nodeBundle } from './esbuild-node.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const outdir = `${root}dist/bin`;

rmSync(outdir, { recursive: true, force: true });
await build({
  ...nodeBundle(root, { mbsim: 'src/cli/bin.ts', 'check-worker': 'src/check/worker-entry.ts', 'lsp-worker': 'src/lsp/worker-entry.ts' }, outdir),
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: 'none',
});
