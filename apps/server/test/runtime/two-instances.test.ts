/**
 * Two Kitty server processes behind HAProxy (round robin, per request) on one PostgreSQL database
 * and one Redis — docs/scaling.md. Each property is checked through the balancer and
 * per instance directly:
 * - both started at once on an EMPTY database: migrations and the authorization server's keys race, one set wins;
 * - rate limits are shared (every limiter's counter lives in Redis under one prefix);
 * - the same idempotency key sent to both at once has one effect, and the other gets the same response replayed;
 * - a write on one instance shows in the inbox summary read on the other at once (NOTIFY);
 * - both schedulers running create each due occurrence of a repeating expense once;
 * - the official SDK v2 client pinned to MCP 2026-07-28 works through the balancer: its list and calls land on both instances;
 * - a people session cookie, an API key (REST and stateless MCP) and an OAuth access token work on both; the OAuth flow's
 *   signed cookies and consent form travel between instances;
 * - revoking an API key or disconnecting an app on one instance is refused on the other at once (NOTIFY).
 * Skipped, with the reason, only when no haproxy binary exists (scripts/ensure-test-packages.sh installs it).
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import pg from 'pg';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTRPCClient, httpLink } from '@trpc/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as V2Client, StreamableHTTPClientTransport as V2Transport } from '@modelcontextprotocol/client';
import { createDb } from '@kitty/db';
import { createSession, verifyLedger, type AccountRouter } from '@kitty/core';
import { findHaproxy, startCluster, type Cluster } from '../cluster-harness.ts';
import { CookieJar, consentOverHttp } from '../oauth-harness.ts';

const HAPROXY = findHaproxy();
if (!HAPROXY)
  console.warn('two-instances.test.ts skipped: no haproxy binary (run scripts/ensure-test-packages.sh or apt-get install haproxy)');

const ADMIN_URL = process.env.TEST_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const REDIS_URL = process.env.REDIS_URL_FOR_TESTS ?? 'redis://127.0.0.1:6379';
/** Per-agent requests per window: small enough to exhaust in the test. */
const AGENT_LIMIT = 60;
const REDIRECT = 'http://127.0.0.1:53682/callback';

const dbName = `kitty_test_${randomBytes(6).toString('hex')}`;
const databaseUrl = Object.assign(new URL(ADMIN_URL), { pathname: `/${dbName}` }).href;
/** Every Redis key of this run starts with it (KITTY_REDIS_PREFIX), so runs never share counters. */
const prefix = `kitty-test-${randomBytes(4).toString('hex')}`;

let cluster: Cluster;
let a: string;
let b: string;
let lb: string;
let db: ReturnType<typeof createDb>;
let redis: Redis;

async function admin(sql: string) {
  const c = new pg.Client({ connectionString: ADMIN_URL });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

describe.skipIf(!HAPROXY)('two instances behind HAProxy on one PostgreSQL and one Redis', () => {
  beforeAll(async () => {
    // An empty database: both instances apply the migrations and create the key material at once.
    await admin(`CREATE DATABASE "${dbName}"`);
    cluster = await startCluster({
      n: 2,
      haproxy: HAPROXY!,
      env: {
        ...process.env,
        DATABASE_URL: databaseUrl,
        REDIS_URL,
        KITTY_REDIS_PREFIX: prefix,
        KITTY_LOG: 'warn',
        KITTY_SCHEDULER: 'on',
        KITTY_SCHEDULER_INTERVAL: '1',
        KITTY_RATE_LIMIT: String(AGENT_LIMIT),
        KITTY_RATE_LIMIT_ANON: '100000',
        KITTY_AUTH_FAIL_LIMIT: '100000',
        KITTY_REGISTER_LIMIT_HOUR: '100000',
        KITTY_REGISTER_LIMIT_DAY: '100000',
        KITTY_AUTH_RATE_LIMIT: '100000',
        KITTY_TRUST_PROXY: '127.0.0.1',
        INIT_CWD: '',
      },
      // Each instance names its database sessions (k1, k2): the scheduler test sees who created what.
      envFor: (i) => ({ DATABASE_URL: `${databaseUrl}?application_name=k${i + 1}` }),
    });
    lb = cluster.url;
    [a, b] = cluster.instances.map((i) => i.url) as [string, string];
    db = createDb(databaseUrl, { poolMax: 2 });
    redis = new Redis(REDIS_URL);
  }, 120_000);

  afterAll(async () => {
    await cluster?.stop();
    await db?.close();
    if (redis) {
      const keys = await redis.keys(`${prefix}:*`);
      if (keys.length) await redis.del(...keys);
      redis.disconnect();
    }
    await admin(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`).catch(() => {});
  }, 60_000);

  interface Reply {
    status: number;
    json: any;
    servedBy: string | null;
    headers: Headers;
  }
  async function call(base: string, tool: string, args: Record<string, unknown> = {}, key?: string): Promise<Reply> {
    const res = await fetch(`${base}/v1/tools/${tool}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
      body: JSON.stringify(args),
    });
    return { status: res.status, json: await res.json(), servedBy: res.headers.get('x-served-by'), headers: res.headers };
  }
  async function ok(base: string, tool: string, args: Record<string, unknown> = {}, key?: string): Promise<any> {
    const r = await call(base, tool, args, key);
    if (r.status !== 200) throw new Error(`${tool} on ${base}: ${r.status} ${JSON.stringify(r.json)}`);
    return r.json.data;
  }
  async function agent(base: string, name: string): Promise<{ key: string; id: string; handle: string }> {
    const handle = `${name}-${randomUUID().slice(0, 8)}`;
    const d = await ok(base, 'register_agent', { handle, display_name: name });
    return { key: d.api_key, id: d.agent.agent_id, handle };
  }
  const write = (args: Record<string, unknown>) => ({ ...args, idempotency_key: randomUUID() });
  /** Polls `fn` until `done` holds (at most `ms`); returns the last value and how long it took. */
  async function until<T>(fn: () => Promise<T>, done: (v: T) => boolean, ms = 2000): Promise<{ value: T; elapsedMs: number }> {
    const start = performance.now();
    for (;;) {
      const value = await fn();
      const elapsedMs = performance.now() - start;
      if (done(value) || elapsedMs > ms) return { value, elapsedMs };
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  it('the balancer sends requests to both instances in turn', async () => {
    const served = new Set<string | null>();
    for (let i = 0; i < 4; i++) served.add((await fetch(`${lb}/health`)).headers.get('x-served-by'));
    expect([...served].sort()).toEqual(['k1', 'k2']);
  });

  it('started together on an empty database, both use the same signing keys (the first instance to store them wins)', async () => {
    const [ja, jb] = await Promise.all([a, b].map(async (u) => (await fetch(`${u}/oauth/jwks`)).json()));
    expect(ja).toEqual(jb);
    expect((ja as { keys: unknown[] }).keys).toHaveLength(1);
    // The authorization server's row (the receipt-link secret is another KittyKeys row).
    const rows = await db.prisma.oAuthPayload.count({ where: { type: 'KittyKeys', id: 'auth-server' } });
    expect(rows).toBe(1);
  });

  it('an API key registered on one instance works on the other and through the balancer, over REST and MCP', async () => {
    const me = await agent(a, 'keyed');
    expect((await ok(b, 'get_me', {}, me.key)).agent.handle).toBe(me.handle);
    const r = await call(lb, 'get_me', {}, me.key);
    expect(r.status).toBe(200);
    // MCP is stateless (no session id): initialize, list and call land on different instances.
    const mcp = new Client({ name: 'two-instances', version: '1.0.0' });
    await mcp.connect(
      new StreamableHTTPClientTransport(new URL(`${lb}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${me.key}` } } }),
    );
    try {
      expect((await mcp.listTools()).tools.length).toBeGreaterThan(10);
      for (let i = 0; i < 2; i++) {
        const res = await mcp.callTool({ name: 'get_me', arguments: {} });
        expect(res.isError).toBeFalsy();
        expect((res.structuredContent as { agent: { handle: string } }).agent.handle).toBe(me.handle);
      }
    } finally {
      await mcp.close();
    }
  });

  it('the SDK v2 client pinned to 2026-07-28, through the balancer: its list and calls land on both instances and all succeed', async () => {
    const me = await agent(lb, 'modern');
    const bo = await agent(lb, 'modern-bo');
    /** Every HTTP exchange the client makes: its JSON-RPC method and protocol version header, the instance that answered, the status. */
    const seen: Array<{ method: string; version: string | null; by: string | null; status: number }> = [];
    const recording: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      const method = typeof init?.body === 'string' ? String((JSON.parse(init.body) as { method?: unknown }).method) : String(init?.method);
      seen.push({
        method,
        version: new Headers(init?.headers).get('mcp-protocol-version'),
        by: res.headers.get('x-served-by'),
        status: res.status,
      });
      return res;
    };
    const c = new V2Client({ name: 'two-instances-2026', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await c.connect(
      new V2Transport(new URL(`${lb}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${me.key}` } }, fetch: recording }),
    );
    try {
      expect(c.getNegotiatedProtocolVersion()).toBe('2026-07-28');
      const names = (await c.listTools()).tools.map((t) => t.name);
      expect(names).toEqual(expect.arrayContaining(['get_me', 'create_group', 'create_invite', 'add_expense', 'get_balances']));
      const tool = async (name: string, args: Record<string, unknown>): Promise<any> => {
        const r = await c.callTool({ name, arguments: args });
        expect(r.isError, `${name}: ${JSON.stringify(r.content)}`).toBeFalsy();
        return r.structuredContent;
      };
      expect((await tool('get_me', {})).agent.handle).toBe(me.handle);
      const group = (await tool('create_group', write({ name: 'Modern', currency: 'EUR' }))).group.group_id as string;
      const invite = await tool('create_invite', write({ group_id: group }));
      await ok(lb, 'join_group', write({ code: invite.invite.code }), bo.key);
      for (const amount of [1200, 1000, 800])
        await tool('add_expense', write({ group_id: group, description: `Lunch ${amount}`, amount_minor: amount }));
      // Written on both instances, read on either: every expense is in the balances, split equally between the two.
      const balances = await tool('get_balances', { group_id: group });
      const by = Object.fromEntries(
        (balances.members as Array<{ handle: string; balance_minor: number }>).map((m) => [m.handle, m.balance_minor]),
      );
      expect(by).toEqual({ [me.handle]: 1500, [bo.handle]: -1500 });
      expect((await tool('get_me', {})).agent.handle).toBe(me.handle);
    } finally {
      await c.close();
    }
    expect(
      seen.every((x) => x.status === 200 || x.status === 202),
      JSON.stringify(seen),
    ).toBe(true);
    expect(
      seen.filter((x) => x.method.includes('/')).every((x) => x.version === '2026-07-28'),
      JSON.stringify(seen),
    ).toBe(true);
    const calls = seen.filter((x) => x.method === 'tools/call');
    expect(calls).toHaveLength(8);
    expect(new Set(calls.map((x) => x.by))).toEqual(new Set(['k1', 'k2']));
    console.log(`SDK v2 (2026-07-28) through the balancer: ${seen.map((x) => `${x.method}→${x.by}`).join(', ')}`);
  });

  describe('rate limits are shared (Redis, one key prefix)', () => {
    it('the per-agent limit is reached after the limit of calls in total, spread over both instances', async () => {
      const me = await agent(lb, 'limited');
      const remaining: number[] = [];
      for (let i = 0; i < AGENT_LIMIT; i++) {
        const r = await call(i % 2 ? b : a, 'get_me', {}, me.key);
        expect(r.status, JSON.stringify(r.json)).toBe(200);
        remaining.push(Number(/r=(\d+)/.exec(r.headers.get('ratelimit') ?? '')?.[1]));
      }
      // One counter: the remaining budget falls by one per call whichever instance answers.
      expect(remaining).toEqual(Array.from({ length: AGENT_LIMIT }, (_, i) => AGENT_LIMIT - 1 - i));
      for (const base of [a, b, lb]) {
        const r = await call(base, 'get_me', {}, me.key);
        expect(r.status).toBe(429);
        expect(r.json.error.code).toBe('RATE_LIMITED');
      }
    });

    it('the anonymous, failed-authentication, registration and sign-in limiters count in Redis for both instances', async () => {
      const counter = async (name: string, key: string) => Number((await redis.get(`${prefix}:rl:${name}:${key}`)) ?? 0);
      const ip = '127.0.0.1';
      const before = {
        anon: await counter('anon', ip),
        authfail: await counter('authfail', ip),
        reg_h: await counter('reg_h', ip),
        reg_d: await counter('reg_d', ip),
        auth: await counter('anon', `auth:${ip}`),
      };
      for (const base of [a, b, a, b]) {
        await agent(base, 'counted'); // anonymous call + one registration
        expect((await call(base, 'get_me', {}, `kitty_${'x'.repeat(10)}`)).status).toBe(401); // a refused credential
        expect((await fetch(`${base}/oauth/authorize?client_id=nobody`)).status).toBeLessThan(500); // a sign-in endpoint
      }
      expect(await counter('reg_h', ip)).toBe(before.reg_h + 4);
      expect(await counter('reg_d', ip)).toBe(before.reg_d + 4);
      expect(await counter('authfail', ip)).toBe(before.authfail + 4);
      expect(await counter('anon', ip)).toBeGreaterThanOrEqual(before.anon + 8);
      expect(await counter('anon', `auth:${ip}`)).toBe(before.auth + 4);
    });
  });

  it('per-IP limits count the client behind the balancer (KITTY_TRUST_PROXY), never an address the client claims', async () => {
    /** POST /v1/agents from the loopback address `from`, with an optional forged X-Forwarded-For. */
    const register = (base: string, from: string, forged?: string) =>
      new Promise<number>((resolve, reject) => {
        const body = JSON.stringify({ handle: `ip-${randomUUID().slice(0, 8)}`, display_name: 'IP' });
        const req = http.request(
          `${base}/v1/agents`,
          {
            method: 'POST',
            localAddress: from,
            headers: { 'content-type': 'application/json', ...(forged ? { 'x-forwarded-for': forged } : {}) },
          },
          (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode!));
          },
        );
        req.on('error', reject);
        req.end(body);
      });
    const counter = async (name: string, ip: string) => Number((await redis.get(`${prefix}:rl:${name}:${ip}`)) ?? 0);
    const before = await counter('reg_h', '127.0.0.1');
    expect(await register(lb, '127.0.0.2')).toBe(200);
    expect(await register(lb, '127.0.0.2', '203.0.113.9')).toBe(200); // through the balancer: the forged entry is ignored
    expect(await register(a, '127.0.0.3', '203.0.113.9')).toBe(200); // directly, from an untrusted peer: header ignored
    expect(await counter('reg_h', '127.0.0.2')).toBe(2);
    expect(await counter('anon', '127.0.0.2')).toBe(2);
    expect(await counter('reg_h', '127.0.0.3')).toBe(1);
    expect(await counter('reg_h', '203.0.113.9')).toBe(0);
    expect(await counter('reg_h', '127.0.0.1')).toBe(before); // not the balancer's address
  });

  it('the same idempotency key sent to both instances at once: one effect, the same response on both', async () => {
    const me = await agent(lb, 'idem');
    const group = (await ok(lb, 'create_group', write({ name: 'Idempotent', currency: 'EUR' }), me.key)).group.group_id as string;
    const send = async (base: string, args: Record<string, unknown>): Promise<Reply> => {
      for (;;) {
        const r = await call(base, 'add_expense', args, me.key);
        // The spec's answer while the twin is still running: retry with the same key.
        if (r.status === 409 && ['REQUEST_IN_PROGRESS', 'TRANSIENT_CONFLICT'].includes(r.json.error.code)) {
          await new Promise((res) => setTimeout(res, 50));
          continue;
        }
        return r;
      }
    };
    const N = 10;
    for (let i = 0; i < N; i++) {
      const args = { group_id: group, description: `Taxi ${i}`, amount_minor: 1000 + i, idempotency_key: `same-${i}-${randomUUID()}` };
      const [ra, rb] = await Promise.all([send(a, args), send(b, args)]);
      expect([ra.status, rb.status]).toEqual([200, 200]);
      expect(ra.json.data.expense.expense_id).toBe(rb.json.data.expense.expense_id);
      // Exactly one ran it; the other's answer is the stored one, marked replayed.
      expect([ra.json.data.replayed, rb.json.data.replayed].filter((x) => x === true)).toHaveLength(1);
      const { replayed: _ra, ...dataA } = ra.json.data;
      const { replayed: _rb, ...dataB } = rb.json.data;
      expect(dataA).toEqual(dataB);
    }
    expect(await db.prisma.expense.count({ where: { groupId: group } })).toBe(N);
    const listed = await ok(lb, 'list_expenses', { group_id: group }, me.key);
    expect(listed.expenses).toHaveLength(N);
  });

  it('a write on instance A shows in the inbox summary read on instance B at once', async () => {
    const ann = await agent(a, 'ann');
    const bo = await agent(a, 'bo');
    await ok(a, 'add_contact', write({ handle: bo.handle }), ann.key);
    await ok(a, 'add_contact', write({ handle: ann.handle }), bo.key);
    await ok(b, 'mark_inbox_read', write({ all: true }), ann.key);
    // Ann's summary (nothing unread) is now cached on B.
    for (let i = 0; i < 3; i++) expect((await call(b, 'get_me', {}, ann.key)).json.data.inbox).toBeUndefined();
    await ok(a, 'send_message', write({ to_handle: ann.handle, body: 'dinner at 8?' }), bo.key);
    const seen = await until(
      () => call(b, 'get_me', {}, ann.key),
      (r) => r.json.data.inbox?.unread === 1,
    );
    expect(seen.value.json.data.inbox?.unread).toBe(1);
    expect(seen.elapsedMs).toBeLessThan(1000);
    console.log(`inbox summary on B updated ${seen.elapsedMs.toFixed(0)} ms after the write on A`);
  });

  it("add_expense on B after the group changed on A: B's cached read of the group is not used for the decision", async () => {
    const [ann, bo, cy] = [await agent(a, 'ann'), await agent(a, 'bo'), await agent(a, 'cy')];
    const g = (await ok(a, 'create_group', write({ name: 'Before', currency: 'EUR' }), ann.key)).group.group_id;
    const invite = (await ok(a, 'create_invite', write({ group_id: g, max_uses: 2 }), ann.key)).invite.code;
    await ok(a, 'join_group', write({ code: invite }), bo.key);
    const add = (who: { key: string }, amount_minor: number) =>
      ok(b, 'add_expense', write({ group_id: g, description: 'Taxi', amount_minor }), who.key);
    await add(ann, 200); // B has read the group (two members, named "Before") and keeps it
    await ok(a, 'update_group', write({ group_id: g, name: 'After' }), ann.key);
    await ok(a, 'join_group', write({ code: invite }), cy.key);
    await ok(a, 'update_me', write({ display_name: 'Bo Renamed' }), bo.key);
    const r = await add(bo, 300);
    expect(r.suggested_next.join(' ')).toContain('"After"');
    expect(r.expense.shares.map((s: { handle: string }) => s.handle).sort()).toEqual([ann.handle, bo.handle, cy.handle].sort());
    expect(r.expense.shares.find((s: { handle: string }) => s.handle === bo.handle).display_name).toBe('Bo Renamed');
  });

  it("record_payment on B after the payee changed their payout methods on A: pay_with shows the new ones, not B's cached read", async () => {
    const [ann, bo] = [await agent(a, 'ann'), await agent(a, 'bo')];
    const g = (await ok(a, 'create_group', write({ name: 'Rent', currency: 'EUR' }), ann.key)).group.group_id;
    const invite = (await ok(a, 'create_invite', write({ group_id: g, max_uses: 1 }), ann.key)).invite.code;
    await ok(a, 'join_group', write({ code: invite }), bo.key);
    const methods = (username: string) => write({ payout_methods: [{ type: 'paypal_me', username }] });
    const pay = () =>
      ok(b, 'record_payment', write({ group_id: g, to_handle: ann.handle, amount_minor: 500, allow_overpayment: true }), bo.key);
    await ok(a, 'update_me', methods('annold'), ann.key);
    expect((await pay()).payment.pay_with[0].url).toContain('/annold/'); // B has read the group and keeps it
    await ok(a, 'update_me', methods('annnew'), ann.key);
    expect((await pay()).payment.pay_with[0].url).toContain('/annnew/');
  });

  it('both schedulers running create each due occurrence of a repeating expense exactly once', async () => {
    // Test-only bookkeeping in this test's database: which instance's session inserted each occurrence (informational).
    await db.pool.query(`
      CREATE TABLE occurrence_writers (expense_id uuid PRIMARY KEY, instance text NOT NULL);
      CREATE FUNCTION record_occurrence_writer() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN INSERT INTO occurrence_writers VALUES (NEW.id, current_setting('application_name')); RETURN NULL; END $$;
      CREATE TRIGGER expenses_writer AFTER INSERT ON expenses FOR EACH ROW
        WHEN (NEW.occurrence_index > 0) EXECUTE FUNCTION record_occurrence_writer();`);
    const me = await agent(lb, 'sched');
    const DAYS = 40;
    const start = new Date(Date.now() - DAYS * 86_400_000).toISOString().slice(0, 10);
    const series: string[] = [];
    // Held back (next_date far ahead) until all exist, then released at once for both schedulers
    // (each runs every second; the whole backlog takes either one longer than that).
    // 48 series × 40 days: long enough (seconds) that the second scheduler's tick (every second) falls inside the first's run.
    for (let g = 0; g < 6; g++) {
      const group = (await ok(lb, 'create_group', write({ name: `Rent ${g}`, currency: 'EUR' }), me.key)).group.group_id as string;
      for (let s = 0; s < 8; s++) {
        const e = await ok(
          lb,
          'add_expense',
          write({ group_id: group, description: `Rent ${g}.${s}`, amount_minor: 999, date: start, repeat: { unit: 'day' } }),
          me.key,
        );
        series.push(e.expense.recurrence?.recurrence_id);
        await db.pool.query(`UPDATE recurrences SET next_date = '2999-01-01' WHERE id = $1`, [series.at(-1)]);
      }
    }
    expect(series.every((id) => typeof id === 'string')).toBe(true);
    // While they work, sample which instances have database work under way (only the schedulers do now).
    const busy = new Set<string>();
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const r = await db.pool.query(
          `SELECT DISTINCT application_name AS a FROM pg_stat_activity WHERE application_name IN ('k1', 'k2') AND state <> 'idle'`,
        );
        for (const row of r.rows as Array<{ a: string }>) busy.add(row.a);
        await new Promise((res) => setTimeout(res, 5));
      }
    })();
    await db.pool.query(`UPDATE recurrences SET next_date = $2::date + 1 WHERE id = ANY($1::uuid[])`, [series, start]);
    const done = await until(
      async () =>
        (
          await db.pool.query(`SELECT count(*)::int AS n FROM recurrences WHERE id = ANY($1::uuid[]) AND next_date <= current_date`, [
            series,
          ])
        ).rows[0].n as number,
      (n) => n === 0,
      60_000,
    );
    sampling = false;
    await sampler;
    expect(done.value).toBe(0);
    // Both schedulers were at it during the backlog (one inserting, the other waiting on the same group locks).
    expect([...busy].sort()).toEqual(['k1', 'k2']);
    const rows = (
      await db.pool.query(
        `SELECT recurrence_id, count(*)::int AS n, count(DISTINCT occurrence_index)::int AS distinct_n, min(occurrence_index) AS lo, max(occurrence_index) AS hi
         FROM expenses WHERE recurrence_id = ANY($1::uuid[]) GROUP BY recurrence_id`,
        [series],
      )
    ).rows as Array<{ n: number; distinct_n: number; lo: number; hi: number }>;
    expect(rows).toHaveLength(series.length);
    for (const r of rows) expect(r).toMatchObject({ n: DAYS + 1, distinct_n: DAYS + 1, lo: 0, hi: DAYS });
    // Who inserted them (either may win every series: they walk the backlog in the same order).
    const writers = (await db.pool.query(`SELECT instance, count(*)::int AS n FROM occurrence_writers GROUP BY instance ORDER BY instance`))
      .rows as Array<{ instance: string; n: number }>;
    console.log(`occurrences created per instance: ${writers.map((w) => `${w.instance} ${w.n}`).join(', ')}`);
    expect(writers.reduce((t, w) => t + w.n, 0)).toBe(series.length * DAYS);
    const report = await verifyLedger(db.prisma);
    expect(report.problems).toEqual([]);
    for (const i of cluster.instances) expect(i.stderr()).not.toMatch(/recurring expense failed|scheduler run failed/);
  });

  describe('people and OAuth credentials', () => {
    let cookie: string;
    const account = (base: string) =>
      createTRPCClient<AccountRouter>({ links: [httpLink({ url: `${base}/trpc`, headers: () => ({ cookie, origin: lb }) })] });

    beforeAll(async () => {
      const human = await db.prisma.human.create({ data: { displayName: 'Pat' } });
      cookie = `kitty_session=${(await createSession(db.prisma, human.id, { ip: '127.0.0.1' })).cookieValue}`;
    });

    it('a people session cookie works on both instances', async () => {
      const [sa, sb] = await Promise.all([account(a).session.query(), account(b).session.query()]);
      expect(sa).toEqual(sb);
      expect(JSON.stringify(sa)).toContain('Pat');
    });

    it('a key revoked on the account page of instance A is refused by instance B at once (cached there before)', async () => {
      const made = await account(a).agents.create.mutate({ handle: `kept-${randomUUID().slice(0, 8)}`, display_name: 'Kept' });
      const extra = await account(b).keys.create.mutate({ agent_id: made.agent.agent_id, access: 'read' });
      for (const base of [a, b, a, b]) expect((await call(base, 'get_me', {}, extra.api_key)).status).toBe(200);
      await account(a).keys.revoke.mutate({ key_id: extra.key.key_id });
      const refused = await until(
        () => call(b, 'get_me', {}, extra.api_key),
        (r) => r.status === 401,
      );
      expect(refused.value.status).toBe(401);
      expect(refused.elapsedMs).toBeLessThan(1000);
      console.log(`key revoked on A refused by B after ${refused.elapsedMs.toFixed(0)} ms (cache lifetime 30 s)`);
      // Rotation on A: the new key works on B, the old one keeps its 10-minute grace on both.
      const rotated = await account(a).keys.rotate.mutate({
        key_id: (await account(a).keys.list.query({ agent_id: made.agent.agent_id })).keys[0]!.key_id,
      });
      expect((await call(b, 'get_me', {}, rotated.api_key)).status).toBe(200);
      expect((await call(b, 'get_me', {}, made.api_key)).status).toBe(200);
    });

    it('the OAuth flow crosses instances (signed cookies, consent form), the token works on both, a disconnect on A is refused on B at once', async () => {
      const jar = new CookieJar();
      jar.cookies.set('kitty_session', cookie.split('=')[1]!);
      const reg = await fetch(`${lb}/oauth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          client_name: 'Two-instance client',
          redirect_uris: [REDIRECT],
          token_endpoint_auth_method: 'none',
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
        }),
      });
      const clientId = ((await reg.json()) as { client_id: string }).client_id;
      const verifier = randomBytes(32).toString('base64url');
      const u = new URL(`${lb}/oauth/authorize`);
      for (const [k, v] of Object.entries({
        client_id: clientId,
        response_type: 'code',
        redirect_uri: REDIRECT,
        scope: 'svc:read svc:write offline_access',
        state: 'st',
        resource: `${lb}/mcp`,
        code_challenge: createHash('sha256').update(verifier).digest('base64url'),
        code_challenge_method: 'S256',
      }))
        u.searchParams.set(k, v);
      // Every step through the balancer: round robin sends consecutive steps to different instances.
      const back = await consentOverHttp(lb, jar, u.href, {
        agent: 'new',
        handle: `app-${randomBytes(3).toString('hex')}`,
        displayName: 'App',
      });
      const code = back.searchParams.get('code');
      expect(code, back.href).toBeTruthy();
      const tokenRes = await fetch(`${lb}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code: code!,
          redirect_uri: REDIRECT,
          client_id: clientId,
          code_verifier: verifier,
          resource: `${lb}/mcp`,
        }).toString(),
      });
      const tokens = (await tokenRes.json()) as { access_token: string; refresh_token: string };
      expect(tokenRes.status, JSON.stringify(tokens)).toBe(200);
      for (const base of [a, b, lb, lb]) expect((await call(base, 'get_me', {}, tokens.access_token)).status).toBe(200);
      // A refresh on the other instance than the one that issued the tokens.
      const refreshed = await fetch(`${b}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'refresh_token',
          refresh_token: tokens.refresh_token,
          client_id: clientId,
          resource: `${lb}/mcp`,
        }).toString(),
      });
      expect(refreshed.status).toBe(200);

      const apps = (await account(a).apps.list.query()).apps;
      expect(apps).toHaveLength(1);
      await account(a).apps.disconnect.mutate({ connection_id: apps[0]!.connection_id });
      const refused = await until(
        () => call(b, 'get_me', {}, tokens.access_token),
        (r) => r.status === 401,
      );
      expect(refused.value.status).toBe(401);
      expect(refused.elapsedMs).toBeLessThan(1000);
      console.log(`app disconnected on A refused by B after ${refused.elapsedMs.toFixed(0)} ms (recheck bound 5 s)`);
    });
  });
});
