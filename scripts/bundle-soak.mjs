#!/usr/bin/env node
/**
 * Bundles the differential soak (`npm run fuzz`, test/support/soak.ts) with esbuild into one folder
 * that runs with plain Node 20 and no node_modules: `soak.js` (the parent and its shards),
 * `check-worker.js` (the entry of the parallel search's worker threads, which `--workers-every`
 * starts; src/check/parallel.ts finds it next to the chunks) and their shared chunks. For running a
 * long soak on another machine:
 *
 *   node scripts/bundle-soak.mjs [OUTDIR]      # default .soak/
 *   node OUTDIR/soak.js --kernels N --seed S --procs P [--seconds T]
 */
import { rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { nodeBundle } from './esbuild-node.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const outdir = resolve(process.argv[2] ?? `${root}.soak`);

rmSync(outdir, { recursive: true, force: true });
await build(nodeBundle(root, { soak: 'test/support/soak.ts', 'check-worker': 'src/check/worker-entry.ts' }, outdir));
console.log(`soak bundle written to ${outdir}`);
