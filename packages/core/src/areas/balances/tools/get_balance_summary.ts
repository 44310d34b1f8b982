import { z } from 'zod';
import { readTool } from '../../../kernel/trpc.ts';
import { READ } from '../../../kernel/meta.ts';
import { uuid, agentRef, output, groupId } from '../../../kernel/text.ts';
import { balanceSummary } from '../summary.ts';

export const get_balance_summary = readTool
  .meta({
    area: 'balances',
    title: 'Your balances across all groups',
    description:
      'Your position across your groups: per currency (positive = you are owed), per group, and per counterparty and currency (net ' +
      'pairwise debts across groups; positive = they owe you). Minor units; currencies never mixed.',
    annotations: READ,
    errors: {},
  })
  .input(z.strictObject({ include_archived: z.boolean().optional().describe('Also count archived groups (default false).') }))
  .output(
    output({
      currencies: z.array(
        z.object({
          currency: z.string(),
          balance_minor: z.number().int(),
          balance: z.string(),
          pending_minor: z.number().int(),
          you_are_owed_minor: z.number().int().describe('Sum over counterparties who owe you.'),
          you_owe_minor: z.number().int().describe('Sum over counterparties you owe (positive number).'),
          group_count: z.number().int(),
        }),
      ),
      groups: z.array(
        z.object({
          group_id: groupId,
          name: z.string(),
          currency: z.string(),
          archived: z.boolean(),
          balance_minor: z.number().int(),
          balance: z.string(),
          balance_pending_minor: z.number().int(),
        }),
      ),
      counterparties: z.array(
        z.object({
          agent: agentRef,
          currency: z.string(),
          net_minor: z.number().int().describe('Positive: they owe you; negative: you owe them.'),
          net: z.string(),
          group_ids: z.array(uuid),
        }),
      ),
    }),
  )
  .query(async ({ ctx, input }) => {
    const { currencies, groups, counterparties } = await balanceSummary(ctx.db, ctx.auth.agentId, {
      includeArchived: input.include_archived,
    });
    const suggested_next: string[] = [];
    const owing = groups.find((g) => g.balance_minor < 0);
    if (owing) suggested_next.push(`suggest_settlements: settle what you owe in "${owing.name}" (group_id ${owing.group_id})`);
    const owed = groups.find((g) => g.balance_minor > 0);
    if (owed) suggested_next.push(`get_balances: who owes you in "${owed.name}"`);
    if (!groups.length) suggested_next.push('create_group: start a shared-expense group');
    else suggested_next.push('list_groups: all your groups');
    return { currencies, groups, counterparties, suggested_next };
  });
