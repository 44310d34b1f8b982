/**
 * Secrets and headers: answers are never cached (`Cache-Control: no-store`, especially those
 * carrying a key), every response has `X-Content-Type-Options: nosniff`, HTML pages carry a CSP
 * with `frame-ancestors 'none'`; and no API key, bearer token or invite code reaches the log,
 * wherever the client put it (header, query, path).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { startTestServer, type TestServer } from '../server-harness.ts';
import { redactUrl, scrubSecrets } from '../../src/runtime/logging.ts';

let s: TestServer;
let dir: string;
let logFile: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'kitty-log-'));
  logFile = path.join(dir, 'server.log');
  s = await startTestServer({ logLevel: 'info', logFile });
});
afterAll(async () => {
  await s?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('headers', () => {
  it('no-store and nosniff on answers that carry a key', async () => {
    const reg = await s.http('/v1/agents', { body: { handle: `h-${randomUUID().slice(0, 8)}`, display_name: 'H' } });
    expect(reg.status).toBe(200);
    expect(reg.json.data.api_key).toMatch(/^kitty_/);
    expect(reg.headers.get('cache-control')).toBe('no-store');
    expect(reg.headers.get('x-content-type-options')).toBe('nosniff');
    const rot = await s.http('/v1/tools/rotate_api_key', {
      body: { idempotency_key: `rot-${randomUUID()}` },
      apiKey: reg.json.data.api_key,
    });
    expect(rot.status).toBe(200);
    expect(rot.headers.get('cache-control')).toBe('no-store');
    expect(rot.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('nosniff everywhere; no-store unless the route chose its caching; CSP only on HTML', async () => {
    const a = await s.agent('hdr');
    const responses = {
      health: await s.http('/health'),
      notFound: await s.http('/nope'),
      tool: await s.http('/v1/tools/get_me', { body: {}, apiKey: a.apiKey }),
      unauth: await s.http('/v1/tools/get_me', { body: {} }),
      mcp: await s.http('/mcp', {
        body: { jsonrpc: '2.0', id: 1, method: 'ping' },
        apiKey: a.apiKey,
        headers: { accept: 'application/json, text/event-stream' },
      }),
      openapi: await s.http('/openapi.json'),
    };
    for (const [name, r] of Object.entries(responses)) {
      expect(r.headers.get('x-content-type-options'), name).toBe('nosniff');
      expect(r.headers.get('cache-control'), name).toBe('no-store');
      expect(r.headers.get('content-security-policy'), name).toBeNull();
    }
    const listing = await s.http('/v1/tools');
    expect(listing.headers.get('x-content-type-options')).toBe('nosniff');
    expect(listing.headers.get('cache-control')).toBe('no-cache'); // ETag revalidation, set by the route

    const g = await a.client.create_group({ name: 'Headers', currency: 'EUR' });
    const inv = await a.client.create_invite({ group_id: g.group.group_id });
    const page = await s.http(new URL(inv.invite.url).pathname, { headers: { accept: 'text/html' } });
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = page.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toMatch(/default-src '(self|none)'/);
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    expect(page.headers.get('cache-control')).toBe('no-store');
  });
});

describe('redaction helpers', () => {
  it('redacts query credentials, invite paths, keys and codes; leaves the rest', () => {
    expect(redactUrl('/v1/tools?api_key=kitty_abc123&x=1')).toBe('/v1/tools?api_key=[REDACTED]&x=1');
    expect(redactUrl('/i/abandon-ability-able-about?format=json')).toBe('/i/[REDACTED]?format=json');
    expect(redactUrl('/v1/invites/abandon-ability-able-about/preview')).toBe('/v1/invites/[REDACTED]/preview');
    expect(redactUrl('/oauth/callback?code=xyz&state=s1')).toBe('/oauth/callback?code=[REDACTED]&state=[REDACTED]');
    expect(scrubSecrets('Authorization: Bearer eyJhbGciOiJI.eyJzdWIiOiIx.sig and kitty_AbC9')).not.toMatch(/eyJ|kitty_AbC9/);
    expect(scrubSecrets('join with abandon%20ability%20able%20about now')).toBe('join with [REDACTED] now');
    expect(scrubSecrets('a well-known state-of-the-art cross-site thing')).toBe('a well-known state-of-the-art cross-site thing');
  });
});

describe('logs', () => {
  it('hold no key, bearer token or invite code, wherever the client sent them', async () => {
    const a = await s.agent('logger');
    const g = await a.client.create_group({ name: 'Logged', currency: 'EUR' });
    const inv = await a.client.create_invite({ group_id: g.group.group_id });
    const code = inv.invite.code;
    const key = a.apiKey;
    const spaced = code.replaceAll('-', ' ');
    const paths = [
      `/v1/tools?api_key=${key}`,
      `/v1/tools?key=${key}&token=${key}`,
      `/v1/tools?access_token=${key}`,
      `/v1/tools?x=${key}`,
      `/v1/tools/${key}`,
      `/${key}`,
      `/i/${code}`,
      `/i/${code}?format=json`,
      `/i/${encodeURIComponent(spaced)}`,
      `/i/${code.toUpperCase()}`,
      `/v1/invites/${code}`,
      `/invites/${code}`,
      `/v1/tools?code=${code}`,
      `/v1/tools?q=${code}`,
      `/v1/tools?q=${encodeURIComponent(spaced)}`,
      `/oauth/callback?code=${code}&state=${key}`,
    ];
    for (const p of paths) {
      await s.http(p, { headers: { accept: 'text/html' } });
      await s.http(p, { apiKey: key });
    }
    await s.http('/v1/tools/get_me', { body: {}, headers: { authorization: `Bearer ${key}` } });
    await s.http('/v1/tools/get_me', { body: {}, headers: { authorization: `Basic ${key}` } }); // malformed: 401
    await s.http('/v1/tools/join_group', { body: { code, idempotency_key: `join-${randomUUID()}` }, apiKey: key });
    await s.http('/mcp', {
      body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_invite', arguments: { code } } },
      apiKey: key,
      headers: { accept: 'application/json, text/event-stream' },
    });
    // A rotated key too.
    const rot = await s.http('/v1/tools/rotate_api_key', { body: { idempotency_key: `rot-${randomUUID()}` }, apiKey: key });
    const newKey = rot.json.data.api_key as string;
    await s.http(`/v1/tools?api_key=${newKey}`);

    // Wait until the log file stops growing (the destination writes asynchronously).
    let size = -1;
    for (let i = 0; i < 50; i++) {
      await new Promise((r) => setTimeout(r, 50));
      const now = (await stat(logFile)).size;
      if (now === size) break;
      size = now;
    }
    const log = await readFile(logFile, 'utf8');
    const lines = log.split('\n').filter(Boolean);
    // The log is not empty: every request line is there (so the absence below means something).
    expect(lines.filter((l) => l.includes('incoming request')).length).toBeGreaterThanOrEqual(paths.length * 2);
    expect(log).toContain('[REDACTED]');
    const secrets = [
      key,
      key.slice(6),
      newKey,
      newKey.slice(6),
      code,
      code.toUpperCase(),
      spaced,
      encodeURIComponent(spaced),
      code.replaceAll('-', '%20'),
    ];
    for (const secret of secrets) expect(log.includes(secret), `log contains ${secret}`).toBe(false);
  });
});
