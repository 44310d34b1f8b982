import { z } from 'zod';
import { previewWriteTool } from '../../trpc.ts';
import { previewOutput } from '../../preview.ts';
import { DESTRUCTIVE } from '../../meta.ts';
import { output, expenseId } from '../../text.ts';
import { expenseSchema } from '../../domain/ledger/expense-wire.ts';
import { setExpenseDeleted } from '../../domain/ledger/expense-store.ts';

export const delete_expense = previewWriteTool
  .meta({
    area: 'expenses',
    title: 'Delete an expense',
    description:
      'Soft-deletes an expense: its balance effect is reversed in the same transaction and it disappears from list_expenses (unless include_deleted); ' +
      'restore_expense undoes it. Deleting a deleted expense returns it unchanged. Deleting one copy of a repeating series does not stop the series ' +
      '(update_expense repeat:null does). Consent (our rule): in a direct ledger the other agent has not accepted yet nothing can be booked — ' +
      'DIRECT_LEDGER_NOT_ACCEPTED (409); nobody can be put in debt in a ledger they have not agreed to share.',
    annotations: DESTRUCTIVE,
    errors: {
      NOT_FOUND: 'no such expense',
      FORBIDDEN: 'not a member, or edits are restricted to admins and the creator',
      GROUP_ARCHIVED: 'the group is archived',
      MEMBER_LEFT: 'would alter the balance of someone who left',
      DIRECT_LEDGER_NOT_ACCEPTED: 'a direct ledger the other agent has not accepted yet',
    },
  })
  .input(z.strictObject({ expense_id: expenseId }))
  .output(output({ ...previewOutput, expense: expenseSchema }))
  .mutation(async ({ ctx, input }) => {
    const { expense } = await setExpenseDeleted(ctx, input.expense_id, true);
    return {
      expense,
      suggested_next: [`restore_expense: undo the deletion of ${expense.expense_id}`, 'get_balances: balances without it'],
    };
  });
