/**
 * Spending statistics of a group (get_group_stats, the account page's charts): sums of the
 * group's live expenses in group-currency minor units, by category, month or member. Payments
 * are not spending and are left out; a refund (negative amount) lowers its row.
 */
import { Prisma } from '@kitty/db';
import type { Db } from '../../kernel/context.ts';
import { toNumber } from '../../kernel/money.ts';

export const STATS_BY = ['category', 'month', 'member'] as const;
export type StatsBy = (typeof STATS_BY)[number];

/** The key expenses are grouped under for `by: category`: the expense's category_id (list_categories). */
const CATEGORY_KEY = Prisma.sql`e.category_id`;

export interface StatsRow {
  key: string;
  total_minor: number;
  expense_count: number;
  /** by member only */
  agent_id?: string;
  paid_minor?: number;
  share_minor?: number;
  net_minor?: number;
}

type RawRow = { key: string; total: string; n: number; paid: string | null; owed: string | null };

/** Rows (largest total first for categories and members, oldest first for months) and their sum, which equals the sum of the expenses. */
export async function groupStats(
  db: Db,
  groupId: string,
  opts: { by: StatsBy; from?: string | undefined; to?: string | undefined },
): Promise<{ rows: StatsRow[]; total_minor: number }> {
  const where = Prisma.sql`e.group_id = ${groupId}::uuid AND e.deleted_at IS NULL
    ${opts.from ? Prisma.sql`AND e.date >= ${opts.from}::date` : Prisma.empty}
    ${opts.to ? Prisma.sql`AND e.date <= ${opts.to}::date` : Prisma.empty}`;
  let raw: RawRow[];
  if (opts.by === 'member') {
    raw = await db.$queryRaw<RawRow[]>`
      SELECT s.agent_id::text AS key, SUM(s.owed_minor)::text AS total, COUNT(*)::int AS n,
             SUM(s.paid_minor)::text AS paid, SUM(s.owed_minor)::text AS owed
      FROM expense_shares s JOIN expenses e ON e.id = s.expense_id
      WHERE ${where}
      GROUP BY s.agent_id ORDER BY SUM(s.owed_minor) DESC, s.agent_id`;
  } else {
    const key = opts.by === 'month' ? Prisma.sql`to_char(e.date, 'YYYY-MM')` : CATEGORY_KEY;
    const order = opts.by === 'month' ? Prisma.sql`1` : Prisma.sql`SUM(e.amount_minor) DESC, 1`;
    raw = await db.$queryRaw<RawRow[]>`
      SELECT ${key} AS key, SUM(e.amount_minor)::text AS total, COUNT(*)::int AS n, NULL AS paid, NULL AS owed
      FROM expenses e WHERE ${where}
      GROUP BY 1 ORDER BY ${order}`;
  }
  const rows: StatsRow[] = raw.map((r) => {
    const row: StatsRow = { key: r.key, total_minor: toNumber(BigInt(r.total)), expense_count: r.n };
    if (opts.by === 'member') {
      const paid = BigInt(r.paid ?? '0');
      const owed = BigInt(r.owed ?? '0');
      Object.assign(row, { agent_id: r.key, paid_minor: toNumber(paid), share_minor: toNumber(owed), net_minor: toNumber(paid - owed) });
    }
    return row;
  });
  const total = rows.reduce((s, r) => s + BigInt(r.total_minor), 0n);
  return { rows, total_minor: toNumber(total) };
}
