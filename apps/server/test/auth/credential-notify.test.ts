/**
 * Credential change notifications (credential-notify.ts): a key deleted by any database session
 * (another instance) is refused here at once, and when the LISTEN connection is lost — so a
 * notification may be missed — the caches are emptied and the connection comes back.
 */
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../server-harness.ts';

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

/** Polls get_me with `key` until it answers `status` (at most `ms`); returns the last status and the time taken. */
async function statusWithin(key: string, status: number, ms: number): Promise<{ status: number; elapsedMs: number }> {
  const start = performance.now();
  for (;;) {
    const r = await s.http('/v1/tools/get_me', { body: {}, apiKey: key });
    const elapsedMs = performance.now() - start;
    if (r.status === status || elapsedMs > ms) return { status: r.status, elapsedMs };
    await new Promise((res) => setTimeout(res, 50));
  }
}

const listeners = async () =>
  (
    await sql.query(
      `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%kitty_credentials%' AND pid <> pg_backend_pid()`,
    )
  ).rows as Array<{ pid: number }>;

it('a key deleted by another database session is refused at once, though this instance had it cached', async () => {
  const a = await s.agent('cached');
  expect((await s.http('/v1/tools/get_me', { body: {}, apiKey: a.apiKey })).status).toBe(200);
  await sql.query('DELETE FROM api_keys WHERE agent_id = $1', [a.agentId]);
  const r = await statusWithin(a.apiKey, 401, 1000);
  expect(r.status).toBe(401);
});

it('after losing its LISTEN connection the instance empties its caches and listens again', async () => {
  const a = await s.agent('reconnect');
  expect((await s.http('/v1/tools/get_me', { body: {}, apiKey: a.apiKey })).status).toBe(200);
  const before = await listeners();
  expect(before).toHaveLength(1);
  await sql.query('SELECT pg_terminate_backend($1)', [before[0]!.pid]);
  // Revoked while nobody listens: the notification is lost; the reconnect must not trust the cache.
  await sql.query('DELETE FROM api_keys WHERE agent_id = $1', [a.agentId]);
  const r = await statusWithin(a.apiKey, 401, 5000);
  expect(r.status).toBe(401);
  expect(r.elapsedMs).toBeLessThan(5000); // well inside the 30 s cache lifetime
  let after = await listeners();
  for (let i = 0; i < 100 && after.length === 0; i++) {
    await new Promise((res) => setTimeout(res, 50)); // reconnects after 0.5 s (then backs off)
    after = await listeners();
  }
  expect(after).toHaveLength(1);
  expect(after[0]!.pid).not.toBe(before[0]!.pid);
});
