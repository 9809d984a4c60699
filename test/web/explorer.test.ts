/**
 * The explorer in a real browser (Debian's Chromium through playwright-core): every example opens
 * and simulates, the timeline steps with the keyboard, the phase-tracking view for 2 stages is the
 * seed's table, the mechanism view applies operations through the model (over-arrival shows the
 * diagnostic), share links reproduce the view and untrusted links inject nothing.
 * Screenshots go to /tmp/mbsim-shots/.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { compressToEncodedURIComponent } from 'lz-string';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startServer } from '../../src/web/server/serve.js';
import { CHROMIUM, launch, REPO, SHOTS, type Harness } from './harness.js';

const haveChromium = existsSync(CHROMIUM);
// CI installs Chromium (.ci/run); there a missing browser is a failure, not a skip.
if (process.env.CI && !haveChromium) throw new Error(`Chromium not found at ${CHROMIUM}: the browser tests cannot run (.ci/run installs it with apt-get)`);
let H: Harness;
let page: Page;

const shot = (p: Page, name: string) => p.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
const readout = (p: Page) => p.locator('#tl-readout').textContent();
/** Waits until the run the page asked the worker for is shown. */
const settled = (p: Page) => p.waitForSelector('body[data-busy="0"]', { state: 'attached' });
/** Picks a kernel from the menu and waits for its simulation. */
async function pick(p: Page, value: string): Promise<void> {
  await p.selectOption('#example', value);
  await settled(p);
}

/** The seed's phase-tracking table (chapter 08), read from the seed when present. */
function seedTable(): string[][] {
  const fallback = [['0', '0', '0', '1', '0'], ['1', '1', '0', '1', '1'], ['2', '0', '1', '0', '1'], ['3', '1', '1', '0', '0']];
  const f = join(REPO, '..', 'shared', 'seed', '08-async-coordination-mbarrier.txt');
  if (!existsSync(f)) return fallback;
  const lines = readFileSync(f, 'utf8').split(/\r?\n/);
  const head = lines.findIndex((l) => l.startsWith('iteration\tstage'));
  const rows = lines.slice(head + 1, head + 5).map((l) => l.trim().split(/\t/));
  expect(rows).toEqual(fallback);
  return rows;
}

describe.skipIf(!haveChromium)('explorer in Chromium', () => {
  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    H = await launch();
    page = await H.open();
  }, 60_000);
  afterAll(async () => {
    await H?.close();
  });

  test('opens on the default example with every view computed', async () => {
    await expect.poll(() => page.locator('#verdict').textContent()).toMatch(/^ok · /);
    expect(await page.locator('#tab-timeline').getAttribute('aria-selected')).toBe('true');
    expect(await page.locator('#bar-table tbody tr').count()).toBeGreaterThan(4);
    expect(await page.locator('#ring-list li').count()).toBe(4);
    await shot(page, 'timeline-default');
    // The full/empty ring follows the cursor: at the start every stage is free, later some hold data.
    const ringAt = async (key: string) => {
      await page.locator('.tl-canvas').focus();
      await page.keyboard.press(key);
      await expect.poll(() => page.locator('#ring-list').textContent()).toBeTruthy();
      return (await page.locator('#ring-list').textContent()) ?? '';
    };
    expect(await ringAt('Home')).not.toMatch(/ready|TMA filling/);
    await page.keyboard.press('Home');
    for (let i = 0; i < 8; i++) await page.keyboard.press('Shift+ArrowRight');
    await expect.poll(() => page.locator('#ring-list').textContent()).toMatch(/TMA filling|ready: consumer/);
    await shot(page, 'timeline-ring-mid');
    expect(H.errors).toEqual([]);
  });

  test('every example opens, simulates and steps with the keyboard', async () => {
    const values = await page.locator('#example option:not([disabled])').evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value));
    expect(values.length).toBeGreaterThanOrEqual(5 + 5 + 10);
    const verdicts: Record<string, string> = {};
    for (const v of values) {
      await pick(page, v);
      const text = (await page.locator('#verdict').textContent()) ?? '';
      verdicts[v] = text;
      expect(text, v).toMatch(/^(ok|hang|trap|error) · [\d,]+ cycles · [\d,]+ events$/);
      // Stepping needs three events: a sketch that deadlocks before them (B28: none; T02: two) is only opened.
      if (Number(/ · ([\d,]+) events$/.exec(text)![1]!.replace(/,/g, '')) < 3) continue;
      await page.locator('.tl-canvas').focus();
      await page.keyboard.press('Home');
      for (let i = 0; i < 3; i++) await page.keyboard.press('ArrowRight');
      await expect.poll(() => readout(page), { message: v }).toMatch(/event 3 of /);
      await page.keyboard.press('ArrowLeft');
      await expect.poll(() => readout(page), { message: v }).toMatch(/event 2 of /);
      await expect.poll(() => page.locator('#cur-event').textContent(), { message: v }).toMatch(/^t = /);
      if (/pipeline|B01|cluster/.test(v)) await shot(page, `timeline-${v.replace(/[^A-Za-z0-9]+/g, '_')}`);
    }
    // The built-in examples all finish; the buggy sketches include hangs.
    for (const ex of ['mechanism', 'phase-tracking', 'pipeline', 'hopper', 'cluster']) expect(verdicts[`ex:${ex}`]).toMatch(/^ok/);
    expect(Object.values(verdicts).some((t) => t.startsWith('hang'))).toBe(true);
    expect(H.errors).toEqual([]);
  }, 300_000); // every kernel of the menu (over a hundred), each simulated in the worker

  test('the timeline scrubs, plays, zooms; hovering a span shows its source line and barrier state', async () => {
    await pick(page, 'file:examples/mechanism.mbk');
    const canvas = page.locator('.tl-canvas');
    const box = (await canvas.boundingBox())!;
    // Scrub on the ruler to the middle.
    await page.mouse.move(box.x + 168 + (box.width - 168) / 2, box.y + 10);
    await page.mouse.down();
    await page.mouse.move(box.x + 168 + (box.width - 168) * 0.6, box.y + 10);
    await page.mouse.up();
    const mid = await readout(page);
    expect(mid).not.toMatch(/event 0 of/);
    // Play runs the cursor forward.
    await page.keyboard.press('Home');
    await page.getByRole('button', { name: 'play' }).click();
    await page.waitForTimeout(400);
    await page.getByRole('button', { name: 'pause' }).click();
    expect(await readout(page)).not.toBe('t = 0 cycles · event 0 of 23');
    // Zoom in and out keep the cursor readout.
    await page.getByRole('button', { name: 'zoom in' }).click();
    await page.getByRole('button', { name: 'zoom to fit' }).click();
    // Hover the producer's first operation (arrive.expect_tx, line of the sketch).
    await page.keyboard.press('Home');
    const rowY = box.y + 26 + 11; // first lane
    let tip = '';
    for (let x = box.x + 170; x < box.x + box.width && !tip.includes('line'); x += 4) {
      await page.mouse.move(x, rowY);
      if (await page.locator('.tl-tip').isVisible()) tip = (await page.locator('.tl-tip').textContent()) ?? '';
    }
    expect(tip).toContain('mbarrier.arrive.expect_tx');
    expect(tip).toMatch(/line \d+: mbarrier\.arrive\.expect_tx bar\[0\]/);
    expect(tip).toMatch(/bar\[0\] after it: phase 0 \(parity 0\), pending 0\/1, tx 4096 B/);
    await shot(page, 'timeline-hover');
    // Step to the end: the barrier completed phase 0.
    await canvas.focus();
    await page.keyboard.press('End');
    // barrier, phase 1, parity 1, pending 1 / 1, tx 0 B
    await expect.poll(() => page.locator('#bar-table tbody tr').first().textContent()).toBe('bar[0]111 / 10 B');
  });

  test('phase tracking with 2 stages is the seed table; other stage counts work', async () => {
    await page.click('#tab-phases');
    const rows = await page.locator('#phase-table tbody tr').evaluateAll((trs) => trs.map((tr) => Array.from(tr.children).map((td) => td.textContent ?? '')));
    expect(rows).toEqual(seedTable());
    const head = await page.locator('#phase-table thead th').allTextContents();
    expect(head).toEqual(['iteration', 'stage', 'phase parity waited on', 'barrier parity after completion', 'phase_tma after iteration']);
    // Iteration selector with the keyboard.
    await page.getByRole('slider', { name: 'iteration' }).focus();
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('ArrowRight');
    expect(await page.locator('#iter-label').textContent()).toBe('iteration 2 (of 4: 0–3)');
    // The badge sits on the parity that was waited on (1); below it, the parity after completion.
    expect(await page.locator('#waited-badge').evaluate((t) => t.previousElementSibling?.textContent)).toBe('parity 1');
    // The chapter's loop has its own S: the header's kernel S is hidden here.
    expect(await page.locator('.params').isHidden()).toBe(true);
    expect(await page.locator('#param-note').isVisible()).toBe(true);
    expect(await page.locator('#phase-explain').textContent()).toContain('Iteration 2 waits for phase parity 1 of stage 0');
    await shot(page, 'phases-s2');
    await page.getByLabel('stages S').fill('3');
    await page.getByLabel('iterations N').fill('9');
    await page.getByLabel('iterations N').press('Enter');
    await page.getByLabel('iterations N').blur();
    await expect.poll(() => page.locator('#phase-table tbody tr').count()).toBe(9);
    const r3 = await page.locator('#phase-table tbody tr').evaluateAll((trs) => trs.map((tr) => Array.from(tr.children).map((td) => Number(td.textContent))));
    r3.forEach((r, i) => {
      expect(r[1]).toBe(i % 3);
      expect(r[2]).toBe(Math.floor(i / 3) & 1);
      expect(r[3]).toBe((Math.floor(i / 3) + 1) & 1);
      expect(r[4]).toBe(Math.floor((i + 1) / 3) & 1);
    });
    await expect.poll(() => page.url()).toContain('ps=3');
    await shot(page, 'phases-s3');
  });

  test('mechanism: operations go through the model; over-arrival shows the diagnostic', async () => {
    await page.click('#tab-mechanism');
    const field = (id: string) => page.locator(`[data-field="${id}"] .field-val`).textContent();
    await page.getByRole('button', { name: 'reset barrier' }).click();
    await page.getByLabel('init count').fill('1');
    await page.getByRole('button', { name: 'mbarrier.init', exact: true }).click();
    expect(await field('pending')).toBe('1');
    expect(await field('phase')).toBe('0phase 0');
    await page.getByLabel('arrive.expect_tx bytes').fill('4096');
    await page.getByRole('button', { name: 'arrive.expect_tx', exact: true }).click();
    expect(await field('pending')).toBe('0');
    expect(await field('tx')).toBe('4096 B');
    expect(await page.locator('#cond-pending').getAttribute('class')).toBe('yes');
    expect(await page.locator('#cond-tx').getAttribute('class')).toBe('no');
    expect(await page.locator('#cond-verdict').textContent()).toContain('waits for the remaining bytes');
    // try_wait(0) blocks before the bytes land.
    await page.getByLabel('try_wait parity').selectOption('0');
    await page.getByRole('button', { name: 'try_wait.parity', exact: true }).click();
    expect(await page.locator('#wait-result').textContent()).toContain('→ false');
    await page.getByLabel('complete_tx bytes').fill('2048');
    await page.getByRole('button', { name: 'complete_tx', exact: true }).click();
    await page.getByRole('button', { name: 'complete_tx', exact: true }).click();
    expect(await field('phase')).toBe('1phase 1');
    expect(await field('pending')).toBe('1');
    expect(await field('tx')).toBe('0 B');
    await page.getByRole('button', { name: 'try_wait.parity', exact: true }).click();
    expect(await page.locator('#wait-result').textContent()).toContain('→ true');
    // tcgen05.commit completion is one arrival: it completes phase 1.
    await page.getByRole('button', { name: 'tcgen05.commit completion' }).click();
    expect(await field('phase')).toBe('0phase 2');
    // Click a field: it is explained.
    await page.getByRole('button', { name: 'tx-count field' }).click();
    expect(await page.locator('#mech-explain').textContent()).toContain('Bytes of asynchronous copies that the phase still waits for');
    expect(await page.getByRole('button', { name: 'tx-count field' }).getAttribute('aria-pressed')).toBe('true');
    // Over-arrival: all arrivals in, phase waiting on bytes, one more arrive.
    await page.getByRole('button', { name: 'arrive.expect_tx', exact: true }).click();
    await page.getByRole('button', { name: 'mbarrier.arrive', exact: true }).click();
    const diag = page.locator('#mech-diag');
    await expect.poll(() => diag.isVisible()).toBe(true);
    expect(await diag.locator('.diag-code').textContent()).toBe('over-arrival');
    expect(await diag.textContent()).toContain('the kernel traps');
    expect(await diag.textContent()).toContain('H200:');
    expect(await page.locator('#mech-status').textContent()).toContain('Trapped');
    await shot(page, 'mechanism-over-arrival');
    // Undefined: arrive on a never-initialized barrier.
    await page.getByRole('button', { name: 'reset barrier' }).click();
    await page.getByRole('button', { name: 'mbarrier.arrive', exact: true }).click();
    expect(await diag.locator('.diag-code').textContent()).toBe('uninitialized');
  });

  test('a share link reproduces the kernel, parameters, tab and cursor', async () => {
    await page.click('#tab-timeline');
    await pick(page, 'ex:hopper');
    await page.getByLabel('parameter S').fill('3');
    await page.getByLabel('parameter S').press('Enter');
    await settled(page);
    await page.click('#tab-timeline');
    await page.locator('.tl-canvas').focus();
    await page.keyboard.press('Home');
    for (let i = 0; i < 12; i++) await page.keyboard.press('ArrowRight');
    await expect.poll(() => readout(page)).toMatch(/event 12 of/);
    const before = await readout(page);
    await page.getByRole('button', { name: 'Copy link' }).click();
    const link = await page.locator('.share-out').inputValue();
    expect(link).toContain('ex=hopper');
    expect(link).toContain('set=S%3D3');
    const p2 = await H.open(link.slice(link.indexOf('#') + 1));
    expect(await p2.locator('#example').inputValue()).toBe('ex:hopper');
    expect(await p2.getByLabel('parameter S').inputValue()).toBe('3');
    await expect.poll(() => readout(p2)).toBe(before);
    await p2.close();
  });

  test('an edited sketch travels in the link; diagnostics show as you type', async () => {
    await pick(page, 'file:examples/phase-tracking.mbk');
    await page.click('#tab-sketch');
    const content = page.locator('.cm-content');
    await content.click();
    await page.keyboard.press('Control+End');
    await page.keyboard.type('\nbogus line here');
    await expect.poll(() => page.locator('#editor-status').textContent(), { timeout: 5000 }).toMatch(/problem/);
    expect(await page.locator('#editor-diags li').count()).toBeGreaterThan(0);
    await shot(page, 'sketch-diagnostic');
    for (let i = 0; i < 'bogus line here'.length + 1; i++) await page.keyboard.press('Backspace');
    // Change N from 4 to 6 in the text.
    await page.keyboard.press('Control+f');
    await page.keyboard.press('Escape');
    const text = await content.textContent();
    expect(text).toContain('param N = 4');
    await page.evaluate(() => {
      // Select "param N = 4" through the DOM-independent editor API is not exposed; type instead.
    });
    await page.keyboard.press('Control+Home');
    for (let i = 0; i < 20; i++) {
      const line = await page.locator('.cm-activeLine').textContent();
      if (line?.startsWith('param N')) break;
      await page.keyboard.press('ArrowDown');
    }
    await page.keyboard.press('End');
    await page.keyboard.press('Backspace');
    await page.keyboard.type('6');
    await expect.poll(() => page.locator('#editor-status').textContent(), { timeout: 5000 }).toMatch(/parses/);
    await expect.poll(() => page.url(), { timeout: 5000 }).toContain('sk=');
    const hash = page.url().split('#')[1]!;
    const p2 = await H.open(hash);
    await p2.click('#tab-sketch');
    expect(await p2.locator('.cm-content').textContent()).toContain('param N = 6');
    expect(await p2.locator('#verdict').textContent()).toMatch(/^ok/);
    await p2.close();
  });

  test('untrusted links inject nothing', async () => {
    const evil = '<img src=x id=pwn onerror="window.__pwned=1">\nkernel "<b id=pwn2>x</b>"';
    const hash = `name=${encodeURIComponent('<script>alert(1)</script>')}&sk=${compressToEncodedURIComponent(evil)}&set=S=1,__proto__=3,a=b&tab=sketch&ev=abc`;
    const p = await H.open(hash);
    await p.waitForTimeout(400);
    expect(await p.evaluate(() => document.querySelectorAll('#pwn, #pwn2, script:not([src])').length)).toBe(0);
    expect(await p.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(await p.locator('#verdict').textContent()).toBe('does not parse');
    expect(await p.locator('.cm-content').textContent()).toContain('<img src=x');
    await shot(p, 'untrusted-link');
    // Garbage in the link: defaults plus a warning.
    const p3 = await H.open('sk=%%%garbage&ex=nope');
    expect(await p3.locator('.warnings').textContent()).toMatch(/could not be decompressed/);
    await p.close();
    await p3.close();
    expect(H.errors.filter((e) => !/Failed to load resource/.test(e))).toEqual([]);
  });

  test('a counterexample trace shows the pending async groups of a wait_group step (B15)', async () => {
    await pick(page, 'file:examples/bugs/B15.mbk');
    await page.click('#tab-check');
    await page.getByRole('button', { name: 'Check every schedule' }).click();
    await expect.poll(() => page.locator('#check-verdict').textContent(), { timeout: 20_000 }).toMatch(/^Verdict: race/);
    await page.locator('#hazards li.hazard').first().getByRole('button', { name: /^Replay \(\d+ steps?\): race counterexample 1$/ }).click();
    await expect.poll(() => page.locator('#trace').textContent()).toContain('pending wgmma groups of consumer.w0: 1 (≤ 1: wait_group 1 passes)');
    await page.click('#tab-sketch');
  });

  test('the checker finds B01’s hang in a worker; replaying it drives every view, by keyboard', async () => {
    await pick(page, 'file:examples/bugs/B01.mbk');
    await page.click('#tab-check');
    await page.getByRole('button', { name: 'Check every schedule' }).click();
    await expect.poll(() => page.locator('#check-verdict').textContent(), { timeout: 20_000 }).toMatch(/^Verdict: hang/);
    const hz = page.locator('#hazards li.hazard').first();
    expect(await hz.locator('.hz-kind').textContent()).toBe('hang');
    expect(await hz.locator('.hz-subject').textContent()).toBe(' barrier full[0]');
    expect(await hz.textContent()).toContain('line 24:  mbarrier.try_wait.parity full[0], 0');
    expect(await page.locator('#check-progress').textContent()).toMatch(/states, .* transitions/);
    await hz.getByRole('button', { name: /^Replay \(\d+ steps?\): hang counterexample 1$/ }).click();
    // The numbered trace: the initial state, then each step of the shortest schedule.
    const steps = page.locator('#trace li');
    const n = (await steps.count()) - 1;
    expect(n).toBeGreaterThanOrEqual(3);
    expect(await steps.nth(1).textContent()).toMatch(/^1\. producer: mbarrier\.try_wait\.parity empty\[0\]/);
    await expect.poll(() => page.locator('#trace-readout').textContent()).toBe(`step 0 of ${n}`);
    // Keyboard: the trace list has the focus after Replay.
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('trace');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    await expect.poll(() => page.locator('#trace-readout').textContent()).toBe(`step 2 of ${n}`);
    expect(await page.locator('#step-head').textContent()).toMatch(/^2\. producer: mbarrier\.expect_tx full\[0\]/);
    expect(await page.locator('#step-src').textContent()).toBe('line 19:  mbarrier.expect_tx full[0], BYTES           # BUG: bytes armed, no arrival (want arrive.expect_tx)');
    // The barrier concerned after expect_tx: no arrival, 4096 bytes expected.
    expect(await page.locator('#step-bars tr.hot').first().textContent()).toBe('full[0]phase 0 (parity 0) · pending 1 of 1 · tx-count 4096 B');
    await page.keyboard.press('End');
    await expect.poll(() => page.locator('#trace-readout').textContent()).toBe(`step ${n} of ${n}`);
    expect(await page.locator('#step-blocked').textContent()).toMatch(/consumer\.w0–w3 \(4 agents\) are blocked in mbarrier\.try_wait\.parity full\[0\], 0 \(line 24\)/);
    expect(await page.locator('#replay-text').textContent()).toContain(`step ${n} of ${n}`);
    expect(await page.locator('#replay-ring-list').textContent()).toContain('stage 0');
    await shot(page, 'check-B01-replay');
    await page.keyboard.press('ArrowUp');
    await expect.poll(() => page.locator('#trace-readout').textContent()).toBe(`step ${n - 1} of ${n}`);
    // Every view follows the step: the timeline cursor and its inspector…
    await page.click('#tab-timeline');
    await expect.poll(() => readout(page)).toMatch(new RegExp(`^step ${n - 1} of ${n} · event`));
    expect(await page.locator('#run-info').textContent()).toContain('Counterexample 1: hang on full[0]');
    await shot(page, 'check-B01-timeline');
    // …stepping on the timeline moves the trace too…
    await page.locator('.tl-canvas').focus();
    await page.keyboard.press('ArrowRight');
    await expect.poll(() => readout(page)).toMatch(new RegExp(`^step ${n} of ${n}`));
    expect(await page.locator('#trace-readout').textContent()).toBe(`step ${n} of ${n}`);
    // …the mechanism shows the barrier concerned, full[0]: all bytes landed, the arrival missing…
    await page.click('#tab-mechanism');
    expect(await page.locator('#mech-from').textContent()).toContain(`full[0] after step ${n} of counterexample 1 (hang)`);
    expect(await page.locator('[data-field="pending"] .field-val').textContent()).toBe('1');
    expect(await page.locator('#cond-verdict').textContent()).toBe('The phase waits for 1 more arrival.');
    await shot(page, 'check-B01-mechanism');
    // …and at the hang's last step the sketch highlights where the waiter is stuck (line 24), before
    // it the step's line (the copy landing: line 20).
    await page.click('#tab-sketch');
    await expect.poll(() => page.locator('.cm-run-line').getAttribute('data-run-line')).toBe('24');
    expect(await page.locator('#editor-mark').textContent()).toContain('consumer.w0, consumer.w1, consumer.w2, consumer.w3 are blocked forever');
    await shot(page, 'check-B01-sketch');
    await page.getByRole('button', { name: 'replay: previous step' }).click();
    await expect.poll(() => page.locator('.cm-run-line').getAttribute('data-run-line')).toBe('20');
    await page.getByRole('button', { name: 'replay: previous step' }).click();
    await expect.poll(() => page.locator('.cm-run-line').getAttribute('data-run-line')).toBe('19');
    // Stop: the views go back to the simulation.
    await page.getByRole('button', { name: 'stop replaying' }).click();
    await page.click('#tab-timeline');
    await expect.poll(() => readout(page)).toMatch(/^t = /);
    expect(await page.locator('#replay-bar').isHidden()).toBe(true);
    expect(H.errors).toEqual([]);
  });

  test('a long check shows progress, leaves the page responsive, and cancels', async () => {
    await pick(page, 'file:examples/cluster.mbk');
    await page.getByLabel('parameter K').fill('1000');
    await page.getByLabel('parameter K').press('Enter');
    await settled(page);
    await page.click('#tab-check');
    await page.getByRole('button', { name: 'Check every schedule' }).click();
    await expect.poll(() => page.locator('#check-progress').textContent(), { timeout: 10_000 }).toMatch(/^[\d,]+ states · [\d,]+ states\/s · depth \d+ · frontier [\d,]+/);
    expect(await page.getByRole('button', { name: 'Check every schedule' }).isDisabled()).toBe(true);
    // The page's thread is free while the worker searches: a round trip and a mechanism operation.
    const t0 = Date.now();
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(r)));
    expect(Date.now() - t0).toBeLessThan(1000);
    await page.click('#tab-mechanism');
    await page.getByRole('button', { name: 'reset barrier' }).click();
    await page.getByRole('button', { name: 'mbarrier.init', exact: true }).click();
    expect(await page.locator('[data-field="pending"] .field-val').textContent()).toBe('1');
    await page.click('#tab-check');
    await shot(page, 'check-progress');
    await page.getByRole('button', { name: 'Cancel the check' }).click();
    await expect.poll(() => page.locator('#check-verdict').textContent()).toBe('Cancelled: no verdict.');
    expect(await page.locator('#check-progress').textContent()).toMatch(/cancelled after/);
    expect(await page.getByRole('button', { name: 'Check every schedule' }).isDisabled()).toBe(false);
    expect(H.errors).toEqual([]);
  });

  test('phase tracking follows a loop of the current kernel', async () => {
    await pick(page, 'file:examples/phase-tracking.mbk');
    await page.click('#tab-phases');
    await page.getByLabel('loop to track').selectOption('kernel');
    expect(await page.getByLabel('role whose loop is tracked').inputValue()).toBe('consumer');
    expect(await page.getByLabel('barrier array waited on').inputValue()).toBe('tma_bar');
    expect(await page.getByLabel('phase variable').inputValue()).toBe('phase_tma');
    await expect.poll(() => page.locator('#phase-note').textContent()).toMatch(/4 iterations/);
    const rows = await page.locator('#phase-table tbody tr').evaluateAll((trs) => trs.map((tr) => Array.from(tr.children).map((td) => td.textContent ?? '')));
    expect(rows).toEqual(seedTable());
    // The pipeline: the MMA warp's waits on full[s], tracking its stage variable.
    await pick(page, 'file:examples/pipeline.mbk');
    await expect.poll(() => page.getByLabel('role whose loop is tracked').locator('option').allTextContents()).toContain('mma');
    await page.getByLabel('role whose loop is tracked').selectOption('mma');
    await page.getByLabel('barrier array waited on').selectOption('full');
    await page.getByLabel('phase variable').selectOption('s');
    await expect.poll(() => page.locator('#phase-note').textContent()).toMatch(/32 iterations/);
    const r2 = await page.locator('#phase-table tbody tr').evaluateAll((trs) => trs.map((tr) => Array.from(tr.children).map((td) => Number(td.textContent))));
    r2.forEach((r, i) => {
      expect(r[1]).toBe(i % 4);
      expect(r[2]).toBe(Math.floor(i / 4) & 1);
      expect(r[4]).toBe(i % 4);
    });
    expect(await page.locator('#phase-table thead th').last().textContent()).toBe('s after iteration');
    await shot(page, 'phases-kernel-pipeline');
    await page.getByLabel('loop to track').selectOption('chapter');
  });

  test('a 100,000-event simulation runs in the worker without blocking input; the chapter’s figures are one click away', async () => {
    await pick(page, 'file:examples/pipeline.mbk');
    await page.click('#tab-timeline');
    await page.getByLabel('parameter K').fill('1700');
    await page.getByLabel('parameter K').press('Enter');
    // While the worker simulates, the main thread still draws frames: a simulation on the
    // main thread would set and clear the busy flag inside one task, with no frame between.
    // (How long a frame may take is a benchmark figure, not a test: it depends on the load.)
    expect(await page.locator('#verdict').textContent()).toBe('simulating…');
    const frames = await page.evaluate(() => new Promise<number>((done) => {
      let n = 0;
      const tick = () => {
        if (document.body.dataset.busy === '1') { n++; requestAnimationFrame(tick); } else done(n);
      };
      requestAnimationFrame(tick);
    }));
    await settled(page);
    await expect.poll(() => page.locator('#verdict').textContent()).toMatch(/^ok · [\d,]+ cycles · 1\d\d,\d{3} events$/);
    expect(frames).toBeGreaterThanOrEqual(1);
    await page.locator('.tl-canvas').focus();
    await page.keyboard.press('End');
    await expect.poll(() => readout(page)).toMatch(/event 1\d\d,\d{3} of 1\d\d,\d{3}/);
    // The figure buttons: figure 3 is the mechanism sketch's timeline.
    await page.getByRole('button', { name: '3 · TMA loads tracked by an mbarrier' }).click();
    await settled(page);
    expect(await page.locator('#example').inputValue()).toBe('file:examples/mechanism.mbk');
    expect(await page.locator('#tab-timeline').getAttribute('aria-selected')).toBe('true');
    await shot(page, 'figure-3');
    await page.getByRole('button', { name: '2 · phase tracking' }).click();
    expect(await page.locator('#tab-phases').getAttribute('aria-selected')).toBe('true');
    expect(H.errors).toEqual([]);
  });

  test('figure 3: the state at the cursor includes the cursor’s event; count rows; the whole description', async () => {
    await page.getByRole('button', { name: '3 · TMA loads tracked by an mbarrier' }).click();
    await settled(page);
    expect(await page.locator('#ex-summary').textContent()).toBe('The chapter\'s mechanism figure: a barrier initialized with count 1, one arrive.expect_tx(4096), two 2,048-byte TMA copies; the phase flips when both the arrival and all bytes are in.');
    expect(await page.locator('#tl-counts').isChecked()).toBe(true);
    await page.locator('.tl-canvas').focus();
    await page.keyboard.press('Home');
    const row = () => page.locator('#bar-table tbody tr').first().textContent();
    const seen: string[] = [];
    // 22 machine events and the consumer's wait where it begins.
    for (let i = 0; i < 23; i++) {
      await page.keyboard.press('ArrowRight');
      await expect.poll(() => readout(page)).toMatch(new RegExp(`event ${i + 1} of 23`));
      const ev = (await page.locator('#cur-event').textContent()) ?? '';
      if (/arrive\.expect_tx\(4096 B\)/.test(ev)) {
        // Armed, no copy issued yet: the producer's turn, not "TMA filling".
        expect(await row()).toBe('bar[0]000 / 14096 B');
        expect(await page.locator('#ring-list').textContent()).toMatch(/free: producer \(expect_tx armed: 4096 B/);
        seen.push('armed');
      }
      if (/issues TMA #\d+/.test(ev) && !seen.includes('issued')) {
        expect(await page.locator('#ring-list').textContent()).toContain('TMA filling');
        seen.push('issued');
      }
      if (/complete_tx\(2048 B\) on bar\[0\]: tx 2048/.test(ev)) {
        expect(await row()).toBe('bar[0]000 / 12048 B');
        seen.push('first copy');
      }
      if (/complete_tx\(2048 B\) on bar\[0\]: tx 0/.test(ev) || /phase 0 completed → parity 1/.test(ev)) {
        // The event at the cursor is in the table and the ring at once.
        expect(await row(), ev).toBe('bar[0]111 / 10 B');
        expect(await page.locator('#ring-list').textContent()).toContain('ready: consumer');
        seen.push('phase');
        if (/phase 0 completed/.test(ev)) {
          expect(await page.locator('#ring-handoff').textContent()).toContain('Handoff at the cursor: bar[0] completed phase 0');
          await shot(page, 'fig3-phase-completed');
        }
      }
    }
    expect(seen).toEqual(expect.arrayContaining(['armed', 'issued', 'first copy', 'phase']));
    expect(H.errors).toEqual([]);
  });

  test('figure 4: the ring shows where each role is, the handoffs and a legend for the phases', async () => {
    await page.getByRole('button', { name: '4 · full/empty protocol' }).click();
    await settled(page);
    await page.locator('.tl-canvas').focus();
    await page.keyboard.press('Home');
    for (let i = 0; i < 6; i++) await page.keyboard.press('Shift+ArrowRight');
    await expect.poll(() => page.locator('#ring-where').textContent()).toMatch(/^Now: producer .*\(stage \d\); mma .*/);
    await expect.poll(() => page.locator('#ring-handoff').textContent()).toMatch(/full\[\d\] completed phase \d+, so stage \d passed producer → mma|empty\[\d\] completed phase \d+, so stage \d passed mma → producer \(buffer free\)|No handoff yet/);
    expect(await page.locator('#panel-timeline .ring-legend').textContent()).toContain('“full ph 1 (p1)”: its full barrier is in phase 1, parity 1');
    await expect.poll(() => page.locator('#panel-timeline .role-marker.b-producer').getAttribute('visibility')).toBe('visible');
    // Every text inside a stage fits its circle.
    const overflow = await page.evaluate(() => Array.from(document.querySelectorAll('#panel-timeline .ring g.stage')).flatMap((g) => {
      const c = g.querySelector('circle')!.getBoundingClientRect();
      return Array.from(g.querySelectorAll('text')).filter((t) => {
        const r = t.getBoundingClientRect();
        return r.width > 0 && (r.left < c.left - 0.5 || r.right > c.right + 0.5);
      }).map((t) => t.textContent);
    }));
    expect(overflow).toEqual([]);
    await page.locator('.ring-view').first().scrollIntoViewIfNeeded();
    await shot(page, 'fig4-ring');
  });

  test('B01: the normal timeline draws the blocked waiter until the end, labelled', async () => {
    await pick(page, 'file:examples/bugs/B01.mbk');
    await page.click('#tab-timeline');
    const blocked = await page.evaluate(() => {
      const m = (window as unknown as { __mbsim: { model: { spans: { kind: string; lane: string; t1: number; label: string }[]; end: number } } }).__mbsim.model;
      return m.spans.filter((s) => s.kind === 'blocked').map((s) => ({ lane: s.lane, toEnd: s.t1 === m.end, label: s.label }));
    });
    // Each of the consumer's four warps is an agent with a lane of its own.
    expect(blocked).toEqual(['1', '2', '3', '4'].map((lane) => ({ lane, toEnd: true, label: 'blocked forever: mbarrier.try_wait.parity full[0], 0' })));
    // The four warps did the same thing: one role row for them, collapsed into one strip per warp.
    const lanes = await page.evaluate(() => (window as unknown as { __mbsim: { timeline: { lanes: { label: string; kind: string; open?: boolean; y: number }[] } } }).__mbsim.timeline.lanes);
    const role = lanes.find((l) => l.kind === 'role' && l.label === 'consumer')!;
    expect(role.open).toBe(false);
    // Hover the first warp's strip near the end: the tooltip says the wait never ends.
    const box = (await page.locator('.tl-canvas').boundingBox())!;
    await page.mouse.move(box.x + box.width - 40, box.y + role.y + 4);
    await expect.poll(() => page.locator('.tl-tip').textContent()).toMatch(/consumer\.w0: blocked forever: .*this wait never ends/);
    await shot(page, 'b01-timeline-blocked');
    await page.mouse.move(0, 0);
  });

  test('phase tracking of the pipeline’s producer on empty: the first waits pass at once', async () => {
    await pick(page, 'file:examples/pipeline.mbk');
    await page.click('#tab-phases');
    await page.getByLabel('loop to track').selectOption('kernel');
    // Tracking the kernel's loop: the header's parameters apply again.
    expect(await page.locator('.params').isVisible()).toBe(true);
    await page.getByLabel('role whose loop is tracked').selectOption('producer');
    await page.getByLabel('barrier array waited on').selectOption('empty');
    await expect.poll(() => page.locator('#phase-note').textContent()).toMatch(/32 iterations/);
    const col = await page.locator('#phase-table tbody tr td:nth-child(4)').allTextContents();
    expect(col.slice(0, 4)).toEqual(Array(4).fill('passed at once (no phase completed; the barrier is still in phase 0)'));
    expect(col[4]).toBe('1');
    await page.locator('#phase-table tbody tr').first().click();
    expect(await page.locator('#phase-explain').textContent()).toContain('empty[0] is still in phase 0 (parity 0): no phase has completed');
    expect(await page.locator('#phase-explain').textContent()).not.toContain('advances');
    await shot(page, 'phases-producer-empty');
    await page.getByLabel('loop to track').selectOption('chapter');
  });

  test('figure 1: the wait result follows the barrier; the chapter figure counts its steps; early bytes', async () => {
    await page.getByRole('button', { name: '1 · mbarrier state and operations' }).click();
    await page.getByRole('button', { name: 'Reset barrier' }).click();
    const fig = page.locator('#fig-step');
    expect(await fig.textContent()).toBe('Chapter figure: step 1 of 4');
    for (let k = 1; k <= 4; k++) {
      await fig.click();
      expect(await page.locator('#seed-caption').textContent()).toMatch(new RegExp(`^Step ${k} of 4 of the chapter’s figure`));
    }
    expect(await page.locator('#seed-caption').textContent()).toContain('The figure is complete');
    expect(await fig.textContent()).toBe('Chapter figure: start over (step 1 of 4)');
    // The parity field does not wrap: its phase is on a line of its own.
    expect(await page.locator('[data-field="phase"] .field-val').textContent()).toBe('1phase 1');
    expect(await page.getByRole('button', { name: 'Phase parity field: 1 (phase 1)' }).count()).toBe(1);
    expect(await page.getByRole('button', { name: 'tx-count field: 0 B' }).count()).toBe(1);
    // try_wait(0) passes; two more arrivals make the shown result follow the barrier.
    await page.getByLabel('try_wait parity').selectOption('0');
    await page.getByRole('button', { name: 'try_wait.parity', exact: true }).click();
    expect(await page.locator('#wait-result').textContent()).toMatch(/^try_wait\.parity\(0\) → true:/);
    await page.getByRole('button', { name: 'mbarrier.arrive', exact: true }).click();
    expect(await page.locator('#wait-result').textContent()).toMatch(/^try_wait\.parity\(0\) → false \(re-evaluated after the last operation\)/);
    await page.getByRole('button', { name: 'mbarrier.arrive', exact: true }).click();
    expect(await page.locator('#wait-result').textContent()).toMatch(/^try_wait\.parity\(0\) → true \(re-evaluated/);
    await shot(page, 'fig1-wait-follows');
    // complete_tx before expect_tx: a negative tx-count in words.
    await page.getByRole('button', { name: 'Reset barrier' }).click();
    await page.getByLabel('init count').fill('1');
    await page.getByRole('button', { name: 'mbarrier.init', exact: true }).click();
    await page.getByLabel('complete_tx bytes').fill('2048');
    await page.getByRole('button', { name: 'complete_tx', exact: true }).click();
    expect(await page.locator('#mech-status').textContent()).toBe('Phase 0 (parity 0): waiting for 1 of 1 arrival and 2048 bytes credited before they were expected.');
    expect(await page.locator('#cond-verdict').textContent()).not.toMatch(/-2048/);
    await shot(page, 'fig1-early-bytes');
  });

  test('the kernel menu lists each kernel once', async () => {
    const labels = await page.locator('#example option:not([hidden])').allTextContents();
    const names = labels.map((l) => l.replace(/\.mbk$/, '').replace(/ \(built-in\)$/, ''));
    expect(new Set(names).size).toBe(names.length);
    expect(await page.locator('#example optgroup').evaluateAll((gs) => gs.map((g) => g.getAttribute('label')))).toEqual(['Sketch files (examples/*.mbk)', 'Buggy sketch files (examples/bugs)']);
    // A link to a built-in example still opens it.
    const p2 = await H.open('ex=hopper');
    expect(await p2.locator('#example').inputValue()).toBe('ex:hopper');
    expect(await p2.locator('#ex-summary').textContent()).toContain('built-in');
    await p2.close();
  });

  test('controls have accessible names', async () => {
    const unnamed = await page.evaluate(() => {
      const out: string[] = [];
      for (const el of Array.from(document.querySelectorAll('button, input, select, [role="slider"], canvas[tabindex]'))) {
        const e = el as HTMLElement;
        const labelled = e.getAttribute('aria-label') || e.getAttribute('aria-labelledby') || (e.id && document.querySelector(`label[for="${e.id}"]`)) || e.closest('label') || (e.tagName === 'BUTTON' && e.textContent?.trim());
        if (!labelled && !e.closest('.cm-editor, .cm-panels')) out.push(e.outerHTML.slice(0, 80));
      }
      return out;
    });
    expect(unnamed).toEqual([]);
    // Buttons whose text is their name: the name is the visible text (figure buttons, operations).
    const mismatched = await page.evaluate(() => Array.from(document.querySelectorAll('nav.figures button, .ops button'))
      .filter((b) => b.getAttribute('aria-label') !== null).map((b) => b.textContent));
    expect(mismatched).toEqual([]);
    // Label in name (WCAG 2.5.3): the buttons a user says by their text answer to that text.
    expect(await page.locator('#check-run').getAttribute('aria-label')).toBeNull();
    expect(await page.getByRole('button', { name: 'Check every schedule', exact: true, includeHidden: true }).count()).toBe(1);
    expect(await page.getByRole('button', { name: 'Copy link', exact: true }).count()).toBe(1);
  });

  test('mbsim serve FILE: the server offers the file and the app opens it', async () => {
    const file = join(REPO, 'examples', 'bugs', 'B01.mbk');
    const srv = await startServer({ root: H.root, port: 0, file });
    try {
      const p = await H.open('', srv.url);
      await expect.poll(() => p.locator('#ex-summary').textContent()).toContain('B01.mbk (the file mbsim serve opened)');
      await expect.poll(() => p.locator('#verdict').textContent()).toMatch(/^hang/);
      await p.click('#tab-timeline');
      await shot(p, 'serve-file-B01');
      await p.close();
      const res = await fetch(`${srv.url}../etc/passwd`);
      expect(res.status).not.toBe(200);
      // A raw request (fetch would normalize the path) that decodes to ../../package.json.
      const status = await new Promise<number>((ok, fail) => {
        request({ host: '127.0.0.1', port: srv.port, path: '/..%2f..%2fpackage.json' }, (r) => {
          r.resume();
          ok(r.statusCode ?? 0);
        }).on('error', fail).end();
      });
      expect(status).toBe(403);
    } finally {
      await srv.close();
    }
  });
});
