import { z } from 'zod';
import { readTool } from '../../trpc.ts';
import { READ } from '../../meta.ts';
import { output, expenseId } from '../../text.ts';
import { requireMembership } from '../../domain/groups.ts';
import { expenseSchema } from '../../domain/ledger/expense-wire.ts';
import { toExpenses } from '../../domain/ledger/expense-view.ts';
import { findExpense } from '../../domain/ledger/expense-store.ts';
import { listReceipts } from '../../domain/receipts/receipts.ts';
import { receiptWithLinkSchema } from '../../domain/receipts/receipt-wire.ts';

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
