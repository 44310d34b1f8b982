import { z } from 'zod';
import { writeTool } from '../../../kernel/trpc.ts';
import { WRITE } from '../../../kernel/meta.ts';
import { output, expenseId, text } from '../../../kernel/text.ts';
import { attachReceipt, MAX_RECEIPT_BASE64_CHARS, MAX_RECEIPTS_PER_EXPENSE } from '../../expenses/receipts.ts';
import { receiptSchema } from '../../expenses/receipt-wire.ts';

export const attach_receipt = writeTool
  .meta({
    area: 'expenses',
    title: 'Attach a receipt to an expense',
    description:
      'Stores a receipt file with an expense. Type detected from the bytes: JPEG, PNG, WebP, HEIC or PDF only. At most 5 MiB (server setting) and ' +
      `${MAX_RECEIPTS_PER_EXPENSE} per expense. Members download via get_expense's links or GET /v1/receipts/{receipt_id} with their bearer.`,
    annotations: WRITE,
    errors: {
      VALIDATION_ERROR: 'content_base64 is not base64, empty, too large or not an accepted type',
      NOT_FOUND: 'no such expense',
      FORBIDDEN: 'not a member, or edits are restricted to admins and the creator',
      GROUP_ARCHIVED: 'the group is archived',
      EXPENSE_DELETED: 'the expense is deleted',
      INVALID_STATE: `the expense already has ${MAX_RECEIPTS_PER_EXPENSE} receipts`,
    },
  })
  .input(
    z.strictObject({
      expense_id: expenseId,
      content_base64: z.string().min(1).max(MAX_RECEIPT_BASE64_CHARS).describe('The file, standard base64 without line breaks.'),
      filename: text(1, 200, 'filename').describe('Original file name, 1-200 chars; kept for display and downloads only.'),
    }),
  )
  .output(output({ receipt: receiptSchema }))
  .mutation(async ({ ctx, input }) => {
    const { receipt, expenseId: id } = await attachReceipt(ctx.db, ctx.auth, input, ctx.services);
    return { receipt, suggested_next: [`get_expense: expense ${id} with its receipts and download links`] };
  });
