/**
 * Helpers for benchmarks and tests (not used by tools).
 *
 * seedExpensesBulk: loads `count` expenses into a group with INSERT … SELECT generate_series
 * (one statement for expenses, one for shares), keeping balances and pair_debts consistent
 * (applied once as aggregated deltas), so get_balances can be compared at 10 vs 10^6 expenses
 * and verifyLedger still passes.
 *
 * adversarialVectors: the settlement planner's hard cases (settle-vectors.ts), shared by its tests
 * and the benchmark.
 */
import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import { LedgerDelta } from '../areas/ledger/effects.ts';

export { adversarialVectors } from './settle-vectors.ts';

/**
 * Expense i (1…count): amount (i mod 997 + 1) × n minor units, paid by member (i mod n), split
 * equally over all n members (exact, no rounding), dated 2024-01-01 + (i mod 365) days.
 * @param pool       the pg pool of the database
 * @param groupId    an existing group
 * @param memberIds  active members of that group (their balances are updated)
 * @returns          the number of expenses inserted and the time taken (ms)
 */
export async function seedExpensesBulk(
  pool: Pool,
  groupId: string,
  memberIds: string[],
  count: number,
): Promise<{ inserted: number; ms: number }> {
  const n = memberIds.length;
  if (n < 1) throw new Error('seedExpensesBulk: need at least one member');
  const t0 = performance.now();
  const batch = randomUUID();
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SET LOCAL synchronous_commit = off');
    await client.query('SELECT 1 FROM groups WHERE id = $1 FOR NO KEY UPDATE', [groupId]);
    const creator = memberIds[0]!;
    await client.query(
      `INSERT INTO expenses (id, group_id, description, amount_minor, date, split_method, created_by, created_at, updated_at)
       SELECT md5($1 || ':' || i)::uuid, $2::uuid, 'seed expense ' || i, ((i % 997) + 1) * $3::bigint,
              date '2024-01-01' + (i % 365), 'equal', $4::uuid,
              now() - make_interval(secs => ($5::int - i) / 1000.0), now()
       FROM generate_series(1, $5::int) AS i`,
      [batch, groupId, n, creator, count],
    );
    await client.query(
      `INSERT INTO expense_shares (expense_id, agent_id, paid_minor, owed_minor, split_value)
       SELECT md5($1 || ':' || i)::uuid, m.agent_id,
              CASE WHEN m.ord - 1 = i % $3::int THEN ((i % 997) + 1) * $3::bigint ELSE 0 END,
              (i % 997) + 1, '1'
       FROM generate_series(1, $4::int) AS i
       CROSS JOIN unnest($2::uuid[]) WITH ORDINALITY AS m(agent_id, ord)`,
      [batch, memberIds, n, count],
    );
    // Aggregated effect: payer p paid n·A_p in total and everyone owes A_p to p.
    const agg = await client.query<{ p: number; a: string }>(
      `SELECT (i % $1::int) AS p, sum((i % 997) + 1)::text AS a FROM generate_series(1, $2::int) AS i GROUP BY 1`,
      [n, count],
    );
    const delta = new LedgerDelta();
    for (const row of agg.rows) {
      const payer = memberIds[row.p]!;
      const a = BigInt(row.a);
      delta.addLines(
        memberIds.map((id) => ({ agentId: id, paidMinor: id === payer ? a * BigInt(n) : 0n, owedMinor: a })),
        1n,
      );
    }
    for (const [agentId, v] of delta.balances) {
      await client.query('UPDATE memberships SET balance_minor = balance_minor + $3::bigint WHERE group_id = $1 AND agent_id = $2', [
        groupId,
        agentId,
        v.toString(),
      ]);
    }
    for (const [k, v] of delta.pairs) {
      const [a, b] = k.split('|');
      await client.query(
        `INSERT INTO pair_debts (group_id, agent_a, agent_b, amount_minor) VALUES ($1, $2, $3, $4::bigint)
         ON CONFLICT (group_id, agent_a, agent_b) DO UPDATE SET amount_minor = pair_debts.amount_minor + excluded.amount_minor`,
        [groupId, a, b, v.toString()],
      );
    }
    await client.query('COMMIT');
    // Fresh statistics after a bulk load, as any operator would run: without them the planner
    // still believes the tables are tiny (autovacuum has not caught up) and picks nested loops.
    await client.query('ANALYZE expenses, expense_shares, pair_debts, memberships');
  } catch (e) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw e;
  } finally {
    client.release();
  }
  return { inserted: count, ms: performance.now() - t0 };
}
