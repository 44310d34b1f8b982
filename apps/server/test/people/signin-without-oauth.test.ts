/**
 * KITTY_OAUTH=off turns off the authorization server only: person sign-in is its own plugin. With it off,
 * /signin serves, a person signs up and back in with a passkey (Chromium's WebAuthn virtual authenticator)
 * and reaches the account page; the OAuth endpoints, the consent page and its script are 404. Screenshots in
 * test-artifacts/signin-without-oauth/.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Browser, type Page } from 'playwright-core';
import type { TestServer } from '../server-harness.ts';
import { startLocalhostServer } from '../oauth-harness.ts';
import { addVirtualPasskeyDevice, expectAccessible, launchChromium } from '../browser.ts';
import { SERVER_DIR } from '../paths.ts';

const ARTIFACTS = path.join(SERVER_DIR, 'test-artifacts', 'signin-without-oauth');

let server: TestServer;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  server = await startLocalhostServer({ oauthEnabled: false });
  browser = await launchChromium();
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  page = await context.newPage();
  await addVirtualPasskeyDevice(await context.newCDPSession(page));
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe('sign-in with KITTY_OAUTH=off', () => {
  it('has no authorization server: its endpoints, metadata and consent page are 404', async () => {
    expect(server.kitty.oauthVerifier).toBeUndefined();
    for (const [method, p] of [
      ['GET', '/.well-known/oauth-authorization-server'],
      ['GET', '/.well-known/openid-configuration'],
      ['GET', '/oauth/authorize?client_id=x&response_type=code'],
      ['POST', '/oauth/token'],
      ['POST', '/oauth/register'],
      ['GET', '/oauth/jwks'],
      ['GET', '/oauth/consent/abc'],
      ['GET', '/auth/assets/consent.js'],
    ] as const) {
      const r = await server.http(p, { method, ...(method === 'POST' ? { body: {} } : {}) });
      expect(r.status, `${method} ${p}`).toBe(404);
    }
  });

  it('serves the sign-in page and its assets, and refuses a foreign Origin as with OAuth on', async () => {
    const signin = await fetch(`${server.url}/signin?return_to=/account`);
    expect(signin.status).toBe(200);
    expect(signin.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(await signin.text()).toContain('Sign in to Kitty');
    for (const asset of ['/auth/assets/signin.js', '/auth/assets/webauthn.js', '/auth/assets/kitty.css'])
      expect((await fetch(`${server.url}${asset}`)).status, asset).toBe(200);
    const foreign = await server.http('/auth/passkey/login/options', { body: {}, headers: { origin: 'https://evil.example' } });
    expect(foreign.status).toBe(403);
    expect(foreign.json.error.details.reason).toBe('csrf');
    // The sign-in limit still counts these requests in its own budget.
    const options = await server.http('/auth/passkey/login/options', { body: {}, headers: { origin: server.url } });
    expect(options.status).toBe(200);
    expect(options.headers.get('ratelimit-policy')).toContain('"auth"');
  });

  it('a person signs up with a passkey, signs out and signs in again, and uses the account page', async () => {
    const base = server.url;
    await page.goto(`${base}/account`);
    await page.getByRole('link', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Sign in to Kitty' }).waitFor();
    await expectAccessible(page, 'sign-in without OAuth');
    await page.screenshot({ path: path.join(ARTIFACTS, 'signin-1280.png'), fullPage: true });
    await page.getByLabel('Your name').fill('Noa');
    await page.getByRole('button', { name: 'Create an account with a passkey' }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { level: 1, name: 'Sign in to Kitty' }).waitFor();
    await page.goto(`${base}/signin?return_to=/account/security`);
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await page.getByRole('heading', { level: 1, name: 'Sign-in & security' }).waitFor();
    await page.getByRole('list', { name: 'Your passkeys' }).getByRole('listitem').first().waitFor();
    await page.screenshot({ path: path.join(ARTIFACTS, 'security-1280.png'), fullPage: true });

    const prisma = server.kitty.services.prisma;
    const human = await prisma.human.findFirstOrThrow({ where: { displayName: 'Noa' }, include: { passkeys: true } });
    expect(human.passkeys).toHaveLength(1);
    const events = await prisma.securityEvent.findMany({ where: { humanId: human.id } });
    expect(events.map((e) => e.type).sort()).toEqual(['passkey_added', 'signed_in', 'signed_out', 'signed_up']);
  }, 120_000);
});
