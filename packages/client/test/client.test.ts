/**
 * The client against a local HTTP server that plays Kitty's REST interface: idempotency keys,
 * retries with the same key, errors as KittyError, headers.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createKittyClient, KittyError } from '../src/index.ts';

interface Seen {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Record<string, unknown>;
}

const TOOLS = [
  { name: 'create_group', kind: 'write', idempotency: 'replay' },
  { name: 'rotate_api_key', kind: 'write', idempotency: 'none' },
  { name: 'get_me', kind: 'read', idempotency: null },
];

let server: http.Server;
let baseUrl: string;
const seen: Seen[] = [];
/** Per tool: what to do on each successive call (default: answer ok). */
let script: Record<string, Array<'ok' | 'rate_limited' | 'in_progress' | 'drop' | 'forbidden' | 'unavailable' | 'unknown'>> = {};
let toolListRequests = 0;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (d) => (raw += d));
    req.on('end', () => {
      if (req.method === 'GET' && req.url === '/v1/tools') {
        toolListRequests++;
        res.setHeader('content-type', 'application/json');
        return res.end(JSON.stringify({ ok: true, data: { tools: TOOLS } }));
      }
      const name = req.url!.replace('/v1/tools/', '');
      seen.push({ path: req.url!, headers: req.headers, body: raw ? JSON.parse(raw) : {} });
      const step = script[name]?.shift() ?? 'ok';
      if (step === 'drop') return req.socket.destroy();
      res.setHeader('content-type', 'application/json');
      if (step === 'ok') return res.end(JSON.stringify({ ok: true, data: { tool: name, attempt: seen.length } }));
      const error =
        step === 'unavailable'
          ? { code: 'SERVICE_UNAVAILABLE', message: 'database down; nothing was changed', suggested_action: 'retry', retry_after: 0 }
          : step === 'unknown'
            ? {
                code: 'INTERNAL',
                message: 'may or may not have been stored',
                suggested_action: 'retry with the same key',
                details: { outcome: 'unknown' },
              }
            : step === 'rate_limited'
              ? { code: 'RATE_LIMITED', message: 'slow down', suggested_action: 'wait', retry_after: 0 }
              : step === 'in_progress'
                ? { code: 'REQUEST_IN_PROGRESS', message: 'busy', suggested_action: 'wait', retry_after: 0 }
                : { code: 'FORBIDDEN', message: 'no', suggested_action: 'ask an admin', details: { required_scope: 'svc:write' } };
      res.statusCode =
        step === 'forbidden' ? 403 : step === 'rate_limited' ? 429 : step === 'unavailable' ? 503 : step === 'unknown' ? 500 : 409;
      res.end(JSON.stringify({ ok: false, error, request_id: `req_${seen.length}` }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});
beforeEach(() => {
  seen.length = 0;
  script = {};
  toolListRequests = 0;
});

describe('typed client', () => {
  it('adds a generated idempotency key to write tools only, and sends the API key', async () => {
    const kitty = createKittyClient({ baseUrl, apiKey: 'kitty_test' });
    await kitty.create_group({ name: 'Trip', currency: 'EUR' });
    await kitty.create_group({ name: 'Trip', currency: 'EUR' });
    await kitty.get_me();
    await kitty.register_agent({ handle: 'new-agent', display_name: 'New' });
    expect(seen.map((s) => s.path)).toEqual([
      '/v1/tools/create_group',
      '/v1/tools/create_group',
      '/v1/tools/get_me',
      '/v1/tools/register_agent',
    ]);
    const [k1, k2] = [seen[0]!.body.idempotency_key, seen[1]!.body.idempotency_key];
    expect(k1).toMatch(/^kc-[0-9a-f-]{36}$/);
    expect(k2).toMatch(/^kc-/);
    expect(k1).not.toBe(k2); // two calls are two intended effects
    expect(seen[2]!.body).not.toHaveProperty('idempotency_key');
    expect(seen[3]!.body).not.toHaveProperty('idempotency_key'); // idempotency: none
    expect(seen.every((s) => s.headers.authorization === 'Bearer kitty_test')).toBe(true);
    expect(toolListRequests).toBe(0); // which tools take a key is generated into the client, not fetched
  });

  it('keeps a key the caller gives, or sends it as the Idempotency-Key header', async () => {
    const kitty = createKittyClient({ baseUrl });
    await kitty.create_group({ name: 'A', currency: 'EUR', idempotency_key: 'mine-1' });
    await kitty.create_group({ name: 'B', currency: 'EUR' }, { idempotencyKey: 'header-1' });
    expect(seen[0]!.body.idempotency_key).toBe('mine-1');
    expect(seen[1]!.body).not.toHaveProperty('idempotency_key');
    expect(seen[1]!.headers['idempotency-key']).toBe('header-1');
    expect(seen[0]!.headers.authorization).toBeUndefined();
  });

  it('retries RATE_LIMITED, REQUEST_IN_PROGRESS and dropped connections with the same key', async () => {
    script.create_group = ['rate_limited', 'drop', 'in_progress', 'ok'];
    const kitty = createKittyClient({ baseUrl, apiKey: 'kitty_test' });
    const out = await kitty.call('create_group', { name: 'Trip', currency: 'EUR' });
    expect(out).toEqual({ tool: 'create_group', attempt: 4 });
    expect(seen).toHaveLength(4);
    expect(new Set(seen.map((s) => s.body.idempotency_key)).size).toBe(1);
  });

  it('retries SERVICE_UNAVAILABLE, and an unknown write outcome only under an idempotency key', async () => {
    script.create_group = ['unavailable', 'unknown', 'ok'];
    const kitty = createKittyClient({ baseUrl, apiKey: 'kitty_test' });
    expect(await kitty.call('create_group', { name: 'Trip', currency: 'EUR' })).toEqual({ tool: 'create_group', attempt: 3 });
    expect(new Set(seen.map((s) => s.body.idempotency_key)).size).toBe(1);
    // register_agent takes no idempotency key: an unknown outcome is not retried (it could run twice).
    seen.length = 0;
    script.register_agent = ['unknown', 'ok'];
    const err = (await kitty.call('register_agent', { handle: 'new-agent', display_name: 'New' }).catch((e: unknown) => e)) as KittyError;
    expect(err.code).toBe('INTERNAL');
    expect(seen).toHaveLength(1);
  });

  it('gives up after maxRetries and throws the error envelope as KittyError', async () => {
    script.create_group = ['rate_limited', 'rate_limited'];
    const kitty = createKittyClient({ baseUrl, maxRetries: 1 });
    const err = await kitty.create_group({ name: 'Trip', currency: 'EUR' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KittyError);
    expect(err).toMatchObject({ code: 'RATE_LIMITED', status: 429, retryAfter: 0, requestId: 'req_2' });
    expect(seen).toHaveLength(2);
  });

  it('does not retry other errors', async () => {
    script.get_me = ['forbidden'];
    const kitty = createKittyClient({ baseUrl });
    const err = (await kitty.get_me().catch((e: unknown) => e)) as KittyError;
    expect(err).toBeInstanceOf(KittyError);
    expect({ code: err.code, status: err.status, action: err.suggestedAction, details: err.details, message: err.message }).toEqual({
      code: 'FORBIDDEN',
      status: 403,
      action: 'ask an admin',
      details: { required_scope: 'svc:write' },
      message: 'FORBIDDEN: no',
    });
    expect(seen).toHaveLength(1);
  });

  it('setApiKey replaces the credential for later calls', async () => {
    const kitty = createKittyClient({ baseUrl, apiKey: 'kitty_old' });
    await kitty.get_me();
    kitty.setApiKey('kitty_new');
    await kitty.get_me();
    expect(seen.map((s) => s.headers.authorization)).toEqual(['Bearer kitty_old', 'Bearer kitty_new']);
  });
});
