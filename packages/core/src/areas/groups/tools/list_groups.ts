import { z } from 'zod';
import { readTool } from '../../../kernel/trpc.ts';
import { READ } from '../../../kernel/meta.ts';
import { cursor, limit, output } from '../../../kernel/text.ts';
import { groupSummarySchema } from '../../../access/groups.ts';
import { listGroups } from '../view.ts';

export const list_groups = readTool
  .meta({
    area: 'groups',
    title: 'List my groups',
    description: 'Your groups, newest first, with your balance. Archived ones only with include_archived.',
    annotations: READ,
    errors: {},
  })
  .input(
    z.strictObject({
      include_archived: z.boolean().optional().describe('Also list archived groups (default false).'),
      cursor: cursor.optional(),
      limit: limit.optional(),
    }),
  )
  .output(output({ groups: z.array(groupSummarySchema), next_cursor: z.string().nullable() }))
  .query(async ({ ctx, input }) => {
    const { groups, next_cursor } = await listGroups(ctx.db, ctx.auth, input);
    return {
      groups,
      next_cursor,
      suggested_next: next_cursor
        ? ['list_groups: pass next_cursor for the next page']
        : groups.length
          ? ['get_group: open a group to see members and balances']
          : ['create_group: start a shared-expense group', 'join_group: join with an invite code'],
    };
  });
