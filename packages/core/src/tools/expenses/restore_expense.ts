import { z } from 'zod';
import { writeTool } from '../../trpc.ts';
import { WRITE } from '../../meta.ts';
import { uuid, idempotencyKey, output } from '../../text.ts';
import { requireMembership, assertNotArchived } from '../../domain/groups.ts';
import { appendActivity } from '../../domain/activity.ts';
import { notifyAll } from '../../domain/inbox.ts';
import { LedgerDelta, applyDelta } from '../../domain/ledger/effects.ts';
import { assertCanEdit } from '../../domain/ledger/access.ts';
import { expenseSchema, findExpense, toExpenses, snapshot, isoFromDate } from '../../domain/ledger/expenses.ts';

export const restore_expense = writeTool
  .meta({
    area: 'expenses',
    title: 'Restore a deleted expense',
    description:
      'Undoes delete_expense: the expense counts again and its balance effect is re-applied in the same transaction. Restoring an expense that is not deleted returns it unchanged. ' +
      'Errors: NOT_FOUND, FORBIDDEN, GROUP_ARCHIVED, MEMBER_LEFT (someone it involves has left the group).',
    kind: 'write',
    annotations: WRITE,
    errors: ['NOT_FOUND', 'GROUP_ARCHIVED', 'MEMBER_LEFT'],
  })
  .input(z.strictObject({ expense_id: uuid, idempotency_key: idempotencyKey }))
  .output(output({ expense: expenseSchema }))
  .mutation(async ({ ctx, input }) => {
    const agentId = ctx.auth!.agentId;
    const first = await findExpense(ctx.db, input.expense_id);
    const { group, membership } = await requireMembership(ctx.db, first.groupId, agentId, { lock: true });
    const e = await findExpense(ctx.db, input.expense_id);
    assertNotArchived(group);
    assertCanEdit(group, membership, e);
    if (e.deletedAt) {
      await applyDelta(ctx.db, group.id, new LedgerDelta().addLines(e.shares, 1n));
      await ctx.db.expense.update({ where: { id: e.id }, data: { deletedAt: null, updatedAt: ctx.services.now() } });
      await appendActivity(ctx.db, { groupId: group.id, actorId: agentId, action: 'expense.restored', entityType: 'expense', entityId: e.id, before: { deleted: true }, after: snapshot(e.description, e.amountMinor, isoFromDate(e.date), e.shares) });
      await notifyAll(ctx.db, e.shares.map((s) => s.agentId).sort(), agentId, {
        kind: 'expense_changed',
        text: `@${ctx.auth!.handle} restored "${e.description}" in "${group.name}"`,
        entityType: 'expense',
        entityId: e.id,
        groupId: group.id,
      });
    }
    const [expense] = await toExpenses(ctx.db, [await findExpense(ctx.db, e.id)], group.currency);
    return { expense: expense!, suggested_next: ['get_balances: balances with it again'] };
  });
