/**
 * Era routing and the header rules (dispatch.ts), and the tools/list narrowing for an API key
 * lacking a scope (tools-server.ts), without HTTP.
 */
import { describe, expect, it } from 'vitest';
import { Client, InMemoryTransport, type JSONRPCMessage } from '@modelcontextprotocol/client';
import { ToolError, type CallRequest, type Registry, type ToolDescriptor } from '@kitty/core';
import { routeMessage, toolsServerFactory } from '../src/index.ts';
import { CONTEXT_KEY } from '../src/tools-server.ts';

const ACCEPT = { accept: 'application/json, text/event-stream' };
const headersOf = (h: Record<string, string>) => (name: string) => h[name];
const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 't', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

describe('routeMessage', () => {
  it('a message without the envelope is legacy; one claiming it is modern', () => {
    expect(routeMessage(headersOf(ACCEPT), { jsonrpc: '2.0', id: 1, method: 'tools/list' }).kind).toBe('legacy');
    const modern = routeMessage(headersOf({ ...ACCEPT, 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' }), {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/list',
      params: { _meta: ENVELOPE },
    });
    expect(modern.kind).toBe('modern');
  });

  it('legacy: Mcp-Method or Mcp-Name that disagree with the body are -32020, echoing the id', () => {
    const lie = headersOf({ ...ACCEPT, 'mcp-method': 'tools/call', 'mcp-name': 'delete_expense' });
    expect(routeMessage(lie, { jsonrpc: '2.0', id: 9, method: 'ping' })).toMatchObject({
      kind: 'reject',
      status: 400,
      body: { id: 9, error: { code: -32020 } },
    });
    const name = headersOf({ ...ACCEPT, 'mcp-method': 'tools/call', 'mcp-name': 'get_me' });
    expect(routeMessage(name, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'delete_expense' } })).toMatchObject({
      kind: 'reject',
      body: { error: { code: -32020 } },
    });
    expect(routeMessage(name, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_me' } }).kind).toBe('legacy');
  });

  it('legacy: an unknown MCP-Protocol-Version is -32022; a client accepting no SSE is 406', () => {
    expect(
      routeMessage(headersOf({ ...ACCEPT, 'mcp-protocol-version': '1999-01-01' }), { jsonrpc: '2.0', id: 1, method: 'ping' }),
    ).toMatchObject({
      kind: 'reject',
      status: 400,
      body: { error: { code: -32022, data: { requested: '1999-01-01' } } },
    });
    expect(routeMessage(headersOf({ accept: 'application/json' }), { jsonrpc: '2.0', id: 1, method: 'ping' })).toMatchObject({
      kind: 'reject',
      status: 406,
    });
  });
});

const tool = (name: string, scope: 'svc:read' | 'svc:write' | null): ToolDescriptor => ({
  name,
  title: name,
  description: `The ${name} tool.`,
  kind: scope === 'svc:read' ? 'read' : 'write',
  area: 'test',
  scope,
  auth: scope === null ? 'none' : 'required',
  idempotency: 'replay',
  annotations: { readOnlyHint: scope === 'svc:read', destructiveHint: false, idempotentHint: true, openWorldHint: false },
  errors: [],
  hasRequiredArgs: false,
  input_schema: { type: 'object', properties: {} },
  output_schema: { type: 'object', properties: {} },
});
const catalogue = [tool('register', null), tool('read_it', 'svc:read'), tool('write_it', 'svc:write')];
const registry = {
  tools: new Map(catalogue.map((t) => [t.name, t])),
  catalogue,
  version: 'v1',
  has: (n: string) => catalogue.some((t) => t.name === n),
  validateArgs: () => ({ ok: true }),
  unknownTool: (n: string) => new ToolError('NOT_FOUND', n),
  callTool: async () => ({ data: {}, call: { replayed: false } }),
} as unknown as Registry;

async function listAs(auth: CallRequest['auth']) {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const send = clientSide.send.bind(clientSide);
  const ctx = { callRequest: { services: {} as CallRequest['services'], auth, requestId: 'r' }, logError: () => {} };
  clientSide.send = (message: JSONRPCMessage) =>
    send(message, { authInfo: { token: '', clientId: 'c', scopes: [], extra: { [CONTEXT_KEY]: ctx } } });
  await toolsServerFactory(registry, 'http://kitty.test')().connect(serverSide);
  const client = new Client({ name: 't', version: '1' });
  await client.connect(clientSide);
  try {
    return await client.listTools();
  } finally {
    await client.close();
  }
}

describe('tools/list by credential', () => {
  const who = (credential: 'api_key' | 'oauth', scopes: string[]) =>
    ({ agentId: 'a', scopes, credential }) as unknown as NonNullable<CallRequest['auth']>;

  it('anonymous, a full key and an OAuth token (which can step up) see every tool', async () => {
    for (const auth of [null, who('api_key', ['svc:read', 'svc:write']), who('oauth', ['svc:read'])]) {
      const r = await listAs(auth);
      expect(r.tools.map((t) => t.name)).toEqual(['register', 'read_it', 'write_it']);
      expect(r._meta?.['kitty/omitted']).toBeUndefined();
    }
  });

  it('a read-only API key sees the tools it may call, and the listing says what it left out', async () => {
    const r = await listAs(who('api_key', ['svc:read']));
    expect(r.tools.map((t) => t.name)).toEqual(['register', 'read_it']);
    expect(r._meta?.['kitty/omitted']).toMatchObject({ count: 1, missing_scopes: ['svc:write'] });
  });
});

describe('McpEndpoint: a plain 2026-07-28 call answers the same through the SDK entry and through a lane', () => {
  it('tools/list and tools/call: identical answers, resultType and cache fields on every one', async () => {
    const { McpEndpoint } = await import('../src/index.ts');
    const endpoint = new McpEndpoint(toolsServerFactory(registry, 'http://kitty.test'), true, () => {});
    const ctx = { callRequest: { services: {} as CallRequest['services'], auth: null, requestId: 'r' }, logError: () => {} };
    const auth = { token: '', clientId: 'anonymous', scopes: [], extra: { [CONTEXT_KEY]: ctx } };
    const headers = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
    };
    const call = async (method: string, params: Record<string, unknown>) => {
      const h: Record<string, string> = {
        ...headers,
        'mcp-method': method,
        ...(typeof params.name === 'string' ? { 'mcp-name': params.name } : {}),
      };
      const routed = routeMessage(headersOf(h), { jsonrpc: '2.0', id: 5, method, params: { ...params, _meta: ENVELOPE } });
      if (routed.kind === 'reject') throw new Error(JSON.stringify(routed.body));
      expect(routed.plain).toBeDefined();
      const answer = await endpoint.serve(routed, () => new Request('http://kitty.test/mcp', { method: 'POST', headers: h }), auth);
      expect(answer.status).toBe(200);
      return JSON.parse(answer.body!);
    };
    for (const [method, params] of [
      ['tools/list', {}],
      ['tools/call', { name: 'read_it', arguments: {} }],
    ] as const) {
      const answers = [];
      for (let i = 0; i < 4; i++) answers.push(await call(method, params));
      for (const a of answers) expect(a).toEqual(answers[0]);
      expect(answers[0].result.resultType).toBe('complete');
      expect(answers[0].result._meta['io.modelcontextprotocol/serverInfo'].name).toBe('kitty');
    }
    expect((await call('tools/list', {})).result).toMatchObject({ ttlMs: 600_000, cacheScope: 'public' });
    await endpoint.close();
  });
});

describe('McpEndpoint: malformed 2025-era messages are answered, never left hanging', () => {
  it('a JSON-RPC shape the SDK would drop is -32700; a request with bad params gets its JSON-RPC error', async () => {
    const { McpEndpoint } = await import('../src/index.ts');
    const endpoint = new McpEndpoint(toolsServerFactory(registry, 'http://kitty.test'), true, () => {});
    const ctx = { callRequest: { services: {} as CallRequest['services'], auth: null, requestId: 'r' }, logError: () => {} };
    const auth = { token: '', clientId: 'anonymous', scopes: [], extra: { [CONTEXT_KEY]: ctx } };
    const serve = async (body: Record<string, unknown>) => {
      const routed = routeMessage(headersOf(ACCEPT), body);
      if (routed.kind === 'reject') throw new Error('rejected');
      return endpoint.serve(routed, () => new Request('http://kitty.test/mcp', { method: 'POST' }), auth);
    };
    for (const body of [
      { jsonrpc: '1.0', id: 1, method: 'ping' },
      { jsonrpc: '2.0', id: 1.5, method: 'ping' },
      { jsonrpc: '2.0', id: 1, method: 'tools/list', params: 5 },
      { jsonrpc: '2.0', id: 1, method: 'ping', params: { _meta: 'x' } },
    ]) {
      const a = await serve(body);
      expect(a.status, JSON.stringify(body)).toBe(400);
      expect(JSON.parse(a.body!).error.code).toBe(-32700);
    }
    const noParams = await serve({ jsonrpc: '2.0', id: 2, method: 'tools/call' });
    expect(JSON.parse(noParams.body!)).toMatchObject({ id: 2, error: { code: -32602 } });
    await endpoint.close();
  });
});
