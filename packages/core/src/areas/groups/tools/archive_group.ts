import { z } from 'zod';
import { DESTRUCTIVE } from '../../../kernel/meta.ts';
import { output, groupId } from '../../../kernel/text.ts';
import { groupDetailSchema } from '../../../access/groups.ts';
import { groupAdminTool } from '../../../access/tools/group_tools.ts';
import { archiveGroup } from '../update.ts';

export const archive_group = groupAdminTool('archive the group')
  .meta({
    area: 'groups',
    title: 'Archive a group for good',
    description:
      'Archives the group for good (admins only): still readable, takes no new expenses, payments or members, hidden from list_groups unless ' +
      'include_archived. Every balance must be zero with no pending payment. Archiving it again returns it unchanged.',
    annotations: DESTRUCTIVE,
    errors: {
      NOT_SETTLED: 'a balance is not zero or a payment is pending; details.unsettled lists who',
    },
  })
  .input(z.strictObject({ group_id: groupId }))
  .output(output({ group: groupDetailSchema }))
  .mutation(async ({ ctx }) => {
    const { group, changed } = await archiveGroup(ctx.db, ctx.auth, ctx, ctx.services.now());
    return {
      group,
      suggested_next: changed
        ? ['list_groups: include_archived true shows archived groups', 'create_group: start a new group']
        : ['list_groups: include_archived true shows archived groups'],
    };
  });
