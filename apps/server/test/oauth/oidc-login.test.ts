/**
 * Sign-in through a configured OpenID Connect provider: a real `oidc-provider` instance started in
 * this test plays the IdP (its development login and consent forms), Kitty is its confidential
 * client (KITTY_OIDC_*), and Chromium clicks through "Sign in with Ida". Checks the new person,
 * their external identity, the session, the security log, and that a second sign-in finds the same
 * person; a forged callback (no state) is refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Provider from 'oidc-provider';
import { type Browser, type Page } from 'playwright-core';
import type { TestServer } from '../server-harness.ts';
import { freePort, startLocalhostServer } from '../oauth-harness.ts';
import { launchChromium } from '../browser.ts';

let idp: Provider;
let idpServer: import('node:http').Server;
let server: TestServer;
let browser: Browser;
let page: Page;
let issuer: string;

beforeAll(async () => {
  const kittyPort = await freePort();
  const idpPort = await freePort();
  issuer = `http://localhost:${idpPort}`;
  idp = new Provider(issuer, {
    clients: [
      {
        client_id: 'kitty',
        client_secret: 'kitty-secret-0123456789abcdef0123456789',
        redirect_uris: [`http://localhost:${kittyPort}/auth/oidc/callback`],
        grant_types: ['authorization_code'],
        response_types: ['code'],
      },
    ],
    claims: { openid: ['sub'], email: ['email'], profile: ['name'] },
    findAccount: async (_ctx, id) => ({ accountId: id, claims: async () => ({ sub: id, email: `${id}@idp.example`, name: 'Ida Idp' }) }),
    features: { devInteractions: { enabled: true } },
  });
  idpServer = idp.listen(idpPort);
  server = await startLocalhostServer({
    port: kittyPort,
    baseUrl: `http://localhost:${kittyPort}`,
    oidc: { issuer, clientId: 'kitty', clientSecret: 'kitty-secret-0123456789abcdef0123456789', name: 'Ida' },
  });
  browser = await launchChromium();
  page = await (await browser.newContext()).newPage();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await new Promise<void>((r) => (idpServer ? idpServer.close(() => r()) : r()));
});

/** Clicks "Sign in with Ida"; at the IdP, logs in and consents (first time), or is let through by its own session (SSO). */
async function signInAtIdp(login: string, idpSessionExists = false): Promise<void> {
  await page.goto(`${server.url}/signin?return_to=${encodeURIComponent('/signin?return_to=/next')}`);
  await page.getByRole('link', { name: 'Sign in with Ida' }).click();
  if (!idpSessionExists) {
    await page.waitForURL(new RegExp(`^${issuer}/interaction/`));
    await page.locator('input[name=login]').fill(login);
    await page.locator('input[name=password]').fill('any');
    await page.getByRole('button', { name: 'Sign-in' }).click();
    await page.waitForURL(new RegExp(`^${issuer}/interaction/`));
    await page.getByRole('button', { name: 'Continue' }).click();
  }
  await page.waitForURL(`${server.url}/signin?return_to=/next`);
}

describe('sign-in with an OpenID Connect provider', () => {
  it('creates the person on first sign-in, finds them again on the next, with a session and security log', async () => {
    await signInAtIdp('ida');
    await expect(page.getByText('You are signed in as').textContent()).resolves.toContain('Ida Idp');
    const prisma = server.kitty.services.prisma;
    const identity = await prisma.externalIdentity.findUniqueOrThrow({
      where: { issuer_subject: { issuer, subject: 'ida' } },
      include: { human: true },
    });
    expect(identity.email).toBe('ida@idp.example');
    expect(identity.human.displayName).toBe('Ida Idp');
    expect(await prisma.humanSession.count({ where: { humanId: identity.humanId } })).toBe(1);
    // The session cookie is HttpOnly and SameSite=Lax.
    const cookie = (await page.context().cookies(server.url)).find((c) => c.name === 'kitty_session')!;
    expect(cookie.httpOnly).toBe(true);
    expect(cookie.sameSite).toBe('Lax');

    // Sign out, sign in again: the same person.
    expect(await page.evaluate("fetch('/auth/signout', { method: 'POST' }).then((r) => r.status)")).toBe(200);
    await signInAtIdp('ida', true);
    expect(await prisma.human.count({ where: { identities: { some: { issuer, subject: 'ida' } } } })).toBe(1);
    const events = await prisma.securityEvent.findMany({ where: { humanId: identity.humanId }, orderBy: { createdAt: 'asc' } });
    expect(events.map((e) => e.type)).toEqual(['signed_up', 'signed_in', 'signed_out', 'signed_in']);
  }, 60_000);

  it('refuses a callback that was not started here (no state)', async () => {
    const r = await fetch(`${server.url}/auth/oidc/callback?code=abc&state=xyz&iss=${encodeURIComponent(issuer)}`, { redirect: 'manual' });
    expect(r.status).toBe(400);
    expect(r.headers.get('set-cookie') ?? '').not.toContain('kitty_session=');
  });

  it('the sign-in POST endpoints refuse a foreign Origin (CSRF)', async () => {
    for (const path of ['/auth/passkey/login/options', '/auth/passkey/register/options', '/auth/signout']) {
      const r = await server.http(path, { body: { display_name: 'X' }, headers: { origin: 'https://evil.example' } });
      expect(r.status, path).toBe(403);
      expect(r.json.error.code).toBe('FORBIDDEN');
    }
  });
});
