import { z } from 'zod';
import { previewBatchedWriteTool } from '../../trpc.ts';
import { previewOutput } from '../../preview.ts';
import { WRITE } from '../../meta.ts';
import { output, paymentId } from '../../text.ts';
import { paymentSchema } from '../../domain/ledger/payments.ts';
import { transitionPayment } from '../../domain/ledger/transition.ts';

export const confirm_payment = previewBatchedWriteTool
  .meta({
    area: 'payments',
    title: 'Confirm a payment you received',
    description: 'The payee confirms a pending payment: balances move (payer +amount, payee −amount) and the payer is told.',
    annotations: WRITE,
    errors: {
      FORBIDDEN: 'only the payee may confirm',
      PAYMENT_NOT_PENDING: 'details.status, e.g. already cancelled',
      NOT_FOUND: 'no such payment',
    },
  })
  .input(z.strictObject({ payment_id: paymentId }))
  .output(output({ ...previewOutput, payment: paymentSchema }))
  .mutation(async ({ ctx, input }) => {
    const { group, payment } = await transitionPayment(ctx, ctx.batch, input.payment_id, 'confirmed');
    return {
      payment,
      suggested_next: [`get_balances: balances after this payment in "${group.name}"`, 'suggest_settlements: what is left to settle'],
    };
  });
