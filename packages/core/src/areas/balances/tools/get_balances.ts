import { z } from 'zod';
import { READ } from '../../../kernel/meta.ts';
import { groupMemberTool } from '../../../access/tools/group_tools.ts';
import { output, groupId } from '../../../kernel/text.ts';
import { memberBalanceSchema, debtSchema, groupBalances, pairwiseDebts, toMemberBalances } from '../balances.ts';

export const get_balances = groupMemberTool
  .meta({
    area: 'balances',
    title: 'Get the balances of a group',
    description:
      "Each active member's balance_minor (paid − owed with confirmed payments; positive = others owe them), pending amounts, and the " +
      "pairwise debts (who owes whom, loops netted out, so each member's debts net to their balance). Balances sum to zero. For the fewest " +
      'transfers use suggest_settlements.',
    annotations: READ,
    errors: {},
  })
  .input(z.strictObject({ group_id: groupId }))
  .output(
    output({
      group_id: groupId,
      currency: z.string(),
      members: z.array(memberBalanceSchema),
      debts: z.array(debtSchema).describe('Pairwise debts before simplification.'),
      settled: z.boolean().describe('True when every balance is zero and nothing is pending.'),
    }),
  )
  .query(async ({ ctx }) => {
    const agentId = ctx.auth.agentId;
    const { group } = ctx;
    const rows = await groupBalances(ctx.db, group.id);
    const debts = await pairwiseDebts(ctx.db, group.id, group.currency);
    const members = toMemberBalances(rows, group.currency);
    const settled = rows.every((m) => m.balanceMinor === 0n && m.pendingCount === 0);
    const me = rows.find((m) => m.agentId === agentId);
    const suggested_next: string[] = [];
    if (!settled) suggested_next.push(`suggest_settlements: the fewest payments that settle "${group.name}"`);
    if (me && me.pendingCount > 0) suggested_next.push('list_payments: status pending shows the payments awaiting confirmation');
    if (settled && !group.archivedAt)
      suggested_next.push(`archive_group: everyone is settled; archive "${group.name}" if the trip is over`);
    if (!group.archivedAt) suggested_next.push(`add_expense: record another expense in "${group.name}"`);
    return { group_id: group.id, currency: group.currency, members, debts, settled, suggested_next };
  });
