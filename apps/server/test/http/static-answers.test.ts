/**
 * A static read tool (list_currencies) is answered from memory: the same bytes on every call, with an ETag, in the
 * same envelope and headers as any tool answer; over MCP the text content is its structured content serialised.
 * An agent with something unread gets the inbox block on it, without the ETag of the stored answer.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../server-harness.ts';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s?.close();
});

describe('static read tools', () => {
  it('REST: the same body and ETag on every call, ending with a newline, with the usual headers', async () => {
    const a = await s.agent('static');
    const first = await s.http('/v1/tools/list_currencies', { body: {}, apiKey: a.apiKey });
    const second = await s.http('/v1/tools/list_currencies', { body: {}, apiKey: a.apiKey });
    expect(first.status).toBe(200);
    expect(second.text).toBe(first.text);
    expect(first.text.endsWith('}\n')).toBe(true);
    expect(first.headers.get('etag')).toMatch(/^"[\w-]{27}"$/);
    expect(second.headers.get('etag')).toBe(first.headers.get('etag'));
    expect(first.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(first.headers.get('cache-control')).toBe('no-store');
    expect(first.headers.get('x-content-type-options')).toBe('nosniff');
    expect(second.headers.get('ratelimit')).not.toBe(first.headers.get('ratelimit')); // still counted per request
    expect(first.json.ok).toBe(true);
    expect(first.json.data.currencies.length).toBeGreaterThan(100);
    expect(first.json.data.currencies.find((c: { code: string }) => c.code === 'JPY')).toMatchObject({ minor_unit_exponent: 0 });
    expect(first.json.data.inbox).toBeUndefined();
    // Without a credential: refused as before.
    expect((await s.http('/v1/tools/list_currencies', { body: {} })).status).toBe(401);
  });

  it('MCP: text content is the structured content, on every call', async () => {
    const a = await s.agent('staticmcp');
    const headers = {
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
      authorization: `Bearer ${a.apiKey}`,
    };
    for (let id = 1; id <= 2; id++) {
      const r = await s.http('/mcp', {
        body: { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'list_currencies', arguments: {} } },
        headers,
      });
      const result = r.json.result;
      expect(JSON.parse(result.content[0].text)).toEqual(result.structuredContent);
      expect(result.structuredContent.currencies.length).toBeGreaterThan(100);
    }
  });

  it('an agent with an unread item gets the inbox block, without the stored answer ETag', async () => {
    const ann = await s.agent('staticann');
    const bo = await s.agent('staticbo');
    await ann.client.add_contact({ handle: bo.handle });
    await bo.client.add_contact({ handle: ann.handle });
    await bo.client.send_message({ to_handle: ann.handle, body: 'dinner at 8?' });
    let r;
    for (let i = 0; i < 50; i++) {
      r = await s.http('/v1/tools/list_currencies', { body: {}, apiKey: ann.apiKey });
      if (r.json.data.inbox) break;
      await new Promise((resolve) => setTimeout(resolve, 50)); // the inbox cache hears of the message by NOTIFY
    }
    expect(r!.json.data.inbox.unread).toBeGreaterThan(0);
    expect(r!.headers.get('etag')).toBeNull();
    expect(r!.json.data.currencies.length).toBeGreaterThan(100);
  });
});
