/**
 * The inbox summary cache: hits without a database read, and invalidation by PostgreSQL
 * NOTIFY across two server instances sharing one database.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createKittyClient } from '@kitty/client';
import { startKitty, type RunningKitty } from '../../src/index.ts';
import { startTestServer, type TestServer } from '../server-harness.ts';
import { eventually } from '../eventually.ts';

let s: TestServer;
let second: RunningKitty;
beforeAll(async () => {
  s = await startTestServer();
  // A second instance on the same database, as behind a load balancer.
  const dbUrl = (s.kitty.services.pool as unknown as { options: { connectionString: string } }).options.connectionString;
  second = await startKitty({
    databaseUrl: dbUrl,
    port: 0,
    logLevel: 'silent',
    scheduler: false,
    rateLimitPoints: 100_000,
    rateLimitAnonPoints: 100_000,
  });
});
afterAll(async () => {
  await second?.close();
  await s?.close();
});

it('serves repeated reads from the cache and drops it when another instance changes the inbox', async () => {
  const ann = await s.agent('ann');
  const bo = await s.agent('bo');
  await ann.client.add_contact({ handle: bo.handle });
  await bo.client.add_contact({ handle: ann.handle }); // ann: "bo added you" → unread 1
  await ann.client.mark_inbox_read({ all: true });

  const first = await ann.client.get_me();
  expect(first.inbox).toBeUndefined();
  const hits = s.kitty.inboxCache.stats.hits;
  await ann.client.get_me();
  await ann.client.get_me();
  expect(s.kitty.inboxCache.stats.hits).toBeGreaterThanOrEqual(hits + 2);

  // Bo writes through the OTHER instance; ann's cached summary on this one must not stay stale.
  const boOnSecond = createKittyClient({ baseUrl: second.url, apiKey: bo.apiKey });
  await boOnSecond.send_message({ to_handle: ann.handle, body: 'dinner at 8?' });
  const after = await eventually(
    () => ann.client.get_me(),
    (r) => r.inbox?.unread === 1,
  );
  expect(after.inbox?.unread).toBe(1);
  expect(after.inbox?.top[0]).toContain(bo.handle);

  // Ann's own write shows at once (write tools read fresh), and later reads agree.
  const marked = await ann.client.mark_inbox_read({ all: true });
  expect(marked.inbox).toBeUndefined();
  const settled = await eventually(
    () => ann.client.get_me(),
    (r) => r.inbox === undefined,
  );
  expect(settled.inbox).toBeUndefined();
});
