import { z } from 'zod';
import { READ } from '../../../kernel/meta.ts';
import { output, groupId } from '../../../kernel/text.ts';
import { groupDetailSchema, memberSchema } from '../../../access/groups.ts';
import { groupMemberTool } from '../../../access/tools/group_tools.ts';
import { viewGroup } from '../view.ts';

export const get_group = groupMemberTool
  .meta({
    area: 'groups',
    title: 'Get a group',
    description: 'The group and its active members with role and balance (positive = others owe them; minor units).',
    annotations: READ,
    errors: {},
  })
  .input(z.strictObject({ group_id: groupId }))
  .output(output({ group: groupDetailSchema, members: z.array(memberSchema) }))
  .query(async ({ ctx }) => {
    const { group, members } = await viewGroup(ctx.db, ctx);
    const g = ctx.group;
    const suggested_next: string[] = [];
    if (g.archivedAt) suggested_next.push('list_expenses: browse the history of this archived group');
    else {
      if (members.length < 2 && g.kind === 'group') suggested_next.push(`create_invite: invite members to "${g.name}"`);
      suggested_next.push(`add_expense: record an expense in "${g.name}"`);
      if (members.some((m) => m.balance_minor !== 0)) suggested_next.push('suggest_settlements: see who should pay whom');
    }
    return { group, members, suggested_next };
  });
