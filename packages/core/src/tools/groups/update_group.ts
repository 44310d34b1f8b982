import { z } from 'zod';
import { writeTool } from '../../trpc.ts';
import { WRITE } from '../../meta.ts';
import { ToolError } from '../../errors.ts';
import { text, description, output, groupId } from '../../text.ts';
import { groupDetailSchema, toGroupDetail, requireMembership, assertNotArchived, assertAdmin, GROUP_DETAIL_INCLUDE } from '../../domain/groups.ts';
import { appendActivity } from '../../domain/activity.ts';

export const update_group = writeTool
  .meta({
    area: 'groups',
    title: 'Update a group',
    description:
      'Renames a group or changes its description ("" clears it); any member may. members_can_edit_expenses (admins only) decides whether every member (true, ' +
      'the default, as in Splitwise) or only admins and the expense creator may edit and delete expenses. The currency cannot change.',
    annotations: WRITE,
    errors: {
      NOT_FOUND: 'no such group',
      FORBIDDEN: 'not a member, or not an admin for members_can_edit_expenses',
      GROUP_ARCHIVED: 'the group is archived',
    },
  })
  .input(
    z.strictObject({
      group_id: groupId,
      name: text(1, 80, 'name').optional().describe('New name, 1-80 characters.'),
      description: description.optional().describe('New description, 0-500 characters; "" clears it.'),
      members_can_edit_expenses: z.boolean().optional().describe('Admins only. true: every member may edit and delete expenses; false: only admins and the expense creator.'),
    }),
  )
  .output(output({ group: groupDetailSchema }))
  .mutation(async ({ ctx, input }) => {
    const agentId = ctx.auth.agentId;
    const { group, membership } = await requireMembership(ctx.db, input.group_id, agentId, { lock: true });
    assertNotArchived(group);
    if (input.members_can_edit_expenses !== undefined) assertAdmin(membership, 'change who may edit expenses');
    if (group.kind === 'direct' && input.name !== undefined) {
      throw new ToolError('INVALID_STATE', 'A direct ledger is named after its two members and cannot be renamed.');
    }
    const before = { name: group.name, description: group.description, members_can_edit_expenses: group.membersCanEdit };
    const updated = await ctx.db.group.update({
      where: { id: group.id },
      data: {
        ...(input.name !== undefined ? { name: input.name } : {}),
        ...(input.description !== undefined ? { description: input.description || null } : {}),
        ...(input.members_can_edit_expenses !== undefined ? { membersCanEdit: input.members_can_edit_expenses } : {}),
      },
      include: GROUP_DETAIL_INCLUDE,
    });
    await appendActivity(ctx.db, {
      groupId: group.id,
      actorId: agentId,
      action: 'group.updated',
      entityType: 'group',
      entityId: group.id,
      before,
      after: { name: updated.name, description: updated.description, members_can_edit_expenses: updated.membersCanEdit },
    });
    return { group: toGroupDetail(updated, membership), suggested_next: [`get_group: see "${updated.name}"`] };
  });
