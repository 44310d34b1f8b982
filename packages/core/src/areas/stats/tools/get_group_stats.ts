import { z } from 'zod';
import { READ } from '../../../kernel/meta.ts';
import { groupMemberTool } from '../../../access/tools/group_tools.ts';
import { output, groupId, isoDate, uuid } from '../../../kernel/text.ts';
import { validationError } from '../../../kernel/errors.ts';
import { groupStats, STATS_BY } from '../stats.ts';
import { agentsById } from '../../expenses/view.ts';

export const get_group_stats = groupMemberTool
  .meta({
    area: 'balances',
    title: 'Spending statistics of a group',
    description:
      "Sums the group's live expenses (not payments), minor units, by category (key: category_id, see list_categories), month (YYYY-MM) or member " +
      '(key: handle; paid_minor, share_minor, net_minor = paid − share; total_minor = share). total_minor = sum of the expenses counted.',
    annotations: READ,
    errors: {},
  })
  .input(
    z.strictObject({
      group_id: groupId,
      by: z.enum(STATS_BY).describe('Grouping: category, month or member.'),
      from: isoDate.optional().describe('First expense date counted, YYYY-MM-DD.'),
      to: isoDate.optional().describe('Last expense date counted, YYYY-MM-DD.'),
    }),
  )
  .output(
    output({
      group_id: groupId,
      currency: z.string(),
      by: z.enum(STATS_BY),
      rows: z.array(
        z.object({
          key: z.string(),
          total_minor: z.number().int(),
          expense_count: z.number().int(),
          agent_id: uuid.optional(),
          paid_minor: z.number().int().optional(),
          share_minor: z.number().int().optional(),
          net_minor: z.number().int().optional(),
        }),
      ),
      total_minor: z.number().int(),
    }),
  )
  .query(async ({ ctx, input }) => {
    if (input.from && input.to && input.from > input.to) throw validationError('from', `from (${input.from}) is after to (${input.to})`);
    const { group } = ctx;
    const stats = await groupStats(ctx.db, group.id, input);
    if (input.by === 'member') {
      const agents = await agentsById(
        ctx.db,
        stats.rows.map((r) => r.key),
      );
      for (const r of stats.rows) r.key = agents.get(r.key)?.handle ?? r.key;
    }
    return {
      group_id: group.id,
      currency: group.currency,
      by: input.by,
      ...stats,
      suggested_next: ['list_expenses: the expenses behind these sums', 'get_balances: balances including payments'],
    };
  });
