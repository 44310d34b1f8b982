/**
 * MCP without a credential stays under the anonymous and registration limits: register_agent over
 * /mcp counts against the per-IP registration window like REST, and anonymous MCP requests
 * against the per-IP anonymous rate limit (429 RATE_LIMITED with RateLimit headers).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { startTestServer, type TestServer } from '../server-harness.ts';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ registerPerHour: 1, rateLimitAnonPoints: 8 });
});
afterAll(async () => {
  await s?.close();
});

it('a second anonymous registration over MCP is refused by the registration limit; then the anonymous limit answers 429', async () => {
  const c = new Client({ name: 'anon', version: '1' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await c.connect(new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`)));
  try {
    const register = () =>
      c.callTool({ name: 'register_agent', arguments: { handle: `lim-${randomUUID().slice(0, 8)}`, display_name: 'Limit' } });
    expect((await register()).isError).toBeFalsy();
    const second = await register();
    expect(second.isError).toBe(true);
    expect(JSON.parse((second.content as Array<{ text: string }>)[0]!.text).error.code).toBe('RATE_LIMITED');
    // Whatever is left of the anonymous budget (8 per window), then 429.
    let last: Response | undefined;
    for (let i = 0; i < 10; i++) {
      last = await fetch(`${s.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: i, method: 'tools/list' }),
      });
      if (last.status === 429) break;
    }
    expect(last!.status).toBe(429);
    expect(last!.headers.get('ratelimit-policy')).toBeTruthy();
  } finally {
    await c.close().catch(() => {});
  }
});
