import { z } from 'zod';
import { batchedWriteTool } from '../../../kernel/trpc.ts';
import { WRITE } from '../../../kernel/meta.ts';
import { builtOutput } from '../../../kernel/built-output.ts';
import { output, paymentId } from '../../../kernel/text.ts';
import { paymentSchema } from '../payments.ts';
import { transitionPayment } from '../transition.ts';

export const cancel_payment = batchedWriteTool
  .meta({
    area: 'payments',
    title: 'Cancel a pending payment',
    description: "The payer withdraws a pending payment: balances stay and the payee's request is resolved.",
    annotations: WRITE,
    errors: {
      FORBIDDEN: 'only the payer may cancel',
      PAYMENT_NOT_PENDING: 'details.status, e.g. already confirmed',
      NOT_FOUND: 'no such payment',
    },
  })
  .input(z.strictObject({ payment_id: paymentId }))
  .output(builtOutput(output({ payment: paymentSchema })))
  .mutation(async ({ ctx, input }) => {
    const { group, payment } = await transitionPayment(ctx.db, ctx.auth, ctx.batch, { ...input, to: 'cancelled' }, ctx.services, {
      dryRun: ctx.dryRun,
    });
    return {
      payment,
      suggested_next: [`record_payment: record the payment again if you do send it`, `get_balances: balances in "${group.name}"`],
    };
  });
