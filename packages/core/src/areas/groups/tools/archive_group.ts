import { z } from 'zod';
import { writeTool } from '../../../kernel/trpc.ts';
import { DESTRUCTIVE } from '../../../kernel/meta.ts';
import { output, groupId } from '../../../kernel/text.ts';
import { groupDetailSchema } from '../../../access/groups.ts';
import { archiveGroup } from '../update.ts';

export const archive_group = writeTool
  .meta({
    area: 'groups',
    title: 'Archive a group for good',
    description:
      'Archives the group for good (admins only): still readable, takes no new expenses, payments or members, hidden from list_groups unless ' +
      'include_archived. Every balance must be zero with no pending payment. Archiving it again returns it unchanged.',
    annotations: DESTRUCTIVE,
    errors: {
      NOT_FOUND: 'no such group',
      FORBIDDEN: 'not a member, or not an admin',
      NOT_SETTLED: 'a balance is not zero or a payment is pending; details.unsettled lists who',
    },
  })
  .input(z.strictObject({ group_id: groupId }))
  .output(output({ group: groupDetailSchema }))
  .mutation(async ({ ctx, input }) => {
    const { group, changed } = await archiveGroup(ctx, input.group_id);
    return {
      group,
      suggested_next: changed
        ? ['list_groups: include_archived true shows archived groups', 'create_group: start a new group']
        : ['list_groups: include_archived true shows archived groups'],
    };
  });
