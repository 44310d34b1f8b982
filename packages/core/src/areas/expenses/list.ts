/**
 * Listing a group's expenses (list_expenses): filtered, newest first, paged by keyset cursor.
 */
import type { Prisma } from '@kitty/db';
import type { Db } from '../../kernel/context.ts';
import type { GroupAccess } from '../../access/groups.ts';
import { decodeCursor, olderThan, pageOf, parseUpdatedAfter, UUID_CURSOR_ID } from '../../kernel/cursor.ts';
import { dateFromIso } from './spec.ts';
import { toExpenses, EXPENSE_INCLUDE } from './view.ts';
import { categoryWithChildren } from '../reference/categories.ts';

/** Filters as validated on the wire: participant is a handle; date_from/date_to are YYYY-MM-DD (inclusive); updated_after an RFC 3339 timestamp; limit defaults to 20. */
export interface ExpenseQuery {
  group_id: string;
  participant?: string | undefined;
  date_from?: string | undefined;
  date_to?: string | undefined;
  updated_after?: string | undefined;
  include_deleted?: boolean | undefined;
  category?: string | undefined;
  category_id?: string | undefined;
  cursor?: string | undefined;
  limit?: number | undefined;
}

/**
 * One page of the group's expenses (`access`: the caller is a member), by creation time descending
 * (ties by id). Deleted expenses only with include_deleted; participant keeps expenses the member
 * paid for or shares. Returns the group, `expenses` (wire shape, amounts in minor units),
 * `next_cursor` (null on the last page) and `unknownParticipant` (no agent has that handle; the
 * page is then empty).
 * Errors: VALIDATION_ERROR (malformed cursor or updated_after).
 */
export async function listExpenses(db: Db, { group }: GroupAccess, q: ExpenseQuery) {
  const take = q.limit ?? 20;
  const where: Prisma.ExpenseWhereInput = { groupId: group.id };
  const and: Prisma.ExpenseWhereInput[] = [];
  if (!q.include_deleted) where.deletedAt = null;
  if (q.category) where.category = q.category;
  if (q.category_id) where.categoryId = { in: categoryWithChildren(q.category_id) };
  if (q.participant) {
    const a = await db.agent.findUnique({ where: { handle: q.participant }, select: { id: true } });
    if (!a) return { group, expenses: [], next_cursor: null, unknownParticipant: true };
    where.shares = { some: { agentId: a.id } };
  }
  if (q.date_from || q.date_to) {
    where.date = { ...(q.date_from ? { gte: dateFromIso(q.date_from) } : {}), ...(q.date_to ? { lte: dateFromIso(q.date_to) } : {}) };
  }
  if (q.updated_after) where.updatedAt = { gt: parseUpdatedAfter(q.updated_after) };
  if (q.cursor) and.push(olderThan(decodeCursor(q.cursor, UUID_CURSOR_ID)));
  if (and.length) where.AND = and;
  const rows = await db.expense.findMany({
    where,
    include: EXPENSE_INCLUDE,
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    take: take + 1,
  });
  const { page, next_cursor } = pageOf(rows, take);
  return { group, expenses: await toExpenses(db, page, group.currency), next_cursor, unknownParticipant: false };
}
