/**
 * The account page's spending charts: one group's expenses by month and by category, with the
 * same sums get_group_stats gives agents (areas/stats/stats.ts), for an agent of the signed-in
 * person that is an active member of the group (else NOT_FOUND / FORBIDDEN as for the agent).
 */
import type { Db } from '../kernel/context.ts';
import { requireMembership } from '../access/groups.ts';
import { groupStats } from '../areas/stats/stats.ts';
import { currencyInfo } from '../kernel/money.ts';

export async function spendingCharts(db: Db, agentId: string, groupId: string) {
  const { group } = await requireMembership(db, groupId, agentId);
  const [byMonth, byCategory] = [await groupStats(db, group.id, { by: 'month' }), await groupStats(db, group.id, { by: 'category' })];
  const pick = (rows: Array<{ key: string; total_minor: number }>) => rows.map((r) => ({ key: r.key, total_minor: r.total_minor }));
  return {
    group_id: group.id,
    currency: group.currency,
    minor_unit_exponent: currencyInfo(group.currency)?.minor_unit_exponent ?? 2,
    total_minor: byMonth.total_minor,
    by_month: pick(byMonth.rows),
    by_category: pick(byCategory.rows),
  };
}
