/**
 * `mbsim serve FILE.ptx` in a real browser (Chromium through playwright-core): the page opens the
 * served PTX with its launch, simulates it (timeline: one lane per warp), shows the PTX in the
 * editor, and its checker finds the planted twin's hang with the PTX line. A kernel that reads a
 * parameter without a value behind a branch (the server starts) shows the missing parameter as
 * missing input, with an input that re-translates the kernel with the value.
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { servedPtxLaunch } from '../../src/cli/ptx-load.js';
import { startServer, type RunningServer } from '../../src/web/server/serve.js';
import { LATE } from '../support/ptx-scalars.js';
import { buildApp, CHROMIUM, SHOTS } from './harness.js';

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
    expect(await page.locator('#view-sketch .lead').textContent()).toMatch(/^The PTX of the kernel \(docs\/PTX\.md\)/);

    const bug = await serve('test/fixtures/ptx/planted/tma_pipeline.expect_tx.ptx', 'planted.ptx');
    await page.goto(bug.url);
    await page.waitForSelector('body[data-ready="1"]');
    await expect.poll(() => page.locator('#ex-summary').textContent(), { timeout: 30_000 }).toMatch(/planted\.ptx/);
    await page.click('#tab-check');
    await page.getByRole('button', { name: 'Check every schedule' }).click();
    await expect.poll(() => page.locator('#check-verdict').textContent(), { timeout: 60_000 }).toMatch(/^Verdict: hang/);
    expect(await page.locator('#hazards li.hazard').first().textContent()).toMatch(/line \d+ \(tma_pipeline\.cu:\d+[^)]*\):\s+mbarrier\.try_wait\.parity/);
    expect(errors).toEqual([]);
  }, 180_000);

  test('a parameter read behind a branch without a value: the page names it, the line and the flag, and a value given there runs the kernel', async () => {
    const errors: string[] = [];
    const f = join(dir, 'late.ptx');
    writeFileSync(f, LATE);
    const s = await startServer({ root, port: 0, file: f, ptxLaunch: (text) => servedPtxLaunch(f, { param: { param_0: 64, param_1: 1 } }, text) });
    servers.push(s);
    const page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(s.url);
    await page.waitForSelector('body[data-ready="1"]');
    await expect.poll(() => page.locator('#verdict').textContent(), { timeout: 30_000 }).toBe('needs param_2 · stopped at line 19');
    const note = page.locator('#missing-param');
    expect(await note.locator('.missing-head').textContent()).toBe('Kernel parameter param_2 has no value.');
    expect(await note.textContent()).toContain('The kernel reads it at line 19, and a branch, an address or a count depends on it there');
    expect(await note.locator('code').textContent()).toBe('mbsim serve late.ptx --param param_2=VALUE');
    // The trap's generic diagnostic ("not modelled yet", "H200: not a hardware behaviour") is not repeated beside the note.
    expect(await page.locator('#run-info').textContent()).not.toContain('not modelled');
    mkdirSync(SHOTS, { recursive: true });
    await page.screenshot({ path: join(SHOTS, 'ptx-missing-param.png') });

    await page.click('#tab-check');
    await page.getByRole('button', { name: 'Check every schedule' }).click();
    await expect.poll(() => page.locator('#check-verdict').textContent(), { timeout: 60_000 })
      .toBe('No verdict: kernel parameter param_2 has no value, and a schedule reaches the read at line 19. Give it a value (the Timeline tab\'s note, or mbsim serve --param param_2=VALUE) and check again.');

    await page.click('#tab-timeline');
    await note.getByRole('button', { name: 'translate with these values' }).click();
    expect(await note.locator('.error').textContent()).toBe(' param_2: give an integer');
    await note.getByLabel('value of param_2').fill('2');
    await note.getByRole('button', { name: 'translate with these values' }).click();
    await expect.poll(() => page.locator('#verdict').textContent(), { timeout: 30_000 }).toMatch(/^ok · /);
    expect(await page.locator('#ex-summary').textContent()).toBe('late.ptx (PTX, translated for its launch: params param_0=64 param_1=1 param_2=2)');
    expect(await page.locator('#missing-param').count()).toBe(0);
    expect(errors).toEqual([]);
  }, 180_000);
});
