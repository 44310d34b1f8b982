import { z } from 'zod';
import { previewBatchedWriteTool } from '../../../kernel/trpc.ts';
import { previewOutput } from '../../../kernel/preview.ts';
import { WRITE } from '../../../kernel/meta.ts';
import { builtOutput } from '../../../kernel/built-output.ts';
import { handle, text, positiveAmountMinor, output, groupId } from '../../../kernel/text.ts';
import { paymentWithPaySchema, withPayWith } from '../payments.ts';
import { recordPayment } from '../record.ts';

export const record_payment = previewBatchedWriteTool
  .meta({
    area: 'payments',
    title: 'Record a payment',
    description:
      'Records money sent from one member (from_handle, default you) to another (to_handle) to settle up; you must be one of them. Recorded by ' +
      'the payer: pending until the payee confirms or rejects (the payer may cancel). Recorded by the payee: confirmed at once. Only confirmed ' +
      'payments move balances (payer +amount, payee −amount); pending ones show in balance_pending_minor and block leaving or archiving. ' +
      'More than is owed needs allow_overpayment. suggest_settlements gives ready arguments. A pending payment you pay shows pay_with.',
    annotations: WRITE,
    errors: {
      VALIDATION_ERROR: 'a handle is not a member, or payer = payee',
      FORBIDDEN: 'caller neither payer nor payee, or not a member',
      NOT_FOUND: 'no such group',
      GROUP_ARCHIVED: '',
      DIRECT_LEDGER_NOT_ACCEPTED: 'the other agent has not accepted this direct ledger: nothing can be booked',
      OVERPAYMENT:
        'amount_minor is more than the payer owes or the payee is owed (pending payments counted), without allow_overpayment; details say what is owed',
    },
  })
  .input(
    z.strictObject({
      group_id: groupId,
      to_handle: handle.describe('The payee: who received the money.'),
      from_handle: handle.optional().describe('The payer: who sent it (default the caller).'),
      amount_minor: positiveAmountMinor.describe('Amount in minor units, > 0.'),
      note: text(0, 200, 'note').optional().describe('A note for the other side, 0-200 characters, e.g. "bank transfer".'),
      allow_overpayment: z
        .boolean()
        .optional()
        .describe('true records a payment larger than what is owed (the difference then becomes a debt the other way); default false.'),
    }),
  )
  .output(builtOutput(output({ ...previewOutput, payment: paymentWithPaySchema })))
  .mutation(async ({ ctx, input }) => {
    const {
      group,
      payment: recorded,
      confirmed,
      payeeHandle,
      payoutMethods,
    } = await recordPayment(ctx.db, ctx.auth, ctx.batch, input, ctx.services, { dryRun: ctx.dryRun });
    const id = recorded.payment_id;
    const [payment] = await withPayWith(ctx.db, ctx.auth.agentId, [recorded], payoutMethods);
    return {
      payment: payment!,
      suggested_next: confirmed
        ? [`get_balances: balances after this payment in "${group.name}"`, 'suggest_settlements: what is left to settle']
        : [
            `cancel_payment: withdraw payment ${id} while it is pending`,
            `get_payment: check whether @${payeeHandle} confirmed payment ${id}`,
            `get_balances: pending amounts show as balance_pending_minor`,
          ],
    };
  });
