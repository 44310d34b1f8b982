import { z } from 'zod';
import { writeTool } from '../../trpc.ts';
import { WRITE } from '../../meta.ts';
import { uuid, idempotencyKey, output } from '../../text.ts';
import { paymentSchema } from '../../domain/ledger/payments.ts';
import { transitionPayment } from '../../domain/ledger/transition.ts';

export const cancel_payment = writeTool
  .meta({
    area: 'payments',
    title: 'Cancel a pending payment',
    description:
      'The payer withdraws a payment that is still pending: it becomes cancelled, balances stay as they were, the pending amounts are released and the payee\'s confirmation request is resolved. ' +
      'Errors: FORBIDDEN (only the payer may cancel), PAYMENT_NOT_PENDING (409; details.status, e.g. already confirmed), NOT_FOUND.',
    annotations: WRITE,
    errors: ['NOT_FOUND', 'PAYMENT_NOT_PENDING'],
  })
  .input(z.strictObject({ payment_id: uuid, idempotency_key: idempotencyKey }))
  .output(output({ payment: paymentSchema }))
  .mutation(async ({ ctx, input }) => {
    const { group, payment } = await transitionPayment(ctx, input.payment_id, 'cancelled');
    return { payment, suggested_next: [`record_payment: record the payment again if you do send it`, `get_balances: balances in "${group.name}"`] };
  });
