/**
 * The instance's one LISTEN connection (pg-listener.ts): both channels (`kitty_inbox`,
 * `kitty_credentials`) on a single PostgreSQL connection, and losing that connection degrades
 * both caches (notifications sent meanwhile are lost, yet nothing stale is served) until it is
 * back, after which both are invalidated by notification again.
 */
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../server-harness.ts';
import { eventually } from '../eventually.ts';

let s: TestServer;
let sql: pg.Client;

beforeAll(async () => {
  s = await startTestServer();
  sql = new pg.Client({ connectionString: s.databaseUrl });
  await sql.connect();
});
afterAll(async () => {
  await sql?.end();
  await s?.close();
});

/** Every other connection to the test database whose last statement was a LISTEN. */
const listenConnections = async () =>
  (
    await sql.query(
      `SELECT pid, query FROM pg_stat_activity WHERE datname = current_database() AND query ILIKE 'LISTEN%' AND pid <> pg_backend_pid()`,
    )
  ).rows as Array<{ pid: number; query: string }>;

const getMeStatus = async (apiKey: string) => (await s.http('/v1/tools/get_me', { body: {}, apiKey })).status;

it('holds exactly one LISTEN connection for both channels', async () => {
  const rows = await listenConnections();
  expect(rows).toHaveLength(1);
  expect(rows[0]!.query).toContain('kitty_inbox');
  expect(rows[0]!.query).toContain('kitty_credentials');
});

it('killing that connection degrades both caches (nothing stale served) and restores both once it is back', async () => {
  const ann = await s.agent('ann');
  const bo = await s.agent('bo');
  const revokedWhileDown = await s.agent('gone');
  const revokedAfter = await s.agent('later');
  await ann.client.add_contact({ handle: bo.handle });
  await bo.client.add_contact({ handle: ann.handle });
  await ann.client.mark_inbox_read({ all: true });
  // Both caches warm: ann's empty inbox summary, the two keys.
  expect((await ann.client.get_me()).inbox).toBeUndefined();
  const hits = s.kitty.inboxCache.stats.hits;
  expect((await ann.client.get_me()).inbox).toBeUndefined();
  expect(s.kitty.inboxCache.stats.hits).toBe(hits + 1);
  expect(await getMeStatus(revokedWhileDown.apiKey)).toBe(200);

  const [before] = await listenConnections();
  await sql.query('SELECT pg_terminate_backend($1)', [before!.pid]);
  // Changes while nobody listens (the instance reconnects after 0.5 s): their notifications are lost.
  await bo.client.send_message({ to_handle: ann.handle, body: 'sent while the listener was down' });
  await sql.query('DELETE FROM api_keys WHERE agent_id = $1', [revokedWhileDown.agentId]);

  // Degraded, not stale: the inbox cache was emptied, the credential caches too.
  const inbox = await eventually(
    () => ann.client.get_me(),
    (r) => r.inbox?.unread === 1,
    5000,
  );
  expect(inbox.inbox?.unread).toBe(1);
  expect(
    await eventually(
      () => getMeStatus(revokedWhileDown.apiKey),
      (st) => st === 401,
      5000,
    ),
  ).toBe(401);

  // Back: one new LISTEN connection for both channels.
  const after = await eventually(listenConnections, (r) => r.length === 1 && r[0]!.pid !== before!.pid, 5000);
  expect(after).toHaveLength(1);
  expect(after[0]!.pid).not.toBe(before!.pid);
  expect(after[0]!.query).toContain('kitty_inbox');
  expect(after[0]!.query).toContain('kitty_credentials');
  // Still nothing stale once listening again (what was cached before the loss was dropped).
  expect((await ann.client.get_me()).inbox?.unread).toBe(1);
  expect(await getMeStatus(revokedWhileDown.apiKey)).toBe(401);

  // Restored: the inbox cache serves hits again and is invalidated by notification again.
  await ann.client.mark_inbox_read({ all: true });
  await eventually(
    () => ann.client.get_me(),
    (r) => r.inbox === undefined,
    3000,
  );
  const hits2 = s.kitty.inboxCache.stats.hits;
  expect((await ann.client.get_me()).inbox).toBeUndefined();
  expect(s.kitty.inboxCache.stats.hits).toBe(hits2 + 1);
  await bo.client.send_message({ to_handle: ann.handle, body: 'sent once it was back' });
  const again = await eventually(
    () => ann.client.get_me(),
    (r) => r.inbox?.unread === 1,
    3000,
  );
  expect(again.inbox?.unread).toBe(1);
  // …and the credential caches: a key cached after the reconnect is refused at once once deleted
  // (without the notification it would stay valid for the key cache's 30 s).
  expect(await getMeStatus(revokedAfter.apiKey)).toBe(200);
  await sql.query('DELETE FROM api_keys WHERE agent_id = $1', [revokedAfter.agentId]);
  expect(
    await eventually(
      () => getMeStatus(revokedAfter.apiKey),
      (st) => st === 401,
      1000,
    ),
  ).toBe(401);
});
