/**
 * No hot write reads a whole large table. Each batched write the hot tools send (add_expense, record_payment pending
 * and confirmed, confirm/reject/cancel_payment, create_group) is captured on its way to the database and run there
 * first eight times in transactions that are rolled back, alone (kitty_apply_batch_quiet) and as writes sent together
 * (kitty_apply_batches_quiet): from the sixth call on PostgreSQL may keep one plan for a statement, made without the
 * call's values, and both functions always do. The eighth call's own sequential scans (pg_stat_xact_user_tables)
 * must not include a table holding more than 1,000 rows. Then the write is sent as it was.
 *
 * This class of fault was found twice in the hot-write bench: a resolve's open items found by a hash join over all
 * of inbox_items in writes sent together (62-166 ms each), and member rows found by group alone.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pool } from 'pg';
import { createHarness, type Harness } from '../harness.ts';
import { groupWith } from '../ledger-helpers.ts';
import { poolWithQuery, statementName } from '../pool-proxy.ts';

let h: Harness;
let realPool: Pool;
beforeAll(async () => {
  h = await createHarness();
  realPool = h.services.pool;
});
afterAll(async () => {
  h.services.pool = realPool;
  await h?.close();
});

/** What one captured write's eighth call scanned sequentially, alone and sent together with others. */
interface Scans {
  tool: string;
  fn: 'alone' | 'together';
  tables: string[];
}

const ALONE = 'SELECT kitty_apply_batch_quiet($1::jsonb)';
const TOGETHER = 'SELECT kitty_apply_batches_quiet(jsonb_build_array($1::jsonb))';

/** Tables an agent's write may meet large in a real database, made large here, then analyzed. */
async function fillTables(pool: Pool, groupId: string, agentId: string): Promise<void> {
  await pool.query(
    `INSERT INTO agents (id, handle, display_name, updated_at)
     SELECT gen_random_uuid(), 'scan-' || n, 'Bulk', now() FROM generate_series(1, 3000) n`,
  );
  await pool.query(
    `WITH s AS (INSERT INTO groups (id, name, currency, created_by, updated_at)
       SELECT gen_random_uuid(), 'small' || n, 'EUR', $1::uuid, now() FROM generate_series(1, 1500) n RETURNING id),
     m AS (SELECT s.id AS group_id, a.id AS agent_id FROM s CROSS JOIN LATERAL
       (SELECT id FROM agents WHERE starts_with(handle, 'scan-') ORDER BY random() LIMIT 2) a)
     INSERT INTO memberships (group_id, agent_id) SELECT group_id, agent_id FROM m ON CONFLICT DO NOTHING`,
    [agentId],
  );
  await pool.query(
    `INSERT INTO payments (id, group_id, payer_id, payee_id, amount_minor, status, recorded_by, updated_at)
     SELECT gen_random_uuid(), $1::uuid, $2::uuid, $2::uuid, 100, 'confirmed', $2::uuid, now() FROM generate_series(1, 3000)`,
    [groupId, agentId],
  );
  await pool.query(
    `INSERT INTO inbox_items (id, agent_id, kind, text, requires_action, priority, entity_type, entity_id)
     SELECT gen_random_uuid(), a.id, 'payment_to_confirm', 'Confirm', true, 1, 'payment', gen_random_uuid()::text
     FROM generate_series(1, 7) n, agents a WHERE starts_with(a.handle, 'scan-')`,
  );
  await pool.query('ANALYZE');
}

describe('hot writes on large tables', () => {
  it('scan no table of more than 1,000 rows, alone or sent together', async () => {
    const [ana, bo, cy] = [await h.agent('sa'), await h.agent('sb'), await h.agent('sc')];
    const g = await groupWith(h, [ana, bo, cy]);
    await fillTables(realPool, g, ana.agentId);
    const large = new Set(
      (
        await realPool.query<{ relname: string }>(
          `SELECT relname FROM pg_class WHERE relkind = 'r' AND relnamespace = 'public'::regnamespace AND reltuples > 1000`,
        )
      ).rows.map((r) => r.relname),
    );
    expect([...large]).toEqual(expect.arrayContaining(['agents', 'groups', 'memberships', 'payments', 'inbox_items']));

    const found: Scans[] = [];
    let tool = '';
    h.services.pool = poolWithQuery(realPool, async (real, args) => {
      if (statementName(args) !== 'kitty_apply_batch') return real(...args);
      const doc = (args[0] as { values: unknown[] }).values[0];
      for (const [fn, sql] of [
        ['alone', ALONE],
        ['together', TOGETHER],
      ] as const) {
        for (let i = 0; i < 7; i++) {
          await real('BEGIN');
          await real(sql, [doc]);
          await real('ROLLBACK');
        }
        // Reported now, so the next transaction's counters hold that transaction alone (PostgreSQL 15+).
        await real('SELECT pg_stat_force_next_flush()');
        await real('SELECT 1');
        await real('BEGIN');
        await real(sql, [doc]);
        const r = (await real(`SELECT relname FROM pg_stat_xact_user_tables WHERE seq_scan > 0 ORDER BY 1`)) as {
          rows: Array<{ relname: string }>;
        };
        await real('ROLLBACK');
        found.push({ tool, fn, tables: r.rows.map((x) => x.relname).filter((t) => large.has(t)) });
      }
      return real(...args);
    });
    const as = async (who: typeof ana, name: string, args: Record<string, unknown>) => {
      tool = name;
      return h.call(who, name, args);
    };
    await as(bo, 'add_expense', { group_id: g, description: 'Hotel', amount_minor: 9000 });
    const pay = async () => (await as(ana, 'record_payment', { group_id: g, to_handle: bo.handle, amount_minor: 500 })).payment.payment_id;
    await as(bo, 'confirm_payment', { payment_id: await pay() });
    await as(ana, 'cancel_payment', { payment_id: await pay() });
    await as(bo, 'reject_payment', { payment_id: await pay(), reason: 'not received' });
    await as(bo, 'record_payment', { group_id: g, from_handle: cy.handle, to_handle: bo.handle, amount_minor: 300 });
    await as(cy, 'create_group', { name: 'Flat', currency: 'EUR' });
    h.services.pool = realPool;

    const tools = ['add_expense', 'record_payment', 'confirm_payment', 'cancel_payment', 'reject_payment', 'create_group'];
    expect(new Set(found.map((s) => s.tool))).toEqual(new Set(tools));
    expect(found.filter((s) => s.tables.length > 0)).toEqual([]);
  });
});
