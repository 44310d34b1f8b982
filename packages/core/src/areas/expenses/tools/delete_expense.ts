import { z } from 'zod';
import { previewWriteTool } from '../../../kernel/trpc.ts';
import { previewOutput } from '../../../kernel/preview.ts';
import { DESTRUCTIVE } from '../../../kernel/meta.ts';
import { output, expenseId } from '../../../kernel/text.ts';
import { expenseSchema } from '../wire.ts';
import { setExpenseDeleted } from '../store.ts';

export const delete_expense = previewWriteTool
  .meta({
    area: 'expenses',
    title: 'Delete an expense',
    description:
      'Soft-deletes an expense: its balance effect is reversed and it leaves list_expenses (unless include_deleted); restore_expense undoes it. ' +
      'Deleting a deleted expense returns it unchanged. Deleting a copy does not stop its series (update_expense repeat: null does).',
    annotations: DESTRUCTIVE,
    errors: {
      NOT_FOUND: 'no such expense',
      FORBIDDEN: 'not a member, or edits are restricted to admins and the creator',
      GROUP_ARCHIVED: '',
      MEMBER_LEFT: 'would alter the balance of someone who left',
      DIRECT_LEDGER_NOT_ACCEPTED: 'the other agent has not accepted this direct ledger: nothing can be booked',
    },
  })
  .input(z.strictObject({ expense_id: expenseId }))
  .output(output({ ...previewOutput, expense: expenseSchema }))
  .mutation(async ({ ctx, input }) => {
    const { expense } = await setExpenseDeleted(ctx.db, ctx.auth, { ...input, deleted: true }, ctx.services);
    return {
      expense,
      suggested_next: [`restore_expense: undo the deletion of ${expense.expense_id}`, 'get_balances: balances without it'],
    };
  });
