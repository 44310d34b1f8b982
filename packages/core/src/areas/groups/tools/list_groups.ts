import { z } from 'zod';
import { readTool } from '../../../kernel/trpc.ts';
import { READ } from '../../../kernel/meta.ts';
import { cursor, limit, output } from '../../../kernel/text.ts';
import { groupSummarySchema, toGroupSummary } from '../../../access/groups.ts';
import { decodeCursor, encodeCursor } from '../../../kernel/cursor.ts';

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
    const take = input.limit ?? 20;
    const after = input.cursor ? decodeCursor(input.cursor) : null;
    const rows = await ctx.db.membership.findMany({
      where: {
        agentId: ctx.auth.agentId,
        leftAt: null,
        group: {
          ...(input.include_archived ? {} : { archivedAt: null }),
          ...(after ? { OR: [{ createdAt: { lt: after.t } }, { createdAt: after.t, id: { lt: after.id } }] } : {}),
        },
      },
      include: { group: true },
      orderBy: [{ group: { createdAt: 'desc' } }, { group: { id: 'desc' } }],
      take: take + 1,
    });
    const page = rows.slice(0, take);
    const last = page[page.length - 1];
    const next_cursor = rows.length > take && last ? encodeCursor(last.group.createdAt, last.group.id) : null;
    return {
      groups: page.map((m) => toGroupSummary(m.group, m)),
      next_cursor,
      suggested_next: next_cursor
        ? ['list_groups: pass next_cursor for the next page']
        : page.length
          ? ['get_group: open a group to see members and balances']
          : ['create_group: start a shared-expense group', 'join_group: join with an invite code'],
    };
  });
