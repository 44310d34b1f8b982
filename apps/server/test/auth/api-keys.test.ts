/**
 * Scoped keys for agents over real HTTP:
 * - an agent makes a read-only key with create_api_key (REST), a helper reads with it, and every write tool of the
 *   catalogue refuses it — REST 403 and MCP (HTTP 403 insufficient_scope + isError FORBIDDEN) — with
 *   details.required_scope "svc:write", and nothing is written (one table over the registry's write tools);
 * - the same tools over MCP: list_api_keys shows no secret, a create retried with the same key says so,
 *   revoke_api_key ends the key at once (401 on the next call, no cache lag).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { startTestServer, type TestServer } from '../server-harness.ts';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
}, 60_000);
afterAll(async () => {
  await s?.close();
});

async function mcp(apiKey: string, name: string, args: Record<string, unknown>) {
  const res = await fetch(`${s.url}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${apiKey}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
  });
  const json = (await res.json()) as any;
  const result = json.result;
  return {
    status: res.status,
    challenge: res.headers.get('www-authenticate'),
    result,
    envelope: result?.isError ? JSON.parse(result.content[0].text) : undefined,
  };
}

describe('a read-only key made by the agent', () => {
  it('reads, and is refused every write tool with required_scope svc:write on REST and MCP', async () => {
    const ann = await s.agent('ann');
    const made = await s.http('/v1/tools/create_api_key', {
      apiKey: ann.apiKey,
      body: { scopes: ['svc:read'], label: 'helper', idempotency_key: `ro-${randomUUID()}` },
    });
    expect(made.status, made.text).toBe(200);
    const ro = made.json.data.api_key as string;
    expect((await s.http('/v1/tools/get_me', { apiKey: ro, body: {} })).json.data.agent.handle).toBe(ann.handle);

    const tools = (await s.http('/v1/tools')).json.data.tools as Array<{ name: string; kind: string; auth: string; scope: string }>;
    const writes = tools.filter((t) => t.kind === 'write' && t.auth === 'required');
    expect(writes.length).toBeGreaterThan(25);
    const activityBefore = await s.kitty.services.prisma.activity.count();
    const refused: string[] = [];
    for (const t of writes) {
      expect(t.scope, t.name).toBe('svc:write');
      const args = { idempotency_key: `ro-${t.name}-${randomUUID()}` };
      const rest = await s.http(`/v1/tools/${t.name}`, { apiKey: ro, body: args });
      expect([t.name, rest.status, rest.json.error?.code, rest.json.error?.details?.required_scope]).toEqual([
        t.name,
        403,
        'FORBIDDEN',
        'svc:write',
      ]);
      const m = await mcp(ro, t.name, args);
      expect([t.name, m.status, m.envelope?.error?.code, m.envelope?.error?.details?.required_scope]).toEqual([
        t.name,
        403,
        'FORBIDDEN',
        'svc:write',
      ]);
      expect(m.challenge, t.name).toMatch(/insufficient_scope/);
      refused.push(t.name);
    }
    expect(refused).toEqual(
      expect.arrayContaining(['create_api_key', 'revoke_api_key', 'rotate_api_key', 'add_expense', 'record_payment']),
    );
    expect(await s.kitty.services.prisma.activity.count()).toBe(activityBefore);
    expect(await s.kitty.services.prisma.apiKey.count({ where: { agent: { handle: ann.handle } } })).toBe(2);
  });
});

describe('the key tools over MCP', () => {
  it('create (never replayed), list (no secret), revoke (401 at once)', async () => {
    const bob = await s.agent('bob');
    const key = `mk-${randomUUID()}`;
    const created = await mcp(bob.apiKey, 'create_api_key', { scopes: ['svc:read', 'svc:write'], expires_in: '12h', idempotency_key: key });
    expect(created.result.isError, JSON.stringify(created.envelope)).toBeFalsy();
    const secret = created.result.structuredContent.api_key as string;
    const keyId = created.result.structuredContent.key.key_id as string;
    expect(created.result.structuredContent.key).toMatchObject({ access: 'read_write', status: 'active' });

    const retry = await mcp(bob.apiKey, 'create_api_key', { scopes: ['svc:read', 'svc:write'], expires_in: '12h', idempotency_key: key });
    expect(retry.envelope.error.code).toBe('IDEMPOTENCY_REPLAY_UNAVAILABLE');
    expect(JSON.stringify(retry)).not.toContain(secret);

    const helperCall = await s.http('/v1/tools/get_me', { apiKey: secret, body: {} });
    expect(helperCall.status).toBe(200);
    const listed = await mcp(secret, 'list_api_keys', {});
    expect(listed.result.structuredContent.keys).toHaveLength(2);
    expect(listed.result.structuredContent.keys.find((k: any) => k.current).key_id).toBe(keyId);
    expect(JSON.stringify(listed.result)).not.toContain(secret);
    expect(JSON.stringify(listed.result)).not.toContain(bob.apiKey);

    const revoked = await mcp(bob.apiKey, 'revoke_api_key', { key_id: keyId, idempotency_key: `rv-${randomUUID()}` });
    expect(revoked.result.structuredContent).toMatchObject({ key_id: keyId, revoked: true });
    const after = await s.http('/v1/tools/get_me', { apiKey: secret, body: {} });
    expect(after.status).toBe(401);
  });
});
