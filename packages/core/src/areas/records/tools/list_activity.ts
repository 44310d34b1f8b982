import { z } from 'zod';
import { READ } from '../../../kernel/meta.ts';
import { groupMemberTool } from '../../../access/tools/group_tools.ts';
import { cursor, limit, timestamp, agentRef, output, groupId, since } from '../../../kernel/text.ts';
import { listActivity } from '../activity-log.ts';

export const list_activity = groupMemberTool
  .meta({
    area: 'records',
    title: 'List group activity',
    description:
      "A group's activity log, newest first: every write with actor, action (e.g. expense.added, payment.confirmed), entity and the " +
      'before/after values (money as minor-unit strings).',
    annotations: READ,
    errors: {
      VALIDATION_ERROR: 'bad cursor',
    },
  })
  .input(
    z.strictObject({
      group_id: groupId,
      updated_after: since.optional(),
      entity_type: z
        .enum(['group', 'member', 'invite', 'expense', 'payment', 'message'])
        .optional()
        .describe('Only entries about this kind of entity.'),
      entity_id: z.string().max(64).optional().describe('Only entries about this entity (its id).'),
      cursor: cursor.optional(),
      limit: limit.optional(),
    }),
  )
  .output(
    output({
      activities: z.array(
        z.object({
          activity_id: z.string(),
          actor: agentRef,
          action: z.string(),
          entity_type: z.string(),
          entity_id: z.string(),
          before: z
            .record(z.string(), z.unknown())
            .nullable()
            .describe('The changed fields before (a JSON object), or null for a creation.'),
          after: z.record(z.string(), z.unknown()).nullable().describe('The changed fields after (a JSON object), or null for a removal.'),
          created_at: timestamp,
        }),
      ),
      next_cursor: z.string().nullable(),
    }),
  )
  .query(async ({ ctx, input }) => {
    const { more, ...page } = await listActivity(ctx.db, ctx, input);
    return {
      ...page,
      suggested_next: more ? ['list_activity: pass next_cursor for older entries'] : ['list_expenses: the expenses of this group'],
    };
  });
