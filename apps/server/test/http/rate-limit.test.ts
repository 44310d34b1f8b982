/**
 * Rate limits per credential and per IP (DESIGN.md §4): in memory, and in Redis
 * (127.0.0.1:6379) when REDIS_URL is set. 429 RATE_LIMITED with Retry-After and retry_after;
 * RateLimit-Policy and RateLimit headers on responses.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../server-harness.ts';

const servers: TestServer[] = [];
afterAll(async () => {
  for (const s of servers) await s.close();
});

for (const store of ['memory', 'redis'] as const) {
  describe(`rate limits (${store})`, () => {
    it('limits a credential and says when to come back', async () => {
      const s = await startTestServer({
        rateLimitPoints: 5,
        rateLimitAnonPoints: 1000,
        rateLimitWindowSeconds: 30,
        redisUrl: store === 'redis' ? (process.env.REDIS_URL ?? 'redis://127.0.0.1:6379') : undefined,
      });
      servers.push(s);
      const a = await s.agent('limited');
      const statuses: number[] = [];
      let last;
      for (let i = 0; i < 6; i++) {
        last = await s.http('/v1/tools/get_me', { body: {}, apiKey: a.apiKey });
        statuses.push(last.status);
        expect(last.headers.get('ratelimit-policy')).toBe('"user";q=5;w=30');
        expect(last.headers.get('ratelimit')).toMatch(/^"user";r=\d+;t=\d+$/);
      }
      expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
      expect(last!.json.error.code).toBe('RATE_LIMITED');
      expect(last!.json.error.retry_after).toBeGreaterThan(0);
      expect(Number(last!.headers.get('retry-after'))).toBe(last!.json.error.retry_after);
      // Another credential has its own budget.
      const b = await s.agent('other');
      expect((await s.http('/v1/tools/get_me', { body: {}, apiKey: b.apiKey })).status).toBe(200);
    });

    it('limits anonymous calls per IP', async () => {
      const s = await startTestServer({
        rateLimitPoints: 1000,
        rateLimitAnonPoints: 3,
        rateLimitWindowSeconds: 30,
        redisUrl: store === 'redis' ? (process.env.REDIS_URL ?? 'redis://127.0.0.1:6379') : undefined,
      });
      servers.push(s);
      if (store === 'redis') {
        // Fresh counters for 127.0.0.1 in this Redis (other runs may have used the same IP key).
        const { Redis } = await import('ioredis');
        const r = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
        const keys = await r.keys('kitty:rl:anon*');
        if (keys.length) await r.del(...keys);
        await r.quit();
      }
      const codes = [];
      for (let i = 0; i < 4; i++) codes.push((await s.http('/v1/tools')).status);
      expect(codes).toEqual([200, 200, 200, 429]);
    });
  });
}
