import { z } from 'zod';
import type { Prisma } from '@kitty/db';
import { readTool } from '../../trpc.ts';
import { READ } from '../../meta.ts';
import { handle, cursor, limit, isoDate, timestamp, output, groupId } from '../../text.ts';
import { requireMembership } from '../../domain/groups.ts';
import { decodeCursor, olderThan, pageOf, parseUpdatedAfter, UUID_CURSOR_ID } from '../../domain/cursor.ts';
import { expenseSchema } from '../../domain/ledger/expense-wire.ts';
import { dateFromIso } from '../../domain/ledger/expense-spec.ts';
import { toExpenses, EXPENSE_INCLUDE } from '../../domain/ledger/expense-view.ts';

export const list_expenses = readTool
  .meta({
    area: 'expenses',
    title: 'List expenses',
    description:
      'Lists a group\'s expenses, newest first (by creation), with shares. Filters: participant (handle: paid or shares), date_from/date_to (expense date, ' +
      'inclusive, YYYY-MM-DD), updated_after (ISO timestamp: only expenses changed later, for sync — deletions show as deleted:true when include_deleted), ' +
      'include_deleted (default false), category. Pagination: limit 1-100 (default 20) and the opaque next_cursor.',
    annotations: READ,
    errors: {
      NOT_FOUND: 'no such group',
      FORBIDDEN: 'not a member',
      VALIDATION_ERROR: 'bad cursor',
    },
  })
  .input(
    z.strictObject({
      group_id: groupId,
      participant: handle.optional().describe('Only expenses this member paid for or shares.'),
      date_from: isoDate.optional().describe('Only expenses dated on or after this day, YYYY-MM-DD.'),
      date_to: isoDate.optional().describe('Only expenses dated on or before this day, YYYY-MM-DD.'),
      updated_after: timestamp.optional(),
      include_deleted: z.boolean().optional().describe('Default false.'),
      category: z.string().max(50).optional().describe('Only expenses with exactly this category.'),
      cursor: cursor.optional(),
      limit: limit.optional(),
    }),
  )
  .output(output({ expenses: z.array(expenseSchema), next_cursor: z.string().nullable() }))
  .query(async ({ ctx, input }) => {
    const { group } = await requireMembership(ctx.db, input.group_id, ctx.auth.agentId);
    const take = input.limit ?? 20;
    const where: Prisma.ExpenseWhereInput = { groupId: group.id };
    const and: Prisma.ExpenseWhereInput[] = [];
    if (!input.include_deleted) where.deletedAt = null;
    if (input.category) where.category = input.category;
    if (input.participant) {
      const a = await ctx.db.agent.findUnique({ where: { handle: input.participant }, select: { id: true } });
      if (!a) return { expenses: [], next_cursor: null, suggested_next: [`get_group: see the members of "${group.name}"`] };
      where.shares = { some: { agentId: a.id } };
    }
    if (input.date_from || input.date_to) {
      where.date = { ...(input.date_from ? { gte: dateFromIso(input.date_from) } : {}), ...(input.date_to ? { lte: dateFromIso(input.date_to) } : {}) };
    }
    if (input.updated_after) where.updatedAt = { gt: parseUpdatedAfter(input.updated_after) };
    if (input.cursor) and.push(olderThan(decodeCursor(input.cursor, UUID_CURSOR_ID)));
    if (and.length) where.AND = and;
    const rows = await ctx.db.expense.findMany({ where, include: EXPENSE_INCLUDE, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], take: take + 1 });
    const { page, next_cursor } = pageOf(rows, take);
    const suggested_next: string[] = [];
    if (next_cursor) suggested_next.push('list_expenses: pass next_cursor for the next page');
    if (!group.archivedAt) suggested_next.push(`add_expense: record an expense in "${group.name}"`);
    suggested_next.push('get_balances: current balances');
    return { expenses: await toExpenses(ctx.db, page, group.currency), next_cursor, suggested_next };
  });
