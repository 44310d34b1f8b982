/**
 * Compressed answers when the client asks (compression.ts), over real HTTP (raw sockets: fetch would decode):
 * - GET /v1/tools and MCP tools/list with Accept-Encoding br or gzip are compressed and decode to the same JSON
 *   as the plain answer; GET /v1/tools keeps its ETag and 304; Vary: Accept-Encoding;
 * - without Accept-Encoding (or identity only) nothing is compressed; small answers stay as they are;
 * - a catalogue body is compressed once and then served from memory, its varying tail appended to the stored stream
 *   (a counter over a bare Fastify app; open-stream.ts decoded by zlib for many tails);
 * - a gzip request body is not inflated (no upload expands past the body limit): refused as not JSON.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request as httpRequest } from 'node:http';
import { brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib';
import Fastify from 'fastify';
import { precomputedBodies, preferredEncoding } from '../../src/http/compression.ts';
import { closeStream, openStream, MAX_TAIL_BYTES } from '../../src/http/open-stream.ts';
import { startTestServer, type TestServer } from '../server-harness.ts';

let s: TestServer;
let apiKey: string;

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}
function raw(method: string, path: string, headers: Record<string, string>, body?: Buffer | string, base = s.url): Promise<Raw> {
  const u = new URL(`${base}${path}`);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: u.hostname, port: u.port, path: u.pathname, method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}
function decode(r: Raw): string {
  const enc = r.headers['content-encoding'];
  if (enc === 'br') return brotliDecompressSync(r.body).toString('utf8');
  if (enc === 'gzip') return gunzipSync(r.body).toString('utf8');
  expect(enc).toBeUndefined();
  return r.body.toString('utf8');
}
const toolsList = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list', params: {} });
const mcpHeaders = (extra: Record<string, string> = {}) => ({
  authorization: `Bearer ${apiKey}`,
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2025-11-25',
  ...extra,
});

beforeAll(async () => {
  s = await startTestServer();
  apiKey = (await s.agent('zip')).apiKey;
}, 60_000);
afterAll(async () => {
  await s?.close();
});

describe('compressed answers', () => {
  it('GET /v1/tools: br and gzip decode to the same JSON, with ETag, Vary and 304 kept', async () => {
    const plain = await raw('GET', '/v1/tools', {});
    expect(plain.headers['content-encoding']).toBeUndefined();
    const json = JSON.parse(plain.body.toString('utf8'));
    for (const enc of ['br', 'gzip']) {
      const r = await raw('GET', '/v1/tools', { 'accept-encoding': `${enc}, identity;q=0.5` });
      expect(r.status).toBe(200);
      expect(r.headers['content-encoding']).toBe(enc);
      expect(String(r.headers.vary).toLowerCase()).toContain('accept-encoding');
      expect(r.headers.etag).toBe(plain.headers.etag);
      expect(r.body.length).toBeLessThan(plain.body.length / 4);
      expect(JSON.parse(decode(r))).toEqual(json);
      const again = await raw('GET', '/v1/tools', { 'accept-encoding': enc });
      expect(again.body.equals(r.body)).toBe(true);
    }
    // The client's preference order is honoured; identity only means plain.
    expect((await raw('GET', '/v1/tools', { 'accept-encoding': 'gzip;q=1, br;q=0.5' })).headers['content-encoding']).toBe('gzip');
    expect((await raw('GET', '/v1/tools', { 'accept-encoding': 'identity' })).headers['content-encoding']).toBeUndefined();
    const notModified = await raw('GET', '/v1/tools', { 'accept-encoding': 'br', 'if-none-match': String(plain.headers.etag) });
    expect(notModified.status).toBe(304);
    expect(notModified.body.length).toBe(0);
    console.log(
      `GET /v1/tools: ${plain.body.length} bytes, br ${(await raw('GET', '/v1/tools', { 'accept-encoding': 'br' })).body.length}, gzip ${(await raw('GET', '/v1/tools', { 'accept-encoding': 'gzip' })).body.length}`,
    );
  });

  it('MCP tools/list: compressed when asked, the same JSON-RPC answer once decoded', async () => {
    const plain = await raw('POST', '/mcp', mcpHeaders(), toolsList);
    expect(plain.status).toBe(200);
    expect(plain.headers['content-encoding']).toBeUndefined();
    const br = await raw('POST', '/mcp', mcpHeaders({ 'accept-encoding': 'br, gzip' }), toolsList);
    const gz = await raw('POST', '/mcp', mcpHeaders({ 'accept-encoding': 'gzip' }), toolsList);
    expect([br.headers['content-encoding'], gz.headers['content-encoding']]).toEqual(['br', 'gzip']);
    expect(JSON.parse(decode(br))).toEqual(JSON.parse(plain.body.toString('utf8')));
    expect(JSON.parse(decode(gz))).toEqual(JSON.parse(plain.body.toString('utf8')));
    expect(JSON.parse(decode(br)).result.tools.length).toBeGreaterThan(40);
    // Another id: the stored stream with this request's tail; the same listing, this id.
    for (const enc of ['br', 'gzip']) {
      const other = await raw('POST', '/mcp', mcpHeaders({ 'accept-encoding': enc }), toolsList.replace('"id":7', '"id":"é-42"'));
      expect(JSON.parse(decode(other))).toEqual({ ...JSON.parse(plain.body.toString('utf8')), id: 'é-42' });
      expect(decode(other).endsWith('"id":"é-42"}\n')).toBe(true);
    }
    console.log(`MCP tools/list: ${plain.body.length} bytes, br ${br.body.length}, gzip ${gz.body.length}`);
  });

  it('leaves small answers and requests without Accept-Encoding alone', async () => {
    const health = await raw('GET', '/health', { 'accept-encoding': 'br, gzip' });
    expect(health.status).toBe(200);
    expect(health.body.length).toBeLessThan(1024);
    expect(health.headers['content-encoding']).toBeUndefined();
    const call = await raw(
      'POST',
      '/v1/tools/get_me',
      { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'accept-encoding': 'gzip' },
      '{}',
    );
    expect(call.status).toBe(200);
    expect(call.headers['content-encoding']).toBeUndefined();
    expect(JSON.parse(decode(call)).ok).toBe(true);
  });

  it('does not inflate a compressed request body', async () => {
    const body = gzipSync(JSON.stringify({ name: 'Zip', currency: 'EUR', idempotency_key: 'zip-body-0001' }));
    const r = await raw(
      'POST',
      '/v1/tools/create_group',
      { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body,
    );
    expect(r.status).toBe(400);
    expect(JSON.parse(decode(r)).error.code).toBe('VALIDATION_ERROR');
  });
});

describe('catalogue bodies compressed once', () => {
  it('serves a repeated head from memory with each tail; a changed head is compressed again', async () => {
    const app = Fastify();
    const stats = { compressions: 0 };
    const send = precomputedBodies(stats);
    let head = JSON.stringify({ tools: Array.from({ length: 2000 }, (_, i) => ({ name: `tool_${i}` })) });
    app.get<{ Params: { id: string } }>('/list/:id', (req, reply) => send(req, reply, head, `,"id":${req.params.id}}`));
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    const list = (id: number, enc: string) => raw('GET', `/list/${id}`, { 'accept-encoding': enc }, undefined, url);
    try {
      for (let id = 0; id < 5; id++) {
        const r = await list(id, 'br');
        expect(r.headers['content-type']).toBe('application/json; charset=utf-8');
        expect(decode(r)).toBe(`${head},"id":${id}}\n`);
      }
      expect(stats.compressions).toBe(1);
      expect(decode(await list(9, 'gzip'))).toBe(`${head},"id":9}\n`);
      expect(decode(await list(10, 'identity'))).toBe(`${head},"id":10}\n`);
      expect(stats.compressions).toBe(2);
      head = head.replace('tool_0', 'tool_new');
      expect(decode(await list(11, 'br'))).toBe(`${head},"id":11}\n`);
      expect(stats.compressions).toBe(3);
    } finally {
      await app.close();
    }
  });

  it('an open stream closed with any tail decodes to head + tail (br and gzip)', () => {
    const head = JSON.stringify({ text: 'é€😀 '.repeat(5000), n: [1, 2, 3] });
    const tails = ['', '\n', ',"id":"é😀"}\n', 'x'.repeat(70_000).slice(0, MAX_TAIL_BYTES), '{"a":1}'.repeat(300)];
    for (const encoding of ['br', 'gzip'] as const) {
      const open = openStream(head, encoding);
      for (const tail of tails) {
        const bytes = closeStream(open, tail);
        const text = (encoding === 'br' ? brotliDecompressSync(bytes) : gunzipSync(bytes)).toString('utf8');
        expect(text === head + tail, `${encoding} tail of ${tail.length}`).toBe(true);
      }
      expect(() => closeStream(open, 'é'.repeat(MAX_TAIL_BYTES))).toThrow(RangeError);
    }
  });

  it('negotiates like the client asks', () => {
    expect(preferredEncoding(undefined)).toBeUndefined();
    expect(preferredEncoding('deflate')).toBeUndefined();
    expect(preferredEncoding('br;q=0, gzip')).toBe('gzip');
    expect(preferredEncoding('*')).toBe('br');
  });
});
