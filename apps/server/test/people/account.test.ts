/**
 * The account page over real HTTP: the `account` tRPC router at /trpc through the Fastify adapter,
 * called with the official @trpc/client (as the page does) with a session cookie; the keys it hands
 * out used against the REST tools; CSRF refusals; no CORS; the built page at /account; and the
 * authenticator's "last used" bookkeeping.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTRPCClient, httpBatchLink, httpLink, TRPCClientError } from '@trpc/client';
import { createSession, type AccountRouter, type AccountErrorData } from '@kitty/core';
import { ApiKeyAuthenticator } from '../../src/auth/api-keys.ts';
import { startTestServer, type TestServer } from '../server-harness.ts';

let s: TestServer;

beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s.close();
});

async function signedIn(name: string) {
  const human = await s.kitty.services.prisma.human.create({ data: { displayName: name } });
  const { cookieValue } = await createSession(s.kitty.services.prisma, human.id, { ip: '127.0.0.1' });
  return { humanId: human.id, cookie: `kitty_session=${cookieValue}` };
}

function client(cookie: string | null, origin: string | null = s.url, batch = true) {
  const headers = () => ({ ...(cookie ? { cookie } : {}), ...(origin ? { origin } : {}) });
  const link = batch ? httpBatchLink({ url: `${s.url}/trpc`, headers }) : httpLink({ url: `${s.url}/trpc`, headers });
  return createTRPCClient<AccountRouter>({ links: [link] });
}

async function kittyError(p: Promise<unknown>): Promise<AccountErrorData['kitty'] & { status: number }> {
  try {
    await p;
  } catch (e) {
    if (e instanceof TRPCClientError) {
      const data = e.data as AccountErrorData & { httpStatus: number };
      return { ...data.kitty, status: data.httpStatus };
    }
    throw e;
  }
  throw new Error('expected a failure');
}

describe('account router over HTTP', () => {
  it('keys made on the account page work on the REST tools: read-only → FORBIDDEN required_scope, rotate keeps the old key, revoke → 401', async () => {
    const alice = await signedIn('Alice');
    const api = client(alice.cookie);
    expect((await api.session.query()).human?.display_name).toBe('Alice');
    const created = await api.agents.create.mutate({ handle: `web-${randomUUID().slice(0, 8)}`, display_name: 'Web agent' });
    const me = await s.http('/v1/tools/get_me', { apiKey: created.api_key, body: {} });
    expect(me.status).toBe(200);
    expect(me.json.data.agent.handle).toBe(created.agent.handle);

    const ro = await api.keys.create.mutate({ agent_id: created.agent.agent_id, access: 'read', label: 'reader' });
    expect((await s.http('/v1/tools/get_me', { apiKey: ro.api_key, body: {} })).status).toBe(200);
    const write = await s.http('/v1/tools/create_group', {
      apiKey: ro.api_key,
      body: { name: 'Nope', currency: 'EUR', idempotency_key: `k-${randomUUID()}` },
    });
    expect(write.status).toBe(403);
    expect(write.json.error).toMatchObject({ code: 'FORBIDDEN', details: { required_scope: 'svc:write' } });

    const rotated = await api.keys.rotate.mutate({ key_id: ro.key.key_id });
    expect((await s.http('/v1/tools/get_me', { apiKey: ro.api_key, body: {} })).status).toBe(200); // grace period
    expect((await s.http('/v1/tools/get_me', { apiKey: rotated.api_key, body: {} })).status).toBe(200);

    await api.keys.revoke.mutate({ key_id: rotated.key.key_id });
    const revoked = await s.http('/v1/tools/get_me', { apiKey: rotated.api_key, body: {} });
    expect(revoked.status).toBe(401);
    expect(revoked.json.error.code).toBe('UNAUTHENTICATED');
  });

  it('errors reach the page as the envelope body (code, message, suggested action) with the table status', async () => {
    const alice = await signedIn('Alice');
    const bad = await kittyError(client(alice.cookie).agents.create.mutate({ handle: 'X!', display_name: 'x' }));
    expect(bad).toMatchObject({ code: 'VALIDATION_ERROR', status: 400 });
    expect((bad.details?.issues as Array<{ path: string }>)[0]!.path).toBe('handle');
    const anon = await kittyError(client(null).agents.list.query());
    expect(anon).toMatchObject({ code: 'UNAUTHENTICATED', status: 401 });
    expect(anon.suggested_action).toContain('/signin');
    const other = await kittyError(client(alice.cookie).keys.list.query({ agent_id: randomUUID() }));
    expect(other).toMatchObject({ code: 'NOT_FOUND', status: 404 });
  });

  it('CSRF: mutations without our Origin are refused with 403; no CORS headers are ever sent', async () => {
    const alice = await signedIn('Alice');
    for (const origin of [null, 'https://evil.example']) {
      const e = await kittyError(
        client(alice.cookie, origin, false).agents.create.mutate({ handle: `csrf-${randomUUID().slice(0, 8)}`, display_name: 'x' }),
      );
      expect(e).toMatchObject({ code: 'FORBIDDEN', status: 403, details: { reason: 'csrf_origin' } });
    }
    expect((await client(alice.cookie).agents.list.query()).agents).toEqual([]);
    const pre = await fetch(`${s.url}/trpc/agents.create`, {
      method: 'OPTIONS',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
    });
    expect(pre.headers.get('access-control-allow-origin')).toBeNull();
    const get = await fetch(`${s.url}/trpc/session`, { headers: { origin: 'https://evil.example', cookie: alice.cookie } });
    expect(get.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('serves the built page at /account, client routes included, with a strict content security policy', async () => {
    for (const path of ['/account', '/account/', `/account/agents/${randomUUID()}`, '/account/security']) {
      const r = await s.http(path);
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toContain('text/html');
      expect(r.headers.get('content-security-policy')).toContain("default-src 'self'");
      expect(r.text).toContain('<div id="root">');
    }
    const index = await s.http('/account');
    const asset = /src="(\/account\/assets\/[^"]+\.js)"/.exec(index.text)![1]!;
    const js = await s.http(asset);
    expect(js.status).toBe(200);
    expect(js.headers.get('cache-control')).toContain('immutable');
  });
});

describe('last used', () => {
  for (const [what, ttlMs] of [
    ['cache hits', 3_600_000],
    ['cache misses', 1],
  ] as const) {
    it(`records api_keys.last_used_at and agents.last_active_at at most once a minute per key (${what})`, async () => {
      const agent = await s.agent('lastused');
      let now = new Date('2030-01-01T00:00:00Z');
      const auth = new ApiKeyAuthenticator(s.kitty.services.prisma, () => now, ttlMs);
      const read = async () => {
        await auth.settled();
        const k = await s.kitty.services.prisma.apiKey.findFirstOrThrow({ where: { agentId: agent.agentId }, include: { agent: true } });
        return { key: k.lastUsedAt?.toISOString(), agent: k.agent.lastActiveAt?.toISOString() };
      };
      await auth.authenticate(agent.apiKey);
      expect(await read()).toEqual({ key: '2030-01-01T00:00:00.000Z', agent: '2030-01-01T00:00:00.000Z' });
      now = new Date('2030-01-01T00:00:59Z');
      await auth.authenticate(agent.apiKey);
      expect((await read()).key).toBe('2030-01-01T00:00:00.000Z');
      now = new Date('2030-01-01T00:01:00Z');
      await auth.authenticate(agent.apiKey);
      expect(await read()).toEqual({ key: '2030-01-01T00:01:00.000Z', agent: '2030-01-01T00:01:00.000Z' });
    });
  }
});
