/** What the tests of the batch functions' plans share (hot-rows.test.ts, plans-made-small.test.ts). */

/**
 * Makes the backend of `c` report its table counters now (pg_stat_force_next_flush, PostgreSQL 15+: at the end of the
 * next transaction), so pg_stat_xact_user_tables in the transaction after it counts that transaction alone.
 */
export async function flushTableStats(c: { query(sql: string): Promise<unknown> }) {
  await c.query('SELECT pg_stat_force_next_flush()');
  await c.query('SELECT 1');
}

/** The two ways a batch reaches the database: alone, and sent together with others of its group (as one document here). */
export const BOTH_FUNCTIONS = [
  ['kitty_apply_batch', 'SELECT kitty_apply_batch($1::jsonb)'],
  ['kitty_apply_batches_quiet (writes sent together)', 'SELECT kitty_apply_batches_quiet(jsonb_build_array($1::jsonb))'],
] as const;
