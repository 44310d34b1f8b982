import { z } from 'zod';
import { readTool } from '../../../kernel/trpc.ts';
import { READ } from '../../../kernel/meta.ts';
import { output, expenseId } from '../../../kernel/text.ts';
import { requireMembership } from '../../../access/groups.ts';
import { expenseSchema } from '../wire.ts';
import { toExpenses } from '../view.ts';
import { findExpense } from '../store.ts';
import { listReceipts } from '../receipts.ts';
import { receiptWithLinkSchema } from '../receipt-wire.ts';

export const get_expense = readTool
  .meta({
    area: 'expenses',
    title: 'Get an expense',
    description:
      "One expense (also a deleted one) with each member's share, foreign-currency fields, repeating series and receipts (download links valid minutes).",
    annotations: READ,
    errors: {
      NOT_FOUND: 'no such expense',
      FORBIDDEN: 'not a member',
    },
  })
  .input(z.strictObject({ expense_id: expenseId }))
  .output(output({ expense: expenseSchema, receipts: z.array(receiptWithLinkSchema).describe('Attached receipts, oldest first.') }))
  .query(async ({ ctx, input }) => {
    const e = await findExpense(ctx.db, input.expense_id);
    const { group } = await requireMembership(ctx.db, e.groupId, ctx.auth.agentId);
    const [expense] = await toExpenses(ctx.db, [e], group.currency);
    const receipts = await listReceipts(ctx.db, ctx.services, e.id);
    const suggested_next = e.deletedAt
      ? [`restore_expense: bring back expense ${e.id}`]
      : [`update_expense: change expense ${e.id}`, `get_balances: balances of the group`];
    return { expense: expense!, receipts, suggested_next };
  });
