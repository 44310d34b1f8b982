/**
 * The event feed over HTTP: SSE (GET /v1/events) read by a real EventSource client shows the same
 * ids as list_events over REST; Last-Event-ID resumes exactly; long polls wake through LISTEN/NOTIFY;
 * credentials, scope and the per-credential stream bound are enforced.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Fastify from 'fastify';
import { EventSource } from 'eventsource';
import { startKitty } from '../../src/index.ts';
import { registerEventStream } from '../../src/http/event-stream.ts';
import { QUIET_TEST_CONFIG, startTestServer, type TestServer } from '../server-harness.ts';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ eventStreamsPerCredential: 2 });
});
afterAll(async () => {
  await s?.close();
});

type Ev = { event_id: string; type: string; data: Record<string, unknown> };

function open(apiKey: string, opts: { lastEventId?: string; types?: string } = {}) {
  const url = `${s.url}/v1/events${opts.types ? `?types=${opts.types}` : ''}`;
  const got: Array<{ id: string; ev: Ev }> = [];
  const es = new EventSource(url, {
    fetch: (input, init) =>
      fetch(input, {
        ...init,
        headers: {
          ...(init?.headers as Record<string, string>),
          authorization: `Bearer ${apiKey}`,
          ...(opts.lastEventId && !(init?.headers as Record<string, string>)?.['Last-Event-ID']
            ? { 'last-event-id': opts.lastEventId }
            : {}),
        },
      }),
  });
  es.onmessage = (m) => got.push({ id: m.lastEventId, ev: JSON.parse(m.data) as Ev });
  const opened = new Promise<void>((resolve, reject) => {
    es.onopen = () => resolve();
    es.onerror = (e) => reject(new Error(`stream error ${String((e as { code?: number }).code)}`));
  });
  const until = async (n: number, ms = 10_000) => {
    const t0 = Date.now();
    while (got.length < n && Date.now() - t0 < ms) await new Promise((r) => setTimeout(r, 20));
    return got.slice();
  };
  return { es, got, opened, until };
}

async function rest(apiKey: string, tool: string, args: Record<string, unknown>) {
  const r = await s.http(`/v1/tools/${tool}`, { body: args, apiKey });
  if (!r.json?.ok) throw new Error(`${tool}: ${r.text}`);
  return r.json.data;
}

describe('GET /v1/events', () => {
  it('streams the same events and ids as list_events, from now on, and resumes exactly after Last-Event-ID', async () => {
    const ann = await s.agent('ann');
    const bob = await s.agent('bob');
    const g = (await rest(ann.apiKey, 'create_group', { name: 'Trip', currency: 'EUR', idempotency_key: 'sse-group-1' })).group.group_id;
    const inv = await rest(ann.apiKey, 'create_invite', { group_id: g, idempotency_key: 'sse-inv-1' });
    await rest(bob.apiKey, 'join_group', { code: inv.invite.code, idempotency_key: 'sse-join-1' });
    const before = await rest(bob.apiKey, 'list_events', { wait_seconds: 5 });

    const a = open(bob.apiKey);
    await a.opened;
    for (let i = 0; i < 3; i++)
      await rest(ann.apiKey, 'add_expense', { group_id: g, description: `E${i}`, amount_minor: 100 + i, idempotency_key: `sse-exp-${i}` });
    const streamed = await a.until(3);
    a.es.close();
    // Only events after the stream opened; the same ids and bodies as list_events.
    const listed = await rest(bob.apiKey, 'list_events', { after: before.next_cursor });
    expect(streamed.map((x) => x.id)).toEqual(listed.events.map((e: Ev) => e.event_id));
    expect(streamed.map((x) => x.ev)).toEqual(listed.events);
    expect(streamed.map((x) => x.ev.data.description)).toEqual(['E0', 'E1', 'E2']);

    // Resume after the first: exactly the second and third.
    const b = open(bob.apiKey, { lastEventId: streamed[0]!.id });
    await b.opened;
    const resumed = await b.until(2);
    b.es.close();
    expect(resumed.map((x) => x.id)).toEqual(streamed.slice(1).map((x) => x.id));

    // Type filter.
    const c = open(bob.apiKey, { lastEventId: before.next_cursor, types: 'member.joined' });
    await c.opened;
    await new Promise((r) => setTimeout(r, 300));
    c.es.close();
    expect(c.got).toEqual([]);
  });

  it('refuses missing credentials, bad cursors and unknown types, and bounds streams per credential', async () => {
    const ann = await s.agent('ann');
    expect((await s.http('/v1/events')).status).toBe(401);
    const bad = await s.http('/v1/events', { apiKey: ann.apiKey, headers: { 'last-event-id': 'nope' } });
    expect(bad.status).toBe(400);
    expect(bad.json.error.code).toBe('VALIDATION_ERROR');
    expect((await s.http('/v1/events?types=expense.nope', { apiKey: ann.apiKey })).status).toBe(400);
    const x = open(ann.apiKey);
    const y = open(ann.apiKey);
    await Promise.all([x.opened, y.opened]);
    const third = await s.http('/v1/events', { apiKey: ann.apiKey });
    expect(third.status).toBe(429);
    expect(third.json.error.code).toBe('RATE_LIMITED');
    x.es.close();
    y.es.close();
  });

  it('a list_events long poll wakes within a second of the commit (NOTIFY), not at its safety poll', async () => {
    const ann = await s.agent('ann');
    const g = (await rest(ann.apiKey, 'create_group', { name: 'Solo', currency: 'EUR', idempotency_key: 'lp-group-1' })).group.group_id;
    const start = await rest(ann.apiKey, 'list_events', { wait_seconds: 5 });
    expect(start.events.map((e: Ev) => e.type)).toEqual(['group.created']);
    const t0 = Date.now();
    const waiting = rest(ann.apiKey, 'list_events', { after: start.next_cursor, wait_seconds: 25 });
    await new Promise((r) => setTimeout(r, 400));
    const t1 = Date.now();
    await rest(ann.apiKey, 'update_group', { group_id: g, name: 'Solo 2', idempotency_key: 'lp-upd-1' });
    const r = await waiting;
    expect(r.events.map((e: Ev) => e.type)).toEqual(['group.updated']);
    expect(Date.now() - t1).toBeLessThan(1500);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(400);
  });

  it('works across instances: a stream on one instance gets a write made through another within a second', async () => {
    const other = await startKitty({ databaseUrl: s.databaseUrl, ...QUIET_TEST_CONFIG });
    try {
      const ann = await s.agent('ann');
      const a = open(ann.apiKey);
      await a.opened;
      const t0 = Date.now();
      const r = await fetch(`${other.url}/v1/tools/create_group`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${ann.apiKey}` },
        body: JSON.stringify({ name: 'Elsewhere', currency: 'EUR', idempotency_key: 'two-inst-1' }),
      });
      expect(r.status).toBe(200);
      const got = await a.until(1);
      a.es.close();
      expect(got.map((x) => x.ev.type)).toEqual(['group.created']);
      expect(Date.now() - t0).toBeLessThan(2000);
    } finally {
      await other.close();
    }
  });

  it('sends a heartbeat comment on an idle stream', async () => {
    const ann = await s.agent('ann');
    const app = Fastify();
    app.decorateRequest('kittyAuth', null);
    app.addHook('onRequest', async (req) => {
      req.kittyAuth = {
        agentId: ann.agentId,
        handle: ann.handle,
        displayName: 'ann',
        scopes: ['svc:read'],
        credential: 'api_key',
        keyId: 'k',
      };
    });
    await registerEventStream(app, { services: s.kitty.services, maxPerCredential: 1, heartbeatMs: 100 });
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    const ac = new AbortController();
    try {
      const res = await fetch(`${url}/v1/events`, { signal: ac.signal });
      expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
      const reader = res.body!.getReader();
      let text = '';
      const t0 = Date.now();
      while (Date.now() - t0 < 3000 && (text.match(/: heartbeat/g) ?? []).length < 2)
        text += new TextDecoder().decode((await reader.read()).value);
      expect((text.match(/: heartbeat\n\n/g) ?? []).length).toBeGreaterThanOrEqual(2);
      expect(text).not.toContain('data:');
    } finally {
      ac.abort();
      await app.close();
    }
  });
});
