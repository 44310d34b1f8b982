/**
 * The rows every write into a busy group updates (the recipients' agent rows, for their inbox counters) must not collect
 * MultiXact row versions: an index scan never marks an entry dead when the version it reaches has a MultiXact xmax, so
 * each such dead version stays on the path of every later lookup of that agent until VACUUM (measured: 139 heap pages
 * read per agent lookup after 30 s of 10 writers into one 50-member group; docs/design-notes.md, "Hot rows of a busy
 * group"). A batch's inbox items therefore have their foreign-key check (FOR KEY SHARE on the agent row) run after the
 * batch has locked and updated that row itself, still inside the call.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { createHarness, type Harness } from '../harness.ts';
import { groupWith } from '../ledger-helpers.ts';
import { BOTH_FUNCTIONS, flushTableStats } from './batch-calls.ts';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h?.close();
});

/** Waits (up to 10 s) until some backend waits for a row lock. */
async function untilSomeoneWaits(c: pg.PoolClient): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const r = await c.query(`SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted AND locktype IN ('transactionid', 'tuple')`);
    if (r.rows[0].n > 0) return;
    await new Promise((ok) => setTimeout(ok, 50));
  }
  throw new Error('no backend waited for a row lock');
}

/**
 * Runs `sql` with `doc` seven times, each rolled back (from the sixth call on PostgreSQL may keep one plan for every
 * call of a statement, made without the call's values), reports the table counters, then opens a transaction and runs
 * it once more: pg_stat_xact_user_tables then counts that eighth call alone. The caller rolls it back.
 */
async function eighthCall(c: pg.PoolClient, sql: string, doc: string): Promise<void> {
  for (let i = 0; i < 7; i++) {
    await c.query('BEGIN');
    await c.query(sql, [doc]);
    await c.query('ROLLBACK');
  }
  await flushTableStats(c);
  await c.query('BEGIN');
  await c.query(sql, [doc]);
}

/** A batch document with one inbox item (and its counter change) for `agentId`. */
const inboxDoc = (groupId: string, agentId: string) =>
  JSON.stringify({
    group_id: groupId,
    rows: { inbox_items: [{ id: randomUUID(), agent_id: agentId, kind: 'message', text: 'hi', requires_action: false, priority: 5 }] },
    counters: [{ agent_id: agentId, unread: 1, requires_action: 0 }],
  });

describe("a write's inbox items and the recipients' agent rows", () => {
  it("lock no agent row version another write is updating (the version's xmax stays that write's, not a MultiXact)", async () => {
    const [a, b] = [await h.agent('ha'), await h.agent('hb')];
    const g = await groupWith(h, [a, b]);
    const before = (await h.services.pool.query('SELECT inbox_unread FROM agents WHERE id = $1', [b.agentId])).rows[0].inbox_unread;
    const other = await h.services.pool.connect();
    const observer = await h.services.pool.connect();
    try {
      // Another write holds b's counter, updated and not yet committed.
      await other.query('BEGIN');
      await other.query('UPDATE agents SET inbox_unread = inbox_unread + 1 WHERE id = $1', [b.agentId]);
      const xid = (await other.query(`SELECT (pg_current_xact_id()::text::bigint % 4294967296)::text AS x`)).rows[0].x;
      // add_expense by a: b gets an inbox item and +1 unread; its batch waits for b's agent row.
      const write = h.call(a, 'add_expense', { group_id: g, description: 'Taxi', amount_minor: 2000 });
      await untilSomeoneWaits(observer);
      const seen = (await observer.query('SELECT xmax::text AS x FROM agents WHERE id = $1', [b.agentId])).rows[0].x;
      expect(seen).toBe(xid);
      await other.query('COMMIT');
      await write;
    } finally {
      await other.query('ROLLBACK').catch(() => undefined);
      other.release();
      observer.release();
    }
    const after = (await h.services.pool.query('SELECT inbox_unread FROM agents WHERE id = $1', [b.agentId])).rows[0].inbox_unread;
    expect(after).toBe(before + 2);
  });

  it('refuse an item for an unknown agent when the write commits, and keep nothing of that write', async () => {
    const a = await h.agent('hc');
    const g = await groupWith(h, [a]);
    const c = await h.services.pool.connect();
    const stranger = randomUUID();
    try {
      // The foreign key is checked at COMMIT (after the batch updated the recipients' counters), not inside the call.
      await c.query('BEGIN');
      await c.query('SELECT kitty_apply_batch($1::jsonb)', [inboxDoc(g, stranger)]);
      await expect(c.query('COMMIT')).rejects.toMatchObject({ code: '23503' });
      const kept = await h.services.pool.query('SELECT count(*)::int AS n FROM inbox_items WHERE agent_id = $1', [stranger]);
      expect(kept.rows[0].n).toBe(0);
      // Any other statement's item is checked at COMMIT the same way.
      await c.query('BEGIN');
      await c.query(`INSERT INTO inbox_items (id, agent_id, kind, text) VALUES (gen_random_uuid(), $1, 'message', 'x')`, [stranger]);
      await expect(c.query('COMMIT')).rejects.toMatchObject({ code: '23503' });
    } finally {
      await c.query('ROLLBACK').catch(() => undefined);
      c.release();
    }
  });

  it('find the recipients by primary key: no sequential scan of a large agents table', async () => {
    const [a, b] = [await h.agent('he'), await h.agent('hf')];
    const g = await groupWith(h, [a, b]);
    const c = await h.services.pool.connect();
    try {
      await c.query(
        `INSERT INTO agents (id, handle, display_name, updated_at) SELECT gen_random_uuid(), 'bulk' || n, 'Bulk', now() FROM generate_series(1, 5000) n`,
      );
      await c.query('ANALYZE agents');
      // This transaction's own scan counters (pg_stat_xact_user_tables): joined to the batch's recordset (estimated at
      // 100 rows), the counter lock and update scanned the whole table. A backend keeps counts of earlier transactions
      // there until it reports them (at most once a second): reported first, so only this call is counted.
      await flushTableStats(c);
      await c.query('BEGIN');
      await c.query('SELECT kitty_apply_batch($1::jsonb)', [inboxDoc(g, b.agentId)]);
      const r = await c.query(`SELECT seq_scan::int AS seq, idx_scan::int AS idx FROM pg_stat_xact_user_tables WHERE relname = 'agents'`);
      expect(r.rows[0]).toMatchObject({ seq: 0 });
      expect(r.rows[0].idx).toBeGreaterThan(0);
    } finally {
      await c.query('ROLLBACK').catch(() => undefined);
      c.release();
    }
  });
});

/**
 * A 2,000-member group among 1,500 groups of two, with 2,000 settled payments and one pending payment between `a` and
 * `b`, analyzed; and a payment-shaped batch document on them. The planner's estimate of a group's size is then ~3 rows:
 * a plan by group_id alone (then a filter on agent_id) looks cheaper than one probe per named member, and a
 * (group_id, …) index as good as the payment's primary key.
 */
async function skewedGroupDoc(c: pg.PoolClient): Promise<string> {
  const [a, b] = [await h.agent('ma'), await h.agent('mb')];
  const g = await groupWith(h, [a, b]);
  const handlePrefix = `member-${randomUUID().slice(0, 8)}-`;
  await c.query(
    `WITH n AS (INSERT INTO agents (id, handle, display_name, updated_at)
       SELECT gen_random_uuid(), $2 || n, 'Member', now() FROM generate_series(1, 3000) n RETURNING id)
     INSERT INTO memberships (group_id, agent_id) SELECT $1::uuid, id FROM n WHERE random() < 2.0 / 3`,
    [g, handlePrefix],
  );
  await c.query(
    `WITH s AS (INSERT INTO groups (id, name, currency, created_by, updated_at)
       SELECT gen_random_uuid(), 'small' || n, 'EUR', $1::uuid, now() FROM generate_series(1, 1500) n RETURNING id),
     m AS (SELECT s.id AS group_id, a.id AS agent_id FROM s CROSS JOIN LATERAL
       (SELECT id FROM agents WHERE starts_with(handle, $2) ORDER BY random() LIMIT 2) a)
     INSERT INTO memberships (group_id, agent_id) SELECT group_id, agent_id FROM m ON CONFLICT DO NOTHING`,
    [a.agentId, handlePrefix],
  );
  const paymentId = randomUUID();
  await c.query(
    `INSERT INTO payments (id, group_id, payer_id, payee_id, amount_minor, status, recorded_by, updated_at)
     SELECT CASE WHEN n = 0 THEN $4::uuid ELSE gen_random_uuid() END, $1::uuid, $2::uuid, $3::uuid, 500,
            CASE WHEN n = 0 THEN 'pending' ELSE 'confirmed' END, $2::uuid, now()
     FROM generate_series(0, 2000) n`,
    [g, a.agentId, b.agentId, paymentId],
  );
  await c.query('ANALYZE agents; ANALYZE groups; ANALYZE memberships; ANALYZE payments');
  const ids = [a.agentId, b.agentId].sort();
  return JSON.stringify({
    group_id: g,
    guard: {
      lock: 'update',
      active: ids,
      balances: ids.map((agent_id) => ({ agent_id, balance_minor: '0', balance_pending_minor: '0' })),
      payment: { id: paymentId, from_status: 'pending', to_status: 'confirmed', at: new Date().toISOString() },
    },
    pending: [{ agent_id: ids[0], delta: '500', count: 1 }],
    balances: [
      { agent_id: ids[0], delta: '-500' },
      { agent_id: ids[1], delta: '500' },
    ],
  });
}

/**
 * Runs `sql` with `doc` eight times (`eighthCall`) and returns the member rows and payments the eighth call read (this
 * transaction's own counters, pg_stat_xact_user_tables) and the member rows it changed.
 */
async function rowsReadByEighthCall(c: pg.PoolClient, sql: string, doc: string) {
  await eighthCall(c, sql, doc);
  const r = await c.query(
    `SELECT relname, seq_scan::int AS seq, idx_tup_fetch::int AS fetched FROM pg_stat_xact_user_tables
     WHERE relname IN ('memberships', 'payments') ORDER BY relname`,
  );
  // What the call wrote, read after its counters: the rows found by address were the named members' rows.
  const { group_id } = JSON.parse(doc) as { group_id: string };
  const written = await c.query(
    `SELECT m.balance_minor::text AS balance, m.balance_pending_minor::text AS pending, m.pending_count,
            (SELECT p.status FROM payments p WHERE p.group_id = m.group_id AND p.status <> 'confirmed') AS open_payment
     FROM memberships m WHERE m.group_id = $1::uuid AND (m.balance_minor <> 0 OR m.pending_count <> 0) ORDER BY m.agent_id`,
    [group_id],
  );
  await c.query('ROLLBACK');
  return { read: r.rows as Array<{ relname: string; seq: number; fetched: number }>, written: written.rows };
}

describe("a batch's member rows and payment, in a 2,000-member group among many small ones", () => {
  // Found by group_id, the guard's checks and locks and the balance lock and update each read every member row of
  // the group (9,077 rows on the plans of 20261127000000), and the payment's update every payment of the group.
  it.each(BOTH_FUNCTIONS)('are found by primary key by %s: its two member rows and its payment, not the group', async (_name, sql) => {
    const c = await h.services.pool.connect();
    try {
      const { read, written } = await rowsReadByEighthCall(c, sql, await skewedGroupDoc(c));
      expect(written).toEqual([
        { balance: '-500', pending: '500', pending_count: 1, open_payment: null },
        { balance: '500', pending: '0', pending_count: 0, open_payment: null },
      ]);
      const [memberships, payments] = read;
      expect(memberships).toMatchObject({ relname: 'memberships', seq: 0 });
      expect(memberships!.fetched).toBeLessThan(20);
      expect(payments).toMatchObject({ relname: 'payments', seq: 0 });
      expect(payments!.fetched).toBeLessThan(5);
    } finally {
      await c.query('ROLLBACK').catch(() => undefined);
      c.release();
    }
  });
});

describe('the member rows of a write by an agent who is a member of thousands of groups', () => {
  // Found in the one-group bench row: its payer had created 16,586 groups. With the statistics taken while every agent
  // was in about one group (agent_id looked unique), both indexes that start with agent_id or with (group_id, agent_id)
  // were estimated at one row, and the lock of the payer's member row took the (agent_id, left_at) index, then filtered
  // its 16,586 memberships by group: 18 ms per write, the group's member rows held all that time (98 writes/s).
  it.each(BOTH_FUNCTIONS)("are found by their whole key by %s, not among the agent's memberships", async (_name, sql) => {
    const [a, b] = [await h.agent('busy'), await h.agent('quiet')];
    const g = await groupWith(h, [a, b]);
    const c = await h.services.pool.connect();
    try {
      await c.query('ANALYZE memberships');
      // Groups `a` created since the statistics were taken (fewer than autovacuum's 10% of the table would re-analyze).
      await c.query(
        `WITH s AS (INSERT INTO groups (id, name, currency, created_by, updated_at)
           SELECT gen_random_uuid(), 'made' || n, 'EUR', $1::uuid, now() FROM generate_series(1, 3000) n RETURNING id)
         INSERT INTO memberships (group_id, agent_id, role) SELECT id, $1::uuid, 'admin' FROM s`,
        [a.agentId],
      );
      const ids = [a.agentId, b.agentId].sort();
      const doc = JSON.stringify({
        group_id: g,
        guard: { lock: 'share', active: ids },
        balances: [
          { agent_id: a.agentId, delta: '300' },
          { agent_id: b.agentId, delta: '-300' },
        ],
      });
      await eighthCall(c, sql, doc);
      const r = await c.query(
        `SELECT seq_scan::int AS seq, idx_tup_fetch::int AS fetched FROM pg_stat_xact_user_tables WHERE relname = 'memberships'`,
      );
      expect(r.rows[0].seq).toBe(0);
      expect(r.rows[0].fetched).toBeLessThan(20);
      const balances = await c.query(
        `SELECT balance_minor::text AS balance FROM memberships WHERE group_id = $1::uuid ORDER BY (agent_id = $2::uuid) DESC`,
        [g, a.agentId],
      );
      expect(balances.rows).toEqual([{ balance: '300' }, { balance: '-300' }]);
    } finally {
      await c.query('ROLLBACK').catch(() => undefined);
      c.release();
    }
  });
});

describe("the open items a write resolves, among many other agents' open items", () => {
  // Joined to the documents' recordsets (estimated at 100 × 100 rows), the lookup of the items a resolve names in
  // kitty_apply_batches_quiet became a hash join over a sequential scan of inbox_items: 62-166 ms per combined
  // write with 85,000 items in the table (the confirm_payment bench, auto_explain).
  // With statistics taken before one agent's open items grew, the other conditions of the lookup (requires_action,
  // resolved_at) chose an agent-leading index in writes sent together: 40,005 items read to resolve one.
  it.each(BOTH_FUNCTIONS.flatMap(([name, sql]) => (['after', 'before'] as const).map((when) => [name, when, sql] as const)))(
    'are found by the (entity_type, entity_id) index by %s, statistics taken %s the items were added',
    async (_name, when, sql) => {
      const [a, b] = [await h.agent('ra'), await h.agent('rb')];
      const g = await groupWith(h, [a, b]);
      const c = await h.services.pool.connect();
      const entityId = randomUUID();
      try {
        if (when === 'before') await c.query('ANALYZE inbox_items');
        await c.query(
          `INSERT INTO inbox_items (id, agent_id, kind, text, requires_action, priority, entity_type, entity_id, group_id)
         SELECT gen_random_uuid(), $1::uuid, 'payment_to_confirm', 'Confirm', true, 1, 'payment',
                CASE WHEN n = 0 THEN $3 ELSE gen_random_uuid()::text END, $2::uuid
         FROM generate_series(0, 20000) n`,
          [b.agentId, g, entityId],
        );
        if (when === 'after') await c.query('ANALYZE inbox_items');
        const doc = JSON.stringify({
          group_id: g,
          guard: { lock: 'share' },
          resolve: [{ entity_type: 'payment', entity_id: entityId, resolution: 'confirmed by @ra', agent_id: b.agentId }],
        });
        await eighthCall(c, sql, doc);
        const r = await c.query(
          `SELECT seq_scan::int AS seq, idx_tup_fetch::int AS fetched FROM pg_stat_xact_user_tables WHERE relname = 'inbox_items'`,
        );
        const resolved = await c.query(`SELECT resolution FROM inbox_items WHERE entity_id = $1`, [entityId]);
        expect(resolved.rows).toEqual([{ resolution: 'confirmed by @ra' }]);
        expect(r.rows[0]).toMatchObject({ seq: 0 });
        expect(r.rows[0].fetched).toBeLessThan(20);
      } finally {
        await c.query('ROLLBACK').catch(() => undefined);
        await c.query('DELETE FROM inbox_items WHERE group_id = $1', [g]);
        c.release();
      }
    },
  );
});

describe('the payout methods a write answers with, among many agents', () => {
  // Joined to the guard's recordset (estimated at 100 rows), the agents could be found by a scan of the whole table.
  it('are compared on the agents found by primary key', async () => {
    const [a, b] = [await h.agent('pa'), await h.agent('pb')];
    const g = await groupWith(h, [a, b]);
    const c = await h.services.pool.connect();
    try {
      await c.query(
        `INSERT INTO agents (id, handle, display_name, updated_at)
         SELECT gen_random_uuid(), 'payout-' || $1 || n, 'Bulk', now() FROM generate_series(1, 3000) n`,
        [randomUUID().slice(0, 8)],
      );
      await c.query('ANALYZE agents');
      const ids = [a.agentId, b.agentId].sort();
      const doc = JSON.stringify({
        group_id: g,
        guard: { lock: 'share', payout_methods: ids.map((agent_id) => ({ agent_id, md5: null })) },
      });
      await eighthCall(c, 'SELECT kitty_apply_batch($1::jsonb)', doc);
      const r = await c.query(
        `SELECT seq_scan::int AS seq, idx_tup_fetch::int AS fetched FROM pg_stat_xact_user_tables WHERE relname = 'agents'`,
      );
      expect(r.rows[0]).toMatchObject({ seq: 0 });
      expect(r.rows[0].fetched).toBeLessThan(10);
      await c.query('ROLLBACK');
      // A stored method that the read did not see refuses the write (the guard still compares).
      await c.query(`UPDATE agents SET payout_methods = '[{"type":"iban"}]'::jsonb WHERE id = $1`, [b.agentId]);
      await c.query('BEGIN');
      await expect(c.query('SELECT kitty_apply_batch($1::jsonb)', [doc])).rejects.toMatchObject({ code: 'KB001' });
    } finally {
      await c.query('ROLLBACK').catch(() => undefined);
      c.release();
    }
  });
});
