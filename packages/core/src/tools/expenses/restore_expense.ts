import { z } from 'zod';
import { writeTool } from '../../trpc.ts';
import { WRITE } from '../../meta.ts';
import { output, expenseId } from '../../text.ts';
import { expenseSchema } from '../../domain/ledger/expense-wire.ts';
import { setExpenseDeleted } from '../../domain/ledger/expense-store.ts';

export const restore_expense = writeTool
  .meta({
    area: 'expenses',
    title: 'Restore a deleted expense',
    description:
      'Undoes delete_expense: the expense counts again and its balance effect is re-applied in the same transaction. Restoring an expense that is not deleted ' +
      'returns it unchanged. Consent (our rule): in a direct ledger the other agent has not accepted yet nothing can be booked — DIRECT_LEDGER_NOT_ACCEPTED ' +
      '(409); nobody can be put in debt in a ledger they have not agreed to share.',
    annotations: WRITE,
    errors: {
      NOT_FOUND: 'no such expense',
      FORBIDDEN: 'not a member, or edits are restricted to admins and the creator',
      GROUP_ARCHIVED: 'the group is archived',
      MEMBER_LEFT: 'someone it involves has left the group',
      DIRECT_LEDGER_NOT_ACCEPTED: 'a direct ledger the other agent has not accepted yet',
    },
  })
  .input(z.strictObject({ expense_id: expenseId }))
  .output(output({ expense: expenseSchema }))
  .mutation(async ({ ctx, input }) => {
    const { expense } = await setExpenseDeleted(ctx, input.expense_id, false);
    return { expense, suggested_next: ['get_balances: balances with it again'] };
  });
