/**
 * Refusals below the routes — malformed HTTP (Content-Length with Transfer-Encoding, duplicate
 * Content-Length, garbage), oversized headers (431) and URLs (414), bad URL encoding, NUL in a
 * path, 406 and bad JSON on /mcp, 413 — still answer in Kitty's shapes: the error envelope on
 * REST paths, a JSON-RPC error (carrying the envelope in `error.data`) on /mcp. Raw sockets, so
 * nothing between the test and Node's HTTP parser tidies the request up.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import net from 'node:net';
import { PassThrough } from 'node:stream';
import { startTestServer, type TestServer } from '../server-harness.ts';
import { clientErrorHandler } from '../../src/http/wire-errors.ts';

let s: TestServer;
let port: number;
let apiKey: string;
beforeAll(async () => {
  s = await startTestServer({ bodyLimit: 64 * 1024 });
  port = Number(new URL(s.url).port);
  apiKey = (await s.agent('wire')).apiKey;
});
afterAll(async () => {
  await s?.close();
});

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  json: any;
}

/** Writes `data` on a fresh connection and parses the first response (the server closes after a refusal). */
function raw(data: string): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    sock.on('data', (d) => chunks.push(d));
    sock.on('error', reject);
    sock.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const sep = text.indexOf('\r\n\r\n');
      const [statusLine = '', ...lines] = text.slice(0, sep).split('\r\n');
      const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
      let body = text.slice(sep + 4);
      if (headers['transfer-encoding'] === 'chunked') body = dechunk(body);
      let json: unknown;
      try {
        json = JSON.parse(body);
      } catch {
        json = undefined;
      }
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body, json });
    });
    sock.write(data);
    // A refused request closes the connection; an accepted one is closed by the request's Connection: close.
  });
}

function dechunk(b: string): string {
  let out = '';
  let rest = b;
  for (;;) {
    const i = rest.indexOf('\r\n');
    const n = parseInt(rest.slice(0, i), 16);
    if (!n) return out;
    out += rest.slice(i + 2, i + 2 + n);
    rest = rest.slice(i + 4 + n);
  }
}

const H = 'Host: 127.0.0.1\r\nConnection: close\r\n';

function expectEnvelope(r: RawResponse, status: number, code: string) {
  expect(r.status, r.body.slice(0, 300)).toBe(status);
  expect(r.headers['content-type']).toMatch(/^application\/json/);
  expect(r.json).toMatchObject({
    ok: false,
    error: { code, message: expect.any(String), suggested_action: expect.any(String) },
    request_id: expect.stringMatching(/^req_/),
  });
  expect(r.headers['x-request-id']).toBe(r.json.request_id);
}

function expectRpcError(r: RawResponse, status: number, rpcCode: number, kittyCode?: string) {
  expect(r.status, r.body.slice(0, 300)).toBe(status);
  expect(r.headers['content-type']).toMatch(/^application\/json/);
  expect(r.json).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: rpcCode, message: expect.any(String) } });
  if (kittyCode) expect(r.json.error.data).toMatchObject({ ok: false, error: { code: kittyCode } });
}

describe('malformed HTTP messages (answered from the clientError event)', () => {
  const clte = (path: string) =>
    `POST ${path} HTTP/1.1\r\n${H}Content-Type: application/json\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`;
  const dupCl = (path: string) =>
    `POST ${path} HTTP/1.1\r\n${H}Content-Type: application/json\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}`;

  it('Content-Length with Transfer-Encoding: 400 envelope on REST, JSON-RPC error on /mcp', async () => {
    expectEnvelope(await raw(clte('/v1/tools/get_me')), 400, 'BAD_REQUEST');
    expectRpcError(await raw(clte('/mcp')), 400, -32600, 'BAD_REQUEST');
  });

  it('duplicate Content-Length: 400 envelope / JSON-RPC error', async () => {
    expectEnvelope(await raw(dupCl('/v1/tools/create_group')), 400, 'BAD_REQUEST');
    expectRpcError(await raw(dupCl('/mcp')), 400, -32600, 'BAD_REQUEST');
  });

  it('a request line that is not HTTP: 400 envelope', async () => {
    expectEnvelope(await raw('HELLO THERE\r\n\r\n'), 400, 'BAD_REQUEST');
  });

  it('headers over the limit: 431 envelope / JSON-RPC error', async () => {
    const big = `X-Big: ${'a'.repeat(20_000)}\r\n`;
    expectEnvelope(await raw(`GET /v1/tools HTTP/1.1\r\n${H}${big}\r\n`), 431, 'HEADERS_TOO_LARGE');
    expectRpcError(await raw(`POST /mcp HTTP/1.1\r\n${H}${big}\r\n`), 431, -32600, 'HEADERS_TOO_LARGE');
  });

  it('a URL longer than the header limit: 414 envelope / JSON-RPC error', async () => {
    expectEnvelope(await raw(`GET /v1/tools/${'a'.repeat(20_000)} HTTP/1.1\r\n${H}\r\n`), 414, 'URI_TOO_LONG');
    expectRpcError(await raw(`POST /mcp?${'a'.repeat(20_000)} HTTP/1.1\r\n${H}\r\n`), 414, -32600, 'URI_TOO_LONG');
  });
});

describe('URLs the router refuses', () => {
  it('a path parameter over the router limit: 414 envelope', async () => {
    expectEnvelope(await raw(`GET /v1/tools/${'a'.repeat(300)} HTTP/1.1\r\n${H}\r\n`), 414, 'URI_TOO_LONG');
    expectEnvelope(await raw(`POST /v1/sandbox/tools/${'a'.repeat(300)} HTTP/1.1\r\n${H}Content-Length: 0\r\n\r\n`), 414, 'URI_TOO_LONG');
  });

  it('bad percent-encoding (and an encoded lone surrogate): 400 envelope', async () => {
    expectEnvelope(await raw(`GET /i/ab%zz HTTP/1.1\r\n${H}\r\n`), 400, 'BAD_REQUEST');
    expectEnvelope(await raw(`GET /i/ab%ED%A0%80cd HTTP/1.1\r\n${H}\r\n`), 400, 'BAD_REQUEST');
  });

  it('the invite page with NUL in the code: 400 VALIDATION_ERROR naming the code, for every representation', async () => {
    for (const accept of ['application/json', 'text/html', 'text/plain']) {
      const r = await raw(`GET /i/ab%00cdefgh HTTP/1.1\r\n${H}Accept: ${accept}\r\n\r\n`);
      expectEnvelope(r, 400, 'VALIDATION_ERROR');
      expect(r.json.error.details.issues).toEqual([expect.objectContaining({ path: 'code', code: 'nul_character' })]);
    }
    // Every route parameter gets the same check (here the tool name).
    expectEnvelope(
      await raw(`POST /v1/tools/get%00me HTTP/1.1\r\n${H}Authorization: Bearer ${apiKey}\r\nContent-Length: 0\r\n\r\n`),
      400,
      'VALIDATION_ERROR',
    );
  });
});

describe('tool names that are Object.prototype keys', () => {
  it('are unknown tools (404 envelope) on every route that takes a name', async () => {
    for (const name of ['__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
      for (const [method, path] of [
        ['POST', `/v1/tools/${name}`],
        ['GET', `/v1/tools/${name}`],
        ['POST', `/v1/sandbox/tools/${name}`],
      ] as const) {
        const r = await raw(
          `${method} ${path} HTTP/1.1\r\n${H}Authorization: Bearer ${apiKey}\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`,
        );
        expectEnvelope(r, 404, 'NOT_FOUND');
      }
    }
  });
});

describe('/mcp refusals are JSON-RPC errors', () => {
  const post = (body: string, headers: Record<string, string> = {}) =>
    raw(
      `POST /mcp HTTP/1.1\r\n${H}Authorization: Bearer ${apiKey}\r\nContent-Type: application/json\r\n` +
        Object.entries({ Accept: 'application/json, text/event-stream', ...headers })
          .map(([k, v]) => `${k}: ${v}\r\n`)
          .join('') +
        `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );

  it('bad JSON: -32700 (and the envelope on REST)', async () => {
    expectRpcError(await post('{"jsonrpc":'), 400, -32700, 'VALIDATION_ERROR');
    const rest = await raw(
      `POST /v1/tools/create_group HTTP/1.1\r\n${H}Authorization: Bearer ${apiKey}\r\nContent-Type: application/json\r\nContent-Length: 5\r\n\r\n{bad}`,
    );
    expectEnvelope(rest, 400, 'VALIDATION_ERROR');
  });

  it('406 when the client does not accept JSON and SSE: a JSON-RPC error', async () => {
    const r = await post(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }), { Accept: 'text/html' });
    expect(r.status).toBe(406);
    expect(r.json).toMatchObject({ jsonrpc: '2.0', error: { code: expect.any(Number), message: expect.stringMatching(/Not Acceptable/) } });
  });

  it('413: a JSON-RPC error on /mcp, the envelope on REST', async () => {
    const big = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { pad: 'x'.repeat(70_000) } });
    expectRpcError(await post(big), 413, -32600, 'PAYLOAD_TOO_LARGE');
    const rest = await raw(
      `POST /v1/tools/create_group HTTP/1.1\r\n${H}Authorization: Bearer ${apiKey}\r\nContent-Type: application/json\r\nContent-Length: ${big.length}\r\n\r\n${big}`,
    );
    expectEnvelope(rest, 413, 'PAYLOAD_TOO_LARGE');
  });
});

describe('MCP tools/call with arguments that are not an object', () => {
  it('answers -32602 (invalid params) naming arguments, never -32603', async () => {
    for (const args of [[], 'x', 5, null, true, [{ name: 'x' }]]) {
      const body = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'create_group', arguments: args } });
      const r = await raw(
        `POST /mcp HTTP/1.1\r\n${H}Authorization: Bearer ${apiKey}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      expect(r.status).toBe(200);
      expect(r.json, JSON.stringify(args)).toMatchObject({
        jsonrpc: '2.0',
        id: 7,
        error: { code: -32602, message: expect.stringContaining('arguments') },
      });
    }
    // No group was created by any of them.
    const groups = await s.http('/v1/tools/list_groups', { body: {}, apiKey });
    expect(groups.json.data.groups).toEqual([]);
  });
});

describe('clientErrorHandler (unit: the cases a socket test cannot provoke cheaply)', () => {
  const quiet = { debug: () => {} };
  const run = (err: Error & { code?: string; rawPacket?: Buffer }, prepare?: (sock: PassThrough) => void) => {
    const sock = new PassThrough();
    prepare?.(sock);
    let out = '';
    sock.on('data', (d: Buffer) => (out += d.toString()));
    clientErrorHandler(quiet)(err, sock);
    return { out, sock };
  };

  it('a request timeout is 408 REQUEST_TIMEOUT (JSON-RPC on /mcp)', () => {
    const rest = run(
      Object.assign(new Error('timeout'), {
        code: 'ERR_HTTP_REQUEST_TIMEOUT',
        rawPacket: Buffer.from('POST /v1/tools/get_me HTTP/1.1\r\n'),
      }),
    );
    expect(rest.out).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    expect(JSON.parse(rest.out.split('\r\n\r\n')[1]!)).toMatchObject({ ok: false, error: { code: 'REQUEST_TIMEOUT' } });
    const mcp = run(
      Object.assign(new Error('timeout'), {
        code: 'ERR_HTTP_REQUEST_TIMEOUT',
        rawPacket: Buffer.from('POST /mcp HTTP/1.1\r\nHost: x\r\n'),
      }),
    );
    expect(JSON.parse(mcp.out.split('\r\n\r\n')[1]!)).toMatchObject({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32600, data: { error: { code: 'REQUEST_TIMEOUT' } } },
    });
  });

  it('writes nothing on a reset or when a response has already started; just closes', () => {
    expect(run(Object.assign(new Error('reset'), { code: 'ECONNRESET' })).out).toBe('');
    const started = run(Object.assign(new Error('bad'), { code: 'HPE_INVALID_METHOD' }), (sock) =>
      Object.assign(sock, { _httpMessage: { headersSent: true } }),
    );
    expect(started.out).toBe('');
    expect(started.sock.destroyed).toBe(true);
  });
});
