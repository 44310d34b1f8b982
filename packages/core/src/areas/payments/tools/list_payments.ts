import { z } from 'zod';
import type { Prisma } from '@kitty/db';
import { readTool } from '../../../kernel/trpc.ts';
import { READ } from '../../../kernel/meta.ts';
import { handle, cursor, limit, output, groupId, since } from '../../../kernel/text.ts';
import { requireMembership } from '../../../access/groups.ts';
import { decodeCursor, olderThan, pageOf, parseUpdatedAfter, UUID_CURSOR_ID } from '../../../kernel/cursor.ts';
import { paymentWithPaySchema, toPayments, withPayWith, PAYMENT_STATUSES } from '../payments.ts';

export const list_payments = readTool
  .meta({
    area: 'payments',
    title: 'List payments',
    description: "A group's payments, newest first, filtered and paged.",
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
      status: z.enum(PAYMENT_STATUSES).optional().describe('Only payments in this state (default: all).'),
      participant: handle.optional().describe('Only payments this member sent or received.'),
      updated_after: since.optional(),
      cursor: cursor.optional(),
      limit: limit.optional(),
    }),
  )
  .output(output({ payments: z.array(paymentWithPaySchema), next_cursor: z.string().nullable() }))
  .query(async ({ ctx, input }) => {
    const agentId = ctx.auth.agentId;
    const { group } = await requireMembership(ctx.db, input.group_id, agentId);
    const take = input.limit ?? 20;
    const where: Prisma.PaymentWhereInput = { groupId: group.id };
    const and: Prisma.PaymentWhereInput[] = [];
    if (input.status) where.status = input.status;
    if (input.participant) {
      const a = await ctx.db.agent.findUnique({ where: { handle: input.participant }, select: { id: true } });
      if (!a) return { payments: [], next_cursor: null, suggested_next: [`get_group: see the members of "${group.name}"`] };
      and.push({ OR: [{ payerId: a.id }, { payeeId: a.id }] });
    }
    if (input.updated_after) where.updatedAt = { gt: parseUpdatedAfter(input.updated_after) };
    if (input.cursor) and.push(olderThan(decodeCursor(input.cursor, UUID_CURSOR_ID)));
    if (and.length) where.AND = and;
    const rows = await ctx.db.payment.findMany({ where, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], take: take + 1 });
    const { page, next_cursor } = pageOf(rows, take);
    const suggested_next: string[] = [];
    if (next_cursor) suggested_next.push('list_payments: pass next_cursor for the next page');
    const waiting = page.find((p) => p.status === 'pending' && p.payeeId === agentId);
    if (waiting) suggested_next.push(`confirm_payment: payment ${waiting.id} awaits your confirmation`);
    suggested_next.push('suggest_settlements: who should pay whom');
    return { payments: await withPayWith(ctx.db, agentId, await toPayments(ctx.db, page, group.currency)), next_cursor, suggested_next };
  });
