/**
 * OAuth 2.1 for MCP clients acting for a person, over real HTTP against a running Kitty:
 * metadata, DCR with the official MCP SDK client's auth(), consent (new agent, narrowed scopes),
 * tokens on /mcp and /v1/tools, insufficient_scope step-up, refresh rotation and reuse detection,
 * revocation and disconnect, and the protocol's negative cases.
 */
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { ACCESS_TOKEN_TTL_SECONDS } from '../../src/oauth/scopes.ts';
import type { TestServer } from '../server-harness.ts';
import { CookieJar, TestOAuthProvider, consentOverHttp, signedInPerson, startLocalhostServer, startsOAuth } from '../oauth-harness.ts';

let server: TestServer;
let base: string;
const REDIRECT = 'http://127.0.0.1:53682/callback';

beforeAll(async () => {
  server = await startLocalhostServer();
  base = server.url;
});
afterAll(async () => {
  await server?.close();
});

const pkce = () => {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
};

async function register(extra: Record<string, unknown> = {}) {
  const r = await fetch(`${base}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: 'Raw client',
      redirect_uris: [REDIRECT],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      ...extra,
    }),
  });
  const json = (await r.json()) as { client_id: string };
  expect(r.status, JSON.stringify(json)).toBe(201);
  return json.client_id;
}

function authorizeUrl(clientId: string, params: Record<string, string | undefined>) {
  const u = new URL(`${base}/oauth/authorize`);
  const all: Record<string, string | undefined> = {
    client_id: clientId,
    response_type: 'code',
    redirect_uri: REDIRECT,
    scope: 'svc:read svc:write offline_access',
    state: 'st-1',
    resource: `${base}/mcp`,
    ...params,
  };
  for (const [k, v] of Object.entries(all)) if (v !== undefined) u.searchParams.set(k, v);
  return u.href;
}

async function token(params: Record<string, string>) {
  const r = await fetch(`${base}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(params).toString(),
  });
  return { status: r.status, json: (await r.json()) as Record<string, any> };
}

/** Full raw flow: returns tokens for a new agent. */
async function connect(jar: CookieJar, opts: { scopes?: string[]; agent?: string; handle?: string } = {}) {
  const clientId = await register();
  const { verifier, challenge } = pkce();
  const handle = opts.handle ?? `app-${randomBytes(3).toString('hex')}`;
  const back = await consentOverHttp(base, jar, authorizeUrl(clientId, { code_challenge: challenge, code_challenge_method: 'S256' }), {
    agent: opts.agent ?? 'new',
    handle,
    displayName: 'App agent',
    ...(opts.scopes ? { scopes: opts.scopes } : {}),
  });
  const code = back.searchParams.get('code');
  expect(code, back.href).toBeTruthy();
  const t = await token({
    grant_type: 'authorization_code',
    code: code!,
    redirect_uri: REDIRECT,
    client_id: clientId,
    code_verifier: verifier,
    resource: `${base}/mcp`,
  });
  expect(t.status, JSON.stringify(t.json)).toBe(200);
  return { clientId, handle, code: code!, verifier, back, tokens: t.json };
}

describe('metadata', () => {
  it('serves RFC 8414 authorization server metadata with CIMD, DCR, revocation, S256 only and the agent_auth block', async () => {
    for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']) {
      const m = (await server.http(path)).json;
      expect(m.issuer).toBe(base);
      expect(m.authorization_endpoint).toBe(`${base}/oauth/authorize`);
      expect(m.token_endpoint).toBe(`${base}/oauth/token`);
      expect(m.registration_endpoint).toBe(`${base}/oauth/register`);
      expect(m.revocation_endpoint).toBe(`${base}/oauth/revoke`);
      expect(m.code_challenge_methods_supported).toEqual(['S256']);
      expect(m.response_types_supported).toEqual(['code']);
      expect(m.client_id_metadata_document_supported).toBe(true);
      expect(m.authorization_response_iss_parameter_supported).toBe(true);
      expect(m.token_endpoint_auth_methods_supported).toContain('none');
      expect(m.scopes_supported).toEqual(expect.arrayContaining(['svc:read', 'svc:write', 'offline_access']));
      expect(m.agent_auth.register_uri).toBe(`${base}/v1/agents`);
    }
  });

  it('serves RFC 9728 protected resource metadata, path-suffixed for /mcp', async () => {
    const m = (await server.http('/.well-known/oauth-protected-resource/mcp')).json;
    expect(m.resource).toBe(`${base}/mcp`);
    expect(m.authorization_servers).toEqual([base]);
    expect(m.agent_auth.register_uri).toBe(`${base}/v1/agents`);
  });

  it('answers /mcp without a token 401 with resource_metadata naming the /mcp metadata', async () => {
    const r = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
    });
    expect(r.status).toBe(401);
    expect(r.headers.get('www-authenticate')).toContain(`resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`);
    expect(r.headers.get('www-authenticate')).not.toContain('invalid_token');
  });
});

describe('the MCP SDK client end to end (DCR, consent, tokens, step-up, refresh, revocation)', () => {
  it('connects, reads, is refused a write with insufficient_scope, steps up, refreshes, and is cut off by revocation', async () => {
    const { jar, humanId } = await signedInPerson(server, 'Sam');
    const handle = `sdk-${randomBytes(3).toString('hex')}`;
    let choice: Parameters<typeof consentOverHttp>[3] = {
      agent: 'new',
      handle,
      displayName: 'Sam via SDK',
      scopes: ['svc:read', 'offline_access'],
    };
    const provider = new TestOAuthProvider(REDIRECT, (url) => consentOverHttp(base, jar, url.href, choice));
    const newClient = async () => {
      const c = new Client({ name: 'oauth-test', version: '1.0.0' });
      const t = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { authProvider: provider });
      return { c, t };
    };

    // 1. Discovery from the 401, DCR, browser step (new agent, read-only + offline_access), token exchange.
    let { c, t } = await newClient();
    await expect(startsOAuth(c, t)).rejects.toBeInstanceOf(UnauthorizedError);
    expect(provider.lastRedirect!.searchParams.get('iss')).toBe(base); // RFC 9207
    await t.finishAuth(provider.code());
    expect(provider.saved!.refresh_token).toBeTruthy();
    expect(provider.saved!.expires_in).toBeLessThanOrEqual(ACCESS_TOKEN_TTL_SECONDS);
    ({ c, t } = await newClient());
    await c.connect(t);
    const tools = await c.listTools();
    expect(tools.tools.map((x) => x.name)).toContain('get_me');
    const me = await c.callTool({ name: 'get_me', arguments: {} });
    expect(me.isError).toBeFalsy();
    expect((me.structuredContent as any).agent.handle).toBe(handle);
    const agent = await server.kitty.services.prisma.agent.findUniqueOrThrow({ where: { handle } });
    expect(agent.humanId).toBe(humanId);

    // 2. A write with a read-only token: FORBIDDEN required_scope; HTTP 403 insufficient_scope lets the SDK step up.
    const raw = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${provider.saved!.access_token}`,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: { name: 'create_group', arguments: { name: 'Trip', currency: 'EUR', idempotency_key: 'grp-000001' } },
      }),
    });
    expect(raw.status).toBe(403);
    expect(raw.headers.get('www-authenticate')).toMatch(/error="insufficient_scope"/);
    expect(raw.headers.get('www-authenticate')).toMatch(/scope="[^"]*svc:write[^"]*"/);
    const rawBody = (await raw.json()) as any;
    const envelope = JSON.parse(rawBody.result.content[0].text);
    expect(envelope.error.code).toBe('FORBIDDEN');
    expect(envelope.error.details.required_scope).toBe('svc:write');
    const rest = await server.http('/v1/tools/create_group', {
      body: { name: 'Trip', currency: 'EUR', idempotency_key: 'grp-000002' },
      apiKey: provider.saved!.access_token,
    });
    expect(rest.status).toBe(403);
    expect(rest.json.error.details.required_scope).toBe('svc:write');

    // Through the SDK: the 403 insufficient_scope makes it try to step up; holding a refresh token, it refreshes
    // (same scopes) and gives up with the 403. The app then asks the person again: re-consent, same agent, with write.
    const stepUp = await c
      .callTool({ name: 'create_group', arguments: { name: 'Trip', currency: 'EUR', idempotency_key: 'grp-000003' } })
      .catch((e: unknown) => e);
    expect(String(stepUp)).toMatch(/403/);
    choice = { agent: agent.id, scopes: ['svc:read', 'svc:write', 'offline_access'] };
    provider.saved = undefined;
    ({ c, t } = await newClient());
    await expect(startsOAuth(c, t)).rejects.toBeInstanceOf(UnauthorizedError);
    await t.finishAuth(provider.code());
    ({ c, t } = await newClient());
    await c.connect(t);
    const created = await c.callTool({ name: 'create_group', arguments: { name: 'Trip', currency: 'EUR', idempotency_key: 'grp-000004' } });
    expect(created.isError, JSON.stringify(created.content)).toBeFalsy();

    // 3. rotate_api_key with a token: FORBIDDEN, pointing to the account page.
    const rot = await server.http('/v1/tools/rotate_api_key', {
      body: { idempotency_key: 'rot-000001' },
      apiKey: provider.saved!.access_token,
    });
    expect(rot.status).toBe(403);
    expect(rot.json.error.suggested_action).toContain(`${base}/account`);

    // 4. Refresh with rotation; the old refresh token is then refused and its reuse revokes the grant.
    const clientId = provider.info!.client_id;
    const first = provider.saved!.refresh_token!;
    const r1 = await token({ grant_type: 'refresh_token', refresh_token: first, client_id: clientId });
    expect(r1.status, JSON.stringify(r1.json)).toBe(200);
    expect(r1.json.refresh_token).toBeTruthy();
    expect(r1.json.refresh_token).not.toBe(first);
    const meAgain = await server.http('/v1/tools/get_me', { body: {}, apiKey: r1.json.access_token });
    expect(meAgain.status).toBe(200);

    // 5. Revocation (RFC 7009) of the refresh token: the grant is revoked and the next call is 401 invalid_token.
    const rv = await fetch(`${base}/oauth/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: r1.json.refresh_token, client_id: clientId }).toString(),
    });
    expect(rv.status).toBe(200);
    const after = await server.http('/v1/tools/get_me', { body: {}, apiKey: r1.json.access_token });
    expect(after.status).toBe(401);
    expect(after.headers.get('www-authenticate')).toContain('error="invalid_token"');
    const mcpAfter = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${r1.json.access_token}`,
      },
      body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
    });
    expect(mcpAfter.status).toBe(401);
    expect(mcpAfter.headers.get('www-authenticate')).toContain(`resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`);
    expect(mcpAfter.headers.get('www-authenticate')).toContain('error="invalid_token"');

    // The security log has the story.
    const events = await server.kitty.services.prisma.securityEvent.findMany({ where: { humanId }, orderBy: { createdAt: 'asc' } });
    expect(events.map((e) => e.type)).toEqual(expect.arrayContaining(['agent_created', 'app_connected']));
  });
});

describe('tokens and grants', () => {
  it('a reused refresh token is refused and revokes the grant (its access tokens stop working)', async () => {
    const { jar } = await signedInPerson(server);
    const { clientId, tokens } = await connect(jar);
    const r1 = await token({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: clientId });
    expect(r1.status).toBe(200);
    const reuse = await token({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: clientId });
    expect(reuse.status).toBe(400);
    expect(reuse.json.error).toBe('invalid_grant');
    // The rotated token died with the grant too.
    const r2 = await token({ grant_type: 'refresh_token', refresh_token: r1.json.refresh_token, client_id: clientId });
    expect(r2.status).toBe(400);
    expect((await server.http('/v1/tools/get_me', { body: {}, apiKey: r1.json.access_token })).status).toBe(401);
  });

  it('a disconnect (revoked_at + payloads deleted, as the account page does) is honoured by every instance within the stated bound', async () => {
    const { jar } = await signedInPerson(server);
    const { clientId, tokens } = await connect(jar);
    expect((await server.http('/v1/tools/get_me', { body: {}, apiKey: tokens.access_token })).status).toBe(200);
    const prisma = server.kitty.services.prisma;
    const payload = JSON.parse(Buffer.from(tokens.access_token.split('.')[1], 'base64url').toString());
    // As another instance would: write to the database only (no in-process invalidation here).
    await prisma.$transaction([
      prisma.oAuthConnection.update({ where: { id: payload.grant_id }, data: { revokedAt: new Date() } }),
      prisma.oAuthPayload.deleteMany({ where: { grantId: payload.grant_id } }),
    ]);
    // The verifier of this instance re-reads the connection after CONNECTION_RECHECK_SECONDS; forcing the recheck
    // stands for that time having passed (no timed wait in tests).
    server.kitty.oauthVerifier!.invalidateGrant(payload.grant_id);
    expect((await server.http('/v1/tools/get_me', { body: {}, apiKey: tokens.access_token })).status).toBe(401);
    const refresh = await token({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: clientId });
    expect(refresh.status).toBe(400);
  });

  it('narrowed at consent: a read-only grant gets a token without svc:write', async () => {
    const { jar } = await signedInPerson(server);
    const { tokens } = await connect(jar, { scopes: ['svc:read'] });
    expect(tokens.scope.split(' ')).toEqual(['svc:read']);
    expect(tokens.refresh_token).toBeUndefined();
  });
});

describe('several people in one browser', () => {
  it('after sign-out, another person can connect an app in the same browser', async () => {
    const a = await signedInPerson(server, 'First');
    await connect(a.jar);
    expect(a.jar.cookies.has('kitty_as_session')).toBe(true);
    const out = await a.jar.fetch(`${base}/auth/signout`, { method: 'POST', headers: { origin: base } });
    expect(out.status).toBe(200);
    const b = await signedInPerson(server, 'Second');
    a.jar.cookies.set('kitty_session', b.jar.cookies.get('kitty_session')!);
    const { tokens } = await connect(a.jar);
    const me = await server.http('/v1/tools/get_me', { body: {}, apiKey: tokens.access_token });
    const agent = await server.kitty.services.prisma.agent.findUniqueOrThrow({ where: { id: me.json.data.agent.agent_id } });
    expect(agent.humanId).toBe(b.humanId);
  });
});

describe('negative cases', () => {
  it('dynamic registration accepts public clients only (no client secret is ever stored)', async () => {
    const r = await fetch(`${base}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ redirect_uris: [REDIRECT], token_endpoint_auth_method: 'client_secret_basic' }),
    });
    expect(r.status).toBe(400);
    expect(((await r.json()) as { error: string }).error).toBe('invalid_client_metadata');
    // Omitted means client_secret_basic (RFC 7591 §2): refused as well.
    const omitted = await fetch(`${base}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ redirect_uris: [REDIRECT] }),
    });
    expect(omitted.status).toBe(400);
    const pub = await fetch(`${base}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' }),
    });
    const json = (await pub.json()) as { client_id: string; client_secret?: string };
    expect(pub.status).toBe(201);
    expect(json.client_secret).toBeUndefined();
    const row = await server.kitty.services.prisma.oAuthPayload.findUniqueOrThrow({
      where: { type_id: { type: 'Client', id: json.client_id } },
    });
    expect(JSON.stringify(row.payload)).not.toContain('client_secret');
  });

  it('refuses to register a redirect URI with a fragment', async () => {
    const r = await fetch(`${base}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ redirect_uris: ['https://app.example/cb#frag'], token_endpoint_auth_method: 'none' }),
    });
    expect(r.status).toBe(400);
    expect(((await r.json()) as { error: string }).error).toMatch(/invalid_redirect_uri|invalid_client_metadata/);
  });

  it('a person who denies sends the app access_denied (with iss) and nothing is connected', async () => {
    const { jar, humanId } = await signedInPerson(server);
    const clientId = await register();
    const { challenge } = pkce();
    const back = await consentOverHttp(base, jar, authorizeUrl(clientId, { code_challenge: challenge, code_challenge_method: 'S256' }), {
      agent: 'new',
      handle: 'never-made',
      displayName: 'N',
      decision: 'deny',
    });
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('iss')).toBe(base);
    expect(await server.kitty.services.prisma.oAuthConnection.count({ where: { humanId } })).toBe(0);
    expect(await server.kitty.services.prisma.agent.count({ where: { handle: 'never-made' } })).toBe(0);
  });

  it('stores no refresh token, authorization code or session value in plaintext', async () => {
    const { jar } = await signedInPerson(server);
    const { tokens, code } = await connect(jar);
    const rows = await server.kitty.services.prisma.$queryRaw<Array<{ hit: bigint }>>`
      SELECT count(*) AS hit FROM oauth_payloads WHERE id LIKE ${'%' + tokens.refresh_token + '%'} OR payload::text LIKE ${'%' + tokens.refresh_token + '%'}
         OR id LIKE ${'%' + code + '%'} OR payload::text LIKE ${'%' + code + '%'}`;
    expect(Number(rows[0]!.hit)).toBe(0);
    const sessions = await server.kitty.services.prisma.$queryRaw<Array<{ hit: bigint }>>`
      SELECT count(*) AS hit FROM oauth_payloads WHERE payload::text LIKE ${'%' + jar.cookies.get('kitty_session')! + '%'}`;
    expect(Number(sessions[0]!.hit)).toBe(0);
  });

  it('refuses an authorization request without PKCE or with plain PKCE', async () => {
    const clientId = await register();
    const jar = (await signedInPerson(server)).jar;
    const missing = await jar.fetch(authorizeUrl(clientId, {}));
    const missingTo = new URL(missing.headers.get('location')!);
    expect(missingTo.searchParams.get('error')).toBe('invalid_request');
    const plain = await jar.fetch(authorizeUrl(clientId, { code_challenge: 'a'.repeat(43), code_challenge_method: 'plain' }));
    const plainTo = new URL(plain.headers.get('location')!);
    expect(plainTo.searchParams.get('error')).toBe('invalid_request');
  });

  it('refuses response_type=token', async () => {
    const clientId = await register();
    const { challenge } = pkce();
    const r = await fetch(authorizeUrl(clientId, { response_type: 'token', code_challenge: challenge, code_challenge_method: 'S256' }), {
      redirect: 'manual',
    });
    const to = new URL(r.headers.get('location')!);
    expect(new URLSearchParams(to.search || to.hash.slice(1)).get('error')).toBe('unsupported_response_type');
  });

  it('refuses a redirect URI that is not registered (no redirect: an error page)', async () => {
    const clientId = await register();
    const { challenge } = pkce();
    const r = await fetch(
      authorizeUrl(clientId, { redirect_uri: 'https://evil.example/cb', code_challenge: challenge, code_challenge_method: 'S256' }),
      { redirect: 'manual' },
    );
    expect(r.status).toBe(400);
    expect(r.headers.get('location')).toBeNull();
    expect(await r.text()).toContain('redirect_uri');
  });

  it('accepts any port for a loopback redirect URI (RFC 8252) but not another path', async () => {
    const clientId = await register({ application_type: 'native' });
    const { challenge } = pkce();
    const ok = await fetch(
      authorizeUrl(clientId, { redirect_uri: 'http://127.0.0.1:61000/callback', code_challenge: challenge, code_challenge_method: 'S256' }),
      { redirect: 'manual' },
    );
    expect(ok.status).toBe(303);
    expect(ok.headers.get('location')).toContain('/oauth/consent/');
    const bad = await fetch(
      authorizeUrl(clientId, { redirect_uri: 'http://127.0.0.1:61000/other', code_challenge: challenge, code_challenge_method: 'S256' }),
      { redirect: 'manual' },
    );
    expect(bad.status).toBe(400);
  });

  it('refuses a foreign resource at the authorization request with invalid_target', async () => {
    const clientId = await register();
    const { challenge } = pkce();
    const r = await fetch(
      authorizeUrl(clientId, { resource: 'https://other.example/mcp', code_challenge: challenge, code_challenge_method: 'S256' }),
      { redirect: 'manual' },
    );
    const to = new URL(r.headers.get('location')!);
    expect(to.searchParams.get('error')).toBe('invalid_target');
  });

  it('refuses a replayed authorization code and a wrong code_verifier', async () => {
    const { jar } = await signedInPerson(server);
    const { clientId, code, verifier } = await connect(jar);
    const replay = await token({
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT,
      client_id: clientId,
      code_verifier: verifier,
      resource: `${base}/mcp`,
    });
    expect(replay.status).toBe(400);
    expect(replay.json.error).toBe('invalid_grant');

    const clientId2 = await register();
    const { challenge } = pkce();
    const back = await consentOverHttp(base, jar, authorizeUrl(clientId2, { code_challenge: challenge, code_challenge_method: 'S256' }), {
      agent: 'new',
      handle: `pk-${randomBytes(3).toString('hex')}`,
      displayName: 'P',
    });
    const wrong = await token({
      grant_type: 'authorization_code',
      code: back.searchParams.get('code')!,
      redirect_uri: REDIRECT,
      client_id: clientId2,
      code_verifier: pkce().verifier,
      resource: `${base}/mcp`,
    });
    expect(wrong.status).toBe(400);
    expect(wrong.json.error).toBe('invalid_grant');
  });

  it('refuses a token for another audience and garbage tokens with 401 invalid_token', async () => {
    const { jar } = await signedInPerson(server);
    const { tokens } = await connect(jar);
    const [h, p, s] = tokens.access_token.split('.');
    const payload = JSON.parse(Buffer.from(p, 'base64url').toString());
    payload.aud = 'https://other.example/mcp';
    const forged = `${h}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.${s}`;
    for (const bad of [forged, 'not-a-token', 'a.b.c']) {
      const r = await server.http('/v1/tools/get_me', { body: {}, apiKey: bad });
      expect(r.status).toBe(401);
      expect(r.json.ok).toBe(false);
      expect(r.headers.get('www-authenticate')).toContain('error="invalid_token"');
      expect(r.headers.get('www-authenticate')).toContain('resource_metadata=');
    }
  });

  it('the consent form refuses a foreign Origin and a missing CSRF token', async () => {
    const { jar } = await signedInPerson(server);
    const clientId = await register();
    const { challenge } = pkce();
    const a = await jar.fetch(authorizeUrl(clientId, { code_challenge: challenge, code_challenge_method: 'S256' }));
    const consent = new URL(a.headers.get('location')!, base).href;
    const form = new URLSearchParams({
      agent: 'new',
      handle: 'csrf-test',
      display_name: 'X',
      decision: 'allow',
      scope: 'svc:read',
    }).toString();
    const foreign = await jar.fetch(consent, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://evil.example' },
      body: form,
    });
    expect(foreign.status).toBe(403);
    const noToken = await jar.fetch(consent, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: base },
      body: form,
    });
    expect(noToken.status).toBe(403);
  });

  it('sends a person who is not signed in to the sign-in page and back', async () => {
    const clientId = await register();
    const { challenge } = pkce();
    const jar = new CookieJar();
    const a = await jar.fetch(authorizeUrl(clientId, { code_challenge: challenge, code_challenge_method: 'S256' }));
    const consent = new URL(a.headers.get('location')!, base);
    const b = await jar.fetch(consent.href);
    expect(b.status).toBe(303);
    expect(b.headers.get('location')).toBe(`/signin?return_to=${encodeURIComponent(consent.pathname)}`);
  });
});
