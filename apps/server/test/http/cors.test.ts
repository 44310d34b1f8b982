/**
 * CORS for browser-based MCP clients over real HTTP: preflights on /mcp and the OAuth metadata
 * documents are answered (allowed headers include the MCP ones), actual answers — the 401
 * challenge included — let an allowed origin read `WWW-Authenticate`; loopback origins and
 * KITTY_ALLOWED_ORIGINS are allowed, other origins get no CORS headers (and /mcp refuses them).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../server-harness.ts';

const APP = 'https://app.example.com';
let s: TestServer;

beforeAll(async () => {
  s = await startTestServer({ allowedOrigins: [APP] });
});
afterAll(async () => {
  await s?.close();
});

const preflight = (path: string, origin: string, method = 'POST') =>
  fetch(`${s.url}${path}`, {
    method: 'OPTIONS',
    headers: {
      origin,
      'access-control-request-method': method,
      'access-control-request-headers': 'authorization, content-type, mcp-protocol-version, mcp-method, mcp-name',
    },
  });

describe('CORS on /mcp and the metadata documents', () => {
  it('answers the preflight of an allowed origin with the MCP headers allowed', async () => {
    for (const origin of ['http://localhost:6274', 'http://127.0.0.1:5173', APP]) {
      for (const path of ['/mcp', '/mcp/docs']) {
        const r = await preflight(path, origin);
        expect(r.status, `${origin} ${path}`).toBe(204);
        expect(r.headers.get('access-control-allow-origin')).toBe(origin);
        const allowed = (r.headers.get('access-control-allow-headers') ?? '').toLowerCase().split(/\s*,\s*/);
        for (const h of [
          'authorization',
          'content-type',
          'mcp-protocol-version',
          'mcp-method',
          'mcp-name',
          'mcp-session-id',
          'last-event-id',
        ])
          expect(allowed, h).toContain(h);
        expect(r.headers.get('access-control-allow-methods')).toBe('GET, POST, DELETE, OPTIONS');
        expect(r.headers.get('access-control-max-age')).toBe('600');
        expect(r.headers.get('access-control-expose-headers')).toBe(
          'WWW-Authenticate, Mcp-Session-Id, X-Request-Id, RateLimit, RateLimit-Policy, Retry-After',
        );
        expect([r.headers.get('vary'), r.headers.get('content-length')]).toEqual(['Origin', '0']);
      }
    }
    for (const path of [
      '/.well-known/oauth-protected-resource',
      '/.well-known/oauth-protected-resource/mcp',
      '/.well-known/oauth-authorization-server',
    ]) {
      const r = await preflight(path, APP, 'GET');
      expect(r.status, path).toBe(204);
      expect(r.headers.get('access-control-allow-origin')).toBe(APP);
    }
  });

  it('the 401 challenge and the metadata can be read by an allowed origin', async () => {
    const r = await fetch(`${s.url}/mcp`, {
      method: 'POST',
      headers: { origin: APP, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_me', arguments: {} } }),
    });
    expect(r.status).toBe(401);
    expect(r.headers.get('access-control-allow-origin')).toBe(APP);
    expect(r.headers.get('access-control-expose-headers')).toContain('WWW-Authenticate');
    expect(r.headers.get('www-authenticate')).toContain('resource_metadata=');
    const list = await fetch(`${s.url}/mcp`, {
      method: 'POST',
      headers: { origin: 'http://localhost:6274', 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
    });
    expect(list.status).toBe(200);
    expect(list.headers.get('access-control-allow-origin')).toBe('http://localhost:6274');
    for (const path of ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-authorization-server']) {
      const m = await fetch(`${s.url}${path}`, { headers: { origin: APP } });
      expect(m.status, path).toBe(200);
      expect(m.headers.get('access-control-allow-origin'), path).toMatch(new RegExp(`^(${APP.replace(/\./g, '\\.')}|\\*)$`));
    }
  });

  it('other origins get no CORS headers, and /mcp refuses them', async () => {
    const r = await preflight('/mcp', 'https://evil.example.com');
    expect(r.headers.get('access-control-allow-origin')).toBeNull();
    // A preflight that is not allowed goes on to the routes: NOT_FOUND, as an unknown route.
    expect(r.status).toBe(404);
    expect(r.headers.get('vary')).toBe('Origin');
    const post = await fetch(`${s.url}/mcp`, {
      method: 'POST',
      headers: { origin: 'https://evil.example.com', 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(post.status).toBe(403);
    expect(post.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('REST tool routes are not opened to browsers', async () => {
    const r = await preflight('/v1/tools/get_me', APP);
    expect(r.headers.get('access-control-allow-origin')).toBeNull();
    expect(r.status).toBe(404);
    const get = await fetch(`${s.url}/v1/tools`, { headers: { origin: APP } });
    expect(get.headers.get('access-control-allow-origin')).toBeNull();
  });
});
