/**
 * The ledger invariants (issue 3), checked from the database:
 *  1. every group's balances sum to zero;
 *  2. stored balances equal balances recomputed from the full history (live expenses' shares
 *     and confirmed payments);
 *  3. stored pending sums and counts equal those recomputed from pending payments;
 *  4. every expense's paid shares and owed shares each sum to its amount;
 *  5. pair_debts agree with balances (each member's signed pair rows sum to their balance) and
 *     with pair debts recomputed from history by the same north-west-corner rule as split.ts;
 *  6. every group's member_count is its number of active members.
 * Used by tests after every scenario and by the `verify` CLI command.
 */
import type { Db } from '../../kernel/context.ts';

export interface LedgerReport {
  ok: boolean;
  groups: number;
  expenses: number;
  payments: number;
  /** One line per violation (at most 20 per check). */
  problems: string[];
}

const LIMIT = 20;

/**
 * Pairwise debts recomputed from history (canonical a < b, positive = b owes a).
 * `where(col)` filters every source by group (a static predicate: see verifyLedger).
 */
const pairHistorySql = (where: (col: string) => string) => `
  WITH nets AS (
    SELECT e.group_id, s.expense_id AS entry, s.agent_id, (s.paid_minor - s.owed_minor) AS net
    FROM expense_shares s JOIN expenses e ON e.id = s.expense_id
    WHERE e.deleted_at IS NULL AND s.paid_minor <> s.owed_minor AND ${where('e.group_id')}
  ), d AS (
    SELECT group_id, entry, agent_id, -net AS amt, sum(-net) OVER (PARTITION BY entry ORDER BY agent_id) AS hi FROM nets WHERE net < 0
  ), c AS (
    SELECT group_id, entry, agent_id, net AS amt, sum(net) OVER (PARTITION BY entry ORDER BY agent_id) AS hi FROM nets WHERE net > 0
  ), edges AS (
    SELECT d.group_id, d.agent_id AS debtor, c.agent_id AS creditor,
           least(d.hi, c.hi) - greatest(d.hi - d.amt, c.hi - c.amt) AS amt
    FROM d JOIN c ON c.entry = d.entry
    WHERE least(d.hi, c.hi) > greatest(d.hi - d.amt, c.hi - c.amt)
    UNION ALL
    SELECT group_id, payee_id, payer_id, amount_minor FROM payments WHERE status = 'confirmed' AND ${where('group_id')}
  ), canon AS (
    SELECT group_id, least(debtor, creditor) AS a, greatest(debtor, creditor) AS b,
           CASE WHEN debtor > creditor THEN amt ELSE -amt END AS v
    FROM edges
  )
  SELECT group_id, a, b, sum(v) AS v FROM canon GROUP BY 1, 2, 3`;

export async function verifyLedger(db: Db, opts: { groupId?: string } = {}): Promise<LedgerReport> {
  const problems: string[] = [];
  const g = opts.groupId;
  // The group filter is written into every source as a static predicate (or left out), never as
  // "$1 IS NULL OR col = $1": queries run as prepared statements, and a cached generic plan for that
  // pattern cannot use an index (measured: a 20k-expense group took > 60 s once the plan went generic).
  const q = <T>(sql: string) => (g ? db.$queryRawUnsafe<T[]>(sql, g) : db.$queryRawUnsafe<T[]>(sql));
  const where = (col: string) => (g ? `${col} = $1::uuid` : 'TRUE');
  const members = `(SELECT * FROM memberships WHERE ${where('group_id')})`;

  const sums = await q<{ group_id: string; s: string }>(`
    SELECT group_id::text, sum(balance_minor)::text AS s FROM memberships WHERE ${where('group_id')}
    GROUP BY group_id HAVING sum(balance_minor) <> 0 LIMIT ${LIMIT}`);
  for (const r of sums) problems.push(`group ${r.group_id}: balances sum to ${r.s}, not 0`);

  // member_count is the number of active members: a write decided on a cached read of its group learns of a join only
  // through it (groups.read_version moves when member_count does).
  const memberCounts = await q<{ id: string; stored: number; active: number }>(`
    SELECT g.id::text, g.member_count AS stored, count(m.agent_id)::int AS active
    FROM groups g LEFT JOIN memberships m ON m.group_id = g.id AND m.left_at IS NULL WHERE ${where('g.id')}
    GROUP BY g.id HAVING g.member_count <> count(m.agent_id) LIMIT ${LIMIT}`);
  for (const r of memberCounts) problems.push(`group ${r.id}: member_count ${r.stored} ≠ ${r.active} active members`);

  /** Members whose stored balance_minor differs from the per-member sum of `hist` (rows group_id, agent_id, v). */
  const balanceMismatches = (hist: string) =>
    q<{ group_id: string; agent_id: string; stored: string; recomputed: string }>(`
    WITH hist AS (${hist}), r AS (SELECT group_id, agent_id, sum(v) AS v FROM hist GROUP BY 1, 2)
    SELECT coalesce(m.group_id, r.group_id)::text AS group_id, coalesce(m.agent_id, r.agent_id)::text AS agent_id,
           coalesce(m.balance_minor, 0)::text AS stored, coalesce(r.v, 0)::text AS recomputed
    FROM ${members} m FULL JOIN r ON r.group_id = m.group_id AND r.agent_id = m.agent_id
    WHERE coalesce(m.balance_minor, 0) <> coalesce(r.v, 0)
    LIMIT ${LIMIT}`);

  const bal = await balanceMismatches(`
      SELECT e.group_id, s.agent_id, (s.paid_minor - s.owed_minor) AS v
      FROM expense_shares s JOIN expenses e ON e.id = s.expense_id WHERE e.deleted_at IS NULL AND ${where('e.group_id')}
      UNION ALL SELECT group_id, payer_id, amount_minor FROM payments WHERE status = 'confirmed' AND ${where('group_id')}
      UNION ALL SELECT group_id, payee_id, -amount_minor FROM payments WHERE status = 'confirmed' AND ${where('group_id')}`);
  for (const r of bal) problems.push(`group ${r.group_id} member ${r.agent_id}: stored balance ${r.stored} ≠ recomputed ${r.recomputed}`);

  const pend = await q<{ group_id: string; agent_id: string; stored: string; recomputed: string; sc: number; rc: number }>(`
    WITH hist AS (
      SELECT group_id, payer_id AS agent_id, amount_minor AS v FROM payments WHERE status = 'pending' AND ${where('group_id')}
      UNION ALL SELECT group_id, payee_id, -amount_minor FROM payments WHERE status = 'pending' AND ${where('group_id')}
    ), r AS (SELECT group_id, agent_id, sum(v) AS v, count(*)::int AS n FROM hist GROUP BY 1, 2)
    SELECT coalesce(m.group_id, r.group_id)::text AS group_id, coalesce(m.agent_id, r.agent_id)::text AS agent_id,
           coalesce(m.balance_pending_minor, 0)::text AS stored, coalesce(r.v, 0)::text AS recomputed,
           coalesce(m.pending_count, 0) AS sc, coalesce(r.n, 0) AS rc
    FROM ${members} m FULL JOIN r ON r.group_id = m.group_id AND r.agent_id = m.agent_id
    WHERE (coalesce(m.balance_pending_minor, 0) <> coalesce(r.v, 0) OR coalesce(m.pending_count, 0) <> coalesce(r.n, 0))
    LIMIT ${LIMIT}`);
  for (const r of pend)
    problems.push(`group ${r.group_id} member ${r.agent_id}: pending ${r.stored}/${r.sc} ≠ recomputed ${r.recomputed}/${r.rc}`);

  const exp = await q<{ id: string; amount: string; paid: string; owed: string }>(`
    SELECT e.id::text, e.amount_minor::text AS amount, coalesce(sum(s.paid_minor), 0)::text AS paid, coalesce(sum(s.owed_minor), 0)::text AS owed
    FROM expenses e LEFT JOIN expense_shares s ON s.expense_id = e.id
    WHERE ${where('e.group_id')}
    GROUP BY e.id, e.amount_minor
    HAVING coalesce(sum(s.paid_minor), 0) <> e.amount_minor OR coalesce(sum(s.owed_minor), 0) <> e.amount_minor
    LIMIT ${LIMIT}`);
  for (const r of exp) problems.push(`expense ${r.id}: amount ${r.amount}, paid sum ${r.paid}, owed sum ${r.owed}`);

  const pairBal = await balanceMismatches(`
      SELECT group_id, agent_a AS agent_id, amount_minor AS v FROM pair_debts WHERE ${where('group_id')}
      UNION ALL SELECT group_id, agent_b, -amount_minor FROM pair_debts WHERE ${where('group_id')}`);
  for (const r of pairBal)
    problems.push(`group ${r.group_id} member ${r.agent_id}: pair debts sum to ${r.recomputed} ≠ balance ${r.stored}`);

  const pairHist = await q<{ group_id: string; a: string; b: string; stored: string; recomputed: string }>(`
    WITH r AS (${pairHistorySql(where)})
    SELECT coalesce(p.group_id, r.group_id)::text AS group_id, coalesce(p.agent_a, r.a)::text AS a, coalesce(p.agent_b, r.b)::text AS b,
           coalesce(p.amount_minor, 0)::text AS stored, coalesce(r.v, 0)::text AS recomputed
    FROM (SELECT * FROM pair_debts WHERE ${where('group_id')}) p FULL JOIN r ON r.group_id = p.group_id AND r.a = p.agent_a AND r.b = p.agent_b
    WHERE coalesce(p.amount_minor, 0) <> coalesce(r.v, 0)
    LIMIT ${LIMIT}`);
  for (const r of pairHist) problems.push(`group ${r.group_id} pair ${r.a}/${r.b}: stored ${r.stored} ≠ recomputed ${r.recomputed}`);

  const counts = await q<{ groups: number; expenses: number; payments: number }>(`
    SELECT (SELECT count(*)::int FROM groups WHERE ${where('id')}) AS groups,
           (SELECT count(*)::int FROM expenses WHERE ${where('group_id')}) AS expenses,
           (SELECT count(*)::int FROM payments WHERE ${where('group_id')}) AS payments`);
  const c = counts[0]!;
  return { ok: problems.length === 0, groups: c.groups, expenses: c.expenses, payments: c.payments, problems };
}
