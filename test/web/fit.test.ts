/**
 * The explorer's text in Chromium at 1400×900 and 800×600: legend entries never break inside
 * themselves, the timeline's toolbar and legend rows stay on one line each at 1400 px, every text
 * of the tabs' figures (HTML, and SVG after its scaling) is 12 px or more; and the Check tab speaks
 * as `mbsim check` does: the same default state bound and time limit, the same words for the
 * reductions by symmetry (src/check/report.ts `symmetrySummary`); a replayed hang's ring keeps its
 * labels' size and names its blocked warps once.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { check } from '../../src/check/check.js';
import { DEFAULT_BOUNDS } from '../../src/check/engine.js';
import { symmetrySummary } from '../../src/check/report.js';
import { parseSketch } from '../../src/lang/index.js';
import { instantiate } from '../../src/machine/program.js';
import { CHROMIUM, launch, REPO, type Harness } from './harness.js';

const haveChromium = existsSync(CHROMIUM);
let H: Harness;

const settled = (p: Page) => p.waitForSelector('body[data-busy="0"]', { state: 'attached' });
async function pick(p: Page, value: string): Promise<void> {
  await p.selectOption('#example', value);
  await settled(p);
}

/** Texts on the page (own text nodes) drawn smaller than 12 px: the computed size times the SVG's scale. */
function smallTexts(p: Page): Promise<string[]> {
  return p.evaluate(() => {
    const out: string[] = [];
    for (const el of Array.from(document.querySelectorAll('body *'))) {
      const r = el.getBoundingClientRect();
      if (!r.width || !r.height) continue;
      if (!Array.from(el.childNodes).some((n) => n.nodeType === 3 && (n.textContent ?? '').trim())) continue;
      let px = parseFloat(getComputedStyle(el).fontSize);
      if (el instanceof SVGGraphicsElement) {
        const m = el.getScreenCTM();
        if (m) px *= Math.hypot(m.a, m.b);
      }
      if (px < 11.95) out.push(`${el.tagName.toLowerCase()}.${el.getAttribute('class') ?? ''} ${px.toFixed(1)} px: ${(el.textContent ?? '').trim().slice(0, 40)}`);
    }
    return [...new Set(out)];
  });
}

/** Legend entries drawn on more than one line (their text broken inside the entry). */
function brokenKeys(p: Page): Promise<string[]> {
  return p.evaluate(() => Array.from(document.querySelectorAll('.legend .key'))
    .filter((k) => (k as HTMLElement).offsetParent && k.getClientRects().length > 0 && k.getBoundingClientRect().height > 20)
    .map((k) => k.textContent ?? ''));
}

describe.skipIf(!haveChromium)('the explorer\'s text fits; the Check tab speaks as the CLI', () => {
  beforeAll(async () => {
    H = await launch();
  }, 120_000);
  afterAll(async () => {
    await H?.close();
  });

  for (const [w, hgt] of [[1400, 900], [800, 600]] as const) {
    test(`${w}×${hgt}: legends break between entries only; every text is 12 px or more`, async () => {
      const page = await H.browser.newPage({ viewport: { width: w, height: hgt } });
      await page.goto(H.server.url);
      await page.waitForSelector('body[data-ready="1"]');
      for (const ex of ['file:examples/pipeline.mbk', 'file:examples/cutlass-pingpong.mbk', 'file:examples/kernels/cluster-mc.mbk', 'file:examples/bugs/B01.mbk']) {
        await pick(page, ex);
        await page.click('#tab-timeline');
        expect(await page.locator('.tl-legend .key').count()).toBe(12);
        expect(await brokenKeys(page), ex).toEqual([]);
        if (w === 1400) {
          // Each legend row and the toolbar on one line.
          const heights = await page.locator('.tl-legend .keys').evaluateAll((rows) => rows.map((r) => r.getBoundingClientRect().height));
          expect(heights).toHaveLength(2);
          for (const x of heights) expect(x, ex).toBeLessThan(20);
          expect(await page.locator('.tl-toolbar').evaluate((t) => t.getBoundingClientRect().height), ex).toBeLessThan(45);
        }
        for (const tab of ['mechanism', 'phases', 'timeline']) {
          await page.click(`#tab-${tab}`);
          expect(await smallTexts(page), `${ex} ${tab}`).toEqual([]);
        }
        // The phase-tracking figure's badge inside its stage's box, a margin on each side.
        await page.click('#tab-phases');
        const [badge, boxW] = await page.locator('#waited-badge').evaluate((t) => [(t as SVGTextElement).getBBox().width, (t.parentNode as SVGElement).querySelector<SVGRectElement>('rect.current')!.getBBox().width]);
        expect(badge!, ex).toBeLessThan(boxW! - 6);
      }
      await page.close();
    }, 180_000);
  }

  test('the Check tab\'s bounds are mbsim check\'s; its symmetry text is the CLI\'s', async () => {
    const page = await H.open();
    await page.click('#tab-check');
    expect(await page.locator('#view-check input[aria-label="maximum states"]').inputValue()).toBe(String(DEFAULT_BOUNDS.maxStates));
    expect(await page.locator('#view-check input[aria-label="time limit in seconds"]').inputValue()).toBe(String(DEFAULT_BOUNDS.timeoutMs / 1000));

    // Two instances of a role of 3 interchangeable warps: two groups, not the role named twice.
    const file = 'examples/cutlass-pingpong.mbk';
    const cli = symmetrySummary(check(instantiate(parseSketch(readFileSync(join(REPO, file), 'utf8'), file).kernel!)));
    expect(cli).toBe('2 groups of 3 interchangeable math warps');
    await pick(page, `file:${file}`);
    await page.click('#tab-check');
    await page.click('#check-run');
    await expect.poll(() => page.locator('#check-verdict').textContent(), { timeout: 60_000 }).toMatch(/^Verdict: ok/);
    const coverage = (await page.locator('#check-coverage').textContent()) ?? '';
    expect(coverage).toContain(`; symmetry: ${cli}.`);
    expect(coverage).not.toMatch(/×/);
    await page.close();
  }, 120_000);

  test('1400×900: a replayed hang\'s ring keeps 12 px labels; its blocked warps are one entry', async () => {
    const page = await H.browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.goto(H.server.url);
    await page.waitForSelector('body[data-ready="1"]');
    await pick(page, 'file:examples/bugs/B01.mbk');
    await page.click('#tab-check');
    await page.click('#check-run');
    await expect.poll(() => page.locator('#check-verdict').textContent(), { timeout: 60_000 }).toMatch(/^Verdict: hang/);
    await page.locator('button.replay').first().click();
    await page.click('button[aria-label="last step"]');
    await expect.poll(() => page.locator('#step-blocked li').allTextContents()).toEqual([expect.stringMatching(/^consumer\.w0–w3 \(4 agents\) are blocked in mbarrier\.try_wait\.parity full\[0\], 0 \(line 24\): /)]);
    expect(await page.locator('#replay-ring-list').textContent()).toContain('stage 0');
    expect(await smallTexts(page)).toEqual([]);
    await page.close();
  }, 120_000);
});
