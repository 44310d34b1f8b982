import { z } from 'zod';
import { readTool } from '../../../kernel/trpc.ts';
import { READ } from '../../../kernel/meta.ts';
import { output, groupId } from '../../../kernel/text.ts';
import { groupDetailSchema, memberSchema, toGroupDetail, requireMembership } from '../../../access/groups.ts';
import { formatMinor, toNumber } from '../../../kernel/money.ts';

export const get_group = readTool
  .meta({
    area: 'groups',
    title: 'Get a group',
    description: 'The group and its active members with role and balance (positive = others owe them; minor units).',
    annotations: READ,
    errors: {
      NOT_FOUND: 'no such group',
      FORBIDDEN: 'not a member',
    },
  })
  .input(z.strictObject({ group_id: groupId }))
  .output(output({ group: groupDetailSchema, members: z.array(memberSchema) }))
  .query(async ({ ctx, input }) => {
    const { group, membership } = await requireMembership(ctx.db, input.group_id, ctx.auth.agentId);
    const members = await ctx.db.membership.findMany({
      where: { groupId: group.id, leftAt: null },
      include: { agent: { select: { id: true, handle: true, displayName: true } } },
      orderBy: { joinedAt: 'asc' },
    });
    const suggested_next: string[] = [];
    if (group.archivedAt) suggested_next.push('list_expenses: browse the history of this archived group');
    else {
      if (members.length < 2 && group.kind === 'group') suggested_next.push(`create_invite: invite members to "${group.name}"`);
      suggested_next.push(`add_expense: record an expense in "${group.name}"`);
      if (members.some((m) => m.balanceMinor !== 0n)) suggested_next.push('suggest_settlements: see who should pay whom');
    }
    return {
      group: toGroupDetail(group, membership),
      members: members.map((m) => ({
        agent_id: m.agent.id,
        handle: m.agent.handle,
        display_name: m.agent.displayName,
        role: m.role as 'admin' | 'member',
        joined_at: m.joinedAt.toISOString(),
        balance_minor: toNumber(m.balanceMinor),
        balance: formatMinor(m.balanceMinor, group.currency),
        balance_pending_minor: toNumber(m.balancePendingMinor),
      })),
      suggested_next,
    };
  });
