/**
 * Listing a group's payments (list_payments), newest first, filtered and paged.
 */
import type { Prisma } from '@kitty/db';
import type { Db } from '../../kernel/context.ts';
import type { Actor } from '../../kernel/actor.ts';
import type { GroupAccess } from '../../access/groups.ts';
import { decodeCursor, olderThan, pageOf, parseUpdatedAfter, UUID_CURSOR_ID } from '../../kernel/cursor.ts';
import { toPayments, withPayWith, type PaymentStatus } from './payments.ts';

export interface PaymentQuery {
  status?: PaymentStatus | undefined;
  participant?: string | undefined;
  updated_after?: string | undefined;
  cursor?: string | undefined;
  limit?: number | undefined;
}

/**
 * The payments of the group (`access`: the actor is a member), newest first, `limit` (default 20) a page:
 * only in `status`, only those `participant` (a handle) sent or received (an unknown handle: none), only
 * changed after `updated_after`. Wire shape, with the payee's pay_with on the actor's pending ones.
 * `unknownParticipant` is true when `participant` names no agent.
 * Errors: VALIDATION_ERROR (bad cursor or updated_after).
 */
export async function listPayments(db: Db, actor: Pick<Actor, 'agentId'>, { group }: GroupAccess, input: PaymentQuery) {
  const take = input.limit ?? 20;
  const where: Prisma.PaymentWhereInput = { groupId: group.id };
  const and: Prisma.PaymentWhereInput[] = [];
  if (input.status) where.status = input.status;
  if (input.participant) {
    const a = await db.agent.findUnique({ where: { handle: input.participant }, select: { id: true } });
    if (!a) return { payments: [], next_cursor: null, unknownParticipant: true, waitingId: undefined };
    and.push({ OR: [{ payerId: a.id }, { payeeId: a.id }] });
  }
  if (input.updated_after) where.updatedAt = { gt: parseUpdatedAfter(input.updated_after) };
  if (input.cursor) and.push(olderThan(decodeCursor(input.cursor, UUID_CURSOR_ID)));
  if (and.length) where.AND = and;
  const rows = await db.payment.findMany({ where, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], take: take + 1 });
  const { page, next_cursor } = pageOf(rows, take);
  // The first pending payment of the page waiting for the actor's confirmation.
  const waitingId = page.find((p) => p.status === 'pending' && p.payeeId === actor.agentId)?.id;
  const payments = await withPayWith(db, actor.agentId, await toPayments(db, page, group.currency));
  return { payments, next_cursor, unknownParticipant: false, waitingId };
}
