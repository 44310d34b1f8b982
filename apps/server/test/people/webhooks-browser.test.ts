/**
 * The account page's Webhooks section in Chromium (playwright-core, Debian's browser): a person signs up
 * with a passkey and creates an agent; the agent creates two webhooks to a real local receiver (loopback
 * allowed, as KITTY_WEBHOOK_ALLOW_LOOPBACK=true does) and causes events. The page shows each endpoint
 * with its deliveries (time, event type, status, attempts: a retried delivery shows 2); the person
 * pauses one (nothing arrives while paused), resumes it (the waiting event arrives) and deletes the
 * other; the agent's own list_webhooks agrees each time and the security log names each change. axe
 * finds no serious violation, nothing scrolls sideways at 375 px, no console error or failed request.
 * Screenshots in test-artifacts/account/webhooks-*.png.
 */
import http from 'node:http';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import type { TestServer } from '../server-harness.ts';
import { startLocalhostServer } from '../oauth-harness.ts';
import { addVirtualPasskeyDevice, expectAccessible, launchChromium } from '../browser.ts';

const ARTIFACTS = path.resolve(import.meta.dirname, '../../test-artifacts/account');
let server: TestServer;
let receiver: http.Server;
let hooks = '';
let browser: Browser;
let page: Page;
const problems: string[] = [];
/** Deliveries received: path and webhook-id. */
const got: Array<{ path: string; id: string }> = [];
/** Paths that answer 500 this many more times before 204. */
const failuresLeft = new Map<string, number>();

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  receiver = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const p = req.url ?? '/';
      got.push({ path: p, id: String(req.headers['webhook-id']) });
      const left = failuresLeft.get(p) ?? 0;
      if (left > 0) {
        failuresLeft.set(p, left - 1);
        return void res.writeHead(500).end('try later');
      }
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  hooks = `http://127.0.0.1:${(receiver.address() as { port: number }).port}`;
  server = await startLocalhostServer({
    webhooks: {
      enabled: true,
      allowLoopback: true,
      retryDelaySeconds: 1,
      retryDelayMaxSeconds: 1,
      retryWindowSeconds: 60,
      timeoutMs: 2000,
      maxInFlight: 4,
    },
  });
  browser = await launchChromium();
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  page = await context.newPage();
  await addVirtualPasskeyDevice(await context.newCDPSession(page));
  page.on('console', (m) => {
    if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) problems.push(m.text());
  });
  page.on('response', (r) => {
    if (r.status() >= 400 && !r.url().endsWith('/favicon.ico')) problems.push(`${r.status()} ${r.url()}`);
  });
  page.on('pageerror', (e) => problems.push(e.message));
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  receiver?.closeAllConnections();
  await new Promise((r) => receiver?.close(r));
});

async function rest(tool: string, key: string, body: Record<string, unknown> = {}) {
  const read = tool.startsWith('get_') || tool.startsWith('list_');
  const r = await server.http(`/v1/tools/${tool}`, { apiKey: key, body: read ? body : { idempotency_key: `w-${Math.random()}`, ...body } });
  if (r.status !== 200) throw new Error(`${tool}: ${r.text}`);
  return r.json.data;
}

async function until<T>(f: () => T | false | undefined | null | Promise<T | false | undefined | null>, ms = 20_000): Promise<T> {
  const t0 = Date.now();
  for (;;) {
    const v = await f();
    if (v) return v;
    if (Date.now() - t0 > ms) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 100));
  }
}

type Hook = { webhook_id: string; paused: boolean; recent_deliveries: Array<{ status: string; event_type: string; attempts: number }> };

async function snap(name: string): Promise<void> {
  for (const width of [375, 1280]) {
    await page.setViewportSize({ width, height: 900 });
    const overflow = (await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth')) as number;
    expect(overflow, `${name} scrolls sideways at ${width} px`).toBeLessThanOrEqual(0);
    await page.screenshot({ path: path.join(ARTIFACTS, `webhooks-${name}-${width}.png`), fullPage: true });
  }
  await expectAccessible(page, `webhooks ${name}`);
}

describe('webhooks on the account page', () => {
  it('shows deliveries, pauses, resumes and deletes an endpoint', async () => {
    const base = server.url;
    await page.goto(`${base}/signin?return_to=%2Faccount`);
    await page.getByLabel('Your name').fill('Wendy');
    await page.getByRole('button', { name: 'Create an account with a passkey' }).click();
    await page.waitForURL(`${base}/account`);
    await page.getByRole('link', { name: 'My agents' }).click();
    const handle = `hook-${Date.now().toString(36)}`;
    await page.getByLabel('Handle').fill(handle);
    await page.getByLabel('Display name').fill('Hook agent');
    await page.getByRole('button', { name: 'Create agent' }).click();
    const code = page.getByLabel('API key', { exact: true });
    await code.waitFor();
    const key = (await code.textContent())!.trim();

    // The agent's endpoints: /books gets every event (its first delivery fails once, then succeeds), /pings only pings.
    failuresLeft.set('/books', 1);
    const books = (await rest('create_webhook', key, { url: `${hooks}/books`, description: 'Bookkeeping sync' })).webhook;
    const pings = (await rest('create_webhook', key, { url: `${hooks}/pings`, event_types: ['webhook.disabled'] })).webhook;
    const g = (await rest('create_group', key, { name: 'Flat', currency: 'EUR' })).group.group_id;
    await rest('add_expense', key, { group_id: g, description: 'Rent', amount_minor: 90_000 });
    await rest('test_webhook', key, { webhook_id: pings.webhook_id });
    const listed = async () => (await rest('list_webhooks', key)).webhooks as Hook[];
    const mine = async (id: string) => (await listed()).find((w) => w.webhook_id === id)!;
    await until(async () => {
      const all = await listed();
      return all.every((w) => w.recent_deliveries.length > 0 && w.recent_deliveries.every((d) => d.status === 'delivered'));
    });
    const booksSeen = (await mine(books.webhook_id)).recent_deliveries;
    expect(booksSeen.map((d) => d.event_type)).toContain('expense.created');
    expect(booksSeen.map((d) => d.attempts).sort()).toEqual([...booksSeen.map(() => 1).slice(1), 2]);

    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('heading', { level: 1, name: 'Webhooks' }).waitFor();
    const booksRow = page.getByRole('listitem', { name: `${hooks}/books` });
    const pingsRow = page.getByRole('listitem', { name: `${hooks}/pings` });
    await booksRow.waitFor();
    // Each delivery the tool lists is a row: event type, status, attempts.
    const rows = booksRow.getByRole('table', { name: 'Recent deliveries' }).locator('tbody tr');
    await expect(rows.count()).resolves.toBe(booksSeen.length);
    const cells = await rows.evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)));
    expect(cells.map((c) => [c[1], c[2], Number(c[3])])).toEqual(booksSeen.map((d) => [d.event_type, 'delivered (HTTP 204)', d.attempts]));
    expect(cells.every((c) => /\d{4}/.test(c[0] ?? ''))).toBe(true);
    await expect(booksRow.getByText('Bookkeeping sync').count()).resolves.toBe(1);
    await expect(pingsRow.getByRole('cell', { name: 'ping', exact: true }).count()).resolves.toBe(1);
    await expect(pingsRow.getByText('webhook.disabled').count()).resolves.toBe(1);
    await snap('list');

    // Pause /books: the tool sees it paused, and a new event does not arrive.
    await booksRow.getByRole('button', { name: 'Pause' }).click();
    await booksRow.getByText('paused', { exact: true }).waitFor();
    await page.getByRole('status').filter({ hasText: 'Paused' }).waitFor();
    expect((await mine(books.webhook_id)).paused).toBe(true);
    const before = got.filter((x) => x.path === '/books').length;
    await rest('add_expense', key, { group_id: g, description: 'Internet', amount_minor: 3_000 });
    await new Promise((r) => setTimeout(r, 2500));
    expect(got.filter((x) => x.path === '/books').length).toBe(before);
    await snap('paused');

    // Resume: the waiting event goes out.
    await booksRow.getByRole('button', { name: 'Resume' }).click();
    await booksRow.getByText('active', { exact: true }).waitFor();
    await until(() => got.filter((x) => x.path === '/books').length > before);
    expect((await mine(books.webhook_id)).paused).toBe(false);

    // Delete /pings, after the confirmation dialog.
    await pingsRow.getByRole('button', { name: 'Delete' }).click();
    const dialog = page.getByRole('dialog', { name: `Delete the endpoint ${hooks}/pings?` });
    await dialog.waitFor();
    await page.screenshot({ path: path.join(ARTIFACTS, 'webhooks-delete-dialog-1280.png') });
    await expectAccessible(page, 'webhooks delete dialog');
    await dialog.getByRole('button', { name: 'Delete endpoint' }).click();
    await page.getByRole('status').filter({ hasText: 'Deleted' }).waitFor();
    await pingsRow.waitFor({ state: 'detached' });
    expect((await listed()).map((w) => w.webhook_id)).toEqual([books.webhook_id]);
    // The resumed endpoint's newest delivery shows on the page once it is listed.
    await page.reload();
    await booksRow.getByRole('cell', { name: 'expense.created' }).first().waitFor();
    await snap('after');

    // The security log names each change with the endpoint.
    await page.getByRole('link', { name: 'Sign-in & security' }).click();
    for (const what of ['Webhook paused', 'Webhook resumed', 'Webhook deleted']) await page.getByText(what).first().waitFor();
    await expect(page.getByText(`${hooks}/pings`).count()).resolves.toBe(1);
    expect(problems).toEqual([]);
  });
});
