import { z } from 'zod';
import { readTool } from '../../../kernel/trpc.ts';
import { READ } from '../../../kernel/meta.ts';
import { output, paymentId } from '../../../kernel/text.ts';
import { requireMembership } from '../../../access/groups.ts';
import { paymentWithPaySchema, toPayments, findPayment, withPayWith } from '../payments.ts';

export const get_payment = readTool
  .meta({
    area: 'payments',
    title: 'Get a payment',
    description:
      "One payment: payer, payee, amount, status and times; a pending one shows its payer pay_with (the payee's payout methods).",
    annotations: READ,
    errors: {
      NOT_FOUND: 'no such payment',
      FORBIDDEN: 'not a member',
    },
  })
  .input(z.strictObject({ payment_id: paymentId }))
  .output(output({ payment: paymentWithPaySchema }))
  .query(async ({ ctx, input }) => {
    const agentId = ctx.auth.agentId;
    const p = await findPayment(ctx.db, input.payment_id);
    const { group } = await requireMembership(ctx.db, p.groupId, agentId);
    const [payment] = await withPayWith(ctx.db, agentId, await toPayments(ctx.db, [p], group.currency));
    const suggested_next: string[] = [];
    if (p.status === 'pending' && p.payeeId === agentId)
      suggested_next.push(
        `confirm_payment: confirm payment ${p.id} if the money arrived`,
        `reject_payment: reject payment ${p.id} if it did not`,
      );
    if (p.status === 'pending' && p.payerId === agentId) suggested_next.push(`cancel_payment: withdraw payment ${p.id}`);
    suggested_next.push(`get_balances: balances in "${group.name}"`);
    return { payment: payment!, suggested_next };
  });
