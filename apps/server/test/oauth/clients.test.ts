/**
 * The other ways a client can be known to Kitty's authorization server, and a second, independent
 * client library:
 * - Client ID Metadata Documents with the MCP SDK client (document served by the test), and the
 *   documents that must be refused;
 * - a pre-registered confidential client (KITTY_OAUTH_CLIENTS) driven by `openid-client`
 *   (discovery, PKCE, RFC 9207 iss check, refresh, RFC 7009 revocation);
 * - the disconnect bound across instances (a second verifier with its own clock);
 * - per-IP rate limits on the authorization endpoints.
 */
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as oidc from 'openid-client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { loadAuthServerKeys } from '../../src/oauth/keys.ts';
import { CONNECTION_RECHECK_SECONDS, OAuthTokenVerifier } from '../../src/oauth/verify.ts';
import type { TestServer } from '../server-harness.ts';
import { TestOAuthProvider, consentOverHttp, signedInPerson, startLocalhostServer, startsOAuth } from '../oauth-harness.ts';

const REDIRECT = 'http://127.0.0.1:53682/callback';
let server: TestServer;
let base: string;
let docs: http.Server;
let docsPort: number;
const documents = new Map<string, unknown>();

beforeAll(async () => {
  docs = http.createServer((req, res) => {
    const doc = documents.get(req.url ?? '');
    if (!doc) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=60' }).end(JSON.stringify(doc));
  });
  await new Promise<void>((r) => docs.listen(0, 'localhost', () => r()));
  docsPort = (docs.address() as { port: number }).port;
  server = await startLocalhostServer({
    oauthAllowLoopbackCimd: true,
    oauthClients: JSON.stringify([
      {
        client_id: 'second-client',
        client_secret: 'a-long-test-secret-0123456789abcdef',
        client_name: 'Second client',
        redirect_uris: [REDIRECT],
        token_endpoint_auth_method: 'client_secret_basic',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
      },
    ]),
  });
  base = server.url;
});
afterAll(async () => {
  await server?.close();
  await new Promise<void>((r) => docs?.close(() => r()));
});

function cimdUrl(path: string, doc: (id: string) => Record<string, unknown>): string {
  const id = `https://localhost:${docsPort}${path}`;
  documents.set(path, doc(id));
  return id;
}

describe('Client ID Metadata Documents', () => {
  it('the MCP SDK client registers with its metadata document URL and gets tokens', async () => {
    const clientId = cimdUrl('/cimd/good.json', (id) => ({
      client_id: id,
      client_name: 'CIMD test client',
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    }));
    const { jar } = await signedInPerson(server, 'Cim');
    const handle = `cimd-${randomBytes(3).toString('hex')}`;
    let consentHtml = '';
    const provider = new TestOAuthProvider(
      REDIRECT,
      async (url) => {
        const page = await jar.fetch(url.href);
        const consent = new URL(page.headers.get('location')!, base);
        consentHtml = await (await jar.fetch(consent.href)).text();
        return consentOverHttp(base, jar, url.href, { agent: 'new', handle, displayName: 'Via CIMD' });
      },
      clientId,
    );
    const connect = () => new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { authProvider: provider });
    let t = connect();
    await expect(startsOAuth(new Client({ name: 'cimd', version: '1' }), t)).rejects.toBeInstanceOf(UnauthorizedError);
    expect(provider.info?.client_id).toBe(clientId);
    // The consent page names the app and the host of its document.
    expect(consentHtml).toContain('CIMD test client');
    expect(consentHtml).toContain(`localhost:${docsPort}`);
    await t.finishAuth(provider.code());
    t = connect();
    const c = new Client({ name: 'cimd', version: '1' });
    await c.connect(t);
    const me = await c.callTool({ name: 'get_me', arguments: {} });
    expect((me.structuredContent as any).agent.handle).toBe(handle);
    const conn = await server.kitty.services.prisma.oAuthConnection.findFirstOrThrow({ where: { clientId } });
    expect(conn.clientHost).toBe(`localhost:${docsPort}`);
  });

  it('refuses a document whose client_id differs from its URL', async () => {
    const clientId = cimdUrl('/cimd/mismatch.json', () => ({
      client_id: 'https://someone-else.example/client.json',
      client_name: 'Liar',
      redirect_uris: [REDIRECT],
      token_endpoint_auth_method: 'none',
    }));
    const r = await fetch(
      `${base}/oauth/authorize?${new URLSearchParams({ client_id: clientId, response_type: 'code', redirect_uri: REDIRECT, code_challenge: 'x'.repeat(43), code_challenge_method: 'S256', scope: 'svc:read' })}`,
      { redirect: 'manual' },
    );
    expect(r.status).toBe(400);
    expect(await r.text()).toMatch(/invalid_client/);
  });

  it('refuses a document that asks for a client secret method', async () => {
    const clientId = cimdUrl('/cimd/secret.json', (id) => ({
      client_id: id,
      redirect_uris: [REDIRECT],
      token_endpoint_auth_method: 'client_secret_basic',
    }));
    const r = await fetch(
      `${base}/oauth/authorize?${new URLSearchParams({ client_id: clientId, response_type: 'code', redirect_uri: REDIRECT, code_challenge: 'x'.repeat(43), code_challenge_method: 'S256' })}`,
      { redirect: 'manual' },
    );
    expect(r.status).toBe(400);
  });

  it('without the loopback switch (the default), a document URL resolving to a loopback/private address is refused', async () => {
    const strict = await startLocalhostServer();
    try {
      const clientId = cimdUrl('/cimd/private.json', (id) => ({
        client_id: id,
        redirect_uris: [REDIRECT],
        token_endpoint_auth_method: 'none',
      }));
      const r = await fetch(
        `${strict.url}/oauth/authorize?${new URLSearchParams({ client_id: clientId, response_type: 'code', redirect_uri: REDIRECT, code_challenge: 'x'.repeat(43), code_challenge_method: 'S256' })}`,
        { redirect: 'manual' },
      );
      expect(r.status).toBe(400);
      expect(await r.text()).toMatch(/invalid_client/);
      // And plain http document URLs are never client ids.
      const httpId = `http://localhost:${docsPort}/cimd/private.json`;
      const r2 = await fetch(
        `${strict.url}/oauth/authorize?${new URLSearchParams({ client_id: httpId, response_type: 'code', redirect_uri: REDIRECT, code_challenge: 'x'.repeat(43), code_challenge_method: 'S256' })}`,
        { redirect: 'manual' },
      );
      expect(r2.status).toBe(400);
    } finally {
      await strict.close();
    }
  });
});

describe('openid-client as a second, independent client (pre-registered confidential client)', () => {
  it('discovers, authorizes with PKCE, checks iss, refreshes and revokes', async () => {
    const config = await oidc.discovery(new URL(base), 'second-client', 'a-long-test-secret-0123456789abcdef', undefined, {
      execute: [oidc.allowInsecureRequests],
    });
    expect(config.serverMetadata().issuer).toBe(base);
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT,
      scope: 'svc:read svc:write offline_access',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      resource: `${base}/mcp`,
      prompt: 'consent',
    });
    const { jar } = await signedInPerson(server, 'Oda');
    const back = await consentOverHttp(base, jar, url.href, {
      agent: 'new',
      handle: `oc-${randomBytes(3).toString('hex')}`,
      displayName: 'Second',
    });
    const tokens = await oidc.authorizationCodeGrant(
      config,
      back,
      { pkceCodeVerifier: verifier, expectedState: state },
      { resource: `${base}/mcp` },
    );
    expect(tokens.token_type.toLowerCase()).toBe('bearer');
    expect(tokens.scope?.split(' ').sort()).toEqual(['svc:read', 'svc:write']);
    expect(tokens.refresh_token).toBeTruthy();
    const me = await server.http('/v1/tools/get_me', { body: {}, apiKey: tokens.access_token });
    expect(me.status).toBe(200);

    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!, { resource: `${base}/mcp` });
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    expect((await server.http('/v1/tools/get_me', { body: {}, apiKey: refreshed.access_token })).status).toBe(200);

    // A tampered iss in the authorization response is refused by the client (RFC 9207).
    const forged = new URL(back);
    forged.searchParams.set('iss', 'https://attacker.example');
    await expect(oidc.authorizationCodeGrant(config, forged, { pkceCodeVerifier: verifier, expectedState: state })).rejects.toThrow();

    await oidc.tokenRevocation(config, refreshed.refresh_token!);
    const after = await server.http('/v1/tools/get_me', { body: {}, apiKey: refreshed.access_token });
    expect(after.status).toBe(401);
    await expect(oidc.refreshTokenGrant(config, refreshed.refresh_token!)).rejects.toThrow();
  });

  it('a wrong client secret is refused', async () => {
    const config = await oidc.discovery(new URL(base), 'second-client', 'not-the-secret', undefined, {
      execute: [oidc.allowInsecureRequests],
    });
    await expect(oidc.refreshTokenGrant(config, 'whatever')).rejects.toMatchObject({ error: 'invalid_client' });
  });
});

describe('disconnect across instances', () => {
  it(`another instance refuses a disconnected app's token once its ${CONNECTION_RECHECK_SECONDS} s recheck has passed (and not before)`, async () => {
    const prisma = server.kitty.services.prisma;
    const { jar } = await signedInPerson(server);
    const provider = new TestOAuthProvider(REDIRECT, (url) =>
      consentOverHttp(base, jar, url.href, { agent: 'new', handle: `x-${randomBytes(3).toString('hex')}`, displayName: 'X' }),
    );
    const t = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { authProvider: provider });
    await expect(startsOAuth(new Client({ name: 'x', version: '1' }), t)).rejects.toBeInstanceOf(UnauthorizedError);
    await t.finishAuth(provider.code());
    const token = provider.saved!.access_token;

    // "Another instance": its own verifier over the same database and keys, with a clock the test moves.
    let now = Date.now();
    const other = new OAuthTokenVerifier(
      prisma,
      base,
      (await loadAuthServerKeys(server.kitty.services.pool, {})).jwks,
      () => new Date(now),
    );
    expect((await other.authenticate(token)).credential).toBe('oauth');
    const grantId = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()).grant_id as string;
    await prisma.oAuthConnection.update({ where: { id: grantId }, data: { revokedAt: new Date() } });
    now += (CONNECTION_RECHECK_SECONDS - 1) * 1000;
    expect((await other.authenticate(token)).credential).toBe('oauth'); // still within the bound
    now += 2000;
    await expect(other.authenticate(token)).rejects.toMatchObject({ kittyCode: 'UNAUTHENTICATED' });
  });
});

describe('rate limits on the authorization endpoints', () => {
  it('answers 429 RATE_LIMITED with the error envelope after the per-IP budget', async () => {
    const limited = await startLocalhostServer({ authRateLimitPoints: 3 });
    try {
      const statuses: number[] = [];
      let last;
      for (let i = 0; i < 5; i++) {
        last = await limited.http('/oauth/register', { body: { redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' } });
        statuses.push(last.status);
      }
      expect(statuses.slice(0, 3)).toEqual([201, 201, 201]);
      expect(statuses[4]).toBe(429);
      expect(last!.json.error.code).toBe('RATE_LIMITED');
      expect(last!.headers.get('retry-after')).toBeTruthy();
    } finally {
      await limited.close();
    }
  });
});
