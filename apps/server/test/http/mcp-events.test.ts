/**
 * The event feed over MCP with the official clients: `kitty://events` is listed and read (the
 * caller's newest events, the same objects and ids as list_events, never another agent's);
 * notifications when a new event for the subscriber commits — the v1 client 1.32.2 on 2025-11-25
 * (resources/subscribe, delivered on the GET /mcp stream it opens itself) and the SDK v2 client
 * pinned to 2026-07-28 (subscriptions/listen); an outsider's subscription receives nothing;
 * no credential → 401; the per-credential bound; graceful close at shutdown; a write through another
 * instance wakes a subscription (LISTEN/NOTIFY); keep-alive comments.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, StreamableHTTPClientTransport, type McpSubscription } from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import Fastify from 'fastify';
import { registerMcpRoutes } from '@kitty/mcp-adapter';
import { toErrorEnvelope } from '@kitty/core';
import { startKitty } from '../../src/index.ts';
import { QUIET_TEST_CONFIG, startTestServer, type TestServer } from '../server-harness.ts';

let s: TestServer;
const closers: Array<() => Promise<void>> = [];
type Agent = Awaited<ReturnType<TestServer['agent']>>;
let ann: Agent;
let bob: Agent;
let carol: Agent;
let groupId: string;

beforeAll(async () => {
  s = await startTestServer({ eventStreamsPerCredential: 2 });
  [ann, bob, carol] = await Promise.all([s.agent('ann'), s.agent('bob'), s.agent('carol')]);
  groupId = (await rest(ann, 'create_group', { name: 'Trip', currency: 'EUR', idempotency_key: 'mcp-ev-g-1' })).group.group_id;
  const inv = await rest(ann, 'create_invite', { group_id: groupId, idempotency_key: 'mcp-ev-inv-1' });
  await rest(bob, 'join_group', { code: inv.invite.code, idempotency_key: 'mcp-ev-join-1' });
  // Carol has a group of her own: its events are hers alone.
  await rest(carol, 'create_group', { name: 'Carol only', currency: 'EUR', idempotency_key: 'mcp-ev-g-c' });
});
afterAll(async () => {
  for (const close of closers) await close().catch(() => {});
  await s?.close();
});

async function rest(agent: Agent, tool: string, args: Record<string, unknown>) {
  const r = await s.http(`/v1/tools/${tool}`, { body: args, apiKey: agent.apiKey });
  if (!r.json?.ok) throw new Error(`${tool}: ${r.text}`);
  return r.json.data;
}

async function v1(agent: Agent): Promise<V1Client> {
  const c = new V1Client({ name: 'kitty-v1', version: '1.0.0' });
  const headers = { Authorization: `Bearer ${agent.apiKey}` };
  await c.connect(new V1Transport(new URL(`${s.url}/mcp`), { requestInit: { headers } }));
  closers.push(() => c.close());
  return c;
}

async function v2(agent: Agent): Promise<Client> {
  const c = new Client({ name: 'kitty-v2', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  const headers = { Authorization: `Bearer ${agent.apiKey}` };
  await c.connect(new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), { requestInit: { headers } }));
  closers.push(() => c.close());
  return c;
}

/** Feed watchers waiting on this instance (every open subscription waits on the LISTEN wake-ups). */
const watchers = () => (s.kitty.services.eventWaiter as unknown as { size: number }).size;

/** Closes the clients opened so far and waits until the server let go of their streams (the per-credential bound is 2 here). */
async function closeClients(): Promise<void> {
  for (const close of closers.splice(0)) await close().catch(() => {});
  expect(await until(() => watchers() === 0)).toBe(true);
}

async function until(cond: () => boolean, ms = 10_000): Promise<boolean> {
  const t0 = Date.now();
  while (!cond() && Date.now() - t0 < ms) await new Promise((r) => setTimeout(r, 20));
  return cond();
}

let expenses = 0;
const addExpense = () =>
  rest(ann, 'add_expense', {
    group_id: groupId,
    description: `E${expenses}`,
    amount_minor: 100,
    idempotency_key: `mcp-ev-e-${expenses++}`,
  });

describe('kitty://events', () => {
  it('is listed, and reading it returns the caller’s newest events as list_events shows them, never another agent’s', async () => {
    await addExpense();
    for (const [version, client] of [
      ['2025-11-25', await v1(bob)],
      ['2026-07-28', await v2(bob)],
    ] as const) {
      const listed = await client.listResources();
      expect(
        listed.resources.map((r) => r.uri),
        version,
      ).toContain('kitty://events');
      const read = await client.readResource({ uri: 'kitty://events' });
      const content = read.contents[0] as { uri: string; mimeType: string; text: string };
      expect(content.mimeType).toBe('application/json');
      const page = JSON.parse(content.text) as { events: Array<{ event_id: string; group_id: string }>; next_cursor: string };
      const all = await rest(bob, 'list_events', { limit: 100 });
      expect(page.events, version).toEqual(all.events);
      expect(page.next_cursor).toBe(all.next_cursor);
      expect(page.events.map((e) => e.group_id)).toContain(groupId);
    }
    const carolPage = JSON.parse(((await (await v1(carol)).readResource({ uri: 'kitty://events' })).contents[0] as { text: string }).text);
    expect(carolPage.events.length).toBeGreaterThan(0);
    expect(carolPage.events.map((e: { group_id: string }) => e.group_id)).not.toContain(groupId);
    expect(carolPage).toEqual(await rest(carol, 'list_events', {}).then((d) => ({ events: d.events, next_cursor: d.next_cursor })));
    await closeClients();
  });

  it('2025-11-25: resources/subscribe, then a new expense in a shared group notifies the member on its GET stream, not the outsider', async () => {
    const base = watchers();
    const member = await v1(bob);
    const outsider = await v1(carol);
    const got: string[] = [];
    const outsiderGot: string[] = [];
    member.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void got.push(n.params.uri));
    outsider.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void outsiderGot.push(n.params.uri));
    expect(await member.subscribeResource({ uri: 'kitty://events' })).toEqual({});
    expect(await outsider.subscribeResource({ uri: 'kitty://events' })).toEqual({});
    await expect(member.subscribeResource({ uri: 'kitty://nothing' })).rejects.toThrow(/kitty:\/\/events/);
    // Both clients opened their GET stream after initialize; each waits on its agent's feed.
    expect(await until(() => watchers() >= base + 2)).toBe(true);

    await addExpense();
    expect(await until(() => got.length > 0)).toBe(true);
    expect(got[0]).toBe('kitty://events');
    await new Promise((r) => setTimeout(r, 500));
    expect(outsiderGot).toEqual([]);
    expect(await member.unsubscribeResource({ uri: 'kitty://events' })).toEqual({});
    await closeClients();
  });

  it('2026-07-28: subscriptions/listen acknowledges kitty://events only, notifies the member, not the outsider', async () => {
    const member = await v2(bob);
    const outsider = await v2(carol);
    const got: Array<{ uri: string; meta: unknown }> = [];
    const outsiderGot: string[] = [];
    member.setNotificationHandler('notifications/resources/updated', (n) => void got.push({ uri: n.params.uri, meta: n.params._meta }));
    outsider.setNotificationHandler('notifications/resources/updated', (n) => void outsiderGot.push(n.params.uri));
    const base = watchers();
    const sub: McpSubscription = await member.listen({ resourceSubscriptions: ['kitty://events', 'kitty://receipts/x'] });
    const other = await outsider.listen({ resourceSubscriptions: ['kitty://events'] });
    expect(sub.honoredFilter).toEqual({ resourceSubscriptions: ['kitty://events'] });
    expect(await until(() => watchers() >= base + 2)).toBe(true);

    await addExpense();
    expect(await until(() => got.length > 0)).toBe(true);
    expect(got[0]!.uri).toBe('kitty://events');
    expect(got[0]!.meta).toMatchObject({ 'io.modelcontextprotocol/subscriptionId': expect.any(String) });
    await new Promise((r) => setTimeout(r, 500));
    expect(outsiderGot).toEqual([]);

    await sub.close();
    await other.close();
    expect(await sub.closed).toBe('local');
    // The server let go of both subscriptions.
    expect(await until(() => watchers() <= base)).toBe(true);
    await closeClients();
  });

  it('needs a credential: resources/subscribe and subscriptions/listen are 401 without one; GET /mcp offers no stream (405)', async () => {
    const accept = { accept: 'application/json, text/event-stream' };
    const subscribe = await s.http('/mcp', {
      body: { jsonrpc: '2.0', id: 1, method: 'resources/subscribe', params: { uri: 'kitty://events' } },
      headers: accept,
    });
    expect(subscribe.status).toBe(401);
    expect(subscribe.headers.get('www-authenticate')).toMatch(/^Bearer /);
    const listen = await s.http('/mcp', {
      body: {
        jsonrpc: '2.0',
        id: 'listen:1',
        method: 'subscriptions/listen',
        params: {
          notifications: { resourceSubscriptions: ['kitty://events'] },
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      },
      headers: { ...accept, 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'subscriptions/listen' },
    });
    expect(listen.status).toBe(401);
    const get = await s.http('/mcp', { headers: { accept: 'text/event-stream' } });
    expect(get.status).toBe(405);
  });

  it('bounds open subscriptions per credential (429 beyond), and a closed one frees its place', async () => {
    const dave = await s.agent('dave');
    const open = async () => {
      const ac = new AbortController();
      const r = await fetch(`${s.url}/mcp`, {
        headers: { authorization: `Bearer ${dave.apiKey}`, accept: 'text/event-stream' },
        signal: ac.signal,
      });
      return { r, ac };
    };
    const a = await open();
    const b = await open();
    expect([a.r.status, b.r.status]).toEqual([200, 200]);
    expect(a.r.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const c = await open();
    expect(c.r.status).toBe(429);
    expect(((await c.r.json()) as { error: { code: string } }).error.code).toBe('RATE_LIMITED');
    a.ac.abort();
    let d = await open();
    for (let i = 0; d.r.status === 429 && i < 50; i++) {
      await new Promise((r) => setTimeout(r, 20));
      d = await open();
    }
    expect(d.r.status).toBe(200);
    b.ac.abort();
    d.ac.abort();
  });

  it('closing the server ends every subscription: listen with its graceful result, the GET stream by ending', async () => {
    const other = await startTestServer();
    try {
      const eve = await other.agent('eve');
      const c = new Client({ name: 'kitty-v2', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
      const headers = { Authorization: `Bearer ${eve.apiKey}` };
      await c.connect(new StreamableHTTPClientTransport(new URL(`${other.url}/mcp`), { requestInit: { headers } }));
      const sub = await c.listen({ resourceSubscriptions: ['kitty://events'] });
      const get = await fetch(`${other.url}/mcp`, { headers: { authorization: `Bearer ${eve.apiKey}`, accept: 'text/event-stream' } });
      expect(get.status).toBe(200);
      const rest = get.text();
      await other.kitty.close();
      expect(await sub.closed).toBe('graceful');
      expect(await rest).toMatch(/^: connected/);
      await c.close();
    } finally {
      await other.close();
    }
  });

  it('works across instances: a listen on one instance is woken by a write through another (NOTIFY, before the 5 s re-read)', async () => {
    const other = await startKitty({ databaseUrl: s.databaseUrl, ...QUIET_TEST_CONFIG });
    try {
      const c = new Client({ name: 'kitty-v2', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
      const headers = { Authorization: `Bearer ${bob.apiKey}` };
      await c.connect(new StreamableHTTPClientTransport(new URL(`${other.url}/mcp`), { requestInit: { headers } }));
      const got: string[] = [];
      c.setNotificationHandler('notifications/resources/updated', (n) => void got.push(n.params.uri));
      const sub = await c.listen({ resourceSubscriptions: ['kitty://events'] });
      expect(await until(() => (other.services.eventWaiter as unknown as { size: number }).size > 0)).toBe(true);
      await addExpense(); // through the first instance
      expect(await until(() => got.length > 0, 4000)).toBe(true);
      await sub.close();
      await c.close();
    } finally {
      await other.close();
    }
  });

  it('sends a keep-alive comment on an idle GET stream', async () => {
    const app = Fastify();
    const auth = { agentId: bob.agentId, handle: bob.handle, displayName: 'bob', scopes: ['svc:read'], credential: 'api_key' as const };
    await registerMcpRoutes(app, {
      registry: s.kitty.registry,
      callRequest: () => ({ services: s.kitty.services, auth, requestId: 'req_keepalive' }),
      baseUrl: 'http://127.0.0.1',
      allowedHosts: [],
      errorEnvelope: (err) => toErrorEnvelope(err, 'req_keepalive'),
      scopeChallenge: () => '',
      eventStreams: { keepAliveMs: 100 },
    });
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    const ac = new AbortController();
    try {
      const res = await fetch(`${url}/mcp`, { headers: { accept: 'text/event-stream' }, signal: ac.signal });
      expect(res.headers.get('content-type')).toBe('text/event-stream');
      const reader = res.body!.getReader();
      let text = '';
      const t0 = Date.now();
      while (Date.now() - t0 < 3000 && (text.match(/: keepalive/g) ?? []).length < 2)
        text += new TextDecoder().decode((await reader.read()).value);
      expect((text.match(/: keepalive\n\n/g) ?? []).length).toBeGreaterThanOrEqual(2);
      expect(text).not.toContain('data:');
    } finally {
      ac.abort();
      await app.close();
    }
  });
});
