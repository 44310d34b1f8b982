/**
 * The whole "connect an MCP client" story in a real browser: the official MCP SDK client's OAuth
 * support (discovery from the 401, Client ID Metadata Document served by this test), Debian's
 * Chromium driven by playwright-core with a WebAuthn virtual authenticator for the person's passkey,
 * against a running Kitty at http://localhost:PORT.
 *
 * Passkey sign-up on the sign-in page → consent: a new agent, read-only → tokens → tools/list and
 * get_me → a write tool is FORBIDDEN with required_scope → re-consent (same agent) with write → the
 * write works → refresh → sign out and sign in again with the passkey → revocation → the next call 401.
 */
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Browser, type Page } from 'playwright-core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import type { TestServer } from '../server-harness.ts';
import { TestOAuthProvider, startLocalhostServer, startsOAuth } from '../oauth-harness.ts';
import { addVirtualPasskeyDevice, expectAccessible, launchChromium } from '../browser.ts';

const REDIRECT = 'http://127.0.0.1:53684/callback';

let server: TestServer;
let base: string;
let browser: Browser;
let page: Page;
let docs: http.Server;
let clientId: string;

beforeAll(async () => {
  docs = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        client_id: clientId,
        client_name: 'Browser test MCP client',
        redirect_uris: [REDIRECT],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
      }),
    );
  });
  await new Promise<void>((r) => docs.listen(0, 'localhost', () => r()));
  clientId = `https://localhost:${(docs.address() as { port: number }).port}/mcp-client.json`;
  server = await startLocalhostServer({ oauthAllowLoopbackCimd: true });
  base = server.url;
  browser = await launchChromium();
  const context = await browser.newContext();
  page = await context.newPage();
  await addVirtualPasskeyDevice(await context.newCDPSession(page));
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await new Promise<void>((r) => docs?.close(() => r()));
});

/** Waits until the browser is sent to the client's redirect URI and returns that URL (the page is answered locally). */
async function landOnRedirect(act: () => Promise<void>): Promise<URL> {
  let resolve!: (u: URL) => void;
  const landed = new Promise<URL>((r) => (resolve = r));
  await page.route(`${REDIRECT}**`, async (route) => {
    resolve(new URL(route.request().url()));
    await route.fulfill({ status: 200, contentType: 'text/plain', body: 'You can close this window.' });
  });
  await act();
  const url = await landed;
  await page.unroute(`${REDIRECT}**`);
  return url;
}

describe('connecting an MCP client in a browser', () => {
  it('passkey sign-up, consent (new agent, read-only), step-up to write, refresh, passkey sign-in, revocation', async () => {
    const handle = `pk-${randomBytes(3).toString('hex')}`;
    let browserStep: (url: URL) => Promise<URL> = async () => {
      throw new Error('unexpected authorization');
    };
    const provider = new TestOAuthProvider(REDIRECT, (url) => browserStep(url), clientId);
    const transport = () => new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { authProvider: provider });

    // 1. First connection: not signed in → sign-in page → passkey sign-up → consent → back to the client.
    browserStep = (url) =>
      landOnRedirect(async () => {
        await page.goto(url.href);
        await page.waitForURL(/\/signin\?return_to=/);
        await expectAccessible(page, 'sign-in page');
        await page.getByLabel('Your name').fill('Robin');
        await page.getByRole('button', { name: 'Create an account with a passkey' }).click();
        await page.waitForURL(/\/oauth\/consent\//);
        await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toContain('Browser test MCP client');
        await expectAccessible(page, 'consent page');
        await page.getByLabel('A new agent').check();
        await page.getByLabel(/Handle of the new agent/).fill(handle);
        await page.getByLabel('Display name of the new agent').fill('Robin’s assistant');
        await page.getByLabel(/svc:write/).uncheck();
        await page.getByRole('button', { name: 'Allow' }).click();
      });
    let t = transport();
    await expect(startsOAuth(new Client({ name: 'browser-e2e', version: '1' }), t)).rejects.toBeInstanceOf(UnauthorizedError);
    expect(provider.info!.client_id).toBe(clientId); // registered by its metadata document, no DCR
    expect(provider.lastRedirect!.searchParams.get('iss')).toBe(base);
    await t.finishAuth(provider.code());

    let client = new Client({ name: 'browser-e2e', version: '1' });
    await client.connect(transport());
    expect((await client.listTools()).tools.length).toBeGreaterThan(10);
    const me = await client.callTool({ name: 'get_me', arguments: {} });
    expect((me.structuredContent as any).agent.handle).toBe(handle);
    const human = await server.kitty.services.prisma.human.findFirstOrThrow({
      where: { displayName: 'Robin' },
      include: { passkeys: true, agents: true },
    });
    expect(human.passkeys).toHaveLength(1);
    expect(human.agents.map((a) => a.handle)).toEqual([handle]);

    // 2. Read-only token: a write tool is FORBIDDEN with required_scope (HTTP 403 insufficient_scope on /mcp).
    const raw = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${provider.saved!.access_token}`,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: {
          name: 'add_expense',
          arguments: {
            group_id: '00000000-0000-4000-8000-000000000000',
            description: 'x',
            amount_minor: 100,
            idempotency_key: 'exp-0000001',
          },
        },
      }),
    });
    expect(raw.status).toBe(403);
    expect(raw.headers.get('www-authenticate')).toContain('error="insufficient_scope"');
    const env = JSON.parse(((await raw.json()) as any).result.content[0].text);
    expect(env.error.details.required_scope).toBe('svc:write');

    // 3. Re-consent with write: already signed in, so straight to consent; same agent, all scopes.
    browserStep = (url) =>
      landOnRedirect(async () => {
        await page.goto(url.href);
        await page.waitForURL(/\/oauth\/consent\//);
        await page.getByLabel(new RegExp(`@${handle}`)).check();
        await page.getByRole('button', { name: 'Allow' }).click();
      });
    provider.saved = undefined;
    await expect(startsOAuth(new Client({ name: 'browser-e2e', version: '1' }), (t = transport()))).rejects.toBeInstanceOf(
      UnauthorizedError,
    );
    await t.finishAuth(provider.code());
    client = new Client({ name: 'browser-e2e', version: '1' });
    await client.connect(transport());
    const group = await client.callTool({
      name: 'create_group',
      arguments: { name: 'Flat', currency: 'EUR', idempotency_key: 'grp-browser-1' },
    });
    expect(group.isError, JSON.stringify(group.content)).toBeFalsy();

    // 4. Refresh (rotation): the new access token works.
    const refreshed = await fetch(`${base}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: provider.saved!.refresh_token!,
        client_id: clientId,
      }).toString(),
    });
    const tokens = (await refreshed.json()) as { access_token: string; refresh_token: string };
    expect(refreshed.status).toBe(200);
    expect(tokens.refresh_token).not.toBe(provider.saved!.refresh_token);
    expect((await server.http('/v1/tools/get_me', { body: {}, apiKey: tokens.access_token })).status).toBe(200);

    // 5. Sign out, then sign in again with the same passkey.
    await page.goto(`${base}/signin?return_to=/signin`);
    const signedOut = await page.evaluate("fetch('/auth/signout', { method: 'POST' }).then((r) => r.status)");
    expect(signedOut).toBe(200);
    await page.goto(`${base}/signin?return_to=${encodeURIComponent('/signin?return_to=/x')}`);
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await page.getByText('You are signed in as').waitFor();
    const events = await server.kitty.services.prisma.securityEvent.findMany({
      where: { humanId: human.id },
      orderBy: { createdAt: 'asc' },
    });
    expect(events.map((e) => e.type)).toEqual(
      expect.arrayContaining(['signed_up', 'passkey_added', 'agent_created', 'app_connected', 'signed_out', 'signed_in']),
    );

    // 6. Revocation: the next call is 401 invalid_token.
    const rv = await fetch(`${base}/oauth/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: tokens.refresh_token, client_id: clientId }).toString(),
    });
    expect(rv.status).toBe(200);
    const after = await server.http('/v1/tools/get_me', { body: {}, apiKey: tokens.access_token });
    expect(after.status).toBe(401);
    expect(after.headers.get('www-authenticate')).toContain('error="invalid_token"');
  }, 120_000);
});
