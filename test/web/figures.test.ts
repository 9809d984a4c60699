/**
 * The chapter's figures drawn live, in Chromium: the full/empty cycle of one stage with its arrows
 * lit as the cursor reaches each handoff, the moment both completion conditions hold before a
 * phase flips, the timeline's barrier-event stepping, wait starts as events, the wheel leaving the
 * page's scroll alone, the arrow keys after a tab click, canvas labels of 12 px or more, a hang
 * explained by a static finding, static findings without a replay, a long simulation's progress
 * and Cancel, clamped stage counts, a load without a failed request, and screenshots of every view
 * at 1400×900 and 800×600 (written to the screenshot folder, not to the repository).
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { CHROMIUM, launch, SHOTS, type Harness } from './harness.js';

const haveChromium = existsSync(CHROMIUM);
let H: Harness;
let page: Page;
const DIR = join(SHOTS, 'views');

const settled = (p: Page) => p.waitForSelector('body[data-busy="0"]', { state: 'attached' });
const readout = (p: Page) => p.locator('#tl-readout').textContent();
const curEvent = (p: Page) => p.locator('#cur-event').textContent();
async function pick(p: Page, value: string): Promise<void> {
  await p.selectOption('#example', value);
  await settled(p);
}

describe.skipIf(!haveChromium)('the chapter\'s figures in Chromium', () => {
  /** Every response of 400 or more, and every failed request, of the pages opened here. */
  const failed: string[] = [];
  beforeAll(async () => {
    mkdirSync(DIR, { recursive: true });
    H = await launch();
    const ctx = H.browser;
    void ctx;
    page = await H.browser.newPage({ viewport: { width: 1400, height: 900 } });
    page.on('response', (r) => {
      if (r.status() >= 400) failed.push(`${r.status()} ${r.url()}`);
    });
    page.on('requestfailed', (r) => failed.push(`failed ${r.url()}`));
    page.on('pageerror', (e) => H.errors.push(String(e)));
    // Records the font of every canvas text drawn (the labels must be 12 px or more).
    await page.addInitScript(() => {
      const w = window as unknown as { __fonts: Set<string> };
      w.__fonts = new Set();
      const orig = CanvasRenderingContext2D.prototype.fillText;
      CanvasRenderingContext2D.prototype.fillText = function (this: CanvasRenderingContext2D, ...a: Parameters<typeof orig>) {
        w.__fonts.add(this.font);
        return orig.apply(this, a);
      };
    });
    await page.goto(H.server.url);
    await page.waitForSelector('body[data-ready="1"]');
  }, 60_000);
  afterAll(async () => {
    await H?.close();
  });

  test('the first load asks for nothing that is not there (no 404: icon, probe file)', async () => {
    await page.waitForLoadState('networkidle');
    expect(failed).toEqual([]);
    expect(await page.locator('link[rel="icon"]').getAttribute('href')).toMatch(/^data:image\/svg\+xml,/);
  });

  test('figure 3: the consumer\'s wait begins as an event; barrier events only steps through arrivals, bytes, the phase and the waits', async () => {
    await pick(page, 'file:examples/mechanism.mbk');
    // A click on the tab hands the arrow keys to the timeline.
    await page.click('#tab-mechanism');
    await page.click('#tab-timeline');
    await page.keyboard.press('Home');
    await page.keyboard.press('ArrowRight');
    await expect.poll(() => readout(page)).toMatch(/event 1 of 23$/);
    expect(await page.locator('#tab-timeline').getAttribute('aria-selected')).toBe('true');
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('ArrowRight');
    await expect.poll(() => curEvent(page)).toBe('t = 0: consumer: begins waiting on bar[0] for parity 0 (the barrier is in phase 0, parity 0): blocks');
    await page.check('#tl-bar-only');
    await page.locator('.tl-canvas').focus();
    await page.keyboard.press('Home');
    const seen: string[] = [];
    for (let i = 0; i < 6; i++) {
      await page.keyboard.press('ArrowRight');
      await expect.poll(() => readout(page)).toMatch(new RegExp(`barrier event ${i + 1} of 6 `));
      seen.push(((await curEvent(page)) ?? '').replace(/^t = [\d,]+: /, ''));
    }
    expect(seen).toEqual([
      'producer: arrive.expect_tx(4096 B) on bar[0]: pending 0, tx 4096',
      'consumer: begins waiting on bar[0] for parity 0 (the barrier is in phase 0, parity 0): blocks',
      'TMA #0 (from producer): complete_tx(2048 B) on bar[0]: tx 2048',
      'TMA #1 (from producer): complete_tx(2048 B) on bar[0]: tx 0',
      'bar[0]: phase 0 completed → parity 1',
      'consumer: wait bar[0] parity 0: passes',
    ]);
    await page.keyboard.press('ArrowLeft');
    await expect.poll(() => readout(page)).toMatch(/barrier event 5 of 6 /);
    await page.uncheck('#tl-bar-only');
  });

  test('the wheel scrolls the page unless the canvas has the focus (or Ctrl is held)', async () => {
    await pick(page, 'file:examples/pipeline.mbk');
    const win = () => page.evaluate(() => (window as unknown as { __mbsim: { timeline: { window: [number, number] } } }).__mbsim.timeline.window);
    await page.locator('#tab-check').focus();
    const box = (await page.locator('.tl-canvas').boundingBox())!;
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.mouse.move(box.x + box.width / 2, box.y + 60);
    const before = await win();
    await page.mouse.wheel(0, 300);
    await expect.poll(() => page.evaluate(() => window.scrollY)).toBeGreaterThan(0);
    expect(await win()).toEqual(before);
    // Focused (a click on the canvas): the wheel zooms and the page stays.
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.mouse.click(box.x + box.width / 2, box.y + 60);
    const y0 = await page.evaluate(() => window.scrollY);
    const w0 = await win();
    await page.mouse.wheel(0, -300);
    await expect.poll(async () => (await win())[1] - (await win())[0]).toBeLessThan(w0[1] - w0[0]);
    expect(await page.evaluate(() => window.scrollY)).toBe(y0);
  });

  test('figure 4: one stage\'s cycle lights each of its four handoffs in turn', async () => {
    await pick(page, 'file:examples/pipeline.mbk');
    await page.click('#tab-timeline');
    await page.check('#tl-bar-only');
    // The checkbox hands the keys back to the canvas.
    expect(await page.evaluate(() => document.activeElement?.className)).toBe('tl-canvas');
    await page.keyboard.press('Home');
    await expect.poll(() => page.locator('#ring-cycle-now').textContent()).toContain('The cycle has not started');
    const lit = new Set<string>();
    const order: string[] = [];
    for (let i = 0; i < 40 && lit.size < 4; i++) {
      await page.keyboard.press('ArrowRight');
      // The readout, the ring and the cycle change in the same frame.
      await expect.poll(() => readout(page)).toMatch(new RegExp(`barrier event ${i + 1} of `));
      const a = (await page.locator('#ring-cycle-now').getAttribute('data-arrow')) ?? '';
      if (a && order[order.length - 1] !== a) order.push(a);
      if (a) lit.add(a);
      // The lit arrow is the one the text names, and only that one.
      const litNow = await page.locator('#ring-cycle path.cycle-arrow.lit').evaluateAll((ps) => ps.map((p) => p.getAttribute('data-arrow')));
      expect(litNow).toEqual(a ? [a] : []);
      if (a === '1' && !order.slice(0, -1).includes('1')) await page.screenshot({ path: join(DIR, 'cycle-full-handoff.png'), clip: await clipOf(page, 'section[aria-labelledby="ring-h"] .ring-figs') });
    }
    expect([...lit].sort()).toEqual(['0', '1', '2', '3']);
    // The producer's first wait on empty passes at once (the buffers start free), then it arrives on
    // full; full → consumer comes after that.
    expect(order.slice(0, 2)).toEqual(['3', '0']);
    expect(order.indexOf('1')).toBeGreaterThan(order.indexOf('0'));
    // No arrow label runs into a box (lit labels included).
    const overlaps = await page.evaluate(() => {
      const r = (e: Element) => e.getBoundingClientRect();
      const boxes = Array.from(document.querySelectorAll('#ring-cycle .cycle-node rect')).map(r);
      const out: string[] = [];
      for (const l of Array.from(document.querySelectorAll('#ring-cycle .cycle-arrow-label'))) {
        const a = r(l);
        for (const b of boxes) if (a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom) out.push(l.textContent ?? '');
      }
      return out;
    });
    expect(overlaps).toEqual([]);
    expect(await page.locator('#ring-cycle .cycle-label').allTextContents()).toEqual(['producer', 'mma', expect.stringMatching(/^full\[\d\]$/), expect.stringMatching(/^empty\[\d\]$/)]);
    await page.uncheck('#tl-bar-only');
  });

  test('figure 1: after the completing copy, both conditions are shown ticked before the flip', async () => {
    await page.click('#tab-mechanism');
    for (let i = 0; i < 3; i++) await page.click('#fig-step');
    expect(await page.locator('#cond-moment').isHidden()).toBe(true);
    await page.click('#fig-step');
    expect(await page.locator('#seed-caption').textContent()).toMatch(/^Step 4 of 4/);
    await expect.poll(() => page.locator('#cond-moment').isVisible()).toBe(true);
    expect(await page.locator('#cond-moment li').allTextContents()).toEqual(['pending arrival count == 0   ✓', 'tx-count == 0   ✓']);
    expect(await page.locator('#cond-moment').textContent()).toContain('phase 0 (parity 0) → phase 1 (parity 1)');
    // The state now: a fresh phase waits for its arrival again.
    expect(await page.locator('#cond-pending').getAttribute('class')).toBe('no');
    // An arrive.expect_tx completes nothing (bytes are still due): the moment goes away.
    await page.getByRole('button', { name: 'arrive.expect_tx', exact: true }).click();
    expect(await page.locator('#cond-moment').isHidden()).toBe(true);
    // The second copy's bytes complete phase 1: the moment comes back for it.
    await page.getByLabel('complete_tx bytes').fill('4096');
    await page.getByRole('button', { name: 'complete_tx', exact: true }).click();
    expect(await page.locator('#cond-moment').textContent()).toContain('phase 1 (parity 1) → phase 2 (parity 0)');
  });

  test('check: a hang caused by a static finding says so; static findings have no replay', async () => {
    await pick(page, 'file:examples/bugs/B01.mbk');
    await page.click('#tab-check');
    await page.click('#check-run');
    await expect.poll(() => page.locator('#check-verdict').textContent(), { timeout: 60_000 }).toMatch(/^Verdict: /);
    const hang = page.locator('#hazards li.hazard').first();
    expect(await hang.locator('.hz-kind').textContent()).toBe('hang');
    expect(await hang.locator('.hz-cause').textContent()).toMatch(/^Cause: a static finding\. The checker's count-mismatch check explains this hang: /);
    expect(await hang.locator('button.replay').count()).toBe(1);
    const warns = page.locator('#check-warnings li.hazard');
    expect(await warns.count()).toBeGreaterThan(0);
    expect(await warns.locator('button.replay').count()).toBe(0);
    expect(await page.locator('#check-warnings').textContent()).not.toContain('Replay (0 steps)');
    expect(await warns.first().locator('.hz-static').textContent()).toBe('static finding: no schedule to replay');
  });

  test('a long simulation shows its progress and Cancel stops it', async () => {
    await page.click('#tab-timeline');
    await pick(page, 'file:examples/pipeline.mbk');
    await page.locator('[data-param="K"]').fill('400000');
    await page.locator('[data-param="K"]').press('Enter');
    await expect.poll(() => page.locator('#sim-progress').textContent(), { timeout: 20_000 }).toMatch(/^[\d,]+ events · t = [\d,]+ cycles · \d+\.\d s$/);
    expect(await page.locator('body').getAttribute('data-busy')).toBe('1');
    await page.click('#sim-cancel');
    await expect.poll(() => page.locator('#verdict').textContent(), { timeout: 10_000 }).toBe('cancelled');
    expect(await page.locator('#sim-cancelled').textContent()).toMatch(/^The simulation was cancelled after [\d,]+ events/);
    expect(await page.locator('#sim-progress').isHidden()).toBe(true);
    expect(await page.locator('body').getAttribute('data-busy')).toBe('0');
    // The next input simulates again.
    await page.locator('[data-param="K"]').fill('8');
    await page.locator('[data-param="K"]').press('Enter');
    // (A fresh worker starts: its script loads again.)
    await expect.poll(() => page.locator('#verdict').textContent(), { timeout: 30_000 }).toMatch(/^ok · /);
  });

  test('stage counts out of range are clamped and say so', async () => {
    await page.click('#tab-phases');
    await page.getByLabel('stages S').fill('40');
    await page.getByLabel('stages S').press('Enter');
    await expect.poll(() => page.locator('#phase-clamped').textContent()).toBe('S = 40 is out of range (1–16): clamped to 16.');
    expect(await page.getByLabel('stages S').inputValue()).toBe('16');
    await page.getByLabel('stages S').fill('2');
    await page.getByLabel('stages S').press('Enter');
    await expect.poll(() => page.locator('#phase-clamped').isHidden()).toBe(true);
    const p2 = await H.open('tab=phases&ps=99&pn=0');
    await expect.poll(() => p2.locator('.warnings').textContent()).toContain('the link\'s stage count S 99 is out of range (1–16): clamped to 16');
    expect(await p2.getByLabel('stages S').inputValue()).toBe('16');
    await p2.close();
  });

  test('every canvas label is 12 px or more', async () => {
    const fonts = await page.evaluate(() => [...(window as unknown as { __fonts: Set<string> }).__fonts]);
    expect(fonts.length).toBeGreaterThan(0);
    const px = fonts.map((f) => Number(/(\d+(?:\.\d+)?)px/.exec(f)![1]));
    expect(Math.min(...px)).toBeGreaterThanOrEqual(12);
  });

  test('screenshots of every view at 1400×900 and 800×600', async () => {
    const views: [string, string, () => Promise<void>][] = [
      ['mechanism', '', async () => {
        for (let i = 0; i < 4; i++) await page.click('#fig-step');
      }],
      ['phases', '', async () => undefined],
      ['timeline-fig3', 'file:examples/mechanism.mbk', async () => {
        await page.locator('.tl-canvas').focus();
        await page.keyboard.press('End');
      }],
      ['timeline-fig4', 'file:examples/pipeline.mbk', async () => {
        await page.locator('.tl-canvas').focus();
        await page.keyboard.press('Home');
        for (let i = 0; i < 4; i++) await page.keyboard.press('Shift+ArrowRight');
      }],
      ['check', 'file:examples/bugs/B01.mbk', async () => {
        await page.click('#check-run');
        await expect.poll(() => page.locator('#check-verdict').textContent(), { timeout: 60_000 }).toMatch(/^Verdict: /);
      }],
      ['sketch', '', async () => undefined],
    ];
    for (const [w, hgt] of [[1400, 900], [800, 600]] as const) {
      await page.setViewportSize({ width: w, height: hgt });
      for (const [name, kernel, prep] of views) {
        if (kernel) await pick(page, kernel);
        const tab = name.replace(/-.*$/, '');
        await page.click(`#tab-${tab}`);
        await prep();
        await page.waitForTimeout(150);
        await page.screenshot({ path: join(DIR, `${name}-${w}x${hgt}.png`) });
        await page.screenshot({ path: join(DIR, `${name}-${w}x${hgt}-full.png`), fullPage: true });
        // Nothing wider than the window (no horizontal scroll bar).
        expect(await page.evaluate(() => document.documentElement.scrollWidth), `${name} at ${w}`).toBeLessThanOrEqual(w);
      }
    }
    expect(H.errors).toEqual([]);
  }, 180_000);
});

/** The rectangle of the first element matching `sel`, for a clipped screenshot. */
async function clipOf(p: Page, sel: string): Promise<{ x: number; y: number; width: number; height: number }> {
  await p.locator(sel).scrollIntoViewIfNeeded();
  const b = (await p.locator(sel).boundingBox())!;
  return { x: b.x, y: b.y, width: Math.max(1, b.width), height: Math.max(1, b.height) };
}
