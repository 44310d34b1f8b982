/**
 * REST adapter and server rules over real HTTP (interface-spec "Endpoints", "Errors",
 * "Authentication"; DESIGN.md §4), on a fresh PostgreSQL database.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { startTestServer, type TestServer } from '../server-harness.ts';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ bodyLimit: 64 * 1024 });
});
afterAll(async () => {
  await s?.close();
});

const expectEnvelope = (r: { status: number; headers: Headers; json: any }, status: number, code: string) => {
  expect(r.status).toBe(status);
  expect(r.json.ok).toBe(false);
  expect(r.json.error.code).toBe(code);
  expect(typeof r.json.error.message).toBe('string');
  expect(typeof r.json.error.suggested_action).toBe('string');
  expect(r.json.request_id).toBe(r.headers.get('x-request-id'));
};

describe('discovery', () => {
  it('GET /v1/tools lists every tool with schemas and an ETag; If-None-Match gives 304 without body', async () => {
    const r = await s.http('/v1/tools');
    expect(r.status).toBe(200);
    expect(r.json.ok).toBe(true);
    const etag = r.headers.get('etag');
    expect(etag).toBe(`"${s.kitty.registry.version}"`);
    expect(r.json.data.tools.length).toBe(s.kitty.registry.catalogue.length);
    for (const t of r.json.data.tools) {
      expect(t.input_schema.type).toBe('object');
      expect(t.output_schema.type).toBe('object');
      expect(['read', 'write']).toContain(t.kind);
    }
    const again = await s.http('/v1/tools', { headers: { 'if-none-match': etag! } });
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
    const stale = await s.http('/v1/tools', { headers: { 'if-none-match': '"old"' } });
    expect(stale.status).toBe(200);
  });

  it('GET /v1/tools/{name} describes one tool; unknown → 404 envelope', async () => {
    const r = await s.http('/v1/tools/create_group');
    expect(r.status).toBe(200);
    expect(r.json.data.name).toBe('create_group');
    expect(r.json.data.input_schema.required).toEqual(expect.arrayContaining(['name', 'currency', 'idempotency_key']));
    expectEnvelope(await s.http('/v1/tools/nope'), 404, 'NOT_FOUND');
  });

  it('sandbox validates against the live schema and stores nothing', async () => {
    const before = await s.kitty.services.prisma.agent.count();
    const ok = await s.http('/v1/sandbox/tools/register_agent', { body: { handle: 'sandboxed', display_name: 'S' } });
    expect(ok.status).toBe(200);
    expect(ok.json.data.valid).toBe(true);
    const bad = await s.http('/v1/sandbox/tools/register_agent', { body: { handle: 'X!', display_name: 'a\u0007b', extra: 1 } });
    expectEnvelope(bad, 400, 'VALIDATION_ERROR');
    const paths = bad.json.error.details.issues.map((i: any) => i.path);
    expect(paths).toEqual(expect.arrayContaining(['handle', 'display_name']));
    expectEnvelope(await s.http('/v1/sandbox/tools/nope', { body: {} }), 404, 'NOT_FOUND');
    expect(await s.kitty.services.prisma.agent.count()).toBe(before);
  });

  it('protected resource metadata (RFC 9728) with agent_auth', async () => {
    const r = await s.http('/.well-known/oauth-protected-resource');
    expect(r.status).toBe(200);
    expect(r.json.resource).toBe(s.url);
    expect(r.json.scopes_supported).toEqual(expect.arrayContaining(['svc:read', 'svc:write']));
    expect(r.json.bearer_methods_supported).toEqual(['header']);
    expect(r.json.agent_auth.register_uri).toBe(`${s.url}/v1/agents`);
  });
});

describe('envelopes and framework errors', () => {
  it('unknown route, bad JSON, oversized body, non-object body, missing body all use the envelope', async () => {
    expectEnvelope(await s.http('/nowhere'), 404, 'NOT_FOUND');
    expectEnvelope(
      await s.http('/v1/tools/create_group', { rawBody: '{not json', headers: { 'content-type': 'application/json' } }),
      400,
      'VALIDATION_ERROR',
    );
    expectEnvelope(await s.http('/v1/agents', { body: { handle: 'big', display_name: 'x'.repeat(100_000) } }), 413, 'PAYLOAD_TOO_LARGE');
    expectEnvelope(await s.http('/v1/agents', { body: [1, 2] }), 400, 'VALIDATION_ERROR');
    const missing = await s.http('/v1/tools/register_agent', { method: 'POST' });
    expectEnvelope(missing, 400, 'VALIDATION_ERROR');
  });

  it('a tool without required arguments accepts an omitted body', async () => {
    const a = await s.agent('nobody');
    const r = await s.http('/v1/tools/get_me', { method: 'POST', apiKey: a.apiKey });
    expect(r.status).toBe(200);
    expect(r.json.data.agent.handle).toBe(a.handle);
    expect(r.json.data.suggested_next.length).toBeGreaterThan(0);
  });

  it('every 401 carries WWW-Authenticate pointing at the resource metadata', async () => {
    for (const r of [await s.http('/v1'), await s.http('/v1/tools/get_me', { body: {} }), await s.http('/v1', { apiKey: 'kitty_wrong' })]) {
      expectEnvelope(r, 401, 'UNAUTHENTICATED');
      expect(r.headers.get('www-authenticate')).toContain(`resource_metadata="${s.url}/.well-known/oauth-protected-resource"`);
    }
  });

  it('a token that is no API key (the "null" of a failed registration) is told what an API key looks like', async () => {
    for (const token of ['null', 'kitty_wrong']) {
      const r = await s.http('/v1/tools/get_me', { apiKey: token, body: {} });
      expectEnvelope(r, 401, 'UNAUTHENTICATED');
      expect(r.json.error.message).toMatch(/neither a Kitty API key nor an access token/);
      expect(r.json.error.suggested_action).toContain('"kitty_" followed by 49 letters and digits');
      expect(r.json.error.suggested_action).not.toMatch(/refresh|connect the app/);
    }
  });

  it('GET /v1 returns the profile and where to go next', async () => {
    const a = await s.agent('entry');
    const r = await s.http('/v1', { apiKey: a.apiKey });
    expect(r.status).toBe(200);
    expect(r.json.data.agent.handle).toBe(a.handle);
    expect(r.json.data.links.mcp).toBe(`${s.url}/mcp`);
  });

  it('control characters are rejected with the field named', async () => {
    const r = await s.http('/v1/agents', { body: { handle: 'ctrl-test', display_name: 'bad\u0085name' } });
    expectEnvelope(r, 400, 'VALIDATION_ERROR');
    expect(r.json.error.details.issues[0].path).toBe('display_name');
  });
});

describe('scopes', () => {
  it('a key restricted to svc:read can read but not write (FORBIDDEN with required_scope)', async () => {
    const a = await s.agent('reader');
    await s.kitty.services.prisma.apiKey.updateMany({ where: { agentId: a.agentId }, data: { scopes: ['svc:read'] } });
    s.kitty.services.onCredentialsChanged?.(a.agentId);
    const read = await s.http('/v1/tools/get_me', { body: {}, apiKey: a.apiKey });
    expect(read.status).toBe(200);
    const write = await s.http('/v1/tools/create_group', {
      body: { name: 'x', currency: 'EUR', idempotency_key: 'scope-test-1' },
      apiKey: a.apiKey,
    });
    expectEnvelope(write, 403, 'FORBIDDEN');
    expect(write.json.error.details.required_scope).toBe('svc:write');
  });
});

describe('API keys', () => {
  it('keys are prefixed, checksummed and stored only as a digest', async () => {
    const a = await s.agent('keys');
    expect(a.apiKey).toMatch(/^kitty_[0-9A-Za-z]{49}$/);
    const rows = await s.kitty.services.prisma.$queryRaw<
      Array<{ t: string }>
    >`SELECT row_to_json(k)::text AS t FROM api_keys k WHERE agent_id = ${a.agentId}::uuid`;
    expect(rows[0]!.t).not.toContain(a.apiKey.slice(6));
    // A one-character typo fails the checksum before any lookup.
    const typo = a.apiKey.slice(0, -1) + (a.apiKey.endsWith('A') ? 'B' : 'A');
    expectEnvelope(await s.http('/v1', { apiKey: typo }), 401, 'UNAUTHENTICATED');
  });

  it('rotate_api_key: new key works, old key works 10 more minutes then 401; never replayed', async () => {
    const a = await s.agent('rotor');
    const r = await s.http('/v1/tools/rotate_api_key', { body: { idempotency_key: 'rotate-0001' }, apiKey: a.apiKey });
    expect(r.status).toBe(200);
    const newKey = r.json.data.api_key;
    expect(newKey).not.toBe(a.apiKey);
    const grace = (Date.parse(r.json.data.old_key_expires_at) - Date.now()) / 1000;
    expect(grace).toBeGreaterThan(590);
    expect(grace).toBeLessThanOrEqual(600);
    expect((await s.http('/v1', { apiKey: newKey })).status).toBe(200);
    expect((await s.http('/v1', { apiKey: a.apiKey })).status).toBe(200);
    const replay = await s.http('/v1/tools/rotate_api_key', { body: { idempotency_key: 'rotate-0001' }, apiKey: newKey });
    expectEnvelope(replay, 409, 'IDEMPOTENCY_REPLAY_UNAVAILABLE');
    // Ten minutes pass for the old key.
    await s.kitty.services.prisma
      .$executeRaw`UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE agent_id = ${a.agentId}::uuid AND expires_at IS NOT NULL`;
    s.kitty.services.onCredentialsChanged?.(a.agentId);
    expectEnvelope(await s.http('/v1', { apiKey: a.apiKey }), 401, 'UNAUTHENTICATED');
    expect((await s.http('/v1', { apiKey: newKey })).status).toBe(200);
  });

  it('a key in its grace period still calls tools but never rotates: FORBIDDEN, and the fresh key stays the only permanent one', async () => {
    const a = await s.agent('graced');
    const first = await s.http('/v1/tools/rotate_api_key', { body: { idempotency_key: `rot-${randomUUID()}` }, apiKey: a.apiKey });
    expect(first.status).toBe(200);
    const fresh = first.json.data.api_key as string;
    // The retired key keeps working for ordinary tools during its grace …
    expect((await s.http('/v1/tools/get_me', { body: {}, apiKey: a.apiKey })).status).toBe(200);
    // … but not for key management.
    const again = await s.http('/v1/tools/rotate_api_key', { body: { idempotency_key: `rot-${randomUUID()}` }, apiKey: a.apiKey });
    expectEnvelope(again, 403, 'FORBIDDEN');
    expect(again.json.error.message).toMatch(/grace/);
    expect(again.json.error.suggested_action).toMatch(/newest key/);
    const keys = await s.kitty.services.prisma.apiKey.findMany({ where: { agentId: a.agentId }, orderBy: { createdAt: 'asc' } });
    expect(keys).toHaveLength(2);
    expect(keys[0]!.rotatedAt).not.toBeNull();
    expect(keys[1]!.rotatedAt).toBeNull();
    expect(keys[1]!.expiresAt).toBeNull(); // the owner's fresh key was not cut short
    // The same holds when the retired key is not in the authentication cache (another instance, or after 30 s).
    s.kitty.services.onCredentialsChanged?.(a.agentId);
    expectEnvelope(
      await s.http('/v1/tools/rotate_api_key', { body: { idempotency_key: `rot-${randomUUID()}` }, apiKey: a.apiKey }),
      403,
      'FORBIDDEN',
    );
    // The fresh key may rotate.
    expect((await s.http('/v1/tools/rotate_api_key', { body: { idempotency_key: `rot-${randomUUID()}` }, apiKey: fresh })).status).toBe(
      200,
    );
  });

  it('rotation decided on another instance: a key still cached here as current cannot rotate once the database says it is retired', async () => {
    const b = await s.agent('stale');
    expect((await s.http('/v1/tools/get_me', { body: {}, apiKey: b.apiKey })).status).toBe(200); // cached as current
    await s.kitty.services.prisma
      .$executeRaw`UPDATE api_keys SET rotated_at = now(), expires_at = now() + interval '10 minutes' WHERE agent_id = ${b.agentId}::uuid`;
    const r = await s.http('/v1/tools/rotate_api_key', { body: { idempotency_key: `rot-${randomUUID()}` }, apiKey: b.apiKey });
    expectEnvelope(r, 403, 'FORBIDDEN');
    expect(await s.kitty.services.prisma.apiKey.count({ where: { agentId: b.agentId } })).toBe(1);
  });
});

describe('idempotency', () => {
  it('same key + same arguments replays; other arguments → 409; header and argument must agree', async () => {
    const a = await s.agent('idem');
    const key = `idem-${randomUUID()}`;
    const first = await s.http('/v1/tools/create_group', {
      body: { name: 'Once', currency: 'EUR', idempotency_key: key },
      apiKey: a.apiKey,
    });
    const second = await s.http('/v1/tools/create_group', {
      body: { name: 'Once', currency: 'EUR', idempotency_key: key },
      apiKey: a.apiKey,
    });
    expect(second.status).toBe(200);
    expect(second.json.data.group.group_id).toBe(first.json.data.group.group_id);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    const other = await s.http('/v1/tools/create_group', {
      body: { name: 'Other', currency: 'EUR', idempotency_key: key },
      apiKey: a.apiKey,
    });
    expectEnvelope(other, 409, 'IDEMPOTENCY_KEY_REUSED');
    const mismatch = await s.http('/v1/tools/create_group', {
      body: { name: 'X', currency: 'EUR', idempotency_key: 'aaaaaaaa1' },
      headers: { 'idempotency-key': 'bbbbbbbb2' },
      apiKey: a.apiKey,
    });
    expectEnvelope(mismatch, 400, 'VALIDATION_ERROR');
    const viaHeader = await s.http('/v1/tools/create_group', {
      body: { name: 'Hdr', currency: 'EUR' },
      headers: { 'idempotency-key': `hdr-${randomUUID()}` },
      apiKey: a.apiKey,
    });
    expect(viaHeader.status).toBe(200);
    const none = await s.http('/v1/tools/create_group', { body: { name: 'NoKey', currency: 'EUR' }, apiKey: a.apiKey });
    expectEnvelope(none, 400, 'VALIDATION_ERROR');
    expect(none.json.error.details.issues[0].path).toBe('idempotency_key');
    const groups = await s.kitty.services.prisma.group.count({ where: { createdById: a.agentId } });
    expect(groups).toBe(2);
  });

  it('50 concurrent identical calls with one key make exactly one effect', async () => {
    const a = await s.agent('burst');
    const key = `burst-${randomUUID()}`;
    const results = await Promise.all(
      Array.from({ length: 50 }, () =>
        s.http('/v1/tools/create_group', { body: { name: 'Burst', currency: 'USD', idempotency_key: key }, apiKey: a.apiKey }),
      ),
    );
    for (const r of results) expect(r.status, r.text).toBe(200);
    expect(new Set(results.map((r) => r.json.data.group.group_id)).size).toBe(1);
    expect(await s.kitty.services.prisma.group.count({ where: { createdById: a.agentId } })).toBe(1);
    expect(await s.kitty.services.prisma.activity.count({ where: { actorId: a.agentId, action: 'group.created' } })).toBe(1);
  });

  it('a failed attempt stores nothing: the same key can then succeed', async () => {
    const a = await s.agent('retry');
    const key = `retry-${randomUUID()}`;
    const bad = await s.http('/v1/tools/create_group', { body: { name: 'R', currency: 'ZZZ', idempotency_key: key }, apiKey: a.apiKey });
    expectEnvelope(bad, 400, 'VALIDATION_ERROR');
    expect(await s.kitty.services.prisma.idempotencyRecord.count({ where: { agentId: a.agentId } })).toBe(0);
  });
});

describe('invite URL', () => {
  it('explains the invite by content negotiation without consuming it', async () => {
    const a = await s.agent('host');
    const g = await a.client.create_group({ name: 'Cabin <3', currency: 'NOK' });
    const inv = await a.client.create_invite({ group_id: g.group.group_id, note: 'bring snacks' });
    const path = new URL(inv.invite.url).pathname;
    const json = await s.http(path, { headers: { accept: 'application/json' } });
    expect(json.json.data.invite.group_name).toBe('Cabin <3');
    const html = await s.http(path, { headers: { accept: 'text/html' } });
    expect(html.text).toContain('Cabin &lt;3');
    const txt = await s.http(path);
    expect(txt.text).toContain('join_group');
    const after = await a.client.list_invites({ direction: 'sent' });
    expect(after.invites[0]!.uses).toBe(0);
    expect(inv.message).toContain(inv.invite.code);
  });
});
