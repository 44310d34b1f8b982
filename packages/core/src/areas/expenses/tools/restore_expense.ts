import { z } from 'zod';
import { writeTool } from '../../../kernel/trpc.ts';
import { WRITE } from '../../../kernel/meta.ts';
import { output, expenseId } from '../../../kernel/text.ts';
import { expenseSchema } from '../wire.ts';
import { setExpenseDeleted } from '../store.ts';

export const restore_expense = writeTool
  .meta({
    area: 'expenses',
    title: 'Restore a deleted expense',
    description:
      'Undoes delete_expense: the expense counts again and its balance effect is re-applied. Restoring one that is not deleted returns it unchanged.',
    annotations: WRITE,
    errors: {
      NOT_FOUND: 'no such expense',
      FORBIDDEN: 'not a member, or edits are restricted to admins and the creator',
      GROUP_ARCHIVED: '',
      MEMBER_LEFT: 'someone it involves has left the group',
      DIRECT_LEDGER_NOT_ACCEPTED: 'the other agent has not accepted this direct ledger: nothing can be booked',
    },
  })
  .input(z.strictObject({ expense_id: expenseId }))
  .output(output({ expense: expenseSchema }))
  .mutation(async ({ ctx, input }) => {
    const { expense } = await setExpenseDeleted(ctx.db, ctx.auth, { ...input, deleted: false }, ctx.services);
    return { expense, suggested_next: ['get_balances: balances with it again'] };
  });
