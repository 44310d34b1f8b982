import { z } from 'zod';
import { WRITE } from '../../../kernel/meta.ts';
import { text, description, output, groupId } from '../../../kernel/text.ts';
import { groupDetailSchema } from '../../../access/groups.ts';
import { groupMemberWriteTool } from '../../../access/tools/group_tools.ts';
import { updateGroup } from '../update.ts';

export const update_group = groupMemberWriteTool
  .meta({
    area: 'groups',
    title: 'Update a group',
    description:
      'Renames a group or changes its description (any member). members_can_edit_expenses (admins only): whether every member (default) or ' +
      'only admins and the creator may edit and delete expenses. The currency cannot change.',
    annotations: WRITE,
    errors: {
      FORBIDDEN: 'not a member, or not an admin for members_can_edit_expenses',
      GROUP_ARCHIVED: '',
    },
  })
  .input(
    z.strictObject({
      group_id: groupId,
      name: text(1, 80, 'name').optional().describe('New name, 1-80 characters.'),
      description: description.optional().describe('New description, 0-500 characters; "" clears it.'),
      members_can_edit_expenses: z
        .boolean()
        .optional()
        .describe('Admins only. true: every member may edit and delete expenses; false: only admins and the expense creator.'),
    }),
  )
  .output(output({ group: groupDetailSchema }))
  .mutation(async ({ ctx, input }) => {
    const group = await updateGroup(ctx.db, ctx.auth, ctx, input);
    return { group, suggested_next: [`get_group: see "${group.name}"`] };
  });
