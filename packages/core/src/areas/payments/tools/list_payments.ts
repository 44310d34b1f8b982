import { z } from 'zod';
import { READ } from '../../../kernel/meta.ts';
import { handle, cursor, limit, output, groupId, since } from '../../../kernel/text.ts';
import { groupMemberTool } from '../../../access/tools/group_tools.ts';
import { paymentWithPaySchema, PAYMENT_STATUSES } from '../payments.ts';
import { listPayments } from '../list.ts';

export const list_payments = groupMemberTool
  .meta({
    area: 'payments',
    title: 'List payments',
    description: "A group's payments, newest first, filtered and paged.",
    annotations: READ,
    errors: {
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
    const { payments, next_cursor, unknownParticipant, waitingId } = await listPayments(ctx.db, ctx.auth, ctx, input);
    if (unknownParticipant) return { payments, next_cursor, suggested_next: [`get_group: see the members of "${ctx.group.name}"`] };
    const suggested_next: string[] = [];
    if (next_cursor) suggested_next.push('list_payments: pass next_cursor for the next page');
    if (waitingId) suggested_next.push(`confirm_payment: payment ${waitingId} awaits your confirmation`);
    suggested_next.push('suggest_settlements: who should pay whom');
    return { payments, next_cursor, suggested_next };
  });
