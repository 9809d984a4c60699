/**
 * Shared set-up of the browser tests: builds the explorer once into a temporary directory with
 * Vite's build API, serves it with the explorer's own static server and drives Debian's Chromium
 * through playwright-core.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { build } from 'vite';
import { startServer, type RunningServer } from '../../src/web/server/serve.js';

export const REPO = resolve(__dirname, '..', '..');
export const CHROMIUM = process.env.MBSIM_CHROMIUM ?? '/usr/bin/chromium';
export const SHOTS = process.env.MBSIM_SHOTS ?? '/tmp/mbsim-shots';

/** Builds the app into a fresh temporary directory; returns it. */
export async function buildApp(): Promise<string> {
  const out = mkdtempSync(join(tmpdir(), 'mbsim-web-'));
  await build({ configFile: join(REPO, 'vite.config.ts'), logLevel: 'error', build: { outDir: out, emptyOutDir: true } });
  return out;
}

export interface Harness {
  root: string;
  server: RunningServer;
  browser: Browser;
  /** Messages of console errors and uncaught page errors, from every page opened through {@link open}. */
  errors: string[];
  open(hash?: string, base?: string): Promise<Page>;
  close(): Promise<void>;
}

export async function launch(): Promise<Harness> {
  const root = await buildApp();
  const server = await startServer({ root, port: 0 });
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-background-networking'] });
  const errors: string[] = [];
  const h: Harness = {
    root, server, browser, errors,
    async open(hash = '', base = server.url) {
      const page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
      page.on('console', (m) => {
        if (m.type() === 'error' && !/mbsim-file\.json|404/.test(m.text())) errors.push(m.text());
      });
      page.on('pageerror', (e) => errors.push(String(e)));
      page.on('dialog', (d) => {
        errors.push(`unexpected dialog: ${d.message()}`);
        void d.dismiss();
      });
      await page.goto(base + (hash ? `#${hash}` : ''));
      await page.waitForSelector('body[data-ready="1"]');
      return page;
    },
    async close() {
      await browser.close();
      await server.close();
      rmSync(root, { recursive: true, force: true });
    },
  };
  return h;
}
