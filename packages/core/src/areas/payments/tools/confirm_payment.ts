import { z } from 'zod';
import { previewBatchedWriteTool } from '../../../kernel/trpc.ts';
import { previewOutput } from '../../../kernel/preview.ts';
import { WRITE } from '../../../kernel/meta.ts';
import { builtOutput } from '../../../kernel/built-output.ts';
import { output, paymentId } from '../../../kernel/text.ts';
import { paymentSchema } from '../payments.ts';
import { transitionPayment } from '../transition.ts';

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
  .output(builtOutput(output({ ...previewOutput, payment: paymentSchema })))
  .mutation(async ({ ctx, input }) => {
    const { group, payment } = await transitionPayment(ctx.db, ctx.auth, ctx.batch, { ...input, to: 'confirmed' }, ctx.services, {
      dryRun: ctx.dryRun,
    });
    return {
      payment,
      suggested_next: [`get_balances: balances after this payment in "${group.name}"`, 'suggest_settlements: what is left to settle'],
    };
  });
