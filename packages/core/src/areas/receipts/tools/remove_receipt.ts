import { z } from 'zod';
import { writeTool } from '../../../kernel/trpc.ts';
import { DESTRUCTIVE } from '../../../kernel/meta.ts';
import { output, uuid } from '../../../kernel/text.ts';
import { removeReceipt } from '../../expenses/receipts.ts';
import { receiptSchema } from '../../expenses/receipt-wire.ts';

export const remove_receipt = writeTool
  .meta({
    area: 'expenses',
    title: 'Remove a receipt',
    description:
      'Deletes a receipt and its file for good. Allowed to its uploader and to whoever may edit the expense. Returns what was removed.',
    annotations: DESTRUCTIVE,
    errors: {
      NOT_FOUND: 'no such receipt',
      FORBIDDEN: 'not a member, or edits are restricted to admins and the creator',
      GROUP_ARCHIVED: 'the group is archived',
    },
  })
  .input(z.strictObject({ receipt_id: uuid.describe('Id of the receipt (UUID), from attach_receipt or get_expense.') }))
  .output(output({ receipt: receiptSchema }))
  .mutation(async ({ ctx, input }) => {
    const { receipt, expenseId } = await removeReceipt(ctx.db, ctx.auth, input, ctx.services);
    return { receipt, suggested_next: [`get_expense: expense ${expenseId} and its remaining receipts`] };
  });
