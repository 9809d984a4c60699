/**
 * The timeline's per-warp lanes in Chromium: a role of several warps (each warp an agent) has a
 * role row that expands into one lane per warp and collapses into one strip per warp; hovering
 * names the warp. Screenshots at 1400×900 and 800×600 go to /tmp/mbsim-shots/.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { compressToEncodedURIComponent } from 'lz-string';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { CHROMIUM, launch, SHOTS, type Harness } from './harness.js';

const haveChromium = existsSync(CHROMIUM);
if (process.env.CI && !haveChromium) throw new Error(`Chromium not found at ${CHROMIUM}: the browser tests cannot run (.ci/run installs it with apt-get)`);

/** A leader-warp protocol: four consumer warps each take their own time, warp 0 alone releases the stage. */
const LEADER = `kernel leader_warp arch=sm_90a
param N = 4
barrier full count=1
barrier empty count=1
smem A bytes=8192
role producer warps=1 per=one:
    for i in range(0, N):
        mbarrier.try_wait.parity empty, (i & 1) ^ 1
        mbarrier.arrive.expect_tx full, 8192
        cp.async.bulk.tensor A, 8192, full
role consumer warps=4 per=warp:
    for i in range(0, N):
        mbarrier.try_wait.parity full, i & 1
        ld.shared A
        work 200 * (warp + 1)
        bar.sync 1, 128
        if warp == 0:
            mbarrier.arrive empty
`;

type Lane = { label: string; kind: string; open?: boolean; y: number; h: number };
const lanes = (p: Page) => p.evaluate(() => (window as unknown as { __mbsim: { timeline: { lanes: Lane[] } } }).__mbsim.timeline.lanes);
const settled = (p: Page) => p.waitForSelector('body[data-busy="0"]', { state: 'attached' });

let H: Harness;

describe.skipIf(!haveChromium)('per-warp lanes in Chromium', () => {
  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    H = await launch();
  }, 60_000);
  afterAll(async () => {
    await H?.close();
  });

  test('a role of several warps: a role row that expands into its warps and collapses into strips; hover names the warp', async () => {
    const page = await H.open(`name=leader.mbk&sk=${compressToEncodedURIComponent(LEADER)}&tab=timeline`);
    await page.setViewportSize({ width: 1400, height: 900 });
    await settled(page);
    await expect.poll(() => page.locator('#verdict').textContent()).toMatch(/^ok · /);
    // The warps differ (each works longer than the one before): the role row starts expanded.
    let ls = await lanes(page);
    expect(ls.filter((l) => l.kind !== 'barrier' && l.kind !== 'counts').map((l) => [l.kind, l.label, l.open ?? null])).toEqual([
      ['agent', 'producer', null],
      ['role', 'consumer', true],
      ['warp', 'consumer.w0', null],
      ['warp', 'consumer.w1', null],
      ['warp', 'consumer.w2', null],
      ['warp', 'consumer.w3', null],
      ['unit', 'TMA engine c0', null],
    ]);
    expect(await page.locator('#tl-warps').isChecked()).toBe(true);
    await page.locator('.tl-canvas').scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(SHOTS, 'warp-lanes-1400-expanded.png') });
    const box = (await page.locator('.tl-canvas').boundingBox())!;
    const rowOf = (label: string, kind: string) => ls.find((l) => l.label === label && l.kind === kind)!;
    // Hover warp 3's lane where it works: the tooltip names the warp.
    const w3 = rowOf('consumer.w3', 'warp');
    let tip = '';
    for (let x = box.x + 200; x < box.x + box.width && !/warp 3 of 4/.test(tip); x += 6) {
      await page.mouse.move(x, box.y + w3.y + w3.h / 2);
      if (await page.locator('.tl-tip').isVisible()) tip = (await page.locator('.tl-tip').textContent()) ?? '';
    }
    expect(tip).toMatch(/^consumer\.w3: /);
    expect(tip).toContain('warp 3 of 4 of role consumer');
    // Click the role's name: it collapses into one strip per warp.
    const role = rowOf('consumer', 'role');
    await page.mouse.click(box.x + 40, box.y + role.y + role.h / 2);
    ls = await lanes(page);
    expect(ls.filter((l) => l.kind === 'role').map((l) => [l.label, l.open])).toEqual([['consumer', false]]);
    expect(ls.filter((l) => l.kind === 'warp')).toEqual([]);
    expect(await page.locator('#tl-warps').isChecked()).toBe(false);
    await page.screenshot({ path: join(SHOTS, 'warp-lanes-1400-collapsed.png') });
    // Hover the collapsed row: the strip under the pointer is one warp's.
    const r2 = ls.find((l) => l.kind === 'role')!;
    tip = '';
    const stripY = box.y + r2.y + 2 + 3 * 5 + 2; // warp 3's strip (5-px strips for 4 warps)
    for (let x = box.x + 200; x < box.x + box.width && !/warp 3 of 4/.test(tip); x += 6) {
      await page.mouse.move(x, stripY);
      if (await page.locator('.tl-tip').isVisible()) tip = (await page.locator('.tl-tip').textContent()) ?? '';
    }
    expect(tip).toMatch(/^consumer\.w3: /);
    // The toolbar's "every warp" box expands every role again.
    await page.locator('#tl-warps').check();
    ls = await lanes(page);
    expect(ls.filter((l) => l.kind === 'warp').map((l) => l.label)).toEqual(['consumer.w0', 'consumer.w1', 'consumer.w2', 'consumer.w3']);
    // A small window: the same lanes, readable.
    await page.setViewportSize({ width: 800, height: 600 });
    await page.waitForTimeout(200);
    await page.locator('.tl-canvas').scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(SHOTS, 'warp-lanes-800-expanded.png') });
    await page.locator('#tl-warps').uncheck();
    await page.waitForTimeout(100);
    await page.screenshot({ path: join(SHOTS, 'warp-lanes-800-collapsed.png') });
    expect(H.errors).toEqual([]);
    await page.close();
  });

  test('warps that do the same thing start collapsed (the pipeline\'s epilogue warpgroup)', async () => {
    const page = await H.open('file=examples/pipeline.mbk&tab=timeline');
    await settled(page);
    await expect.poll(() => page.locator('#verdict').textContent()).toMatch(/^ok · /);
    const ls = await lanes(page);
    const roles = ls.filter((l) => l.kind === 'role');
    expect(roles.length).toBeGreaterThan(0);
    for (const r of roles) expect(ls.filter((l) => l.kind === 'warp' && l.label.startsWith(`${r.label.replace(/@.*/, '')}.w`)).length).toBe(r.open ? 4 : 0);
    await page.screenshot({ path: join(SHOTS, 'warp-lanes-pipeline.png') });
    expect(H.errors).toEqual([]);
    await page.close();
  });
});
