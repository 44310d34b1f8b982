/**
 * The batched writes run on generic plans that each backend makes once, at its first call, and keeps until the tables'
 * statistics change. A plan made while the tables were small must not read a table sequentially once it has grown:
 * in the one-group bench row, backends that had planned early read all ~100,000 memberships on every write (the
 * member-row update by address, ctid = ANY (...), planned as a sequential scan), 15-30 ms per write with the group's
 * member rows locked. This file has its own database, so its tables are as small as a new deployment's when the
 * backends below plan.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
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

/** A write moving 300 minor units from `b` to `a`, with one inbox item and its counter for `b`. */
const moveDoc = (groupId: string, a: string, b: string) =>
  JSON.stringify({
    group_id: groupId,
    guard: { lock: 'share', active: [a, b].sort() },
    balances: [
      { agent_id: a, delta: '300' },
      { agent_id: b, delta: '-300' },
    ],
    rows: { inbox_items: [{ id: randomUUID(), agent_id: b, kind: 'message', text: 'hi', requires_action: false, priority: 5 }] },
    counters: [{ agent_id: b, unread: 1, requires_action: 0 }],
  });

describe('the batched writes, planned while the tables were small', () => {
  it('read no table sequentially after memberships, groups and agents have grown (no ANALYZE since)', async () => {
    const [a, b] = [await h.agent('small-a'), await h.agent('small-b')];
    const g = await groupWith(h, [a, b]);
    const connectionString = h.services.pool.options.connectionString;
    // One new backend per function: each makes its plans now, on the first calls, while the tables are small.
    const backends = BOTH_FUNCTIONS.map(([name, sql]) => ({ name, sql, c: new pg.Client({ connectionString }) }));
    try {
      for (const { sql, c } of backends) {
        await c.connect();
        for (let i = 0; i < 7; i++) {
          await c.query('BEGIN');
          await c.query(sql, [moveDoc(g, a.agentId, b.agentId)]);
          await c.query('ROLLBACK');
        }
      }
      // The tables grow by thousands of rows (as the bench's create_group rows grow them), committed, not analyzed.
      await h.services.pool.query(
        `WITH ag AS (
           INSERT INTO agents (id, handle, display_name, updated_at)
           SELECT gen_random_uuid(), 'grown-' || $2 || '-' || n, 'Grown', now() FROM generate_series(1, 5000) n RETURNING id),
         gr AS (
           INSERT INTO groups (id, name, currency, created_by, updated_at)
           SELECT gen_random_uuid(), 'grown', 'EUR', $1::uuid, now() FROM generate_series(1, 5000) RETURNING id)
         INSERT INTO memberships (group_id, agent_id, role)
         SELECT gr.id, ag.id, 'admin' FROM (SELECT id, row_number() OVER () AS n FROM gr) gr
           JOIN (SELECT id, row_number() OVER () AS n FROM ag) ag USING (n)`,
        [a.agentId, randomUUID().slice(0, 8)],
      );
      for (const { name, sql, c } of backends) {
        // This backend's table counters reported, so the transaction below counts its own call alone.
        await flushTableStats(c);
        await c.query('BEGIN');
        await c.query(sql, [moveDoc(g, a.agentId, b.agentId)]);
        const r = await c.query(
          `SELECT relname, seq_scan::int AS seq, coalesce(idx_tup_fetch, 0)::int AS fetched FROM pg_stat_xact_user_tables
           WHERE relname IN ('memberships', 'groups', 'agents') ORDER BY relname`,
        );
        expect({ name, read: r.rows }).toEqual({
          name,
          read: [
            { relname: 'agents', seq: 0, fetched: expect.any(Number) },
            { relname: 'groups', seq: 0, fetched: expect.any(Number) },
            { relname: 'memberships', seq: 0, fetched: expect.any(Number) },
          ],
        });
        for (const row of r.rows) expect(row.fetched).toBeLessThan(20);
        // The write itself happened: the two member rows moved, the other member rows did not.
        const balances = await c.query(
          `SELECT count(*) FILTER (WHERE balance_minor <> 0)::int AS moved, sum(balance_minor)::text AS total
           FROM memberships WHERE group_id = $1::uuid`,
          [g],
        );
        expect(balances.rows).toEqual([{ moved: 2, total: '0' }]);
        await c.query('ROLLBACK');
      }
    } finally {
      for (const { c } of backends) await c.end().catch(() => undefined);
    }
  });
});
