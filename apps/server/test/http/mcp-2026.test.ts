/**
 * MCP 2026-07-28 beside 2025-11-25 on /mcp over real HTTP, with the official clients: the SDK v2
 * client pinned to 2026-07-28, in auto mode and in legacy mode, and the v1 client 1.32.2. Also the
 * wire rules a client meets: server/discover, cache hints, resultType, Mcp-Method/Mcp-Name checked
 * against the body (-32020), unsupported versions (-32022), JSON (not SSE) for a 2025 initialize,
 * MCP without a credential (discovery, tools/list, register_agent; 401 + challenge otherwise), a
 * read-only key's narrowed listing, and register_agent never carrying the caller's inbox.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startTestServer, type TestServer } from '../server-harness.ts';

let s: TestServer;
let alice: Awaited<ReturnType<TestServer['agent']>>;
const closers: Array<() => Promise<void>> = [];

type Mode = 'legacy' | 'auto' | { pin: '2026-07-28' };
async function v2(mode: Mode, apiKey?: string): Promise<Client> {
  const c = new Client({ name: 'kitty-v2', version: '1.0.0' }, { versionNegotiation: { mode } });
  const headers: Record<string, string> = apiKey ? { Authorization: `Bearer ${apiKey}` } : {};
  await c.connect(new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), { requestInit: { headers } }));
  closers.push(() => c.close());
  return c;
}

const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

/** A raw 2026-07-28 request: envelope in _meta, the standard headers. */
function modern(method: string, params: Record<string, unknown> = {}, opts: { apiKey?: string; headers?: Record<string, string> } = {}) {
  const name: Record<string, string> = typeof params.name === 'string' ? { 'mcp-name': params.name } : {};
  return s.http('/mcp', {
    body: { jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: { ...ENVELOPE, ...(params._meta as object) } } },
    ...(opts.apiKey ? { apiKey: opts.apiKey } : {}),
    headers: {
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': method,
      ...name,
      ...opts.headers,
    },
  });
}

/** A raw 2025-era request (no envelope). */
function legacy(
  method: string,
  params: Record<string, unknown> | undefined,
  opts: { apiKey?: string; headers?: Record<string, string> } = {},
) {
  return s.http('/mcp', {
    body: { jsonrpc: '2.0', id: 2, method, ...(params ? { params } : {}) },
    ...(opts.apiKey ? { apiKey: opts.apiKey } : {}),
    headers: { accept: 'application/json, text/event-stream', ...opts.headers },
  });
}

beforeAll(async () => {
  s = await startTestServer();
  alice = await s.agent('alice');
});
afterAll(async () => {
  for (const close of closers) await close().catch(() => {});
  await s?.close();
});

describe('the official clients of both eras', () => {
  const names = () => s.kitty.registry.catalogue.map((t) => t.name);

  for (const [mode, version] of [
    [{ pin: '2026-07-28' }, '2026-07-28'],
    ['auto', '2026-07-28'],
    ['legacy', '2025-11-25'],
  ] as const) {
    it(`SDK v2 client, ${JSON.stringify(mode)}: negotiates ${version}, lists every tool, calls one`, async () => {
      const c = await v2(mode, alice.apiKey);
      expect(c.getNegotiatedProtocolVersion()).toBe(version);
      expect(c.getInstructions()).toContain('/mcp/docs');
      expect((await c.listTools()).tools.map((t) => t.name)).toEqual(names());
      const me = await c.callTool({ name: 'get_me', arguments: {} });
      expect(me.isError).toBeFalsy();
      expect((me.structuredContent as { agent: { handle: string } }).agent.handle).toBe(alice.handle);
      const bad = await c.callTool({ name: 'get_group', arguments: { group_id: 'nope' } });
      expect(bad.isError).toBe(true);
      expect(JSON.parse((bad.content as Array<{ text: string }>)[0]!.text).error.code).toBe('VALIDATION_ERROR');
      const unknown = await c.callTool({ name: 'get_mee', arguments: {} }).catch((e: Error) => e);
      expect(unknown).toBeInstanceOf(Error);
      expect((unknown as { code?: number }).code).toBe(-32602);
      expect((unknown as Error).message).toContain('get_me');
      expect((unknown as Error).message.match(/MCP error/g)?.length ?? 0).toBeLessThanOrEqual(1);
    });
  }

  it('the v1 client 1.32.2: 2025-11-25, and an error message with one "MCP error" prefix', async () => {
    const c = new V1Client({ name: 'kitty-v1', version: '1.0.0' });
    await c.connect(new V1Transport(new URL(`${s.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${alice.apiKey}` } } }));
    closers.push(() => c.close());
    expect((await c.listTools()).tools.map((t) => t.name)).toEqual(names());
    const e = (await c.callTool({ name: 'get_mee', arguments: {} }).catch((x: Error) => x)) as Error;
    expect(e.message).toMatch(/^MCP error -32602: Unknown tool/);
    expect(e.message.match(/MCP error/g)).toHaveLength(1);
  });
});

describe('2026-07-28 on the wire', () => {
  it('server/discover: versions, capabilities, resultType and a public cache hint; no credential needed', async () => {
    const r = await modern('server/discover');
    expect(r.status).toBe(200);
    expect(r.json.result).toMatchObject({
      supportedVersions: expect.arrayContaining(['2026-07-28']),
      capabilities: { tools: {} },
      resultType: 'complete',
      ttlMs: 600_000,
      cacheScope: 'public',
    });
  });

  it('tools/list: the whole catalogue is public for ten minutes; a read-only key gets its narrowed list, private, saying so', async () => {
    const full = await modern('tools/list', {}, { apiKey: alice.apiKey });
    expect(full.json.result).toMatchObject({ resultType: 'complete', ttlMs: 600_000, cacheScope: 'public' });
    expect(full.json.result.tools).toHaveLength(s.kitty.registry.catalogue.length);
    const anonymous = await modern('tools/list');
    expect(anonymous.json.result.tools).toEqual(full.json.result.tools);

    const apiKey = await readOnlyKey();
    const narrow = await modern('tools/list', {}, { apiKey });
    const listed = narrow.json.result.tools.map((t: { name: string }) => t.name);
    const callable = s.kitty.registry.catalogue.filter((t) => t.scope !== 'svc:write').map((t) => t.name);
    expect(listed).toEqual(callable);
    expect(listed).toContain('register_agent');
    expect(narrow.json.result).toMatchObject({
      cacheScope: 'private',
      _meta: { 'kitty/omitted': { count: s.kitty.registry.catalogue.length - callable.length, missing_scopes: ['svc:write'] } },
    });
    // The 2025 answer carries no 2026 fields.
    const old = await legacy('tools/list', undefined, { apiKey });
    expect(old.json.result.ttlMs).toBeUndefined();
    expect(old.json.result.tools.map((t: { name: string }) => t.name)).toEqual(callable);
  });

  it('a 2025 initialize is answered as JSON, not SSE', async () => {
    const r = await legacy('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
    expect(r.json.result.protocolVersion).toBe('2025-11-25');
  });

  it('Mcp-Method/Mcp-Name that disagree with the body: -32020 on both eras, nothing runs', async () => {
    const lie = { 'mcp-method': 'tools/call', 'mcp-name': 'delete_expense' };
    const old = await legacy('ping', undefined, { apiKey: alice.apiKey, headers: lie });
    expect(old.status).toBe(400);
    expect(old.json.error.code).toBe(-32020);
    const noMethod = await modern('ping', {}, { apiKey: alice.apiKey, headers: lie });
    expect(noMethod.status).toBe(400);
    expect(noMethod.json.error.code).toBe(-32020);
    const key = `grp-${randomUUID()}`;
    const otherName = await modern(
      'tools/call',
      { name: 'create_group', arguments: { name: 'Lie', currency: 'EUR', idempotency_key: key } },
      { apiKey: alice.apiKey, headers: { 'mcp-name': 'get_me' } },
    );
    expect(otherName.status).toBe(400);
    expect(otherName.json.error.code).toBe(-32020);
    const oldName = await legacy(
      'tools/call',
      { name: 'create_group', arguments: { name: 'Lie', currency: 'EUR', idempotency_key: key } },
      { apiKey: alice.apiKey, headers: { 'mcp-name': 'get_me' } },
    );
    expect(oldName.json.error.code).toBe(-32020);
    const groups = await s.http('/v1/tools/list_groups', { body: {}, apiKey: alice.apiKey });
    expect(groups.json.data.groups.filter((g: { name: string }) => g.name === 'Lie')).toEqual([]);
  });

  it('an unsupported protocol version: -32022 naming the supported ones, on both eras', async () => {
    const r = await modern(
      'tools/list',
      { _meta: { 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } },
      {
        apiKey: alice.apiKey,
        headers: { 'mcp-protocol-version': '2099-01-01' },
      },
    );
    expect(r.status).toBe(400);
    expect(r.json.error.code).toBe(-32022);
    expect(r.json.error.data.supported).toContain('2026-07-28');
    const old = await legacy('tools/list', undefined, { apiKey: alice.apiKey, headers: { 'mcp-protocol-version': '1999-01-01' } });
    expect(old.status).toBe(400);
    expect(old.json.error).toMatchObject({ code: -32022, data: { requested: '1999-01-01' } });
    expect(old.json.error.data.supported).toEqual(expect.arrayContaining(['2026-07-28', '2025-11-25']));
  });
});

/** A read-only API key of a new agent (its key's scopes narrowed before its first use). */
async function readOnlyKey(): Promise<string> {
  const a = await s.agent('reader');
  await s.kitty.services.prisma.apiKey.updateMany({ where: { agentId: a.agentId }, data: { scopes: ['svc:read'] } });
  return a.apiKey;
}

describe('MCP without a credential', () => {
  it('a pinned 2026 client lists the tools and registers; a call that needs an identity is refused', async () => {
    const c = await v2({ pin: '2026-07-28' });
    expect((await c.listTools()).tools.length).toBe(s.kitty.registry.catalogue.length);
    const handle = `anon-${randomUUID().slice(0, 8)}`;
    const reg = await c.callTool({ name: 'register_agent', arguments: { handle, display_name: 'Anon' } });
    expect(reg.isError, JSON.stringify(reg.content)).toBeFalsy();
    const apiKey = (reg.structuredContent as { api_key: string }).api_key;
    expect(apiKey).toMatch(/^kitty_/);
    await expect(c.callTool({ name: 'get_me', arguments: {} })).rejects.toThrow();
    const me = await v2({ pin: '2026-07-28' }, apiKey);
    expect(((await me.callTool({ name: 'get_me', arguments: {} })).structuredContent as { agent: { handle: string } }).agent.handle).toBe(
      handle,
    );
  });

  it('everything else answers 401 with the resource_metadata challenge, on both eras', async () => {
    for (const r of [
      await modern('tools/call', { name: 'get_me', arguments: {} }),
      await legacy('tools/call', { name: 'create_group', arguments: {} }),
      await legacy('ping', undefined),
      await modern('resources/list'),
    ]) {
      expect(r.status).toBe(401);
      expect(r.headers.get('www-authenticate')).toContain('resource_metadata="');
      expect(r.headers.get('www-authenticate')).toContain('/.well-known/oauth-protected-resource/mcp"');
      expect(r.json.error.code).toBe('UNAUTHENTICATED');
    }
    const init = await legacy('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } });
    expect(init.status).toBe(200);
  });
});

describe("a tool result never carries another agent's inbox", () => {
  it("register_agent called with an agent's key (MCP and REST) returns the new agent without the caller's inbox", async () => {
    const ann = await s.agent('ann');
    const bo = await s.agent('bo');
    await ann.client.add_contact({ handle: bo.handle });
    await bo.client.add_contact({ handle: ann.handle });
    await bo.client.send_message({ to_handle: ann.handle, body: 'dinner at 8?' });
    const me = await ann.client.get_me();
    expect(me.inbox?.unread).toBeGreaterThan(0); // the control: ann has an inbox to leak

    const c = await v2({ pin: '2026-07-28' }, ann.apiKey);
    const reg = await c.callTool({ name: 'register_agent', arguments: { handle: `new-${randomUUID().slice(0, 8)}`, display_name: 'New' } });
    expect(reg.isError).toBeFalsy();
    expect((reg.structuredContent as Record<string, unknown>).inbox).toBeUndefined();
    expect((reg.structuredContent as { suggested_next: string[] }).suggested_next.length).toBeGreaterThan(0);

    const rest = await s.http('/v1/tools/register_agent', {
      body: { handle: `new-${randomUUID().slice(0, 8)}`, display_name: 'New' },
      apiKey: ann.apiKey,
    });
    expect(rest.status).toBe(200);
    expect(rest.json.data.api_key).toMatch(/^kitty_/);
    expect(rest.json.data.inbox).toBeUndefined();
  });
});

describe('traceparent', () => {
  it("a W3C traceparent in the message's _meta is on the request's log lines; a malformed one is not", async () => {
    const { mkdtemp, readFile, rm } = await import('node:fs/promises');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const dir = await mkdtemp(join(tmpdir(), 'kitty-trace-'));
    const logged = await startTestServer({ logLevel: 'info', logFile: join(dir, 'kitty.log') });
    try {
      const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
      const post = (meta: Record<string, unknown>) =>
        logged.http('/mcp', {
          body: { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: { ...ENVELOPE, ...meta } } },
          headers: { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' },
        });
      const ok = await post({ traceparent });
      expect(ok.status).toBe(200);
      const bad = await post({ traceparent: '00-zz\nfake' });
      expect(bad.status).toBe(200);
      await new Promise((r) => setTimeout(r, 200));
      const lines = (await readFile(join(dir, 'kitty.log'), 'utf8'))
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      const completed = lines.filter((l) => l.msg === 'request completed');
      const traced = completed.filter((l) => l.traceparent === traceparent);
      expect(traced).toHaveLength(1);
      expect(traced[0].reqId).toBe(ok.headers.get('x-request-id'));
      expect(lines.some((l) => typeof l.traceparent === 'string' && l.traceparent !== traceparent)).toBe(false);
    } finally {
      await logged.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
