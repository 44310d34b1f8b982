/**
 * The REST adapter over a fake registry: routing, the success envelope, the idempotency header,
 * ETag/304 on the catalogue, body checks and the sandbox. (Authentication and rate limits are the
 * server's; the error envelope here is core's, as the server passes it.)
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ToolError, toErrorEnvelope, type CallRequest, type Registry, type ToolDescriptor } from '@kitty/core';
import { registerRestRoutes } from '../src/index.ts';

const tool = (name: string, kind: 'read' | 'write', hasRequiredArgs: boolean): ToolDescriptor => ({
  name,
  title: name,
  description: `The ${name} tool.`,
  kind,
  area: 'test',
  scope: kind === 'read' ? 'svc:read' : 'svc:write',
  auth: 'required',
  idempotency: kind === 'write' ? 'replay' : null,
  annotations: { readOnlyHint: kind === 'read', destructiveHint: false, idempotentHint: kind === 'write', openWorldHint: false },
  errors: [],
  hasRequiredArgs,
  input_schema: { type: 'object', properties: {}, additionalProperties: false },
  output_schema: { type: 'object' },
});

const calls: Array<{ name: string; args: unknown; req: CallRequest }> = [];
let replay = false;
const catalogue = [tool('echo', 'write', true), tool('get_me', 'read', false), tool('register_agent', 'write', true)];
const registry: Registry = {
  tools: new Map(catalogue.map((t) => [t.name, t])),
  catalogue,
  version: 'v-test-1',
  envelope: { type: 'object', properties: { suggested_next: { type: 'array' } }, required: ['suggested_next'] },
  envelopeText: 'Every result also has suggested_next.',
  has: (name) => catalogue.some((t) => t.name === name),
  validateArgs: (_name, args) =>
    (args as Record<string, unknown>).text === 'ok' ? { ok: true } : { ok: false, issues: [{ path: 'text', message: 'must be "ok"' }] },
  unknownTool: (name) => new ToolError('NOT_FOUND', `Unknown tool "${name}".`),
  callTool: async (name, args, req) => {
    // Authentication and scope are the registry's (one rule in core); the fake answers as it does.
    if (name === 'get_me' && req.auth && !req.auth.scopes.includes('svc:read'))
      throw new ToolError('FORBIDDEN', 'lacks svc:read', { details: { required_scope: 'svc:read' } });
    calls.push({ name, args, req });
    return { data: { tool: name, args }, call: { replayed: replay } } as Awaited<ReturnType<Registry['callTool']>>;
  },
};

let app: FastifyInstance;
let auth: CallRequest['auth'] = null;

beforeAll(async () => {
  app = Fastify();
  await registerRestRoutes(app, {
    registry,
    baseUrl: 'http://kitty.test',
    errorEnvelope: (err, req) => toErrorEnvelope(err, req.id),
    callRequest: () => ({ services: {} as CallRequest['services'], auth, requestId: 'req_test' }),
  });
  await app.ready();
});
afterAll(async () => {
  await app.close();
});
beforeEach(() => {
  calls.length = 0;
  replay = false;
  auth = null;
});

const post = (url: string, body?: unknown, headers: Record<string, string> = {}) =>
  app.inject({
    method: 'POST',
    url,
    ...(body === undefined ? {} : { payload: JSON.stringify(body), headers: { 'content-type': 'application/json', ...headers } }),
    ...(body === undefined ? { headers } : {}),
  });

describe('REST adapter', () => {
  it('POST /v1/tools/{name} calls the tool with the body and the Idempotency-Key header, and wraps the result', async () => {
    const res = await post('/v1/tools/echo', { text: 'hi' }, { 'idempotency-key': 'key-1' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ ok: true, data: { tool: 'echo', args: { text: 'hi' } } });
    expect(res.headers['idempotent-replayed']).toBeUndefined();
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ name: 'echo', args: { text: 'hi' }, req: { requestId: 'req_test', idempotencyKeyHeader: 'key-1' } });
  });

  it('flags a replayed write with the Idempotent-Replayed header', async () => {
    replay = true;
    const res = await post('/v1/tools/echo', { text: 'again' });
    expect(res.headers['idempotent-replayed']).toBe('true');
  });

  it('POST /v1/agents is register_agent; a tool without required arguments needs no body', async () => {
    await post('/v1/agents', { handle: 'ana' });
    await post('/v1/tools/get_me');
    expect(calls.map((c) => [c.name, c.args])).toEqual([
      ['register_agent', { handle: 'ana' }],
      ['get_me', {}],
    ]);
  });

  it('refuses an unknown tool, a missing body for required arguments and a non-object body without calling anything', async () => {
    const unknown = await post('/v1/tools/no_such_tool', {});
    expect(unknown.json().error.code).toBe('NOT_FOUND');
    const missing = await post('/v1/tools/echo');
    expect(missing.json().error).toMatchObject({ code: 'VALIDATION_ERROR', details: { issues: [{ path: '(root)' }] } });
    const array = await post('/v1/tools/echo', [1, 2]);
    expect(array.json().error).toMatchObject({ code: 'VALIDATION_ERROR', details: { issues: [{ path: '(root)' }] } });
    expect(calls).toEqual([]);
  });

  it('GET /v1/tools lists the catalogue with an ETag and answers 304 to If-None-Match', async () => {
    const res = await app.inject({ method: 'GET', url: '/v1/tools' });
    expect(res.statusCode).toBe(200);
    expect(res.headers.etag).toBe('"v-test-1"');
    expect(res.json().data).toMatchObject({ tools_version: 'v-test-1', count: 3 });
    expect(res.json().data.tools.map((t: ToolDescriptor) => t.name)).toEqual(['echo', 'get_me', 'register_agent']);
    for (const inm of ['"v-test-1"', 'W/"v-test-1"', '"other", "v-test-1"']) {
      const again = await app.inject({ method: 'GET', url: '/v1/tools', headers: { 'if-none-match': inm } });
      expect(again.statusCode).toBe(304);
    }
    expect((await app.inject({ method: 'GET', url: '/v1/tools', headers: { 'if-none-match': '"old"' } })).statusCode).toBe(200);
  });

  it('GET /v1/tools/{name} describes one tool', async () => {
    const res = await app.inject({ method: 'GET', url: '/v1/tools/echo' });
    expect(res.json().data).toMatchObject({ name: 'echo', kind: 'write', hasRequiredArgs: true });
    expect((await app.inject({ method: 'GET', url: '/v1/tools/nope' })).json().error.code).toBe('NOT_FOUND');
  });

  it('the sandbox validates without calling the tool', async () => {
    const good = await post('/v1/sandbox/tools/echo', { text: 'ok' });
    expect(good.json()).toMatchObject({ ok: true, data: { valid: true, tool: 'echo', stored: false } });
    const bad = await post('/v1/sandbox/tools/echo', { text: 'no' });
    expect(bad.json().error).toMatchObject({ code: 'VALIDATION_ERROR', details: { issues: [{ path: 'text', message: 'must be "ok"' }] } });
    expect(calls).toEqual([]);
  });

  it('GET /v1 answers with get_me, whose credential and scope errors come from the registry', async () => {
    auth = { scopes: ['svc:write'] } as unknown as CallRequest['auth'];
    expect((await app.inject({ method: 'GET', url: '/v1' })).json().error).toMatchObject({
      code: 'FORBIDDEN',
      details: { required_scope: 'svc:read' },
    });
    auth = { scopes: ['svc:read'] } as unknown as CallRequest['auth'];
    const me = await app.inject({ method: 'GET', url: '/v1' });
    expect(me.json().data).toMatchObject({ tool: 'get_me', tools_version: 'v-test-1', links: { tools: 'http://kitty.test/v1/tools' } });
  });

  it('GET /openapi.json serves the generated document', async () => {
    const doc = (await app.inject({ method: 'GET', url: '/openapi.json' })).json();
    expect(doc.openapi).toMatch(/^3\.1/);
    expect(Object.keys(doc.paths)).toContain('/v1/tools/echo');
  });
});
