/**
 * A person's first visit to a fresh `./kitty` with no base URL set, in Debian's Chromium (playwright-core)
 * with a WebAuthn virtual authenticator: the address the banner prints is http://localhost:PORT; through it
 * the account page → sign-in → passkey sign-up → sign-out → passkey sign-in; the passkey is renamed; an
 * agent is created; an app's consent page shows the existing agent chosen (new-agent fields hidden) with
 * Allow as the primary button. Sign-in and consent are checked with axe-core (no serious or critical
 * findings) and saved at 375 and 1280 px in test-artifacts/first-run/; no console error, no failed
 * request (favicon included). The same page through http://127.0.0.1:PORT names the address to use.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Browser, type Page } from 'playwright-core';
import { createTestDatabase } from '@kitty/db';
import { startServerProcess, type ServerProcess } from '../process-harness.ts';
import { addVirtualPasskeyDevice, expectAccessible, launchChromium } from '../browser.ts';

const ARTIFACTS = path.resolve(import.meta.dirname, '../../test-artifacts/first-run');
const cleanups: Array<() => Promise<unknown>> = [];
let server: ServerProcess;
let browser: Browser;
let page: Page;
const problems: string[] = [];

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  const db = await createTestDatabase();
  cleanups.push(() => db.drop());
  server = await startServerProcess({ DATABASE_URL: db.databaseUrl, KITTY_BASE_URL: '', KITTY_AUTH_RATE_LIMIT: '100000' });
  cleanups.push(() => server.stop());
  browser = await launchChromium();
  cleanups.push(() => browser.close());
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  page = await context.newPage();
  await addVirtualPasskeyDevice(await context.newCDPSession(page));
  page.on('console', (m) => void (m.type() === 'error' && problems.push(`console: ${m.text()}`)));
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('response', (r) => void (r.status() >= 400 && problems.push(`${r.status()} ${r.url()}`)));
}, 120_000);

afterAll(async () => {
  for (const fn of cleanups.reverse()) await fn().catch(() => {});
});

async function snap(name: string): Promise<void> {
  for (const width of [375, 1280]) {
    await page.setViewportSize({ width, height: 800 });
    const overflow = (await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth')) as number;
    expect(overflow, `${name} scrolls sideways at ${width} px`).toBeLessThanOrEqual(0);
    await page.screenshot({ path: path.join(ARTIFACTS, `${name}-${width}.png`), fullPage: true });
  }
  await expectAccessible(page, name);
}

describe('first run at the printed address', () => {
  it('passkey sign-up and sign-in, rename, consent, through http://localhost:PORT', async () => {
    const base = server.printedUrl;
    expect(base).toBe(`http://localhost:${new URL(server.url).port}`);
    expect(server.output()).toContain(`account page ${base}/account`);

    await page.goto(`${base}/account`);
    await page.getByRole('link', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Sign in to Kitty' }).waitFor();
    await page.getByText('PIN, fingerprint or face').waitFor();
    await snap('signin');
    await page.getByLabel('Your name').fill('Sam');
    await page.getByRole('button', { name: 'Create an account with a passkey' }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    const favicon = await page.request.get(`${base}/favicon.ico`);
    expect(favicon.status()).toBe(200);

    await page.getByRole('button', { name: 'Sign out' }).click();
    // Signing out navigates to the sign-in page itself: wait for it, or the next navigation races it (ERR_ABORTED).
    await page.getByRole('heading', { level: 1, name: 'Sign in to Kitty' }).waitFor();
    await page.goto(`${base}/signin?return_to=/account/security`);
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await page.getByRole('heading', { level: 1, name: 'Sign-in & security' }).waitFor();

    // The virtual authenticator has no known AAGUID: "Passkey"; the person renames it.
    const row = page.getByRole('list', { name: 'Your passkeys' }).getByRole('listitem');
    await row.getByText('Passkey', { exact: true }).waitFor();
    await row.getByRole('button', { name: 'Rename' }).click();
    await page.getByRole('dialog').getByLabel('New name').fill('Test laptop');
    await page.getByRole('dialog').getByRole('button', { name: 'Save' }).click();
    await row.getByText('Test laptop', { exact: true }).waitFor();
    await page.getByText('was Passkey').waitFor(); // the security log

    await page.getByRole('link', { name: 'My agents' }).click();
    await page.getByLabel('Handle').fill(`sam-helper-${randomBytes(3).toString('hex')}`);
    await page.getByLabel('Display name').fill('Sam’s helper');
    await page.getByRole('button', { name: 'Create agent' }).click();
    await page.getByRole('button', { name: 'I have stored the key' }).click();

    // An app asks to connect: the consent page.
    const redirect = 'http://127.0.0.1:53690/callback';
    const reg = await fetch(`${base}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        client_name: 'First-run app',
        redirect_uris: [redirect],
        token_endpoint_auth_method: 'none',
        response_types: ['code'],
      }),
    });
    const clientId = ((await reg.json()) as { client_id: string }).client_id;
    const authorize = new URL(`${base}/oauth/authorize`);
    const challenge = createHash('sha256').update(randomBytes(32).toString('base64url')).digest('base64url');
    for (const [k, v] of Object.entries({
      client_id: clientId,
      response_type: 'code',
      redirect_uri: redirect,
      scope: 'svc:read svc:write',
      state: 's1',
      resource: `${base}/mcp`,
      code_challenge: challenge,
      code_challenge_method: 'S256',
    }))
      authorize.searchParams.set(k, v);
    await page.goto(authorize.href);
    await page.getByRole('heading', { level: 1, name: /First-run app/ }).waitFor();
    expect(await page.getByLabel(/Sam’s helper/).isChecked()).toBe(true);
    expect(await page.getByLabel(/Handle of the new agent/).isVisible()).toBe(false);
    const buttons = page.getByRole('button');
    expect(await buttons.allTextContents()).toEqual(['Allow', 'Deny']);
    expect(await page.getByRole('button', { name: 'Allow' }).getAttribute('class')).toBe('primary');
    await snap('consent');
    await page.getByLabel('A new agent').check();
    expect(await page.getByLabel(/Handle of the new agent/).isVisible()).toBe(true);
    await snap('consent-new-agent');

    expect(problems).toEqual([]);
  }, 180_000);

  it('the pages through 127.0.0.1 name the address to use', async () => {
    const other = await browser.newPage();
    try {
      const port = new URL(server.url).port;
      const r = await other.goto(`http://127.0.0.1:${port}/account`);
      expect(r?.status()).toBe(421);
      await other.getByRole('link', { name: `http://localhost:${port}/account` }).waitFor();
      await other.screenshot({ path: path.join(ARTIFACTS, 'other-host-1280.png') });
      await expectAccessible(other, 'other host');
    } finally {
      await other.close();
    }
  });
});
