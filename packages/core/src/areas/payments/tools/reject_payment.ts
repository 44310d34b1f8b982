import { z } from 'zod';
import { batchedWriteTool } from '../../../kernel/trpc.ts';
import { WRITE } from '../../../kernel/meta.ts';
import { builtOutput } from '../../../kernel/built-output.ts';
import { text, output, paymentId } from '../../../kernel/text.ts';
import { paymentSchema } from '../payments.ts';
import { transitionPayment } from '../transition.ts';

export const reject_payment = batchedWriteTool
  .meta({
    area: 'payments',
    title: 'Reject a payment',
    description: 'The payee rejects a pending payment (the money did not arrive): balances stay and the payer is told, with the reason.',
    annotations: WRITE,
    errors: {
      FORBIDDEN: 'only the payee may reject',
      PAYMENT_NOT_PENDING: 'details.status says why',
      NOT_FOUND: 'no such payment',
    },
  })
  .input(
    z.strictObject({
      payment_id: paymentId,
      reason: text(0, 200, 'reason').optional().describe('Why, 0-200 characters; the payer sees it.'),
    }),
  )
  .output(builtOutput(output({ payment: paymentSchema })))
  .mutation(async ({ ctx, input }) => {
    const { group, payment } = await transitionPayment(ctx.db, ctx.auth, ctx.batch, { ...input, to: 'rejected' }, ctx.services, {
      dryRun: ctx.dryRun,
    });
    return { payment, suggested_next: [`get_balances: balances in "${group.name}" (unchanged)`] };
  });
