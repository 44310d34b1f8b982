/**
 * The MCP projection over a fake registry, driven by the official SDK v2 client over an in-memory
 * transport: tools/list (narrowed for a credential lacking a scope), tools/call results and errors;
 * header/body routing; and the Host/Origin guard.
 */
import { Client, InMemoryTransport, type JSONRPCMessage } from '@modelcontextprotocol/client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ToolError, type CallRequest, type Registry, type ToolDescriptor } from '@kitty/core';
import { hostGuard, toolsServerFactory } from '../src/index.ts';
import { CONTEXT_KEY, type McpCallContext } from '../src/tools-server.ts';

const tool = (name: string): ToolDescriptor => ({
  name,
  title: `Title of ${name}`,
  description: `The ${name} tool.`,
  kind: 'write',
  area: 'test',
  scope: 'svc:write',
  auth: 'required',
  idempotency: 'replay',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  errors: [],
  hasRequiredArgs: false,
  input_schema: { type: 'object', properties: { text: { type: 'string', description: 'Any text.' } }, additionalProperties: false },
  output_schema: { type: 'object', properties: { echoed: { type: 'string' } } },
});

const catalogue = [tool('echo'), tool('forbidden'), tool('replayed')];
const calls: Array<{ name: string; args: unknown; req: CallRequest }> = [];
const registry: Registry = {
  tools: new Map(catalogue.map((t) => [t.name, t])),
  catalogue,
  version: 'v-test-1',
  envelope: { type: 'object', properties: { suggested_next: { type: 'array' } }, required: ['suggested_next'] },
  envelopeText: 'Every result also has suggested_next.',
  has: (name) => catalogue.some((t) => t.name === name),
  validateArgs: () => ({ ok: true }),
  unknownTool: (name) =>
    new ToolError('NOT_FOUND', `Unknown tool "${name}"; did you mean "echo"?`, { suggestedAction: 'List the tools with tools/list.' }),
  callTool: async (name, args, req) => {
    calls.push({ name, args, req });
    if (name === 'forbidden') throw new ToolError('FORBIDDEN', 'No write scope.', { details: { required_scope: 'svc:write' } });
    return { data: { echoed: (args as { text?: string }).text ?? '' }, call: { replayed: name === 'replayed' } } as Awaited<
      ReturnType<Registry['callTool']>
    >;
  },
};

let client: Client;
let ctx: McpCallContext;

beforeEach(async () => {
  calls.length = 0;
  ctx = { callRequest: { services: {} as CallRequest['services'], auth: null, requestId: 'req_mcp' }, logError: () => {} };
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  // What the HTTP route does: the call context travels in authInfo.extra.
  const send = clientSide.send.bind(clientSide);
  clientSide.send = (message: JSONRPCMessage) =>
    send(message, { authInfo: { token: 't', clientId: 'c', scopes: [], extra: { [CONTEXT_KEY]: ctx } } });
  await toolsServerFactory(registry, 'http://kitty.test')().connect(serverSide);
  client = new Client({ name: 'test', version: '1.0.0' });
  await client.connect(clientSide);
});
afterEach(async () => {
  await client.close();
});

describe('MCP tools server', () => {
  it('lists every registry tool with its schemas and annotations', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(['echo', 'forbidden', 'replayed']);
    expect(tools[0]).toMatchObject({
      title: 'Title of echo',
      description: 'The echo tool.',
      inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
      annotations: { title: 'Title of echo', idempotentHint: true },
    });
    expect(client.getInstructions()).toContain('http://kitty.test/v1/tools/{name}');
  });

  it('calls the tool with the arguments and returns data as structured content and text', async () => {
    const res = await client.callTool({ name: 'echo', arguments: { text: 'hi' } });
    expect(res.isError).toBeFalsy();
    expect(res.structuredContent).toEqual({ echoed: 'hi' });
    expect(JSON.parse((res.content as Array<{ text: string }>)[0]!.text)).toEqual({ echoed: 'hi' });
    expect(res._meta).toBeUndefined();
    expect(calls).toMatchObject([{ name: 'echo', args: { text: 'hi' }, req: { requestId: 'req_mcp' } }]);
  });

  it('marks a replayed write in _meta', async () => {
    const res = await client.callTool({ name: 'replayed', arguments: {} });
    expect(res._meta).toMatchObject({ 'kitty/idempotent-replayed': true });
  });

  it('a tool failure is an isError result carrying the REST error envelope, and notes a missing scope', async () => {
    const res = await client.callTool({ name: 'forbidden', arguments: {} });
    expect(res.isError).toBe(true);
    expect(res.structuredContent).toBeUndefined();
    const envelope = JSON.parse((res.content as Array<{ text: string }>)[0]!.text);
    expect(envelope).toMatchObject({
      ok: false,
      error: { code: 'FORBIDDEN', details: { required_scope: 'svc:write' } },
      request_id: 'req_mcp',
    });
    expect(ctx.insufficientScope).toBe('svc:write');
  });

  it('an unknown tool is a JSON-RPC invalid-params error', async () => {
    await expect(client.callTool({ name: 'no_such_tool', arguments: {} })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('did you mean "echo"'),
    });
    expect(calls).toEqual([]);
  });
});

describe('Host/Origin guard', () => {
  const check = hostGuard('https://kitty.example.com', ['internal.test', 'proxy.test:8443']);
  it('accepts loopback on any port, the base URL host, and listed hosts', () => {
    for (const host of [
      'localhost:3000',
      '127.0.0.1:1',
      '[::1]:80',
      'kitty.example.com',
      'KITTY.example.com:443',
      'internal.test:9',
      'proxy.test:8443',
    ]) {
      expect(check(host, undefined), host).toBeNull();
    }
    expect(check('localhost:3000', 'http://localhost:5173')).toBeNull();
  });
  it('refuses other hosts and origins, naming the header', () => {
    expect(check('evil.test', undefined)).toMatch(/^Host header "evil\.test"/);
    expect(check(undefined, undefined)).toMatch(/^Host header/);
    expect(check('proxy.test:8444', undefined)).toMatch(/^Host header/);
    expect(check('localhost:3000', 'http://evil.test')).toMatch(/^Origin header "http:\/\/evil\.test"/);
    expect(check('localhost:3000', 'not a url')).toMatch(/^Origin header/);
  });
});
