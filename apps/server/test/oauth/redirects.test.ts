/**
 * Redirect URIs as OAuth clients use them in the wild: registration (Dynamic Client Registration and
 * Client ID Metadata Documents) accepts https, loopback http and private-use schemes only, refusing the rest
 * with invalid_redirect_uri and the rule; a loopback redirect matches on any port for public clients whatever
 * application_type they registered (MCP clients pick a fresh port per run), and not for confidential ones.
 */
import http from 'node:http';
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../server-harness.ts';
import { consentOverHttp, signedInPerson, startLocalhostServer } from '../oauth-harness.ts';

const REDIRECT = 'http://127.0.0.1:53682/callback';
let server: TestServer;
let base: string;
let docs: http.Server;
let docsPort: number;
const documents = new Map<string, unknown>();

beforeAll(async () => {
  docs = http.createServer((req, res) => {
    const doc = documents.get(req.url ?? '');
    if (!doc) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(doc));
  });
  await new Promise<void>((r) => docs.listen(0, 'localhost', () => r()));
  docsPort = (docs.address() as { port: number }).port;
  server = await startLocalhostServer({
    oauthAllowLoopbackCimd: true,
    oauthClients: JSON.stringify([
      {
        client_id: 'confidential-app',
        client_secret: 'a-long-test-secret-0123456789abcdef',
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

async function register(body: Record<string, unknown>) {
  const r = await fetch(`${base}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ token_endpoint_auth_method: 'none', ...body }),
  });
  return { status: r.status, json: (await r.json()) as Record<string, any> };
}

const pkce = () => {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
};

function authorizeUrl(clientId: string, redirectUri: string, challenge: string) {
  const u = new URL(`${base}/oauth/authorize`);
  const p = {
    client_id: clientId,
    response_type: 'code',
    redirect_uri: redirectUri,
    scope: 'svc:read',
    state: 's',
    code_challenge: challenge,
    code_challenge_method: 'S256',
  };
  for (const [k, v] of Object.entries(p)) u.searchParams.set(k, v);
  return u.href;
}

const authorize = async (clientId: string, redirectUri: string) =>
  fetch(authorizeUrl(clientId, redirectUri, pkce().challenge), { redirect: 'manual' });

describe('Dynamic Client Registration', () => {
  it.each([
    ['http://evil.example/cb', 'uses http on a host that is not loopback'],
    ['http://127.0.0.1.evil.example/cb', 'uses http on a host that is not loopback'],
    ['http://10.0.0.5/cb', 'uses http on a host that is not loopback'],
    ['javascript:alert(1)', 'uses the javascript scheme'],
    ['data:text/html,hi', 'uses the data scheme'],
    ['file:///etc/passwd', 'uses the file scheme'],
    ['myapp:/callback', 'uses the myapp scheme'],
    ['not a uri', 'is not an absolute URI'],
  ])('refuses %s with invalid_redirect_uri and the rule', async (uri, why) => {
    const r = await register({ redirect_uris: ['https://app.example/cb', uri] });
    expect(r.status).toBe(400);
    expect(r.json.error).toBe('invalid_redirect_uri');
    expect(r.json.error_description).toContain(why);
    expect(r.json.error_description).toContain('https, http on a loopback host');
    expect(r.json.error_description).toContain('com.example.app:/callback');
  });

  it.each([
    ['https://app.example/cb', 'web'],
    ['http://127.0.0.1/cb', 'web'],
    ['http://[::1]:8080/cb', 'web'],
    ['http://localhost:3000/cb', 'web'],
    ['com.example.app:/oauth2redirect', 'native'],
  ])('accepts %s', async (uri, type) => {
    const r = await register({ redirect_uris: [uri] });
    expect(r.status, JSON.stringify(r.json)).toBe(201);
    expect(r.json.redirect_uris).toEqual([uri]);
    expect(r.json.application_type).toBe(type);
  });

  it('a private-use scheme redirect works at the authorization endpoint', async () => {
    const { json } = await register({ redirect_uris: ['com.example.app:/oauth2redirect'] });
    const r = await authorize(json.client_id, 'com.example.app:/oauth2redirect');
    expect(r.status).toBe(303);
    expect(r.headers.get('location')).toContain('/oauth/consent/');
  });
});

describe('loopback redirects match on any port for public clients', () => {
  for (const type of ['web', 'native', undefined] as const) {
    it(`application_type ${type ?? 'omitted'}: another port is accepted, another path, host or scheme is not`, async () => {
      const { json } = await register({ redirect_uris: [REDIRECT], ...(type ? { application_type: type } : {}) });
      expect((await authorize(json.client_id, 'http://127.0.0.1:61000/callback')).status).toBe(303);
      expect((await authorize(json.client_id, 'http://127.0.0.1/callback')).status).toBe(303);
      for (const bad of [
        'http://127.0.0.1:61000/other',
        'http://localhost:61000/callback',
        'https://127.0.0.1:61000/callback',
        'http://127.0.0.1:61000/callback?x=1',
        'http://user@127.0.0.1:61000/callback',
      ]) {
        const r = await authorize(json.client_id, bad);
        expect(r.status, bad).toBe(400);
        expect(r.headers.get('location'), bad).toBeNull();
      }
    });
  }

  it('the whole flow on a fresh port: consent, code, token', async () => {
    const { json } = await register({ redirect_uris: [REDIRECT] });
    const { jar } = await signedInPerson(server, 'Port');
    const { verifier, challenge } = pkce();
    const fresh = 'http://127.0.0.1:49152/callback';
    const back = await consentOverHttp(base, jar, authorizeUrl(json.client_id, fresh, challenge), {
      agent: 'new',
      handle: `port-${randomBytes(3).toString('hex')}`,
      displayName: 'Port agent',
    });
    expect(`${back.origin}${back.pathname}`).toBe(fresh);
    const t = await fetch(`${base}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: back.searchParams.get('code')!,
        redirect_uri: fresh,
        client_id: json.client_id,
        code_verifier: verifier,
        resource: `${base}/mcp`,
      }).toString(),
    });
    expect(t.status).toBe(200);
    expect(((await t.json()) as { access_token?: string }).access_token).toBeTruthy();
  });

  it('a confidential (pre-registered) web client keeps exact matching', async () => {
    expect((await authorize('confidential-app', REDIRECT)).status).toBe(303);
    expect((await authorize('confidential-app', 'http://127.0.0.1:61000/callback')).status).toBe(400);
  });
});

describe('Client ID Metadata Documents', () => {
  const cimd = (path: string, redirect: string) => {
    const id = `https://localhost:${docsPort}${path}`;
    documents.set(path, { client_id: id, client_name: 'Doc client', redirect_uris: [redirect], token_endpoint_auth_method: 'none' });
    return id;
  };

  it('refuses a document whose redirect URI breaks the rule', async () => {
    const id = cimd('/cimd/evil.json', 'http://evil.example/cb');
    const r = await authorize(id, 'http://evil.example/cb');
    expect(r.status).toBe(400);
    expect(r.headers.get('location')).toBeNull();
    expect(await r.text()).toMatch(/loopback host/);
  });

  it('accepts a loopback document redirect on any port', async () => {
    const id = cimd('/cimd/loopback.json', REDIRECT);
    expect((await authorize(id, 'http://127.0.0.1:50000/callback')).status).toBe(303);
  });
});
