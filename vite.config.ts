/**
 * Vite configuration of the mbsim explorer (src/web). `npx vite` serves it for development;
 * `npx vite build` writes the static app to dist-web/ with relative asset paths, so any static
 * file server (or `mbsim serve`) can host it.
 */
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const repo = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root: fileURLToPath(new URL('./src/web', import.meta.url)),
  base: './',
  publicDir: false,
  logLevel: 'warn',
  build: {
    outDir: fileURLToPath(new URL('./dist-web', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    chunkSizeWarningLimit: 2000,
  },
  // The engine's worker (src/web/worker.ts) is an ES module worker: it shares chunks with the page.
  worker: { format: 'es' },
  server: { port: 5177, strictPort: false, fs: { allow: [repo] } },
  preview: { port: 5177 },
});
