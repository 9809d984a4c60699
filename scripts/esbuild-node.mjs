/**
 * The esbuild options both bundles of the project share (scripts/bundle.mjs for the CLI,
 * scripts/bundle-soak.mjs for the differential soak): ES modules for Node 20, code split into
 * chunks next to the entries, and a `require` for the dependencies written as CommonJS
 * (commander, cli-progress), which call it for Node's own modules.
 */
export function nodeBundle(root, entryPoints, outdir) {
  return {
    absWorkingDir: root,
    entryPoints,
    outdir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    chunkNames: 'chunk-[hash]',
    logLevel: 'warning',
    banner: { js: "import { createRequire as __mbsimRequire } from 'node:module'; const require = __mbsimRequire(import.meta.url);" },
  };
}
