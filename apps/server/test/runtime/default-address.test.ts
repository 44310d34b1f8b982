/**
 * The default address: with no KITTY_BASE_URL on a loopback HOST, Kitty's base URL is
 * http://localhost:PORT (browsers refuse passkeys on IP addresses), and every address derived from
 * it agrees — WebAuthn RP ID, OAuth issuer, resource metadata, the CSRF origin. People's pages opened
 * as http://127.0.0.1:PORT say which address to use; API calls work on both.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultBaseUrl, isLoopbackHost } from '../../src/runtime/config.ts';
import { startTestServer, type TestServer } from '../server-harness.ts';

describe('defaultBaseUrl', () => {
  it('names localhost for loopback hosts, the host itself otherwise', () => {
    expect(defaultBaseUrl('127.0.0.1', 3000)).toBe('http://localhost:3000');
    expect(defaultBaseUrl('127.8.0.1', 80)).toBe('http://localhost:80');
    expect(defaultBaseUrl('::1', 3000)).toBe('http://localhost:3000');
    expect(defaultBaseUrl('localhost', 3000)).toBe('http://localhost:3000');
    expect(defaultBaseUrl('0.0.0.0', 3000)).toBe('http://0.0.0.0:3000');
    expect(defaultBaseUrl('192.168.1.4', 3000)).toBe('http://192.168.1.4:3000');
    expect(defaultBaseUrl('fe80::1', 3000)).toBe('http://[fe80::1]:3000');
    expect(isLoopbackHost('127.0.0.1.example')).toBe(false);
  });
});

describe('a server with no base URL on 127.0.0.1', () => {
  let s: TestServer;
  let port: string;
  beforeAll(async () => {
    s = await startTestServer({ host: '127.0.0.1', baseUrl: undefined });
    port = new URL(s.url).port;
  });
  afterAll(async () => s?.close());

  it('uses http://localhost:PORT as its base URL everywhere', async () => {
    expect(s.url).toBe(`http://localhost:${port}`);
    const as = await s.http('/.well-known/oauth-authorization-server');
    expect(as.json.issuer).toBe(s.url);
    const rs = await s.http('/.well-known/oauth-protected-resource/mcp');
    expect(rs.json.resource).toBe(`${s.url}/mcp`);
    const options = await fetch(`${s.url}/auth/passkey/login/options`, { method: 'POST', headers: { origin: s.url } });
    const body = (await options.json()) as { data: { rpId: string; userVerification: string } };
    expect(body.data.rpId).toBe('localhost');
    expect(body.data.userVerification).toBe('required');
    // The CSRF rule accepts the page's origin, refuses the IP address's.
    const ip = await fetch(`${s.url}/auth/passkey/login/options`, { method: 'POST', headers: { origin: `http://127.0.0.1:${port}` } });
    expect(ip.status).toBe(403);
  });

  it('serves the pages at localhost and explains the address on 127.0.0.1', async () => {
    const ok = await fetch(`${s.url}/signin`);
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain('PIN, fingerprint or face');
    for (const path of ['/signin', '/account', '/account/keys', '/oauth/consent/abc']) {
      const r = await fetch(`http://127.0.0.1:${port}${path}`);
      expect(r.status, path).toBe(421);
      expect(r.headers.get('content-type')).toMatch(/^text\/html/);
      expect(r.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
      const text = await r.text();
      expect(text).toContain(`<a href="http://localhost:${port}${path}">`);
      expect(text.match(/<p>/g)).toHaveLength(1);
    }
  });

  it('serves /favicon.ico (browsers ask for it on every page)', async () => {
    const r = await fetch(`${s.url}/favicon.ico`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('image/x-icon');
    const bytes = new Uint8Array(await r.arrayBuffer());
    expect([...bytes.subarray(0, 4)]).toEqual([0, 0, 1, 0]); // ICO header
  });

  it('answers API calls on any loopback name', async () => {
    for (const host of [s.url, `http://127.0.0.1:${port}`]) {
      const r = await fetch(`${host}/v1/tools`);
      expect(r.status).toBe(200);
      const reg = await fetch(`${host}/v1/agents`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ handle: `addr-${Math.random().toString(36).slice(2, 10)}`, display_name: 'Addr' }),
      });
      expect(reg.status).toBe(200);
    }
  });

  it('leaves pages alone when the base URL is set explicitly', async () => {
    const t = await startTestServer({ host: '127.0.0.1', baseUrl: 'http://127.0.0.1:1' });
    try {
      const p = (t.kitty.app.server.address() as { port: number }).port;
      const r = await fetch(`http://localhost:${p}/signin`);
      expect(r.status).toBe(200);
    } finally {
      await t.close();
    }
  });
});
