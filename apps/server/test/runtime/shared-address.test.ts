/**
 * Neighbours are not punished: agents share egress addresses, so after one misconfigured agent used up its
 * address's failed-authentication budget, a valid credential from that address keeps working (REST and MCP),
 * while unknown credentials are still refused before any lookup. Every 429 names the limit that refused it
 * in RateLimit-Policy / RateLimit. In memory and in Redis (shared by two instances on one database).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { generateApiKey, ToolError } from '@kitty/core';
import { createTestDatabase } from '@kitty/db';
import { startTestServer, QUIET_TEST_CONFIG, type TestServer } from '../server-harness.ts';
import { startKitty, type RunningKitty } from '../../src/index.ts';
import { AbuseLimiter } from '../../src/http/abuse-limits.ts';

const REDIS = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

async function start(overrides: Parameters<typeof startTestServer>[0] = {}): Promise<TestServer> {
  const s = await startTestServer(overrides);
  cleanups.push(() => s.close());
  return s;
}

const mcpPing = (s: { url: string }, key: string) =>
  fetch(`${s.url}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
      authorization: `Bearer ${key}`,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_me', arguments: {} } }),
  });

describe('two agents behind one address', () => {
  for (const store of ['memory', 'redis'] as const) {
    it(`the valid agent keeps working while the misconfigured one is throttled (${store})`, async () => {
      const s = await start({
        authFailLimit: 5,
        authFailWindowSeconds: 60,
        ...(store === 'redis' ? { redisUrl: REDIS, redisPrefix: `kt-${randomUUID().slice(0, 8)}` } : {}),
      });
      const good = await s.agent('good');
      const fresh = await s.agent('fresh'); // registered but not used yet: its key is known from the start
      expect((await s.http('/v1/tools/get_me', { body: {}, apiKey: good.apiKey })).status).toBe(200);
      const statuses: number[] = [];
      let last;
      for (let i = 0; i < 7; i++) {
        last = await s.http('/v1/tools/get_me', { body: {}, apiKey: generateApiKey().key });
        statuses.push(last.status);
      }
      expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429]);
      // The refusal names its limit: 5 failures per 60 s, none left.
      expect(last!.headers.get('ratelimit-policy')).toBe('"authfail";q=5;w=60');
      expect(last!.headers.get('ratelimit')).toMatch(/^"authfail";r=0;t=\d+$/);
      expect(Number(last!.headers.get('ratelimit')!.split('t=')[1])).toBe(last!.json.error.retry_after);
      // The neighbour: REST and MCP, again and again.
      for (let i = 0; i < 3; i++) {
        const me = await s.http('/v1/tools/get_me', { body: {}, apiKey: good.apiKey });
        expect(me.status).toBe(200);
        expect(me.json.data.agent.handle).toBe(good.handle);
        expect(me.headers.get('ratelimit-policy')).toMatch(/^"user";/);
      }
      const mcp = await mcpPing(s, good.apiKey);
      expect(mcp.status).toBe(200);
      expect(await mcp.text()).toContain(good.handle);
      expect((await s.http('/v1/tools/get_me', { body: {}, apiKey: fresh.apiKey })).status).toBe(200);
      // Still refused: unknown keys, and a key of the right shape that was never valid.
      expect((await s.http('/v1/tools/get_me', { body: {}, apiKey: generateApiKey().key })).status).toBe(429);
      const mcpRefused = await mcpPing(s, generateApiKey().key);
      expect(mcpRefused.status).toBe(429);
      expect(mcpRefused.headers.get('ratelimit-policy')).toBe('"authfail";q=5;w=60');
      expect(mcpRefused.headers.get('ratelimit')).toMatch(/^"authfail";r=0;t=\d+$/);
    });
  }

  it('is shared by two instances through Redis: a key that worked on one passes on the other', async () => {
    const db = await createTestDatabase();
    const prefix = `kt-${randomUUID().slice(0, 8)}`;
    const config = {
      databaseUrl: db.databaseUrl,
      ...QUIET_TEST_CONFIG,
      authFailLimit: 3,
      authFailWindowSeconds: 60,
      redisUrl: REDIS,
      redisPrefix: prefix,
    };
    const a: RunningKitty = await startKitty(config);
    const b: RunningKitty = await startKitty(config);
    cleanups.push(async () => {
      await a.close();
      await b.close();
      await db.drop();
    });
    const call = (k: RunningKitty, key: string) =>
      fetch(`${k.url}/v1/tools/get_me`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        body: '{}',
      });
    const reg = await fetch(`${a.url}/v1/agents`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ handle: `good-${randomUUID().slice(0, 8)}`, display_name: 'Good' }),
    });
    const key = ((await reg.json()) as { data: { api_key: string } }).data.api_key;
    expect((await call(a, key)).status).toBe(200);
    // The misconfigured agent hits instance b; the address is throttled on both.
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await call(b, generateApiKey().key)).status);
    expect(statuses).toEqual([401, 401, 401, 429]);
    expect((await call(a, generateApiKey().key)).status).toBe(429);
    // b never saw the good key authenticate; Redis tells it the key is known.
    expect((await call(b, key)).status).toBe(200);
    expect((await call(a, key)).status).toBe(200);
  });
});

describe('the failed-authentication budget, unit', () => {
  it('unknown tokens cost no lookup while throttled; a known token that stops working is forgotten', async () => {
    const limiter = new AbuseLimiter({ authFailPoints: 2, authFailWindowSeconds: 60, registerPerHour: 0, registerPerDay: 0 });
    let lookups = 0;
    let revoked = false;
    const check = (token: string) => async () => {
      lookups++;
      if (token !== 'good' || revoked) throw new ToolError('UNAUTHENTICATED', 'unknown key');
      return token;
    };
    const run = (token: string) => limiter.meterAuthentication('10.1.1.1', check(token), token).catch((e: ToolError) => e.kittyCode);
    expect(await run('good')).toBe('good');
    expect([await run('x1'), await run('x2')]).toEqual(['UNAUTHENTICATED', 'UNAUTHENTICATED']);
    lookups = 0;
    expect([await run('x3'), await run('x4'), await run('x5')]).toEqual(['RATE_LIMITED', 'RATE_LIMITED', 'RATE_LIMITED']);
    expect(lookups).toBe(0);
    expect(await run('good')).toBe('good');
    expect(lookups).toBe(1);
    // Revoked meanwhile: refused once by the real check, then like any unknown token.
    revoked = true;
    expect(await run('good')).toBe('UNAUTHENTICATED');
    expect(await run('good')).toBe('RATE_LIMITED');
    expect(lookups).toBe(2);
    // Without the token, nothing passes a throttled address.
    expect(await limiter.meterAuthentication('10.1.1.1', async () => 'ok').catch((e: ToolError) => e.kittyCode)).toBe('RATE_LIMITED');
  });
});

describe('every 429 names its limit', () => {
  it('a registration refusal carries the registration policy, not the anonymous one', async () => {
    const s = await start({ registerPerHour: 2, registerPerDay: 100, rateLimitAnonPoints: 90 });
    for (let i = 0; i < 2; i++) await s.agent('r');
    const refused = await s.http('/v1/agents', { body: { handle: `r-${randomUUID().slice(0, 8)}`, display_name: 'R' } });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('ratelimit-policy')).toBe('"registrations_hour";q=2;w=3600');
    expect(refused.headers.get('ratelimit')).toBe(`"registrations_hour";r=0;t=${refused.json.error.retry_after}`);
    // The request limit itself still answers with its own policy.
    const ok = await s.http('/v1/tools');
    expect(ok.headers.get('ratelimit-policy')).toBe('"anon";q=90;w=60');
  });

  it('the request limit refusal keeps its own policy', async () => {
    const s = await start({ rateLimitAnonPoints: 2 });
    const codes = [];
    let last;
    for (let i = 0; i < 3; i++) {
      last = await s.http('/v1/tools');
      codes.push(last.status);
    }
    expect(codes).toEqual([200, 200, 429]);
    expect(last!.headers.get('ratelimit-policy')).toBe('"anon";q=2;w=60');
    expect(last!.headers.get('ratelimit')).toMatch(/^"anon";r=0;t=\d+$/);
  });
});
