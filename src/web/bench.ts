/**
 * Frame-rate benchmark of the explorer's timeline (Node side): builds the app (or uses a built
 * one), serves it, opens it in headless Chromium on the full/empty pipeline with K raised until
 * the run has at least 100,000 events, zooms to fit (every span visible: the worst case) and scrubs
 * the cursor across the whole run once per animation frame for a few seconds. Each frame redraws
 * the timeline and updates the inspector and the full/empty ring. Returns frames per second.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer } from './server/serve.js';

export interface BenchOptions {
  /** A built app (dist-web); absent: build into a temporary directory with Vite. */
  root?: string;
  /** At least this many events (default 100,000). */
  minEvents?: number;
  /** Seconds of scrubbing (default 3). */
  seconds?: number;
  /** Chromium executable (default /usr/bin/chromium, or $MBSIM_CHROMIUM). */
  chromium?: string;
  /** Receives details: events, first-view time, mean draw time. */
  log?: (line: string) => void;
}

function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    if (existsSync(join(dir, 'vite.config.ts'))) return dir;
    dir = dirname(dir);
  }
  return process.cwd();
}

interface Hooks {
  timeline: { fit(): void; setTime(t: number): void; renderNow(): number };
  model: { events: unknown[]; end: number } | null;
}

/** Bytes of a built explorer: every file, by kind, and all of them gzipped (as a server would send them). */
export interface BundleSize {
  total: number;
  gzip: number;
  js: number;
  css: number;
  html: number;
  other: number;
}

/** Sums the files under `root` (a built dist-web). */
export function bundleSize(root: string): BundleSize {
  const r: BundleSize = { total: 0, gzip: 0, js: 0, css: 0, html: 0, other: 0 };
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const f = join(dir, name);
      const st = statSync(f);
      if (st.isDirectory()) {
        walk(f);
        continue;
      }
      r.total += st.size;
      r.gzip += gzipSync(readFileSync(f)).length;
      const k = name.endsWith('.js') ? 'js' : name.endsWith('.css') ? 'css' : name.endsWith('.html') ? 'html' : 'other';
      r[k] += st.size;
    }
  };
  walk(root);
  return r;
}

/** Runs the benchmark; resolves to scrub frames per second. */
export async function benchScrubFps(opts: BenchOptions = {}): Promise<number> {
  const log = opts.log ?? (() => undefined);
  const minEvents = opts.minEvents ?? 100_000;
  const seconds = opts.seconds ?? 3;
  let root = opts.root;
  let tmp: string | null = null;
  if (!root) {
    const { build } = await import('vite');
    tmp = root = mkdtempSync(join(tmpdir(), 'mbsim-bench-'));
    await build({ configFile: join(repoRoot(), 'vite.config.ts'), logLevel: 'error', build: { outDir: root, emptyOutDir: true } });
  }
  const b = bundleSize(root);
  log(`bundle: ${b.total.toLocaleString('en-US')} bytes (${b.gzip.toLocaleString('en-US')} gzipped): JS ${b.js.toLocaleString('en-US')}, CSS ${b.css.toLocaleString('en-US')}, HTML ${b.html.toLocaleString('en-US')}, other ${b.other.toLocaleString('en-US')}`);
  const server = await startServer({ root, port: 0 });
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({
    executablePath: opts.chromium ?? process.env.MBSIM_CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-background-networking'],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
    // First view of the default example, from the production build: page load to the first run
    // shown (the worker's simulation included), fastest and median of 3 fresh pages.
    const views: number[] = [];
    for (let i = 0; i < 3; i++) {
      const p = i === 0 ? page : await browser.newPage({ viewport: { width: 1440, height: 1000 } });
      const t0 = Date.now();
      await p.goto(server.url);
      await p.waitForSelector('body[data-ready="1"]');
      views.push(Date.now() - t0);
      if (i > 0) await p.close();
    }
    views.sort((x, y) => x - y);
    log(`first view: ${views[0]} ms (median ${views[1]} ms of 3 page loads)`);
    let K = 1700;
    let events = 0;
    let page2 = page;
    for (;;) {
      await page2.close();
      page2 = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
      await page2.goto(`${server.url}#file=examples%2Fpipeline.mbk&set=K%3D${K}&tab=timeline`);
      await page2.waitForSelector('body[data-ready="1"]');
      events = await page2.evaluate(() => (window as unknown as { __mbsim: Hooks }).__mbsim.model?.events.length ?? 0);
      if (events >= minEvents || K > 1e6) break;
      K = Math.ceil(K * 1.25);
    }
    log(`pipeline K=${K}: ${events.toLocaleString('en-US')} events`);
    const r = await page2.evaluate((ms) => {
      const hooks = (window as unknown as { __mbsim: Hooks }).__mbsim;
      const tl = hooks.timeline;
      const end = hooks.model!.end;
      tl.fit();
      return new Promise<{ frames: number; elapsed: number; draw: number; worst: number }>((done) => {
        let frames = 0, draw = 0, worst = 0, start = -1;
        const frame = (now: number) => {
          if (start < 0) start = now;
          const p = ((now - start) / 2000) % 1;
          tl.setTime(end * (p < 0.5 ? 2 * p : 2 - 2 * p));
          const d = tl.renderNow();
          draw += d;
          worst = Math.max(worst, d);
          frames++;
          if (now - start < ms) requestAnimationFrame(frame);
          else done({ frames, elapsed: now - start, draw, worst });
        };
        requestAnimationFrame(frame);
      });
    }, seconds * 1000);
    const fps = (r.frames / r.elapsed) * 1000;
    log(`scrub: ${r.frames} frames in ${(r.elapsed / 1000).toFixed(2)} s = ${fps.toFixed(1)} fps; draw ${(r.draw / r.frames).toFixed(2)} ms mean, ${r.worst.toFixed(2)} ms worst`);
    return fps;
  } finally {
    await browser.close();
    await server.close();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  }
}
