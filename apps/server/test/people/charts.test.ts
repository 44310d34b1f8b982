/**
 * The overview's spending charts in Chromium (playwright-core, Debian's browser): a person signs up
 * with a passkey, creates an agent, the agent books expenses over REST in two months and three
 * categories; the overview then draws, per group, a chart by month and one by category. Checked:
 * the numbers behind each chart (its text alternative) equal get_group_stats, the canvases are
 * painted, nothing violates the page's CSP, nothing scrolls sideways at 375 px, axe finds no
 * serious violation. Screenshots in test-artifacts/account/charts-*.png.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import type { TestServer } from '../server-harness.ts';
import { startLocalhostServer } from '../oauth-harness.ts';
import { addVirtualPasskeyDevice, expectAccessible, launchChromium } from '../browser.ts';

const ARTIFACTS = path.resolve(import.meta.dirname, '../../test-artifacts/account');
let server: TestServer;
let browser: Browser;
let page: Page;
const problems: string[] = [];

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  server = await startLocalhostServer();
  browser = await launchChromium();
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  page = await context.newPage();
  await addVirtualPasskeyDevice(await context.newCDPSession(page));
  // CSP refusals and script errors show up as console errors / page errors.
  page.on('console', (m) => {
    if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) problems.push(m.text());
  });
  // Failed loads are judged by URL (the browser asks for /favicon.ico, which Kitty does not have).
  page.on('response', (r) => {
    if (r.status() >= 400 && !r.url().endsWith('/favicon.ico')) problems.push(`${r.status()} ${r.url()}`);
  });
  page.on('pageerror', (e) => problems.push(e.message));
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

async function rest(tool: string, key: string, body: Record<string, unknown>) {
  const r = await server.http(`/v1/tools/${tool}`, {
    apiKey: key,
    body: tool.startsWith('get_') ? body : { idempotency_key: `c-${Math.random()}`, ...body },
  });
  if (r.status !== 200) throw new Error(`${tool}: ${r.text}`);
  return r.json.data;
}

describe('spending charts on the overview', () => {
  it('draws by month and by category from the ledger, at 375 and 1280 px, within the CSP', async () => {
    const base = server.url;
    await page.goto(`${base}/signin?return_to=%2Faccount`);
    await page.getByLabel('Your name').fill('Charlie');
    await page.getByRole('button', { name: 'Create an account with a passkey' }).click();
    await page.waitForURL(`${base}/account`);
    await page.getByRole('link', { name: 'My agents' }).click();
    const handle = `chart-${Date.now().toString(36)}`;
    await page.getByLabel('Handle').fill(handle);
    await page.getByLabel('Display name').fill('Chart agent');
    await page.getByRole('button', { name: 'Create agent' }).click();
    const code = page.getByLabel('API key', { exact: true });
    await code.waitFor();
    const key = (await code.textContent())!.trim();

    const friend = await server.agent('friend');
    const g = (await rest('create_group', key, { name: 'Lisbon trip', currency: 'EUR' })).group.group_id;
    const inv = (await rest('create_invite', key, { group_id: g })).invite;
    await rest('join_group', friend.apiKey, { code: inv.code });
    const expenses: Array<[string, number, string, string]> = [
      ['Flights', 48_000, '2026-09-02', 'transport'],
      ['Groceries', 6_350, '2026-09-03', 'food'],
      ['Dinner', 9_120, '2026-10-01', 'food'],
      ['Tram', 1_260, '2026-10-02', 'transport'],
      ['Museum', 2_400, '2026-10-02', ''],
    ];
    for (const [description, amount_minor, date, category] of expenses)
      await rest('add_expense', key, { group_id: g, description, amount_minor, date, ...(category ? { category } : {}) });
    const byMonth = await rest('get_group_stats', key, { group_id: g, by: 'month' });
    const byCat = await rest('get_group_stats', key, { group_id: g, by: 'category' });

    await page.getByRole('link', { name: 'Overview' }).click();
    const charts = page.getByRole('region', { name: 'Spending in Lisbon trip' });
    await charts.waitFor();
    const canvases = charts.locator('canvas');
    await expect(canvases.count()).resolves.toBe(2);
    const [monthLabel, catLabel] = [await canvases.nth(0).getAttribute('aria-label'), await canvases.nth(1).getAttribute('aria-label')];
    // The text alternative lists every row the tool returns, in the tool's order.
    const fmt = (minor: number) => new Intl.NumberFormat('en-US', { style: 'currency', currency: 'EUR' }).format(minor / 100);
    expect(monthLabel).toBe(`By month: ${byMonth.rows.map((r: any) => `${r.key} ${fmt(r.total_minor)}`).join(', ')}`);
    expect(catLabel).toBe(`By category: ${byCat.rows.map((r: any) => `${r.key} ${fmt(r.total_minor)}`).join(', ')}`);
    expect(byCat.rows.map((r: any) => r.key)).toEqual(['transport', 'food', 'general']);
    await expect(charts.getByRole('heading', { level: 3 }).textContent()).resolves.toContain(fmt(67_130));

    // The bars are painted: count the accent-blue pixels on each canvas.
    const painted = async () =>
      (await page.evaluate(`[...document.querySelectorAll('canvas')].map((c) => {
        const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let n = 0;
        for (let i = 0; i < d.length; i += 4) if (d[i] === 29 && d[i + 1] === 78 && d[i + 2] === 216) n++;
        return n;
      })`)) as number[];
    for (const n of await painted()) expect(n).toBeGreaterThan(200);
    await expectAccessible(page, 'overview with charts');
    await page.screenshot({ path: path.join(ARTIFACTS, 'charts-1280.png'), fullPage: true });

    await page.setViewportSize({ width: 375, height: 800 });
    await page.waitForTimeout(300); // Chart.js redraws on resize
    const overflow = (await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth')) as number;
    expect(overflow).toBeLessThanOrEqual(0);
    const width = (await page.evaluate(`document.querySelector('canvas').getBoundingClientRect().width`)) as number;
    expect(width).toBeGreaterThan(250);
    expect(width).toBeLessThanOrEqual(375);
    for (const n of await painted()) expect(n).toBeGreaterThan(100);
    await charts.screenshot({ path: path.join(ARTIFACTS, 'charts-375.png') });
    await page.screenshot({ path: path.join(ARTIFACTS, 'charts-page-375.png'), fullPage: true });
    expect(problems).toEqual([]);
  });
});
