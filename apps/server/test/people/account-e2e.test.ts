/**
 * The account page end to end, as a person uses it: Debian's Chromium driven by playwright-core, with a
 * WebAuthn virtual authenticator (CDP) standing in for the person's passkey, against a real Kitty at
 * http://localhost:PORT (WebAuthn needs a domain as RP ID).
 *
 * Sign up with a passkey → create an agent (key shown once) → use the key on REST → a read-only key is
 * FORBIDDEN required_scope on a write tool → rotate (old key keeps working) → revoke (401) → connect an MCP
 * client through OAuth → it is listed under connected apps → disconnect → its next call is 401 → claim a
 * headless agent → add a second passkey → sign out. Every page is checked with axe-core (no serious or
 * critical violations) and saved as PNG at 375 px and 1280 px in test-artifacts/account/.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Browser, type BrowserContext, type CDPSession, type Page } from 'playwright-core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import type { TestServer } from '../server-harness.ts';
import { TestOAuthProvider, startLocalhostServer, startsOAuth } from '../oauth-harness.ts';
import { addVirtualPasskeyDevice, expectAccessible, launchChromium } from '../browser.ts';
import { SERVER_DIR } from '../paths.ts';

const ARTIFACTS = path.join(SERVER_DIR, 'test-artifacts', 'account');
const REDIRECT = 'http://127.0.0.1:53683/callback';

let server: TestServer;
let base: string;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let cdp: CDPSession;
let authenticatorId: string;

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  server = await startLocalhostServer();
  base = server.url;
  browser = await launchChromium();
  context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
  page = await context.newPage();
  cdp = await context.newCDPSession(page);
  authenticatorId = await addVirtualPasskeyDevice(cdp);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

/** Screenshots at 1280 px and 375 px (full page), then back to 1280. */
async function snap(name: string): Promise<void> {
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}-1280.png`), fullPage: true });
  await page.setViewportSize({ width: 375, height: 800 });
  // Nothing may overflow sideways at 375 px.
  const overflow = (await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth')) as number;
  expect(overflow, `${name} scrolls sideways at 375 px`).toBeLessThanOrEqual(0);
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}-375.png`), fullPage: true });
  await page.setViewportSize({ width: 1280, height: 900 });
}

async function rest(tool: string, key: string, body: Record<string, unknown> = {}) {
  return server.http(`/v1/tools/${tool}`, { apiKey: key, body });
}

/** Opens a confirmation dialog with `button`, checks Escape cancels it, then confirms. */
async function confirm(button: ReturnType<Page['getByRole']>, confirmName: string | RegExp): Promise<void> {
  await button.click();
  const dialog = page.getByRole('dialog');
  await expect(dialog.isVisible()).resolves.toBe(true);
  await page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'hidden' });
  await button.click();
  await page.getByRole('dialog').getByRole('button', { name: confirmName }).click();
}

async function secretShown(): Promise<string> {
  const code = page.getByLabel('API key', { exact: true });
  await code.waitFor();
  const key = (await code.textContent())!.trim();
  expect(key).toMatch(/^kitty_/);
  return key;
}

describe('the account page in a browser', () => {
  it('does everything a person needs, accessibly, at 375 and 1280 px', async () => {
    // Not signed in: the page offers sign-in.
    await page.goto(`${base}/account`);
    await page.getByRole('link', { name: 'Sign in' }).waitFor();
    await expectAccessible(page, 'signed out');
    await snap('01-signed-out');

    // Sign up with a passkey (the sign-in page), back to the account page.
    await page.getByRole('link', { name: 'Sign in' }).click();
    await page.waitForURL(/\/signin\?return_to=%2Faccount/);
    await page.getByLabel('Your name').fill('Robin');
    await page.getByRole('button', { name: 'Create an account with a passkey' }).click();
    await page.waitForURL(`${base}/account`);
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    await page.getByText('You have no agents yet.').waitFor();
    await expectAccessible(page, 'overview, empty');
    await snap('02-overview-empty');

    // Keyboard: the navigation works without a mouse.
    await page.getByRole('link', { name: 'My agents' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: 'My agents' }).waitFor();
    expect(await page.getByRole('link', { name: 'My agents' }).getAttribute('aria-current')).toBe('page');
    await page.getByText(/No agents yet/).waitFor();
    await snap('03-agents-empty');

    // Create an agent: the key is shown once, with a copy button and a warning.
    const handle = `robin-${Date.now().toString(36)}`;
    await page.getByLabel('Handle').fill(handle);
    await page.getByLabel('Display name').fill('Robin’s agent');
    await page.getByRole('button', { name: 'Create agent' }).click();
    const apiKey = await secretShown();
    await page.getByText('it is shown only once').waitFor();
    await page.getByRole('button', { name: 'Copy key' }).click();
    await page.getByText('Copied to the clipboard.').waitFor();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(apiKey);
    await expectAccessible(page, 'agent created, key shown');
    await snap('04-agent-created-key-once');
    await page.getByRole('button', { name: 'I have stored the key' }).click();
    expect(await page.getByLabel('API key', { exact: true }).count()).toBe(0);

    // Its key works against REST.
    const me = await rest('get_me', apiKey);
    expect(me.status).toBe(200);
    expect(me.json.data.agent.handle).toBe(handle);

    // Keys of the agent: a read-only key is refused a write tool (FORBIDDEN, required_scope).
    await page.getByRole('link', { name: 'Robin’s agent' }).click();
    await page.getByRole('heading', { level: 1, name: 'Keys of Robin’s agent' }).waitFor();
    await page.getByLabel('Label').fill('dashboard');
    await page.getByLabel('Expires').selectOption('30');
    await page.getByRole('button', { name: 'Create key' }).click();
    const readKey = await secretShown();
    await page.getByRole('button', { name: 'I have stored the key' }).click();
    expect((await rest('get_me', readKey)).status).toBe(200);
    const write = await rest('create_group', readKey, { name: 'Nope', currency: 'EUR', idempotency_key: 'e2e-write-0001' });
    expect(write.status).toBe(403);
    expect(write.json.error).toMatchObject({ code: 'FORBIDDEN', details: { required_scope: 'svc:write' } });

    // Rotate the read-only key: the old one keeps working for 10 minutes and is shown as such.
    const readRow = page.getByRole('listitem').filter({ hasText: 'dashboard' }).filter({ hasText: 'read-only' });
    await confirm(readRow.getByRole('button', { name: 'Rotate' }), 'Rotate key');
    const rotatedKey = await secretShown();
    await page.getByText(/rotated — valid until/).waitFor();
    expect((await rest('get_me', readKey)).status).toBe(200);
    expect((await rest('get_me', rotatedKey)).status).toBe(200);
    await expectAccessible(page, 'keys, after rotation');
    await snap('05-agent-keys');
    await page.getByRole('button', { name: 'I have stored the key' }).click();

    // Revoke the new key: 401 at once.
    const newRow = page.getByRole('listitem').filter({ hasText: 'dashboard' }).filter({ hasNotText: 'rotated' });
    await newRow.getByRole('button', { name: 'Revoke' }).click();
    // Dialogs name the key by its label and prefix.
    await page.getByRole('dialog', { name: /^Revoke key “dashboard” \(kitty_\w+…\)\?$/ }).waitFor();
    await page.keyboard.press('Escape');
    await confirm(newRow.getByRole('button', { name: 'Revoke' }), 'Revoke now');
    await newRow.waitFor({ state: 'detached' });
    // The key does not vanish without a word.
    await page
      .getByRole('status')
      .filter({ hasText: /^Key “dashboard” \(kitty_\w+…\) revoked/ })
      .waitFor();
    const revoked = await rest('get_me', rotatedKey);
    expect(revoked.status).toBe(401);
    expect(revoked.json.error.code).toBe('UNAUTHENTICATED');

    // Connect an MCP client through OAuth; the browser step (consent) happens in this signed-in browser.
    const provider = new TestOAuthProvider(
      REDIRECT,
      async (authorizationUrl) => {
        let landed: URL | undefined;
        await page.route(`${REDIRECT}**`, async (route) => {
          landed = new URL(route.request().url());
          await route.fulfill({
            status: 200,
            contentType: 'text/html',
            body: '<!doctype html><title>done</title><p>You can close this window.</p>',
          });
        });
        await page.goto(authorizationUrl.href);
        await page.getByLabel(/Robin’s agent/).check();
        await page.getByRole('button', { name: 'Allow' }).click();
        await page.waitForURL(`${REDIRECT}**`);
        await page.unroute(`${REDIRECT}**`);
        return landed!;
      },
      undefined,
      'E2E MCP client',
    );
    const connect = async () => {
      const c = new Client({ name: 'e2e', version: '1.0.0' });
      const t = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { authProvider: provider });
      return { c, t };
    };
    let { c, t } = await connect();
    await expect(startsOAuth(c, t)).rejects.toBeInstanceOf(UnauthorizedError);
    await t.finishAuth(provider.code());
    ({ c, t } = await connect());
    await c.connect(t);
    const viaApp = await c.callTool({ name: 'get_me', arguments: {} });
    expect(viaApp.isError).toBeFalsy();
    expect((viaApp.structuredContent as { agent: { handle: string } }).agent.handle).toBe(handle);

    await page.goto(`${base}/account/apps`);
    const appRow = page.getByRole('listitem').filter({ hasText: 'E2E MCP client' });
    await appRow.waitFor();
    await appRow.getByText(`@${handle}`).waitFor();
    await expectAccessible(page, 'connected apps');
    await snap('06-connected-apps');
    await confirm(appRow.getByRole('button', { name: 'Disconnect' }), 'Disconnect');
    await page.getByText('No apps are connected.').waitFor();
    const after = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${provider.saved!.access_token}`,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_me', arguments: {} } }),
    });
    expect(after.status).toBe(401);
    await c.close();

    // Claim a headless agent by pasting its key (the field is cleared at once).
    const headless = await server.agent('headless');
    await page.getByRole('link', { name: 'My agents' }).click();
    await page.getByLabel('API key of the agent').fill(headless.apiKey);
    await page.getByRole('button', { name: 'Claim agent' }).click();
    await page.getByText(`@${headless.handle} is now yours.`).waitFor();
    expect(await page.getByLabel('API key of the agent').inputValue()).toBe('');
    await page.getByRole('link', { name: 'headless' }).waitFor();
    // A wrong key: the error in words, with what to do.
    await page.getByLabel('API key of the agent').fill('kitty_not-a-key');
    await page.getByRole('button', { name: 'Claim agent' }).click();
    await page.getByRole('alert').filter({ hasText: 'not a Kitty API key' }).waitFor();
    await expectAccessible(page, 'agents');
    await snap('07-agents');

    // Overview with a group and a balance.
    const group = await rest('create_group', apiKey, { name: 'Lisbon trip', currency: 'EUR', idempotency_key: 'e2e-group-0001' });
    expect(group.status).toBe(200);
    await page.getByRole('link', { name: 'Overview' }).click();
    await page.getByRole('rowheader', { name: /Lisbon trip/ }).waitFor();
    await expectAccessible(page, 'overview');
    await snap('08-overview');

    // A second passkey, the passkey list and the security log.
    await page.getByRole('link', { name: 'Sign-in & security' }).click();
    await page.getByRole('heading', { level: 1, name: 'Sign-in & security' }).waitFor();
    await page.getByText('Your only way to sign in').waitFor();
    // The second passkey lives on another device (a device already holding one is excluded by WebAuthn).
    await cdp.send('WebAuthn.removeVirtualAuthenticator', { authenticatorId });
    authenticatorId = await addVirtualPasskeyDevice(cdp);
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await page.getByText('Passkey added.').waitFor();
    await page.getByRole('list', { name: 'Your passkeys' }).getByRole('listitem').filter({ hasText: 'Passkey 2' }).waitFor();
    const log = page.getByRole('list', { name: 'Security events, newest first' });
    for (const what of [
      'Signed up',
      'Agent created',
      'Key created',
      'Key rotated',
      'Key revoked',
      'App connected',
      'App disconnected',
      'Agent claimed',
      'Passkey added',
    ]) {
      await log.getByText(what).first().waitFor();
    }
    // The log refreshes after the page's own change: sign-up's passkey and the one just added.
    await expect.poll(() => log.getByText('Passkey added').count()).toBe(2);
    await expectAccessible(page, 'security');
    await snap('09-security');

    // Sign out: back to the signed-out page.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/\/signin/);
    await page.goto(`${base}/account`);
    await page.getByRole('link', { name: 'Sign in' }).waitFor();
  }, 180_000);
});
