import { z } from 'zod';
import { READ } from '../../../kernel/meta.ts';
import { groupMemberTool } from '../../../access/tools/group_tools.ts';
import { handle, cursor, limit, isoDate, output, groupId, since } from '../../../kernel/text.ts';
import { expenseSchema, categoryIdInput } from '../wire.ts';
import { listExpenses } from '../list.ts';

export const list_expenses = groupMemberTool
  .meta({
    area: 'expenses',
    title: 'List expenses',
    description:
      "A group's expenses with shares, newest first, filtered and paged. updated_after with include_deleted syncs deletions too.",
    annotations: READ,
    errors: {
      VALIDATION_ERROR: 'bad cursor',
    },
  })
  .input(
    z.strictObject({
      group_id: groupId,
      participant: handle.optional().describe('Only expenses this member paid for or shares.'),
      date_from: isoDate.optional().describe('Only expenses dated on or after this day, YYYY-MM-DD.'),
      date_to: isoDate.optional().describe('Only expenses dated on or before this day, YYYY-MM-DD.'),
      updated_after: since.optional(),
      include_deleted: z.boolean().optional().describe('Default false.'),
      category: z.string().max(50).optional().describe('Only expenses with exactly this free label.'),
      category_id: categoryIdInput.optional().describe('Only expenses in this category; a parent (e.g. "food") includes its children.'),
      cursor: cursor.optional(),
      limit: limit.optional(),
    }),
  )
  .output(output({ expenses: z.array(expenseSchema), next_cursor: z.string().nullable() }))
  .query(async ({ ctx, input }) => {
    const { group, expenses, next_cursor, unknownParticipant } = await listExpenses(ctx.db, ctx, input);
    if (unknownParticipant) return { expenses, next_cursor, suggested_next: [`get_group: see the members of "${group.name}"`] };
    const suggested_next: string[] = [];
    if (next_cursor) suggested_next.push('list_expenses: pass next_cursor for the next page');
    if (!group.archivedAt) suggested_next.push(`add_expense: record an expense in "${group.name}"`);
    suggested_next.push('get_balances: current balances');
    return { expenses, next_cursor, suggested_next };
  });
