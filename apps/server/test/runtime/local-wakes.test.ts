/**
 * Wake-ups delivered inside the process while no other instance listens (runtime/local-wakes.ts): one instance sends
 * no wake-up statement and its caches and readers still wake at once; a LISTEN session of another instance (any
 * version) turns that off within 1.5 s; a listener that starts while another instance delivers to itself is trusted
 * only once that instance has seen it, and from then on hears every wake-up.
 */
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createKittyClient } from '@kitty/client';
import { startKitty, type RunningKitty } from '../../src/index.ts';
import { TRUST_DELAY_MS } from '../../src/runtime/pg-listener.ts';
import { FRESH_MS } from '../../src/runtime/local-wakes.ts';
import { QUIET_TEST_CONFIG, groupOfTwo, startTestServer, type TestServer } from '../server-harness.ts';
import { eventually, sleep } from '../eventually.ts';

let s: TestServer;
/** Names of the prepared statements the instance's pool ran with pool.query (wake-ups, reads; not applyBatch's client). */
const statements: string[] = [];
beforeAll(async () => {
  s = await startTestServer();
  const pool = s.kitty.services.pool as unknown as { query: (...a: unknown[]) => unknown };
  const query = pool.query.bind(pool);
  pool.query = (...a: unknown[]) => {
    const q = a[0] as { name?: string };
    if (q && typeof q === 'object' && q.name) statements.push(q.name);
    return query(...a);
  };
});
afterAll(async () => {
  await s?.close();
});

/** ann, bo and a group of the two; ann's inbox read and its summary cached on `s`. */
async function pair() {
  const { ann, bo, g } = await groupOfTwo(s);
  await ann.client.mark_inbox_read({ all: true });
  expect((await ann.client.get_me()).inbox).toBeUndefined();
  return { ann, bo, g };
}

it('one instance delivers its wake-ups to itself: no wake-up statement, and the cached summary is dropped before the answer', async () => {
  const { ann, bo, g } = await pair();
  // The first write after a quiet spell sends through PostgreSQL and starts a look; the next ones are local.
  await bo.client.add_expense({ group_id: g, description: 'Warm-up', amount_minor: 100 });
  await sleep(100);
  await ann.client.mark_inbox_read({ all: true });
  expect((await ann.client.get_me()).inbox).toBeUndefined();
  const hits = s.kitty.inboxCache.stats.hits;
  expect((await ann.client.get_me()).inbox).toBeUndefined();
  expect(s.kitty.inboxCache.stats.hits).toBe(hits + 1); // cached

  statements.length = 0;
  const delivered = s.kitty.localWakes.stats.delivered;
  await bo.client.add_expense({ group_id: g, description: 'Bread', amount_minor: 350 });
  // No wait: the invalidation happened in the write's own request.
  expect((await ann.client.get_me()).inbox?.unread).toBe(1);
  expect(statements).not.toContain('kitty_wakes'); // (the same spy sees kitty_wakes in the next test)
  expect(s.kitty.localWakes.stats.delivered).toBeGreaterThan(delivered);

  // An event reader waiting on this instance is woken by the local delivery too.
  let since: string | null = null;
  for (let page = await ann.client.list_events({}); page.events.length; page = await ann.client.list_events({ after: since }))
    since = page.next_cursor;
  const waiting = ann.client.list_events({ after: since, wait_seconds: 10 });
  await sleep(100);
  const started = Date.now();
  await bo.client.add_expense({ group_id: g, description: 'Milk', amount_minor: 120 });
  const woken = await waiting;
  expect(woken.events.map((e) => e.type)).toContain('expense.created');
  expect(Date.now() - started).toBeLessThan(2000); // not the 5 s safety re-read
  expect(statements).not.toContain('kitty_wakes');
});

it('a LISTEN session of another instance (any version) gets every wake-up within 1.5 s of listening', async () => {
  const { ann, bo, g } = await pair();
  await bo.client.add_expense({ group_id: g, description: 'Warm-up', amount_minor: 100 });
  await sleep(100);
  const older = new pg.Client({ connectionString: s.databaseUrl });
  await older.connect();
  try {
    const heard: Array<{ channel: string; payload: string }> = [];
    older.on('notification', (n) => heard.push({ channel: n.channel, payload: n.payload ?? '' }));
    await older.query('LISTEN kitty_events; LISTEN kitty_inbox');
    // A write keeps the instance looking; within FRESH_MS its look has found the new session.
    await bo.client.add_expense({ group_id: g, description: 'During the look', amount_minor: 100 });
    await sleep(FRESH_MS + 100);
    expect(s.kitty.localWakes.local()).toBe(false);
    statements.length = 0;
    heard.length = 0;
    for (let i = 0; i < 5; i++) await bo.client.add_expense({ group_id: g, description: `Round ${i}`, amount_minor: 100 + i });
    expect(statements.filter((n) => n === 'kitty_wakes').length).toBeGreaterThan(0);
    await eventually(
      async () => heard.filter((n) => n.channel === 'kitty_events').length,
      (n) => n >= 5,
      2000,
    );
    const events = heard.filter((n) => n.channel === 'kitty_events');
    expect(events).toHaveLength(5);
    for (const e of events) expect(new Set(e.payload.split(','))).toEqual(new Set([ann.agentId, bo.agentId]));
    expect(heard.filter((n) => n.channel === 'kitty_inbox').map((n) => n.payload)).toContain(ann.agentId);
  } finally {
    await older.end();
  }
  // Alone again: after the next look, wake-ups are local once more.
  await bo.client.add_expense({ group_id: g, description: 'After', amount_minor: 100 });
  await eventually(
    async () => {
      await bo.client.add_expense({ group_id: g, description: 'Again', amount_minor: 100 });
      return s.kitty.localWakes.local();
    },
    (v) => v,
    3000,
  );
  expect(s.kitty.localWakes.local()).toBe(true);
});

it('an instance that starts beside one delivering to itself trusts its listener only once it has been seen, then hears every wake-up', async () => {
  const { ann, bo, g } = await pair();
  await bo.client.add_expense({ group_id: g, description: 'Warm-up', amount_minor: 100 });
  await sleep(100);
  await bo.client.add_expense({ group_id: g, description: 'Local', amount_minor: 100 });
  expect(s.kitty.localWakes.local()).toBe(true);

  let second: RunningKitty | undefined;
  try {
    const started = Date.now();
    second = await startKitty({ ...QUIET_TEST_CONFIG, databaseUrl: s.databaseUrl });
    // It found another listener: not trusted yet, so its caches are bypassed (nothing cached that a local delivery
    // on the first instance could leave stale).
    expect(second.listener.listening).toBe(false);
    expect(second.localWakes.local()).toBe(false);
    const annOnSecond = createKittyClient({ baseUrl: second.url, apiKey: ann.apiKey });
    await ann.client.mark_inbox_read({ all: true });
    const misses = second.inboxCache.stats.misses;
    const hits = second.inboxCache.stats.hits;
    await annOnSecond.get_me();
    await annOnSecond.get_me();
    expect(second.inboxCache.stats.hits).toBe(hits);
    expect(second.inboxCache.stats.misses).toBe(misses + 2);
    // Meanwhile the first instance keeps writing; its look finds the second listener.
    while (!second.listener.listening) {
      await bo.client.add_expense({ group_id: g, description: 'Meanwhile', amount_minor: 100 });
      await sleep(50);
    }
    expect(Date.now() - started).toBeGreaterThanOrEqual(TRUST_DELAY_MS - 50);
    expect(s.kitty.localWakes.local()).toBe(false);

    // Trusted: the second instance caches ann's summary, and a write on the first drops it there at once.
    await ann.client.mark_inbox_read({ all: true });
    await eventually(
      () => annOnSecond.get_me(),
      (r) => r.inbox === undefined,
      2000,
    );
    const cachedHits = second.inboxCache.stats.hits;
    expect((await annOnSecond.get_me()).inbox).toBeUndefined();
    expect(second.inboxCache.stats.hits).toBe(cachedHits + 1);
    await bo.client.add_expense({ group_id: g, description: 'Seen there', amount_minor: 100 });
    const after = await eventually(
      () => annOnSecond.get_me(),
      (r) => r.inbox?.unread === 1,
      1000,
    );
    expect(after.inbox?.unread).toBe(1);
  } finally {
    await second?.close();
  }
});
