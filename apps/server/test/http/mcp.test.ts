/**
 * The MCP adapter over real HTTP with the official SDK client (interface-spec "What the
 * service does" 1 and 7, "Errors", "Authentication"; DESIGN.md §1 "one declaration per tool"):
 * /mcp serves the same tools, schemas and errors as REST; /mcp/docs is read-only without auth.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError, ErrorCode, LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { ERROR_CODES } from '@kitty/core';
import rootPackage from '../../../../package.json' with { type: 'json' };
import { startTestServer, type TestServer } from '../server-harness.ts';

let s: TestServer;
let alice: { apiKey: string; handle: string; agentId: string };
let bob: { apiKey: string; handle: string; agentId: string };
const clients: Client[] = [];

async function connect(path: string, apiKey?: string, headers: Record<string, string> = {}): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(`${s.url}${path}`), {
    requestInit: { headers: { ...(apiKey ? { Authorization: `Bearer ${apiKey}` } : {}), ...headers } },
  });
  const client = new Client({ name: 'kitty-test', version: '1.0.0' });
  await client.connect(transport);
  clients.push(client);
  return client;
}

/** A raw POST with an arbitrary Host header (fetch does not allow overriding Host). */
function rawPost(
  path: string,
  headers: Record<string, string>,
  body: unknown,
): Promise<{ status: number; headers: Record<string, unknown>; text: string }> {
  const u = new URL(`${s.url}${path}`);
  const data = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname,
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'content-length': Buffer.byteLength(data),
          ...headers,
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text }));
      },
    );
    req.on('error', reject);
    req.end(data);
  });
}

const initialize = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};

beforeAll(async () => {
  s = await startTestServer();
  alice = await s.agent('alice');
  bob = await s.agent('bob');
});
afterAll(async () => {
  for (const c of clients) await c.close().catch(() => {});
  await s?.close();
});

describe('/mcp with the SDK client', () => {
  it('initializes on protocol 2025-11-25 without a session id', async () => {
    const c = await connect('/mcp', alice.apiKey);
    expect(c.getServerVersion()).toMatchObject({ name: 'kitty', version: rootPackage.version });
    expect(c.getServerCapabilities()?.tools).toBeDefined();
    expect(c.getInstructions()).toContain('/mcp/docs');
    const r = await rawPost('/mcp', { authorization: `Bearer ${alice.apiKey}` }, initialize);
    expect(r.status).toBe(200);
    expect(r.headers['mcp-session-id']).toBeUndefined();
    expect(r.headers['x-request-id']).toMatch(/^req_/);
    expect(JSON.parse(r.text).result.protocolVersion).toBe('2025-11-25');
  });

  it('tools/list gives the same names, input and output schemas and annotations as GET /v1/tools', async () => {
    const c = await connect('/mcp', alice.apiKey);
    const { tools } = await c.listTools();
    const rest = (await s.http('/v1/tools')).json.data.tools as any[];
    expect(tools.map((t) => t.name)).toEqual(rest.map((t) => t.name));
    const byName = new Map(rest.map((t) => [t.name, t]));
    for (const t of tools) {
      const r = byName.get(t.name);
      expect(t.inputSchema).toEqual(r.input_schema);
      expect(t.outputSchema).toEqual(r.output_schema);
      expect(t.title).toBe(r.title);
      expect(t.description).toBe(r.description);
      expect(t.annotations).toEqual({ title: r.title, ...r.annotations });
      for (const hint of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'])
        expect(typeof (t.annotations as any)[hint]).toBe('boolean');
    }
  });

  it('create_group then get_group: structuredContent is the REST data and validates against outputSchema', async () => {
    const c = await connect('/mcp', alice.apiKey);
    await c.listTools(); // lets the SDK client validate structuredContent against outputSchema
    const created = await c.callTool({
      name: 'create_group',
      arguments: { name: 'Trip', currency: 'EUR', idempotency_key: `mcp-${randomUUID()}` },
    });
    expect(created.isError).toBeFalsy();
    const group = (created.structuredContent as any).group;
    expect(group).toMatchObject({ name: 'Trip', currency: 'EUR', kind: 'group', archived: false, member_count: 1 });
    expect(JSON.parse((created.content as any)[0].text)).toEqual(created.structuredContent);

    const got = await c.callTool({ name: 'get_group', arguments: { group_id: group.group_id } });
    expect(got.isError).toBeFalsy();
    const data = got.structuredContent as any;
    expect(data.group.group_id).toBe(group.group_id);
    expect(data.members).toHaveLength(1);
    expect(data.members[0]).toMatchObject({ agent_id: alice.agentId, role: 'admin' });
    expect(Array.isArray(data.suggested_next)).toBe(true);

    // Same data as REST.
    const rest = await s.http('/v1/tools/get_group', { body: { group_id: group.group_id }, apiKey: alice.apiKey });
    expect({ ...rest.json.data, inbox: undefined }).toEqual({ ...data, inbox: undefined });
  });

  it('maps the Idempotency-Key header and marks replays', async () => {
    const key = `hdr-${randomUUID()}`;
    const c = await connect('/mcp', alice.apiKey, { 'Idempotency-Key': key });
    const a = await c.callTool({ name: 'create_group', arguments: { name: 'Keyed', currency: 'USD' } });
    expect(a.isError).toBeFalsy();
    const b = await c.callTool({ name: 'create_group', arguments: { name: 'Keyed', currency: 'USD' } });
    expect(b.isError).toBeFalsy();
    expect((b.structuredContent as any).group.group_id).toBe((a.structuredContent as any).group.group_id);
    expect(b._meta?.['kitty/idempotent-replayed']).toBe(true);
  });

  it('a bad uuid is an isError result with the VALIDATION_ERROR envelope as text only', async () => {
    const c = await connect('/mcp', alice.apiKey);
    await c.listTools();
    const r = await c.callTool({ name: 'get_group', arguments: { group_id: 'not-a-uuid' } });
    expect(r.isError).toBe(true);
    expect(r.structuredContent).toBeUndefined();
    expect(r.content).toHaveLength(1);
    const env = JSON.parse((r.content as any)[0].text);
    expect(env.ok).toBe(false);
    expect(env.error.code).toBe('VALIDATION_ERROR');
    expect(env.error.details.issues[0].path).toBe('group_id');
    expect(env.request_id).toMatch(/^req_/);
    // REST gives the same error body (apart from the request id).
    const rest = await s.http('/v1/tools/get_group', { body: { group_id: 'not-a-uuid' }, apiKey: alice.apiKey });
    expect({ ...env, request_id: 'x' }).toEqual({ ...rest.json, request_id: 'x' });
  });

  it('a non-member reading a group gets FORBIDDEN as an isError result', async () => {
    const a = await connect('/mcp', alice.apiKey);
    const created = await a.callTool({
      name: 'create_group',
      arguments: { name: 'Private', currency: 'GBP', idempotency_key: `mcp-${randomUUID()}` },
    });
    const groupId = (created.structuredContent as any).group.group_id;
    const b = await connect('/mcp', bob.apiKey);
    const r = await b.callTool({ name: 'get_group', arguments: { group_id: groupId } });
    expect(r.isError).toBe(true);
    expect(JSON.parse((r.content as any)[0].text).error.code).toBe('FORBIDDEN');
  });

  it('an unknown tool is a JSON-RPC InvalidParams error', async () => {
    const c = await connect('/mcp', alice.apiKey);
    const e = await c.callTool({ name: 'no_such_tool', arguments: {} }).then(
      () => null,
      (err: unknown) => err,
    );
    expect(e).toBeInstanceOf(McpError);
    expect((e as McpError).code).toBe(ErrorCode.InvalidParams);
  });

  it('parallel calls from different agents keep their own identity (pooled servers share no request state)', async () => {
    const call = (apiKey: string, id: number) =>
      rawPost(
        '/mcp',
        { authorization: `Bearer ${apiKey}`, 'mcp-protocol-version': '2025-11-25' },
        { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'get_me', arguments: {} } },
      );
    const who = [alice, bob];
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => call(who[i % 2]!.apiKey, i)));
    results.forEach((r, i) => {
      const msg = JSON.parse(r.text);
      expect(msg.id).toBe(i);
      expect(msg.result.structuredContent.agent.handle).toBe(who[i % 2]!.handle);
    });
  });

  it('ping works', async () => {
    const c = await connect('/mcp', alice.apiKey);
    expect(await c.ping()).toEqual({});
  });
});

describe('/mcp HTTP rules', () => {
  it('401 without a bearer on a call that needs an identity: WWW-Authenticate and the JSON error envelope', async () => {
    const r = await s.http('/mcp', {
      body: { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'get_me', arguments: {} } },
      headers: { accept: 'application/json, text/event-stream' },
    });
    expect(r.status).toBe(401);
    expect(r.headers.get('www-authenticate')).toMatch(/^Bearer .*resource_metadata=".*\/\.well-known\/oauth-protected-resource\/mcp"/);
    expect(r.json).toMatchObject({ ok: false, error: { code: 'UNAUTHENTICATED' } });
    expect(r.json.request_id).toBe(r.headers.get('x-request-id'));
  });

  it('401 with an invalid bearer', async () => {
    const r = await s.http('/mcp', {
      body: initialize,
      apiKey: 'kitty_invalid',
      headers: { accept: 'application/json, text/event-stream' },
    });
    expect(r.status).toBe(401);
    expect(r.headers.get('www-authenticate')).toContain('resource_metadata=');
    expect(r.json.error.code).toBe('UNAUTHENTICATED');
  });

  it('the SDK client connects without a credential but surfaces the 401 of a call that needs one', async () => {
    const c = await connect('/mcp');
    await expect(c.callTool({ name: 'get_me', arguments: {} })).rejects.toThrow();
  });

  it('DNS rebinding: a foreign Host or Origin is refused with 403; loopback hosts on any port pass', async () => {
    const auth = { authorization: `Bearer ${alice.apiKey}` };
    const evilHost = await rawPost('/mcp', { ...auth, host: 'evil.example.com' }, initialize);
    expect(evilHost.status).toBe(403);
    expect(JSON.parse(evilHost.text).error.code).toBe('FORBIDDEN');
    const evilOrigin = await rawPost('/mcp', { ...auth, origin: 'http://evil.example.com' }, initialize);
    expect(evilOrigin.status).toBe(403);
    const docsEvil = await rawPost('/mcp/docs', { host: 'evil.example.com:80' }, initialize);
    expect(docsEvil.status).toBe(403);
    for (const host of ['localhost:1234', '127.0.0.1', '[::1]:8080']) {
      const ok = await rawPost('/mcp', { ...auth, host, origin: `http://${host}` }, initialize);
      expect(ok.status, host).toBe(200);
    }
  });

  it('KITTY_ALLOWED_HOSTS adds host names', async () => {
    const other = await startTestServer({ allowedHosts: ['kitty.example.org'] });
    try {
      const u = new URL(other.url);
      const post = (host: string) =>
        new Promise<number>((resolve, reject) => {
          const data = JSON.stringify(initialize);
          const req = httpRequest(
            {
              host: u.hostname,
              port: u.port,
              path: '/mcp/docs',
              method: 'POST',
              headers: { host, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
            },
            (res) => {
              res.resume();
              res.on('end', () => resolve(res.statusCode!));
            },
          );
          req.on('error', reject);
          req.end(data);
        });
      expect(await post('kitty.example.org')).toBe(200);
      expect(await post('kitty.example.org:8443')).toBe(200);
      expect(await post('other.example.org')).toBe(403);
    } finally {
      await other.close();
    }
  });

  it('DELETE is 405 (no session); GET is 405 except the event stream of a caller with a credential (mcp-events.test.ts)', async () => {
    const g = await s.http('/mcp', { headers: { accept: 'text/event-stream' } });
    expect(g.status).toBe(405);
    expect(g.headers.get('allow')).toBe('POST');
    expect((await s.http('/mcp', { apiKey: alice.apiKey, headers: { accept: 'application/json' } })).status).toBe(405);
    expect((await s.http('/mcp/docs', { apiKey: alice.apiKey, headers: { accept: 'text/event-stream' } })).status).toBe(405);
    expect((await s.http('/mcp', { method: 'DELETE', apiKey: alice.apiKey })).status).toBe(405);
    const d = await s.http('/mcp/docs', { method: 'DELETE' });
    expect(d.status).toBe(405);
  });

  it('transport rules come from the SDK: 406 without the right Accept, 400 on an unsupported protocol version header', async () => {
    const auth = { authorization: `Bearer ${alice.apiKey}` };
    const noAccept = await rawPost('/mcp', { ...auth, accept: 'application/json' }, initialize);
    expect(noAccept.status).toBe(406);
    const badVersion = await rawPost(
      '/mcp',
      { ...auth, 'mcp-protocol-version': '1999-01-01' },
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
    );
    expect(badVersion.status).toBe(400);
    const notification = await rawPost('/mcp', auth, { jsonrpc: '2.0', method: 'notifications/initialized' });
    expect(notification.status).toBe(202);
  });
});

describe('/mcp/docs', () => {
  it('needs no credential and lists its three annotated tools with output schemas', async () => {
    const c = await connect('/mcp/docs');
    const { tools } = await c.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['describe_tool', 'list_tools', 'search_docs']);
    for (const t of tools) {
      expect(t.outputSchema?.type).toBe('object');
      expect(t.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false, openWorldHint: false });
    }
  });

  it('list_tools mirrors the catalogue; describe_tool gives the registry schemas', async () => {
    const c = await connect('/mcp/docs');
    await c.listTools();
    const list = (await c.callTool({ name: 'list_tools', arguments: {} })).structuredContent as any;
    expect(list.tools.map((t: any) => t.name)).toEqual(s.kitty.registry.catalogue.map((t) => t.name));
    expect(list.tools_version).toBe(s.kitty.registry.version);
    for (const t of list.tools) expect(t.summary.length).toBeGreaterThan(0);

    const d = (await c.callTool({ name: 'describe_tool', arguments: { name: 'create_group' } })).structuredContent as any;
    const rest = (await s.http('/v1/tools/create_group')).json.data;
    expect(d.tool.input_schema).toEqual(rest.input_schema);
    expect(d.tool.output_schema).toEqual(rest.output_schema);
    expect(d.tool.errors).toEqual(rest.errors);

    const missing = await c.callTool({ name: 'describe_tool', arguments: { name: 'nope' } });
    expect(missing.isError).toBe(true);
    expect(JSON.parse((missing.content as any)[0].text).error.code).toBe('NOT_FOUND');
    const bad = await c.callTool({ name: 'describe_tool', arguments: {} });
    expect(JSON.parse((bad.content as any)[0].text).error).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: { issues: [{ path: 'name' }] },
    });
  });

  it('search_docs finds tools and doc sections', async () => {
    const c = await connect('/mcp/docs');
    const r = (await c.callTool({ name: 'search_docs', arguments: { query: 'invite' } })).structuredContent as any;
    expect(r.results.some((x: any) => x.type === 'tool' && x.name === 'create_invite')).toBe(true);
    const e = (await c.callTool({ name: 'search_docs', arguments: { query: 'VALIDATION_ERROR' } })).structuredContent as any;
    expect(e.results.some((x: any) => x.type === 'doc' && x.uri === 'kitty://docs/errors')).toBe(true);
    const exact = (await c.callTool({ name: 'search_docs', arguments: { query: 'create_invite', limit: 3 } })).structuredContent as any;
    expect(exact.results[0]).toMatchObject({ type: 'tool', name: 'create_invite', uri: 'kitty://docs/tools/create_invite' });
    expect(exact.results).toHaveLength(3);
    const prefix = (await c.callTool({ name: 'search_docs', arguments: { query: 'settlem' } })).structuredContent as any;
    expect(prefix.results.some((x: any) => x.name === 'suggest_settlements')).toBe(true);
    const none = (await c.callTool({ name: 'search_docs', arguments: { query: 'qqqqzzzz' } })).structuredContent as any;
    expect(none.results).toEqual([]);
  });

  it('search_docs arguments: out-of-range limit and unknown keys are VALIDATION_ERROR naming the field', async () => {
    const c = await connect('/mcp/docs');
    const limit = await c.callTool({ name: 'search_docs', arguments: { query: 'x', limit: 0 } });
    expect(limit.isError).toBe(true);
    expect(JSON.parse((limit.content as any)[0].text).error).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: { issues: [{ path: 'limit' }] },
    });
    const extra = await c.callTool({ name: 'list_tools', arguments: { verbose: true } });
    expect(JSON.parse((extra.content as any)[0].text).error.code).toBe('VALIDATION_ERROR');
  });

  it('resources: overview, authentication, errors (every ERROR_TABLE code), tools, and a page per tool', async () => {
    const c = await connect('/mcp/docs');
    const { resources } = await c.listResources();
    expect(resources.map((r) => r.uri)).toEqual([
      'kitty://docs/overview',
      'kitty://docs/authentication',
      'kitty://docs/errors',
      'kitty://docs/tools',
    ]);
    const errors = (await c.readResource({ uri: 'kitty://docs/errors' })).contents[0] as any;
    for (const code of ERROR_CODES) expect(errors.text).toContain(`| ${code} |`);
    const tools = (await c.readResource({ uri: 'kitty://docs/tools' })).contents[0] as any;
    for (const t of s.kitty.registry.catalogue) expect(tools.text).toContain(`**${t.name}**`);
    const { resourceTemplates } = await c.listResourceTemplates();
    expect(resourceTemplates[0]!.uriTemplate).toBe('kitty://docs/tools/{name}');
    const page = (await c.readResource({ uri: 'kitty://docs/tools/get_group' })).contents[0] as any;
    expect(page.text).toContain('# get_group');
    await expect(c.readResource({ uri: 'kitty://docs/nope' })).rejects.toThrow(/not found/i);
    // Resource not found: -32602 with data.uri (MCP 2026-07-28; the SDK sends it so on both protocol eras).
    await expect(c.readResource({ uri: 'kitty://docs/tools/nope' })).rejects.toMatchObject({
      code: -32602,
      data: { uri: 'kitty://docs/tools/nope' },
    });
  });

  it('the docs server has no /mcp tools', async () => {
    const c = await connect('/mcp/docs');
    await expect(c.callTool({ name: 'create_group', arguments: {} })).rejects.toBeInstanceOf(McpError);
  });
});

describe('MCP transport edge cases', () => {
  it('invalid JSON on /mcp is a JSON-RPC parse error; a stale bearer does not lock out /mcp/docs', async () => {
    const s2 = await startTestServer();
    try {
      const bad = await s2.http('/mcp', {
        rawBody: '{nope',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      });
      expect(bad.status).toBe(400);
      expect(bad.json.error.code).toBe(-32700);
      const docs = await s2.http('/mcp/docs', {
        body: {
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
        },
        headers: { accept: 'application/json, text/event-stream', authorization: 'Bearer kitty_revoked_or_wrong' },
      });
      expect(docs.status).toBe(200);
      expect(docs.json.result.serverInfo).toBeDefined();
    } finally {
      await s2.close();
    }
  });
});
