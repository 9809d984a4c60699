/**
 * `mbsim serve FILE.ptx` in a real browser (Chromium through playwright-core): the page opens the
 * served PTX with its launch, simulates it (timeline: one lane per warp), shows the PTX in the
 * editor, and its checker finds the planted twin's hang with the PTX line.
 */
import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { servedPtxLaunch } from '../../src/cli/ptx-load.js';
import { startServer, type RunningServer } from '../../src/web/server/serve.js';
import { buildApp, CHROMIUM } from './harness.js';

const haveChromium = existsSync(CHROMIUM);
if (process.env.CI && !haveChromium) throw new Error(`Chromium not found at ${CHROMIUM}`);

describe.skipIf(!haveChromium)('the explorer on a served PTX file', () => {
  let root: string;
  let browser: Browser;
  const servers: RunningServer[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'mbsim-ptx-web-'));
  const serve = async (from: string, name: string) => {
    const f = join(dir, name);
    copyFileSync(from, f);
    copyFileSync(`${from}.launch.json`, `${f}.launch.json`);
    const s = await startServer({ root, port: 0, file: f, ptxLaunch: (text) => servedPtxLaunch(f, {}, text) });
    servers.push(s);
    return s;
  };
  beforeAll(async () => {
    root = await buildApp();
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-background-networking'] });
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    for (const s of servers) await s.close();
    rmSync(root, { recursive: true, force: true });
    rmSync(dir, { recursive: true, force: true });
  });

  test('the pipeline simulates (a timeline lane per warp) and the PTX is in the editor; its planted twin hangs in the checker', async () => {
    const errors: string[] = [];
    const s = await serve('test/fixtures/ptx/tma_pipeline.ptx', 'pipe.ptx');
    const page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(s.url);
    await page.waitForSelector('body[data-ready="1"]');
    await expect.poll(() => page.locator('#ex-summary').textContent(), { timeout: 30_000 }).toMatch(/pipe\.ptx \(PTX, translated for its launch: kernel tma_pipeline, block 128/);
    await expect.poll(() => page.locator('#verdict').textContent(), { timeout: 30_000 }).toMatch(/^ok · /);
    const lanes = await page.evaluate(() => (window as unknown as { __mbsim: { model: { spanLanes: { label?: string }[] } } }).__mbsim.model.spanLanes.map((l) => l.label ?? ''));
    expect(lanes.join(' ')).toMatch(/tma_pipeline\.w0.*tma_pipeline\.w3/);
    await page.click('#tab-sketch');
    await expect.poll(() => page.locator('#editor-status').textContent(), { timeout: 10_000 }).toBe('✓ translates: kernel tma_pipeline');
    expect(await page.locator('.cm-content').textContent()).toContain('.entry');

    const bug = await serve('test/fixtures/ptx/planted/tma_pipeline.expect_tx.ptx', 'planted.ptx');
    await page.goto(bug.url);
    await page.waitForSelector('body[data-ready="1"]');
    await expect.poll(() => page.locator('#ex-summary').textContent(), { timeout: 30_000 }).toMatch(/planted\.ptx/);
    await page.click('#tab-check');
    await page.getByRole('button', { name: 'run checker' }).click();
    await expect.poll(() => page.locator('#check-verdict').textContent(), { timeout: 60_000 }).toMatch(/^Verdict: hang/);
    expect(await page.locator('#hazards li.hazard').first().textContent()).toMatch(/line \d+:\s+mbarrier\.try_wait\.parity/);
    expect(errors).toEqual([]);
  }, 180_000);
});
