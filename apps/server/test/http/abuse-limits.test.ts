/**
 * Abuse limits (issue: "Abuse and resource limits"): MCP JSON-RPC batches are refused whole,
 * failed authentication is metered per IP in its own bucket (refused before any database
 * lookup once used up), and agent registration has hourly and daily per-IP windows — in
 * memory and in Redis.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { generateApiKey, ToolError } from '@kitty/core';
import { startTestServer, type TestServer } from '../server-harness.ts';
import { AbuseLimiter, ipKey } from '../../src/http/abuse-limits.ts';

const servers: TestServer[] = [];
afterAll(async () => {
  for (const s of servers) await s.close();
});
const REDIS = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

async function start(overrides: Parameters<typeof startTestServer>[0] = {}): Promise<TestServer> {
  const s = await startTestServer(overrides);
  servers.push(s);
  return s;
}

const mcpHeaders = (apiKey?: string) => ({
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2025-11-25',
  ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}),
});

describe('MCP JSON-RPC batches', () => {
  it('refuses a batch of tools/call with -32600 and runs none of them', async () => {
    const s = await start();
    const a = await s.agent('batcher');
    const batch = Array.from({ length: 20 }, (_, i) => ({
      jsonrpc: '2.0',
      id: i + 1,
      method: 'tools/call',
      params: { name: 'create_group', arguments: { name: `Batch ${i}`, currency: 'EUR', idempotency_key: `batch-${i}-${randomUUID()}` } },
    }));
    const r = await s.http('/mcp', { body: batch, headers: mcpHeaders(a.apiKey) });
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
    expect(r.json.error.message).toMatch(/batch/i);
    const groups = await s.http('/v1/tools/list_groups', { body: {}, apiKey: a.apiKey });
    expect(groups.status).toBe(200);
    expect(groups.json.data.groups).toEqual([]);
    // A single message still works.
    const one = await s.http('/mcp', { body: batch[0], headers: mcpHeaders(a.apiKey) });
    expect(one.status).toBe(200);
    expect(JSON.parse(one.text).result.structuredContent.group.name).toBe('Batch 0');
  });

  it('refuses a batch on /mcp/docs too, even of harmless requests', async () => {
    const s = await start();
    const r = await s.http('/mcp/docs', {
      body: [
        { jsonrpc: '2.0', id: 1, method: 'ping' },
        { jsonrpc: '2.0', id: 2, method: 'tools/list' },
      ],
      headers: mcpHeaders(),
    });
    expect(r.status).toBe(400);
    expect(r.json.error.code).toBe(-32600);
    const empty = await s.http('/mcp', { body: [], headers: mcpHeaders((await s.agent('e')).apiKey) });
    expect(empty.json.error.code).toBe(-32600);
  });
});

describe('client address keys', () => {
  it('IPv4 as is, IPv4-mapped IPv6 as IPv4, IPv6 by its /64', () => {
    expect(ipKey('203.0.113.9')).toBe('203.0.113.9');
    expect(ipKey('::ffff:203.0.113.9')).toBe('203.0.113.9');
    expect(ipKey('2001:db8:abcd:12:1:2:3:4')).toBe('2001:db8:abcd:12::/64');
    expect(ipKey('2001:DB8:ABCD:0012::99')).toBe('2001:db8:abcd:12::/64');
    expect(ipKey('2001:db8:abcd:13::1')).not.toBe(ipKey('2001:db8:abcd:12::1'));
  });

  it('one IPv6 /64 shares one failed-authentication budget', async () => {
    const limiter = new AbuseLimiter({ authFailPoints: 2, authFailWindowSeconds: 60, registerPerHour: 0, registerPerDay: 0 });
    const fail = async () => {
      throw new ToolError('UNAUTHENTICATED', 'unknown key');
    };
    const codes: string[] = [];
    for (const ip of ['2001:db8::1', '2001:db8::2', '2001:db8::3'])
      codes.push(await limiter.meterAuthentication(ip, fail).catch((e: ToolError) => e.kittyCode));
    expect(codes).toEqual(['UNAUTHENTICATED', 'UNAUTHENTICATED', 'RATE_LIMITED']);
  });
});

describe('failed authentication', () => {
  it('lets a credential known here through a locked-out address until it fails, then refuses it without a lookup', async () => {
    const limiter = new AbuseLimiter({ authFailPoints: 2, authFailWindowSeconds: 60, registerPerHour: 0, registerPerDay: 0 });
    const token = generateApiKey().key;
    let valid = true;
    let lookups = 0;
    const lookup = async () => {
      lookups++;
      if (!valid) throw new ToolError('UNAUTHENTICATED', 'revoked');
      return 'ok';
    };
    const unknown = async () => {
      throw new ToolError('UNAUTHENTICATED', 'unknown key');
    };
    const meter = (auth: () => Promise<string>, t?: string) =>
      limiter.meterAuthentication('10.0.0.9', auth, t).catch((e: ToolError) => e.kittyCode);
    expect(await meter(lookup, token)).toBe('ok');
    expect([await meter(unknown, generateApiKey().key), await meter(unknown, generateApiKey().key)]).toEqual([
      'UNAUTHENTICATED',
      'UNAUTHENTICATED',
    ]);
    expect(await meter(unknown, generateApiKey().key)).toBe('RATE_LIMITED');
    // Known here: it still reaches its lookup, every time.
    expect([await meter(lookup, token), await meter(lookup, token)]).toEqual(['ok', 'ok']);
    expect(lookups).toBe(3);
    // Revoked: the lookup refuses it once and it is forgotten; the locked-out address then gets no more lookups for it.
    valid = false;
    expect(await meter(lookup, token)).toBe('UNAUTHENTICATED');
    expect(await meter(lookup, token)).toBe('RATE_LIMITED');
    expect(lookups).toBe(4);
    expect(limiter.known.size()).toBe(0);
  });

  it('never calls the lookup once the IP used up its budget', async () => {
    const limiter = new AbuseLimiter({ authFailPoints: 3, authFailWindowSeconds: 60, registerPerHour: 0, registerPerDay: 0 });
    let lookups = 0;
    const failing = async () => {
      lookups++;
      throw new ToolError('UNAUTHENTICATED', 'unknown key');
    };
    const outcomes: string[] = [];
    for (let i = 0; i < 6; i++) {
      outcomes.push(await limiter.meterAuthentication('10.0.0.1', failing).catch((e: ToolError) => e.kittyCode));
    }
    expect(outcomes).toEqual(['UNAUTHENTICATED', 'UNAUTHENTICATED', 'UNAUTHENTICATED', 'RATE_LIMITED', 'RATE_LIMITED', 'RATE_LIMITED']);
    expect(lookups).toBe(3);
    // Another IP has its own bucket; successes cost nothing.
    expect(await limiter.meterAuthentication('10.0.0.2', async () => 'ok')).toBe('ok');
    expect(await limiter.meterAuthentication('10.0.0.2', async () => 'ok')).toBe('ok');
  });

  for (const store of ['memory', 'redis'] as const) {
    it(`answers 429 RATE_LIMITED with Retry-After after too many wrong keys from one IP (${store})`, async () => {
      if (store === 'redis') {
        const { Redis } = await import('ioredis');
        const r = new Redis(REDIS);
        const keys = await r.keys('kitty:rl:authfail*');
        if (keys.length) await r.del(...keys);
        await r.quit();
      }
      const s = await start({ authFailLimit: 5, authFailWindowSeconds: 60, redisUrl: store === 'redis' ? REDIS : undefined });
      const good = await s.agent('good');
      const statuses: number[] = [];
      let last;
      for (let i = 0; i < 8; i++) {
        last = await s.http('/v1/tools/get_me', { body: {}, apiKey: generateApiKey().key });
        statuses.push(last.status);
      }
      expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429, 429]);
      expect(last!.json).toMatchObject({ ok: false, error: { code: 'RATE_LIMITED', details: { limit: 'failed_authentications_per_ip' } } });
      expect(last!.json.error.retry_after).toBeGreaterThan(0);
      expect(Number(last!.headers.get('retry-after'))).toBe(last!.json.error.retry_after);
      // MCP gets the same refusal.
      const mcp = await s.http('/mcp', { body: { jsonrpc: '2.0', id: 1, method: 'ping' }, headers: mcpHeaders(generateApiKey().key) });
      expect(mcp.status).toBe(429);
      // While the IP is locked out, unknown credentials are refused (no lookup happens); a key known to be
      // valid (issued by register_agent) still works (shared-address.test.ts); anonymous calls still work.
      expect((await s.http('/v1/tools/get_me', { body: {}, apiKey: good.apiKey })).status).toBe(200);
      expect((await s.http('/v1/tools')).status).toBe(200);
    });
  }
});

describe('agent registration windows per IP', () => {
  for (const store of ['memory', 'redis'] as const) {
    it(`caps registrations per hour across REST, the tool route and MCP (${store})`, async () => {
      if (store === 'redis') {
        const { Redis } = await import('ioredis');
        const r = new Redis(REDIS);
        const keys = await r.keys('kitty:rl:reg_*');
        if (keys.length) await r.del(...keys);
        await r.quit();
      }
      const s = await start({ registerPerHour: 4, registerPerDay: 100, redisUrl: store === 'redis' ? REDIS : undefined });
      const handle = () => `reg-${randomUUID().slice(0, 8)}`;
      const first = await s.http('/v1/agents', { body: { handle: handle(), display_name: 'One' } });
      expect(first.status).toBe(200);
      expect((await s.http('/v1/tools/register_agent', { body: { handle: handle(), display_name: 'Two' } })).status).toBe(200);
      // An authenticated agent registering others over MCP counts for the same IP.
      const viaMcp = await s.http('/mcp', {
        body: {
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'register_agent', arguments: { handle: handle(), display_name: 'Three' } },
        },
        headers: mcpHeaders(first.json.data.api_key),
      });
      expect(JSON.parse(viaMcp.text).result.isError).toBeFalsy();
      expect((await s.http('/v1/agents', { body: { handle: handle(), display_name: 'Four' } })).status).toBe(200);
      const refused = await s.http('/v1/agents', { body: { handle: handle(), display_name: 'Five' } });
      expect(refused.status).toBe(429);
      expect(refused.json).toMatchObject({
        ok: false,
        error: { code: 'RATE_LIMITED', details: { limit: 'registrations_per_ip', window: 'hour', max: 4 } },
      });
      expect(refused.json.error.retry_after).toBeGreaterThan(60);
      expect(Number(refused.headers.get('retry-after'))).toBe(refused.json.error.retry_after);
      const overMcp = await s.http('/mcp', {
        body: {
          jsonrpc: '2.0',
          id: 2,
          method: 'tools/call',
          params: { name: 'register_agent', arguments: { handle: handle(), display_name: 'Six' } },
        },
        headers: mcpHeaders(first.json.data.api_key),
      });
      const result = JSON.parse(overMcp.text).result;
      expect(result.isError).toBe(true);
      expect(JSON.parse(result.content[0].text).error.code).toBe('RATE_LIMITED');
      // Other tools are not affected.
      expect((await s.http('/v1/tools/get_me', { body: {}, apiKey: first.json.data.api_key })).status).toBe(200);
    });
  }

  it('caps registrations per day', async () => {
    const s = await start({ registerPerHour: 100, registerPerDay: 2 });
    const codes: number[] = [];
    let last;
    for (let i = 0; i < 3; i++) {
      last = await s.http('/v1/agents', { body: { handle: `day-${randomUUID().slice(0, 8)}`, display_name: 'D' } });
      codes.push(last.status);
    }
    expect(codes).toEqual([200, 200, 429]);
    expect(last!.json.error.details.window).toBe('day');
    expect(last!.json.error.retry_after).toBeGreaterThan(3600);
  });
});
