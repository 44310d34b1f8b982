/**
 * Webhooks end to end: a real local receiver (KITTY_WEBHOOK_ALLOW_LOOPBACK) verifies every
 * delivery with the `standardwebhooks` library; ids and bodies match list_events; retries keep
 * the webhook-id; a hanging endpoint slows neither writes nor other endpoints; a window of
 * failures disables the endpoint with webhook.disabled; rotation sends both signatures; SSRF
 * refusals; another agent's endpoint is NOT_FOUND.
 */
import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import pg from 'pg';
import { startTestServer, type TestServer } from '../server-harness.ts';

type Got = { path: string; id: string; body: string; headers: http.IncomingHttpHeaders };

let s: TestServer;
let receiver: http.Server;
let trickler: net.Server;
let trickleUrl = '';
let base = '';
const got: Got[] = [];
const failuresLeft = new Map<string, number>();
const hangArrivals: number[] = [];

beforeAll(async () => {
  receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '/';
      got.push({ path, id: String(req.headers['webhook-id']), body: Buffer.concat(chunks).toString(), headers: req.headers });
      if (path.startsWith('/hang')) return void hangArrivals.push(Date.now()); // never answers
      if (path.startsWith('/always500')) return void res.writeHead(500).end();
      if (path.startsWith('/redirect')) return void res.writeHead(302, { location: `${base}/ok` }).end();
      const left = failuresLeft.get(path) ?? 0;
      if (left > 0) {
        failuresLeft.set(path, left - 1);
        return void res.writeHead(500).end('try later');
      }
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  // Reads the request, then sends its status line and headers one byte every 300 ms.
  trickler = net.createServer((sock) => {
    sock.on('error', () => {});
    sock.once('data', () => {
      const bytes = Buffer.from('HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 2\r\n\r\nok');
      let i = 0;
      const t = setInterval(() => (i < bytes.length && !sock.destroyed ? sock.write(bytes.subarray(i, ++i)) : clearInterval(t)), 300);
      sock.on('close', () => clearInterval(t));
    });
  });
  await new Promise<void>((r) => trickler.listen(0, '127.0.0.1', r));
  trickleUrl = `http://127.0.0.1:${(trickler.address() as { port: number }).port}/trickle`;
  base = `http://127.0.0.1:${(receiver.address() as { port: number }).port}`;
  s = await startTestServer({
    webhooks: {
      enabled: true,
      allowLoopback: true,
      retryDelaySeconds: 1,
      retryDelayMaxSeconds: 1,
      retryWindowSeconds: 4,
      timeoutMs: 1500,
      maxInFlight: 4,
    },
  });
});
afterAll(async () => {
  await s?.close();
  receiver?.closeAllConnections();
  await new Promise((r) => receiver?.close(r));
  await new Promise((r) => trickler?.close(r));
});

let n = 0;
const READS = new Set(['list_webhooks', 'list_events', 'get_inbox']);
async function call(apiKey: string, tool: string, args: Record<string, unknown>) {
  const key = READS.has(tool) ? {} : { idempotency_key: `wh-key-${++n}-${tool}` };
  return s.http(`/v1/tools/${tool}`, { body: { ...key, ...args }, apiKey });
}
async function ok(apiKey: string, tool: string, args: Record<string, unknown> = {}) {
  const r = await call(apiKey, tool, args);
  if (!r.json?.ok) throw new Error(`${tool}: ${r.text}`);
  return r.json.data;
}
type Maybe<T> = T | false | undefined | null;
async function until<T>(f: () => Maybe<T> | Promise<Maybe<T>>, ms = 25_000): Promise<T> {
  const t0 = Date.now();
  for (;;) {
    const v = await f();
    if (v) return v;
    if (Date.now() - t0 > ms) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 50));
  }
}
const at = (path: string) => got.filter((g) => g.path === path);
function verify(secret: string, g: Got) {
  return new Webhook(secret).verify(g.body, g.headers as Record<string, string>);
}

/** Whether pg-boss runs for this server: its schema exists and its connections (application_name kitty-webhooks) are open. */
async function queueState(): Promise<{ schema: boolean; connections: number }> {
  const c = new pg.Client({ connectionString: s.databaseUrl });
  await c.connect();
  try {
    const { rows } = await c.query(
      `SELECT to_regnamespace('pgboss') IS NOT NULL AS schema, (SELECT count(*)::int FROM pg_stat_activity
         WHERE datname = current_database() AND application_name = 'kitty-webhooks') AS connections`,
    );
    return rows[0];
  } finally {
    await c.end();
  }
}

describe('webhooks', () => {
  it('pg-boss starts only once an endpoint exists; until then writes wake the dispatcher at most 4 times a second', async () => {
    const bea = await s.agent('bea');
    const g = (await ok(bea.apiKey, 'create_group', { name: 'Before', currency: 'EUR' })).group.group_id;
    // Count the dispatcher's passes (its one statement) over 1.5 s of writes.
    const pool = s.kitty.services.pool as unknown as { query: (...a: unknown[]) => unknown };
    const real = pool.query;
    let passes = 0;
    pool.query = function (this: unknown, ...args: unknown[]) {
      if ((args[0] as { name?: string }).name === 'kitty_webhook_todo') passes++;
      return real.apply(this, args);
    };
    try {
      const t0 = Date.now();
      while (Date.now() - t0 < 1500) await ok(bea.apiKey, 'add_expense', { group_id: g, description: 'Tea', amount_minor: 300 });
      await new Promise((r) => setTimeout(r, 300)); // the dispatcher's passes for those events have run
    } finally {
      pool.query = real;
    }
    expect(passes).toBeGreaterThanOrEqual(1);
    expect(passes).toBeLessThanOrEqual(9); // 1.8 s at one pass per 250 ms, and the first at once
    expect(await queueState()).toEqual({ schema: false, connections: 0 });
    await ok(bea.apiKey, 'create_webhook', { url: `${base}/first` });
    await ok(bea.apiKey, 'add_expense', { group_id: g, description: 'Cake', amount_minor: 400 });
    await until(() => at('/first').length > 0);
    expect(await queueState()).toMatchObject({ schema: true });
    expect((await queueState()).connections).toBeGreaterThan(0);
  });

  it('delivers the events of list_events, signed, with their ids; pings; the secret is never replayed', async () => {
    const ann = await s.agent('ann');
    const created = await call(ann.apiKey, 'create_webhook', { url: `${base}/a`, idempotency_key: 'wh-create-a-1' });
    expect(created.status).toBe(200);
    const { webhook, secret } = created.json.data;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/=]+$/);
    const again = await call(ann.apiKey, 'create_webhook', { url: `${base}/a`, idempotency_key: 'wh-create-a-1' });
    expect(again.json.error.code).toBe('IDEMPOTENCY_REPLAY_UNAVAILABLE');
    expect(JSON.stringify(await ok(ann.apiKey, 'list_webhooks'))).not.toContain(secret);

    const ping = await ok(ann.apiKey, 'test_webhook', { webhook_id: webhook.webhook_id });
    const p = await until(() => at('/a').find((g) => g.id === ping.event_id));
    expect(verify(secret, p)).toMatchObject({ type: 'ping', data: { webhook_id: webhook.webhook_id } });

    const g = (await ok(ann.apiKey, 'create_group', { name: 'Trip', currency: 'EUR' })).group.group_id;
    for (let i = 0; i < 3; i++) await ok(ann.apiKey, 'add_expense', { group_id: g, description: `E${i}`, amount_minor: 100 + i });
    // (wait_seconds returns at the first event: poll until the four are visible)
    const listed = await until(async () => {
      const e = (await ok(ann.apiKey, 'list_events', { wait_seconds: 1 })).events as Array<{ event_id: string }>;
      return e.length === 4 && e;
    });
    const deliveries = await until(() => {
      const d = at('/a').filter((x) => x.id !== ping.event_id);
      return d.length >= 4 && d;
    });
    expect(deliveries.map((d) => d.id).sort()).toEqual(listed.map((e) => e.event_id));
    for (const d of deliveries) {
      const body = verify(secret, d) as { event_id: string };
      expect(d.body).toBe(JSON.stringify(listed.find((e) => e.event_id === body.event_id)));
      expect(d.headers['webhook-id']).toBe(body.event_id);
    }
    expect(() => verify('whsec_' + Buffer.from('not the secret!!').toString('base64'), deliveries[0]!)).toThrow();
    const list = await until(async () => {
      const l = (await ok(ann.apiKey, 'list_webhooks')).webhooks[0];
      return l.recent_deliveries.length === 5 && l.recent_deliveries.every((x: { status: string }) => x.status === 'delivered') && l;
    });
    expect(list.recent_deliveries[0]).toMatchObject({ status_code: 204, attempts: 1, error: null });
  });

  it('retries a 500 with the same webhook-id until a 2xx; a redirect is a failure, not followed', async () => {
    const bob = await s.agent('bob');
    failuresLeft.set('/flaky', 2);
    const { webhook } = await ok(bob.apiKey, 'create_webhook', { url: `${base}/flaky`, event_types: ['group.created'] });
    const ping = await ok(bob.apiKey, 'test_webhook', { webhook_id: webhook.webhook_id });
    const tries = await until(() => at('/flaky').length >= 3 && at('/flaky'));
    expect(tries.map((t) => t.id)).toEqual([ping.event_id, ping.event_id, ping.event_id]);
    const d = await until(async () => {
      const x = (await ok(bob.apiKey, 'list_webhooks')).webhooks[0].recent_deliveries[0];
      return x.status === 'delivered' && x;
    });
    expect(d.attempts).toBe(3);

    const { webhook: r } = await ok(bob.apiKey, 'create_webhook', { url: `${base}/redirect` });
    await ok(bob.apiKey, 'test_webhook', { webhook_id: r.webhook_id });
    const failed = await until(async () => {
      const x = (await ok(bob.apiKey, 'list_webhooks')).webhooks.find((w: { webhook_id: string }) => w.webhook_id === r.webhook_id);
      return x.recent_deliveries[0]?.attempts >= 1 && x.recent_deliveries[0];
    });
    expect(failed).toMatchObject({ status: 'pending', status_code: 302 });
    expect(at('/ok').length).toBe(0);
  });

  it('a hanging endpoint slows neither writes nor another endpoint; a window of failures disables the endpoint', async () => {
    const cat = await s.agent('cat');
    const dan = await s.agent('dan');
    await ok(cat.apiKey, 'create_webhook', { url: `${base}/hang` });
    const trickle = (await ok(cat.apiKey, 'create_webhook', { url: trickleUrl })).webhook;
    const dead = (await ok(cat.apiKey, 'create_webhook', { url: `${base}/always500` })).webhook;
    await ok(dan.apiKey, 'create_webhook', { url: `${base}/dan` });
    const t0 = Date.now();
    for (let i = 0; i < 10; i++) await ok(cat.apiKey, 'create_group', { name: `G${i}`, currency: 'EUR' });
    const writes = Date.now() - t0;
    const t1 = Date.now();
    await ok(dan.apiKey, 'create_group', { name: 'Dan', currency: 'EUR' });
    await until(() => at('/dan').length >= 1);
    expect(Date.now() - t1).toBeLessThan(4000);
    expect(writes).toBeLessThan(5000);
    // At most 4 in flight: attempts end only at the 1.5 s timeout, so 5 arrivals within 1.4 s
    // would be 5 open at once.
    await until(() => hangArrivals.length >= 8);

    for (const t of hangArrivals) expect(hangArrivals.filter((u) => u >= t && u < t + 1400).length).toBeLessThanOrEqual(4);

    // The trickling receiver is cut at the 1.5 s timeout (its 200 never completes).
    const cut = await until(async () => {
      const x = (await ok(cat.apiKey, 'list_webhooks')).webhooks.find((h: { webhook_id: string }) => h.webhook_id === trickle.webhook_id);
      return x.recent_deliveries.find((d: { attempts: number }) => d.attempts >= 1);
    });
    expect(cut).toMatchObject({ status_code: null });
    expect(['pending', 'failed']).toContain(cut.status); // failed once past the 4 s window
    expect(cut.error).toMatch(/within 1.5 s/);
    // The always-500 endpoint: disabled after the 4 s window, with its event and inbox item.
    const ev = await until(async () => {
      const e = (await ok(cat.apiKey, 'list_events', { types: ['webhook.disabled'] })).events as Array<{ data: { webhook_id: string } }>;
      return e.some((x) => x.data.webhook_id === dead.webhook_id) && e;
    }, 30_000);
    expect(ev.find((x) => x.data.webhook_id === dead.webhook_id)!.data).toMatchObject({ url: `${base}/always500`, reason: 'HTTP 500' });
    const w = (await ok(cat.apiKey, 'list_webhooks')).webhooks.find((x: { webhook_id: string }) => x.webhook_id === dead.webhook_id);
    expect(w.disabled_at).not.toBeNull();
    const inbox = await ok(cat.apiKey, 'get_inbox', {});
    expect(JSON.stringify(inbox)).toContain('always500');
    // paused=false resumes it.
    const resumed = await ok(cat.apiKey, 'update_webhook', { webhook_id: dead.webhook_id, paused: false });
    expect(resumed.webhook.disabled_at).toBeNull();
  }, 60_000);

  it('sends only the chosen event types; a paused endpoint gets its events on resume', async () => {
    const ivy = await s.agent('ivy');
    const { webhook } = await ok(ivy.apiKey, 'create_webhook', { url: `${base}/ivy`, event_types: ['expense.created'] });
    await ok(ivy.apiKey, 'update_webhook', { webhook_id: webhook.webhook_id, paused: true });
    const g = (await ok(ivy.apiKey, 'create_group', { name: 'Ivy', currency: 'EUR' })).group.group_id;
    await ok(ivy.apiKey, 'add_expense', { group_id: g, description: 'Paused', amount_minor: 500 });
    await new Promise((r) => setTimeout(r, 2000));
    expect(at('/ivy')).toEqual([]);
    await ok(ivy.apiKey, 'update_webhook', { webhook_id: webhook.webhook_id, paused: false });
    const d = await until(() => at('/ivy')[0]);
    expect(JSON.parse(d.body)).toMatchObject({ type: 'expense.created', data: { description: 'Paused' } });
    await new Promise((r) => setTimeout(r, 1000));
    expect(at('/ivy').map((x) => JSON.parse(x.body).type)).toEqual(['expense.created']); // not group.created
  });

  it('rotation sends both signatures for 24 h', async () => {
    const eve = await s.agent('eve');
    const { webhook, secret: old } = await ok(eve.apiKey, 'create_webhook', { url: `${base}/rot` });
    const rotated = await ok(eve.apiKey, 'rotate_webhook_secret', { webhook_id: webhook.webhook_id });
    expect(rotated.secret).not.toBe(old);
    expect(Date.parse(rotated.webhook.previous_secret_expires_at) - Date.now()).toBeGreaterThan(23 * 3600_000);
    await ok(eve.apiKey, 'test_webhook', { webhook_id: webhook.webhook_id });
    const d = await until(() => at('/rot')[0]);
    expect(String(d.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verify(old, d)).toMatchObject({ type: 'ping' });
    expect(verify(rotated.secret, d)).toMatchObject({ type: 'ping' });
  });

  it('refuses private, loopback-on-https, metadata and credential URLs, and names resolving to private addresses', async () => {
    const fay = await s.agent('fay');
    for (const url of [
      'https://10.0.0.1/hook',
      'https://169.254.169.254/latest/meta-data',
      'https://[::1]/hook',
      'https://[::ffff:10.0.0.1]/hook',
      'https://100.64.0.1/hook',
      'https://user:pw@example.com/hook',
      'http://example.com/hook',
      'ftp://example.com/hook',
      'http://127.0.0.1/no-port',
    ]) {
      const r = await call(fay.apiKey, 'create_webhook', { url });
      expect(r.json.error?.code, url).toBe('VALIDATION_ERROR');
      expect(r.json.error.details.issues[0].path, url).toBe('url');
    }
    s.kitty.services.resolveHost = async () => [{ address: '192.168.1.5', family: 4 }];
    try {
      const r = await call(fay.apiKey, 'create_webhook', { url: 'https://looks-public.example/hook' });
      expect(r.json.error.code).toBe('VALIDATION_ERROR');
      expect(r.json.error.message).toContain('192.168.1.5');
    } finally {
      delete s.kitty.services.resolveHost;
    }
  });

  it('another agent cannot see, change, test, rotate or delete an endpoint', async () => {
    const gil = await s.agent('gil');
    const hal = await s.agent('hal');
    const { webhook } = await ok(gil.apiKey, 'create_webhook', { url: `${base}/gil` });
    expect((await ok(hal.apiKey, 'list_webhooks')).webhooks).toEqual([]);
    for (const [tool, extra] of [
      ['update_webhook', { paused: true }],
      ['delete_webhook', {}],
      ['test_webhook', {}],
      ['rotate_webhook_secret', {}],
    ] as const) {
      const r = await call(hal.apiKey, tool, { webhook_id: webhook.webhook_id, ...extra });
      expect(r.json.error?.code, tool).toBe('NOT_FOUND');
    }
    expect((await ok(gil.apiKey, 'list_webhooks')).webhooks[0].paused).toBe(false);
    await ok(gil.apiKey, 'delete_webhook', { webhook_id: webhook.webhook_id });
    expect((await ok(gil.apiKey, 'list_webhooks')).webhooks).toEqual([]);
  });

  it('closing the server aborts an attempt in flight: no attempt counted, its lease freed, the delivery still pending', async () => {
    const jon = await s.agent('jon');
    const { webhook } = await ok(jon.apiKey, 'create_webhook', { url: `${base}/hang-at-close` });
    await ok(jon.apiKey, 'create_group', { name: 'Closing', currency: 'EUR' });
    await until(() => at('/hang-at-close').length >= 1);
    const t0 = Date.now();
    await s.kitty.close();
    // The receiver never answers: waiting for the attempt would take its 1.5 s timeout and count it.
    expect(Date.now() - t0).toBeLessThan(1400);
    const c = new pg.Client({ connectionString: s.databaseUrl });
    await c.connect();
    try {
      const { rows } = await c.query(
        `SELECT status, attempts, lease_until, error FROM webhook_deliveries WHERE webhook_id = $1 AND event_type = 'group.created'`,
        [webhook.webhook_id],
      );
      expect(rows).toEqual([{ status: 'pending', attempts: 0, lease_until: null, error: null }]);
    } finally {
      await c.end();
    }
  });
});
